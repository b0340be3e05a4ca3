//===- Stream.h - an ordered queue of device work ---------------*- C++ -*-===//
//
// The object behind tk_stream: a plugin stream on one device. The device's
// default stream is the plugin's NULL stream and has no Stream object.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_STREAM_H_
#define TK_RUNTIME_STREAM_H_

#include "tk/runtime/Device.h"

namespace tk::runtime {

class Stream : public HandleObject {
public:
  static constexpr uint32_t kMagic = 0x746b5354; // "tkST"
  static constexpr const char *kHandleName = "stream";

  static Status create(Device &device, Stream **out);
  /// Adopts the caller's vendor stream (tk_stream_wrap); tk does not own it.
  static Status wrap(Device &device, void *vendorStream, Stream **out);
  /// Destroys the plugin stream (which waits for its work, as the plugin
  /// defines) or, for a wrapped one, forgets it; retires the handle either
  /// way, even when the plugin fails.
  static Status release(Stream *stream);

  Device &getDevice() const { return device; }
  /// The plugin's stream, passed to launch.
  void *getNative() const { return native; }

  Status synchronize();

  tk_stream toHandle() {
    return reinterpret_cast<tk_stream>(static_cast<HandleObject *>(this));
  }
  static Status fromHandle(tk_stream handle, Stream **out) {
    return lookupHandle(handle, out);
  }

private:
  Stream(Device &device, void *native, bool owned)
      : HandleObject(kMagic), device(device), native(native), owned(owned) {}

  Device &device;
  void *native;
  /// False for a wrapped stream: the caller made it and destroys it.
  bool owned;
};

} // namespace tk::runtime

#endif // TK_RUNTIME_STREAM_H_
