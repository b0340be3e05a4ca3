//===- TileBuffers.cpp - which tiles of a kernel get a buffer -------------===//
//
// TileBuffers.h: the element-wise tiles that get a buffer where they are
// defined, and the pointer tiles a loop walks by one scalar offset.
//
//===----------------------------------------------------------------------===//

#include "TileBuffers.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace mlir::tk_to_loops {

/// A tile is cheap when it is computed from scalars with integer arithmetic
/// and shape ops only: recomputing it anywhere costs a few instructions and
/// reads no memory, so it is never stored.
bool TileBuffers::isCheap(Value value) {
  auto it = cheap.find(value);
  if (it != cheap.end())
    return it->second;
  bool result = false;
  Operation *op = value.getDefiningOp();
  if (op && isElementwiseLike(op) && !isa<tk::LoadOp, tk::FpToFpOp>(op) &&
      !isa_and_present<math::MathDialect>(op->getDialect())) {
    if (isa<tk::SplatOp, tk::MakeRangeOp, arith::ConstantOp>(op)) {
      result = true;
    } else {
      Type elem = getElementTypeOrSelf(value.getType());
      bool integerLike = isa<IntegerType, tk::PtrType>(elem);
      result =
          integerLike ||
          isa<tk::BroadcastOp, tk::ExpandDimsOp, tk::ReshapeOp, tk::TransOp>(
              op);
      for (Value operand : op->getOperands())
        if (isTile(operand.getType()))
          result = result && isCheap(operand);
    }
  }
  cheap[value] = result;
  return result;
}

void TileBuffers::analyze() {
  if (analyzed)
    return;
  analyzed = true;
  analyzeRegion(source.getBody());
}

void TileBuffers::analyzeRegion(Region &region) {
  for (Block &block : region)
    for (Operation &op : llvm::reverse(block.getOperations()))
      analyzeOp(&op);
}

void TileBuffers::analyzeOp(Operation *op) {
  for (Region &region : op->getRegions())
    analyzeRegion(region);
  if (!isElementwiseLike(op))
    return;
  Value value = op->getResult(0);
  if (isCheap(value))
    return;
  llvm::SmallPtrSet<Operation *, 4> users;
  for (Operation *user : value.getUsers())
    users.insert(user);
  if (users.empty())
    return;
  bool store = users.size() > 1;
  for (Operation *user : users) {
    // Recomputing inside a loop body or branch would repeat the work (and
    // any load) on every trip; replicating through a broadcast would too.
    if (user->getBlock() != op->getBlock() || isa<tk::BroadcastOp>(user))
      store = true;
  }
  if (!store && isa<tk::LoadOp>(op)) {
    // Follow the single-user chain to the op that will evaluate the load.
    // A write on the way would observe memory in another order than the
    // program's, so the load is done here instead. The evaluator itself may
    // be a store when fusing is allowed: every lane still loads before it
    // stores.
    Operation *evaluator = *users.begin();
    while (isElementwiseLike(evaluator) && !materialized.count(evaluator) &&
           !evaluator->getResult(0).use_empty())
      evaluator = *evaluator->getResult(0).getUsers().begin();
    bool fusesIntoStore = isa<tk::StoreOp>(evaluator) && fuseLoadsIntoStores;
    for (Operation *it = op->getNextNode(); it; it = it->getNextNode()) {
      if (it == evaluator && fusesIntoStore)
        break;
      if (mayWriteMemory(it)) {
        store = true;
        break;
      }
      if (it == evaluator)
        break;
    }
  }
  if (store)
    materialized.insert(op);
}

Value TileBuffers::pointerWalkStep(scf::ForOp loop, unsigned i) {
  Value arg = loop.getRegionIterArgs()[i];
  Value init = loop.getInitArgs()[i];
  if (!isTile(arg.getType()) ||
      !isa<tk::PtrType>(getElementTypeOrSelf(arg.getType())))
    return {};
  auto advance = loop.getYieldedValues()[i].getDefiningOp<tk::AddPtrOp>();
  if (!advance || advance.getPtr() != arg ||
      advance->getBlock() != loop.getBody())
    return {};
  auto splat = advance.getOffset().getDefiningOp<tk::SplatOp>();
  if (!splat)
    return {};
  // The start is read on every trip: it must not be a load or anything
  // else that would read memory again, nor a buffer the loop rewrites. It
  // is another loop's walk (an enclosing loop's argument, an earlier
  // loop's result), a tile with storage (a loop-carried tile, a stored
  // one, a dot's, reduction's or scan's result), or cheap.
  auto walkOfLoop = [&](Operation *owner, unsigned j) {
    auto other = dyn_cast_if_present<scf::ForOp>(owner);
    return other && j < other.getNumRegionIterArgs() &&
           pointerWalkStep(other, j);
  };
  bool walked = false, stored = false;
  if (auto start = dyn_cast<BlockArgument>(init)) {
    Operation *owner = start.getOwner()->getParentOp();
    if (auto outer = dyn_cast_if_present<scf::ForOp>(owner);
        outer && start != outer.getInductionVar()) {
      walked = walkOfLoop(outer, start.getArgNumber() - 1);
      stored = !walked;
    }
  } else if (Operation *def = init.getDefiningOp(); isa<scf::ForOp>(def)) {
    walked = walkOfLoop(def, cast<OpResult>(init).getResultNumber());
    stored = !walked;
  } else {
    auto constant = dyn_cast<arith::ConstantOp>(def);
    stored = materialized.count(def) ||
             isa<tk::DotOp, tk::ReduceOp, tk::ScanOp>(def) ||
             (constant && !isa<SplatElementsAttr>(constant.getValue()));
  }
  bool steadyStart =
      walked ||
      (stored &&
       !llvm::is_contained(loop.getInitArgs().drop_front(i + 1), init)) ||
      isCheap(init);
  return steadyStart ? splat.getSrc() : Value();
}

} // namespace mlir::tk_to_loops
