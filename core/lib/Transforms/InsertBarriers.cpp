//===- InsertBarriers.cpp - barriers where shared memory is reused --------===//
//
// Pass 7 of the register pipeline (DESIGN.md §3): a gpu.barrier before an
// op whose workgroup memory (its `tkw.scratch`, or its ring's slot)
// overlaps memory an earlier op wrote since the last barrier, or that it
// writes and an earlier op read, following scf control flow to a fixed
// point. Triton's Membar analysis, on tk's buffers; two slots of one ring
// are apart where their indices provably differ in one pass over the code.
//
// A dot marked tkw.pending reads its ring slots until a later wait (its own
// next trip, or the tkw.dot_wait after the loop), one marked tkw.deferred
// until a tkw.dot_wait that leaves nothing running: a barrier does not end
// those reads, so a write they may overlap is an error, not a barrier. The
// slot such a read leaves running across a loop's back edge is known in the
// next trip's terms, (read - c) % size, where the loop steps its slot by c.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Passes.h"
#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#include <limits>

#define DEBUG_TYPE "tk-insert-barriers"

namespace tk {
#define GEN_PASS_DEF_TKINSERTBARRIERS
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;
using namespace tk::warp;

namespace {

/// Bytes [begin, end) of workgroup memory, and for a ring's slot the i32
/// that picks it (null for a whole buffer), `lag` trips ago: the slot is
/// then (slot - lag) % lagModulus.
struct Use {
  std::pair<int64_t, int64_t> range;
  Value slot;
  int64_t lag = 0, lagModulus = 0;

  auto key() const {
    return std::make_tuple(range, slot.getAsOpaquePointer(), lag, lagModulus);
  }
  bool operator<(const Use &other) const { return key() < other.key(); }
  bool operator==(const Use &other) const { return key() == other.key(); }
};

/// Sorted and without repeats, so that two sets compare equal.
using Uses = SmallVector<Use>;

Uses unite(const Uses &a, const Uses &b) {
  Uses result(a);
  result.append(b.begin(), b.end());
  llvm::sort(result);
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

/// An integer constant, where `value` is one.
std::optional<int64_t> constantOf(Value value) {
  APInt constant;
  if (value && matchPattern(value, m_ConstantInt(&constant)))
    return constant.getSExtValue();
  return std::nullopt;
}

/// Whether `value` is always in [0, size): a constant there, a remainder
/// by at most `size`, or a loop's iteration argument that starts there and
/// is yielded as such a remainder.
bool isBelow(Value value, int64_t size) {
  auto remainderBelow = [&](Value v) {
    auto rem = v.getDefiningOp<arith::RemUIOp>();
    std::optional<int64_t> divisor =
        rem ? constantOf(rem.getRhs()) : std::nullopt;
    return divisor && *divisor > 0 && *divisor <= size;
  };
  if (std::optional<int64_t> constant = constantOf(value))
    return *constant >= 0 && *constant < size;
  if (remainderBelow(value))
    return true;
  auto arg = dyn_cast<BlockArgument>(value);
  auto loop =
      arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()) : nullptr;
  if (!loop || arg.getArgNumber() < loop.getNumInductionVars())
    return false;
  unsigned index = arg.getArgNumber() - loop.getNumInductionVars();
  std::optional<int64_t> init = constantOf(loop.getInitArgs()[index]);
  return init && *init >= 0 && *init < size &&
         remainderBelow(loop.getYieldedValues()[index]);
}

/// `value` as (base + c) % size: base, c and size (size > 0).
std::optional<std::tuple<Value, int64_t, int64_t>> matchStep(Value value) {
  auto rem = value.getDefiningOp<arith::RemUIOp>();
  auto add = rem ? rem.getLhs().getDefiningOp<arith::AddIOp>() : nullptr;
  std::optional<int64_t> size = rem ? constantOf(rem.getRhs()) : std::nullopt;
  if (!add || !size || *size <= 0)
    return std::nullopt;
  for (auto [base, plus] : {std::pair{add.getLhs(), add.getRhs()},
                            std::pair{add.getRhs(), add.getLhs()}})
    if (std::optional<int64_t> c = constantOf(plus))
      return std::make_tuple(base, *c, *size);
  return std::nullopt;
}

/// Whether two slot indices differ wherever both are computed in one pass
/// over their code: two different constants, or x - lag and (x + c) % size
/// with x below size and c + lag not a multiple of it (a ring's read and
/// fill slots; the slot a running product read trips ago and the fill).
bool differ(const Use &a, const Use &b) {
  if (!a.slot || !b.slot)
    return false;
  std::optional<int64_t> ca = constantOf(a.slot), cb = constantOf(b.slot);
  if (ca && cb && !a.lag && !b.lag)
    return *ca != *cb;
  for (auto [x, y] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    auto step = y->lag ? std::nullopt : matchStep(y->slot);
    if (!step)
      continue;
    auto [base, c, size] = *step;
    if (x->lag && x->lagModulus != size)
      continue;
    if (base == x->slot && (c + x->lag) % size != 0 && isBelow(base, size))
      return true;
  }
  return false;
}

/// Whether `use` and any of `uses` may touch the same bytes.
bool overlaps(const Uses &uses, const Use &use) {
  return llvm::any_of(uses, [&](const Use &other) {
    bool rangesMeet = other.range.first < use.range.second &&
                      use.range.first < other.range.second;
    bool slotsDiffer = other.range == use.range && differ(other, use);
    return rangesMeet && !slotsDiffer;
  });
}

/// What the threads read and wrote since the last barrier. Reads after
/// reads need no barrier; anything after a write, and a write after a
/// read, does (Triton's Membar). `running`: reads of products still
/// running (tkw.pending), which no barrier ends.
struct Pending {
  Uses reads, writes, running;

  bool operator==(const Pending &other) const {
    return reads == other.reads && writes == other.writes &&
           running == other.running;
  }
  Pending unite(const Pending &other) const {
    return {::unite(reads, other.reads), ::unite(writes, other.writes),
            ::unite(running, other.running)};
  }
  /// The same uses, seen from outside one pass over `region`: a slot
  /// computed in it may hold another value on another pass (the slot a
  /// trip fills is the one the previous trip read), so it is forgotten;
  /// `backEdge`: seen from the region's next pass, where a running read
  /// of a slot the loop steps is known by its lag.
  Pending leaving(Region &region, bool backEdge = false) const {
    Pending result = *this;
    for (Uses *uses : {&result.reads, &result.writes, &result.running}) {
      for (Use &use : *uses) {
        if (!use.slot || !region.isAncestor(use.slot.getParentRegion()))
          continue;
        std::optional<std::pair<int64_t, int64_t>> step =
            backEdge && uses == &result.running ? getLoopStep(region, use.slot)
                                                : std::nullopt;
        if (step && (!use.lag || use.lagModulus == step->second)) {
          use.lag = (use.lag + step->first) % step->second;
          use.lagModulus = step->second;
          continue;
        }
        use = {use.range, Value()};
      }
      llvm::sort(*uses);
      uses->erase(std::unique(uses->begin(), uses->end()), uses->end());
    }
    return result;
  }

private:
  /// For a slot that is an iteration argument of `region`'s loop yielded
  /// as (slot + c) % size: c and size.
  static std::optional<std::pair<int64_t, int64_t>> getLoopStep(Region &region,
                                                                Value slot) {
    auto arg = dyn_cast<BlockArgument>(slot);
    auto loop = dyn_cast<scf::ForOp>(region.getParentOp());
    if (!arg || !loop || arg.getOwner() != loop.getBody() ||
        arg.getArgNumber() < loop.getNumInductionVars())
      return std::nullopt;
    auto step = matchStep(loop.getYieldedValues()[arg.getArgNumber() -
                                                  loop.getNumInductionVars()]);
    if (!step || std::get<0>(*step) != slot)
      return std::nullopt;
    return std::pair{std::get<1>(*step), std::get<2>(*step)};
  }
};

/// How `op` uses workgroup memory: the bytes (and slot) and whether it
/// reads or writes them. An op with its own scratch (`tkw.scratch`) writes
/// it and reads it back; a copy into a ring writes its slot (when the copy
/// completes, which a tkw.async_wait before the barrier ensures), as a
/// store into one does, and a read of a ring reads its slot.
struct Access {
  Use use;
  bool reads = false, writes = false;
};

std::optional<Access> getAccess(Operation *op) {
  if (isa<LocalAllocOp>(op))
    return std::nullopt;
  Operation *owner = op;
  Access access{{{0, 0}, Value()}, true, true};
  if (auto copy = dyn_cast<AsyncCopyOp>(op)) {
    owner = copy.getRing().getDefiningOp();
    access.use.slot = copy.getSlot();
    access.reads = false;
  } else if (auto write = dyn_cast<LocalStoreOp>(op)) {
    owner = write.getRing().getDefiningOp();
    access.use.slot = write.getSlot();
    access.reads = false;
  } else if (auto read = dyn_cast<LocalLoadOp>(op)) {
    owner = read.getRing().getDefiningOp();
    access.use.slot = read.getSlot();
    access.writes = false;
  }
  auto scratch = owner ? owner->getAttrOfType<DenseI64ArrayAttr>(
                             TkwDialect::kScratchAttrName)
                       : nullptr;
  if (!scratch)
    return std::nullopt;
  access.use.range = {scratch[0], scratch[0] + scratch[1]};
  return access;
}

/// Decides which ops a barrier must precede. Decisions only ever grow as
/// the pending ranges do, so iterating loops to a fixed point terminates.
class BarrierPlacement {
public:
  /// What is pending after `block` runs from `pending`.
  Pending visitBlock(Block &block, Pending pending) {
    for (Operation &op : block)
      pending = visitOp(&op, std::move(pending));
    return pending;
  }

  llvm::SetVector<Operation *> barrierBefore;
  /// Writes that running products may still read: no barrier orders them.
  llvm::SetVector<Operation *> racing;

private:
  /// A dot whose products run on (tkw.pending = 1): its wait ends the
  /// products of earlier trips, whose reads become ordinary ones; its own
  /// reads of the ring slots its operands name (tkw.local_load, read in
  /// place) run on.
  Pending visitRunningDot(tk::DotOp dot, int64_t stillRunning,
                          Pending pending) {
    Uses reads;
    for (Value operand : {dot.getA(), dot.getB()})
      if (Operation *read = operand.getDefiningOp())
        if (std::optional<Access> access = getAccess(read))
          reads = unite(reads, {access->use});
    bool conflicts = llvm::any_of(
        reads, [&](const Use &use) { return overlaps(pending.writes, use); });
    if (barrierBefore.contains(dot) || conflicts) {
      barrierBefore.insert(dot);
      pending.reads = pending.writes = {};
    }
    // The wait comes after a barrier before the dot: the reads it ends were
    // still running at that barrier, and a write by another thread after
    // the dot needs one of its own.
    if (stillRunning <= 1) {
      pending.reads = unite(pending.reads, pending.running);
      pending.running = {};
    }
    pending.running = unite(pending.running, reads);
    return pending;
  }

  Pending visitOp(Operation *op, Pending pending) {
    if (isa<gpu::BarrierOp>(op))
      return {{}, {}, pending.running};
    if (auto wait = dyn_cast<DotWaitOp>(op)) {
      if (wait.getPending() == 0) {
        pending.reads = unite(pending.reads, pending.running);
        pending.running = {};
      }
      return pending;
    }
    if (auto dot = dyn_cast<tk::DotOp>(op)) {
      if (auto stillRunning =
              dot->getAttrOfType<IntegerAttr>(TkwDialect::kPendingAttrName))
        return visitRunningDot(dot, stillRunning.getInt(), std::move(pending));
      // Its wait is a later op's: nothing ends here.
      if (dot->hasAttr(TkwDialect::kDeferredAttrName))
        return visitRunningDot(dot, std::numeric_limits<int64_t>::max(),
                               std::move(pending));
    }
    if (auto read = dyn_cast<LocalLoadOp>(op))
      if (llvm::all_of(read->getUsers(),
                       [](Operation *user) {
                         return isa<tk::DotOp>(user) &&
                                (user->hasAttr(TkwDialect::kPendingAttrName) ||
                                 user->hasAttr(TkwDialect::kDeferredAttrName));
                       }) &&
          !read->use_empty())
        return pending; // read by its dot, where it runs
    if (std::optional<Access> access = getAccess(op)) {
      if (access->writes && overlaps(pending.running, access->use))
        racing.insert(op);
      bool conflicts = overlaps(pending.writes, access->use) ||
                       (access->writes && overlaps(pending.reads, access->use));
      if (barrierBefore.contains(op) || conflicts) {
        barrierBefore.insert(op);
        pending = {};
      }
      if (access->reads)
        pending.reads = unite(pending.reads, {access->use});
      if (access->writes)
        pending.writes = unite(pending.writes, {access->use});
      return pending;
    }
    if (op->getNumRegions() == 0)
      return pending;
    // A loop's body runs after the loop's entry and after its own previous
    // trip; it may also run no trip at all.
    if (isa<LoopLikeOpInterface>(op)) {
      Pending entry = pending, next, exit;
      while (true) {
        Pending end = entry;
        next = exit = Pending();
        for (Region &region : op->getRegions()) {
          for (Block &block : region)
            end = visitBlock(block, end);
          next = next.unite(end.leaving(region, /*backEdge=*/true));
          exit = exit.unite(end.leaving(region));
        }
        next = pending.unite(next);
        if (next == entry)
          break;
        entry = std::move(next);
      }
      return pending.unite(exit);
    }
    // Branches (scf.if) and other ops with regions: each region runs from
    // here, and what any touched is pending after.
    Pending after = pending;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        after = after.unite(visitBlock(block, pending).leaving(region));
    return after;
  }
};

struct InsertBarriersPass
    : public tk::impl::TkInsertBarriersBase<InsertBarriersPass> {
  void runOnOperation() override {
    tk::FuncOp func = getOperation();
    BarrierPlacement placement;
    for (Block &block : func.getBody())
      placement.visitBlock(block, {});
    for (Operation *op : placement.racing)
      op->emitOpError("tk-insert-barriers: writes workgroup memory that a "
                      "dot's running products (tkw.pending) may still read; "
                      "its ring needs a slot more than the trips in flight");
    if (!placement.racing.empty())
      return signalPassFailure();
    for (Operation *op : placement.barrierBefore) {
      LLVM_DEBUG(llvm::dbgs() << "barrier before " << *op << "\n");
      OpBuilder builder(op);
      gpu::BarrierOp::create(builder, op->getLoc());
    }
  }
};

} // namespace
