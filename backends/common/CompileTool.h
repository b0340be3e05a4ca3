//===- CompileTool.h - a backend's compiler behind tk-compile ---*- C++ -*-===//
//
// tk-compile (tools/tk-compile) reaches every backend's compiler without
// hardware or the runtime: each backend that takes part defines, in its
// tools/CompileTool.cpp,
//
//   tk_status tk::<backend>::runCompileTool(const tk::tool::CompileRequest &,
//                                           tk::tool::CompileResult &,
//                                           std::string &error);
//   extern const char *const tk::<backend>::kCompileToolArchs;
//   extern const char *const tk::<backend>::kCompileToolDefaultArch;
//
// and registers it with tk_add_compile_tool(<backend> ...) in its
// CMakeLists.txt.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_COMMON_COMPILETOOL_H_
#define TK_BACKENDS_COMMON_COMPILETOOL_H_

#include "tk/tk.h"

#include <string>

namespace tk::tool {

/// What to write: the native binary (`binary`: cubin, hsaco, SPIR-V, Xe's
/// package), its assembly (PTX, AMDGPU assembly, SPIR-V text, Xe's native
/// assembly), optimised LLVM IR, the SPIR-V module (`spirv`: backends that
/// compile through SPIR-V; the Vulkan binary is its SPIR-V), or the package
/// (`package`: the bytes the plugin's compile returns and the kernel cache
/// stores, as the fuzzers' seeds need them).
enum class Emit { Binary, Assembly, LLVM, SPIRV, Package };

struct CompileRequest {
  /// The tk module, MLIR text or bytecode.
  std::string source;
  std::string entry;
  /// The backend's name for the target ("gfx942", "sm_90a").
  std::string arch;
  int numWarps = 4;
  /// 0: the backend's default.
  int numStages = 0;
  /// Occupancy hint (tk_compile_options.min_programs_per_cu): at least this
  /// many programs should fit on one compute unit at once; 0: none.
  /// Backends that have no use for it ignore it.
  int minProgramsPerCu = 0;
  Emit emit = Emit::Binary;
  /// Non-empty: write each stage's IR into this folder.
  std::string dumpDir;
};

struct CompileResult {
  /// What `emit` asked for.
  std::string bytes;
  /// One line on the kernel's resources (registers, shared memory, spills,
  /// matrix instructions), which tk-compile prints to stderr.
  std::string summary;
};

/// A backend's entry in tk-compile's table.
struct BackendCompileTool {
  const char *name;
  /// The --arch values it takes, for the help text.
  const char *archs;
  /// The --arch tk-compile uses when none is given.
  const char *defaultArch;
  tk_status (*run)(const CompileRequest &, CompileResult &, std::string &);
};

} // namespace tk::tool

#endif // TK_BACKENDS_COMMON_COMPILETOOL_H_
