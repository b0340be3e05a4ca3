//===- Compiler.h - tk module to an AMDGPU code object ----------*- C++ -*-===//
//
// The ROCm backend's compile pipeline: tk → (Lowering.h) LLVM dialect →
// LLVM IR with ROCm's ocml where math needs it → O3 → AMDGPU object →
// ld.lld → code object (hsaco), packaged as Package.h describes with the
// figures of the code object's own metadata. Every stage can be dumped.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_ROCM_COMPILER_COMPILER_H_
#define TK_BACKENDS_ROCM_COMPILER_COMPILER_H_

#include "compiler/Lowering.h"
#include "compiler/Package.h"
#include "tk/tk.h"

#include <string>

namespace tk::rocm {

/// What to compile: a tk module as MLIR bytecode or text.
struct CompileInput {
  const void *module = nullptr;
  size_t size = 0;
  /// The kernel to compile; it must exist in the module.
  std::string entry;
  LoweringOptions options;
  /// The code object version (4 or 5) the HIP runtime loading it reads.
  int codeObjectVersion = 5;
  /// Non-empty: write each stage's IR into this folder.
  std::string dumpDir;
};

/// Where compileKernel stops (tk-compile --emit).
enum class CompileStage { LLVMIR, Assembly, CodeObject };

/// What compileKernel produced, up to the stage it stopped at.
struct CompiledKernel {
  LoweredKernel lowered;
  /// Optimised LLVM IR, printed.
  std::string llvmIR;
  /// AMDGPU assembly, with the kernel descriptor and metadata.
  std::string assembly;
  /// The linked code object (hsaco) and what its metadata says.
  std::string hsaco;
  Package metadata;
};

/// Compiles `input` up to and including `stopAfter`. On failure returns the
/// status (TK_ERROR_INVALID_IR, TK_ERROR_NOT_FOUND, TK_ERROR_UNSUPPORTED,
/// TK_ERROR_COMPILATION) and fills `error` with diagnostics and the stage.
tk_status compileKernel(const CompileInput &input, CompileStage stopAfter,
                        CompiledKernel &out, std::string &error);

/// compileKernel to a code object, packaged.
tk_status compileToPackage(const CompileInput &input, Package &out,
                           std::string &error);

/// Reads the amdhsa.kernels metadata of `hsaco` for kernel `entry` into
/// `out`'s kernarg, LDS, wave size, register and scratch fields.
tk_status readCodeObjectMetadata(const std::string &hsaco,
                                 const std::string &entry, Package &out,
                                 std::string &error);

/// An LLVM tool of the LLVM tk is built with (`ld.lld`, `llvm-objdump`,
/// `llvm-readelf`): the path in `envVar` when set, LLVM's own bin folder
/// (/usr/lib/llvm-<major>/bin), then `<name>-<major>` and `<name>` on PATH.
/// TK_ERROR_NOT_FOUND naming where it looked otherwise.
tk_status findLLVMTool(const std::string &name, const char *envVar,
                       std::string &path, std::string &error);

} // namespace tk::rocm

#endif // TK_BACKENDS_ROCM_COMPILER_COMPILER_H_
