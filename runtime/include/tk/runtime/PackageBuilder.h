//===- PackageBuilder.h - kernels compiled ahead of time --------*- C++ -*-===//
//
// What `tk-compile --package` does: each kernel compiled by each target's
// plugin, the plugin's compile_target recorded beside the binary so that
// tk_kernel_create (TK_SOURCE_PACKAGE) gives each device the binary built
// for what it reports. A target is a plugin and, optionally, the arch its
// override variable selects (TK_CUDA_ARCH, TK_ROCM_ARCH, TK_XE_ARCH,
// TK_VULKAN_SUBGROUP_SIZE), so that one machine builds for devices it does
// not have; without an arch the plugin compiles for its device 0, or for its
// stated default where it has none. Setting those variables makes a builder
// unsafe to use while other threads of the process compile or read the
// environment: it is for tools such as tk-compile.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_PACKAGEBUILDER_H_
#define TK_RUNTIME_PACKAGEBUILDER_H_

#include "tk/package/Package.h"
#include "tk/runtime/KernelSignature.h"
#include "tk/runtime/PluginLoader.h"
#include "tk/runtime/Status.h"
#include "tk/tk.h"

#include <functional>
#include <string>
#include <vector>

namespace tk::runtime {

/// `backend` or `backend:arch`, as tk-compile's --target takes it.
struct PackageTarget {
  std::string backend;
  /// As the plugin's override variable takes it (Vulkan: the lanes alone).
  std::string arch;
  /// As given.
  std::string spec;

  /// Parses `spec`; TK_ERROR_INVALID_ARGUMENT for an empty backend or arch,
  /// or an arch for a backend without an override (cpu).
  static Status parse(const std::string &spec, PackageTarget &out);
  const std::string &str() const { return spec; }
};

class PackageBuilder {
public:
  explicit PackageBuilder(PluginLoader loader = PluginLoader())
      : loader(std::move(loader)) {}

  /// Called after each target's compile with the compile target it gave.
  using Progress = std::function<void(const PackageTarget &target,
                                      const std::string &compileTarget)>;

  /// Reads kernel `source.entry` of `source` (text, bytecode or TTIR) once,
  /// with `options` (num_warps, num_stages, constexprs), compiles it for
  /// each of `targets` and adds the binaries to the package, with the
  /// kernel's signature. `packageEntry`, when given, is the name the kernel
  /// has in the package (renameEntry): several specialisations of one
  /// source side by side. Errors: the source's, the plugin's (prefixed with
  /// the target), or TK_ERROR_INVALID_ARGUMENT when two targets give one
  /// compile target.
  Status add(const std::vector<PackageTarget> &targets,
             const tk_kernel_source &source, const tk_compile_options *options,
             const Progress &progress = nullptr,
             const std::string &packageEntry = "");

  const tk::package::Package &getPackage() const { return package; }

private:
  /// Compiles `prepared` for `target` into `kernel`.
  Status compile(const PackageTarget &target, const PreparedKernel &prepared,
                 const tk_compile_options &options, tk::package::Kernel &kernel,
                 std::string &compileTarget);

  PluginLoader loader;
  tk::package::Package package;
};

} // namespace tk::runtime

#endif // TK_RUNTIME_PACKAGEBUILDER_H_
