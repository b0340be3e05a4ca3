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
  *out = new Stream(device, native, /*owned=*/true);
  return Status::success();
}

Status Stream::wrap(Device &device, void *vendorStream, Stream **out) {
  Plugin &plugin = device.getPlugin();
  if (!plugin.hasStreamWrap())
    return Status(TK_ERROR_UNSUPPORTED,
                  "tk_stream_wrap: the " + plugin.getName() +
                      " backend has no native streams to wrap");
  if (!vendorStream)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "tk_stream_wrap: native_stream is NULL (the default "
                  "stream is tk's NULL stream; pass a stream the caller "
                  "made)");
  void *native = nullptr;
  tk_status code =
      device.getApi().stream_wrap(device.getIndex(), vendorStream, &native);
  if (code != TK_SUCCESS)
    return plugin.makeError(code, "stream_wrap");
  *out = new Stream(device, native, /*owned=*/false);
  return Status::success();
}

Status Stream::release(Stream *stream) {
  std::unique_ptr<HandleObject> object(stream);
  Device &device = stream->device;
  Status status;
  tk_status code =
      stream->owned
          ? device.getApi().stream_destroy(device.getIndex(), stream->native)
          : device.getApi().stream_unwrap(device.getIndex(), stream->native);
  if (code != TK_SUCCESS)
    status = device.getPlugin().makeError(
        code, stream->owned ? "stream_destroy" : "stream_unwrap");
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
