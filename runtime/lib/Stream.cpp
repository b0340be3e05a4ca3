//===- Stream.cpp - an ordered queue of device work -----------------------===//
//
// Stream creation, destruction and synchronisation through the plugin.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/Stream.h"

#include <memory>

using namespace tk::runtime;

Status Stream::create(Device &device, Stream **out) {
  void *native = nullptr;
  tk_status code = device.getApi().stream_create(device.getIndex(), &native);
  if (code != TK_SUCCESS)
    return device.getPlugin().makeError(code, "stream_create");
  *out = new Stream(device, native);
  return Status::success();
}

Status Stream::release(Stream *stream) {
  std::unique_ptr<HandleObject> object(stream);
  Device &device = stream->device;
  Status status;
  tk_status code =
      device.getApi().stream_destroy(device.getIndex(), stream->native);
  if (code != TK_SUCCESS)
    status = device.getPlugin().makeError(code, "stream_destroy");
  stream->native = nullptr;
  retire(std::move(object));
  return status;
}

Status Stream::synchronize() {
  tk_status code =
      device.getApi().stream_synchronize(device.getIndex(), native);
  if (code != TK_SUCCESS)
    return device.getPlugin().makeError(code, "stream_synchronize");
  return Status::success();
}
