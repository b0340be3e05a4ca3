//===- LayoutPropagation.cpp - layouts along def-use chains ---------------===//

#include "LayoutPropagation.h"

#include "tk/core/Layout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <functional>

using namespace mlir;
using namespace tk;
using namespace tk::warp;

LayoutRules::~LayoutRules() = default;

namespace {

/// How many ops deep a chain computed from scalars is recomputed in another
/// layout rather than converted.
constexpr int kMaxRematerializationDepth = 4;

/// True when `value` is a tile computed from scalars alone, through at most
/// kMaxRematerializationDepth ops free of side effects: computing it again
/// in another layout is cheaper than moving it between threads.
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

} // namespace

void LayoutPropagation::setLayout(Value value, Attribute layout) {
  if (!layout || !isTileLike(value.getType()) || layouts.count(value))
    return;
  if (!rules.fits(layout, getTileShape(value.getType())))
    return;
  layouts[value] = layout;
  worklist.push_back(value);
}

void LayoutPropagation::want(OpOperand &use, Attribute layout) {
  if (!layout || !isTileLike(use.get().getType()))
    return;
  if (!rules.fits(layout, getTileShape(use.get().getType())))
    return;
  wants.try_emplace(&use, layout);
  if (!layouts.count(use.get()))
    deferred.push_back({use.get(), layout});
}

void LayoutPropagation::run() {
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

/// Backwards: what `op`, whose result `index` has `layout`, wants of its
/// operands.
void LayoutPropagation::visitResult(Operation *op, unsigned index,
                                    Attribute layout) {
  if (auto dot = dyn_cast<DotOp>(op)) {
    want(dot.getAMutable(), rules.dotOperand(layout, 0));
    want(dot.getBMutable(), rules.dotOperand(layout, 1));
    want(dot.getAccMutable(), layout);
    return;
  }
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    auto src = cast<RankedTensorType>(reduce.getSrcs().front().getType());
    Attribute srcLayout = rules.reduceSource(layout, reduce.getAxis(),
                                             src.getDimSize(reduce.getAxis()));
    for (OpOperand &operand : op->getOpOperands())
      want(operand, srcLayout);
    for (Value result : op->getResults())
      setLayout(result, layout);
    return;
  }
  if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
    want(expand.getSrcMutable(),
         rules.expandDimsSource(layout, expand.getAxis()));
    return;
  }
  if (auto trans = dyn_cast<TransOp>(op)) {
    want(trans.getSrcMutable(), rules.transSource(layout, trans.getOrder()));
    return;
  }
  if (auto join = dyn_cast<JoinOp>(op)) {
    Attribute source = rules.joinSource(layout);
    want(join.getLhsMutable(), source);
    want(join.getRhsMutable(), source);
    return;
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    want(reshape.getSrcMutable(),
         rules.reshapeSource(
             layout,
             cast<RankedTensorType>(reshape.getSrc().getType()).getShape()));
    return;
  }
  if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    want(broadcast.getSrcMutable(),
         rules.broadcastSource(
             layout,
             cast<RankedTensorType>(broadcast.getSrc().getType()).getShape()));
    return;
  }
  if (isa<scf::ForOp>(op)) {
    tieLoopValue(op, index, layout);
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
void LayoutPropagation::visitBlockArgument(BlockArgument arg,
                                           Attribute layout) {
  auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
  if (!loop || arg.getArgNumber() < loop.getNumInductionVars())
    return;
  tieLoopValue(loop, arg.getArgNumber() - loop.getNumInductionVars(), layout);
}

void LayoutPropagation::tieLoopValue(Operation *op, unsigned index,
                                     Attribute layout) {
  auto loop = cast<scf::ForOp>(op);
  setLayout(loop.getRegionIterArgs()[index], layout);
  setLayout(loop.getResult(index), layout);
  want(loop.getInitArgsMutable()[index], layout);
  want(loop.getBody()->getTerminator()->getOpOperand(index), layout);
}

/// Forwards: what the user of `use`, whose operand has `layout`, gives its
/// results.
void LayoutPropagation::visitUse(OpOperand &use, Attribute layout) {
  Operation *user = use.getOwner();
  // A dot's layout is its root's choice, a convert is a boundary.
  if (isa<DotOp, ConvertLayoutOp>(user))
    return;
  if (auto reduce = dyn_cast<ReduceOp>(user)) {
    Attribute result = rules.reduceResult(layout, reduce.getAxis());
    for (Value value : user->getResults())
      setLayout(value, result);
    return;
  }
  if (auto expand = dyn_cast<ExpandDimsOp>(user)) {
    setLayout(expand.getResult(),
              rules.expandDimsResult(layout, expand.getAxis()));
    return;
  }
  if (auto trans = dyn_cast<TransOp>(user)) {
    setLayout(trans.getResult(), rules.transResult(layout, trans.getOrder()));
    return;
  }
  if (auto join = dyn_cast<JoinOp>(user)) {
    setLayout(join.getResult(), rules.joinResult(layout));
    return;
  }
  if (auto reshape = dyn_cast<ReshapeOp>(user)) {
    setLayout(reshape.getResult(),
              rules.reshapeResult(layout, reshape.getType().getShape()));
    return;
  }
  if (auto broadcast = dyn_cast<BroadcastOp>(user)) {
    setLayout(broadcast.getResult(),
              rules.broadcastResult(layout, broadcast.getType().getShape()));
    return;
  }
  if (auto loop = dyn_cast<scf::ForOp>(user)) {
    if (use.getOperandNumber() >= loop.getNumControlOperands())
      tieLoopValue(loop, use.getOperandNumber() - loop.getNumControlOperands(),
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
  // Ops without tile results (stores) take the layout of the first operand
  // that reaches them.
  for (OpOperand &operand : user->getOpOperands())
    want(operand, layout);
}

LogicalResult LayoutPropagation::apply(FuncOp func, StringRef passName) {
  // Types first, so that converts are built between final types.
  func.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (Attribute layout = lookup(arg))
            arg.setType(withLayout(arg.getType(), layout));
    for (Value result : op->getResults())
      if (Attribute layout = lookup(result))
        result.setType(withLayout(result.getType(), layout));
    // A constant's value carries its type, layout included.
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
        if (dense.getType() != constant.getType())
          constant.setValueAttr(
              dense.reshape(cast<ShapedType>(constant.getType())));
  });

  // One convert per (value, layout), right after the value's definition, so
  // that every use it dominates can share it and loops do not convert
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
    // Tiles computed from scalars alone (ranges, splats, constants and short
    // arithmetic on them) are cheaper to compute again in the wanted layout
    // than to move between threads. Each operand takes the layout the rules
    // give the op's operands for that result layout.
    if (isRematerializable(value, depth)) {
      IRMapping mapping;
      for (Value operand : def->getOperands()) {
        if (!isTileLike(operand.getType()))
          continue;
        Attribute operandLayout = layout;
        if (auto expand = dyn_cast<ExpandDimsOp>(def))
          operandLayout = rules.expandDimsSource(layout, expand.getAxis());
        else if (auto broadcast = dyn_cast<BroadcastOp>(def))
          operandLayout = rules.broadcastSource(
              layout, getTileShape(broadcast.getSrc().getType()));
        if (!operandLayout)
          return ConvertLayoutOp::create(builder, value.getLoc(),
                                         withLayout(value.getType(), layout),
                                         value)
              .getResult();
        mapping.map(operand, convert(operand, operandLayout, depth + 1));
      }
      Operation *clone = builder.clone(*def, mapping);
      for (OpResult result : clone->getResults())
        result.setType(withLayout(result.getType(), layout));
      if (auto constant = dyn_cast<arith::ConstantOp>(clone))
        constant.setValueAttr(
            cast<DenseElementsAttr>(constant.getValue())
                .reshape(cast<ShapedType>(constant.getType())));
      Value remade = clone->getResult(cast<OpResult>(value).getResultNumber());
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
      Attribute wanted = lookupWant(use);
      Value value = use.get();
      if (!wanted || getLayout(value.getType()) == wanted)
        continue;
      if (isa<RankedTensorType>(value.getType())) {
        use.set(convert(value, wanted, 0));
        continue;
      }
      // A block pointer cannot change layout: a load through it yields the
      // pointer's layout and converts its result instead.
      auto load = dyn_cast<LoadOp>(op);
      if (!load) {
        op->emitError() << passName
                        << ": a block pointer is used with two layouts ("
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
