//===- DriverEntries.h - ABI entries that forward to a driver ---*- C++ -*-===//
//
// The entries of a GPU plugin's ABI table that only check their outputs and
// forward to the plugin's driver layer (driver/Device.h: free functions
// that report through an error string), written once for every plugin:
//
//   struct RocmDriver {
//     static constexpr const char *name = "tk-rocm";
//     static std::string &lastError();          // the thread's message
//     using CopyKind = tk::rocm::CopyKind;
//     static constexpr auto initializeDevices = &tk::rocm::initializeDevices;
//     ... one line per driver function DriverEntries calls
//   };
//   using Entries = tk::plugin::DriverEntries<RocmDriver>;
//
// and the table names `Entries::initialize`, `Entries::memAlloc`, ...
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_COMMON_DRIVERENTRIES_H_
#define TK_BACKENDS_COMMON_DRIVERENTRIES_H_

#include "tk/tk_plugin.h"

#include <string>
#include <utility>

namespace tk::plugin {

template <typename Driver> struct DriverEntries {
  static tk_status fail(tk_status status, std::string message) {
    Driver::lastError() = std::move(message);
    return status;
  }

  /// Runs a driver-layer call that reports through an error string.
  template <typename Fn> static tk_status call(Fn &&fn) {
    std::string error;
    tk_status status = fn(error);
    if (status != TK_SUCCESS)
      Driver::lastError() = std::move(error);
    return status;
  }

  static tk_status missing(const char *what) {
    return fail(TK_ERROR_INVALID_ARGUMENT,
                std::string(Driver::name) + ": " + what + " is NULL");
  }

  static const char *lastError() { return Driver::lastError().c_str(); }

  static tk_status initialize() {
    return call([](std::string &error) {
      return Driver::initializeDevices(error);
    });
  }

  static tk_status deviceCount(int32_t *out) {
    if (!out)
      return missing("out_count");
    *out = Driver::deviceCount();
    return TK_SUCCESS;
  }

  static tk_status deviceProps(int32_t device, tk_device_props *out) {
    if (!out || out->struct_size == 0)
      return fail(TK_ERROR_INVALID_ARGUMENT,
                  std::string(Driver::name) +
                      ": device_props needs a struct with struct_size set");
    return call([&](std::string &error) {
      return Driver::queryDeviceProps(device, out, error);
    });
  }

  static tk_status memAlloc(int32_t device, size_t bytes, void **out) {
    if (!out)
      return missing("out_pointer");
    return call([&](std::string &error) {
      return Driver::allocateMemory(device, bytes, out, error);
    });
  }

  static tk_status memFree(int32_t device, void *pointer) {
    return call([&](std::string &error) {
      return Driver::freeMemory(device, pointer, error);
    });
  }

  template <typename Driver::CopyKind kind>
  static tk_status memcpy(int32_t device, void *dst, const void *src,
                          size_t bytes) {
    return call([&](std::string &error) {
      return Driver::copyMemory(device, kind, dst, src, bytes, error);
    });
  }

  static tk_status streamCreate(int32_t device, void **out) {
    if (!out)
      return missing("out_stream");
    return call([&](std::string &error) {
      return Driver::createStream(device, out, error);
    });
  }

  static tk_status streamDestroy(int32_t device, void *stream) {
    return call([&](std::string &error) {
      return Driver::destroyStream(device, stream, error);
    });
  }

  static tk_status streamSynchronize(int32_t device, void *stream) {
    return call([&](std::string &error) {
      return Driver::synchronizeStream(device, stream, error);
    });
  }

  static tk_status deviceSynchronize(int32_t device) {
    return call([&](std::string &error) {
      return Driver::synchronizeDevice(device, error);
    });
  }

  static tk_status eventCreate(int32_t device, void **out) {
    if (!out)
      return missing("out_event");
    return call([&](std::string &error) {
      return Driver::createEvent(device, out, error);
    });
  }

  static tk_status eventDestroy(int32_t device, void *event) {
    return call([&](std::string &error) {
      return Driver::destroyEvent(device, event, error);
    });
  }

  static tk_status eventRecord(int32_t device, void *event, void *stream) {
    return call([&](std::string &error) {
      return Driver::recordEvent(device, event, stream, error);
    });
  }

  static tk_status eventSynchronize(int32_t device, void *event) {
    return call([&](std::string &error) {
      return Driver::synchronizeEvent(device, event, error);
    });
  }

  static tk_status eventElapsedMs(int32_t device, void *start, void *end,
                                  float *out) {
    if (!out)
      return missing("out_ms");
    return call([&](std::string &error) {
      return Driver::eventElapsedMs(device, start, end, out, error);
    });
  }
};

} // namespace tk::plugin

#endif // TK_BACKENDS_COMMON_DRIVERENTRIES_H_
