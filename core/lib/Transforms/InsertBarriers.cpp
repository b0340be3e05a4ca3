//===- InsertBarriers.cpp - barriers where shared memory is reused --------===//
//
// Pass 7 of the register pipeline (DESIGN.md §3): a gpu.barrier before an
// op whose workgroup memory (`tkw.scratch`) overlaps memory an earlier op
// used since the last barrier, following scf control flow to a fixed
// point. Triton's Membar analysis, on tk's buffers.
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

/// Byte ranges [begin, end) of workgroup memory used since the last
/// barrier, sorted and without repeats so that two sets compare equal.
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

/// Decides which ops a barrier must precede. Decisions only ever grow as
/// the pending ranges do, so iterating loops to a fixed point terminates.
class BarrierPlacement {
public:
  /// The ranges pending after `block` runs from `pending`.
  Ranges visitBlock(Block &block, Ranges pending) {
    for (Operation &op : block)
      pending = visitOp(&op, std::move(pending));
    return pending;
  }

  llvm::SetVector<Operation *> barrierBefore;

private:
  Ranges visitOp(Operation *op, Ranges pending) {
    if (isa<gpu::BarrierOp>(op))
      return {};
    if (auto scratch = op->getAttrOfType<DenseI64ArrayAttr>(
            TkwDialect::kScratchAttrName)) {
      std::pair<int64_t, int64_t> range = {scratch[0], scratch[0] + scratch[1]};
      if (barrierBefore.contains(op) || overlaps(pending, range)) {
        barrierBefore.insert(op);
        pending.clear();
      }
      return unite(pending, {range});
    }
    if (op->getNumRegions() == 0)
      return pending;
    // A loop's body runs after the loop's entry and after its own previous
    // trip; it may also run no trip at all.
    if (isa<LoopLikeOpInterface>(op)) {
      Ranges entry = pending, end;
      while (true) {
        end = entry;
        for (Region &region : op->getRegions())
          for (Block &block : region)
            end = visitBlock(block, end);
        Ranges next = unite(pending, end);
        if (next == entry)
          break;
        entry = std::move(next);
      }
      return unite(pending, end);
    }
    // Branches (scf.if) and other ops with regions: each region runs from
    // here, and what any touched is pending after.
    Ranges after = pending;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        after = unite(after, visitBlock(block, pending));
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
