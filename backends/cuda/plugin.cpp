//===- plugin.cpp - the CUDA backend's plugin interface ---------*- C++ -*-===//
//
// Exports tk_backend_get_interface for libtk_backend_cuda.so (and, without
// compile and validate, libtk_driver_cuda.so): NVIDIA GPUs
// through the driver API (opened at run time, so the plugin loads anywhere
// and reports "no device" without one), kernels compiled to PTX and cubins.
//
//===----------------------------------------------------------------------===//

#include "common/DriverEntries.h"
#include "common/PluginSupport.h"
#include "compiler/DeviceTarget.h"
#include "compiler/Package.h"
#include "driver/Device.h"
#include "driver/Executable.h"
#include "tk/tk_plugin.h"

#ifndef TK_PLUGIN_DRIVER_ONLY
#include "compiler/Compiler.h"

#include "llvm/Config/llvm-config.h"
#define TK_CUDA_COMPILER "tk-cuda 1 llvm " LLVM_VERSION_STRING
#else
#define TK_CUDA_COMPILER "tk-cuda 1 (driver only)"
#endif

#include <cstdlib>
#include <cstring>
#include <string>

#define TK_CUDA_EXPORT extern "C" __attribute__((visibility("default")))

#define TK_CUDA_STRINGIFY_VALUE(x) #x
#define TK_CUDA_STRINGIFY(x) TK_CUDA_STRINGIFY_VALUE(x)

namespace {

thread_local std::string lastError;

/// The driver layer the plain entries forward to (common/DriverEntries.h).
struct CudaDriver {
  static constexpr const char *name = "tk-cuda";
  static std::string &lastError() { return ::lastError; }
  using CopyKind = tk::cuda::CopyKind;
  static constexpr auto initializeDevices = &tk::cuda::initializeDevices;
  static constexpr auto deviceCount = &tk::cuda::deviceCount;
  static constexpr auto queryDeviceProps = &tk::cuda::queryDeviceProps;
  static constexpr auto allocateMemory = &tk::cuda::allocateMemory;
  static constexpr auto freeMemory = &tk::cuda::freeMemory;
  static constexpr auto copyMemory = &tk::cuda::copyMemory;
  static constexpr auto createStream = &tk::cuda::createStream;
  static constexpr auto destroyStream = &tk::cuda::destroyStream;
  static constexpr auto synchronizeStream = &tk::cuda::synchronizeStream;
  static constexpr auto synchronizeDevice = &tk::cuda::synchronizeDevice;
  static constexpr auto createEvent = &tk::cuda::createEvent;
  static constexpr auto destroyEvent = &tk::cuda::destroyEvent;
  static constexpr auto recordEvent = &tk::cuda::recordEvent;
  static constexpr auto synchronizeEvent = &tk::cuda::synchronizeEvent;
  static constexpr auto eventElapsedMs = &tk::cuda::eventElapsedMs;
};
using Entries = tk::plugin::DriverEntries<CudaDriver>;

/// The target code for `device` is compiled for: TK_CUDA_ARCH when set, else
/// the device's own (when the driver found it), else sm_90a.
tk_status selectTarget(int32_t device, tk::cuda::Target &target,
                       std::string &error) {
  if (const char *arch = std::getenv("TK_CUDA_ARCH"); arch && *arch)
    return tk::cuda::parseTargetName(arch, target, error);
  std::string ignored;
  if (tk::cuda::initializeDevices(ignored) == TK_SUCCESS && device >= 0 &&
      device < tk::cuda::deviceCount()) {
    int computeCapability = 0;
    if (tk_status status =
            tk::cuda::deviceComputeCapability(device, computeCapability, error))
      return status;
    return tk::cuda::targetForComputeCapability(computeCapability, target,
                                                error);
  }
  // No device to ask: compile for Hopper, the GPU tk is tuned for.
  target = tk::cuda::Target{90, /*archSpecific=*/true};
  return TK_SUCCESS;
}

tk_status cudaCompileTarget(int32_t device, char *out, size_t capacity) {
  return Entries::call([&](std::string &error) {
    tk::cuda::Target target;
    if (tk_status status = selectTarget(device, target, error))
      return status;
    return tk::plugin::copyTargetName(target.name(), out, capacity, "tk-cuda",
                                      error);
  });
}

/// 2 for the device's own target, 1 for code its GPU runs (a cubin of its
/// family, or PTX the driver JIT-compiles for a later GPU), 0 otherwise.
tk_status cudaTargetRank(int32_t device, const char *name, int32_t *out) {
  if (!name || !out)
    return Entries::fail(TK_ERROR_INVALID_ARGUMENT,
                         "tk-cuda: target_rank needs a target and an output");
  return Entries::call([&](std::string &error) {
    *out = 0;
    tk::cuda::Target target;
    if (tk_status status = selectTarget(device, target, error))
      return status;
    if (target.name() == name) {
      *out = 2;
      return TK_SUCCESS;
    }
    std::string ignored;
    int computeCapability = 0;
    if (tk::cuda::initializeDevices(ignored) != TK_SUCCESS || device < 0 ||
        device >= tk::cuda::deviceCount() ||
        tk::cuda::deviceComputeCapability(device, computeCapability, ignored) !=
            TK_SUCCESS)
      return TK_SUCCESS; // no GPU: only its own target
    *out = tk::cuda::runsOnComputeCapability(name, computeCapability) ? 1 : 0;
    return TK_SUCCESS;
  });
}

tk_status cudaStreamWrap(int32_t device, void *stream, void **out) {
  if (!stream || !out)
    return Entries::fail(TK_ERROR_INVALID_ARGUMENT,
                         "tk-cuda: stream_wrap needs a stream and an output");
  return Entries::call([&](std::string &error) {
    return tk::cuda::wrapStream(device, stream, out, error);
  });
}

/// A wrapped stream belongs to the caller: nothing to release.
tk_status cudaStreamUnwrap(int32_t, void *) { return TK_SUCCESS; }

#ifndef TK_PLUGIN_DRIVER_ONLY
tk_status cudaCompile(const tk_plugin_compile_request *request,
                      tk_plugin_binary *out) {
  if (!request || !out || !request->module_bytecode ||
      request->module_size == 0)
    return Entries::fail(
        TK_ERROR_INVALID_ARGUMENT,
        "tk-cuda: compile needs a request with a module and an "
        "output");
  tk::cuda::CompileInput input;
  input.module = request->module_bytecode;
  input.size = request->module_size;
  input.entry = request->entry ? request->entry : "";
  input.dumpDir = request->dump_dir ? request->dump_dir : "";
  input.options.numWarps = request->num_warps > 0 ? request->num_warps : 4;
  input.options.numStages = request->num_stages > 0 ? request->num_stages : 3;
  if (request->struct_size >=
      offsetof(tk_plugin_compile_request, min_programs_per_cu) +
          sizeof(int32_t))
    input.options.minProgramsPerSM = request->min_programs_per_cu;
  std::string error;
  if (tk_status status =
          selectTarget(request->device, input.options.target, error))
    return Entries::fail(status, error);
  tk::cuda::Package package;
  if (tk_status status = tk::cuda::compileToPackage(input, package, error))
    return Entries::fail(status, error);
  return tk::plugin::fillBinary(tk::cuda::serializePackage(package),
                                package.numWarps, package.sharedMemoryBytes,
                                package.registersPerThread, out, "tk-cuda",
                                lastError);
}

tk_status cudaValidate(const void *binary, size_t size) {
  return Entries::call([&](std::string &error) {
    return tk::cuda::validatePackage(binary, size, error);
  });
}

#endif // TK_PLUGIN_DRIVER_ONLY

tk_status cudaExecutableLoad(int32_t device, const void *binary, size_t size,
                             const char *entry,
                             const tk_plugin_arg_type *argTypes, size_t numArgs,
                             void **out) {
  return tk::plugin::loadExecutable<tk::cuda::Executable>(
      binary, size, entry, argTypes, numArgs, out, "tk-cuda", lastError,
      [&](auto &executable, std::string &error) {
        return tk::cuda::loadExecutable(device, binary, size, entry, executable,
                                        error);
      });
}

tk_status cudaExecutableOccupancy(void *executable, int32_t *out) {
  if (tk_status status =
          tk::plugin::checkOccupancy(executable, out, "tk-cuda", lastError))
    return status;
  return Entries::call([&](std::string &error) {
    return tk::cuda::executableOccupancy(
        *static_cast<tk::cuda::Executable *>(executable), *out, error);
  });
}

tk_status cudaLaunch(void *executable, const int32_t grid[3], void *const *args,
                     void *stream) {
  auto *exe = static_cast<tk::cuda::Executable *>(executable);
  // No allocation on success: the error string (and the thread's
  // lastError) is touched only on failure.
  std::string error;
  if (tk_status status = tk::plugin::checkLaunch(
          exe, grid, exe && !exe->argTypes.empty(), args, "tk-cuda", error))
    return Entries::fail(status, std::move(error));
  if (tk_status status =
          tk::cuda::launchExecutable(*exe, grid, args, stream, error))
    return Entries::fail(status, std::move(error));
  return TK_SUCCESS;
}

tk_status cudaGetCapabilities(int32_t device, tk_backend_capabilities *out) {
  if (!out || out->struct_size < sizeof(size_t))
    return Entries::fail(
        TK_ERROR_INVALID_ARGUMENT,
        "tk-cuda: get_capabilities needs a struct with struct_size "
        "set");
  // Without a device, device 0 describes the compile target (sm_90a).
  if (tk::cuda::deviceCount() > 0) {
    std::string error;
    if (tk_status status = tk::cuda::checkDevice(device, error))
      return Entries::fail(status, error);
  }
  tk::cuda::Target target;
  std::string error;
  if (tk_status status = selectTarget(device, target, error))
    return Entries::fail(status, error);
  tk_backend_capabilities caps;
  std::memset(&caps, 0, sizeof(caps));
  // Every type: fp8 is computed in f32 and converts by tk-expand-fp8's
  // integer arithmetic, on every target. Its dots run as multiply-adds in
  // f32; a dot the layouts give fp8 wgmma (sm_90a) is not lowered yet and
  // is refused as unsupported.
  caps.dtypes = tk::plugin::kAllDtypes;
  // Each atomic_rmw kind is a PTX atom.global.<op> (fadd on f32 and f64
  // from sm_60), CAS atom.cas.
  caps.atomics = tk::plugin::kAllAtomics;
  caps.fp8 = 1;
  // mma.sync from sm_80; wgmma only on sm_90a.
  caps.mma_kinds = TK_MMA_BIT_MMA_SYNC;
  if (target.computeCapability == 90 && target.archSpecific)
    caps.mma_kinds |= TK_MMA_BIT_WGMMA;
  // Tiles live in shared memory; a kernel whose tiles do not fit is
  // refused at load as UNSUPPORTED.
  caps.max_tile_elements = 0;
  tk::plugin::copyVersioned(caps, out);
  return TK_SUCCESS;
}

const tk_backend_interface kInterface = {
    /*struct_size=*/sizeof(tk_backend_interface),
    /*abi_major=*/TK_PLUGIN_ABI_MAJOR,
    /*abi_minor=*/TK_PLUGIN_ABI_MINOR,
    /*name=*/"cuda",
    // The CUDA version of the headers the plugin was built with; the ptxas
    // found at run time is expected to be that toolkit's.
    /*compiler_version=*/
    TK_CUDA_COMPILER " cuda " TK_CUDA_STRINGIFY(CUDA_VERSION),
    Entries::lastError,
    Entries::initialize,
    Entries::deviceCount,
    Entries::deviceProps,
    Entries::memAlloc,
    Entries::memFree,
    Entries::memcpy<tk::cuda::CopyKind::HostToDevice>,
    Entries::memcpy<tk::cuda::CopyKind::DeviceToHost>,
    Entries::memcpy<tk::cuda::CopyKind::DeviceToDevice>,
    Entries::streamCreate,
    Entries::streamDestroy,
    Entries::streamSynchronize,
    Entries::deviceSynchronize,
    TK_IF_COMPILER(cudaCompile),
    tk::plugin::freeBinary,
    TK_IF_COMPILER(cudaValidate),
    cudaExecutableLoad,
    tk::plugin::unloadExecutable<tk::cuda::Executable>,
    cudaExecutableOccupancy,
    cudaLaunch,
    cudaGetCapabilities,
    Entries::eventCreate,
    Entries::eventDestroy,
    Entries::eventRecord,
    Entries::eventSynchronize,
    Entries::eventElapsedMs,
    cudaStreamWrap,
    cudaStreamUnwrap,
    cudaCompileTarget,
    /*device_native=*/nullptr,
    cudaTargetRank,
};

} // namespace

TK_CUDA_EXPORT const tk_backend_interface *
tk_backend_get_interface(uint32_t abi_major) {
  return tk::plugin::interfaceForAbi(abi_major, kInterface, lastError);
}

TK_CUDA_EXPORT uint32_t tk_backend_abi_version(void) {
  return TK_PLUGIN_ABI_MAJOR;
}
