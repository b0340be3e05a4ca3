//===- CpAsync.cpp - asynchronous copies on NVIDIA sm_80+ -----------------===//
//
// cp.async moves 4, 8 or 16 bytes per thread without passing through
// registers. 16-byte copies take .cg (L2 only, bypassing L1: each tile is
// read once), smaller ones .ca (.cg takes 16 bytes only). Measured on an
// H100 with normal inputs (commit accecbd, 2026-11-23): the fp16 matmul at
// 4096^3 and 8192^3 went from 557 / 547 to 641 / 635 TFLOP/s with .cg,
// attention D128 from 438 to 474; Triton's 16-byte copies bypass L1 too.
// (Commit aecea62 measured the opposite on the kernel of that time, 195
// against 222 TFLOP/s, where ncu counted a 32-byte sector fetched from L2 per
// 16-byte copy; the copies' distribution has changed since, and the cause was
// not re-profiled.)
// Completion is tracked per thread in commit groups: cp.async.wait_group N
// returns once at most N of the thread's groups are pending, and a barrier
// then publishes every thread's copies to the program.
//
//===----------------------------------------------------------------------===//

#include "compiler/CpAsync.h"
#include "compiler/SharedMemory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace tk::cuda {

bool CpAsyncUnit::supportsBytes(int64_t bytes) const {
  return bytes == 4 || bytes == 8 || bytes == 16;
}

void CpAsyncUnit::copy(OpBuilder &b, Location loc, Value destination,
                       Value offset, Value source, int64_t bytes,
                       Value sourceBytes) const {
  MLIRContext *ctx = b.getContext();
  Value shared = sharedElementAddress(b, loc, destination, offset);
  Value global = LLVM::AddrSpaceCastOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx, 1), source);
  NVVM::CpAsyncOp::create(b, loc, shared, global, bytes,
                          bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                      : NVVM::LoadCacheModifierKind::CA,
                          sourceBytes);
}

void CpAsyncUnit::commit(OpBuilder &b, Location loc) const {
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

void CpAsyncUnit::wait(OpBuilder &b, Location loc, int64_t pending) const {
  NVVM::CpAsyncWaitGroupOp::create(b, loc, pending);
  if (!asyncProxyReaders)
    return;
  // cp.async writes through the generic proxy and wgmma reads through the
  // async proxy: the fence, before the barrier that follows, makes the
  // copies visible to wgmma (which then needs no barrier of its own).
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

} // namespace tk::cuda
