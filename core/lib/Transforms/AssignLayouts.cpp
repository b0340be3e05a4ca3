//===- AssignLayouts.cpp - workload-aware layouts from dot and reduce ----===//
//
// Gives every tile of a kernel a layout in one step (ML-Triton §2.1): the
// root ops (`tk.dot`, then `tk.reduce`) get a layout chosen from the
// workload, the rest follow along def-use chains, and `tkw.convert_layout`
// marks where two layouts meet.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout.h"
#include "tk/core/Passes.h"
#include "tk/core/TargetInfo.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#include <deque>
#include <functional>

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
// Propagation
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

/// How many ops deep a chain computed from scalars is recomputed in another
/// layout rather than converted.
constexpr int kMaxRematerializationDepth = 4;

/// True when `value` is a tile computed from scalars alone, through at most
/// kMaxRematerializationDepth ops free of side effects: computing it again
/// in another layout is cheaper than moving it between warps.
bool isRematerializable(Value value, int depth = 0) {
  Operation *op = value.getDefiningOp();
  if (!op || depth >= kMaxRematerializationDepth || op->getNumResults() != 1 ||
      !isMemoryEffectFree(op) || op->getNumRegions() != 0 ||
      !(isSameLayoutOp(op) || isa<ExpandDimsOp, BroadcastOp>(op)))
    return false;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return isa<DenseElementsAttr>(constant.getValue());
  return llvm::all_of(op->getOperands(), [&](Value operand) {
    return !isTileLike(operand.getType()) ||
           isRematerializable(operand, depth + 1);
  });
}

/// The layout assignment of one function: a layout per tile value, and per
/// use the layout the user wants, which decides where converts go.
class LayoutPropagation {
public:
  /// Gives `value` `layout` unless it has one; queues it for propagation.
  void setLayout(Value value, Attribute layout) {
    if (!layout || !isTileLike(value.getType()) || layouts.count(value))
      return;
    if (getLayoutRank(layout) !=
        static_cast<int64_t>(getTileShape(value.getType()).size()))
      return;
    layouts[value] = layout;
    worklist.push_back(value);
  }

  /// Records that the user of `use` wants `layout`; the value takes it if
  /// nothing else gave it one first. Such backward steps wait until forward
  /// propagation is done, so that a value computed from a root keeps the
  /// root's layout and is converted once, next to the user that wants
  /// another (attention converts p, not qk and every op in between).
  void want(OpOperand &use, Attribute layout) {
    if (!layout || !isTileLike(use.get().getType()))
      return;
    wants.try_emplace(&use, layout);
    if (!layouts.count(use.get()))
      deferred.push_back({use.get(), layout});
  }

  Attribute lookup(Value value) const { return layouts.lookup(value); }
  Attribute lookupWant(OpOperand &use) const { return wants.lookup(&use); }

  /// Propagates every queued layout to a fixed point.
  void run() {
    while (true) {
      while (!worklist.empty()) {
        Value value = worklist.front();
        worklist.pop_front();
        Attribute layout = layouts.lookup(value);
        if (auto result = dyn_cast<OpResult>(value))
          visitResult(result.getOwner(), result.getResultNumber(), layout);
        else
          visitBlockArgument(cast<BlockArgument>(value), layout);
        for (OpOperand &use : value.getUses())
          visitUse(use, layout);
      }
      if (deferred.empty())
        return;
      auto [value, layout] = deferred.front();
      deferred.pop_front();
      setLayout(value, layout);
    }
  }

private:
  /// Backwards: what `op`, whose result `index` has `layout`, wants of its
  /// operands.
  void visitResult(Operation *op, unsigned index, Attribute layout) {
    if (auto dot = dyn_cast<DotOp>(op)) {
      auto parent = dyn_cast<BlockedLayoutAttr>(layout);
      if (!parent)
        return;
      MLIRContext *context = op->getContext();
      want(dot.getAMutable(), DotOperandLayoutAttr::get(context, 0, parent));
      want(dot.getBMutable(), DotOperandLayoutAttr::get(context, 1, parent));
      want(dot.getAccMutable(), parent);
      return;
    }
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      auto src = cast<RankedTensorType>(reduce.getSrcs().front().getType());
      Attribute srcLayout = unsliceLayout(layout, reduce.getAxis(),
                                          src.getDimSize(reduce.getAxis()));
      for (OpOperand &operand : op->getOpOperands())
        want(operand, srcLayout);
      for (Value result : op->getResults())
        setLayout(result, layout);
      return;
    }
    if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
      want(expand.getSrcMutable(),
           SliceLayoutAttr::get(op->getContext(), expand.getAxis(), layout));
      return;
    }
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      want(broadcast.getSrcMutable(), layout);
      return;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      tieLoopValue(loop, index, layout);
      return;
    }
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()})
        if (!region->empty())
          want(region->front().getTerminator()->getOpOperand(index), layout);
      return;
    }
    if (!isSameLayoutOp(op))
      return;
    for (Value result : op->getResults())
      setLayout(result, layout);
    for (OpOperand &operand : op->getOpOperands())
      want(operand, layout);
  }

  /// An iteration argument of an scf.for shares its layout with the loop's
  /// init value, result and yielded value.
  void visitBlockArgument(BlockArgument arg, Attribute layout) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!loop || arg.getArgNumber() < loop.getNumInductionVars())
      return;
    tieLoopValue(loop, arg.getArgNumber() - loop.getNumInductionVars(), layout);
  }

  void tieLoopValue(scf::ForOp loop, unsigned index, Attribute layout) {
    setLayout(loop.getRegionIterArgs()[index], layout);
    setLayout(loop.getResult(index), layout);
    want(loop.getInitArgsMutable()[index], layout);
    want(loop.getBody()->getTerminator()->getOpOperand(index), layout);
  }

  /// Forwards: what the user of `use`, whose operand has `layout`, gives
  /// its results.
  void visitUse(OpOperand &use, Attribute layout) {
    Operation *user = use.getOwner();
    // A dot's layout is its root's choice, a convert is a boundary.
    if (isa<DotOp, ConvertLayoutOp>(user))
      return;
    if (auto reduce = dyn_cast<ReduceOp>(user)) {
      if (reduce.getAxis() >= getLayoutRank(layout))
        return;
      for (Value result : user->getResults())
        setLayout(result, SliceLayoutAttr::get(user->getContext(),
                                               reduce.getAxis(), layout));
      return;
    }
    if (auto expand = dyn_cast<ExpandDimsOp>(user)) {
      auto slice = dyn_cast<SliceLayoutAttr>(layout);
      if (slice && slice.getDim() == expand.getAxis())
        setLayout(expand.getResult(), slice.getParent());
      else
        setLayout(expand.getResult(),
                  insertWholeDim(layout, expand.getAxis(), 1));
      return;
    }
    if (auto broadcast = dyn_cast<BroadcastOp>(user)) {
      setLayout(broadcast.getResult(),
                broadcastLayout(layout, broadcast.getType().getShape()));
      return;
    }
    if (auto loop = dyn_cast<scf::ForOp>(user)) {
      if (use.getOperandNumber() >= loop.getNumControlOperands())
        tieLoopValue(loop,
                     use.getOperandNumber() - loop.getNumControlOperands(),
                     layout);
      return;
    }
    if (auto yield = dyn_cast<scf::YieldOp>(user)) {
      Operation *parent = yield->getParentOp();
      if (isa<scf::ForOp, scf::IfOp>(parent))
        setLayout(parent->getResult(use.getOperandNumber()), layout);
      return;
    }
    if (!isSameLayoutOp(user))
      return;
    for (Value result : user->getResults())
      setLayout(result, layout);
    // Ops without tile results (stores) take the layout of the first
    // operand that reaches them.
    for (OpOperand &operand : user->getOpOperands())
      want(operand, layout);
  }

  llvm::MapVector<Value, Attribute> layouts;
  DenseMap<OpOperand *, Attribute> wants;
  std::deque<Value> worklist;
  std::deque<std::pair<Value, Attribute>> deferred;
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
    LayoutPropagation propagation;

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

    if (failed(apply(func, propagation)))
      return signalPassFailure();

    Builder builder(&getContext());
    func->setAttr(TkwDialect::kNumWarpsAttrName,
                  builder.getI32IntegerAttr(numWarps));
    func->setAttr(TkwDialect::kThreadsPerWarpAttrName,
                  builder.getI32IntegerAttr(info->warpSize));
    func->setAttr(TkwDialect::kTargetAttrName,
                  builder.getStringAttr(info->name));
  }

  /// Writes the layouts into the types and inserts the converts.
  LogicalResult apply(FuncOp func, LayoutPropagation &propagation) {
    // Types first, so that converts are built between final types.
    func.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (Attribute layout = propagation.lookup(arg))
              arg.setType(withLayout(arg.getType(), layout));
      for (Value result : op->getResults())
        if (Attribute layout = propagation.lookup(result))
          result.setType(withLayout(result.getType(), layout));
      // A constant's value carries its type, layout included.
      if (auto constant = dyn_cast<arith::ConstantOp>(op))
        if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
          if (dense.getType() != constant.getType())
            constant.setValueAttr(
                dense.reshape(cast<ShapedType>(constant.getType())));
    });

    // One convert per (value, layout), right after the value's definition,
    // so that every use it dominates can share it and loops do not convert
    // loop-invariant values on every iteration.
    DenseMap<std::pair<Value, Attribute>, Value> converts;
    std::function<Value(Value, Attribute, int)> convert =
        [&](Value value, Attribute layout, int depth) -> Value {
      auto &slot = converts[{value, layout}];
      if (slot)
        return slot;
      OpBuilder builder(value.getContext());
      Operation *def = value.getDefiningOp();
      if (def)
        builder.setInsertionPointAfter(def);
      else
        builder.setInsertionPointToStart(cast<BlockArgument>(value).getOwner());
      // Tiles computed from scalars alone (ranges, splats, constants and
      // short arithmetic on them) are cheaper to compute again in the
      // wanted layout than to move between warps.
      if (isRematerializable(value, depth)) {
        IRMapping mapping;
        // expand_dims takes the slice of its result's layout; the other
        // rematerializable ops take their result's layout.
        Attribute operandLayout = layout;
        if (auto expand = dyn_cast<ExpandDimsOp>(def))
          operandLayout =
              SliceLayoutAttr::get(def->getContext(), expand.getAxis(), layout);
        for (Value operand : def->getOperands())
          if (isTileLike(operand.getType()))
            mapping.map(operand, convert(operand, operandLayout, depth + 1));
        Operation *clone = builder.clone(*def, mapping);
        for (OpResult result : clone->getResults())
          result.setType(withLayout(result.getType(), layout));
        if (auto constant = dyn_cast<arith::ConstantOp>(clone))
          constant.setValueAttr(
              cast<DenseElementsAttr>(constant.getValue())
                  .reshape(cast<ShapedType>(constant.getType())));
        Value remade =
            clone->getResult(cast<OpResult>(value).getResultNumber());
        converts[{value, layout}] = remade;
        return remade;
      }
      Value moved = ConvertLayoutOp::create(
          builder, value.getLoc(), withLayout(value.getType(), layout), value);
      converts[{value, layout}] = moved;
      return moved;
    };

    WalkResult result = func.walk([&](Operation *op) -> WalkResult {
      if (isa<ConvertLayoutOp>(op))
        return WalkResult::advance();
      for (OpOperand &use : op->getOpOperands()) {
        Attribute wanted = propagation.lookupWant(use);
        Value value = use.get();
        if (!wanted || getLayout(value.getType()) == wanted)
          continue;
        if (isa<RankedTensorType>(value.getType())) {
          use.set(convert(value, wanted, 0));
          continue;
        }
        // A block pointer cannot change layout: a load through it yields
        // the pointer's layout and converts its result instead.
        auto load = dyn_cast<LoadOp>(op);
        if (!load) {
          op->emitError() << "tk-assign-layouts: a block pointer is used "
                             "with two layouts ("
                          << getLayout(value.getType()) << " and " << wanted
                          << ")";
          return WalkResult::interrupt();
        }
        Type resultType = load.getType();
        load.getResult().setType(
            withLayout(resultType, getLayout(value.getType())));
        OpBuilder builder(op->getContext());
        builder.setInsertionPointAfter(op);
        auto moved = ConvertLayoutOp::create(builder, op->getLoc(), resultType,
                                             load.getResult());
        load.getResult().replaceAllUsesExcept(moved, moved);
      }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }
};

} // namespace
