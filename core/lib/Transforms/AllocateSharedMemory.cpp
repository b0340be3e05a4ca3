//===- AllocateSharedMemory.cpp - workgroup memory packed by liveness -----===//
//
// Pass 6 of the register pipeline (DESIGN.md §3): every buffer of
// workgroup memory gets its offset before code generation, and a kernel
// that needs more than the target has is refused here, with the number.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Analysis/SharedMemoryAllocation.h"
#include "tk/core/Layout.h"
#include "tk/core/Passes.h"
#include "tk/core/TargetInfo.h"
#include "tk/core/WarpDialect.h"

#include "mlir/IR/Builders.h"

namespace tk {
#define GEN_PASS_DEF_TKALLOCATESHAREDMEMORY
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;
using namespace tk;
using namespace tk::warp;

namespace {

constexpr llvm::StringLiteral kPassName = "tk-allocate-shared-memory";

/// Offsets are multiples of 16 bytes: the widest vector a lane moves.
constexpr int64_t kBufferAlignment = 16;

/// The last point (of `points`, a pre-order walk) at which `ring` is
/// live: its last use, or where a use lies in a loop or branch beside the
/// allocation, the end of that op, since a loop's next trip reads the ring
/// again.
int64_t getLastUse(LocalAllocOp ring,
                   const llvm::DenseMap<Operation *, int64_t> &points) {
  int64_t last = points.lookup(ring);
  for (Operation *user : ring->getUsers()) {
    Operation *outer = ring->getBlock()->findAncestorOpInBlock(*user);
    if (!outer)
      continue;
    int64_t nested = 0;
    outer->walk([&](Operation *) { ++nested; });
    last = std::max(last, points.lookup(outer) + nested - 1);
  }
  return last;
}

struct AllocateSharedMemoryPass
    : public tk::impl::TkAllocateSharedMemoryBase<AllocateSharedMemoryPass> {
  using TkAllocateSharedMemoryBase::TkAllocateSharedMemoryBase;

  void runOnOperation() override {
    FuncOp func = getOperation();
    std::string spec = getTargetSpec(func, target);
    if (spec.empty()) {
      func.emitError() << kPassName
                       << ": no target: pass `target=` or run "
                          "tk-assign-linear-layouts first (it records "
                          "tkw.target)";
      return signalPassFailure();
    }
    std::string error;
    std::optional<TargetInfo> info = TargetInfo::parse(spec, error);
    if (!info) {
      func.emitError() << kPassName << ": " << error;
      return signalPassFailure();
    }

    // The buffers, each live at its op's point of a pre-order walk; a
    // ring from its tkw.local_alloc to its last use.
    SmallVector<SharedBuffer> buffers;
    int64_t point = 0;
    llvm::DenseMap<Operation *, int64_t> points;
    SmallVector<LocalAllocOp> rings;
    WalkResult walked = func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      ++point;
      points[op] = point;
      if (auto ring = dyn_cast<LocalAllocOp>(op)) {
        rings.push_back(ring);
        return WalkResult::advance();
      }
      llvm::Expected<int64_t> bytes = getScratchBytes(op, *info);
      if (!bytes) {
        op->emitError() << kPassName << ": "
                        << llvm::toString(bytes.takeError());
        return WalkResult::interrupt();
      }
      if (*bytes > 0)
        buffers.push_back(
            SharedBuffer{op, point, point, *bytes, 0, getSharedAlignment(op)});
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return signalPassFailure();
    for (LocalAllocOp ring : rings)
      buffers.push_back(SharedBuffer{
          ring, points[ring], getLastUse(ring, points),
          ring.getType().getSlots() * ring.getType().getSlotBytes(), 0,
          getSharedAlignment(ring)});

    int64_t total = packSharedBuffers(buffers, kBufferAlignment);
    if (total > info->sharedMemoryPerBlock) {
      const SharedBuffer &largest = *llvm::max_element(
          buffers, [](const SharedBuffer &a, const SharedBuffer &b) {
            return a.bytes < b.bytes;
          });
      InFlightDiagnostic diagnostic =
          func.emitError() << kPassName << ": the kernel needs " << total
                           << " bytes of workgroup memory, and " << info->name
                           << " has " << info->sharedMemoryPerBlock;
      diagnostic.attachNote(largest.owner->getLoc())
          << "the largest buffer: " << largest.bytes << " bytes, for this "
          << largest.owner->getName();
      return signalPassFailure();
    }

    Builder builder(&getContext());
    for (const SharedBuffer &buffer : buffers)
      buffer.owner->setAttr(
          TkwDialect::kScratchAttrName,
          builder.getDenseI64ArrayAttr({buffer.offset, buffer.bytes}));
    func->setAttr(TkwDialect::kSharedMemoryAttrName,
                  builder.getI64IntegerAttr(total));
  }
};

} // namespace
