//===- Compiler.h - tk module to a host object file -------------*- C++ -*-===//
//
// The CPU backend's compile pipeline: tk → loops → LLVM dialect → LLVM IR →
// O3 for the host CPU → relocatable object in memory.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CPU_COMPILER_COMPILER_H_
#define TK_BACKENDS_CPU_COMPILER_COMPILER_H_

#include "tk/tk.h"

#include <string>

namespace tk::cpu {

/// What to compile: a tk module as MLIR bytecode or text.
struct CompileInput {
  const void *module = nullptr;
  size_t size = 0;
  /// The kernel the caller will launch; it must exist in the module.
  std::string entry;
  /// Non-empty: write each stage's IR into this folder.
  std::string dumpDir;
};

/// Compiles `input` to an ELF relocatable object for the host CPU (or the
/// x86-64 level TK_CPU_ARCH names). On failure
/// returns the status and fills `error` with the diagnostics (and the stage
/// or pass that failed).
tk_status compileToObject(const CompileInput &input, std::string &object,
                          std::string &error);

/// compileToObject, then linked by ld.lld into the shared object the
/// driver loads (and packages carry).
tk_status compileToSharedObject(const CompileInput &input,
                                std::string &sharedObject, std::string &error);

/// Checks that `object` is an object file (relocatable or shared) with a
/// launch entry point.
tk_status validateObject(const void *object, size_t size, std::string &error);

/// The host CPU's name as LLVM knows it ("znver5", "skylake-avx512").
std::string hostCpuName();

/// What compiled code is made for: the host's triple, CPU and a hash of the
/// features LLVM detects ("x86_64-unknown-linux-gnu znver4 3f2a..."). Hosts
/// of one CPU name with features turned off (a VM) differ here.
std::string hostTargetName();

/// What compile makes code for now: the host (hostTargetName), or the
/// x86-64 level TK_CPU_ARCH names (DeviceTarget.h).
tk_status compileTargetName(std::string &name, std::string &error);

/// Initialises LLVM's native target once per process.
void initializeNativeTarget();

} // namespace tk::cpu

#endif // TK_BACKENDS_CPU_COMPILER_COMPILER_H_
