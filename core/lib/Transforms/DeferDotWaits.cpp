//===- DeferDotWaits.cpp - wait for a dot's products where they are read --===//
//
// After tk-pipeline-loads (DESIGN.md §3): a dot on a warpgroup intrinsic
// (wgmma) runs asynchronously, and until now its lowering waited for it at
// once. Where its block reads the result only later, the dot is left
// running (tkw.deferred) and waited for just before its first reader
// (tkw.dot_wait), so that the ops between, another dot's issue or a
// softmax, run while the unit computes: FlashAttention-3's overlap within
// a warpgroup, for attention whose trips issue the next scores before this
// trip's softmax.
//
// Groups of products complete in the order they were issued
// (wgmma.wait_group N waits until at most N run), so the wait before a
// reader of dot D leaves running the deferred dots issued after D that no
// wait has ended yet, and ends D and every dot before it. Dots the wait
// does not count (a loop's own running products, tkw.pending) only make it
// wait longer. A deferred dot whose only reader is the accumulator of the
// next deferred dot needs no wait: the unit chains products on the same
// registers in order.
//
// Only dots that take no scratch are deferred (operands in registers or
// read in place from ring slots): a scratch buffer's life ends at its op
// (tk-allocate-shared-memory), and a running product would read it after.
// The ring slots' reads run until the wait; tk-insert-barriers knows.
//
//===----------------------------------------------------------------------===//

#include "tk/core/DotOperands.h"
#include "tk/core/Passes.h"
#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tk-defer-dot-waits"

namespace tk {
#define GEN_PASS_DEF_TKDEFERDOTWAITS
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;
namespace tkw = tk::warp;

namespace {

/// Whether `dot` runs on a warpgroup intrinsic into an f32 accumulator
/// without scratch, and is not already left running by its loop.
bool canRunOn(tk::DotOp dot) {
  if (dot->hasAttr(tkw::TkwDialect::kPendingAttrName) ||
      dot->hasAttr(tkw::TkwDialect::kDeferredAttrName) ||
      !getElementTypeOrSelf(dot.getType()).isF32())
    return false;
  llvm::Expected<tk::DotOperandPlan> plan = tk::planDotOperands(dot, nullptr);
  if (!plan) {
    llvm::consumeError(plan.takeError());
    return false;
  }
  return plan->intrinsic &&
         plan->intrinsic->scope == tk::MatrixScope::Warpgroup &&
         plan->sharedBytes == 0;
}

/// The op of `block` that `user` is, or that holds it.
Operation *inBlock(Operation *user, Block &block) {
  return block.findAncestorOpInBlock(*user);
}

/// Whether `dot`'s result is read only as the accumulator of `next`.
bool feedsOnlyAccumulatorOf(tk::DotOp dot, Operation *next) {
  auto nextDot = dyn_cast<tk::DotOp>(next);
  return nextDot && dot->hasOneUse() && nextDot.getAcc() == dot.getResult() &&
         nextDot.getA() != dot.getResult() && nextDot.getB() != dot.getResult();
}

/// Defers the eligible dots of `block` and places their waits.
void deferInBlock(Block &block) {
  // The deferred dots in issue order, and whether a wait has ended them.
  llvm::MapVector<Operation *, bool> issued;
  auto pendingAfter = [&](Operation *dot) {
    int64_t running = 0;
    bool after = false;
    for (auto &[other, ended] : issued) {
      if (after && !ended)
        ++running;
      after = after || other == dot;
    }
    return running;
  };
  for (Operation &op : llvm::make_early_inc_range(block)) {
    // The deferred dots `op` reads, the last issued last.
    SmallVector<Operation *> read;
    for (auto &[dot, ended] : issued)
      if (llvm::any_of(dot->getUsers(), [&](Operation *user) {
            return inBlock(user, block) == &op;
          }))
        read.push_back(dot);
    auto dot = dyn_cast<tk::DotOp>(op);
    bool defer = dot && canRunOn(dot) && !dot->use_empty() &&
                 llvm::all_of(dot->getUsers(), [&](Operation *user) {
                   return inBlock(user, block) != nullptr;
                 });
    if (!read.empty()) {
      // A chain on one accumulator: the next product waits for nothing.
      if (defer && read.size() == 1 &&
          feedsOnlyAccumulatorOf(cast<tk::DotOp>(read.front()), dot)) {
        issued.erase(read.front());
      } else {
        int64_t pending = pendingAfter(read.back());
        OpBuilder builder(&op);
        for (Operation *running : read) {
          Value result = running->getResult(0);
          auto wait = tkw::DotWaitOp::create(
              builder, running->getLoc(), result.getType(), result,
              builder.getI64IntegerAttr(pending));
          running->getResult(0).replaceAllUsesExcept(wait.getResult(), wait);
          issued.erase(running);
        }
        // Every dot issued before the last one read has ended too.
        for (auto &[other, ended] : issued)
          if (other->isBeforeInBlock(read.back()))
            ended = true;
      }
    }
    if (!defer)
      continue;
    // Deferring gains nothing where the next op reads the result.
    Operation *firstReader = nullptr;
    for (Operation *user : dot->getUsers()) {
      Operation *reader = inBlock(user, block);
      if (!firstReader || reader->isBeforeInBlock(firstReader))
        firstReader = reader;
    }
    if (firstReader == dot->getNextNode() &&
        !feedsOnlyAccumulatorOf(dot, firstReader))
      continue;
    LLVM_DEBUG(llvm::dbgs() << "deferring " << *dot << "\n");
    dot->setAttr(tkw::TkwDialect::kDeferredAttrName,
                 UnitAttr::get(dot.getContext()));
    issued.insert({dot, false});
  }
}

struct DeferDotWaitsPass
    : public tk::impl::TkDeferDotWaitsBase<DeferDotWaitsPass> {
  void runOnOperation() override {
    getOperation()->walk([](Block *block) { deferInBlock(*block); });
  }
};

} // namespace
