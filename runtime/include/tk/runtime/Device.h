//===- Device.h - one device of the selected backend ------------*- C++ -*-===//
//
// The object behind tk_device: a device index of a plugin with the
// properties queried once when the backend was selected.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_DEVICE_H_
#define TK_RUNTIME_DEVICE_H_

#include "tk/runtime/Handle.h"
#include "tk/runtime/PluginLoader.h"

#include <memory>

namespace tk::runtime {

class Device : public HandleObject {
public:
  static constexpr uint32_t kMagic = 0x746b4456; // "tkDV"
  static constexpr const char *kHandleName = "device";

  /// Queries device `index` of `plugin` (which must be initialised).
  static Status create(Plugin &plugin, int32_t index,
                       std::unique_ptr<Device> &out);

  Plugin &getPlugin() const { return plugin; }
  const tk_backend_interface &getApi() const { return api; }
  int32_t getIndex() const { return index; }
  const tk_device_props &getProps() const { return props; }

  /// Waits for all work on every stream of the device.
  Status synchronize();

  tk_device toHandle() {
    return reinterpret_cast<tk_device>(static_cast<HandleObject *>(this));
  }
  static Status fromHandle(tk_device handle, Device **out) {
    return lookupHandle(handle, out);
  }

private:
  Device(Plugin &plugin, int32_t index, const tk_device_props &props)
      : HandleObject(kMagic), plugin(plugin), api(plugin.getApi()),
        index(index), props(props) {}

  Plugin &plugin;
  const tk_backend_interface &api;
  int32_t index;
  tk_device_props props;
};

} // namespace tk::runtime

#endif // TK_RUNTIME_DEVICE_H_
