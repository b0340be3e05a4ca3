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
#include "tk/runtime/PluginLoader.h"
#include "tk/runtime/Status.h"
#include "tk/tk.h"

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
  std::string str() const {
    return arch.empty() ? backend : backend + ":" + arch;
  }
};

class PackageBuilder {
public:
  explicit PackageBuilder(PluginLoader loader = PluginLoader())
      : loader(std::move(loader)) {}

  /// Compiles kernel `source.entry` of `source` (text, bytecode or TTIR)
  /// with `options` (num_warps, num_stages, constexprs) for `target` and
  /// adds the binary to the package, with the kernel's signature the first
  /// time. Errors: the plugin's, or TK_ERROR_INVALID_ARGUMENT when two
  /// targets give one compile target.
  Status add(const PackageTarget &target, const tk_kernel_source &source,
             const tk_compile_options *options, std::string *compiledFor);

  const tk::package::Package &getPackage() const { return package; }

private:
  PluginLoader loader;
  tk::package::Package package;
};

} // namespace tk::runtime

#endif // TK_RUNTIME_PACKAGEBUILDER_H_
