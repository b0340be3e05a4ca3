//===- tk-info.cpp - list backend plugins and their devices ---------------===//
//
// The clinfo of tk: where plugins are searched for, which were found, whether
// each loads and has devices (ok / no device / error, with the message), the
// properties of every device, and which backend TK_BACKEND selects. Exits
// non-zero when no backend can be selected, with the reason.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/Device.h"
#include "tk/runtime/PluginLoader.h"
#include "tk/runtime/Runtime.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace tk::runtime;

static void printUsage() {
  std::printf(
      "usage: tk-info\n\n"
      "Lists the tk backend plugins found, their status and devices.\n\n"
      "Environment:\n"
      "  TK_BACKEND       backend name or comma-separated list to use\n"
      "                   (unset: first with a device of cuda, rocm, xe,\n"
      "                   vulkan, cpu); only the listed ones are probed\n"
      "  TK_BACKEND_PATH  colon-separated folders searched first\n"
      "  TK_LOG_LEVEL     trace, debug, info, warn, error, off\n");
}

static std::string formatBytes(int64_t bytes) {
  char text[64];
  if (bytes >= (int64_t(1) << 30))
    std::snprintf(text, sizeof(text), "%lld (%.1f GiB)", (long long)bytes,
                  double(bytes) / double(int64_t(1) << 30));
  else if (bytes >= (int64_t(1) << 10))
    std::snprintf(text, sizeof(text), "%lld (%.1f KiB)", (long long)bytes,
                  double(bytes) / 1024.0);
  else
    std::snprintf(text, sizeof(text), "%lld", (long long)bytes);
  return text;
}

/// A count the backend reports, or "n/a" where it reports 0 (a property the
/// device does not have, such as registers on a CPU).
static std::string formatCount(int64_t value, const char *unit = "") {
  if (value == 0)
    return "n/a";
  return std::to_string(value) + unit;
}

static void printDevice(const Plugin &plugin, const tk_device_props &props,
                        int index) {
  std::printf("    device %d: %s\n", index, props.name);
  std::printf("      vendor                   %s\n", props.vendor);
  std::printf("      arch                     %s\n", props.arch);
  // What kernels compile for (and the cache keys on): TK_CUDA_ARCH and its
  // kind change it without changing the device.
  std::string target;
  Status targeted = plugin.queryCompileTarget(index, props.arch, target);
  std::printf("      compile target           %s\n",
              targeted.isOk() ? target.c_str()
                              : ("error: " + targeted.message()).c_str());
  std::printf("      backend                  %s\n", props.backend);
  std::printf("      compute units            %d\n", props.compute_units);
  std::printf("      warp size                %d\n", props.warp_size);
  std::printf("      registers per CU         %s\n",
              formatCount(props.registers_per_cu).c_str());
  std::printf("      shared memory per block  %s\n",
              formatBytes(props.shared_memory_per_block).c_str());
  std::printf("      max threads per block    %d\n",
              props.max_threads_per_block);
  std::printf("      max grid                 %d x %d x %d\n",
              props.max_grid[0], props.max_grid[1], props.max_grid[2]);
  std::printf("      clock                    %s\n",
              formatCount(props.clock_mhz, " MHz").c_str());
  std::printf("      memory bus width         %s\n",
              formatCount(props.memory_bus_width_bits, " bits").c_str());
  std::printf("      L2 cache                 %s\n",
              formatBytes(props.l2_cache_bytes).c_str());
  std::printf("      total memory             %s\n",
              formatBytes(props.total_memory_bytes).c_str());
}

/// The names of the bits set in `mask`, from `names` (bit i → names[i]).
static std::string formatBits(uint32_t mask, llvm::ArrayRef<const char *> names,
                              const char *none) {
  std::string text;
  for (size_t bit = 0; bit < names.size(); ++bit)
    if (mask & (1u << bit))
      text += (text.empty() ? "" : " ") + std::string(names[bit]);
  return text.empty() ? none : text;
}

/// What the backend declares it supports (the conformance matrix's
/// UNSUPPORTED cells come from this).
static void printCapabilities(const Plugin &plugin, int32_t index) {
  tk_capabilities caps = {};
  caps.struct_size = sizeof(caps);
  Status queried = plugin.queryCapabilities(index, caps);
  if (!queried.isOk()) {
    std::printf("      capabilities             error: %s\n",
                queried.message().c_str());
    return;
  }
  if (!caps.known) {
    std::printf(
        "      capabilities             not declared (plugin ABI 1.0)\n");
    return;
  }
  std::printf("      dtypes                   %s\n",
              formatBits(caps.dtypes,
                         {"i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32",
                          "f64", "f8e4m3", "f8e5m2"},
                         "none")
                  .c_str());
  std::printf("      atomics                  %s\n",
              formatBits(caps.atomics,
                         {"add", "fadd", "max", "min", "umax", "umin", "and",
                          "or", "xor", "xchg", "cas"},
                         "none")
                  .c_str());
  std::printf("      fp8                      %s\n", caps.fp8 ? "yes" : "no");
  std::printf("      matrix units             %s\n",
              formatBits(caps.mma_kinds,
                         {"mma.sync", "wgmma", "mfma", "wmma", "dpas",
                          "cooperative_matrix"},
                         "none (dots are vector code)")
                  .c_str());
}

/// Opens and initialises one plugin and prints its status and devices.
static void probe(const PluginFile &file) {
  std::printf("  %s\n    path      %s\n", file.name.c_str(), file.path.c_str());
  Plugin *plugin = nullptr;
  Status opened = PluginLoader::openFile(file.path, file.name, &plugin);
  if (!opened.isOk()) {
    std::printf("    status    error (%s): %s\n", getStatusName(opened.code()),
                opened.message().c_str());
    return;
  }
  const tk_backend_interface &api = plugin->getApi();
  std::printf("    ABI       %u.%u\n", api.abi_major, api.abi_minor);
  std::printf("    compiler  %s\n",
              api.compiler_version ? api.compiler_version : "(unknown)");
  Status initialized = plugin->initialize();
  if (initialized.code() == TK_ERROR_NO_DEVICE) {
    std::printf("    status    no device: %s\n", initialized.message().c_str());
    return;
  }
  if (!initialized.isOk()) {
    std::printf("    status    error (%s): %s\n",
                getStatusName(initialized.code()),
                initialized.message().c_str());
    return;
  }
  std::printf("    status    ok, %d device(s)\n", plugin->getDeviceCount());
  for (int32_t index = 0; index < plugin->getDeviceCount(); ++index) {
    std::unique_ptr<Device> device;
    Status created = Device::create(*plugin, index, device);
    if (!created.isOk()) {
      std::printf("    device %d: error: %s\n", index,
                  created.message().c_str());
      continue;
    }
    printDevice(*plugin, device->getProps(), index);
    printCapabilities(*plugin, index);
  }
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
      printUsage();
      return 0;
    }
    std::fprintf(stderr, "tk-info: unknown option '%s'\n", argv[i]);
    printUsage();
    return 2;
  }

  PluginLoader loader;
  std::printf("tk %s, plugin ABI %u.%u\n", TK_VERSION_STRING,
              TK_PLUGIN_ABI_MAJOR, TK_PLUGIN_ABI_MINOR);
  std::printf("search path:\n");
  for (const std::string &dir : loader.getSearchPath())
    std::printf("  %s\n", dir.c_str());

  const char *spec = std::getenv("TK_BACKEND");
  bool restricted = spec && !llvm::StringRef(spec).trim().empty();
  llvm::SmallVector<llvm::StringRef> wanted;
  if (restricted)
    llvm::StringRef(spec).split(wanted, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef &name : wanted)
    name = name.trim();

  std::vector<PluginFile> plugins = loader.findPlugins();
  std::printf("plugins found: %zu\n", plugins.size());
  for (const PluginFile &file : plugins) {
    if (restricted && !llvm::is_contained(wanted, file.name)) {
      std::printf("  %s\n    path      %s\n    status    not probed (not in "
                  "TK_BACKEND=%s)\n",
                  file.name.c_str(), file.path.c_str(), spec);
      continue;
    }
    probe(file);
  }

  Plugin *selected = nullptr;
  Status status = loader.select(spec, &selected);
  if (!status.isOk()) {
    std::fflush(stdout);
    std::fprintf(stderr, "tk-info: no backend selected (%s): %s\n",
                 getStatusName(status.code()), status.message().c_str());
    return 1;
  }
  std::printf("selected backend: %s (%s)\n", selected->getName().c_str(),
              restricted ? "TK_BACKEND" : "first with a device");
  return 0;
}
