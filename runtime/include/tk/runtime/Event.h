//===- Event.h - a marker in a stream's work --------------------*- C++ -*-===//
//
// The object behind tk_event: a plugin event on one device (ABI 1.2).
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_EVENT_H_
#define TK_RUNTIME_EVENT_H_

#include "tk/runtime/Device.h"
#include "tk/runtime/Stream.h"

namespace tk::runtime {

class Event : public HandleObject {
public:
  static constexpr uint32_t kMagic = 0x746b4556; // "tkEV"
  static constexpr const char *kHandleName = "event";

  /// TK_ERROR_UNSUPPORTED when the device's plugin has no events.
  static Status create(Device &device, Event **out);
  /// Destroys the plugin event and retires the handle, even when the
  /// destroy fails.
  static Status release(Event *event);

  Device &getDevice() const { return device; }

  /// Records after the work enqueued on `stream` (null: the default one).
  Status record(Stream *stream);
  Status synchronize();
  /// Milliseconds from `start` to `end` (same device, both recorded).
  static Status elapsedMs(Event &start, Event &end, float &out);

  tk_event toHandle() {
    return reinterpret_cast<tk_event>(static_cast<HandleObject *>(this));
  }
  static Status fromHandle(tk_event handle, Event **out) {
    return lookupHandle(handle, out);
  }

private:
  Event(Device &device, void *native)
      : HandleObject(kMagic), device(device), native(native) {}

  Device &device;
  void *native;
  bool recorded = false;
};

} // namespace tk::runtime

#endif // TK_RUNTIME_EVENT_H_
