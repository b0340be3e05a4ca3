//===- Compiler.h - tk module to SPIR-V and Intel native code ---*- C++ -*-===//
//
// The Xe backend's compile pipeline: tk → (Lowering.h) LLVM dialect → LLVM
// IR → O3 → LLVM's SPIR-V backend (OpenCL environment) → SPIR-V, then,
// where ocloc is installed, Intel's native code for the target
// (NativeCode.h), packaged as Package.h describes. Every stage can be
// dumped.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_XE_COMPILER_COMPILER_H_
#define TK_BACKENDS_XE_COMPILER_COMPILER_H_

#include "compiler/Lowering.h"
#include "compiler/NativeCode.h"
#include "compiler/Package.h"
#include "tk/tk.h"

#include <string>

namespace tk::xe {

/// What to compile: a tk module as MLIR bytecode or text.
struct CompileInput {
  const void *module = nullptr;
  size_t size = 0;
  /// The kernel to compile; it must exist in the module.
  std::string entry;
  LoweringOptions options;
  /// Build the native binary with ocloc where it is installed (a package
  /// then loads without a driver-side compile on its target).
  bool native = true;
  /// Non-empty: write each stage's IR into this folder.
  std::string dumpDir;
};

/// Where compileKernel stops (tk-compile --emit).
enum class CompileStage { LLVMIR, SPIRV, Native };

/// What compileKernel produced, up to the stage it stopped at.
struct CompiledKernel {
  LoweredKernel lowered;
  /// Bytes of SLM the module declares (its globals in OpenCL's local space).
  int slmBytes = 0;
  /// Optimised LLVM IR, printed.
  std::string llvmIR;
  /// The SPIR-V module (binary words) and its disassembly.
  std::string spirv;
  std::string spirvText;
  /// Intel's native code for the target, when built.
  bool haveNative = false;
  NativeReport native;
};

/// Compiles `input` up to and including `stopAfter`. On failure returns the
/// status (TK_ERROR_INVALID_IR, TK_ERROR_NOT_FOUND, TK_ERROR_UNSUPPORTED,
/// TK_ERROR_COMPILATION) and fills `error` with diagnostics and the stage.
tk_status compileKernel(const CompileInput &input, CompileStage stopAfter,
                        CompiledKernel &out, std::string &error);

/// compileKernel to SPIR-V (and native code when input.native and ocloc is
/// installed), packaged.
tk_status compileToPackage(const CompileInput &input, Package &out,
                           std::string &error);

/// The plugin's validate(): the package parses; `spirv-val` passes. With
/// TK_XE_VALIDATION=1, also Intel's tools, on a fresh build of the
/// package's SPIR-V: ocloc builds it for the package's target at the
/// package's SIMD width, and iga64's disassembly holds dpas when the
/// package says dots went to DPAS; the spill and scratch IGC reports are
/// written to `report`.
tk_status validatePackage(const void *data, size_t size, std::string &report,
                          std::string &error);

} // namespace tk::xe

#endif // TK_BACKENDS_XE_COMPILER_COMPILER_H_
