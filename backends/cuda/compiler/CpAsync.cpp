//===- CpAsync.cpp - asynchronous copies on NVIDIA sm_80+ -----------------===//
//
// cp.async.ca.shared.global moves 4, 8 or 16 bytes per thread without
// passing through registers. .ca, not .cg (L2 only), although a program
// reads each tile once: with .cg every 16-byte copy fetched its own 32-byte
// sector from L2, twice the bytes of the tile (ncu on an H100: 805M sectors
// for 12.9 GB of tiles, L2 at 85% of its throughput), and the fp16 matmul
// at 8192^3 ran at 195 TFLOP/s against 222 with .ca, where L1 merges the
// two halves of a sector. Completion is tracked per thread in
// commit groups: cp.async.wait_group N returns once at most N of the
// thread's groups are pending, and a barrier then publishes every thread's
// copies to the program.
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
                       Value offset, Value source, int64_t bytes) const {
  MLIRContext *ctx = b.getContext();
  Value shared = sharedElementAddress(b, loc, destination, offset);
  Value global = LLVM::AddrSpaceCastOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx, 1), source);
  NVVM::CpAsyncOp::create(b, loc, shared, global, bytes,
                          NVVM::LoadCacheModifierKind::CA, Value());
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
