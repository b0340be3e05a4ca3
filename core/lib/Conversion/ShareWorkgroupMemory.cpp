//===- ShareWorkgroupMemory.cpp - tiles whose lives do not overlap --------===//
//
// tk-share-workgroup-memory (Passes.td says what it does): an interval
// colouring of the workgroup buffers of each kernel, per memref type,
// over the kernel's top-level ops. Working on the lowered code rather than
// inside tk-convert-to-simt means every access is an explicit memref.load
// or memref.store; no element-wise chain computed later can still read a
// tile whose buffer looks dead.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tk-share-workgroup-memory"

namespace tk {
#define GEN_PASS_DEF_TKSHAREWORKGROUPMEMORY
#include "tk/core/Conversion/Passes.h.inc"
} // namespace tk

using namespace mlir;

namespace {

/// One workgroup buffer of a kernel and the top-level ops it lives across.
struct Buffer {
  memref::GlobalOp global;
  SmallVector<memref::GetGlobalOp> uses;
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = -1;
  /// Reached by something other than loads and stores: keeps its memory.
  bool pinned = false;
};

bool isWorkgroup(MemRefType type) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

/// Merges the buffers of `func`; `symbols` are the module's.
void shareBuffers(func::FuncOp func, SymbolTable &symbols) {
  Block &top = func.getBody().front();
  DenseMap<Operation *, int64_t> position;
  SmallVector<Operation *> topOps;
  for (Operation &op : top) {
    position[&op] = topOps.size();
    topOps.push_back(&op);
  }
  llvm::MapVector<Operation *, Buffer> buffers;
  func.walk([&](memref::GetGlobalOp get) {
    auto global = symbols.lookup<memref::GlobalOp>(get.getName());
    if (!global || !isWorkgroup(global.getType()))
      return;
    Buffer &buffer = buffers[global];
    buffer.global = global;
    buffer.uses.push_back(get);
    for (Operation *user : get->getUsers()) {
      if (!isa<memref::LoadOp, memref::StoreOp>(user))
        buffer.pinned = true;
      Operation *ancestor = top.findAncestorOpInBlock(*user);
      int64_t at = position.lookup(ancestor);
      buffer.first = std::min(buffer.first, at);
      buffer.last = std::max(buffer.last, at);
    }
  });
  // A buffer another kernel also reaches keeps its memory.
  for (auto &[op, buffer] : buffers) {
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(buffer.global, func->getParentOp());
    if (uses && size_t(llvm::range_size(*uses)) != buffer.uses.size())
      buffer.pinned = true;
  }

  // Earliest first: each buffer takes the memory of one whose life ended.
  SmallVector<Buffer *> order;
  for (auto &entry : buffers)
    if (!entry.second.pinned && entry.second.last >= 0)
      order.push_back(&entry.second);
  llvm::stable_sort(order, [](const Buffer *x, const Buffer *y) {
    return x->first < y->first;
  });
  struct Slot {
    Buffer *owner;
    int64_t last;
  };
  SmallVector<Slot> slots;
  SmallVector<Operation *> barrierBefore;
  for (Buffer *buffer : order) {
    Slot *free = nullptr;
    for (Slot &slot : slots)
      if (slot.owner->global.getType() == buffer->global.getType() &&
          slot.last < buffer->first && (!free || slot.last > free->last))
        free = &slot;
    if (!free) {
      slots.push_back({buffer, buffer->last});
      continue;
    }
    // The previous tile's readers are done before this one is written.
    bool separated = false;
    for (int64_t at = free->last + 1; at < buffer->first && !separated; ++at)
      separated = isa<gpu::BarrierOp>(topOps[at]);
    if (!separated)
      barrierBefore.push_back(topOps[buffer->first]);
    LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE << ": " << buffer->global.getSymName()
                            << " shares " << free->owner->global.getSymName()
                            << (separated ? "" : " after a new barrier")
                            << "\n");
    for (memref::GetGlobalOp get : buffer->uses)
      get.setNameAttr(
          FlatSymbolRefAttr::get(free->owner->global.getSymNameAttr()));
    if (auto alignment = buffer->global.getAlignment())
      if (!free->owner->global.getAlignment() ||
          *free->owner->global.getAlignment() < *alignment)
        free->owner->global.setAlignmentAttr(buffer->global.getAlignmentAttr());
    symbols.erase(buffer->global);
    free->last = buffer->last;
  }
  for (Operation *op : barrierBefore) {
    OpBuilder b(op);
    gpu::BarrierOp::create(b, op->getLoc());
  }
}

struct ShareWorkgroupMemory
    : public tk::impl::TkShareWorkgroupMemoryBase<ShareWorkgroupMemory> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        shareBuffers(func, symbols);
  }
};

} // namespace
