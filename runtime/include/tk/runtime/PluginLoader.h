//===- PluginLoader.h - find, open and select backend plugins ---*- C++ -*-===//
//
// Backends are shared objects, libtk_backend_<name>.so, exporting
// tk_backend_get_interface (tk_plugin.h). The loader finds them on a search
// path, opens them with a checked ABI, and applies TK_BACKEND to pick the one
// the process uses.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_PLUGINLOADER_H_
#define TK_RUNTIME_PLUGINLOADER_H_

#include "tk/runtime/Status.h"
#include "tk/tk_plugin.h"

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tk::runtime {

/// An opened plugin. Plugins are opened once per process (per file) and
/// never unloaded: their code registers itself with LLVM and vendor drivers,
/// and a dlclose would leave those registrations dangling.
class Plugin {
public:
  /// `path` is the file just loaded: its size and modification time are
  /// read now, for getBuildStamp.
  Plugin(std::string name, std::string path, void *library,
         const tk_backend_interface *api);

  /// The name from the file name ("cpu" for libtk_backend_cpu.so).
  const std::string &getName() const { return name; }
  const std::string &getPath() const { return path; }
  const tk_backend_interface &getApi() const { return *api; }
  /// The loaded file's size and modification time: part of the kernel cache
  /// key, since a rebuilt plugin may generate other code under the same
  /// compiler_version and must not be served its predecessor's binaries.
  const std::string &getBuildStamp() const { return buildStamp; }

  /// Calls the plugin's initialize() and device_count(), once per process;
  /// later calls return the first outcome. TK_SUCCESS means at least one
  /// device; TK_ERROR_NO_DEVICE means the plugin works but found none.
  Status initialize();

  /// Devices found by initialize() (0 before it or when it failed).
  /// The most devices a plugin may report: far beyond any machine (a node
  /// holds 8 to 16 GPUs), far below what would exhaust memory.
  static constexpr int32_t kMaxDevices = 4096;
  int32_t getDeviceCount() const { return deviceCount; }

  /// Whether the plugin's table reaches the ABI 1.1 get_capabilities field
  /// and fills it.
  bool declaresCapabilities() const;

  /// Whether the plugin's table reaches the ABI 1.2 event fields and fills
  /// all of them.
  bool hasEvents() const;
  /// Whether the table has stream_wrap and stream_unwrap (ABI 1.4).
  bool hasStreamWrap() const;

  /// What `device` supports. A plugin of ABI 1.0 (a table too small to hold
  /// get_capabilities) or one leaving it NULL gives `known` 0 and success:
  /// "capabilities unknown" is an answer, not an error. A plugin whose
  /// get_capabilities fails gives its error.
  Status queryCapabilities(int32_t device, tk_capabilities &out) const;

  /// The target the plugin compiles `device`'s code for (ABI 1.5
  /// compile_target), which the kernel cache keys on. A plugin of an older
  /// minor, or one leaving the entry NULL, gives `fallback` (the device's
  /// arch); a plugin whose compile_target fails gives its error.
  Status queryCompileTarget(int32_t device, std::string_view fallback,
                            std::string &out) const;

  /// The vendor objects behind `device` (ABI 1.6 device_native), the
  /// fields that fit in out.struct_size, which the caller set. A plugin of
  /// an older minor, or one leaving the entry NULL, is TK_ERROR_UNSUPPORTED.
  Status queryNative(int32_t device, tk_device_native &out) const;

  /// How well code compiled for `candidate` suits `device`, whose own
  /// compile target is `own` (ABI 1.7 target_rank): 2 its own target, 1 it
  /// runs there in a portable form, 0 it does not. A plugin of an older
  /// minor, or one leaving the entry NULL, gives 2 for `own` and 0 else.
  Status rankTarget(int32_t device, const std::string &own,
                    const std::string &candidate, int32_t &out) const;

  /// A failure of plugin call `what`, with the plugin's last_error() text:
  /// "cpu: compile: <plugin message>".
  Status makeError(tk_status code, std::string_view what) const;

private:
  std::string name;
  std::string path;
  void *library;
  const tk_backend_interface *api;
  std::string buildStamp;

  std::mutex initMutex;
  bool initialized = false;
  Status initStatus;
  int32_t deviceCount = 0;
};

/// A plugin file found on the search path.
struct PluginFile {
  std::string name;
  std::string path;
};

class PluginLoader {
public:
  /// The order tried when TK_BACKEND is unset: the first with a device wins.
  static const std::vector<std::string> &getDefaultOrder();

  /// TK_BACKEND_PATH (a colon-separated list), then the folder holding
  /// libtk.so itself, then that folder's ../lib; duplicates removed.
  static std::vector<std::string> getDefaultSearchPath();

  /// The folder holding libtk.so (found with dladdr), where a build tree
  /// keeps the plugins and tk-bytecode-check, and whose tk/ subfolder holds
  /// them once installed. Empty when it cannot be found.
  static std::string getLibraryDirectory();

  explicit PluginLoader(
      std::vector<std::string> searchPath = getDefaultSearchPath());

  const std::vector<std::string> &getSearchPath() const { return searchPath; }

  /// Every libtk_backend_<name>.so on the search path; where two folders
  /// hold the same name, the earlier folder wins (as when opening).
  std::vector<PluginFile> findPlugins() const;

  /// Opens the plugin `name` from the search path. TK_ERROR_NOT_FOUND lists
  /// the plugins that exist; see openFile for the other errors.
  Status open(std::string_view name, Plugin **out) const;
  /// The path of plugin `name` on the search path, if it is there.
  std::optional<std::string> findFile(std::string_view name) const;

  /// Opens one plugin file: TK_ERROR_PLUGIN when it does not load or lacks
  /// the entry point or a required function, TK_ERROR_ABI_MISMATCH when it
  /// was built for another plugin ABI (naming both versions).
  static Status openFile(const std::string &path, const std::string &name,
                         Plugin **out);

  /// Applies a TK_BACKEND value: one name or an ordered comma-separated list
  /// (the first that loads and has a device wins); NULL or empty tries
  /// getDefaultOrder(). The chosen plugin is initialised.
  Status select(const char *spec, Plugin **out) const;

  /// "cpu (/path/libtk_backend_cpu.so), ..." or "none", for messages.
  std::string describePlugins() const;

private:
  Status openAndInitialize(std::string_view name, Plugin **out) const;

  std::vector<std::string> searchPath;
};

} // namespace tk::runtime

#endif // TK_RUNTIME_PLUGINLOADER_H_
