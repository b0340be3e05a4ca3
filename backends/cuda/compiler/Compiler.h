//===- Compiler.h - tk module to PTX and a cubin ----------------*- C++ -*-===//
//
// The CUDA backend's compile pipeline: tk → (Lowering.h) LLVM dialect → LLVM
// IR with libdevice → O3 → NVPTX → PTX → ptxas → cubin, packaged as
// Package.h describes. Every stage can be dumped.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CUDA_COMPILER_COMPILER_H_
#define TK_BACKENDS_CUDA_COMPILER_COMPILER_H_

#include "compiler/Lowering.h"
#include "compiler/Package.h"
#include "tk/tk.h"

#include <optional>
#include <string>

namespace tk::cuda {

/// What to compile: a tk module as MLIR bytecode or text.
struct CompileInput {
  const void *module = nullptr;
  size_t size = 0;
  /// The kernel to compile; it must exist in the module.
  std::string entry;
  LoweringOptions options;
  /// Non-empty: write each stage's IR into this folder.
  std::string dumpDir;
};

/// Where compileKernel stops (tk-compile --emit).
enum class CompileStage { LLVMIR, PTX, Cubin };

/// What compileKernel produced, up to the stage it stopped at.
struct CompiledKernel {
  LoweredKernel lowered;
  /// Optimised LLVM IR, printed.
  std::string llvmIR;
  std::string ptx;
  std::string cubin;
  /// ptxas's output (-v: registers, spills).
  std::string ptxasLog;
  /// From ptxas -v; 0 when it did not say.
  int registersPerThread = 0;
};

/// Compiles `input` up to and including `stopAfter`; a kernel whose lowering
/// staged a dot operand in shared memory is compiled a second time with it
/// in registers, and the code ptxas spills less for is kept (the registers'
/// on a tie). On failure returns the
/// status (TK_ERROR_INVALID_IR, TK_ERROR_NOT_FOUND, TK_ERROR_UNSUPPORTED,
/// TK_ERROR_COMPILATION) and fills `error` with diagnostics and the stage.
tk_status compileKernel(const CompileInput &input, CompileStage stopAfter,
                        CompiledKernel &out, std::string &error);

/// compileKernel to a cubin, packaged.
tk_status compileToPackage(const CompileInput &input, Package &out,
                           std::string &error);

/// The CUDA toolkit used: $CUDA_HOME when set; otherwise the toolkit of the
/// ptxas on PATH when its folder holds libdevice too; otherwise
/// /usr/local/cuda.
std::string cudaToolkitRoot();

/// The ptxas to run, or TK_ERROR_COMPILATION naming where it looked.
tk_status findPtxas(std::string &path, std::string &error);

} // namespace tk::cuda

#endif // TK_BACKENDS_CUDA_COMPILER_COMPILER_H_
