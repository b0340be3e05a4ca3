//===- DotOperandLayouts.cpp - the matrix unit's operand layouts ----------===//
//
// Pass 4 of the register pipeline (DESIGN.md §3): which of a dot's
// operands convert, in registers, to the operand fragments of the
// intrinsic its accumulator is tiled from (tiled over warps and registers
// as the accumulator is), and which the dot reads from workgroup memory
// one k step at a time (DotOperands.h). A dot without an intrinsic takes
// its operands in registers. An operand a loop does not change converts
// once, before the loop; where its fragments and the loop's other tiles
// would not fit a thread's registers (RDNA3's WMMA holds each element of a
// and b in two lanes), it is written to workgroup memory there instead and
// read back each trip (a warpgroup dot's a: in its matrix descriptor's
// layout, which the products read in place).
//
//===----------------------------------------------------------------------===//

#include "tk/core/Analysis/SharedMemoryAllocation.h"
#include "tk/core/DotOperands.h"
#include "tk/core/Layout.h"
#include "tk/core/Layout/LayoutPresets.h"
#include "tk/core/Layout/WarpShuffles.h"
#include "tk/core/Passes.h"
#include "tk/core/TargetInfo.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// The share of a thread's registers (TargetInfo::registersPerThread) a
/// loop's tiles may take by estimateLoopTileRegisters, with an invariant
/// operand held in its fragments. On gfx1100 (256 VGPRs) the benchmark's
/// attentions that spilled with q held so came to 95% and 109% (heads of
/// 128 and 64 on 128-row blocks), the one that did not to 57% (64-row
/// blocks); on gfx942 none passes 24% of 512.
constexpr std::pair<int64_t, int64_t> kTileRegisterShare = {3, 4};

struct DotOperandLayoutsPass
    : public tk::impl::TkDotOperandLayoutsBase<DotOperandLayoutsPass> {
  using TkDotOperandLayoutsBase::TkDotOperandLayoutsBase;

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
      const MatrixIntrinsic *intrinsic = info->findIntrinsic(name);
      if (!intrinsic) {
        dot.emitError() << kPassName << ": " << info->name
                        << " has no matrix intrinsic " << name;
        return WalkResult::interrupt();
      }
      auto accumulator =
          dyn_cast_or_null<LinearLayoutAttr>(getLayout(dot.getType()));
      if (!accumulator)
        return WalkResult::advance();
      int64_t depth =
          cast<RankedTensorType>(dot.getA().getType()).getDimSize(1);
      bool warpgroup = intrinsic->scope == MatrixScope::Warpgroup;
      for (unsigned opIdx : {0u, 1u}) {
        // The intrinsic reads this operand from shared memory itself (wgmma
        // reads b so, and a where it does not convert in registers; a of
        // 8-bit elements always: tk's wgmma takes registers of 16-bit a).
        bool byteElements = intrinsic->aType == MatrixElementType::F8E4M3 ||
                            intrinsic->aType == MatrixElementType::F8E5M2;
        if (warpgroup ? opIdx == 1 || byteElements
                      : !(opIdx == 0 ? intrinsic->aLayout : intrinsic->bLayout))
          continue;
        llvm::Expected<LinearLayout> layout = getMatrixOperandLayout(
            accumulator.getLinearLayout(), *intrinsic, opIdx, depth);
        if (!layout) {
          dot.emitError() << kPassName << ": operand " << (opIdx ? "b" : "a")
                          << " of " << name << ": "
                          << llvm::toString(layout.takeError());
          return WalkResult::interrupt();
        }
        if (!convertsInRegisters(dot, opIdx, *layout, *info))
          continue;
        if (!stageOperands ||
            !exceedsThreadRegisters(dot, opIdx, *layout, *info))
          convertOperand(dot, opIdx, std::move(*layout));
        else if (warpgroup)
          stageDescriptorOperand(dot, accumulator.getLinearLayout(),
                                 std::move(*layout));
        else
          stageOperand(dot, opIdx, std::move(*layout), *info);
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  /// A dot without an intrinsic: its operands in fmaOperandLayout where
  /// they fit the thread's registers.
  WalkResult convertForFma(DotOp dot) {
    auto accumulator =
        dyn_cast_or_null<LinearLayoutAttr>(getLayout(dot.getType()));
    if (!accumulator)
      return WalkResult::advance();
    int64_t depth = cast<RankedTensorType>(dot.getA().getType()).getDimSize(1);
    std::array<LinearLayout, 2> layouts;
    int64_t registers = getThreadRegisters(
        accumulator.getLinearLayout(),
        getElementTypeOrSelf(dot.getType()).getIntOrFloatBitWidth());
    for (unsigned opIdx : {0u, 1u}) {
      llvm::Expected<LinearLayout> layout =
          getFmaOperandLayout(accumulator.getLinearLayout(), opIdx, depth);
      if (!layout) {
        dot.emitError() << kPassName << ": operand " << (opIdx ? "b" : "a")
                        << " of a dot without a matrix intrinsic: "
                        << llvm::toString(layout.takeError());
        return WalkResult::interrupt();
      }
      Value operand = opIdx == 0 ? dot.getA() : dot.getB();
      registers += getThreadRegisters(
          *layout,
          getElementTypeOrSelf(operand.getType()).getIntOrFloatBitWidth());
      layouts[opIdx] = std::move(*layout);
    }
    // Rows and columns whole along k in every thread would take more than a
    // thread has: the dot reads them from workgroup memory a k step at a
    // time (planDotOperands).
    if (registers > kFmaDotRegisters)
      return WalkResult::advance();
    for (unsigned opIdx : {0u, 1u})
      convertOperand(dot, opIdx, std::move(layouts[opIdx]));
    return WalkResult::advance();
  }

  /// Whether operand `opIdx` of a dot with a matrix intrinsic takes its
  /// fragments (`layout`) in registers: where a loop around the dot does not
  /// change it (converted once, before the loop), where the conversion
  /// keeps every element in its thread, or, for an operand the kernel
  /// computes, in its warp (getShufflePlan). Any other operand stays as it
  /// is, and the dot reads its fragments from workgroup memory one k step at
  /// a time (planDotOperands): a thread then never holds a whole operand in
  /// fragments.
  static bool convertsInRegisters(DotOp dot, unsigned opIdx,
                                  const LinearLayout &layout,
                                  const TargetInfo &target) {
    Value value = opIdx == 0 ? dot.getA() : dot.getB();
    auto current =
        dyn_cast_or_null<LinearLayoutAttr>(getLayout(value.getType()));
    if (!current || current.getLinearLayout() == layout)
      return true;
    auto loop = dot->getParentOfType<scf::ForOp>();
    if (loop && !loop->isAncestor(value.getParentBlock()->getParentOp()))
      return true;
    if (isRegisterPermutation(current.getLinearLayout(), layout))
      return true;
    // A computed operand (attention's probabilities) whose fragments are in
    // its warp already moves by shuffles where they cost no more than the
    // round trip; a loaded one is read from workgroup memory, where its
    // copy lands.
    Operation *producer = value.getDefiningOp();
    return producer && !isa<LoadOp, LocalLoadOp>(producer) &&
           getShufflePlan(current.getLinearLayout(), layout,
                          getElementTypeOrSelf(value.getType()),
                          target.workgroupVectorBytes);
  }

  /// Whether operand `opIdx`, which the loop around `dot` does not change,
  /// held across the loop in its fragments (`layout`) besides the tiles the
  /// loop holds would take more than kTileRegisterShare of a thread's
  /// registers: the rest goes to addresses, masks and the backend's
  /// temporaries, and a thread that runs out spills to scratch memory.
  static bool exceedsThreadRegisters(DotOp dot, unsigned opIdx,
                                     const LinearLayout &layout,
                                     const TargetInfo &target) {
    Value value = opIdx == 0 ? dot.getA() : dot.getB();
    auto loop = dot->getParentOfType<scf::ForOp>();
    auto current =
        dyn_cast_or_null<LinearLayoutAttr>(getLayout(value.getType()));
    if (!target.registersPerThread || !loop || !current ||
        loop->isAncestor(value.getParentBlock()->getParentOp()))
      return false;
    int64_t bits =
        getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth();
    // The loop reads the operand in its own layout now: in fragments it
    // takes their registers instead.
    int64_t held = estimateLoopTileRegisters(loop) -
                   getThreadRegisters(current.getLinearLayout(), bits) +
                   getThreadRegisters(layout, bits);
    LLVM_DEBUG(llvm::dbgs() << kPassName << ": operand " << opIdx << " of "
                            << dot << " in fragments: about " << held
                            << " registers a thread across the loop\n");
    return held * kTileRegisterShare.second >
           target.registersPerThread * kTileRegisterShare.first;
  }

  /// Where `value`, which a loop does not change, waits in workgroup
  /// memory: the ring of one slot an earlier dot wrote it to, else a new one
  /// in the layout `makeLayout` gives, written once, right after `value` is
  /// computed (at `loc`). A null ring where `makeLayout` gives no layout.
  std::pair<Value, Value>
  stageOnce(Value value, Location loc,
            llvm::function_ref<Attribute()> makeLayout) {
    for (Operation *user : value.getUsers())
      if (auto store = dyn_cast<LocalStoreOp>(user))
        return {store.getRing(), store.getSlot()};
    Attribute shared = makeLayout();
    if (!shared)
      return {};
    auto type = cast<RankedTensorType>(value.getType());
    OpBuilder before(&getContext());
    before.setInsertionPointAfterValue(value);
    Value ring =
        LocalAllocOp::create(before, loc,
                             RingType::get(&getContext(), 1, type.getShape(),
                                           type.getElementType(), shared));
    Value slot =
        arith::ConstantIntOp::create(before, loc, before.getI32Type(), 0);
    LocalStoreOp::create(before, loc, value, ring, slot);
    return {ring, slot};
  }

  /// Stages a of a warpgroup `dot` (wgmma), which the loop around it does
  /// not change, in the layout of the matrix descriptor planDotOperands
  /// gives it (#tkw.nvmma), where the products read it in place each trip:
  /// no register holds it in the loop (FlashAttention-3's q). Where the
  /// descriptor has no such layout, a converts to its `fragments`.
  void stageDescriptorOperand(DotOp dot, const LinearLayout &accumulator,
                              LinearLayout fragments) {
    Value value = dot.getA();
    auto type = cast<RankedTensorType>(value.getType());
    auto [ring, slot] = stageOnce(value, dot.getLoc(), [&]() -> Attribute {
      auto current = cast<LinearLayoutAttr>(getLayout(type));
      int64_t bytes = std::max<int64_t>(
          type.getElementType().getIntOrFloatBitWidth() / 8, 1);
      llvm::Expected<int64_t> width = getWarpgroupWidth(accumulator);
      if (!width) {
        llvm::consumeError(width.takeError());
        return nullptr;
      }
      llvm::Expected<DescriptorOperand> descriptor =
          getDescriptorOperand(type.getShape(), bytes, /*opIdx=*/0,
                               current.getLinearLayout(), *width);
      if (!descriptor) {
        llvm::consumeError(descriptor.takeError());
        return nullptr;
      }
      return NvmmaSharedAttr::get(
          &getContext(), descriptor->swizzleBytes,
          getDescriptorSlotOrder(*descriptor, /*transposed=*/{}));
    });
    if (!ring)
      return convertOperand(dot, 0, std::move(fragments));
    OpBuilder builder(dot);
    dot.getAMutable().set(
        LocalLoadOp::create(builder, dot.getLoc(), type, ring, slot));
  }

  /// Writes operand `opIdx` of `dot`, which the loop around it does not
  /// change, into a ring of one slot before the loop (once for every loop
  /// that reads it), and reads it back in `layout` before the dot.
  void stageOperand(DotOp dot, unsigned opIdx, LinearLayout layout,
                    const TargetInfo &target) {
    OpOperand &operand = opIdx == 0 ? dot.getAMutable() : dot.getBMutable();
    Value value = operand.get();
    auto type = cast<RankedTensorType>(value.getType());
    auto [ring, slot] = stageOnce(value, dot.getLoc(), [&]() -> Attribute {
      int64_t bytes = std::max<int64_t>(
          type.getElementType().getIntOrFloatBitWidth() / 8, 1);
      auto current = cast<LinearLayoutAttr>(getLayout(type));
      llvm::Expected<OperandSwizzle> swizzle = getOperandSwizzle(
          type.getShape(), bytes, current.getLinearLayout(), layout,
          /*readersFirst=*/!target.transposingMatrixLoads);
      if (!swizzle) {
        llvm::consumeError(swizzle.takeError());
        return nullptr;
      }
      return SwizzledSharedAttr::get(&getContext(), swizzle->vec,
                                     swizzle->perPhase, swizzle->maxPhase,
                                     {swizzle->order[0], swizzle->order[1]});
    });
    // No swizzle of this tile: it stays in registers.
    if (!ring)
      return convertOperand(dot, opIdx, std::move(layout));
    auto wanted = LinearLayoutAttr::get(&getContext(), std::move(layout));
    OpBuilder builder(dot);
    operand.set(LocalLoadOp::create(builder, dot.getLoc(),
                                    withLayout(type, wanted), ring, slot));
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
