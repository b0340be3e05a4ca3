//===- Device.cpp - one device of the selected backend --------------------===//
//
// Device property queries and device-wide synchronisation.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/Device.h"

#include <cstring>

using namespace tk::runtime;

Status Device::create(Plugin &plugin, int32_t index,
                      std::unique_ptr<Device> &out) {
  tk_device_props props;
  std::memset(&props, 0, sizeof(props));
  props.struct_size = sizeof(props);
  tk_status code = plugin.getApi().device_props(index, &props);
  if (code != TK_SUCCESS)
    return plugin.makeError(code,
                            "device_props(" + std::to_string(index) + ")");
  // The plugin may leave the backend name out; the runtime knows it.
  if (props.backend[0] == '\0')
    std::strncpy(props.backend, plugin.getName().c_str(),
                 sizeof(props.backend) - 1);
  props.name[sizeof(props.name) - 1] = '\0';
  props.vendor[sizeof(props.vendor) - 1] = '\0';
  props.arch[sizeof(props.arch) - 1] = '\0';
  props.backend[sizeof(props.backend) - 1] = '\0';
  props.struct_size = sizeof(props);
  out.reset(new Device(plugin, index, props));
  return Status::success();
}

Status Device::synchronize() {
  tk_status code = api.device_synchronize(index);
  if (code != TK_SUCCESS)
    return plugin.makeError(code, "device_synchronize");
  return Status::success();
}
