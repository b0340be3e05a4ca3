//===- InsertBarriers.cpp - barriers where shared memory is reused --------===//
//
// Pass 7 of the register pipeline (DESIGN.md §3): a gpu.barrier before an
// op whose workgroup memory (its `tkw.scratch`, or its ring's) overlaps
// memory an earlier op wrote since the last barrier, or that it writes and
// an earlier op read, following scf control flow to a fixed point.
// Triton's Membar analysis, on tk's buffers.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Passes.h"
#include "tk/core/WarpDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tk-insert-barriers"

namespace tk {
#define GEN_PASS_DEF_TKINSERTBARRIERS
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;
using namespace tk::warp;

namespace {

/// Byte ranges [begin, end) of workgroup memory, sorted and without
/// repeats so that two sets compare equal.
using Ranges = SmallVector<std::pair<int64_t, int64_t>>;

Ranges unite(const Ranges &a, const Ranges &b) {
  Ranges result(a);
  result.append(b.begin(), b.end());
  llvm::sort(result);
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

bool overlaps(const Ranges &ranges, std::pair<int64_t, int64_t> range) {
  return llvm::any_of(ranges, [&](const auto &other) {
    return other.first < range.second && range.first < other.second;
  });
}

/// What the threads read and wrote since the last barrier. Reads after
/// reads need no barrier; anything after a write, and a write after a
/// read, does (Triton's Membar).
struct Pending {
  Ranges reads, writes;

  bool operator==(const Pending &other) const {
    return reads == other.reads && writes == other.writes;
  }
  Pending unite(const Pending &other) const {
    return {::unite(reads, other.reads), ::unite(writes, other.writes)};
  }
};

/// How `op` uses workgroup memory: the bytes and whether it reads or
/// writes them. An op with its own scratch (`tkw.scratch`) writes it and
/// reads it back; a copy into a ring writes the ring (when the copy
/// completes, which a tkw.async_wait before the barrier ensures), and a
/// read of a ring reads it.
struct Access {
  std::pair<int64_t, int64_t> range;
  bool reads = false, writes = false;
};

std::optional<Access> getAccess(Operation *op) {
  if (isa<LocalAllocOp>(op))
    return std::nullopt;
  Operation *owner = op;
  Access access{{0, 0}, true, true};
  if (auto copy = dyn_cast<AsyncCopyOp>(op)) {
    owner = copy.getRing().getDefiningOp();
    access.reads = false;
  } else if (auto read = dyn_cast<LocalLoadOp>(op)) {
    owner = read.getRing().getDefiningOp();
    access.writes = false;
  }
  auto scratch = owner ? owner->getAttrOfType<DenseI64ArrayAttr>(
                             TkwDialect::kScratchAttrName)
                       : nullptr;
  if (!scratch)
    return std::nullopt;
  access.range = {scratch[0], scratch[0] + scratch[1]};
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

private:
  Pending visitOp(Operation *op, Pending pending) {
    if (isa<gpu::BarrierOp>(op))
      return {};
    if (std::optional<Access> access = getAccess(op)) {
      bool conflicts =
          overlaps(pending.writes, access->range) ||
          (access->writes && overlaps(pending.reads, access->range));
      if (barrierBefore.contains(op) || conflicts) {
        barrierBefore.insert(op);
        pending = {};
      }
      if (access->reads)
        pending.reads = unite(pending.reads, {access->range});
      if (access->writes)
        pending.writes = unite(pending.writes, {access->range});
      return pending;
    }
    if (op->getNumRegions() == 0)
      return pending;
    // A loop's body runs after the loop's entry and after its own previous
    // trip; it may also run no trip at all.
    if (isa<LoopLikeOpInterface>(op)) {
      Pending entry = pending, end;
      while (true) {
        end = entry;
        for (Region &region : op->getRegions())
          for (Block &block : region)
            end = visitBlock(block, end);
        Pending next = pending.unite(end);
        if (next == entry)
          break;
        entry = std::move(next);
      }
      return pending.unite(end);
    }
    // Branches (scf.if) and other ops with regions: each region runs from
    // here, and what any touched is pending after.
    Pending after = pending;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        after = after.unite(visitBlock(block, pending));
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
    for (Operation *op : placement.barrierBefore) {
      LLVM_DEBUG(llvm::dbgs() << "barrier before " << *op << "\n");
      OpBuilder builder(op);
      gpu::BarrierOp::create(builder, op->getLoc());
    }
  }
};

} // namespace
