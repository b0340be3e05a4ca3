//===- Device.h - HIP devices, memory, streams and events -------*- C++ -*-===//
//
// The devices the HIP runtime reports. HIP has no contexts to manage: each
// thread has a current device (hipSetDevice), which allocations, module
// loads and the default stream follow, so every call here makes the
// device it is about current first.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_ROCM_DRIVER_DEVICE_H_
#define TK_BACKENDS_ROCM_DRIVER_DEVICE_H_

#include "driver/Driver.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tk::rocm {

/// Opens the runtime, calls hipInit, counts the devices and reads each one's
/// gfx target, once per process; later calls return the first outcome.
/// TK_ERROR_NO_DEVICE (with the reason) without a usable runtime or when it
/// finds no AMD GPU.
tk_status initializeDevices(std::string &error);

/// Devices found by initializeDevices (0 before it or when it failed).
int32_t deviceCount();

/// TK_ERROR_NOT_FOUND unless initializeDevices succeeded and `device` is one
/// of its devices.
tk_status checkDevice(int32_t device, std::string &error);

/// The gfx target of `device` without its features: "gfx942", what packages
/// are compiled for.
tk_status deviceArch(int32_t device, std::string &arch, std::string &error);

/// The full target ID the runtime reports, features included:
/// "gfx942:sramecc+:xnack-".
tk_status deviceTargetId(int32_t device, std::string &targetId,
                         std::string &error);

/// Lanes of a wavefront: 64 on CDNA (gfx9), 32 on RDNA (gfx10+).
tk_status deviceWaveSize(int32_t device, int32_t &waveSize, std::string &error);

/// Fills the fields of `out` that fit in its struct_size.
tk_status queryDeviceProps(int32_t device, tk_device_props *out,
                           std::string &error);

/// Makes `device` the calling thread's current HIP device. The runtime
/// keeps that per thread and shares it with the application (PyTorch's
/// torch.cuda.set_device sets the same), so tk sets it on each call rather
/// than trusting a cache; hipSetDevice is cheap and allocates nothing.
tk_status makeDeviceCurrent(int32_t device, std::string &error);

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
/// The caller's hipStream_t as a plugin stream of `device` (tk_stream_wrap).
/// It must belong to `device`; runtimes older than ROCm 5.6 cannot say
/// which device a stream has (no hipStreamGetDevice), and the stream is
/// then taken on trust.
tk_status wrapStream(int32_t device, void *stream, void **out,
                     std::string &error);

/// hipEvents (with timing) on `device`.
tk_status createEvent(int32_t device, void **out, std::string &error);
tk_status destroyEvent(int32_t device, void *event, std::string &error);
tk_status recordEvent(int32_t device, void *event, void *stream,
                      std::string &error);
tk_status synchronizeEvent(int32_t device, void *event, std::string &error);
tk_status eventElapsedMs(int32_t device, void *start, void *end, float *out,
                         std::string &error);
tk_status synchronizeDevice(int32_t device, std::string &error);

} // namespace tk::rocm

#endif // TK_BACKENDS_ROCM_DRIVER_DEVICE_H_
