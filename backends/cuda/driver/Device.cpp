//===- Device.cpp - CUDA devices, contexts, memory and streams --*- C++ -*-===//
//
// Device discovery and properties, primary contexts, and the synchronous
// memory and stream calls of the plugin ABI.
//
//===----------------------------------------------------------------------===//

#include "driver/Device.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>

namespace tk::cuda {

namespace {

struct DeviceState {
  CUdevice handle = 0;
  /// Retained on first use: retaining creates the context, which costs
  /// memory on the GPU, so devices the process never touches get none.
  CUcontext context = nullptr;
};

struct Devices {
  std::once_flag initOnce;
  tk_status initStatus = TK_SUCCESS;
  std::string initError;
  int32_t count = 0;
  std::unique_ptr<DeviceState[]> states;
  std::mutex contextMutex;
};

Devices &devices() {
  static Devices instance;
  return instance;
}

/// The context current on this thread as far as the plugin made it so. A
/// cache: the driver keeps the truth, but asking it costs a call per launch.
thread_local CUcontext currentContext = nullptr;

tk_status initializeOnce(Devices &state, std::string &error) {
  if (tk_status status = openDriver(error))
    return status;
  CUresult result = driver().cuInit(0);
  if (result != CUDA_SUCCESS) {
    // cuInit fails with CUDA_ERROR_NO_DEVICE or a driver/kernel-module
    // mismatch on machines that have the library but no usable GPU.
    checkCuda(result, "cuInit", error);
    return TK_ERROR_NO_DEVICE;
  }
  int count = 0;
  TK_CU_RETURN_IF_ERROR(cuDeviceGetCount, &count);
  if (count <= 0) {
    error = "tk-cuda: the CUDA driver reports no devices";
    return TK_ERROR_NO_DEVICE;
  }
  state.states = std::make_unique<DeviceState[]>(count);
  for (int i = 0; i < count; ++i)
    TK_CU_RETURN_IF_ERROR(cuDeviceGet, &state.states[i].handle, i);
  state.count = count;
  return TK_SUCCESS;
}

tk_status getAttribute(CUdevice device, CUdevice_attribute attribute,
                       int &value, std::string &error) {
  TK_CU_RETURN_IF_ERROR(cuDeviceGetAttribute, &value, attribute, device);
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
    error = "tk-cuda: no CUDA device (initialize did not find one)";
    return TK_ERROR_NO_DEVICE;
  }
  if (device < 0 || device >= count) {
    error = "tk-cuda: device " + std::to_string(device) +
            " does not exist (there are " + std::to_string(count) + ")";
    return TK_ERROR_NOT_FOUND;
  }
  return TK_SUCCESS;
}

tk_status deviceComputeCapability(int32_t device, int &computeCapability,
                                  std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  CUdevice handle = devices().states[device].handle;
  int major = 0, minor = 0;
  if (tk_status status = getAttribute(
          handle, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, major, error))
    return status;
  if (tk_status status = getAttribute(
          handle, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, minor, error))
    return status;
  computeCapability = major * 10 + minor;
  return TK_SUCCESS;
}

tk_status queryDeviceProps(int32_t device, tk_device_props *out,
                           std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  CUdevice handle = devices().states[device].handle;
  tk_device_props props;
  std::memset(&props, 0, sizeof(props));

  char name[256] = {0};
  TK_CU_RETURN_IF_ERROR(cuDeviceGetName, name, sizeof(name) - 1, handle);
  copyString(props.name, name);
  copyString(props.vendor, "NVIDIA");
  copyString(props.backend, "cuda");
  int computeCapability = 0;
  if (tk_status status =
          deviceComputeCapability(device, computeCapability, error))
    return status;
  // The plain architecture: what the silicon is. The compile target may add
  // the "a" suffix (sm_90a) for architecture-specific instructions.
  copyString(props.arch, ("sm_" + std::to_string(computeCapability)).c_str());

  struct IntAttribute {
    CUdevice_attribute attribute;
    int32_t *field;
  };
  int clockKHz = 0, l2Bytes = 0, sharedPerBlock = 0;
  const IntAttribute attributes[] = {
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &props.compute_units},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &props.warp_size},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
       &props.registers_per_cu},
      // The opt-in maximum: what a kernel may use after raising
      // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, as tk's loads do.
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &sharedPerBlock},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &props.max_threads_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &props.max_grid[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &props.max_grid[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &props.max_grid[2]},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &clockKHz},
      {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
       &props.memory_bus_width_bits},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &l2Bytes},
  };
  for (const IntAttribute &entry : attributes) {
    int value = 0;
    if (tk_status status = getAttribute(handle, entry.attribute, value, error))
      return status;
    *entry.field = value;
  }
  props.clock_mhz = clockKHz / 1000;
  props.l2_cache_bytes = l2Bytes;
  props.shared_memory_per_block = sharedPerBlock;
  size_t totalBytes = 0;
  TK_CU_RETURN_IF_ERROR(cuDeviceTotalMem_v2, &totalBytes, handle);
  props.total_memory_bytes = static_cast<int64_t>(totalBytes);

  size_t callerSize = out->struct_size;
  props.struct_size = std::min(callerSize, sizeof(props));
  std::memcpy(out, &props, props.struct_size);
  return TK_SUCCESS;
}

tk_status makeDeviceCurrent(int32_t device, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  Devices &state = devices();
  CUcontext context;
  {
    std::lock_guard<std::mutex> lock(state.contextMutex);
    DeviceState &entry = state.states[device];
    if (!entry.context) {
      // Retained for the life of the process: the primary context is shared
      // with the CUDA runtime, and releasing it at exit races the
      // application's own teardown.
      TK_CU_RETURN_IF_ERROR(cuDevicePrimaryCtxRetain, &entry.context,
                            entry.handle);
    }
    context = entry.context;
  }
  return makeContextCurrent(context, error);
}

CUcontext deviceContext(int32_t device) {
  return devices().states[device].context;
}

tk_status makeContextCurrent(CUcontext context, std::string &error) {
  if (currentContext == context)
    return TK_SUCCESS;
  TK_CU_RETURN_IF_ERROR(cuCtxSetCurrent, context);
  currentContext = context;
  return TK_SUCCESS;
}

tk_status allocateMemory(int32_t device, size_t bytes, void **out,
                         std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  // cuMemAlloc refuses 0 bytes; a zero-sized buffer still needs a distinct
  // pointer, so it gets the smallest allocation.
  CUdeviceptr pointer = 0;
  TK_CU_RETURN_IF_ERROR(cuMemAlloc_v2, &pointer, bytes ? bytes : 1);
  *out = reinterpret_cast<void *>(pointer);
  return TK_SUCCESS;
}

tk_status freeMemory(int32_t device, void *pointer, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  if (!pointer)
    return TK_SUCCESS;
  TK_CU_RETURN_IF_ERROR(cuMemFree_v2, reinterpret_cast<CUdeviceptr>(pointer));
  return TK_SUCCESS;
}

tk_status copyMemory(int32_t device, CopyKind kind, void *dst, const void *src,
                     size_t bytes, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  if (bytes == 0)
    return TK_SUCCESS;
  if (!dst || !src) {
    error = "tk-cuda: memcpy with a NULL pointer";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  auto deviceDst = reinterpret_cast<CUdeviceptr>(dst);
  auto deviceSrc = reinterpret_cast<CUdeviceptr>(src);
  switch (kind) {
  case CopyKind::HostToDevice:
    // Ordered before later work on every stream that syncs with the legacy
    // default stream; the source may be reused once this returns.
    TK_CU_RETURN_IF_ERROR(cuMemcpyHtoD_v2, deviceDst, src, bytes);
    return TK_SUCCESS;
  case CopyKind::DeviceToHost:
    TK_CU_RETURN_IF_ERROR(cuMemcpyDtoH_v2, dst, deviceSrc, bytes);
    return TK_SUCCESS;
  case CopyKind::DeviceToDevice:
    // cuMemcpyDtoD returns before the copy completes; the ABI's copies are
    // complete on return, so wait for the default stream.
    TK_CU_RETURN_IF_ERROR(cuMemcpyDtoD_v2, deviceDst, deviceSrc, bytes);
    TK_CU_RETURN_IF_ERROR(cuStreamSynchronize, nullptr);
    return TK_SUCCESS;
  }
  return TK_SUCCESS;
}

tk_status createStream(int32_t device, void **out, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  // A blocking stream (not CU_STREAM_NON_BLOCKING): it syncs with the legacy
  // default stream, which the ABI's synchronous copies use, so a copy after
  // an asynchronous launch sees the kernel's results.
  CUstream stream = nullptr;
  TK_CU_RETURN_IF_ERROR(cuStreamCreate, &stream, CU_STREAM_DEFAULT);
  *out = stream;
  return TK_SUCCESS;
}

tk_status destroyStream(int32_t device, void *stream, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  if (!stream)
    return TK_SUCCESS;
  TK_CU_RETURN_IF_ERROR(cuStreamDestroy_v2, static_cast<CUstream>(stream));
  return TK_SUCCESS;
}

tk_status wrapStream(int32_t device, void *stream, void **out,
                     std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  // A stream of another context would launch tk's module, loaded in the
  // primary context, where it does not exist: refuse it by name.
  if (driver().cuStreamGetCtx) {
    CUcontext context = nullptr;
    TK_CU_RETURN_IF_ERROR(cuStreamGetCtx, static_cast<CUstream>(stream),
                          &context);
    if (context != deviceContext(device)) {
      error = "tk-cuda: the stream to wrap belongs to another CUDA context "
              "than device " +
              std::to_string(device) +
              "'s primary context (the one the CUDA runtime and PyTorch "
              "use)";
      return TK_ERROR_INVALID_ARGUMENT;
    }
  }
  *out = stream; // the plugin's streams are CUstreams
  return TK_SUCCESS;
}

tk_status synchronizeStream(int32_t device, void *stream, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  TK_CU_RETURN_IF_ERROR(cuStreamSynchronize, static_cast<CUstream>(stream));
  return TK_SUCCESS;
}

tk_status createEvent(int32_t device, void **out, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  // CU_EVENT_DEFAULT: timed, and synchronize waits by yielding the CPU.
  CUevent event = nullptr;
  TK_CU_RETURN_IF_ERROR(cuEventCreate, &event, CU_EVENT_DEFAULT);
  *out = event;
  return TK_SUCCESS;
}

tk_status destroyEvent(int32_t device, void *event, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  if (!event)
    return TK_SUCCESS;
  TK_CU_RETURN_IF_ERROR(cuEventDestroy_v2, static_cast<CUevent>(event));
  return TK_SUCCESS;
}

tk_status recordEvent(int32_t device, void *event, void *stream,
                      std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  TK_CU_RETURN_IF_ERROR(cuEventRecord, static_cast<CUevent>(event),
                        static_cast<CUstream>(stream));
  return TK_SUCCESS;
}

tk_status synchronizeEvent(int32_t device, void *event, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  TK_CU_RETURN_IF_ERROR(cuEventSynchronize, static_cast<CUevent>(event));
  return TK_SUCCESS;
}

tk_status eventElapsedMs(int32_t device, void *start, void *end, float *out,
                         std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  TK_CU_RETURN_IF_ERROR(cuEventElapsedTime_v2, out, static_cast<CUevent>(start),
                        static_cast<CUevent>(end));
  return TK_SUCCESS;
}

tk_status synchronizeDevice(int32_t device, std::string &error) {
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;
  TK_CU_RETURN_IF_ERROR(cuCtxSynchronize);
  return TK_SUCCESS;
}

} // namespace tk::cuda
