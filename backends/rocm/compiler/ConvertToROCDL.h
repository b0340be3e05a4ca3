//===- ConvertToROCDL.h - loops to the LLVM dialect with ROCDL --*- C++ -*-===//

#ifndef TK_BACKENDS_ROCM_COMPILER_CONVERTTOROCDL_H_
#define TK_BACKENDS_ROCM_COMPILER_CONVERTTOROCDL_H_

#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace tk::rocm {

/// tk-rocm-convert-to-rocdl: the kernels tk-convert-registers-to-simt left
/// (func, scf lowered to cf, arith, math, memref, gpu) to the LLVM dialect with
/// ROCDL for `chip` ("gfx942"); each kernel becomes a `rocdl.kernel` of
/// `threadsPerBlock` threads. Math functions LLVM's AMDGPU target has no
/// instruction for become calls of ROCm's ocml, which Compiler.cpp links.
std::unique_ptr<mlir::Pass> createConvertToROCDLPass(std::string chip,
                                                     int64_t threadsPerBlock);

} // namespace tk::rocm

#endif // TK_BACKENDS_ROCM_COMPILER_CONVERTTOROCDL_H_
