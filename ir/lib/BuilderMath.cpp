//===- BuilderMath.cpp - Math functions and casts -------------------------===//
//
// The KernelBuilder's math functions and casts (Builder.cpp has the rest).
//
//===----------------------------------------------------------------------===//

#include "BuilderSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tk;
using namespace tk::builder_support;

//===----------------------------------------------------------------------===//
// Math and casts
//===----------------------------------------------------------------------===//

Tile KernelBuilder::unaryMath(StringRef what, const Tile &x,
                              Value (*create)(OpBuilder &, Location, Value)) {
  if (!check(x, what))
    return Tile();
  if (!x.isFloat()) {
    emitError(what + ": expected a floating-point value, got " + str(x.type()));
    return Tile();
  }
  return Tile(this, create(b_, loc_, x.value()));
}

#define TK_MATH_FUNCTION(NAME, OP)                                             \
  Tile KernelBuilder::NAME(const Tile &x) {                                    \
    return unaryMath(#NAME, x, [](OpBuilder &b, Location loc, Value v) {       \
      return Value(math::OP::create(b, loc, v));                               \
    });                                                                        \
  }
TK_MATH_FUNCTION(exp, ExpOp)
TK_MATH_FUNCTION(exp2, Exp2Op)
TK_MATH_FUNCTION(log, LogOp)
TK_MATH_FUNCTION(log2, Log2Op)
TK_MATH_FUNCTION(sqrt, SqrtOp)
TK_MATH_FUNCTION(rsqrt, RsqrtOp)
TK_MATH_FUNCTION(sin, SinOp)
TK_MATH_FUNCTION(cos, CosOp)
TK_MATH_FUNCTION(tanh, TanhOp)
TK_MATH_FUNCTION(erf, ErfOp)
TK_MATH_FUNCTION(floor, FloorOp)
TK_MATH_FUNCTION(ceil, CeilOp)
#undef TK_MATH_FUNCTION

// `fastmath<afn>`: the backend may approximate.
#define TK_APPROXIMATE_MATH_FUNCTION(NAME, OP)                                 \
  Tile KernelBuilder::NAME(const Tile &x) {                                    \
    return unaryMath(#NAME, x, [](OpBuilder &b, Location loc, Value v) {       \
      return Value(                                                            \
          math::OP::create(b, loc, v,                                          \
                           arith::FastMathFlagsAttr::get(                      \
                               b.getContext(), arith::FastMathFlags::afn)));   \
    });                                                                        \
  }
TK_APPROXIMATE_MATH_FUNCTION(fastExp, ExpOp)
TK_APPROXIMATE_MATH_FUNCTION(fastExp2, Exp2Op)
#undef TK_APPROXIMATE_MATH_FUNCTION

Tile KernelBuilder::abs(const Tile &x) {
  if (!check(x, "abs"))
    return Tile();
  if (x.isInt() && !x.isBool())
    return wrapResult(math::AbsIOp::create(b_, loc_, x.value()));
  return unaryMath("abs", x, [](OpBuilder &b, Location loc, Value v) {
    return Value(math::AbsFOp::create(b, loc, v));
  });
}

Tile KernelBuilder::cast(const Tile &x, Type dtype) {
  if (!check(x, "cast"))
    return Tile();
  if (!dtype) {
    emitError("cast: the target dtype is null");
    return Tile();
  }
  dtype = getElementTypeOrSelf(dtype);
  Type from = x.dtype();
  if (from == dtype)
    return x;
  if (!isa<IntegerType, FloatType>(from) ||
      !isa<IntegerType, FloatType>(dtype)) {
    emitError("cast: cannot cast " + str(x.type()) + " to " + str(dtype));
    return Tile();
  }
  Type to = withElementType(x.type(), dtype);
  Value v = x.value();
  auto fromInt = dyn_cast<IntegerType>(from);
  auto toInt = dyn_cast<IntegerType>(dtype);
  if (fromInt && toInt) {
    if (toInt.getWidth() < fromInt.getWidth())
      return wrapResult(arith::TruncIOp::create(b_, loc_, to, v));
    // i1 is a truth value: true widens to 1, not -1.
    if (fromInt.getWidth() == 1)
      return wrapResult(arith::ExtUIOp::create(b_, loc_, to, v));
    return wrapResult(arith::ExtSIOp::create(b_, loc_, to, v));
  }
  if (fromInt) {
    if (fromInt.getWidth() == 1)
      return wrapResult(arith::UIToFPOp::create(b_, loc_, to, v));
    return wrapResult(arith::SIToFPOp::create(b_, loc_, to, v));
  }
  if (toInt) {
    if (toInt.getWidth() == 1)
      return ne(x, 0.0);
    return wrapResult(arith::FPToSIOp::create(b_, loc_, to, v));
  }
  // Float to float.
  if (isFp8(from) || isFp8(dtype))
    return fpToFp(x, dtype);
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = dtype.getIntOrFloatBitWidth();
  if (toWidth > fromWidth)
    return wrapResult(
        arith::ExtFOp::create(b_, loc_, to, v, arith::FastMathFlagsAttr()));
  if (toWidth < fromWidth)
    return wrapResult(arith::TruncFOp::create(b_, loc_, to, v));
  // f16 <-> bf16: neither holds the other, so go through f32 as Triton does.
  Tile wide = cast(x, f32());
  return cast(wide, dtype);
}

Tile KernelBuilder::bitcast(const Tile &x, Type dtype) {
  if (!check(x, "bitcast"))
    return Tile();
  dtype = dtype ? getElementTypeOrSelf(dtype) : dtype;
  if (!dtype || !isa<IntegerType, FloatType>(x.dtype()) ||
      !isa<IntegerType, FloatType>(dtype) ||
      x.dtype().getIntOrFloatBitWidth() != dtype.getIntOrFloatBitWidth()) {
    emitError("bitcast: cannot reinterpret " + str(x.type()) + " as " +
              (dtype ? str(dtype) : std::string("a null type")) +
              " (bit widths must match)");
    return Tile();
  }
  if (x.dtype() == dtype)
    return x;
  return wrapResult(arith::BitcastOp::create(
      b_, loc_, withElementType(x.type(), dtype), x.value()));
}

Tile KernelBuilder::fpToFp(const Tile &x, Type dtype,
                           std::optional<RoundingMode> rounding) {
  if (!check(x, "fpToFp"))
    return Tile();
  dtype = dtype ? getElementTypeOrSelf(dtype) : dtype;
  if (!x.isFloat() || !dtype || !isa<FloatType>(dtype) || x.dtype() == dtype) {
    emitError("fpToFp: cannot convert " + str(x.type()) + " to " +
              (dtype ? str(dtype) : std::string("a null type")));
    return Tile();
  }
  unsigned fromWidth = x.dtype().getIntOrFloatBitWidth();
  unsigned toWidth = dtype.getIntOrFloatBitWidth();
  // Same rule as the verifier: equal widths narrow unless the target is one
  // of the IEEE formats that hold the source exactly.
  bool narrows = toWidth < fromWidth ||
                 (toWidth == fromWidth && !dtype.isF32() && !dtype.isF64());
  RoundingModeAttr roundingAttr;
  if (narrows)
    roundingAttr =
        RoundingModeAttr::get(ctx_, rounding.value_or(RoundingMode::RTNE));
  else if (rounding) {
    emitError("fpToFp: widening " + str(x.dtype()) + " to " + str(dtype) +
              " is exact and takes no rounding mode");
    return Tile();
  }
  return wrapResult(FpToFpOp::create(b_, loc_, withElementType(x.type(), dtype),
                                     x.value(), roundingAttr));
}
