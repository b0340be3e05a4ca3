//===- KernelCompile.cpp - the compiler half of libtk ---------------------===//
//
// What libtk.so adds to the runtime (KernelCompiler.h): kernels created from
// sources (prepare, key, cache or compile, load), autotuning and Triton's
// metadata. Registered as the process's KernelCompiler when libtk.so loads;
// libtk_runtime.so is built without this file.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/KernelCompile.h"

#include "tk/runtime/Autotune.h"
#include "tk/runtime/Buffer.h"
#include "tk/runtime/KernelCache.h"
#include "tk/runtime/KernelCompiler.h"
#include "tk/runtime/KernelSource.h"
#include "tk/runtime/Logging.h"
#include "tk/runtime/Runtime.h"
#include "tk/ttir/Import.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace tk::runtime;

Status tk::runtime::compileWithPlugin(Plugin &plugin, int32_t device,
                                      const PreparedKernel &prepared,
                                      const CompileSettings &settings,
                                      CompiledBinary &out) {
  const tk_backend_interface &api = plugin.getApi();
  if (!api.compile)
    return Status(TK_ERROR_UNSUPPORTED,
                  "plugin '" + plugin.getName() +
                      "' is driver-only (it loads packages): compiling '" +
                      prepared.entry + "' needs libtk_backend_" +
                      plugin.getName() + ".so");
  tk_plugin_compile_request request;
  std::memset(&request, 0, sizeof(request));
  request.struct_size = sizeof(request);
  request.module_bytecode = prepared.bytecode.data();
  request.module_size = prepared.bytecode.size();
  request.entry = prepared.entry.c_str();
  request.num_warps = settings.numWarps;
  request.num_stages = settings.numStages;
  request.device = device;
  request.dump_dir =
      settings.dumpDir.empty() ? nullptr : settings.dumpDir.c_str();
  request.min_programs_per_cu = settings.minProgramsPerCu;

  tk_plugin_binary binary;
  std::memset(&binary, 0, sizeof(binary));
  binary.struct_size = sizeof(binary);
  tk_status code = api.compile(&request, &binary);
  if (code != TK_SUCCESS)
    return plugin.makeError(code, "compile of '" + prepared.entry + "'");
  if (!binary.data || binary.size == 0) {
    api.binary_free(&binary);
    return Status(TK_ERROR_COMPILATION, plugin.getName() + ": compile of '" +
                                            prepared.entry +
                                            "' returned an empty binary");
  }
  const auto *bytes = static_cast<const uint8_t *>(binary.data);
  out.data.assign(bytes, bytes + binary.size);
  out.numWarps = binary.num_warps;
  out.sharedMemoryBytes = binary.shared_memory_bytes;
  out.registersPerThread = binary.registers_per_thread;
  api.binary_free(&binary);
  return Status::success();
}

Status tk::runtime::getDumpDir(const std::string &entry, const CacheKey &key,
                               std::string &out) {
  out.clear();
  const char *dir = std::getenv("TK_DUMP_IR");
  if (!dir || !*dir)
    return Status::success();
  // One folder a compile, named by its entry and its key: another kernel,
  // or the same one for another target or with other options, does not
  // overwrite these stages.
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path,
                          entry + "-" + KernelCache::toHex(key).substr(0, 12));
  // Asked for dumps and not getting them is worth an error, not a line in
  // a log nobody reads. create_directories succeeds on an existing file of
  // that name.
  std::error_code error = llvm::sys::fs::create_directories(path);
  if (!error && !llvm::sys::fs::is_directory(path))
    error = std::make_error_code(std::errc::not_a_directory);
  if (error)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "TK_DUMP_IR='" + std::string(dir) +
                      "' is not a folder tk can create: " + error.message());
  out = std::string(path);
  return Status::success();
}

Status tk::runtime::createKernelFromSource(Device &device, KernelCache &cache,
                                           const tk_kernel_source &source,
                                           const KernelOptions &options,
                                           Kernel **out) {
  PreparedKernel prepared;
  TK_RETURN_IF_ERROR(prepareKernel(source, options.constexprs, prepared,
                                   options.sourceName, options.checkBounds));

  // Everything that decides the generated code, and nothing else: the launch
  // never hashes, and two processes compiling the same kernel for the same
  // target with the same compiler share one disk entry. The target is the
  // plugin's (TK_CUDA_ARCH=sm_80 on an sm_90 device compiles for sm_80),
  // not the device's arch.
  const tk_backend_interface &api = device.getApi();
  std::string target;
  TK_RETURN_IF_ERROR(device.getPlugin().queryCompileTarget(
      device.getIndex(), device.getProps().arch, target));
  CacheKey key = CacheKeyBuilder()
                     .add("tk kernel")
                     .add(prepared.bytecode)
                     .add(prepared.entry)
                     .add(int64_t(options.numWarps))
                     .add(int64_t(options.numStages))
                     .add(int64_t(options.minProgramsPerCu))
                     .add(device.getPlugin().getName())
                     .add(target)
                     .add(api.compiler_version ? api.compiler_version : "")
                     .add(device.getPlugin().getBuildStamp())
                     .add(TK_VERSION_STRING)
                     .finish();

  std::string dumpDir;
  TK_RETURN_IF_ERROR(getDumpDir(prepared.entry, key, dumpDir));
  CompileSettings settings{options.numWarps, options.numStages,
                           options.minProgramsPerCu, dumpDir};
  auto compile = [&](CompiledBinary &binary) {
    return compileWithPlugin(device.getPlugin(), device.getIndex(), prepared,
                             settings, binary);
  };

  std::shared_ptr<const CompiledBinary> binary;
  KernelCache::Origin origin = KernelCache::Origin::Compiler;
  TK_RETURN_IF_ERROR(cache.getOrCompile(key, compile, binary, &origin,
                                        /*forceCompile=*/!dumpDir.empty()));
  void *executable = nullptr;
  Status loaded = loadKernelExecutable(device, prepared, *binary, &executable);
  if (!loaded.isOk() && origin != KernelCache::Origin::Compiler) {
    // A cached binary the plugin refuses (a plugin updated without changing
    // its compiler_version, say) is worth one fresh compile.
    getLogger().warn("cached binary for '{}' does not load ({}); recompiling",
                     prepared.entry, loaded.message());
    TK_RETURN_IF_ERROR(cache.getOrCompile(key, compile, binary, &origin,
                                          /*forceCompile=*/true));
    loaded = loadKernelExecutable(device, prepared, *binary, &executable);
  }
  TK_RETURN_IF_ERROR(loaded);

  Buffer *record = nullptr;
  if (prepared.boundsChecks) {
    size_t slots = std::max<size_t>(prepared.boundsChecks->sites.size(), 1);
    Status allocated = Buffer::create(device, slots * sizeof(int64_t), &record);
    if (!allocated.isOk()) {
      api.executable_unload(executable);
      return allocated;
    }
  }
  *out = Kernel::adopt(device, std::move(prepared), std::move(binary),
                       executable, origin, record);
  return Status::success();
}

namespace {
/// libtk.so's compiler: the runtime's kernel cache, Autotune.cpp, the TTIR
/// reader.
class LibtkCompiler final : public KernelCompiler {
public:
  Status createKernel(Device &device, const tk_kernel_source &source,
                      const KernelOptions &options, Kernel **out) override {
    Runtime *runtime = nullptr;
    TK_RETURN_IF_ERROR(Runtime::get(&runtime));
    return createKernelFromSource(device, runtime->getKernelCache(), source,
                                  options, out);
  }

  Status createAutotuned(tk_device device, const tk_kernel_source &source,
                         const tk_autotune_options &options,
                         tk_kernel *out) override {
    return tk::runtime::createAutotuned(device, source, options, out);
  }

  Status autotune(tk_device device, const tk_autotune_request *request,
                  tk_kernel *out, tk_autotune_result *result) override {
    return tk::runtime::autotune(device, request, out, result);
  }

  Status readTritonMetadata(std::string_view json, int32_t &numWarps,
                            int32_t &numStages) override {
    std::string error;
    mlir::FailureOr<tk::ttir::TritonMetadata> metadata =
        tk::ttir::parseTritonMetadata(llvm::StringRef(json.data(), json.size()),
                                      error);
    if (mlir::failed(metadata))
      return Status(TK_ERROR_INVALID_ARGUMENT, error);
    if (metadata->numWarps)
      numWarps = *metadata->numWarps;
    if (metadata->numStages)
      numStages = *metadata->numStages;
    return Status::success();
  }
};

/// Registered as libtk.so loads, before any tk.h call can reach the
/// runtime; never destroyed (kernels may outlive static destructors).
const bool registered = [] {
  static LibtkCompiler *compiler = new LibtkCompiler();
  registerKernelCompiler(*compiler);
  return true;
}();
} // namespace
