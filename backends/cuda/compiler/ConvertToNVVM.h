//===- ConvertToNVVM.h - loops to the LLVM dialect with NVVM ----*- C++ -*-===//

#ifndef TK_BACKENDS_CUDA_COMPILER_CONVERTTONVVM_H_
#define TK_BACKENDS_CUDA_COMPILER_CONVERTTONVVM_H_

#include "mlir/Pass/Pass.h"

#include <memory>

namespace tk::cuda {

/// Converts what tk-convert-registers-to-simt leaves (scf already lowered to
/// cf) to the LLVM dialect: gpu ids and barriers to NVVM, math to libdevice
/// calls, workgroup memory to address space 3; marks the kernels
/// (`tk_kernel` functions) as NVVM kernels of `threadsPerBlock` threads,
/// asking ptxas to fit `minBlocksPerSM` of them on an SM when nonzero.
std::unique_ptr<mlir::Pass> createConvertToNVVMPass(int64_t threadsPerBlock,
                                                    int64_t minBlocksPerSM);

} // namespace tk::cuda

#endif // TK_BACKENDS_CUDA_COMPILER_CONVERTTONVVM_H_
