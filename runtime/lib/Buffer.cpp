//===- Buffer.cpp - device memory -----------------------------------------===//
//
// Allocation, wrapping and bounds-checked copies through the plugin.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/Buffer.h"

#include <memory>

using namespace tk::runtime;

Status Buffer::create(Device &device, size_t bytes, Buffer **out) {
  if (bytes == 0)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "a buffer needs at least one byte (0 requested)");
  void *pointer = nullptr;
  tk_status code =
      device.getApi().mem_alloc(device.getIndex(), bytes, &pointer);
  if (code != TK_SUCCESS)
    return device.getPlugin().makeError(
        code, "mem_alloc(" + std::to_string(bytes) + " bytes)");
  if (!pointer)
    return Status(TK_ERROR_OUT_OF_MEMORY,
                  device.getPlugin().getName() + ": mem_alloc(" +
                      std::to_string(bytes) + " bytes) returned NULL");
  *out = new Buffer(device, pointer, bytes, /*owned=*/true);
  return Status::success();
}

Status Buffer::wrap(Device &device, void *devicePointer, size_t bytes,
                    Buffer **out) {
  if (!devicePointer)
    return Status(TK_ERROR_INVALID_ARGUMENT, "device_pointer is NULL");
  if (bytes == 0)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "a wrapped buffer needs at least one byte (0 given)");
  *out = new Buffer(device, devicePointer, bytes, /*owned=*/false);
  return Status::success();
}

Status Buffer::release(Buffer *buffer) {
  std::unique_ptr<HandleObject> object(buffer);
  Status status;
  if (buffer->owned) {
    Device &device = buffer->device;
    tk_status code =
        device.getApi().mem_free(device.getIndex(), buffer->pointer);
    if (code != TK_SUCCESS)
      status = device.getPlugin().makeError(code, "mem_free");
  }
  buffer->pointer = nullptr;
  buffer->size = 0;
  retire(std::move(object));
  return status;
}

Status Buffer::checkRange(const char *what, size_t offset, size_t bytes) const {
  // Written so that offset + bytes cannot overflow.
  if (offset > size || bytes > size - offset)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  std::string(what) + " of " + std::to_string(bytes) +
                      " bytes at offset " + std::to_string(offset) +
                      " is outside the buffer of " + std::to_string(size) +
                      " bytes");
  return Status::success();
}

Status Buffer::write(size_t offset, const void *source, size_t bytes) {
  TK_RETURN_IF_ERROR(checkRange("write", offset, bytes));
  if (bytes == 0)
    return Status::success();
  if (!source)
    return Status(TK_ERROR_INVALID_ARGUMENT, "src is NULL");
  tk_status code = device.getApi().memcpy_host_to_device(
      device.getIndex(), static_cast<char *>(pointer) + offset, source, bytes);
  if (code != TK_SUCCESS)
    return device.getPlugin().makeError(code, "memcpy_host_to_device");
  return Status::success();
}

Status Buffer::read(size_t offset, void *destination, size_t bytes) const {
  TK_RETURN_IF_ERROR(checkRange("read", offset, bytes));
  if (bytes == 0)
    return Status::success();
  if (!destination)
    return Status(TK_ERROR_INVALID_ARGUMENT, "dst is NULL");
  tk_status code = device.getApi().memcpy_device_to_host(
      device.getIndex(), destination,
      static_cast<const char *>(pointer) + offset, bytes);
  if (code != TK_SUCCESS)
    return device.getPlugin().makeError(code, "memcpy_device_to_host");
  return Status::success();
}

Status Buffer::copyFrom(size_t offset, const Buffer &source,
                        size_t sourceOffset, size_t bytes) {
  TK_RETURN_IF_ERROR(checkRange("copy destination", offset, bytes));
  TK_RETURN_IF_ERROR(source.checkRange("copy source", sourceOffset, bytes));
  if (&source.device != &device)
    return Status(TK_ERROR_UNSUPPORTED,
                  "copies between devices (" +
                      std::to_string(source.device.getIndex()) + " to " +
                      std::to_string(device.getIndex()) +
                      ") are not supported; copy through the host");
  if (bytes == 0)
    return Status::success();
  tk_status code = device.getApi().memcpy_device_to_device(
      device.getIndex(), static_cast<char *>(pointer) + offset,
      static_cast<const char *>(source.pointer) + sourceOffset, bytes);
  if (code != TK_SUCCESS)
    return device.getPlugin().makeError(code, "memcpy_device_to_device");
  return Status::success();
}
