//===- SharedMemory.h - tile buffers into dynamic shared memory -*- C++ -*-===//

#ifndef TK_BACKENDS_CUDA_COMPILER_SHAREDMEMORY_H_
#define TK_BACKENDS_CUDA_COMPILER_SHAREDMEMORY_H_

#include "mlir/IR/Builders.h"

#include <cstdint>

namespace llvm {
class Module;
} // namespace llvm

namespace tk::cuda {

/// Replaces every shared-memory (address space 3) global of `module` by an
/// offset into one `extern __shared__` array, and returns the bytes the
/// launch must ask for. Static shared memory stops at 48 KB per block;
/// dynamic shared memory goes to the device's opt-in maximum (227 KB on
/// sm_90), which the driver sets at load.
int64_t moveSharedMemoryToDynamic(llvm::Module &module);

/// The shared-window address (!llvm.ptr<3>) of element `offset` (index) of
/// `buffer`, a row-major memref in workgroup memory: what ldmatrix,
/// cp.async and wgmma descriptors take.
mlir::Value sharedElementAddress(mlir::OpBuilder &builder, mlir::Location loc,
                                 mlir::Value buffer, mlir::Value offset);

} // namespace tk::cuda

#endif // TK_BACKENDS_CUDA_COMPILER_SHAREDMEMORY_H_
