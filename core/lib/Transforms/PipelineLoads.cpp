//===- PipelineLoads.cpp - a loop's dot operands loaded one trip ahead ----===//
//
// Pass 5 of the register pipeline (DESIGN.md §3), its first form: the
// loads that feed a loop's dots are issued one trip early and carried in
// registers, so that global memory's latency overlaps the products. (The
// rings of num_stages - 1 trips in shared memory, filled by asynchronous
// copies, are its next form.)
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout.h"
#include "tk/core/Passes.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace tk {
#define GEN_PASS_DEF_TKPIPELINELOADS
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;

namespace {

/// What a thread may carry ahead per loop, in 32-bit registers.
constexpr int64_t kAheadRegisters = 64;

/// The 32-bit registers a thread holds of `type` (a tile in a #tkw.linear
/// layout); without a layout, the whole tile.
int64_t registersOf(Type type) {
  auto tile = cast<RankedTensorType>(type);
  int64_t elements = tile.getNumElements();
  if (auto layout =
          dyn_cast_or_null<tk::warp::LinearLayoutAttr>(tile.getEncoding()))
    elements = layout.getNumRegisters();
  int64_t bits = tile.getElementType().isIntOrFloat()
                     ? tile.getElementType().getIntOrFloatBitWidth()
                     : 64;
  return llvm::divideCeil(elements * bits, 32);
}

/// True when `value` reaches operand a or b of a tk.dot in `body`,
/// through ops of `body`.
bool feedsDot(Value value, Block *body) {
  SmallVector<Value> worklist = {value};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (!seen.insert(current).second)
      continue;
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() != body)
        continue;
      if (auto dot = dyn_cast<tk::DotOp>(user))
        if (use.get() == dot.getA() || use.get() == dot.getB())
          return true;
      if (user->getNumRegions() == 0)
        llvm::append_range(worklist, user->getResults());
    }
  }
  return false;
}

/// The ops of `body` that `roots` are computed from, in body order; fails
/// where one has side effects or regions (it cannot run a trip early).
FailureOr<SmallVector<Operation *>> backwardSlice(ValueRange roots,
                                                  Block *body) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist(roots.begin(), roots.end());
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != body || slice.contains(def))
      continue;
    if (def->getNumRegions() != 0 || !isMemoryEffectFree(def))
      return failure();
    slice.insert(def);
    llvm::append_range(worklist, def->getOperands());
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// Clones `load` and the ops it is computed from (`slice`) at `b`, with
/// `mapping` giving the loop's block arguments, and its mask ANDed with
/// `inRange` (an i1: the trip it loads for runs).
Value cloneLoad(OpBuilder &b, tk::LoadOp load, ArrayRef<Operation *> slice,
                IRMapping &mapping, Value inRange) {
  for (Operation *op : slice)
    b.clone(*op, mapping);
  auto tile = cast<RankedTensorType>(load.getType());
  auto maskType =
      RankedTensorType::get(tile.getShape(), b.getI1Type(), tile.getEncoding());
  Value mask = tk::SplatOp::create(b, load.getLoc(), maskType, inRange);
  if (Value old = load.getMask())
    mask = arith::AndIOp::create(b, load.getLoc(), mapping.lookupOrDefault(old),
                                 mask);
  auto clone = cast<tk::LoadOp>(b.clone(*load, mapping));
  clone.getMaskMutable().assign(mask);
  return clone.getResult();
}

/// `a < b` for the loop's induction type.
Value lessThan(OpBuilder &b, Location loc, Value a, Value bound) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, a, bound);
}

/// Whether `op` reads a block argument of `body` that `known` does not map.
bool readsUnknownArgument(Operation *op, Block *body, const IRMapping &known) {
  return llvm::any_of(op->getOperands(), [&](Value operand) {
    auto arg = dyn_cast<BlockArgument>(operand);
    return arg && arg.getOwner() == body && !known.contains(arg);
  });
}

void pipeline(scf::ForOp loop) {
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  Location loc = loop.getLoc();

  // Each iteration argument's value on the next trip, where it can be
  // computed at the start of this one: what the trip yields, if that is
  // defined outside the body, or computed without side effects from this
  // trip's arguments.
  OpBuilder start = OpBuilder::atBlockBegin(body);
  IRMapping next;
  Value nextIv =
      arith::AddIOp::create(start, loc, loop.getInductionVar(), loop.getStep());
  next.map(loop.getInductionVar(), nextIv);
  llvm::DenseMap<Value, SmallVector<Operation *>> yieldSlices;
  for (auto [arg, yielded] :
       llvm::zip_equal(loop.getRegionIterArgs(), yield.getOperands())) {
    Operation *def = yielded.getDefiningOp();
    if (!def || def->getBlock() != body) {
      next.map(arg, yielded);
      continue;
    }
    FailureOr<SmallVector<Operation *>> slice =
        backwardSlice(ValueRange{yielded}, body);
    if (failed(slice))
      continue;
    yieldSlices[arg] = std::move(*slice);
    next.map(arg, yielded); // replaced by the clone below
  }

  struct Candidate {
    tk::LoadOp load;
    SmallVector<Operation *> slice;
  };
  SmallVector<Candidate> candidates;
  int64_t registers = 0;
  for (Operation &op : body->without_terminator()) {
    auto load = dyn_cast<tk::LoadOp>(&op);
    if (!load || !isa<RankedTensorType>(load.getType()) ||
        !isa<RankedTensorType>(load.getPtr().getType()) ||
        load.getIsVolatile() || !feedsDot(load.getResult(), body))
      continue;
    FailureOr<SmallVector<Operation *>> slice =
        backwardSlice(load->getOperands(), body);
    if (failed(slice) || readsUnknownArgument(load, body, next) ||
        llvm::any_of(*slice, [&](Operation *op) {
          return readsUnknownArgument(op, body, next);
        }))
      continue;
    int64_t needed = registersOf(load.getType());
    if (registers + needed > kAheadRegisters)
      continue;
    registers += needed;
    candidates.push_back({load, std::move(*slice)});
  }
  if (candidates.empty()) {
    nextIv.getDefiningOp()->erase();
    return;
  }

  // The first trip's tiles, before the loop.
  OpBuilder before(loop);
  IRMapping first;
  first.map(loop.getInductionVar(), loop.getLowerBound());
  for (auto [arg, init] :
       llvm::zip_equal(loop.getRegionIterArgs(), loop.getInitArgs()))
    first.map(arg, init);
  Value runs =
      lessThan(before, loc, loop.getLowerBound(), loop.getUpperBound());
  SmallVector<Value> inits;
  for (Candidate &candidate : candidates)
    inits.push_back(
        cloneLoad(before, candidate.load, candidate.slice, first, runs));

  // The next trip's tiles, at the start of this one.
  start.setInsertionPointAfter(nextIv.getDefiningOp());
  // Only the arguments the chosen loads read, each computed once.
  llvm::SetVector<Value> read;
  for (Candidate &candidate : candidates) {
    SmallVector<Operation *> ops(candidate.slice);
    ops.push_back(candidate.load);
    for (Operation *op : ops)
      for (Value operand : op->getOperands())
        if (yieldSlices.count(operand))
          read.insert(operand);
  }
  IRMapping here;
  for (Value arg : read) {
    for (Operation *op : yieldSlices[arg])
      if (!here.contains(op->getResult(0)))
        start.clone(*op, here);
    next.map(arg, here.lookupOrDefault(next.lookup(arg)));
  }
  Value more = lessThan(start, loc, nextIv, loop.getUpperBound());
  SmallVector<Value> ahead;
  for (Candidate &candidate : candidates)
    ahead.push_back(
        cloneLoad(start, candidate.load, candidate.slice, next, more));

  IRRewriter rewriter(loop.getContext());
  rewriter.setInsertionPoint(loop);
  FailureOr<LoopLikeOpInterface> replaced = loop.replaceWithAdditionalYields(
      rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) { return ahead; });
  if (failed(replaced))
    return;
  // This trip's tiles are the carried ones.
  auto newLoop = cast<scf::ForOp>(replaced->getOperation());
  ArrayRef<BlockArgument> args = newLoop.getRegionIterArgs();
  for (auto [index, candidate] : llvm::enumerate(candidates))
    rewriter.replaceOp(candidate.load,
                       args[args.size() - candidates.size() + index]);
}

struct PipelineLoadsPass
    : public tk::impl::TkPipelineLoadsBase<PipelineLoadsPass> {
  using TkPipelineLoadsBase::TkPipelineLoadsBase;

  void runOnOperation() override {
    if (numStages < 2)
      return;
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      pipeline(loop);
  }
};

} // namespace
