//===- Device.h - Level Zero devices, memory, streams, events ---*- C++ -*-===//
//
// The Intel GPUs Level Zero reports, one context per driver (Intel's
// compute-runtime is one driver for all its GPUs), and the plugin ABI's
// memory, stream and event calls on them.
//
// A stream is an immediate command list: what is appended to it is
// submitted at once. Level Zero runs the commands of a list in order of
// submission but lets them overlap; tk appends a barrier before each of its
// commands (a launch, an event's timestamp), which makes a stream behave as
// a CUDA stream. The plugin's copies are synchronous: each waits for the
// work of tk's own streams first (CUDA's blocking streams and legacy default
// stream), then copies on a list of its own.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_XE_DRIVER_DEVICE_H_
#define TK_BACKENDS_XE_DRIVER_DEVICE_H_

#include "driver/Driver.h"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace tk::xe {

/// Opens the loader (openDriver), lists each driver's devices and keeps the
/// Intel GPUs (ZE_DEVICE_TYPE_GPU, vendor 0x8086) with their properties,
/// once per process; later calls return the first outcome.
/// TK_ERROR_NO_DEVICE (with the reason) without a usable loader or driver,
/// or when no driver reports an Intel GPU.
tk_status initializeDevices(std::string &error);

/// Devices found by initializeDevices (0 before it or when it failed).
int32_t deviceCount();

/// TK_ERROR_NO_DEVICE when initializeDevices found no device,
/// TK_ERROR_NOT_FOUND when `device` is not one of them.
tk_status checkDevice(int32_t device, std::string &error);

/// tk's target name for an Intel GPU's PCI device id: "pvc" (Data Center
/// GPU Max), "dg2" (Arc A-series, Flex), "" for any other, whose driver is
/// given the package's SPIR-V. Needs no device.
std::string targetForPciDeviceId(uint32_t pciDeviceId);

/// targetForPciDeviceId of `device`: the native binary a package must hold
/// for the device to load it instead of the SPIR-V.
tk_status deviceTarget(int32_t device, std::string &target, std::string &error);

/// The subgroup size tk compiles for on `device` (tk_device_props'
/// warp_size): its target's (compiler/TargetInfo.cpp: 16 on pvc, 8 on
/// dg2); on another GPU 16 where the device supports it, else the largest
/// size it reports.
tk_status deviceSubgroupSize(int32_t device, int32_t &subgroupSize,
                             std::string &error);

/// What loading and occupancy check a kernel against.
struct DeviceLimits {
  /// ze_device_properties_t.name, for messages.
  std::string name;
  /// Hardware threads of an EU in the default mode of 128 GRFs a thread
  /// (ze_device_properties_t.numThreadsPerEU): 8 on pvc and dg2. A kernel
  /// built for 256 GRFs (-ze-opt-large-register-file, "large GRF mode")
  /// gets half as many; Level Zero's core API has no device query for that
  /// mode, which is an option of each module's build.
  uint32_t threadsPerEU = 0;
  /// EUs of an Xe-core (a sub-slice): 8 on pvc, 16 on dg2.
  uint32_t eusPerXeCore = 0;
  /// Lanes of an EU's ALU, which is also the 32-bit values a GRF holds: 16
  /// on pvc (64-byte GRFs), 8 on dg2 (32-byte GRFs).
  uint32_t physicalSimdWidth = 0;
  /// Work-items of a workgroup.
  uint32_t maxGroupSize = 0;
  /// Bytes of SLM a workgroup may have, which on pvc (128 KiB) and dg2 (64
  /// KiB) is all an Xe-core has.
  uint32_t maxSharedLocalMemory = 0;
  uint32_t numSubgroupSizes = 0;
  uint32_t subgroupSizes[ZE_SUBGROUPSIZE_COUNT] = {};

  bool supportsSubgroupSize(uint32_t size) const;
  /// "8, 16 and 32", for messages.
  std::string subgroupSizesText() const;
};

tk_status deviceLimits(int32_t device, DeviceLimits &out, std::string &error);

/// The device's Level Zero handles, and the context (its driver's) its
/// modules, memory and events belong to.
tk_status deviceHandles(int32_t device, ze_context_handle_t &context,
                        ze_device_handle_t &handle, std::string &error);

/// Fills the fields of `out` that fit in its struct_size.
tk_status queryDeviceProps(int32_t device, tk_device_props *out,
                           std::string &error);

/// Device memory (zeMemAllocDevice, 64-byte aligned). A zero-byte buffer
/// still gets a distinct pointer.
tk_status allocateMemory(int32_t device, size_t bytes, void **out,
                         std::string &error);
/// Waits for the work of tk's streams on `device` (Level Zero must not free
/// what the device still uses), then frees `pointer`.
tk_status freeMemory(int32_t device, void *pointer, std::string &error);

enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };

/// Copies `bytes` and returns once the copy is complete (the plugin ABI's
/// copies are synchronous), after the work of tk's streams on `device`.
tk_status copyMemory(int32_t device, CopyKind kind, void *dst, const void *src,
                     size_t bytes, std::string &error);

/// A plugin stream: an immediate command list and what tk keeps beside it.
struct Stream {
  int32_t device = 0;
  ze_command_list_handle_t list = nullptr;
  /// False for a wrapped list (wrapStream): the caller's, never destroyed
  /// here, and not waited for by copies or synchronizeDevice.
  bool owned = true;
  /// Whether tk appended work since the stream was last waited for; a
  /// stream without any is not waited for again.
  bool pending = false;
  /// Signalled by the barrier synchronizeStream appends (Level Zero 1.0 has
  /// no call that waits for an immediate list).
  ze_event_pool_handle_t syncPool = nullptr;
  ze_event_handle_t syncEvent = nullptr;
  /// Held while appending: a command list must not be used by two threads
  /// at once.
  std::mutex mutex;
};

/// The Stream `handle` names on `device`: NULL is the device's default
/// stream (created on first use); another must belong to `device`.
tk_status resolveStream(int32_t device, void *handle, Stream *&out,
                        std::string &error);

/// Appends the barrier that orders the command appended next after all
/// earlier work on the list, and marks the stream as having work. The
/// caller holds stream.mutex.
tk_status beginStreamWork(Stream &stream, std::string &error);

/// An immediate command list of the device's compute engine, asynchronous.
tk_status createStream(int32_t device, void **out, std::string &error);
/// Waits for a stream's work, then destroys it; for a wrapped stream only
/// tk's own part (the caller's list lives on). NULL is the default stream,
/// which lives as long as the process.
tk_status destroyStream(int32_t device, void *stream, std::string &error);
tk_status synchronizeStream(int32_t device, void *stream, std::string &error);
/// The caller's ze_command_list_handle_t, an immediate command list of
/// `device`, as a plugin stream (tk_stream_wrap). Level Zero asks that a
/// list, the kernels appended to it and their events share a context, and
/// tk's are its driver's own (deviceHandles); loader 1.8 cannot tell a
/// list's device or context (zeCommandListGetDeviceHandle and
/// zeCommandListGetContextHandle are API 1.9), so both are taken on trust.
/// destroyStream releases what this made (stream_unwrap).
tk_status wrapStream(int32_t device, void *stream, void **out,
                     std::string &error);

/// Events: a timestamp the device writes when the work before it is done.
tk_status createEvent(int32_t device, void **out, std::string &error);
tk_status destroyEvent(int32_t device, void *event, std::string &error);
tk_status recordEvent(int32_t device, void *event, void *stream,
                      std::string &error);
tk_status synchronizeEvent(int32_t device, void *event, std::string &error);
tk_status eventElapsedMs(int32_t device, void *start, void *end, float *out,
                         std::string &error);
/// Waits for the work of tk's streams on `device` (the default stream and
/// those createStream made; wrapped lists are the caller's to wait for).
tk_status synchronizeDevice(int32_t device, std::string &error);

} // namespace tk::xe

#endif // TK_BACKENDS_XE_DRIVER_DEVICE_H_
