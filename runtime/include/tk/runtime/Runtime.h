//===- Runtime.h - the process-wide runtime ---------------------*- C++ -*-===//
//
// The runtime of the process: the backend chosen by TK_BACKEND, its devices
// and the kernel cache. The C API reaches everything through Runtime::get.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_RUNTIME_H_
#define TK_RUNTIME_RUNTIME_H_

#include "tk/runtime/Device.h"
#include "tk/runtime/KernelCache.h"
#include "tk/runtime/PluginLoader.h"

#include <memory>
#include <vector>

/// The tk release, part of every kernel cache key, is project(tk VERSION)
/// in the top CMakeLists.txt, which the tk target defines for its users.
#ifndef TK_VERSION_STRING
#error "TK_VERSION_STRING is defined by the tk target (link tk)"
#endif

namespace tk::runtime {

class Runtime {
public:
  /// The process's runtime. The first successful call selects the backend
  /// (TK_BACKEND, TK_BACKEND_PATH) and queries its devices; a failed
  /// selection is not remembered, so a later call tries again. After the
  /// first success this is one atomic load.
  static Status get(Runtime **out);

  Plugin &getPlugin() const { return plugin; }
  int getDeviceCount() const { return static_cast<int>(devices.size()); }
  /// Device `index`; TK_ERROR_NOT_FOUND naming the count when out of range.
  Status getDevice(int index, Device **out) const;
  KernelCache &getKernelCache() { return kernelCache; }

private:
  explicit Runtime(Plugin &plugin) : plugin(plugin) {}

  Plugin &plugin;
  std::vector<std::unique_ptr<Device>> devices;
  KernelCache kernelCache;
};

} // namespace tk::runtime

#endif // TK_RUNTIME_RUNTIME_H_
