//===- PackageBuilder.cpp - kernels compiled ahead of time ----------------===//

#include "tk/runtime/PackageBuilder.h"

#include "tk/runtime/KernelCompile.h"
#include "tk/runtime/KernelSource.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

using namespace tk::runtime;

namespace {

/// The variable that picks a plugin's target without its hardware.
const char *getArchVariable(const std::string &backend) {
  if (backend == "cpu")
    return "TK_CPU_ARCH";
  if (backend == "cuda")
    return "TK_CUDA_ARCH";
  if (backend == "rocm")
    return "TK_ROCM_ARCH";
  if (backend == "xe")
    return "TK_XE_ARCH";
  if (backend == "vulkan")
    return "TK_VULKAN_SUBGROUP_SIZE";
  return nullptr;
}

/// Sets an environment variable for its life, then puts back what was
/// there: the plugins read their overrides at each compile.
class ScopedVariable {
public:
  ScopedVariable(const char *name, const std::string &value) : name(name) {
    if (!name || value.empty())
      return;
    if (const char *old = std::getenv(name))
      previous = old;
    setenv(name, value.c_str(), 1);
    set = true;
  }
  ~ScopedVariable() {
    if (!set)
      return;
    if (previous)
      setenv(name, previous->c_str(), 1);
    else
      unsetenv(name);
  }

private:
  const char *name;
  std::optional<std::string> previous;
  bool set = false;
};

} // namespace

Status PackageTarget::parse(const std::string &spec, PackageTarget &out) {
  out.spec = spec;
  size_t colon = spec.find(':');
  out.backend = spec.substr(0, colon);
  out.arch = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (out.backend.empty() || (colon != std::string::npos && out.arch.empty()))
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "target '" + spec + "': expected BACKEND or BACKEND:ARCH");
  if (!out.arch.empty() && !getArchVariable(out.backend))
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "target '" + spec + "': the " + out.backend +
                      " backend compiles for its host only; give '" +
                      out.backend + "' without an arch");
  if (out.backend == "vulkan" && !out.arch.empty()) {
    // The subgroup size, as tk-compile's --arch writes it too, and
    // "-coopmat" for a device with cooperative matrices.
    std::string lanes = out.arch;
    if (lanes.rfind("vk-sg", 0) == 0)
      lanes = lanes.substr(5);
    else if (lanes.rfind("sg", 0) == 0)
      lanes = lanes.substr(2);
    const std::string coopmat = "-coopmat";
    std::string suffix;
    if (lanes.size() > coopmat.size() &&
        lanes.compare(lanes.size() - coopmat.size(), coopmat.size(), coopmat) ==
            0) {
      suffix = coopmat;
      lanes.resize(lanes.size() - coopmat.size());
    }
    if (lanes.empty() ||
        lanes.find_first_not_of("0123456789") != std::string::npos)
      return Status(TK_ERROR_INVALID_ARGUMENT,
                    "target '" + spec +
                        "': a Vulkan target is a subgroup size (sg8, 16), "
                        "with -coopmat for cooperative matrices (32-coopmat)");
    out.arch = lanes + suffix;
  }
  return Status::success();
}

Status PackageBuilder::add(const std::vector<PackageTarget> &targets,
                           const tk_kernel_source &source,
                           const tk_compile_options *options,
                           const Progress &progress,
                           const std::string &packageEntry) {
  tk_compile_options resolved = {};
  if (options)
    std::memcpy(&resolved, options,
                std::min(options->struct_size, sizeof(resolved)));
  resolved.struct_size = sizeof(resolved);
  PreparedKernel prepared;
  TK_RETURN_IF_ERROR(prepareKernel(
      source,
      llvm::ArrayRef(resolved.constexprs,
                     resolved.constexprs ? resolved.num_constexprs : 0),
      prepared,
      resolved.source_name ? llvm::StringRef(resolved.source_name)
                           : llvm::StringRef(kDefaultSourceName)));
  if (!packageEntry.empty())
    TK_RETURN_IF_ERROR(renameEntry(prepared, packageEntry));

  tk::package::Kernel *kernel = nullptr;
  for (tk::package::Kernel &existing : package.kernels)
    if (existing.entry == prepared.entry)
      kernel = &existing;
  if (!kernel) {
    package.kernels.emplace_back();
    kernel = &package.kernels.back();
    kernel->entry = prepared.entry;
    kernel->numWarps = resolved.num_warps;
    kernel->numStages = resolved.num_stages;
    for (const KernelArgument &argument : prepared.arguments)
      kernel->arguments.push_back({argument.name, argument.typeName,
                                   static_cast<uint32_t>(argument.type),
                                   argument.divisibility, argument.alignment,
                                   argument.elementBytes});
  }
  for (const PackageTarget &target : targets) {
    std::string compileTarget;
    Status compiled =
        compile(target, prepared, resolved, *kernel, compileTarget);
    if (!compiled.isOk())
      return Status(compiled.code(),
                    "target '" + target.str() + "': " + compiled.message());
    if (progress)
      progress(target, compileTarget);
  }
  return Status::success();
}

Status PackageBuilder::compile(const PackageTarget &target,
                               const PreparedKernel &prepared,
                               const tk_compile_options &options,
                               tk::package::Kernel &kernel,
                               std::string &compileTarget) {
  Plugin *plugin = nullptr;
  TK_RETURN_IF_ERROR(loader.open(target.backend, &plugin));
  // Without hardware a plugin still compiles (NO_DEVICE): that is how one
  // machine builds for all.
  Status initialized = plugin->initialize();
  if (!initialized.isOk() && initialized.code() != TK_ERROR_NO_DEVICE)
    return initialized;

  ScopedVariable arch(getArchVariable(target.backend), target.arch);
  TK_RETURN_IF_ERROR(plugin->queryCompileTarget(0, target.arch, compileTarget));
  // A plugin that takes its device's own target over the variable (Vulkan,
  // where the device is seen) would build something else than asked.
  // The arch is a word of the target's name: "sm_90a", "gfx942 cov4",
  // "subgroup16 shared49152 ...", "x86_64-pc-linux-gnu x86-64-v2".
  // A Vulkan arch "32-coopmat" names "subgroup32" and cooperative
  // matrices ("coopmat.16x16x16.f16.f32" ...).
  std::string asked = target.arch;
  bool cooperativeMatrix = false;
  if (target.backend == "vulkan") {
    size_t suffix = asked.find("-coopmat");
    cooperativeMatrix = suffix != std::string::npos;
    asked = "subgroup" + asked.substr(0, suffix);
  }
  std::istringstream words(compileTarget);
  std::string word;
  bool named = false, hasCooperativeMatrix = false;
  while (words >> word) {
    named |= word == asked;
    hasCooperativeMatrix |= word.rfind("coopmat.", 0) == 0;
  }
  named &= hasCooperativeMatrix == cooperativeMatrix;
  if (!target.arch.empty() && !named)
    return Status(
        TK_ERROR_INVALID_ARGUMENT,
        "the " + target.backend + " plugin compiles for '" + compileTarget +
            "' (its device's own target) here; build for '" + target.backend +
            "' alone, or where the plugin sees no device");
  for (const tk::package::Binary &binary : kernel.binaries)
    if (binary.backend == target.backend && binary.target == compileTarget)
      return Status(TK_ERROR_INVALID_ARGUMENT,
                    "kernel '" + kernel.entry + "' is already built for " +
                        target.backend + " '" + compileTarget +
                        "' (two targets give one compile target)");
  CompiledBinary compiled;
  CompileSettings settings{options.num_warps, options.num_stages,
                           options.min_programs_per_cu, ""};
  TK_RETURN_IF_ERROR(
      compileWithPlugin(*plugin, 0, prepared, settings, compiled));

  const tk_backend_interface &api = plugin->getApi();
  tk::package::Binary binary;
  binary.backend = target.backend;
  binary.target = compileTarget;
  binary.compiler = api.compiler_version ? api.compiler_version : "";
  binary.numWarps = compiled.numWarps;
  binary.sharedMemoryBytes = compiled.sharedMemoryBytes;
  binary.registersPerThread = compiled.registersPerThread;
  binary.bytes.assign(compiled.data.begin(), compiled.data.end());
  kernel.binaries.push_back(std::move(binary));
  return Status::success();
}
