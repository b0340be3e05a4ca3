//===- Lowering.h - tk module to the LLVM dialect for SPIR-V ----*- C++ -*-===//
//
// The MLIR half of the Xe compile pipeline: core's register pipeline
// (tk::lowerToSIMT) at the target's subgroup size (tiles in the registers of
// a workgroup's work-items, SLM by liveness, DPAS dots through Dpas.h), then
// the LLVM dialect with OpenCL's
// builtins for work-item ids, barriers and subgroup shuffles
// (ConvertToLLVMSPV.cpp). What follows (LLVM IR, the SPIR-V backend, ocloc)
// lives in Compiler.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_XE_COMPILER_LOWERING_H_
#define TK_BACKENDS_XE_COMPILER_LOWERING_H_

#include "compiler/DeviceTarget.h"
#include "tk/tk.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>
#include <vector>

namespace tk::xe {

struct LoweringOptions {
  Target target;
  int numWarps = 4;
  int numStages = 2;
};

/// What the lowering learned that the package records.
struct LoweredKernel {
  int threadsPerBlock = 0;
  /// tk.dot ops DPAS computes.
  int matrixDots = 0;
  /// Bytes of SLM a workgroup of the target may have (its preset's).
  int64_t slmLimit = 0;
};

/// Called after each stage with a file name ("4-loops.mlir") and the module;
/// Compiler.cpp writes it when TK_DUMP_IR is set.
using DumpFn = std::function<void(llvm::StringRef file, mlir::ModuleOp)>;

/// Registers DPAS as the units of intel-pvc, intel-dg2
/// (tk::registerTargetUnits), for tk-opt's tk-convert-registers-to-simt
/// `units=<preset>`; the lowering below hands them over itself.
void registerTargetUnits();

/// Registers every dialect and LLVM IR translation the lowering needs.
void registerLoweringDialects(mlir::DialectRegistry &registry);

/// Lowers the verified tk module in place to the LLVM dialect: one llvm.func
/// named as the entry, a spir_kernel with intel_reqd_sub_group_size, taking
/// the tk.func's arguments in order (pointers as !llvm.ptr<1>, scalars by
/// value). On failure returns TK_ERROR_UNSUPPORTED (a feature the target
/// lacks) or TK_ERROR_COMPILATION and appends the failing stage to `error`.
tk_status lowerToLLVMDialect(mlir::ModuleOp module,
                             const LoweringOptions &options,
                             LoweredKernel &result, std::string &error,
                             const DumpFn &dump);

} // namespace tk::xe

#endif // TK_BACKENDS_XE_COMPILER_LOWERING_H_
