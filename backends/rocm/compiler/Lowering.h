//===- Lowering.h - tk module to the LLVM dialect for AMDGPU ----*- C++ -*-===//
//
// The MLIR half of the ROCm compile pipeline: core's register pipeline
// (tk::lowerToSIMT) at the target's wave size (tiles in the registers of a
// workgroup's lanes, LDS by liveness, MFMA/WMMA dots through
// MatrixCores.h), then ROCDL and the LLVM dialect (ConvertToROCDL.cpp). What
// follows (LLVM IR, ocml, AMDGPU code generation, ld.lld, packaging) lives in
// Compiler.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_ROCM_COMPILER_LOWERING_H_
#define TK_BACKENDS_ROCM_COMPILER_LOWERING_H_

#include "compiler/DeviceTarget.h"
#include "tk/tk.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>

namespace tk::rocm {

/// The AMD GPU a kernel is compiled for.
struct LoweringOptions {
  Target target;
  int numWarps = 4;
  int numStages = 2;
  /// Whether a dot operand the loop's registers would not hold may wait in
  /// LDS (SIMTLowering::stageOperands).
  bool stageOperands = true;
};

/// What the lowering learned that the package records.
struct LoweredKernel {
  int threadsPerBlock = 0;
  /// tk.dot ops the matrix unit computes.
  int matrixDots = 0;
  /// The LDS a workgroup may use on the target (its TargetInfo preset).
  int64_t ldsBytesLimit = 0;
  /// Whether a dot operand waits in LDS (tkw.local_store before its loop).
  bool stagedOperands = false;
};

/// Called after each stage with a file name ("4-loops.mlir") and the module;
/// Compiler.cpp writes it when TK_DUMP_IR is set.
using DumpFn = std::function<void(llvm::StringRef file, mlir::ModuleOp)>;

/// Registers the matrix cores (MFMA at wave64, WMMA at wave32) as the units of
/// amd-cdna3, amd-cdna2, amd-rdna3 (tk::registerTargetUnits), for tk-opt's
/// tk-convert-registers-to-simt `units=<preset>`; the lowering below hands
/// them over itself.
void registerTargetUnits();

/// Registers every dialect and LLVM IR translation the lowering needs.
void registerLoweringDialects(mlir::DialectRegistry &registry);

/// Lowers the verified tk module in place to the LLVM dialect: one llvm.func
/// named as the entry, marked `rocdl.kernel`, taking the tk.func's arguments
/// in order (pointers as !llvm.ptr, scalars by value). On failure returns
/// TK_ERROR_UNSUPPORTED (a feature the target lacks) or TK_ERROR_COMPILATION
/// and appends the failing stage to `error`.
tk_status lowerToLLVMDialect(mlir::ModuleOp module,
                             const LoweringOptions &options,
                             LoweredKernel &result, std::string &error,
                             const DumpFn &dump);

} // namespace tk::rocm

#endif // TK_BACKENDS_ROCM_COMPILER_LOWERING_H_
