//===- RemoveDeadLoopValues.cpp - loop-carried values nothing reads -------===//
//
// tk-remove-dead-loop-values: an `scf.for` iteration argument is dead when
// its result has no use and all that the argument reaches inside the body
// (through ops without memory effects or regions) reaches the terminator
// only as the argument's own next value. Such a value is a cycle that only
// advances itself: a pointer of a tile whose loads read only the first of
// each run, advanced by the loop and by the loops inside it. The pass
// yields the argument unchanged, erases what computed its next value, and
// leaves the argument to the canonicalizer's forwarded-iteration-argument
// folding.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace tk {
#define GEN_PASS_DEF_TKREMOVEDEADLOOPVALUES
#include "tk/core/Conversion/Passes.h.inc"
} // namespace tk

using namespace mlir;

namespace {

/// The ops of `loop`'s body that iteration argument `index` reaches, in
/// body order, when all they compute is the argument's own next value
/// (whether the loop's result is used is the caller's question); nothing
/// otherwise. A loop nested in the body passes the argument on where it
/// carries it the same way: from its init to its result.
std::optional<SmallVector<Operation *>> deadCycle(scf::ForOp loop,
                                                  unsigned index) {
  Block *body = loop.getBody();
  Operation *yield = body->getTerminator();
  llvm::SetVector<Operation *> reached;
  SmallVector<Value> worklist = {loop.getRegionIterArgs()[index]};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user == yield) {
        if (use.getOperandNumber() != index)
          return std::nullopt;
        continue;
      }
      if (user->getBlock() != body)
        return std::nullopt;
      if (auto inner = dyn_cast<scf::ForOp>(user)) {
        unsigned controls = inner.getNumControlOperands();
        if (use.getOperandNumber() < controls ||
            !deadCycle(inner, use.getOperandNumber() - controls))
          return std::nullopt;
        if (reached.insert(user))
          worklist.push_back(
              inner.getResult(use.getOperandNumber() - controls));
        continue;
      }
      if (user->getNumRegions() != 0 || !isMemoryEffectFree(user))
        return std::nullopt;
      if (reached.insert(user))
        llvm::append_range(worklist, user->getResults());
    }
  }
  // The next value must come from the cycle, not from elsewhere: another
  // value yielded here is live through the argument's own uses.
  Value next = yield->getOperand(index);
  if (next != loop.getRegionIterArgs()[index] &&
      !reached.contains(next.getDefiningOp()))
    return std::nullopt;
  SmallVector<Operation *> ops(reached.begin(), reached.end());
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ops;
}

/// Cuts every dead cycle of `loop`; true when it cut one.
bool cutDeadCycles(scf::ForOp loop) {
  bool changed = false;
  Operation *yield = loop.getBody()->getTerminator();
  for (unsigned index = 0; index < loop.getNumRegionIterArgs(); ++index) {
    BlockArgument argument = loop.getRegionIterArgs()[index];
    if (!loop.getResult(index).use_empty() ||
        yield->getOperand(index) == argument)
      continue;
    std::optional<SmallVector<Operation *>> cycle = deadCycle(loop, index);
    if (!cycle)
      continue;
    yield->setOperand(index, argument);
    // A nested loop stays: its own result is now unused, which the next
    // round cuts.
    for (Operation *op : llvm::reverse(*cycle))
      if (op->use_empty() && op->getNumRegions() == 0)
        op->erase();
    changed = true;
  }
  return changed;
}

struct RemoveDeadLoopValuesPass
    : tk::impl::TkRemoveDeadLoopValuesBase<RemoveDeadLoopValuesPass> {
  void runOnOperation() override {
    // Post-order visits inner loops first; an outer loop's value can die
    // once an inner loop stops reading it, so repeat until nothing changes.
    bool changed = true;
    while (changed) {
      changed = false;
      getOperation()->walk(
          [&](scf::ForOp loop) { changed |= cutDeadCycles(loop); });
    }
  }
};

} // namespace
