//===- Executable.cpp - a loaded CUDA kernel --------------------*- C++ -*-===//
//
// Module loading with the PTX fallback, the kernel's attributes, occupancy
// and the launch.
//
//===----------------------------------------------------------------------===//

#include "driver/Executable.h"
#include "compiler/Package.h"
#include "driver/Device.h"

namespace tk::cuda {

namespace {

/// Static shared memory plus this much dynamic shared memory needs no
/// opt-in; above it, cuFuncSetAttribute must raise the kernel's limit (CUDA
/// C Programming Guide, "Shared Memory", compute capability 7.x and later).
constexpr unsigned kDefaultDynamicSharedLimit = 48 * 1024;

/// Bytes of the JIT's error log (cuModuleLoadDataEx writes it on failure).
constexpr unsigned kJitLogBytes = 8192;

/// Loads `image` (a cubin or NUL-terminated PTX) and keeps the JIT's error
/// log in `log` on failure.
CUresult loadModule(const void *image, CUmodule &module, std::string &log) {
  std::string buffer(kJitLogBytes, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {buffer.data(), reinterpret_cast<void *>(
                                       static_cast<uintptr_t>(buffer.size()))};
  CUresult result =
      driver().cuModuleLoadDataEx(&module, image, 2, options, values);
  if (result != CUDA_SUCCESS)
    log.assign(buffer.c_str());
  return result;
}

} // namespace

Executable::~Executable() {
  if (!module)
    return;
  // Unloading needs the module's context current; a failure here has no one
  // to report to (the ABI's unload returns before destruction matters).
  std::string ignored;
  if (makeContextCurrent(context, ignored) == TK_SUCCESS)
    driver().cuModuleUnload(module);
}

tk_status loadExecutable(int32_t device, const void *data, size_t size,
                         const std::string &entry,
                         std::unique_ptr<Executable> &out, std::string &error) {
  Package package;
  if (tk_status status = parsePackage(data, size, package, error))
    return status;
  if (package.entry != entry) {
    error = "tk-cuda: the package holds kernel '" + package.entry + "', not '" +
            entry + "'";
    return TK_ERROR_NOT_FOUND;
  }
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;

  auto executable = std::make_unique<Executable>();
  executable->device = device;
  executable->context = deviceContext(device);
  executable->entry = entry;
  executable->threadsPerBlock = static_cast<unsigned>(package.threadsPerBlock);
  executable->sharedMemoryBytes =
      static_cast<unsigned>(package.sharedMemoryBytes);

  std::string cubinLog;
  CUresult result = CUDA_ERROR_NO_BINARY_FOR_GPU;
  if (!package.cubin.empty())
    result = loadModule(package.cubin.data(), executable->module, cubinLog);
  // A cubin is for one GPU generation; on another (a newer GPU, or sm_90a
  // code on a non-Hopper part) the driver refuses it and the PTX, kept for
  // this, is compiled by the driver's JIT instead.
  if ((result == CUDA_ERROR_NO_BINARY_FOR_GPU ||
       result == CUDA_ERROR_INVALID_IMAGE) &&
      !package.ptx.empty()) {
    std::string ptxLog;
    // package.ptx is a std::string: NUL-terminated, as the driver needs.
    result = loadModule(package.ptx.c_str(), executable->module, ptxLog);
    if (result != CUDA_SUCCESS) {
      checkCuda(result, "cuModuleLoadDataEx (PTX for the driver's JIT)", error);
      if (!ptxLog.empty())
        error += ":\n" + ptxLog;
      return statusOfCudaError(result);
    }
    executable->fromPtx = true;
  } else if (result != CUDA_SUCCESS) {
    checkCuda(result, "cuModuleLoadDataEx (cubin)", error);
    if (!cubinLog.empty())
      error += ":\n" + cubinLog;
    return statusOfCudaError(result);
  }

  result = driver().cuModuleGetFunction(&executable->function,
                                        executable->module, entry.c_str());
  if (result != CUDA_SUCCESS) {
    checkCuda(result, "cuModuleGetFunction", error);
    error += " (kernel '" + entry + "')";
    return statusOfCudaError(result);
  }
  if (executable->sharedMemoryBytes > kDefaultDynamicSharedLimit) {
    // Say what does not fit rather than pass on the driver's bare
    // CUDA_ERROR_INVALID_VALUE.
    tk_device_props props = {};
    props.struct_size = sizeof(props);
    if (queryDeviceProps(device, &props, error) == TK_SUCCESS &&
        static_cast<int64_t>(executable->sharedMemoryBytes) >
            props.shared_memory_per_block) {
      error = "tk-cuda: kernel '" + entry + "' needs " +
              std::to_string(executable->sharedMemoryBytes) +
              " bytes of shared memory per block; " + props.name +
              " allows at most " +
              std::to_string(props.shared_memory_per_block) +
              " (use smaller tiles)";
      return TK_ERROR_UNSUPPORTED;
    }
    TK_CU_RETURN_IF_ERROR(cuFuncSetAttribute, executable->function,
                          CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                          static_cast<int>(executable->sharedMemoryBytes));
  }
  TK_CU_RETURN_IF_ERROR(cuFuncGetAttribute, &executable->registersPerThread,
                        CU_FUNC_ATTRIBUTE_NUM_REGS, executable->function);
  int maxThreads = 0;
  TK_CU_RETURN_IF_ERROR(cuFuncGetAttribute, &maxThreads,
                        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                        executable->function);
  if (executable->threadsPerBlock > static_cast<unsigned>(maxThreads)) {
    // Too many registers per thread for the block size: launches would fail
    // with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, so refuse at load instead.
    error = "tk-cuda: kernel '" + entry + "' uses " +
            std::to_string(executable->registersPerThread) +
            " registers per thread, which allows at most " +
            std::to_string(maxThreads) + " threads per block, not " +
            std::to_string(executable->threadsPerBlock) +
            ": compile with fewer warps";
    return TK_ERROR_UNSUPPORTED;
  }
  out = std::move(executable);
  return TK_SUCCESS;
}

tk_status executableOccupancy(const Executable &executable, int32_t &out,
                              std::string &error) {
  if (tk_status status = makeContextCurrent(executable.context, error))
    return status;
  int blocks = 0;
  TK_CU_RETURN_IF_ERROR(cuOccupancyMaxActiveBlocksPerMultiprocessor, &blocks,
                        executable.function,
                        static_cast<int>(executable.threadsPerBlock),
                        static_cast<size_t>(executable.sharedMemoryBytes));
  out = blocks;
  return TK_SUCCESS;
}

tk_status launchExecutable(const Executable &executable, const int32_t grid[3],
                           void *const *args, void *stream,
                           std::string &error) {
  if (tk_status status = makeContextCurrent(executable.context, error))
    return status;
  // The ABI's args[i] points at argument i's value: exactly kernelParams.
  TK_CU_RETURN_IF_ERROR(
      cuLaunchKernel, executable.function, static_cast<unsigned>(grid[0]),
      static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2]),
      executable.threadsPerBlock, 1, 1, executable.sharedMemoryBytes,
      static_cast<CUstream>(stream), const_cast<void **>(args), nullptr);
  return TK_SUCCESS;
}

} // namespace tk::cuda
