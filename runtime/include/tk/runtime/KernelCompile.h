//===- KernelCompile.h - kernels compiled from their source -----*- C++ -*-===//
//
// libtk.so's compile path (KernelCompile.cpp), which libtk_runtime.so has
// not: a kernel's prepared source compiled by its device's plugin, through
// a kernel cache.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_KERNELCOMPILE_H_
#define TK_RUNTIME_KERNELCOMPILE_H_

#include "tk/runtime/Kernel.h"
#include "tk/runtime/KernelCache.h"

#include <string>

namespace tk::runtime {

class KernelCache;
class Plugin;

/// The compile options a plugin's compile takes (0: its default).
struct CompileSettings {
  int32_t numWarps = 0;
  int32_t numStages = 0;
  int32_t minProgramsPerCu = 0;
  /// Non-empty: the plugin dumps each stage there (TK_DUMP_IR).
  std::string dumpDir;
};

/// Compiles `prepared` with `plugin` for its device `device` (the target
/// its compile_target names; a plugin without hardware compiles for its
/// stated default) into `out`. A driver-only plugin is
/// TK_ERROR_UNSUPPORTED.
Status compileWithPlugin(Plugin &plugin, int32_t device,
                         const PreparedKernel &prepared,
                         const CompileSettings &settings, CompiledBinary &out);

/// The folder TK_DUMP_IR asks a compile of `entry` to dump its stages into,
/// created, named by the entry and `key` (what decides its code); empty
/// when TK_DUMP_IR is unset. TK_ERROR_INVALID_ARGUMENT when it cannot be
/// made.
Status getDumpDir(const std::string &entry, const CacheKey &key,
                  std::string &out);

/// Prepares `source` (KernelSource.h), finds its binary in `cache` or
/// compiles it with the device's plugin, and loads it. TK_DUMP_IR=<dir>
/// makes the plugin dump each stage there (and skips the cache lookups, so
/// that a compile happens).
Status createKernelFromSource(Device &device, KernelCache &cache,
                              const tk_kernel_source &source,
                              const KernelOptions &options, Kernel **out);

} // namespace tk::runtime

#endif // TK_RUNTIME_KERNELCOMPILE_H_
