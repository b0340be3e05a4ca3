//===- Buffer.h - device memory ---------------------------------*- C++ -*-===//
//
// The object behind tk_buffer: a range of device memory the runtime
// allocated (and frees on release) or that the caller wrapped (and keeps).
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_BUFFER_H_
#define TK_RUNTIME_BUFFER_H_

#include "tk/runtime/Device.h"

namespace tk::runtime {

class Buffer : public HandleObject {
public:
  static constexpr uint32_t kMagic = 0x746b4246; // "tkBF"
  static constexpr const char *kHandleName = "buffer";

  /// Allocates `bytes` (> 0) on `device`.
  static Status create(Device &device, size_t bytes, Buffer **out);
  /// Wraps memory the caller owns; release leaves it alone.
  static Status wrap(Device &device, void *devicePointer, size_t bytes,
                     Buffer **out);
  /// Frees owned memory and retires the handle (see Handle.h). The handle is
  /// retired even when the free fails; the error is still returned.
  static Status release(Buffer *buffer);

  Device &getDevice() const { return device; }
  void *getDevicePointer() const { return pointer; }
  size_t getSize() const { return size; }

  Status write(size_t offset, const void *source, size_t bytes);
  Status read(size_t offset, void *destination, size_t bytes) const;
  /// Copies `bytes` from `source` at `sourceOffset` to this buffer at
  /// `offset`. Both must live on the same device.
  Status copyFrom(size_t offset, const Buffer &source, size_t sourceOffset,
                  size_t bytes);

  tk_buffer toHandle() {
    return reinterpret_cast<tk_buffer>(static_cast<HandleObject *>(this));
  }
  static Status fromHandle(tk_buffer handle, Buffer **out) {
    return lookupHandle(handle, out);
  }

private:
  Buffer(Device &device, void *pointer, size_t size, bool owned)
      : HandleObject(kMagic), device(device), pointer(pointer), size(size),
        owned(owned) {}

  /// OK when [offset, offset + bytes) lies inside the buffer.
  Status checkRange(const char *what, size_t offset, size_t bytes) const;

  Device &device;
  void *pointer;
  size_t size;
  bool owned;
};

} // namespace tk::runtime

#endif // TK_RUNTIME_BUFFER_H_
