//===- Runtime.h - the process-wide runtime ---------------------*- C++ -*-===//
//
// The runtime of the process: the backend chosen by TK_BACKEND, its devices
// and the kernel cache. The C API reaches everything through Runtime::get.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_RUNTIME_H_
#define TK_RUNTIME_RUNTIME_H_

#include "tk/runtime/Device.h"
#include "tk/runtime/PluginLoader.h"

#include <memory>
#include <mutex>
#include <vector>

/// The tk release, part of every kernel cache key, is project(tk VERSION)
/// in the top CMakeLists.txt, which the tk target defines for its users.
#ifndef TK_VERSION_STRING
#error "TK_VERSION_STRING is defined by the tk target (link tk)"
#endif

namespace tk::runtime {

class KernelCache;

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
  /// The kernel cache of compiled sources, made at the first call
  /// (KernelCache.cpp: a runtime that only loads packages has none).
  KernelCache &getKernelCache();

private:
  explicit Runtime(Plugin &plugin) : plugin(plugin) {}

  Plugin &plugin;
  std::vector<std::unique_ptr<Device>> devices;
  std::once_flag kernelCacheOnce;
  /// A shared_ptr, whose deleter is made with the cache: this header does
  /// not need the cache's type.
  std::shared_ptr<KernelCache> kernelCache;
};

} // namespace tk::runtime

#endif // TK_RUNTIME_RUNTIME_H_
