//===- Executable.cpp - a loaded Xe kernel ----------------------*- C++ -*-===//
//
// Module building (native binary or SPIR-V) with the device checks, the
// kernel's properties, occupancy and the launch.
//
//===----------------------------------------------------------------------===//

#include "driver/Executable.h"
#include "compiler/Package.h"
#include "driver/Device.h"

#include <algorithm>
#include <limits>

namespace tk::xe {

namespace {

/// GRFs of a hardware thread in the default mode (Device.h, DeviceLimits).
constexpr unsigned kDefaultGrfs = 128;
/// More of a build log than this says nothing more useful in a message.
constexpr size_t kMaxBuildLogBytes = 16384;

/// Bytes of a kernel parameter of each tk type, as zeKernelSetArgumentValue
/// takes it: a pointer is a 64-bit global address (SPIR-V's Physical64
/// addressing, which Level Zero's kernels use), the rest their own size.
/// 0 for a type tk does not know.
size_t argumentBytes(tk_plugin_arg_type type) {
  switch (type) {
  case TK_PLUGIN_ARG_PTR:
    return sizeof(void *);
  case TK_PLUGIN_ARG_I32:
  case TK_PLUGIN_ARG_F32:
    return 4;
  case TK_PLUGIN_ARG_I64:
  case TK_PLUGIN_ARG_F64:
    return 8;
  }
  return 0;
}

/// The text of a build log, which it then destroys; "" for none.
std::string takeBuildLog(ze_module_build_log_handle_t log) {
  if (!log)
    return "";
  const DriverApi &api = driver();
  std::string text;
  size_t size = 0;
  if (api.zeModuleBuildLogGetString(log, &size, nullptr) == ZE_RESULT_SUCCESS &&
      size > 0) {
    text.assign(size, '\0');
    if (api.zeModuleBuildLogGetString(log, &size, text.data()) !=
        ZE_RESULT_SUCCESS)
      text.clear();
  }
  api.zeModuleBuildLogDestroy(log);
  // The size counts the terminating NUL; IGC's logs end in blank lines.
  size_t end = text.find('\0');
  if (end != std::string::npos)
    text.resize(end);
  while (!text.empty() &&
         (text.back() == '\n' || text.back() == ' ' || text.back() == '\r'))
    text.pop_back();
  if (text.size() > kMaxBuildLogBytes)
    text = text.substr(0, kMaxBuildLogBytes) + "\n[build log truncated]";
  return text;
}

/// zeModuleCreate of `bytes` in `format`, with no build options; `log` gets
/// the driver's build log when it fails.
ze_result_t createModule(ze_context_handle_t context, ze_device_handle_t handle,
                         ze_module_format_t format, const std::string &bytes,
                         const std::string &buildFlags,
                         ze_module_handle_t &module, std::string &log) {
  ze_module_desc_t desc = {};
  desc.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
  desc.format = format;
  desc.inputSize = bytes.size();
  desc.pInputModule = reinterpret_cast<const uint8_t *>(bytes.data());
  // The SPIR-V states what the kernel needs (its subgroup size, its SLM);
  // the flags are the package's register mode, the one its native binary
  // was built with, so both builds of one package run alike.
  desc.pBuildFlags = buildFlags.c_str();
  desc.pConstants = nullptr;
  ze_module_build_log_handle_t buildLog = nullptr;
  module = nullptr;
  ze_result_t result =
      driver().zeModuleCreate(context, handle, &desc, &module, &buildLog);
  std::string text = takeBuildLog(buildLog);
  if (result != ZE_RESULT_SUCCESS) {
    log = std::move(text);
    module = nullptr;
  }
  return result;
}

std::string withLog(const std::string &message, const std::string &log) {
  return log.empty() ? message : message + "; build log:\n" + log;
}

} // namespace

Executable::~Executable() {
  if (!kernel && !module)
    return;
  // Level Zero must not destroy a kernel the device may still run: tk's
  // streams are waited for (a wrapped list's launches are the caller's to
  // finish before unloading). A failure has no one to report to.
  std::string ignored;
  synchronizeDevice(device, ignored);
  if (kernel)
    driver().zeKernelDestroy(kernel);
  if (module)
    driver().zeModuleDestroy(module);
}

tk_status loadExecutable(int32_t device, const void *data, size_t size,
                         const std::string &entry,
                         std::unique_ptr<Executable> &out, std::string &error) {
  Package package;
  if (tk_status status = parsePackage(data, size, package, error))
    return status;
  if (package.entry != entry) {
    error = "tk-xe: the package holds kernel '" + package.entry + "', not '" +
            entry + "'";
    return TK_ERROR_NOT_FOUND;
  }
  DeviceLimits limits;
  if (tk_status status = deviceLimits(device, limits, error))
    return status;
  std::string target;
  if (tk_status status = deviceTarget(device, target, error))
    return status;
  ze_context_handle_t context = nullptr;
  ze_device_handle_t handle = nullptr;
  if (tk_status status = deviceHandles(device, context, handle, error))
    return status;
  std::string onDevice =
      "device " + std::to_string(device) + " (" + limits.name + ")";

  // Checked here rather than left to the driver: a subgroup size the device
  // lacks fails the build with a log about an attribute, and a workgroup it
  // cannot hold only fails each launch.
  auto subgroupSize = static_cast<uint32_t>(package.subgroupSize);
  if (!limits.supportsSubgroupSize(subgroupSize)) {
    error = "tk-xe: kernel '" + entry + "' was compiled for subgroups of " +
            std::to_string(subgroupSize) + " work-items, which " + onDevice +
            " lacks: it runs subgroups of " + limits.subgroupSizesText() +
            " (recompile for the device)";
    return TK_ERROR_UNSUPPORTED;
  }
  if (static_cast<uint32_t>(package.threadsPerBlock) > limits.maxGroupSize) {
    error = "tk-xe: kernel '" + entry + "' has workgroups of " +
            std::to_string(package.threadsPerBlock) + " work-items; " +
            onDevice + " runs at most " + std::to_string(limits.maxGroupSize) +
            ": compile with fewer warps";
    return TK_ERROR_UNSUPPORTED;
  }
  if (static_cast<uint32_t>(package.sharedMemoryBytes) >
      limits.maxSharedLocalMemory) {
    error = "tk-xe: kernel '" + entry + "' needs " +
            std::to_string(package.sharedMemoryBytes) +
            " bytes of workgroup memory (SLM); " + onDevice + " has " +
            std::to_string(limits.maxSharedLocalMemory);
    return TK_ERROR_UNSUPPORTED;
  }

  auto executable = std::make_unique<Executable>();
  executable->device = device;
  executable->entry = entry;
  executable->threadsPerBlock = static_cast<unsigned>(package.threadsPerBlock);
  executable->sharedMemoryBytes =
      static_cast<unsigned>(package.sharedMemoryBytes);
  executable->subgroupSize = subgroupSize;

  // The native binary for the device's target when the package has one: no
  // finalization at load. The driver refuses one built for another stepping
  // or by an ocloc it does not match (ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
  // the SPIR-V is then built instead, and the refusal only reported if that
  // fails too.
  std::string nativeFailure;
  const NativeBinary *native =
      target.empty() ? nullptr : package.nativeFor(target);
  if (native) {
    std::string log;
    ze_result_t result =
        createModule(context, handle, ZE_MODULE_FORMAT_NATIVE, native->bytes,
                     package.buildOptions, executable->module, log);
    if (result == ZE_RESULT_SUCCESS) {
      executable->native = true;
      if (native->grfRegisters > 0)
        executable->grfRegisters = static_cast<unsigned>(native->grfRegisters);
    } else {
      nativeFailure = withLog("its " + target + " binary was refused with " +
                                  describeZeError(result),
                              log);
    }
  }
  if (!executable->module) {
    std::string log;
    ze_result_t result =
        createModule(context, handle, ZE_MODULE_FORMAT_IL_SPIRV, package.spirv,
                     package.buildOptions, executable->module, log);
    if (result != ZE_RESULT_SUCCESS) {
      checkZe(result, "zeModuleCreate", error);
      error += " (kernel '" + entry + "', SPIR-V for " + package.target +
               " on " + onDevice + ")";
      if (!nativeFailure.empty())
        error += "; " + nativeFailure;
      error = withLog(error, log);
      return statusOfZeError(result);
    }
  }

  ze_kernel_desc_t kernelDesc = {};
  kernelDesc.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
  kernelDesc.pKernelName = entry.c_str();
  ze_result_t result = driver().zeKernelCreate(executable->module, &kernelDesc,
                                               &executable->kernel);
  if (result != ZE_RESULT_SUCCESS) {
    executable->kernel = nullptr;
    checkZe(result, "zeKernelCreate", error);
    error += " (kernel '" + entry + "')";
    return statusOfZeError(result);
  }

  ze_kernel_properties_t properties = {};
  properties.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
  TK_ZE_RETURN_IF_ERROR(zeKernelGetProperties, executable->kernel, &properties);
  // maxSubgroupSize is the SIMD width the driver compiled the kernel for
  // (compute-runtime: the kernel's simdSize). tk's shuffles and reductions
  // assume the package's: at another width the kernel computes wrong
  // results without an error, so the SPIR-V must require its size.
  if (properties.maxSubgroupSize != 0 &&
      properties.maxSubgroupSize != subgroupSize) {
    error = "tk-xe: the driver built kernel '" + entry + "' for subgroups of " +
            std::to_string(properties.maxSubgroupSize) +
            " work-items, not the " + std::to_string(subgroupSize) +
            " it was compiled for (" +
            (executable->native ? "native binary" : "SPIR-V") + " on " +
            onDevice + ")";
    return TK_ERROR_UNSUPPORTED;
  }
  // The kernel's own limit, lower than the device's where its registers
  // leave fewer hardware threads (large-GRF mode): a launch beyond it fails
  // each time with a bare ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION.
  uint64_t maxThreads =
      uint64_t(properties.maxNumSubgroups) * properties.maxSubgroupSize;
  if (maxThreads != 0 && executable->threadsPerBlock > maxThreads) {
    error = "tk-xe: kernel '" + entry + "' allows at most " +
            std::to_string(maxThreads) + " work-items per workgroup on " +
            onDevice + ", not " + std::to_string(executable->threadsPerBlock) +
            ": compile with fewer warps";
    return TK_ERROR_UNSUPPORTED;
  }
  executable->numKernelArgs = properties.numKernelArgs;
  // The workgroup's shape is the kernel's state, set once: tk's launches
  // are one-dimensional workgroups of threadsPerBlock work-items.
  TK_ZE_RETURN_IF_ERROR(zeKernelSetGroupSize, executable->kernel,
                        executable->threadsPerBlock, 1, 1);
  out = std::move(executable);
  return TK_SUCCESS;
}

tk_status executableOccupancy(const Executable &executable, int32_t &out,
                              std::string &error) {
  DeviceLimits limits;
  if (tk_status status = deviceLimits(executable.device, limits, error))
    return status;
  // Level Zero has no occupancy query; this is the hardware's arithmetic.
  // An Xe-core runs threadsPerEU x eusPerXeCore hardware threads (8 x 8 =
  // 64 on pvc, 8 x 16 = 128 on dg2) at 128 GRFs a thread, half as many at
  // 256 (large-GRF mode). Each subgroup of a workgroup is one hardware
  // thread, and a workgroup keeps its threads and its SLM on one Xe-core
  // for its whole life, so
  //   by threads: hardware threads / ceil(threadsPerBlock / subgroupSize)
  //   by SLM:     the Xe-core's SLM / the workgroup's SLM
  // and the smaller bounds resident workgroups. The Xe-core's SLM is taken
  // as the workgroup limit, which it is on pvc (128 KiB) and dg2 (64 KiB).
  // Barriers and the dispatcher's slots are not modelled: where they bind,
  // this errs high.
  unsigned grfs = std::max(executable.grfRegisters, kDefaultGrfs);
  uint64_t threadsPerEU = uint64_t(limits.threadsPerEU) * kDefaultGrfs / grfs;
  uint64_t hardwareThreads = threadsPerEU * limits.eusPerXeCore;
  unsigned subgroup = std::max(executable.subgroupSize, 1u);
  uint64_t groupThreads =
      (uint64_t(executable.threadsPerBlock) + subgroup - 1) / subgroup;
  uint64_t groups = groupThreads ? hardwareThreads / groupThreads : 0;
  if (executable.sharedMemoryBytes > 0)
    groups = std::min<uint64_t>(groups, limits.maxSharedLocalMemory /
                                            executable.sharedMemoryBytes);
  out = static_cast<int32_t>(
      std::min<uint64_t>(groups, std::numeric_limits<int32_t>::max()));
  return TK_SUCCESS;
}

tk_status launchExecutable(const Executable &executable, const int32_t grid[3],
                           void *const *args, void *stream,
                           std::string &error) {
  Stream *queue = nullptr;
  if (tk_status status = resolveStream(executable.device, stream, queue, error))
    return status;
  size_t count = executable.argTypes.size();
  if (count != executable.numKernelArgs) {
    error = "tk-xe: kernel '" + executable.entry + "' takes " +
            std::to_string(executable.numKernelArgs) +
            " parameters, its signature has " + std::to_string(count);
    return TK_ERROR_ARGUMENT_MISMATCH;
  }
  const DriverApi &api = driver();
  std::lock_guard<std::mutex> launchLock(executable.launchMutex);
  // The ABI's args[i] points at argument i's value (for a pointer, at the
  // void* holding the device address), which is what
  // zeKernelSetArgumentValue copies.
  for (size_t i = 0; i < count; ++i) {
    size_t bytes = argumentBytes(executable.argTypes[i]);
    if (bytes == 0) {
      error = "tk-xe: argument " + std::to_string(i) + " of kernel '" +
              executable.entry + "' has unknown type " +
              std::to_string(static_cast<int>(executable.argTypes[i]));
      return TK_ERROR_INVALID_ARGUMENT;
    }
    ze_result_t result = api.zeKernelSetArgumentValue(
        executable.kernel, static_cast<uint32_t>(i), bytes, args[i]);
    if (result != ZE_RESULT_SUCCESS) {
      checkZe(result, "zeKernelSetArgumentValue", error);
      error += " (argument " + std::to_string(i) + " of kernel '" +
               executable.entry + "')";
      return statusOfZeError(result);
    }
  }
  // The grid is in workgroups, as CUDA's.
  ze_group_count_t groups = {static_cast<uint32_t>(grid[0]),
                             static_cast<uint32_t>(grid[1]),
                             static_cast<uint32_t>(grid[2])};
  std::lock_guard<std::mutex> streamLock(queue->mutex);
  if (tk_status status = beginStreamWork(*queue, error))
    return status;
  TK_ZE_RETURN_IF_ERROR(zeCommandListAppendLaunchKernel, queue->list,
                        executable.kernel, &groups, nullptr, 0, nullptr);
  return TK_SUCCESS;
}

} // namespace tk::xe
