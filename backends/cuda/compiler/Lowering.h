//===- Lowering.h - tk module to the LLVM dialect for NVPTX -----*- C++ -*-===//
//
// The MLIR half of the CUDA compile pipeline: core's register pipeline
// (tk::lowerToSIMT) for the target's TargetInfo (tiles in the registers of
// a CTA's threads, shared memory by liveness, cp.async rings, mma.sync and
// wgmma dots), then NVVM and the LLVM dialect. What follows (LLVM IR,
// libdevice, NVPTX, ptxas, packaging) lives in Compiler.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CUDA_COMPILER_LOWERING_H_
#define TK_BACKENDS_CUDA_COMPILER_LOWERING_H_

#include "compiler/DeviceTarget.h"
#include "tk/tk.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>

namespace tk::cuda {

struct LoweringOptions {
  Target target;
  int numWarps = 4;
  int numStages = 3;
  /// Occupancy hint (tk_compile_options.min_programs_per_cu): ptxas limits
  /// the registers so that this many CTAs fit on one SM (.minnctapersm).
  /// 0: none.
  int minProgramsPerSM = 0;
  /// Whether an invariant dot operand the loop's registers would not hold
  /// may wait in shared memory (tk-dot-operand-layouts); Compiler.cpp
  /// compiles a kernel that staged one again without, to compare spills.
  bool stageOperands = true;
};

/// What the lowering learned that the package records.
struct LoweredKernel {
  /// Dynamic shared memory the kernel needs at launch, in bytes: left 0
  /// here, set when Compiler.cpp packs the tile buffers (SharedMemory.h).
  int sharedMemoryBytes = 0;
  /// Threads per CTA (numWarps * 32).
  int threadsPerBlock = 0;
  /// Whether a dot operand was staged in shared memory (above).
  bool stagedOperands = false;
};

/// Called after each stage with a file name ("3-registers.mlir") and the
/// module; Compiler.cpp writes it when TK_DUMP_IR is set.
using DumpFn = std::function<void(llvm::StringRef file, mlir::ModuleOp)>;

/// Registers mma.sync and cp.async as cuda-sm80's units, wgmma and cp.async
/// as cuda-sm90a's (tk::registerTargetUnits), for tk-opt's
/// tk-convert-registers-to-simt `units=<preset>`; the lowering below hands
/// them over itself.
void registerTargetUnits();

/// Registers every dialect and LLVM IR translation the lowering needs.
void registerLoweringDialects(mlir::DialectRegistry &registry);

/// Lowers the verified tk module in place to the LLVM dialect: one llvm.func
/// named `entry` marked as an NVVM kernel, taking the tk.func's arguments in
/// order (pointers as generic !llvm.ptr, which NVPTX turns into global
/// pointers for kernel parameters; i32, i64, f32, f64 by value). On failure
/// returns TK_ERROR_UNSUPPORTED (a feature the target lacks) or
/// TK_ERROR_COMPILATION and appends the failing stage to `error`; diagnostics
/// go to the context's handler.
tk_status lowerToLLVMDialect(mlir::ModuleOp module, llvm::StringRef entry,
                             const LoweringOptions &options,
                             LoweredKernel &result, std::string &error,
                             const DumpFn &dump);

} // namespace tk::cuda

#endif // TK_BACKENDS_CUDA_COMPILER_LOWERING_H_
