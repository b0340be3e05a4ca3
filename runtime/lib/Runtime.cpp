//===- Runtime.cpp - the process-wide runtime -----------------------------===//
//
// Lazy, thread-safe selection of the backend and creation of its devices.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/Runtime.h"

#include "tk/runtime/Logging.h"

#include <atomic>
#include <cstdlib>
#include <mutex>

using namespace tk::runtime;

/// Published once, never freed: devices and kernels of the process point into
/// it, and plugins are never unloaded either.
static std::atomic<Runtime *> theRuntime{nullptr};
static std::mutex selectionMutex;

Status Runtime::get(Runtime **out) {
  if (Runtime *runtime = theRuntime.load(std::memory_order_acquire)) {
    *out = runtime;
    return Status::success();
  }
  std::lock_guard<std::mutex> lock(selectionMutex);
  if (Runtime *runtime = theRuntime.load(std::memory_order_acquire)) {
    *out = runtime;
    return Status::success();
  }

  PluginLoader loader;
  Plugin *plugin = nullptr;
  TK_RETURN_IF_ERROR(loader.select(std::getenv("TK_BACKEND"), &plugin));
  std::unique_ptr<Runtime> runtime(new Runtime(*plugin));
  for (int32_t index = 0; index < plugin->getDeviceCount(); ++index) {
    std::unique_ptr<Device> device;
    TK_RETURN_IF_ERROR(Device::create(*plugin, index, device));
    const tk_device_props &props = device->getProps();
    getLogger().info("device {}: {} ({}, {}), {} compute units", index,
                     props.name, props.vendor, props.arch, props.compute_units);
    runtime->devices.push_back(std::move(device));
  }
  *out = runtime.release();
  theRuntime.store(*out, std::memory_order_release);
  return Status::success();
}

Status Runtime::getDevice(int index, Device **out) const {
  if (index < 0 || index >= getDeviceCount())
    return Status(TK_ERROR_NOT_FOUND,
                  "no device " + std::to_string(index) + ": backend '" +
                      plugin.getName() + "' has " +
                      std::to_string(getDeviceCount()) + " device(s)");
  *out = devices[index].get();
  return Status::success();
}
