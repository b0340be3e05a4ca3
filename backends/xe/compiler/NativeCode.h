//===- NativeCode.h - SPIR-V to Intel's native code with ocloc --*- C++ -*-===//
//
// Intel's own tools, run on what tk produced: `spirv-val` on the SPIR-V,
// `ocloc` (Intel's offline compiler: IGC behind it) to a native binary for a
// target, and `iga64` (Intel's GPU assembler) on the binary's kernel heap.
// IGC's statistics of the kernel (its .cos dump: GRFs, scratch, DPAS, SIMD
// width) are read from a dump ocloc writes when IGC_ShaderDumpEnable is
// set. Without ocloc installed a package carries SPIR-V alone, which the
// Level Zero driver finalizes when the kernel is loaded.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_XE_COMPILER_NATIVECODE_H_
#define TK_BACKENDS_XE_COMPILER_NATIVECODE_H_

#include "compiler/Lowering.h"
#include "compiler/Package.h"
#include "tk/tk.h"

#include <string>

namespace tk::xe {

/// What IGC and iga64 say of one kernel for one target.
struct NativeReport {
  NativeBinary binary;
  /// IGC's: the SIMD width it compiled (must be the subgroup size), whether
  /// the kernel holds DPAS, bytes of SLM and of private memory a thread.
  int simdWidth = 0;
  bool hasDpas = false;
  int slmBytes = 0;
  int spillBytes = 0;
  /// iga64's disassembly of the kernel heap.
  std::string assembly;
  /// The options IGC built it with.
  std::string buildOptions;
};

/// IGC's option for 256 GRFs a thread.
inline constexpr const char *kLargeRegisterFileOption =
    "-ze-opt-large-register-file";

/// Whether ocloc is installed (TK_XE_OCLOC, else `ocloc` on PATH).
bool haveOcloc();

/// Whether spirv-val is installed (TK_XE_SPIRV_VAL, else on PATH).
bool haveSpirvVal();

/// `spirv-val` (TK_XE_SPIRV_VAL, else on PATH) on `spirv` under SPIR-V
/// 1.4's rules: TK_ERROR_COMPILATION with its message when it fails,
/// TK_ERROR_NOT_FOUND when it is not installed.
tk_status validateSpirv(const std::string &spirv, std::string &error);

/// ocloc's native binary of `spirv` for `target`, then iga64's disassembly
/// of `entry`'s kernel heap (counting dpas) and IGC's statistics.
/// TK_ERROR_NOT_FOUND when ocloc or iga64 is missing, TK_ERROR_COMPILATION
/// with ocloc's log when IGC refuses the module.
/// `buildOptions` go to IGC (ocloc -options).
tk_status buildNative(const std::string &spirv, const std::string &entry,
                      const Target &target, const std::string &buildOptions,
                      NativeReport &out, std::string &error);

/// buildNative with the default register file; where the kernel spills and
/// the target has the large register file, again with it, keeping the
/// build that spills less.
tk_status buildNativeLeastSpills(const std::string &spirv,
                                 const std::string &entry, const Target &target,
                                 NativeReport &out, std::string &error);

} // namespace tk::xe

#endif // TK_BACKENDS_XE_COMPILER_NATIVECODE_H_
