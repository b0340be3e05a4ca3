//===- AssignLayouts.cpp - workload-aware layouts from dot and reduce ----===//
//
// Gives every tile of a kernel a layout in one step (ML-Triton §2.1): the
// root ops (`tk.dot`, then `tk.reduce`) get a layout chosen from the
// workload, the rest follow along def-use chains, and `tkw.convert_layout`
// marks where two layouts meet.
//
//===----------------------------------------------------------------------===//

#include "LayoutPropagation.h"

#include "tk/core/Layout.h"
#include "tk/core/Passes.h"
#include "tk/core/TargetInfo.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "tk-assign-layouts"

namespace tk {
#define GEN_PASS_DEF_TKASSIGNLAYOUTS
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;
using namespace tk;
using namespace tk::warp;

namespace {

//===----------------------------------------------------------------------===//
// Choosing the layout of a root
//===----------------------------------------------------------------------===//

/// Chooses blocked layouts for `numWarps` warps on `target`.
struct LayoutChooser {
  MLIRContext *context;
  int64_t numWarps;
  const TargetInfo &target;

  /// Splits `shape` over the warps by halving blocks. `square` halves the
  /// largest block first (ties: the slower dimension), so that the blocks
  /// stay square and each warp reuses its operands most; otherwise the
  /// dimensions of `dims` are split in turn. A block is never halved below
  /// `minBlock` nor below `minElements` elements in all; warps left over
  /// hold copies along the first dimension of `dims`.
  BlockedLayoutAttr partition(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims,
                              bool square, ArrayRef<int64_t> minBlock,
                              int64_t minElements) const {
    int64_t rank = shape.size();
    SmallVector<int64_t> warps(rank, 1), block(shape);
    int64_t elements = 1;
    for (int64_t size : shape)
      elements *= size;
    auto canHalve = [&](int64_t d) {
      return block[d] % 2 == 0 && block[d] / 2 >= minBlock[d] &&
             elements / 2 >= minElements;
    };
    int64_t remaining = numWarps;
    while (remaining > 1) {
      int64_t chosen = -1;
      for (int64_t d : dims) {
        if (!canHalve(d))
          continue;
        if (!square) {
          chosen = d;
          break;
        }
        if (chosen < 0 || block[d] > block[chosen])
          chosen = d;
      }
      if (chosen < 0)
        break;
      warps[chosen] *= 2;
      block[chosen] /= 2;
      elements /= 2;
      remaining /= 2;
    }
    warps[dims.empty() ? 0 : dims.front()] *= remaining;
    SmallVector<int64_t> order;
    for (int64_t d = rank - 1; d >= 0; --d)
      order.push_back(d);
    return BlockedLayoutAttr::get(context, block, warps, order);
  }

  /// Rows across warps: the slowest dimensions are split first, and each
  /// warp keeps at least a lane's worth of elements per lane.
  BlockedLayoutAttr rowsAcrossWarps(ArrayRef<int64_t> shape,
                                    std::optional<int64_t> keepWhole) const {
    SmallVector<int64_t> dims;
    for (int64_t d = 0, e = shape.size(); d < e; ++d)
      if (d != keepWhole)
        dims.push_back(d);
    SmallVector<int64_t> minBlock(shape.size(), 1);
    return partition(shape, dims, /*square=*/false, minBlock, target.warpSize);
  }

  /// The layout of the result of `dot`: the `tiling` hint, else the
  /// workload's partition. Blocks are no smaller than the target's
  /// intrinsic for the dot's element types.
  BlockedLayoutAttr forDot(DotOp dot, DotTiling tiling) const {
    auto a = cast<RankedTensorType>(dot.getA().getType());
    auto b = cast<RankedTensorType>(dot.getB().getType());
    auto c = cast<RankedTensorType>(dot.getType());
    SmallVector<int64_t> minBlock = {1, 1};
    auto intrinsics = target.findIntrinsics(
        a.getElementType(), b.getElementType(), c.getElementType(),
        dot.getInputPrecision() != InputPrecision::IEEE);
    if (!intrinsics.empty())
      minBlock = {intrinsics.front()->m, intrinsics.front()->n};
    switch (tiling) {
    case DotTiling::Square:
      return partition(c.getShape(), {0, 1}, /*square=*/true, minBlock, 1);
    case DotTiling::Horizontal:
      return partition(c.getShape(), {0, 1}, /*square=*/false, minBlock, 1);
    case DotTiling::Vertical:
      return partition(c.getShape(), {1, 0}, /*square=*/false, minBlock, 1);
    }
    return partition(c.getShape(), {0, 1}, /*square=*/true, minBlock, 1);
  }
};

//===----------------------------------------------------------------------===//
// What #tkw.blocked layouts become across ops
//===----------------------------------------------------------------------===//

/// `layout` with a dimension of `size` elements inserted at `dim`, held
/// whole by every warp; only for blocked layouts.
Attribute insertWholeDim(Attribute layout, int64_t dim, int64_t size) {
  auto blocked = dyn_cast<BlockedLayoutAttr>(layout);
  if (!blocked)
    return {};
  SmallVector<int64_t> sizes(blocked.getSizePerWarp());
  SmallVector<int64_t> warps(blocked.getWarpsPerCTA());
  sizes.insert(sizes.begin() + dim, size);
  warps.insert(warps.begin() + dim, 1);
  // The new dimension keeps the old ones' relative order and is slowest.
  SmallVector<int64_t> order;
  for (int64_t d : blocked.getOrder())
    order.push_back(d >= dim ? d + 1 : d);
  order.push_back(dim);
  return BlockedLayoutAttr::get(layout.getContext(), sizes, warps, order);
}

/// The layout of the source of a reduction along `axis` whose result has
/// `layout`.
Attribute unsliceLayout(Attribute layout, int64_t axis, int64_t size) {
  if (auto slice = dyn_cast<SliceLayoutAttr>(layout))
    if (slice.getDim() == axis)
      return slice.getParent();
  return insertWholeDim(layout, axis, size);
}

/// The layout of the result of a broadcast to `shape` from a source of
/// `layout`: a blocked layout's blocks grow so that one per warp covers the
/// broadcast dimensions.
Attribute broadcastLayout(Attribute layout, ArrayRef<int64_t> shape) {
  auto blocked = dyn_cast<BlockedLayoutAttr>(layout);
  if (!blocked)
    return layout;
  SmallVector<int64_t> sizes(blocked.getSizePerWarp());
  for (size_t d = 0; d < shape.size(); ++d)
    sizes[d] = std::max(sizes[d], shape[d] / blocked.getWarpsPerCTA()[d]);
  return BlockedLayoutAttr::get(layout.getContext(), sizes,
                                blocked.getWarpsPerCTA(), blocked.getOrder());
}

/// The rules of the per-warp layouts: a reduction's result is a
/// #tkw.slice of its source's layout, a dot's operands #tkw.dot_operand of
/// its result's.
class BlockedRules : public LayoutRules {
public:
  bool fits(Attribute layout, ArrayRef<int64_t> shape) const override {
    return getLayoutRank(layout) == static_cast<int64_t>(shape.size());
  }
  Attribute dotOperand(Attribute result, unsigned opIdx) const override {
    auto parent = dyn_cast<BlockedLayoutAttr>(result);
    if (!parent)
      return {};
    return DotOperandLayoutAttr::get(result.getContext(), opIdx, parent);
  }
  Attribute reduceResult(Attribute source, int64_t axis) const override {
    if (axis >= getLayoutRank(source))
      return {};
    return SliceLayoutAttr::get(source.getContext(), axis, source);
  }
  Attribute reduceSource(Attribute result, int64_t axis,
                         int64_t size) const override {
    return unsliceLayout(result, axis, size);
  }
  Attribute expandDimsResult(Attribute source, int64_t axis) const override {
    auto slice = dyn_cast<SliceLayoutAttr>(source);
    if (slice && slice.getDim() == axis)
      return slice.getParent();
    return insertWholeDim(source, axis, 1);
  }
  Attribute expandDimsSource(Attribute result, int64_t axis) const override {
    return SliceLayoutAttr::get(result.getContext(), axis, result);
  }
  Attribute broadcastResult(Attribute source,
                            ArrayRef<int64_t> shape) const override {
    return broadcastLayout(source, shape);
  }
  Attribute broadcastSource(Attribute result,
                            ArrayRef<int64_t> sourceShape) const override {
    return result;
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct AssignLayoutsPass
    : public tk::impl::TkAssignLayoutsBase<AssignLayoutsPass> {
  using TkAssignLayoutsBase::TkAssignLayoutsBase;

  void runOnOperation() override {
    FuncOp func = getOperation();
    std::string error;
    std::optional<TargetInfo> info = TargetInfo::parse(target, error);
    if (!info) {
      func.emitError() << "tk-assign-layouts: " << error;
      return signalPassFailure();
    }
    if (std::optional<std::string> problem = info->workgroupProblem(numWarps)) {
      func.emitError() << "tk-assign-layouts: " << *problem;
      return signalPassFailure();
    }
    LayoutChooser chooser{&getContext(), numWarps, *info};
    BlockedRules rules;
    LayoutPropagation propagation(rules);

    // Layouts already written in the IR (the warp-level API) are kept.
    func.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (Attribute layout = getLayout(arg.getType()))
              propagation.setLayout(arg, layout);
      for (Value result : op->getResults())
        if (Attribute layout = getLayout(result.getType()))
          propagation.setLayout(result, layout);
    });
    propagation.run();

    // Roots, first the dots: their layouts are set together so that no dot
    // result is reached by propagation before its own choice.
    func.walk([&](DotOp dot) {
      DotTiling tiling = chooseDotTiling(dot);
      LLVM_DEBUG(llvm::dbgs() << "root " << dot << ": "
                              << stringifyDotTiling(tiling) << "\n");
      propagation.setLayout(dot.getResult(), chooser.forDot(dot, tiling));
    });
    propagation.run();

    // Then the reductions no dot reached: rows across warps, each warp
    // reducing whole rows.
    func.walk([&](ReduceOp reduce) {
      Value src = reduce.getSrcs().front();
      if (propagation.lookup(src))
        return;
      auto shape = cast<RankedTensorType>(src.getType()).getShape();
      std::optional<int64_t> axis;
      if (shape.size() > 1)
        axis = reduce.getAxis();
      Attribute layout = chooser.rowsAcrossWarps(shape, axis);
      for (Value other : reduce.getSrcs())
        propagation.setLayout(other, layout);
      propagation.run();
    });

    // Whatever is left (kernels without roots, values no root reaches).
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (isTileLike(arg.getType()) && !propagation.lookup(arg)) {
              propagation.setLayout(
                  arg, chooser.rowsAcrossWarps(getTileShape(arg.getType()),
                                               std::nullopt));
              propagation.run();
            }
      for (Value result : op->getResults())
        if (isTileLike(result.getType()) && !propagation.lookup(result)) {
          propagation.setLayout(
              result, chooser.rowsAcrossWarps(getTileShape(result.getType()),
                                              std::nullopt));
          propagation.run();
        }
    });

    if (failed(propagation.apply(func, "tk-assign-layouts")))
      return signalPassFailure();

    recordLayoutTarget(func, numWarps, info->warpSize, info->name);
  }
};

} // namespace
