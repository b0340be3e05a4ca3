//===- PluginLoader.cpp - find, open and select backend plugins -----------===//
//
// dlopen-based plugin discovery with the checks that turn a wrong or broken
// plugin into a status naming the file, instead of a crash.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/PluginLoader.h"

#include "common/DeviceProbe.h"

#include "tk/runtime/KernelCompiler.h"
#include "tk/runtime/Logging.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

using namespace tk::runtime;
namespace fs = std::filesystem;

/// libtk.so opens the full plugins, which compile; the runtime without a
/// compiler (libtk_runtime.so) opens their driver-only builds, which load
/// packages and link no compiler (KernelCompiler.h).
static std::string_view getPluginPrefix() {
  return getKernelCompiler() ? "libtk_backend_" : "libtk_driver_";
}
static constexpr std::string_view kSuffix = ".so";

/// `text` without the blanks around it.
static std::string_view trim(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\n\v\f\r");
  if (first == std::string_view::npos)
    return {};
  size_t last = text.find_last_not_of(" \t\n\v\f\r");
  return text.substr(first, last - first + 1);
}

/// The non-empty pieces of `text` between `separator`s, trimmed.
static std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  while (!text.empty()) {
    size_t end = text.find(separator);
    std::string_view part = trim(text.substr(0, end));
    if (!part.empty())
      parts.emplace_back(part);
    if (end == std::string_view::npos)
      break;
    text.remove_prefix(end + 1);
  }
  return parts;
}

static std::string join(const std::vector<std::string> &parts,
                        const char *separator) {
  std::string joined;
  for (const std::string &part : parts)
    joined += (joined.empty() ? "" : separator) + part;
  return joined;
}

/// The file `path` names with links and `..` resolved, or `path` itself
/// where that fails.
static std::string canonicalOr(const std::string &path) {
  std::error_code error;
  fs::path real = fs::canonical(path, error);
  return error ? path : real.string();
}

static std::string fileName(std::string_view name) {
  return std::string(getPluginPrefix()) + std::string(name) +
         std::string(kSuffix);
}
static constexpr const char *kEntryPoint = "tk_backend_get_interface";
static constexpr const char *kVersionPoint = "tk_backend_abi_version";

//===----------------------------------------------------------------------===//
// Plugin
//===----------------------------------------------------------------------===//

Status Plugin::makeError(tk_status code, std::string_view what) const {
  const char *detail = api->last_error ? api->last_error() : nullptr;
  std::string message = name + ": " + std::string(what);
  if (detail && *detail)
    message += ": " + std::string(detail);
  else
    message += std::string(" failed with ") + getStatusName(code);
  return Status(code, message);
}

Plugin::Plugin(std::string name, std::string path, void *library,
               const tk_backend_interface *api)
    : name(std::move(name)), path(std::move(path)), library(library), api(api) {
  std::error_code sizeError, timeError;
  uintmax_t size = fs::file_size(this->path, sizeError);
  fs::file_time_type modified = fs::last_write_time(this->path, timeError);
  if (sizeError || timeError) {
    buildStamp = "unknown build";
    return;
  }
  buildStamp = std::to_string(size) + "@" +
               std::to_string(modified.time_since_epoch().count());
}

bool Plugin::declaresCapabilities() const {
  // Fields are only appended, so a table from an older minor version simply
  // ends before the field: reading past its struct_size would read garbage.
  size_t end = offsetof(tk_backend_interface, get_capabilities) +
               sizeof(api->get_capabilities);
  return api->struct_size >= end && api->get_capabilities;
}

bool Plugin::hasEvents() const {
  size_t end = offsetof(tk_backend_interface, event_elapsed_ms) +
               sizeof(api->event_elapsed_ms);
  return api->struct_size >= end && api->event_create && api->event_destroy &&
         api->event_record && api->event_synchronize && api->event_elapsed_ms;
}

bool Plugin::hasStreamWrap() const {
  size_t end = offsetof(tk_backend_interface, stream_unwrap) +
               sizeof(api->stream_unwrap);
  return api->struct_size >= end && api->stream_wrap && api->stream_unwrap;
}

Status Plugin::queryCompileTarget(int32_t device, std::string_view fallback,
                                  std::string &out) const {
  size_t end = offsetof(tk_backend_interface, compile_target) +
               sizeof(api->compile_target);
  if (api->struct_size < end || !api->compile_target) {
    out = std::string(fallback);
    return Status::success();
  }
  // Targets are short ("sm_90a", "gfx942 cov5"); a name filling the buffer
  // is the plugin's error, reported rather than cut.
  char name[256] = {};
  if (tk_status code = api->compile_target(device, name, sizeof(name)))
    return makeError(code, "compile_target");
  if (std::memchr(name, '\0', sizeof(name)) == nullptr)
    return Status(TK_ERROR_INTERNAL,
                  getName() + ": compile_target wrote no NUL-terminated name");
  out = name;
  return Status::success();
}

Status Plugin::rankTarget(int32_t device, const std::string &own,
                          const std::string &candidate, int32_t &out) const {
  size_t end =
      offsetof(tk_backend_interface, target_rank) + sizeof(api->target_rank);
  if (api->struct_size < end || !api->target_rank) {
    out = candidate == own ? 2 : 0;
    return Status::success();
  }
  if (tk_status code = api->target_rank(device, candidate.c_str(), &out))
    return makeError(code, "target_rank('" + candidate + "')");
  if (out < 0 || out > 2)
    return Status(TK_ERROR_INTERNAL, getName() + ": target_rank gave " +
                                         std::to_string(out) +
                                         ", not 0, 1 or 2");
  return Status::success();
}

Status Plugin::queryNative(int32_t device, tk_device_native &out) const {
  size_t end = offsetof(tk_backend_interface, device_native) +
               sizeof(api->device_native);
  if (api->struct_size < end || !api->device_native)
    return Status(TK_ERROR_UNSUPPORTED,
                  "tk_device_get_native: the " + getName() +
                      " backend does not export its native device");
  // The plugin fills what it knows of the newest struct; the caller gets
  // the fields its own struct_size holds.
  tk_device_native full;
  std::memset(&full, 0, sizeof(full));
  full.struct_size = sizeof(full);
  if (tk_status code = api->device_native(device, &full))
    return makeError(code, "device_native(" + std::to_string(device) + ")");
  size_t callerSize = std::min(out.struct_size, sizeof(full));
  full.struct_size = callerSize;
  std::memcpy(&out, &full, callerSize);
  return Status::success();
}

Status Plugin::queryCapabilities(int32_t device, tk_capabilities &out) const {
  size_t callerSize = out.struct_size;
  std::memset(&out, 0, std::min(callerSize, sizeof(tk_capabilities)));
  out.struct_size = std::min(callerSize, sizeof(tk_capabilities));
  if (!declaresCapabilities())
    return Status::success();
  tk_backend_capabilities declared;
  std::memset(&declared, 0, sizeof(declared));
  declared.struct_size = sizeof(declared);
  tk_status code = api->get_capabilities(device, &declared);
  if (code != TK_SUCCESS)
    return makeError(code, "get_capabilities(" + std::to_string(device) + ")");
  // The plugin may be older than this runtime and fill fewer fields; those
  // it left out stay 0 ("absent"), as the ABI says.
  tk_capabilities full;
  std::memset(&full, 0, sizeof(full));
  full.struct_size = out.struct_size;
  full.known = 1;
  full.dtypes = declared.dtypes;
  full.atomics = declared.atomics;
  full.fp8 = declared.fp8;
  full.mma_kinds = declared.mma_kinds;
  full.max_tile_elements = declared.max_tile_elements;
  std::memcpy(&out, &full, out.struct_size);
  return Status::success();
}

Status Plugin::initialize() {
  std::lock_guard<std::mutex> lock(initMutex);
  if (initialized)
    return initStatus;
  initialized = true;
  tk_status code = api->initialize();
  if (code != TK_SUCCESS) {
    initStatus = makeError(code, "initialize");
    return initStatus;
  }
  int32_t count = 0;
  code = api->device_count(&count);
  if (code != TK_SUCCESS) {
    initStatus = makeError(code, "device_count");
    return initStatus;
  }
  // The runtime makes a Device of each up front: a count no machine has is
  // the plugin's bug, refused before it costs gigabytes.
  if (count > kMaxDevices) {
    initStatus = Status(TK_ERROR_PLUGIN, name + ": device_count reports " +
                                             std::to_string(count) +
                                             " devices; tk takes at "
                                             "most " +
                                             std::to_string(kMaxDevices));
    return initStatus;
  }
  deviceCount = std::max<int32_t>(count, 0);
  if (deviceCount == 0)
    initStatus = Status(TK_ERROR_NO_DEVICE, name + ": no device found");
  return initStatus;
}

//===----------------------------------------------------------------------===//
// Search path
//===----------------------------------------------------------------------===//

const std::vector<std::string> &PluginLoader::getDefaultOrder() {
  static const std::vector<std::string> order = {"cuda", "rocm", "xe", "vulkan",
                                                 "cpu"};
  return order;
}

/// The folder of the shared object holding this code (libtk.so), found with
/// dladdr, so that plugins next to an installed libtk are found without
/// configuration.
std::string PluginLoader::getLibraryDirectory() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&PluginLoader::getLibraryDirectory),
              &info) ||
      !info.dli_fname)
    return {};
  std::error_code error;
  fs::path path = fs::absolute(info.dli_fname, error);
  if (error)
    return {};
  return path.parent_path().string();
}

std::vector<std::string> PluginLoader::getDefaultSearchPath() {
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("TK_BACKEND_PATH"))
    candidates = split(env, ':');
  std::string libraryDir = getLibraryDirectory();
  if (!libraryDir.empty()) {
    candidates.push_back(libraryDir);
    // An installed tk keeps its plugins in <libdir>/tk (cmake --install,
    // the Debian package); a build tree has them next to libtk.so.
    std::error_code error;
    fs::path installed = fs::path(libraryDir) / "tk";
    if (fs::is_directory(installed, error))
      candidates.push_back(installed.string());
    candidates.push_back((fs::path(libraryDir) / ".." / "lib").string());
  }

  // Drop repeats (the build tree has plugins next to libtk.so, and dir/../lib
  // is often dir itself) so that messages list each folder once.
  std::vector<std::string> path;
  std::vector<std::string> seen;
  for (const std::string &dir : candidates) {
    if (dir.empty())
      continue;
    std::string key = canonicalOr(dir);
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      continue;
    seen.push_back(key);
    path.push_back(key);
  }
  return path;
}

PluginLoader::PluginLoader(std::vector<std::string> searchPath)
    : searchPath(std::move(searchPath)) {}

/// Plugin names are identifiers; anything else ("../x", "a b") cannot name a
/// plugin file and is reported as not found.
static bool isValidName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

std::vector<PluginFile> PluginLoader::findPlugins() const {
  std::vector<PluginFile> found;
  const std::string_view prefix = getPluginPrefix();
  for (const std::string &dir : searchPath) {
    std::error_code error;
    std::vector<PluginFile> inDir;
    for (fs::directory_iterator it(dir, error), end; !error && it != end;
         it.increment(error)) {
      std::string file = it->path().filename().string();
      if (file.size() <= prefix.size() + kSuffix.size() ||
          file.compare(0, prefix.size(), prefix) != 0 ||
          file.compare(file.size() - kSuffix.size(), kSuffix.size(), kSuffix) !=
              0)
        continue;
      std::string name = file.substr(
          prefix.size(), file.size() - prefix.size() - kSuffix.size());
      if (!isValidName(name))
        continue;
      bool shadowed =
          std::any_of(found.begin(), found.end(),
                      [&](const PluginFile &p) { return p.name == name; });
      if (!shadowed)
        inDir.push_back({name, it->path().string()});
    }
    std::sort(inDir.begin(), inDir.end(),
              [](const PluginFile &a, const PluginFile &b) {
                return a.name < b.name;
              });
    found.insert(found.end(), inDir.begin(), inDir.end());
  }
  return found;
}

std::string PluginLoader::describePlugins() const {
  std::vector<PluginFile> plugins = findPlugins();
  if (plugins.empty())
    return "none";
  std::string text;
  for (const PluginFile &plugin : plugins) {
    if (!text.empty())
      text += ", ";
    text += plugin.name + " (" + plugin.path + ")";
  }
  return text;
}

//===----------------------------------------------------------------------===//
// Opening
//===----------------------------------------------------------------------===//

namespace {
/// Every plugin opened by the process, by real path, so that two loaders (the
/// runtime, tk-info, a test) share one Plugin and one initialize().
struct PluginRegistry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<Plugin>> plugins;
};
} // namespace

static PluginRegistry &getRegistry() {
  // Leaked on purpose, like the plugins it holds.
  static PluginRegistry *registry = new PluginRegistry();
  return *registry;
}

/// The name of the first required function the table lacks, or null.
static const char *findMissingFunction(const tk_backend_interface &api) {
#define TK_REQUIRE(field)                                                      \
  if (!api.field)                                                              \
    return #field;
  TK_REQUIRE(last_error)
  TK_REQUIRE(initialize)
  TK_REQUIRE(device_count)
  TK_REQUIRE(device_props)
  TK_REQUIRE(mem_alloc)
  TK_REQUIRE(mem_free)
  TK_REQUIRE(memcpy_host_to_device)
  TK_REQUIRE(memcpy_device_to_host)
  TK_REQUIRE(memcpy_device_to_device)
  TK_REQUIRE(stream_create)
  TK_REQUIRE(stream_destroy)
  TK_REQUIRE(stream_synchronize)
  TK_REQUIRE(device_synchronize)
  TK_REQUIRE(binary_free)
  TK_REQUIRE(executable_load)
  TK_REQUIRE(executable_unload)
  TK_REQUIRE(launch)
#undef TK_REQUIRE
  // compile, validate and executable_occupancy are optional: a driver-only
  // plugin (libtk_driver_<name>.so) compiles nothing, and the runtime does
  // without the others.
  return nullptr;
}

Status PluginLoader::openFile(const std::string &path, const std::string &name,
                              Plugin **out) {
  std::string key = canonicalOr(path);

  PluginRegistry &registry = getRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.plugins.find(key);
  if (it != registry.plugins.end()) {
    *out = it->second.get();
    return Status::success();
  }

  getLogger().debug("opening plugin {}", key);
  // RTLD_NOW: an unresolved symbol is an error here, with dlerror's text,
  // rather than a crash at the first call. RTLD_LOCAL: plugins do not see
  // each other's symbols. A library that fails a check below stays loaded
  // (see Plugin): unloading code that may have run constructors is unsafe.
  void *library = dlopen(key.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *error = dlerror();
    return Status(TK_ERROR_PLUGIN, "cannot load plugin " + key + ": " +
                                       (error ? error : "unknown error"));
  }
  dlerror();
  auto getInterface = reinterpret_cast<tk_backend_get_interface_fn>(
      dlsym(library, kEntryPoint));
  if (!getInterface)
    return Status(TK_ERROR_PLUGIN,
                  "plugin " + key + " does not export the entry point '" +
                      kEntryPoint + "': it is not a tk backend plugin");
  auto getVersion = reinterpret_cast<tk_backend_abi_version_fn>(
      dlsym(library, kVersionPoint));

  const tk_backend_interface *api = getInterface(TK_PLUGIN_ABI_MAJOR);
  std::string ours = std::to_string(TK_PLUGIN_ABI_MAJOR);
  if (!api) {
    if (!getVersion)
      return Status(TK_ERROR_ABI_MISMATCH,
                    "plugin " + key + " refused plugin ABI version " + ours +
                        " (what this tk speaks) and does not export '" +
                        kVersionPoint +
                        "' to say which version it was built "
                        "for");
    uint32_t theirs = getVersion();
    if (theirs == TK_PLUGIN_ABI_MAJOR)
      return Status(TK_ERROR_PLUGIN,
                    "plugin " + key + " says it speaks plugin ABI version " +
                        ours + " but its '" + kEntryPoint + "' returned NULL");
    return Status(TK_ERROR_ABI_MISMATCH,
                  "plugin " + key + " was built for plugin ABI version " +
                      std::to_string(theirs) + ", but this tk speaks version " +
                      ours + ": rebuild the plugin against this tk");
  }
  if (api->abi_major != TK_PLUGIN_ABI_MAJOR)
    return Status(TK_ERROR_ABI_MISMATCH,
                  "plugin " + key + " returned an interface for plugin ABI " +
                      "version " + std::to_string(api->abi_major) +
                      ", but this tk speaks version " + ours);
  // A table of minor version 0 ends at `launch`; later minors append (the
  // capabilities of 1.1), and the runtime checks for those fields by size.
  constexpr size_t kMinor0Size = offsetof(tk_backend_interface, launch) +
                                 sizeof(tk_backend_interface::launch);
  if (api->struct_size < kMinor0Size)
    return Status(TK_ERROR_PLUGIN,
                  "plugin " + key + " returned an interface table of " +
                      std::to_string(api->struct_size) + " bytes; plugin ABI " +
                      ours + ".0 needs " + std::to_string(kMinor0Size));
  if (const char *missing = findMissingFunction(*api))
    return Status(TK_ERROR_PLUGIN, "plugin " + key +
                                       " lacks the required function '" +
                                       missing + "'");
  if (api->name && name != api->name)
    getLogger().warn("plugin {} calls itself '{}'; using the file's name '{}'",
                     key, api->name, name);

  auto plugin = std::make_unique<Plugin>(name, key, library, api);
  *out = plugin.get();
  registry.plugins.emplace(key, std::move(plugin));
  getLogger().debug("plugin {} ({}) speaks ABI {}.{}", name, key,
                    api->abi_major, api->abi_minor);
  return Status::success();
}

std::optional<std::string> PluginLoader::findFile(std::string_view name) const {
  if (!isValidName(name))
    return std::nullopt;
  for (const std::string &dir : searchPath) {
    fs::path path = fs::path(dir) / fileName(name);
    std::error_code error;
    if (fs::exists(path, error))
      return path.string();
  }
  return std::nullopt;
}

Status PluginLoader::open(std::string_view name, Plugin **out) const {
  if (std::optional<std::string> path = findFile(name))
    return openFile(*path, std::string(name), out);
  std::string path = searchPath.empty() ? "(empty)" : join(searchPath, ":");
  return Status(TK_ERROR_NOT_FOUND,
                "no backend plugin named '" + std::string(name) + "' (" +
                    fileName(name) + ") on the search path " + path +
                    "; plugins found: " + describePlugins());
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

Status PluginLoader::openAndInitialize(std::string_view name,
                                       Plugin **out) const {
  Plugin *plugin = nullptr;
  TK_RETURN_IF_ERROR(open(name, &plugin));
  TK_RETURN_IF_ERROR(plugin->initialize());
  *out = plugin;
  return Status::success();
}

Status PluginLoader::select(const char *spec, Plugin **out) const {
  std::string_view text = spec ? trim(spec) : std::string_view();
  bool automatic = text.empty();
  std::vector<std::string> names;
  if (automatic) {
    names = getDefaultOrder();
  } else {
    names = split(text, ',');
    // Only commas and spaces: a mistake, not a request for the default.
    if (names.empty())
      return Status(TK_ERROR_INVALID_ARGUMENT,
                    "TK_BACKEND='" + std::string(spec) +
                        "' names no backend; give a comma-separated list "
                        "(cuda, rocm, xe, vulkan, cpu) or leave it unset");
  }

  std::string attempts;
  Status last(TK_ERROR_NOT_FOUND, "no backend named");
  bool anyFound = false;
  for (const std::string &name : names) {
    Plugin *plugin = nullptr;
    // In the default order, a GPU backend without its device node is not
    // loaded at all: it would only say "no device", after 2-4 ms of
    // loading (the first tk_device_get on a machine without GPUs).
    std::initializer_list<const char *> nodes =
        tk::plugin::getDeviceNodes(name);
    std::string noNode;
    Status status = automatic &&
                            tk::plugin::noDeviceNode(name, nodes, noNode) &&
                            findFile(name).has_value()
                        ? Status(TK_ERROR_NO_DEVICE, noNode)
                        : openAndInitialize(name, &plugin);
    if (status.isOk()) {
      getLogger().info("backend '{}' selected ({}), {} device(s)", name,
                       plugin->getPath(), plugin->getDeviceCount());
      *out = plugin;
      return Status::success();
    }
    getLogger().debug("backend '{}' not usable: {}", name, status.message());
    if (status.code() != TK_ERROR_NOT_FOUND)
      anyFound = true;
    // When trying the default order, a plugin that is simply absent is the
    // normal case; only say so briefly.
    std::string what = automatic && status.code() == TK_ERROR_NOT_FOUND
                           ? name + ": not installed"
                           : status.message();
    attempts += (attempts.empty() ? "" : "; ") + what;
    last = std::move(status);
  }

  if (automatic) {
    std::string path = join(searchPath, ":");
    return Status(anyFound ? TK_ERROR_NO_DEVICE : TK_ERROR_NOT_FOUND,
                  "TK_BACKEND is unset and no backend of cuda, rocm, xe, "
                  "vulkan, cpu has a device (" +
                      attempts + "); search path " +
                      (path.empty() ? "(empty)" : path) +
                      "; plugins found: " + describePlugins());
  }
  if (names.size() == 1)
    return Status(last.code(),
                  "TK_BACKEND=" + std::string(text) + ": " + last.message());
  return Status(last.code(), "TK_BACKEND=" + std::string(text) +
                                 ": no listed backend is usable (" + attempts +
                                 ")");
}
