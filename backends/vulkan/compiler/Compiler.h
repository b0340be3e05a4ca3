//===- Compiler.h - tk module to a Vulkan SPIR-V package --------*- C++ -*-===//
//
// The Vulkan backend's compile pipeline: tk → core's register pipeline
// (tk::lowerToSIMT) at the device's subgroup size →
// tk-vulkan-convert-to-spirv → entry-point ABI and
// capabilities (MLIR's spirv passes) → SPIR-V binary, packaged as Package.h
// describes. Every stage can be dumped (TK_DUMP_IR).
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_VULKAN_COMPILER_COMPILER_H_
#define TK_BACKENDS_VULKAN_COMPILER_COMPILER_H_

#include "compiler/ConvertToSPIRV.h"
#include "compiler/Package.h"
#include "tk/tk.h"

#include <string>
#include <vector>

namespace tk::vulkan {

struct CompileInput {
  const void *module = nullptr;
  size_t size = 0;
  std::string entry;
  int numWarps = 4;
  DeviceTarget target;
  /// Non-empty: write each stage's IR here.
  std::string dumpDir;
  /// Non-null: receives the spirv.module as text (tk-compile --emit asm).
  std::string *spirvText = nullptr;
};

/// Compiles `input` into `out`. On failure returns TK_ERROR_INVALID_IR,
/// TK_ERROR_NOT_FOUND, TK_ERROR_UNSUPPORTED (a feature the device lacks) or
/// TK_ERROR_COMPILATION, with diagnostics and the stage in `error`.
tk_status compileToPackage(const CompileInput &input, Package &out,
                           std::string &error);

/// Runs `spirv-val --target-env vulkan1.3` (Khronos' validator, from
/// spirv-tools; $TK_SPIRV_VAL names another) on `words`. TK_ERROR_NOT_FOUND
/// when the validator is not installed, TK_ERROR_COMPILATION with its
/// output when the module is invalid.
tk_status validateSpirv(const std::vector<uint32_t> &words, std::string &error);

} // namespace tk::vulkan

#endif // TK_BACKENDS_VULKAN_COMPILER_COMPILER_H_
