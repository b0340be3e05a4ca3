//===- Device.cpp - HIP devices, memory, streams and events -----*- C++ -*-===//
//
// Device discovery, the gfx target and properties, and the synchronous
// memory, stream and event calls of the plugin ABI.
//
//===----------------------------------------------------------------------===//

#include "driver/Device.h"

#include "common/DeviceProbe.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>

namespace tk::rocm {

namespace {

//===--- Where hipDeviceProp_t keeps gcnArchName --------------------------===//
//
// No device attribute gives the gfx target name ("gfx942:sramecc+:xnack-"):
// only hipDeviceProp_t.gcnArchName (char[256]) does, and the struct's layout
// depends on the runtime:
//
//  - hipGetDevicePropertiesR0600 (exported since ROCm 6.0, where
//    hip_runtime_api.h #defines hipGetDeviceProperties to it) fills
//    hipDeviceProp_tR0600: gcnArchName at byte 1160, struct of 1472 bytes;
//  - hipGetDeviceProperties (ROCm 5.x; kept in ROCm 6 for programs built
//    against 5.x, with the old layout, named hipDeviceProp_tR0000 in 6's
//    hip_deprecated.h) fills the old hipDeviceProp_t: gcnArchName at
//    byte 396, struct of 792 bytes.
//
// The offsets are offsetof() computed by g++ (x86-64 Linux, LP64) over the
// struct definitions of include/hip/hip_runtime_api.h and hip_deprecated.h
// in ROCm/HIP at the tags rocm-5.0.0, rocm-5.2.3 and rocm-5.7.1 (old layout:
// 396 in all three) and rocm-6.0.0 and rocm-6.2.2 (R0600: 1160; R0000: 396);
// ROCm 7's header still declares the same R0600 struct. The struct is
// written into a zeroed buffer much larger than either, so a runtime with a
// longer struct cannot write past it, and the name read is checked to be a
// terminated "gfx..." string before tk trusts it.
//
// The compute-capability attributes are no substitute: they hold the gfx
// version's major and minor digits only (gfx90a and gfx908 are both 9.0),
// so a wrong name would be worse than the error given instead.
constexpr size_t kArchNameOffsetR0600 = 1160;
constexpr size_t kArchNameOffsetLegacy = 396;
constexpr size_t kArchNameBytes = 256;
constexpr size_t kPropertiesBufferBytes = 4096;

struct DeviceState {
  hipDevice_t handle = 0;
  /// gcnArchName as the runtime reports it: "gfx90a:sramecc+:xnack-".
  std::string targetId;
  /// targetId up to its first ':': "gfx90a".
  std::string arch;
  int32_t waveSize = 0;
};

struct Devices {
  std::once_flag initOnce;
  tk_status initStatus = TK_SUCCESS;
  std::string initError;
  int32_t count = 0;
  std::unique_ptr<DeviceState[]> states;
};

Devices &devices() {
  static Devices instance;
  return instance;
}

tk_status getAttribute(int32_t device, hipDeviceAttribute_t attribute,
                       int &value, std::string &error) {
  TK_HIP_RETURN_IF_ERROR(hipDeviceGetAttribute, &value, attribute, device);
  return TK_SUCCESS;
}

/// Reads gcnArchName of `device` (see above) into `targetId`.
tk_status readTargetId(int32_t device, std::string &targetId,
                       std::string &error) {
  const DriverApi &api = driver();
  alignas(16) unsigned char properties[kPropertiesBufferBytes] = {};
  const char *call;
  size_t offset;
  hipError_t result;
  if (api.hipGetDevicePropertiesR0600) {
    call = "hipGetDevicePropertiesR0600";
    offset = kArchNameOffsetR0600;
    result = api.hipGetDevicePropertiesR0600(properties, device);
  } else {
    call = "hipGetDeviceProperties";
    offset = kArchNameOffsetLegacy;
    result = api.hipGetDeviceProperties(properties, device);
  }
  if (tk_status status = checkHip(result, call, error))
    return status;
  const char *name = reinterpret_cast<const char *>(properties + offset);
  size_t length = strnlen(name, kArchNameBytes);
  if (length == kArchNameBytes || std::strncmp(name, "gfx", 3) != 0) {
    error = std::string("tk-rocm: ") + call + " of " + runtimeDescription() +
            " holds no gfx target name at byte " + std::to_string(offset) +
            " of hipDeviceProp_t, where ROCm 5 and 6 keep gcnArchName: tk "
            "does not know this runtime's layout";
    return TK_ERROR_UNSUPPORTED;
  }
  targetId.assign(name, length);
  return TK_SUCCESS;
}

/// hipInit and hipGetDeviceCount, read together: on a machine with the
/// runtime but no AMD GPU (or no /dev/kfd), HIP 5.2's hipInit answers
/// hipErrorInvalidDevice and hipGetDeviceCount hipErrorNoDevice, the clearer
/// of the two.
tk_status countDevices(int &count, std::string &error) {
  const DriverApi &api = driver();
  hipError_t initResult = api.hipInit(0);
  count = 0;
  hipError_t countResult = api.hipGetDeviceCount(&count);
  auto nameOf = [&api](hipError_t result) {
    const char *name = api.hipGetErrorName(result);
    return std::string(name ? name : "unknown");
  };
  if (countResult == hipErrorNoDevice ||
      (countResult == hipSuccess && count <= 0)) {
    error = "tk-rocm: " + runtimeDescription() + " found no AMD GPU: ";
    if (countResult == hipErrorNoDevice)
      error += nameOf(countResult);
    else
      error += "hipGetDeviceCount reports 0 devices";
    if (initResult != hipSuccess)
      error += " (hipInit: " + nameOf(initResult) + ")";
    return TK_ERROR_NO_DEVICE;
  }
  // hipInit failing on a machine that has GPUs: a driver problem (the amdgpu
  // kernel module, permissions on /dev/kfd), still "no usable device".
  if (initResult != hipSuccess) {
    checkHip(initResult, "hipInit", error);
    error += " (" + runtimeDescription() + ")";
    return TK_ERROR_NO_DEVICE;
  }
  if (countResult != hipSuccess) {
    checkHip(countResult, "hipGetDeviceCount", error);
    error += " (" + runtimeDescription() + ")";
    return TK_ERROR_NO_DEVICE;
  }
  return TK_SUCCESS;
}

tk_status initializeOnce(Devices &state, std::string &error) {
  // HIP reaches AMD GPUs through the KFD node; without it hipInit only
  // costs time (16 ms) to say so.
  if (tk::plugin::noDeviceNode("rocm", tk::plugin::getDeviceNodes("rocm"),
                               error))
    return TK_ERROR_NO_DEVICE;
  if (tk_status status = openDriver(error))
    return status;
  int count = 0;
  if (tk_status status = countDevices(count, error))
    return status;
  auto states = std::make_unique<DeviceState[]>(count);
  for (int i = 0; i < count; ++i) {
    DeviceState &entry = states[i];
    // hipDeviceGet returns the ordinal itself in every HIP so far; asked
    // anyway where the runtime has it, as its contract is the handle.
    entry.handle = i;
    if (driver().hipDeviceGet)
      TK_HIP_RETURN_IF_ERROR(hipDeviceGet, &entry.handle, i);
    if (tk_status status = readTargetId(i, entry.targetId, error))
      return status;
    entry.arch = entry.targetId.substr(0, entry.targetId.find(':'));
    int waveSize = 0;
    if (tk_status status =
            getAttribute(i, hipDeviceAttributeWarpSize, waveSize, error))
      return status;
    entry.waveSize = waveSize;
  }
  state.states = std::move(states);
  state.count = count;
  return TK_SUCCESS;
}

/// Copies `text` into the fixed-size field `out`, always terminated.
template <size_t N> void copyString(char (&out)[N], const char *text) {
  std::strncpy(out, text, N - 1);
  out[N - 1] = '\0';
}

} // namespace

tk_status initializeDevices(std::string &error) {
  Devices &state = devices();
  std::call_once(state.initOnce, [&] {
    state.initStatus = initializeOnce(state, state.initError);
    if (state.initStatus != TK_SUCCESS)
      state.count = 0;
  });
  if (state.initStatus != TK_SUCCESS)
    error = state.initError;
  return state.initStatus;
}

int32_t deviceCount() { return devices().count; }

tk_status checkDevice(int32_t device, std::string &error) {
  int32_t count = deviceCount();
  if (count == 0) {
    error = "tk-rocm: no AMD GPU (initialize did not find one)";
    return TK_ERROR_NO_DEVICE;
  }
  if (device < 0 || device >= count) {
    error = "tk-rocm: device " + std::to_string(device) +
            " does not exist (there are " + std::to_string(count) + ")";
    return TK_ERROR_NOT_FOUND;
  }
  return TK_SUCCESS;
}

tk_status deviceArch(int32_t device, std::string &arch, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  arch = devices().states[device].arch;
  return TK_SUCCESS;
}

tk_status deviceTargetId(int32_t device, std::string &targetId,
                         std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  targetId = devices().states[device].targetId;
  return TK_SUCCESS;
}

tk_status deviceWaveSize(int32_t device, int32_t &waveSize,
                         std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  waveSize = devices().states[device].waveSize;
  return TK_SUCCESS;
}

tk_status queryDeviceProps(int32_t device, tk_device_props *out,
                           std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  const DeviceState &entry = devices().states[device];
  tk_device_props props;
  std::memset(&props, 0, sizeof(props));

  char name[256] = {0};
  TK_HIP_RETURN_IF_ERROR(hipDeviceGetName, name, sizeof(name) - 1,
                         entry.handle);
  copyString(props.name, name);
  copyString(props.vendor, "AMD");
  copyString(props.backend, "rocm");
  // The plain target, as packages name it; the features (sramecc, xnack)
  // are a property of the code object's build, checked when it loads.
  copyString(props.arch, entry.arch.c_str());

  struct IntAttribute {
    hipDeviceAttribute_t attribute;
    int32_t *field;
  };
  int clockKHz = 0, l2Bytes = 0, sharedPerBlock = 0;
  const IntAttribute attributes[] = {
      {hipDeviceAttributeMultiprocessorCount, &props.compute_units},
      {hipDeviceAttributeWarpSize, &props.warp_size},
      // AMD has no opt-in above the workgroup's LDS limit (64 KiB on CDNA3):
      // the limit is the opt-in maximum.
      {hipDeviceAttributeMaxSharedMemoryPerBlock, &sharedPerBlock},
      {hipDeviceAttributeMaxThreadsPerBlock, &props.max_threads_per_block},
      {hipDeviceAttributeMaxGridDimX, &props.max_grid[0]},
      {hipDeviceAttributeMaxGridDimY, &props.max_grid[1]},
      {hipDeviceAttributeMaxGridDimZ, &props.max_grid[2]},
      {hipDeviceAttributeClockRate, &clockKHz},
      {hipDeviceAttributeMemoryBusWidth, &props.memory_bus_width_bits},
      {hipDeviceAttributeL2CacheSize, &l2Bytes},
  };
  for (const IntAttribute &attribute : attributes) {
    int value = 0;
    if (tk_status status =
            getAttribute(device, attribute.attribute, value, error))
      return status;
    *attribute.field = value;
  }
  // The CU's registers: ROCm 6 answers the per-multiprocessor attribute;
  // HIP 5 refuses it (hipErrorInvalidValue) but gives the same figure,
  // availableRegistersPerCU, as the per-block one.
  int registers = 0;
  hipError_t result = driver().hipDeviceGetAttribute(
      &registers, hipDeviceAttributeMaxRegistersPerMultiprocessor, device);
  if (result == hipErrorInvalidValue) {
    if (tk_status status = getAttribute(
            device, hipDeviceAttributeMaxRegistersPerBlock, registers, error))
      return status;
  } else if (tk_status status = checkHip(
                 result, "hipDeviceGetAttribute (registers per CU)", error)) {
    return status;
  }
  props.registers_per_cu = registers;
  props.clock_mhz = clockKHz / 1000;
  props.l2_cache_bytes = l2Bytes;
  props.shared_memory_per_block = sharedPerBlock;
  size_t totalBytes = 0;
  TK_HIP_RETURN_IF_ERROR(hipDeviceTotalMem, &totalBytes, entry.handle);
  props.total_memory_bytes = static_cast<int64_t>(totalBytes);

  size_t callerSize = out->struct_size;
  props.struct_size = std::min(callerSize, sizeof(props));
  std::memcpy(out, &props, props.struct_size);
  return TK_SUCCESS;
}

tk_status makeDeviceCurrent(int32_t device, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  TK_HIP_RETURN_IF_ERROR(hipSetDevice, device);
  return TK_SUCCESS;
}

tk_status allocateMemory(int32_t device, size_t bytes, void **out,
                         std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  // hipMalloc of 0 bytes succeeds with NULL; a zero-sized buffer still needs
  // a distinct pointer, so it gets the smallest allocation.
  void *pointer = nullptr;
  TK_HIP_RETURN_IF_ERROR(hipMalloc, &pointer, bytes ? bytes : 1);
  *out = pointer;
  return TK_SUCCESS;
}

tk_status freeMemory(int32_t device, void *pointer, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  if (!pointer)
    return TK_SUCCESS;
  TK_HIP_RETURN_IF_ERROR(hipFree, pointer);
  return TK_SUCCESS;
}

tk_status copyMemory(int32_t device, CopyKind kind, void *dst, const void *src,
                     size_t bytes, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  if (bytes == 0)
    return TK_SUCCESS;
  if (!dst || !src) {
    error = "tk-rocm: memcpy with a NULL pointer";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  // hipMemcpy runs on the current device's default (NULL) stream, which
  // orders it after work on blocking streams, as tk's own streams are.
  switch (kind) {
  case CopyKind::HostToDevice:
    TK_HIP_RETURN_IF_ERROR(hipMemcpy, dst, src, bytes, hipMemcpyHostToDevice);
    return TK_SUCCESS;
  case CopyKind::DeviceToHost:
    TK_HIP_RETURN_IF_ERROR(hipMemcpy, dst, src, bytes, hipMemcpyDeviceToHost);
    return TK_SUCCESS;
  case CopyKind::DeviceToDevice:
    // A device-to-device cudaMemcpy may return before the copy is done, and
    // HIP documents no stronger promise for hipMemcpy; the ABI's copies are
    // complete on return, so wait for the default stream.
    TK_HIP_RETURN_IF_ERROR(hipMemcpy, dst, src, bytes, hipMemcpyDeviceToDevice);
    TK_HIP_RETURN_IF_ERROR(hipStreamSynchronize, nullptr);
    return TK_SUCCESS;
  }
  return TK_SUCCESS;
}

tk_status createStream(int32_t device, void **out, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  // A blocking stream (not hipStreamNonBlocking): it syncs with the default
  // stream, which the ABI's synchronous copies use, so a copy after an
  // asynchronous launch sees the kernel's results.
  hipStream_t stream = nullptr;
  TK_HIP_RETURN_IF_ERROR(hipStreamCreateWithFlags, &stream, hipStreamDefault);
  *out = stream;
  return TK_SUCCESS;
}

tk_status destroyStream(int32_t device, void *stream, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  if (!stream)
    return TK_SUCCESS;
  TK_HIP_RETURN_IF_ERROR(hipStreamDestroy, static_cast<hipStream_t>(stream));
  return TK_SUCCESS;
}

tk_status wrapStream(int32_t device, void *stream, void **out,
                     std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  // A stream of another device would launch tk's module, loaded for this
  // device, where it does not exist: refuse it by name where the runtime can
  // tell.
  if (driver().hipStreamGetDevice && stream) {
    hipDevice_t owner = 0;
    TK_HIP_RETURN_IF_ERROR(hipStreamGetDevice, static_cast<hipStream_t>(stream),
                           &owner);
    if (owner != devices().states[device].handle) {
      error = "tk-rocm: the stream to wrap belongs to HIP device " +
              std::to_string(owner) + ", not to device " +
              std::to_string(device);
      return TK_ERROR_INVALID_ARGUMENT;
    }
  }
  *out = stream; // the plugin's streams are hipStream_ts
  return TK_SUCCESS;
}

tk_status synchronizeStream(int32_t device, void *stream, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  TK_HIP_RETURN_IF_ERROR(hipStreamSynchronize,
                         static_cast<hipStream_t>(stream));
  return TK_SUCCESS;
}

tk_status createEvent(int32_t device, void **out, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  // hipEventCreate: hipEventDefault, which records timing.
  hipEvent_t event = nullptr;
  TK_HIP_RETURN_IF_ERROR(hipEventCreate, &event);
  *out = event;
  return TK_SUCCESS;
}

tk_status destroyEvent(int32_t device, void *event, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  if (!event)
    return TK_SUCCESS;
  TK_HIP_RETURN_IF_ERROR(hipEventDestroy, static_cast<hipEvent_t>(event));
  return TK_SUCCESS;
}

tk_status recordEvent(int32_t device, void *event, void *stream,
                      std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  TK_HIP_RETURN_IF_ERROR(hipEventRecord, static_cast<hipEvent_t>(event),
                         static_cast<hipStream_t>(stream));
  return TK_SUCCESS;
}

tk_status synchronizeEvent(int32_t device, void *event, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  TK_HIP_RETURN_IF_ERROR(hipEventSynchronize, static_cast<hipEvent_t>(event));
  return TK_SUCCESS;
}

tk_status eventElapsedMs(int32_t device, void *start, void *end, float *out,
                         std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  TK_HIP_RETURN_IF_ERROR(hipEventElapsedTime, out,
                         static_cast<hipEvent_t>(start),
                         static_cast<hipEvent_t>(end));
  return TK_SUCCESS;
}

tk_status synchronizeDevice(int32_t device, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  TK_HIP_RETURN_IF_ERROR(hipDeviceSynchronize);
  return TK_SUCCESS;
}

} // namespace tk::rocm
