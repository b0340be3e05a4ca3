//===- ExpandFp8.cpp - fp8 conversions as integer arithmetic --------------===//
//
// tk-expand-fp8: no target tk lowers to computes on fp8, and LLVM has no fp8
// type, so every fp8 value is a byte of bits by the time LLVM sees it
// (getMemoryType, and LLVM's type converter maps f8 to i8). What remains are
// the conversions, which this pass writes as integer arithmetic on the bits
// (the half-precision conversions of Fabian Giesen's float_to_half_fast3,
// with fp8's fields):
//
//  - f32 -> fp8, to nearest, ties to even: a source below the smallest
//    normal fp8 is added to a magic power of two whose ulp is fp8's
//    subnormal step, so that the float adder rounds it; a normal one is
//    rebiased and rounded on its bits (carries run into the exponent, which
//    is what rounding up to the next binade is). As APFloat converts:
//    beyond the largest finite value, f8E5M2 gives infinity and f8E4M3FN,
//    which has none, NaN;
//  - fp8 -> f32, exactly: a normal value's fields rebiased, a subnormal's
//    mantissa scaled by its step, infinity and NaN as such.
//
// Other source and destination types go through f32, exactly (f16, bf16 ->
// f32; f32 -> f64; integers, which fp8's range keeps exact in f32);
// convertFloat already routes narrowing from f64 and between narrow types
// through f32. Constants become their bits. Vectors are left alone: the
// lowerings convert fp8 element by element.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Conversion/Passes.h"
#include "tk/core/Conversion/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tk {
#define GEN_PASS_DEF_TKEXPANDFP8
#include "tk/core/Conversion/Passes.h.inc"
} // namespace tk

using namespace mlir;

namespace {

/// The fields of an fp8 format.
struct Fp8Format {
  int64_t mantissaBits, bias;
  /// The largest exponent field of a finite value: f8E5M2's 31 is infinity
  /// and NaN; f8E4M3FN's 15 holds finite values but for mantissa 111 (NaN).
  int64_t maxExponentField;
  bool hasInfinity;

  static std::optional<Fp8Format> of(Type type) {
    if (isa<Float8E4M3FNType>(type))
      return Fp8Format{3, 7, 15, false};
    if (isa<Float8E5M2Type>(type))
      return Fp8Format{2, 15, 30, true};
    return std::nullopt;
  }
  /// The code (sign clear) of NaN, and of what overflows: infinity where
  /// there is one, NaN otherwise.
  int64_t nanCode() const { return hasInfinity ? 0x7e : 0x7f; }
  int64_t overflowCode() const { return hasInfinity ? 0x7c : 0x7f; }
};

/// An i32 constant.
Value i32(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                      static_cast<int32_t>(value));
}

/// f32 `value` rounded to nearest even in `format`, as its 8 bits.
Value truncateF32(OpBuilder &b, Location loc, Value value,
                  const Fp8Format &format) {
  using arith::CmpIPredicate;
  Type f32 = b.getF32Type();
  int64_t shift = 23 - format.mantissaBits;
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), value);
  Value sign =
      arith::AndIOp::create(b, loc, bits, i32(b, loc, int64_t(0x80000000)));
  Value magnitude = arith::XOrIOp::create(b, loc, bits, sign);
  auto below = [&](int64_t limit) {
    return arith::CmpIOp::create(b, loc, CmpIPredicate::ult, magnitude,
                                 i32(b, loc, limit));
  };
  // Below the smallest normal fp8, 2^(1 - bias): the float adder rounds the
  // value at the magic number's ulp, 2^(1 - bias - mantissaBits).
  int64_t magicBits = (127 - format.bias + shift + 1) << 23;
  Value magic = arith::BitcastOp::create(b, loc, f32, i32(b, loc, magicBits));
  Value sum = arith::AddFOp::create(
      b, loc, arith::BitcastOp::create(b, loc, f32, magnitude), magic);
  Value subnormal = arith::SubIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, b.getI32Type(), sum),
      i32(b, loc, magicBits));
  // A normal fp8: rebias, add just under half an ulp and the ulp's parity
  // (ties to even), and keep the top bits.
  Value odd = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, magnitude, i32(b, loc, shift)),
      i32(b, loc, 1));
  Value rounded = arith::AddIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, magnitude,
                            i32(b, loc,
                                ((format.bias - 127) * (int64_t(1) << 23)) +
                                    (int64_t(1) << (shift - 1)) - 1)),
      odd);
  Value normal = arith::ShRUIOp::create(b, loc, rounded, i32(b, loc, shift));
  Value code = arith::SelectOp::create(
      b, loc, below((127 + 1 - format.bias) << 23), subnormal, normal);
  // At or past 2^(maxExponentField - bias + 1) nothing rounds to a finite
  // value; NaN stays NaN.
  Value overflows = arith::CmpIOp::create(
      b, loc, CmpIPredicate::uge, magnitude,
      i32(b, loc, (127 + format.maxExponentField - format.bias + 1) << 23));
  code = arith::SelectOp::create(b, loc, overflows,
                                 i32(b, loc, format.overflowCode()), code);
  Value isNaN = arith::CmpIOp::create(b, loc, CmpIPredicate::ugt, magnitude,
                                      i32(b, loc, 0x7f800000));
  code = arith::SelectOp::create(b, loc, isNaN, i32(b, loc, format.nanCode()),
                                 code);
  code = arith::OrIOp::create(
      b, loc, code, arith::ShRUIOp::create(b, loc, sign, i32(b, loc, 24)));
  return arith::TruncIOp::create(b, loc, b.getI8Type(), code);
}

/// The 8 bits `code` of a `format` value, exactly as an f32.
Value extendToF32(OpBuilder &b, Location loc, Value code,
                  const Fp8Format &format) {
  using arith::CmpIPredicate;
  Type f32 = b.getF32Type();
  Value bits = arith::ExtUIOp::create(b, loc, b.getI32Type(), code);
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, bits, i32(b, loc, 0x80)),
      i32(b, loc, 24));
  Value magnitude = arith::AndIOp::create(b, loc, bits, i32(b, loc, 0x7f));
  int64_t shift = 23 - format.mantissaBits;
  // Normal: the exponent and mantissa fields move up as they are, and the
  // exponent is rebiased.
  Value normal = arith::AddIOp::create(
      b, loc, arith::ShLIOp::create(b, loc, magnitude, i32(b, loc, shift)),
      i32(b, loc, (127 - format.bias) << 23));
  // Subnormal (exponent field 0): the mantissa times its step, exact in f32.
  Value mantissa = arith::AndIOp::create(
      b, loc, magnitude, i32(b, loc, (1 << format.mantissaBits) - 1));
  Value step = arith::BitcastOp::create(
      b, loc, f32,
      i32(b, loc, (127 + 1 - format.bias - format.mantissaBits) << 23));
  Value subnormal = arith::BitcastOp::create(
      b, loc, b.getI32Type(),
      arith::MulFOp::create(
          b, loc, arith::UIToFPOp::create(b, loc, f32, mantissa), step));
  Value isSubnormal =
      arith::CmpIOp::create(b, loc, CmpIPredicate::ult, magnitude,
                            i32(b, loc, 1 << format.mantissaBits));
  Value result =
      arith::SelectOp::create(b, loc, isSubnormal, subnormal, normal);
  // f8E5M2's infinity; NaN: f8E5M2's exponent field 31 with a mantissa, or
  // f8E4M3FN's one code.
  if (format.hasInfinity) {
    Value isInfinity =
        arith::CmpIOp::create(b, loc, CmpIPredicate::eq, magnitude,
                              i32(b, loc, format.overflowCode()));
    result = arith::SelectOp::create(b, loc, isInfinity,
                                     i32(b, loc, 0x7f800000), result);
  }
  Value isNaN = arith::CmpIOp::create(
      b, loc, format.hasInfinity ? CmpIPredicate::ugt : CmpIPredicate::uge,
      magnitude,
      i32(b, loc,
          format.hasInfinity ? format.overflowCode() : format.nanCode()));
  result =
      arith::SelectOp::create(b, loc, isNaN, i32(b, loc, 0x7fc00000), result);
  result = arith::OrIOp::create(b, loc, result, sign);
  return arith::BitcastOp::create(b, loc, f32, result);
}

/// arith.truncf to fp8, rounding to nearest even (the default, and the
/// only mode arith.truncf to fp8 is given: convertFloat makes RTZ from it).
struct TruncFToFp8 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<Fp8Format> format = Fp8Format::of(op.getType());
    if (!format)
      return failure();
    if (op.getRoundingmode() &&
        *op.getRoundingmode() != arith::RoundingMode::to_nearest_even)
      return rewriter.notifyMatchFailure(op, "rounds other than to nearest");
    Location loc = op.getLoc();
    Value source = op.getIn();
    auto from = dyn_cast<FloatType>(source.getType());
    if (!from)
      return rewriter.notifyMatchFailure(op, "a vector");
    if (from.getWidth() > 32)
      return rewriter.notifyMatchFailure(
          op, "narrowing from f64 (convertFloat goes through f32)");
    if (!from.isF32())
      source = arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(),
                                     source); // exact: f16, bf16, fp8
    Value code = truncateF32(rewriter, loc, source, *format);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), code);
    return success();
  }
};

/// arith.extf from fp8, exactly.
struct ExtFFromFp8 : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<Fp8Format> format = Fp8Format::of(op.getIn().getType());
    if (!format)
      return failure();
    Location loc = op.getLoc();
    Value code = arith::BitcastOp::create(rewriter, loc, rewriter.getI8Type(),
                                          op.getIn());
    Value wide = extendToF32(rewriter, loc, code, *format);
    auto to = cast<FloatType>(op.getType());
    if (to.getWidth() > 32)
      wide = arith::ExtFOp::create(rewriter, loc, to, wide);
    else if (!to.isF32())
      wide = arith::TruncFOp::create(rewriter, loc, to, wide); // exact
    rewriter.replaceOp(op, wide);
    return success();
  }
};

/// An integer converted to fp8: to f32 (exactly, for every integer fp8 can
/// hold), then narrowed.
template <typename IntToFpOp> struct IntToFp8 : OpRewritePattern<IntToFpOp> {
  using OpRewritePattern<IntToFpOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(IntToFpOp op,
                                PatternRewriter &rewriter) const override {
    if (!Fp8Format::of(op.getType()) || !op.getIn().getType().isIntOrIndex())
      return failure();
    Value wide = IntToFpOp::create(rewriter, op.getLoc(), rewriter.getF32Type(),
                                   op.getIn());
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), wide);
    return success();
  }
};

/// fp8 converted to an integer: widened to f32 (exactly), then converted.
template <typename FpToIntOp> struct Fp8ToInt : OpRewritePattern<FpToIntOp> {
  using OpRewritePattern<FpToIntOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(FpToIntOp op,
                                PatternRewriter &rewriter) const override {
    if (!Fp8Format::of(op.getIn().getType()))
      return failure();
    Value wide = arith::ExtFOp::create(rewriter, op.getLoc(),
                                       rewriter.getF32Type(), op.getIn());
    rewriter.replaceOpWithNewOp<FpToIntOp>(op, op.getType(), wide);
    return success();
  }
};

/// An fp8 constant as its bits.
struct Fp8Constant : OpRewritePattern<arith::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ConstantOp op,
                                PatternRewriter &rewriter) const override {
    auto value = dyn_cast<FloatAttr>(op.getValue());
    if (!value || !Fp8Format::of(value.getType()))
      return failure();
    Value bits = arith::ConstantIntOp::create(
        rewriter, op.getLoc(), rewriter.getI8Type(),
        value.getValue().bitcastToAPInt().getZExtValue());
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), bits);
    return success();
  }
};

struct ExpandFp8 : public tk::impl::TkExpandFp8Base<ExpandFp8> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    tk::populateExpandFp8Patterns(patterns);
    // Without folding: a bitcast of a constant's bits would fold back into
    // the fp8 constant.
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace

void tk::populateExpandFp8Patterns(RewritePatternSet &patterns) {
  patterns.add<TruncFToFp8, ExtFFromFp8, Fp8Constant, IntToFp8<arith::SIToFPOp>,
               IntToFp8<arith::UIToFPOp>, Fp8ToInt<arith::FPToSIOp>,
               Fp8ToInt<arith::FPToUIOp>>(patterns.getContext());
}
