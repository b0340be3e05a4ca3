//===- Dot.cpp - tk.dot on the registers of a thread ----------------------===//
//
// A dot's operands arrive in the layouts tk-dot-operand-layouts derived
// from its accumulator's, so a thread already holds what its own part of
// the product needs: for a dot without a matrix intrinsic, the row of a and
// the column of b of every product element it holds (fused multiply-adds
// in the thread); for a dot that records one (`tkw.intrinsic`), the
// intrinsic's fragments of a, b and the accumulator, which the backend's
// MatrixUnit multiplies (emitFragmentProduct). Both are found from the
// register part of the three layouts: their lane and warp parts agree by
// construction, and are checked here before anything is emitted.
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"

#include "tk/core/Conversion/Passes.h"
#include "tk/core/Conversion/ScalarOps.h"
#include "tk/core/TargetInfo.h"
#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <map>
#include <set>

using namespace mlir;

namespace tk::simt {

namespace {

using Basis = std::vector<int32_t>;

int32_t bitsOf(const LinearLayout &layout, StringRef dim) {
  return layout.hasInDim(dim) ? layout.getInDimSizeLog2(dim) : 0;
}

/// True when bit `bit` of `dim` moves `layout` by `expected(dim, bit)` for
/// every lane and warp bit, and both have the same bits.
bool threadBasesAre(const LinearLayout &layout, const LinearLayout &reference,
                    function_ref<Basis(StringRef dim, int32_t bit)> expected) {
  for (StringRef dim : {kLaneDim, kWarpDim}) {
    if (bitsOf(layout, dim) != bitsOf(reference, dim))
      return false;
    for (int32_t bit = 0; bit < bitsOf(layout, dim); ++bit)
      if (layout.getBasis(dim, bit) != expected(dim, bit))
        return false;
  }
  return true;
}

/// The register of a layout that holds each element a thread has, by its
/// register-only coordinates (lane and warp 0): the first where registers
/// hold copies.
class RegisterIndex {
public:
  explicit RegisterIndex(const LinearLayout &layout) {
    for (int32_t reg = layout.getInDimSize(kRegisterDim) - 1; reg >= 0; --reg)
      holder[registerCoordinates(layout, reg)] = reg;
  }

  std::optional<int32_t> lookup(int32_t row, int32_t col) const {
    auto it = holder.find(SmallVector<int32_t>{row, col});
    if (it == holder.end())
      return std::nullopt;
    return it->second;
  }

private:
  std::map<SmallVector<int32_t>, int32_t> holder;
};

struct DotLowering : OpConversionPattern<tk::DotOp> {
  DotLowering(const TypeConverter &converter, MLIRContext *context,
              std::shared_ptr<const MatrixUnit> matrixUnit,
              std::shared_ptr<const TargetInfo> target)
      : OpConversionPattern(converter, context),
        matrixUnit(std::move(matrixUnit)), target(std::move(target)) {}

  LogicalResult
  matchAndRewrite(tk::DotOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const LinearLayout *a = getLinearLayout(op.getA().getType());
    const LinearLayout *b = getLinearLayout(op.getB().getType());
    const LinearLayout *acc = getLinearLayout(op.getType());
    if (!a || !b || !acc)
      return rewriter.notifyMatchFailure(op, "a tile without a layout");
    FailureOr<SmallVector<Value>> results =
        op->hasAttr(warp::TkwDialect::kIntrinsicAttrName)
            ? lowerWithIntrinsic(op, *a, *b, *acc, adaptor, rewriter)
            : lowerWithFma(op, *a, *b, *acc, adaptor, rewriter);
    if (failed(results))
      return failure();
    rewriter.replaceOpWithMultiple(op, {*results});
    return success();
  }

private:
  /// Each product element the thread holds, as multiply-adds over the
  /// reduction dimension, in f32 for narrow float accumulators.
  FailureOr<SmallVector<Value>>
  lowerWithFma(tk::DotOp op, const LinearLayout &a, const LinearLayout &b,
               const LinearLayout &acc, OneToNOpAdaptor adaptor,
               ConversionPatternRewriter &rewriter) const {
    Type aElement = getElementTypeOrSelf(op.getA().getType());
    Type accElement = getElementTypeOrSelf(op.getType());
    if (isa<Float8E4M3FNType, Float8E5M2Type>(aElement))
      return rewriter.notifyMatchFailure(op, "fp8 dot without an intrinsic");
    // a holds the accumulator's rows, b its columns, each with the whole
    // reduction dimension in registers.
    auto along = [&](unsigned dim) {
      return [&acc, dim](StringRef in, int32_t bit) {
        Basis basis(2, 0);
        basis[dim] = acc.getBasis(in, bit)[dim];
        return basis;
      };
    };
    if (!threadBasesAre(a, acc, along(0)) || !threadBasesAre(b, acc, along(1)))
      return rewriter.notifyMatchFailure(
          op, "operands not in the accumulator's rows and columns");
    bool isFloat = isa<FloatType>(accElement);
    Type compute =
        isNarrowFloat(accElement) ? rewriter.getF32Type() : accElement;
    Location loc = op.getLoc();
    auto widen = [&](Value value) -> Value {
      if (value.getType() == compute)
        return value;
      if (isFloat)
        return arith::ExtFOp::create(rewriter, loc, compute, value);
      return arith::ExtSIOp::create(rewriter, loc, compute, value);
    };
    RegisterIndex aIndex(a), bIndex(b);
    int64_t depth = cast<RankedTensorType>(op.getA().getType()).getDimSize(1);
    ValueRange aValues = adaptor.getA(), bValues = adaptor.getB();
    // Each operand register widened once, where it is first used.
    SmallVector<Value> aWide(aValues.size()), bWide(bValues.size());
    auto wide = [&](SmallVector<Value> &cache, ValueRange values, int32_t reg) {
      if (!cache[reg])
        cache[reg] = widen(values[reg]);
      return cache[reg];
    };
    SmallVector<Value> results;
    for (auto [reg, initial] : llvm::enumerate(adaptor.getAcc())) {
      SmallVector<int32_t> at = registerCoordinates(acc, reg);
      Value sum = widen(initial);
      for (int32_t k = 0; k < depth; ++k) {
        std::optional<int32_t> aReg = aIndex.lookup(at[0], k);
        std::optional<int32_t> bReg = bIndex.lookup(k, at[1]);
        if (!aReg || !bReg)
          return rewriter.notifyMatchFailure(
              op, "an operand element not in the thread's registers");
        Value x = wide(aWide, aValues, *aReg);
        Value y = wide(bWide, bValues, *bReg);
        sum = isFloat ? Value(math::FmaOp::create(rewriter, loc, x, y, sum))
                      : Value(arith::AddIOp::create(
                            rewriter, loc, sum,
                            arith::MulIOp::create(rewriter, loc, x, y)));
      }
      if (sum.getType() != accElement)
        sum = arith::TruncFOp::create(rewriter, loc, accElement, sum);
      results.push_back(sum);
    }
    return results;
  }

  /// One intrinsic per fragment of the accumulator and step of the
  /// reduction dimension, emitted by the backend's unit.
  FailureOr<SmallVector<Value>>
  lowerWithIntrinsic(tk::DotOp op, const LinearLayout &a, const LinearLayout &b,
                     const LinearLayout &acc, OneToNOpAdaptor adaptor,
                     ConversionPatternRewriter &rewriter) const {
    auto name =
        op->getAttrOfType<StringAttr>(warp::TkwDialect::kIntrinsicAttrName);
    const MatrixIntrinsic *intrinsic = nullptr;
    if (target)
      for (const MatrixIntrinsic &candidate : target->intrinsics)
        if (candidate.name == name.getValue())
          intrinsic = &candidate;
    if (!intrinsic || !matrixUnit || !intrinsic->aLayout || !intrinsic->bLayout)
      return rewriter.notifyMatchFailure(
          op, "no unit emits the dot's intrinsic from registers");
    // A narrow float accumulator is kept in f32 over the dot's k steps and
    // rounded once: tk-assign-linear-layouts chose the intrinsic's f32 form.
    Type accElement = getElementTypeOrSelf(op.getType());
    bool narrow = isNarrowFloat(accElement);
    if (narrow && intrinsic->accType != MatrixElementType::F32)
      return rewriter.notifyMatchFailure(
          op, "a narrow accumulator with an intrinsic that does not "
              "accumulate in f32");
    llvm::Expected<LinearLayout> accFragment =
        intrinsic->accLayout.toLinearLayout(intrinsic->m, intrinsic->n);
    llvm::Expected<LinearLayout> aFragment =
        intrinsic->aLayout->toLinearLayout(intrinsic->m, intrinsic->k);
    llvm::Expected<LinearLayout> bFragment =
        intrinsic->bLayout->toLinearLayout(intrinsic->k, intrinsic->n);
    if (!accFragment || !aFragment || !bFragment) {
      llvm::consumeError(accFragment.takeError());
      llvm::consumeError(aFragment.takeError());
      llvm::consumeError(bFragment.takeError());
      return rewriter.notifyMatchFailure(op, "a fragment that is not linear");
    }
    // The lanes are the fragments'; the warps of a (b) are the
    // accumulator's along its rows (columns).
    auto fragmentLanes = [](const LinearLayout &fragment,
                            const LinearLayout &acc, unsigned dim) {
      return [&fragment, &acc, dim](StringRef in, int32_t bit) {
        if (in == kLaneDim)
          return fragment.getBasis(in, bit);
        Basis basis(2, 0);
        basis[dim] = acc.getBasis(in, bit)[dim];
        return basis;
      };
    };
    auto accLanes = [&](StringRef in, int32_t bit) {
      return in == kLaneDim ? accFragment->getBasis(in, bit)
                            : acc.getBasis(in, bit);
    };
    if (!threadBasesAre(a, acc, fragmentLanes(*aFragment, acc, 0)) ||
        !threadBasesAre(b, acc, fragmentLanes(*bFragment, acc, 1)) ||
        !threadBasesAre(acc, acc, accLanes))
      return rewriter.notifyMatchFailure(
          op, "layouts that are not the intrinsic's fragments");

    RegisterIndex aIndex(a), bIndex(b), accIndex(acc);
    int64_t depth = cast<RankedTensorType>(op.getA().getType()).getDimSize(1);
    ValueRange aValues = adaptor.getA(), bValues = adaptor.getB();
    SmallVector<Value> results(adaptor.getAcc().begin(),
                               adaptor.getAcc().end());
    // The registers of `layout` that hold `fragment` at (row, col).
    auto gather = [](const RegisterIndex &index, const LinearLayout &fragment,
                     int32_t row,
                     int32_t col) -> std::optional<SmallVector<int32_t>> {
      SmallVector<int32_t> registers;
      for (int32_t reg = 0; reg < fragment.getInDimSize(kRegisterDim); ++reg) {
        SmallVector<int32_t> at = registerCoordinates(fragment, reg);
        std::optional<int32_t> held = index.lookup(row | at[0], col | at[1]);
        if (!held)
          return std::nullopt;
        registers.push_back(*held);
      }
      return registers;
    };
    auto valuesOf = [](ValueRange values, ArrayRef<int32_t> registers) {
      SmallVector<Value> picked;
      for (int32_t reg : registers)
        picked.push_back(values[reg]);
      return picked;
    };
    Location loc = op.getLoc();
    std::set<std::pair<int32_t, int32_t>> done;
    for (int32_t reg = 0; reg < int32_t(results.size()); ++reg) {
      // The origin of the fragment that holds the register: its
      // coordinates aligned to the intrinsic's shape.
      SmallVector<int32_t> at = registerCoordinates(acc, reg);
      int32_t row = at[0] & ~int32_t(intrinsic->m - 1);
      int32_t col = at[1] & ~int32_t(intrinsic->n - 1);
      if (!done.insert({row, col}).second)
        continue;
      std::optional<SmallVector<int32_t>> accRegs =
          gather(accIndex, *accFragment, row, col);
      if (!accRegs)
        return rewriter.notifyMatchFailure(op, "an accumulator fragment "
                                               "not in the thread's registers");
      SmallVector<Value> current = valuesOf(results, *accRegs);
      if (narrow)
        for (Value &value : current)
          value = arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(),
                                        value);
      for (int64_t k = 0; k < depth; k += intrinsic->k) {
        std::optional<SmallVector<int32_t>> aRegs =
            gather(aIndex, *aFragment, row, k);
        std::optional<SmallVector<int32_t>> bRegs =
            gather(bIndex, *bFragment, k, col);
        if (!aRegs || !bRegs)
          return rewriter.notifyMatchFailure(
              op, "an operand fragment not in the thread's registers");
        FailureOr<SmallVector<Value>> next = matrixUnit->emitFragmentProduct(
            rewriter, loc, *intrinsic, valuesOf(aValues, *aRegs),
            valuesOf(bValues, *bRegs), current);
        if (failed(next))
          return failure();
        current = std::move(*next);
      }
      for (auto [reg, value] : llvm::zip_equal(*accRegs, current))
        results[reg] =
            narrow ? arith::TruncFOp::create(rewriter, loc, accElement, value)
                   : value;
    }
    return results;
  }

  std::shared_ptr<const MatrixUnit> matrixUnit;
  std::shared_ptr<const TargetInfo> target;
};

} // namespace

void populateDotPatterns(RegisterTypeConverter &converter,
                         RewritePatternSet &patterns,
                         std::shared_ptr<const MatrixUnit> matrixUnit,
                         std::shared_ptr<const TargetInfo> target) {
  patterns.add<DotLowering>(converter, patterns.getContext(),
                            std::move(matrixUnit), std::move(target));
}

} // namespace tk::simt
