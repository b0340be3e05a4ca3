//===- DotOperandLayouts.cpp - the matrix unit's operand layouts ----------===//
//
// Pass 4 of the register pipeline (DESIGN.md §3): a dot's operands convert
// to the operand fragments of the intrinsic its accumulator is tiled from,
// tiled over warps and registers as the accumulator is.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout.h"
#include "tk/core/Layout/LayoutPresets.h"
#include "tk/core/Passes.h"
#include "tk/core/TargetInfo.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tk-dot-operand-layouts"

namespace tk {
#define GEN_PASS_DEF_TKDOTOPERANDLAYOUTS
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;
using namespace tk;
using namespace tk::warp;

namespace {

constexpr llvm::StringLiteral kPassName = "tk-dot-operand-layouts";

using Basis = std::vector<int32_t>;

/// Operand `opIdx` (0: a, m x k; 1: b, k x n) of a dot whose accumulator
/// (rows x cols, reduction depth `depth`) is `accumulator`, tiled from an
/// intrinsic whose accumulator fragment has `fragmentRegisterBits` register
/// bits and whose operand fragment is `fragment`. The accumulator's bases
/// say how its fragments are spread: its warp bases and its registers past
/// the fragment's each move along the product's rows or its columns. The
/// operand follows those along its own dimension (rows for a, columns for
/// b) and holds copies along the other; the reduction dimension repeats in
/// further registers.
llvm::Expected<LinearLayout> operandLayout(const LinearLayout &accumulator,
                                           int32_t fragmentRegisterBits,
                                           const LinearLayout &fragment,
                                           unsigned opIdx, int64_t depth) {
  // The operand's dimension the product's shares: a's rows are the
  // product's rows (its dim0), b's columns the product's columns (dim1).
  unsigned shared = opIdx == 0 ? 0 : 1;
  unsigned reduction = opIdx == 0 ? 1 : 0;
  auto project = [&](const Basis &basis, Basis &out) -> bool {
    out.assign(2, 0);
    if (basis[1 - shared] != 0 && basis[shared] != 0)
      return false; // moves along both: not a tiling tk makes
    out[shared] = basis[shared];
    return true;
  };
  LinearLayout::BasesT bases;
  std::vector<Basis> registers, lanes, warps;
  for (int32_t bit = 0; bit < fragment.getInDimSizeLog2(kRegisterDim); ++bit)
    registers.push_back(fragment.getBasis(kRegisterDim, bit));
  for (int32_t bit = 0; bit < fragment.getInDimSizeLog2(kLaneDim); ++bit)
    lanes.push_back(fragment.getBasis(kLaneDim, bit));
  auto moveError = [] {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the accumulator's tiling moves along rows and columns at once");
  };
  for (int32_t bit = fragmentRegisterBits;
       bit < accumulator.getInDimSizeLog2(kRegisterDim); ++bit) {
    Basis projected;
    if (!project(accumulator.getBasis(kRegisterDim, bit), projected))
      return moveError();
    // Repeats along the other dimension are the same operand elements.
    if (projected[shared] != 0)
      registers.push_back(projected);
  }
  int32_t fragmentDepth = fragment.getOutDimSize(standardOutDimName(reduction));
  for (int64_t step = fragmentDepth; step < depth; step *= 2) {
    Basis basis(2, 0);
    basis[reduction] = static_cast<int32_t>(step);
    registers.push_back(basis);
  }
  for (int32_t bit = 0; bit < accumulator.getInDimSizeLog2(kWarpDim); ++bit) {
    Basis projected;
    if (!project(accumulator.getBasis(kWarpDim, bit), projected))
      return moveError();
    warps.push_back(projected);
  }
  bases.emplace_back(kRegisterDim.str(), std::move(registers));
  bases.emplace_back(kLaneDim.str(), std::move(lanes));
  bases.emplace_back(kWarpDim.str(), std::move(warps));
  int32_t sharedSize = accumulator.getOutDimSize(standardOutDimName(shared));
  LinearLayout::DimSizes outDims = {{"dim0", 0}, {"dim1", 0}};
  outDims[shared].second = sharedSize;
  outDims[reduction].second = static_cast<int32_t>(depth);
  return LinearLayout::create(std::move(bases), std::move(outDims));
}

/// Operand `opIdx` of a dot computed by each thread on its own (no matrix
/// intrinsic: fused multiply-adds): every index that holds an element of
/// the product holds the whole reduction dimension of that element's row of
/// a (column of b), in registers. The accumulator's register, lane and warp
/// bases along the operand's own dimension are kept; those along the other
/// dimension hold copies (zero bases; registers that would only repeat an
/// element are dropped). Triton's dot-operand layout of a blocked parent.
llvm::Expected<LinearLayout> fmaOperandLayout(const LinearLayout &accumulator,
                                              unsigned opIdx, int64_t depth) {
  unsigned shared = opIdx == 0 ? 0 : 1;
  unsigned reduction = 1 - shared;
  LinearLayout::BasesT bases;
  for (llvm::StringRef dim : {kRegisterDim, kLaneDim, kWarpDim}) {
    std::vector<Basis> projected;
    for (int32_t bit = 0; bit < accumulator.getInDimSizeLog2(dim); ++bit) {
      Basis basis = accumulator.getBasis(dim, bit);
      if (basis[reduction] != 0 && basis[shared] != 0)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "the accumulator's layout moves along rows and columns at once");
      Basis out(2, 0);
      out[shared] = basis[shared];
      if (dim == kRegisterDim && out[shared] == 0)
        continue;
      projected.push_back(out);
    }
    if (dim == kRegisterDim)
      for (int64_t step = 1; step < depth; step *= 2) {
        Basis basis(2, 0);
        basis[reduction] = static_cast<int32_t>(step);
        projected.push_back(basis);
      }
    bases.emplace_back(dim.str(), std::move(projected));
  }
  LinearLayout::DimSizes outDims = {{"dim0", 0}, {"dim1", 0}};
  outDims[shared].second =
      accumulator.getOutDimSize(standardOutDimName(shared));
  outDims[reduction].second = static_cast<int32_t>(depth);
  return LinearLayout::create(std::move(bases), std::move(outDims));
}

struct DotOperandLayoutsPass
    : public tk::impl::TkDotOperandLayoutsBase<DotOperandLayoutsPass> {
  void runOnOperation() override {
    FuncOp func = getOperation();
    auto spec = func->getAttrOfType<StringAttr>(TkwDialect::kTargetAttrName);
    std::string error;
    std::optional<TargetInfo> info;
    if (spec)
      info = TargetInfo::parse(spec.getValue(), error);
    WalkResult result = func.walk([&](DotOp dot) -> WalkResult {
      auto name =
          dot->getAttrOfType<StringAttr>(TkwDialect::kIntrinsicAttrName);
      if (!name)
        return convertForFma(dot);
      if (!info) {
        dot.emitError() << kPassName << ": the dot records an intrinsic but "
                        << (spec ? error
                                 : "the function records no tkw.target");
        return WalkResult::interrupt();
      }
      const MatrixIntrinsic *intrinsic = nullptr;
      for (const MatrixIntrinsic &candidate : info->intrinsics)
        if (candidate.name == name.getValue())
          intrinsic = &candidate;
      if (!intrinsic) {
        dot.emitError() << kPassName << ": " << info->name
                        << " has no matrix intrinsic " << name;
        return WalkResult::interrupt();
      }
      auto accumulator =
          dyn_cast_or_null<LinearLayoutAttr>(getLayout(dot.getType()));
      if (!accumulator)
        return WalkResult::advance();
      llvm::Expected<LinearLayout> accFragment =
          intrinsic->accLayout.toLinearLayout(intrinsic->m, intrinsic->n);
      if (!accFragment) {
        dot.emitError() << kPassName << ": "
                        << llvm::toString(accFragment.takeError());
        return WalkResult::interrupt();
      }
      int64_t depth =
          cast<RankedTensorType>(dot.getA().getType()).getDimSize(1);
      for (unsigned opIdx : {0u, 1u}) {
        const std::optional<FragmentLayout> &operandFragment =
            opIdx == 0 ? intrinsic->aLayout : intrinsic->bLayout;
        // The intrinsic reads this operand from shared memory itself.
        if (!operandFragment)
          continue;
        llvm::Expected<LinearLayout> fragment =
            opIdx == 0
                ? operandFragment->toLinearLayout(intrinsic->m, intrinsic->k)
                : operandFragment->toLinearLayout(intrinsic->k, intrinsic->n);
        llvm::Expected<LinearLayout> layout =
            fragment
                ? operandLayout(accumulator.getLinearLayout(),
                                accFragment->getInDimSizeLog2(kRegisterDim),
                                *fragment, opIdx, depth)
                : fragment.takeError();
        if (!layout) {
          dot.emitError() << kPassName << ": operand " << (opIdx ? "b" : "a")
                          << " of " << name << ": "
                          << llvm::toString(layout.takeError());
          return WalkResult::interrupt();
        }
        convertOperand(dot, opIdx, std::move(*layout));
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  /// A dot without an intrinsic: its operands in fmaOperandLayout.
  WalkResult convertForFma(DotOp dot) {
    auto accumulator =
        dyn_cast_or_null<LinearLayoutAttr>(getLayout(dot.getType()));
    if (!accumulator)
      return WalkResult::advance();
    int64_t depth = cast<RankedTensorType>(dot.getA().getType()).getDimSize(1);
    for (unsigned opIdx : {0u, 1u}) {
      llvm::Expected<LinearLayout> layout =
          fmaOperandLayout(accumulator.getLinearLayout(), opIdx, depth);
      if (!layout) {
        dot.emitError() << kPassName << ": operand " << (opIdx ? "b" : "a")
                        << " of a dot without a matrix intrinsic: "
                        << llvm::toString(layout.takeError());
        return WalkResult::interrupt();
      }
      convertOperand(dot, opIdx, std::move(*layout));
    }
    return WalkResult::advance();
  }

  /// Converts operand `opIdx` of `dot` to `layout` unless it is in it.
  void convertOperand(DotOp dot, unsigned opIdx, LinearLayout layout) {
    OpOperand &operand = opIdx == 0 ? dot.getAMutable() : dot.getBMutable();
    auto wanted = LinearLayoutAttr::get(&getContext(), std::move(layout));
    if (getLayout(operand.get().getType()) == wanted)
      return;
    OpBuilder builder(dot);
    // An operand the loop around the dot does not change (attention's q)
    // converts once, before the loop.
    // Two loops that read it (attention's full and masked blocks) share
    // that conversion.
    Value value = operand.get();
    auto loop = dot->getParentOfType<scf::ForOp>();
    if (loop && !loop->isAncestor(value.getParentBlock()->getParentOp())) {
      Type type = withLayout(value.getType(), wanted);
      for (Operation *user : value.getUsers())
        if (auto convert = dyn_cast<ConvertLayoutOp>(user))
          if (convert.getType() == type &&
              convert->getBlock() == value.getParentBlock()) {
            operand.set(convert.getResult());
            return;
          }
      builder.setInsertionPointAfterValue(value);
    }
    operand.set(ConvertLayoutOp::create(
        builder, dot.getLoc(), withLayout(operand.get().getType(), wanted),
        operand.get()));
  }
};

} // namespace
