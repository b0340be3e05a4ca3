//===- Executable.cpp - a loaded ROCm kernel --------------------*- C++ -*-===//
//
// Module loading with the target checks, the kernel's attributes, occupancy
// and the launch.
//
//===----------------------------------------------------------------------===//

#include "driver/Executable.h"
#include "compiler/Package.h"
#include "driver/Device.h"

namespace tk::rocm {

Executable::~Executable() {
  if (!module)
    return;
  // HIP modules belong to the device that was current when they loaded,
  // and the runtime checks it on unload; a failure here has no one to report
  // to (the ABI's unload returns before destruction matters).
  std::string ignored;
  if (makeDeviceCurrent(device, ignored) == TK_SUCCESS)
    driver().hipModuleUnload(module);
}

tk_status loadExecutable(int32_t device, const void *data, size_t size,
                         const std::string &entry,
                         std::unique_ptr<Executable> &out, std::string &error) {
  Package package;
  if (tk_status status = parsePackage(data, size, package, error))
    return status;
  if (package.entry != entry) {
    error = "tk-rocm: the package holds kernel '" + package.entry + "', not '" +
            entry + "'";
    return TK_ERROR_NOT_FOUND;
  }
  // Checked here rather than left to hipModuleLoadData, whose answer for
  // another target is a bare hipErrorNoBinaryForGpu or hipErrorInvalidImage.
  // The comparison is on the plain target: features (xnack, sramecc) the
  // code object was built with are the loader's to check.
  std::string arch;
  if (tk_status status = deviceArch(device, arch, error))
    return status;
  std::string packageArch = package.arch.substr(0, package.arch.find(':'));
  if (packageArch != arch) {
    error = "tk-rocm: kernel '" + entry + "' was compiled for " + package.arch +
            ", device " + std::to_string(device) + " is " + arch +
            " (recompile for the device)";
    return TK_ERROR_UNSUPPORTED;
  }
  int32_t waveSize = 0;
  if (tk_status status = deviceWaveSize(device, waveSize, error))
    return status;
  // RDNA runs wave32 and wave64 code alike, but a kernel's shuffles and
  // reductions assume the wave size it was compiled for: launched at the
  // other, it computes wrong results without an error.
  if (package.waveSize != waveSize) {
    error = "tk-rocm: kernel '" + entry + "' was compiled for waves of " +
            std::to_string(package.waveSize) + " lanes, device " +
            std::to_string(device) + " (" + arch + ") runs waves of " +
            std::to_string(waveSize);
    return TK_ERROR_UNSUPPORTED;
  }
  // The module is loaded for the current device.
  if (tk_status status = makeDeviceCurrent(device, error))
    return status;

  auto executable = std::make_unique<Executable>();
  executable->device = device;
  executable->entry = entry;
  executable->threadsPerBlock = static_cast<unsigned>(package.threadsPerBlock);
  executable->sharedMemoryBytes =
      static_cast<unsigned>(package.sharedMemoryBytes);
  executable->registers = package.vgprs;

  executable->codeObject = std::move(package.hsaco);
  hipError_t result = driver().hipModuleLoadData(&executable->module,
                                                 executable->codeObject.data());
  if (result != hipSuccess) {
    checkHip(result, "hipModuleLoadData", error);
    error += " (kernel '" + entry + "', " + package.arch + " code object on " +
             arch + ")";
    return statusOfHipError(result);
  }
  result = driver().hipModuleGetFunction(&executable->function,
                                         executable->module, entry.c_str());
  if (result != hipSuccess) {
    checkHip(result, "hipModuleGetFunction", error);
    error += " (kernel '" + entry + "')";
    return statusOfHipError(result);
  }
  if (driver().hipFuncGetAttribute) {
    TK_HIP_RETURN_IF_ERROR(hipFuncGetAttribute, &executable->registers,
                           HIP_FUNC_ATTRIBUTE_NUM_REGS, executable->function);
    int maxThreads = 0;
    TK_HIP_RETURN_IF_ERROR(hipFuncGetAttribute, &maxThreads,
                           HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                           executable->function);
    if (executable->threadsPerBlock > static_cast<unsigned>(maxThreads)) {
      // The kernel's flat workgroup size (or its registers) allows fewer
      // threads: HIP would fail each launch with a bare
      // hipErrorLaunchFailure, so refuse at load instead.
      error = "tk-rocm: kernel '" + entry + "' allows at most " +
              std::to_string(maxThreads) + " threads per workgroup (" +
              std::to_string(executable->registers) + " VGPRs per lane), not " +
              std::to_string(executable->threadsPerBlock) +
              ": compile with fewer warps";
      return TK_ERROR_UNSUPPORTED;
    }
  }
  out = std::move(executable);
  return TK_SUCCESS;
}

tk_status executableOccupancy(const Executable &executable, int32_t &out,
                              std::string &error) {
  if (!driver().hipModuleOccupancyMaxActiveBlocksPerMultiprocessor) {
    error = "tk-rocm: " + runtimeDescription() +
            " lacks hipModuleOccupancyMaxActiveBlocksPerMultiprocessor";
    return TK_ERROR_UNSUPPORTED;
  }
  // The runtime answers for the current device.
  if (tk_status status = makeDeviceCurrent(executable.device, error))
    return status;
  // No dynamic LDS: the kernel's static LDS is part of the function.
  int blocks = 0;
  TK_HIP_RETURN_IF_ERROR(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor,
                         &blocks, executable.function,
                         static_cast<int>(executable.threadsPerBlock),
                         size_t{0});
  out = blocks;
  return TK_SUCCESS;
}

tk_status launchExecutable(const Executable &executable, const int32_t grid[3],
                           void *const *args, void *stream,
                           std::string &error) {
  // A NULL stream is the current device's default stream; a real stream
  // carries its device.
  if (!stream) {
    if (tk_status status = makeDeviceCurrent(executable.device, error))
      return status;
  }
  // The ABI's args[i] points at argument i's value: exactly kernelParams,
  // which HIP reads by the sizes of the code object's argument metadata.
  // The grid is in workgroups, as CUDA's; the LDS is static, so no dynamic
  // shared memory.
  TK_HIP_RETURN_IF_ERROR(
      hipModuleLaunchKernel, executable.function,
      static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]),
      static_cast<unsigned>(grid[2]), executable.threadsPerBlock, 1, 1, 0,
      static_cast<hipStream_t>(stream), const_cast<void **>(args), nullptr);
  return TK_SUCCESS;
}

} // namespace tk::rocm
