//===- Device.h - CUDA devices, contexts, memory and streams ----*- C++ -*-===//
//
// The devices the driver reports, each used through its primary context
// (the one the CUDA runtime and the frameworks share), made current on a
// thread the first time that thread touches the device.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CUDA_DRIVER_DEVICE_H_
#define TK_BACKENDS_CUDA_DRIVER_DEVICE_H_

#include "driver/Driver.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tk::cuda {

/// Opens the driver, calls cuInit and counts the devices, once per process;
/// later calls return the first outcome. TK_ERROR_NO_DEVICE (with the reason)
/// without a driver, when cuInit fails, or with zero devices.
tk_status initializeDevices(std::string &error);

/// Devices found by initializeDevices (0 before it or when it failed).
int32_t deviceCount();

/// TK_ERROR_NOT_FOUND unless initializeDevices succeeded and `device` is one
/// of its devices.
tk_status checkDevice(int32_t device, std::string &error);

/// Compute capability as major*10+minor (90 for an H100).
tk_status deviceComputeCapability(int32_t device, int &computeCapability,
                                  std::string &error);

/// Fills the fields of `out` that fit in its struct_size.
tk_status queryDeviceProps(int32_t device, tk_device_props *out,
                           std::string &error);

/// Makes the primary context of `device` current on the calling thread,
/// retaining it on first use. Cheap after the first call on a thread.
tk_status makeDeviceCurrent(int32_t device, std::string &error);

/// The primary context of `device`; makeDeviceCurrent must have succeeded
/// for it (on any thread).
CUcontext deviceContext(int32_t device);

/// Makes `context` current on the calling thread unless it already is.
/// Allocates nothing on success (the launch path calls it).
tk_status makeContextCurrent(CUcontext context, std::string &error);

tk_status allocateMemory(int32_t device, size_t bytes, void **out,
                         std::string &error);
tk_status freeMemory(int32_t device, void *pointer, std::string &error);

enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };

/// Copies `bytes` and returns once the copy is complete (the plugin ABI's
/// copies are synchronous).
tk_status copyMemory(int32_t device, CopyKind kind, void *dst, const void *src,
                     size_t bytes, std::string &error);

tk_status createStream(int32_t device, void **out, std::string &error);
tk_status destroyStream(int32_t device, void *stream, std::string &error);
tk_status synchronizeStream(int32_t device, void *stream, std::string &error);
/// The caller's CUstream as a plugin stream of `device` (tk_stream_wrap):
/// it must belong to the device's primary context.
tk_status wrapStream(int32_t device, void *stream, void **out,
                     std::string &error);

/// CUevents (with timing) on the primary context of `device`.
tk_status createEvent(int32_t device, void **out, std::string &error);
tk_status destroyEvent(int32_t device, void *event, std::string &error);
tk_status recordEvent(int32_t device, void *event, void *stream,
                      std::string &error);
tk_status synchronizeEvent(int32_t device, void *event, std::string &error);
tk_status eventElapsedMs(int32_t device, void *start, void *end, float *out,
                         std::string &error);
tk_status synchronizeDevice(int32_t device, std::string &error);

} // namespace tk::cuda

#endif // TK_BACKENDS_CUDA_DRIVER_DEVICE_H_
