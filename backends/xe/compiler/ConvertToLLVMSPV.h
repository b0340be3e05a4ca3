//===- ConvertToLLVMSPV.h - loops to the LLVM dialect for SPIR-V -*- C++
//-*-===//

#ifndef TK_BACKENDS_XE_COMPILER_CONVERTTOLLVMSPV_H_
#define TK_BACKENDS_XE_COMPILER_CONVERTTOLLVMSPV_H_

#include "mlir/Pass/Pass.h"

#include <memory>

namespace tk::xe {

/// tk-xe-convert-to-llvm-spv: the kernels tk-convert-registers-to-simt left
/// (gpu ids, barriers and shuffles; arith, math, memref, cf) to the LLVM
/// dialect as the SPIR-V backend takes them for OpenCL: OpenCL builtins for the
/// gpu ops, OpenCL's math library for math LLVM has no intrinsic of, address
/// spaces 1 (global) and 3 (SLM), and each kernel a spir_kernel of
/// `subgroupSize` work-items a subgroup.
std::unique_ptr<mlir::Pass> createConvertToLLVMSPVPass(int subgroupSize);

} // namespace tk::xe

#endif // TK_BACKENDS_XE_COMPILER_CONVERTTOLLVMSPV_H_
