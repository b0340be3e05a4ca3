//===- plugin.cpp - the ROCm backend's plugin interface ---------*- C++ -*-===//
//
// Exports tk_backend_get_interface for libtk_backend_rocm.so (and, without
// compile and validate, libtk_driver_rocm.so): AMD GPUs
// through the HIP runtime's module API (opened at run time, so the plugin
// loads anywhere and reports "no device" without one), kernels compiled to
// AMDGPU code objects.
//
//===----------------------------------------------------------------------===//

#include "common/DriverEntries.h"
#include "common/PluginSupport.h"
#include "compiler/DeviceTarget.h"
#include "compiler/Package.h"
#include "driver/Device.h"
#include "driver/Driver.h"
#include "driver/Executable.h"
#include "tk/tk_plugin.h"

#ifndef TK_PLUGIN_DRIVER_ONLY
#include "compiler/CodeObjectCheck.h"
#include "compiler/Compiler.h"

#include "llvm/Config/llvm-config.h"
#define TK_ROCM_COMPILER "tk-rocm 1 llvm " LLVM_VERSION_STRING
#else
#define TK_ROCM_COMPILER "tk-rocm 1 (driver only)"
#endif

#include <cstdlib>
#include <cstring>
#include <string>

#define TK_ROCM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

thread_local std::string lastError;

/// The driver layer the plain entries forward to (common/DriverEntries.h).
struct RocmDriver {
  static constexpr const char *name = "tk-rocm";
  static std::string &lastError() { return ::lastError; }
  using CopyKind = tk::rocm::CopyKind;
  static constexpr auto initializeDevices = &tk::rocm::initializeDevices;
  static constexpr auto deviceCount = &tk::rocm::deviceCount;
  static constexpr auto queryDeviceProps = &tk::rocm::queryDeviceProps;
  static constexpr auto allocateMemory = &tk::rocm::allocateMemory;
  static constexpr auto freeMemory = &tk::rocm::freeMemory;
  static constexpr auto copyMemory = &tk::rocm::copyMemory;
  static constexpr auto createStream = &tk::rocm::createStream;
  static constexpr auto destroyStream = &tk::rocm::destroyStream;
  static constexpr auto synchronizeStream = &tk::rocm::synchronizeStream;
  static constexpr auto synchronizeDevice = &tk::rocm::synchronizeDevice;
  static constexpr auto createEvent = &tk::rocm::createEvent;
  static constexpr auto destroyEvent = &tk::rocm::destroyEvent;
  static constexpr auto recordEvent = &tk::rocm::recordEvent;
  static constexpr auto synchronizeEvent = &tk::rocm::synchronizeEvent;
  static constexpr auto eventElapsedMs = &tk::rocm::eventElapsedMs;
};
using Entries = tk::plugin::DriverEntries<RocmDriver>;

/// Whether the HIP runtime answered with at least one device.
bool haveDevices() {
  std::string ignored;
  return tk::rocm::initializeDevices(ignored) == TK_SUCCESS &&
         tk::rocm::deviceCount() > 0;
}

/// The target code for `device` is compiled for: TK_ROCM_ARCH when set,
/// else the device's own (when the runtime found it), else gfx942.
tk_status selectTarget(int32_t device, tk::rocm::Target &target,
                       std::string &error) {
  if (const char *arch = std::getenv("TK_ROCM_ARCH"); arch && *arch)
    return tk::rocm::parseTarget(arch, target, error);
  if (haveDevices() && device >= 0 && device < tk::rocm::deviceCount()) {
    std::string arch;
    if (tk_status status = tk::rocm::deviceArch(device, arch, error))
      return status;
    return tk::rocm::parseTarget(arch, target, error);
  }
  // No device to ask: compile for MI300, the GPU tk's AMD code is tuned for.
  return tk::rocm::parseTarget("gfx942", target, error);
}

/// The code object version the HIP runtime loads: TK_ROCM_CODE_OBJECT_VERSION
/// when set; otherwise 5 for ROCm 6 and newer (or with no runtime to ask)
/// and 4 for ROCm 5, whose loader predates version 5.
tk_status selectCodeObjectVersion(int &version, std::string &error) {
  if (const char *set = std::getenv("TK_ROCM_CODE_OBJECT_VERSION");
      set && *set) {
    std::string text = set;
    if (text != "4" && text != "5") {
      error = "tk-rocm: TK_ROCM_CODE_OBJECT_VERSION must be 4 or 5, not '" +
              text + "'";
      return TK_ERROR_INVALID_ARGUMENT;
    }
    version = text[0] - '0';
    return TK_SUCCESS;
  }
  // Opening the runtime is enough to ask its version; no device is needed.
  std::string ignored;
  (void)tk::rocm::openDriver(ignored);
  int runtime = tk::rocm::runtimeVersion();
  // HIP_VERSION = major * 10^7 + minor * 10^5 + patch.
  version = runtime > 0 && runtime < 60000000 ? 4 : 5;
  return TK_SUCCESS;
}

/// The arch and the code object version: both change the code object.
tk_status rocmCompileTarget(int32_t device, char *out, size_t capacity) {
  return Entries::call([&](std::string &error) {
    tk::rocm::Target target;
    int codeObjectVersion = 0;
    if (tk_status status = selectTarget(device, target, error))
      return status;
    if (tk_status status = selectCodeObjectVersion(codeObjectVersion, error))
      return status;
    return tk::plugin::copyTargetName(target.arch + " cov" +
                                          std::to_string(codeObjectVersion),
                                      out, capacity, "tk-rocm", error);
  });
}

tk_status rocmStreamWrap(int32_t device, void *stream, void **out) {
  if (!stream || !out)
    return Entries::fail(TK_ERROR_INVALID_ARGUMENT,
                         "tk-rocm: stream_wrap needs a stream and an output");
  return Entries::call([&](std::string &error) {
    return tk::rocm::wrapStream(device, stream, out, error);
  });
}

/// A wrapped stream belongs to the caller: nothing to release.
tk_status rocmStreamUnwrap(int32_t, void *) { return TK_SUCCESS; }

#ifndef TK_PLUGIN_DRIVER_ONLY
tk_status rocmCompile(const tk_plugin_compile_request *request,
                      tk_plugin_binary *out) {
  if (!request || !out || !request->module_bytecode ||
      request->module_size == 0)
    return Entries::fail(
        TK_ERROR_INVALID_ARGUMENT,
        "tk-rocm: compile needs a request with a module and an "
        "output");
  tk::rocm::CompileInput input;
  input.module = request->module_bytecode;
  input.size = request->module_size;
  input.entry = request->entry ? request->entry : "";
  input.dumpDir = request->dump_dir ? request->dump_dir : "";
  input.options.numWarps = request->num_warps > 0 ? request->num_warps : 4;
  input.options.numStages = request->num_stages > 0 ? request->num_stages : 2;
  std::string error;
  if (tk_status status =
          selectTarget(request->device, input.options.target, error))
    return Entries::fail(status, error);
  if (tk_status status =
          selectCodeObjectVersion(input.codeObjectVersion, error))
    return Entries::fail(status, error);
  tk::rocm::Package package;
  if (tk_status status = tk::rocm::compileToPackage(input, package, error))
    return Entries::fail(status, error);
  return tk::plugin::fillBinary(tk::rocm::serializePackage(package),
                                package.numWarps, package.sharedMemoryBytes,
                                package.vgprs, out, "tk-rocm", lastError);
}

tk_status rocmValidate(const void *binary, size_t size) {
  return Entries::call([&](std::string &error) {
    return tk::rocm::validatePackage(binary, size, error);
  });
}

#endif // TK_PLUGIN_DRIVER_ONLY

tk_status rocmExecutableLoad(int32_t device, const void *binary, size_t size,
                             const char *entry,
                             const tk_plugin_arg_type *argTypes, size_t numArgs,
                             void **out) {
  return tk::plugin::loadExecutable<tk::rocm::Executable>(
      binary, size, entry, argTypes, numArgs, out, "tk-rocm", lastError,
      [&](auto &executable, std::string &error) {
        return tk::rocm::loadExecutable(device, binary, size, entry, executable,
                                        error);
      });
}

tk_status rocmExecutableOccupancy(void *executable, int32_t *out) {
  if (tk_status status =
          tk::plugin::checkOccupancy(executable, out, "tk-rocm", lastError))
    return status;
  return Entries::call([&](std::string &error) {
    return tk::rocm::executableOccupancy(
        *static_cast<tk::rocm::Executable *>(executable), *out, error);
  });
}

tk_status rocmLaunch(void *executable, const int32_t grid[3], void *const *args,
                     void *stream) {
  auto *exe = static_cast<tk::rocm::Executable *>(executable);
  std::string error;
  if (tk_status status = tk::plugin::checkLaunch(
          exe, grid, exe && !exe->argTypes.empty(), args, "tk-rocm", error))
    return Entries::fail(status, std::move(error));
  if (tk_status status =
          tk::rocm::launchExecutable(*exe, grid, args, stream, error))
    return Entries::fail(status, std::move(error));
  return TK_SUCCESS;
}

tk_status rocmGetCapabilities(int32_t device, tk_backend_capabilities *out) {
  if (!out || out->struct_size < sizeof(size_t))
    return Entries::fail(
        TK_ERROR_INVALID_ARGUMENT,
        "tk-rocm: get_capabilities needs a struct with struct_size "
        "set");
  // Without a device, device 0 describes the compile target (gfx942).
  std::string error;
  if (haveDevices())
    if (tk_status status = tk::rocm::checkDevice(device, error))
      return Entries::fail(status, error);
  tk::rocm::Target target;
  if (tk_status status = selectTarget(device, target, error))
    return Entries::fail(status, error);
  tk_backend_capabilities caps;
  std::memset(&caps, 0, sizeof(caps));
  // Every type: fp8 computed in f32 and converted by tk-expand-fp8's
  // integer code (gfx942's fp8 conversions and MFMA are not used yet).
  caps.dtypes = tk::plugin::kAllDtypes;
  // Each atomic_rmw kind is an AMDGPU global atomic (or LLVM's CAS loop
  // where the ISA has none, as for f32 fadd before gfx90a).
  caps.atomics = tk::plugin::kAllAtomics;
  caps.fp8 = 1;
  caps.mma_kinds = target.waveSize == 32 ? TK_MMA_BIT_WMMA : TK_MMA_BIT_MFMA;
  // Tiles live in LDS; a kernel whose tiles do not fit fails to compile.
  caps.max_tile_elements = 0;
  tk::plugin::copyVersioned(caps, out);
  return TK_SUCCESS;
}

const tk_backend_interface kInterface = {
    /*struct_size=*/sizeof(tk_backend_interface),
    /*abi_major=*/TK_PLUGIN_ABI_MAJOR,
    /*abi_minor=*/TK_PLUGIN_ABI_MINOR,
    /*name=*/"rocm",
    /*compiler_version=*/TK_ROCM_COMPILER,
    Entries::lastError,
    Entries::initialize,
    Entries::deviceCount,
    Entries::deviceProps,
    Entries::memAlloc,
    Entries::memFree,
    Entries::memcpy<tk::rocm::CopyKind::HostToDevice>,
    Entries::memcpy<tk::rocm::CopyKind::DeviceToHost>,
    Entries::memcpy<tk::rocm::CopyKind::DeviceToDevice>,
    Entries::streamCreate,
    Entries::streamDestroy,
    Entries::streamSynchronize,
    Entries::deviceSynchronize,
    TK_IF_COMPILER(rocmCompile),
    tk::plugin::freeBinary,
    TK_IF_COMPILER(rocmValidate),
    rocmExecutableLoad,
    tk::plugin::unloadExecutable<tk::rocm::Executable>,
    rocmExecutableOccupancy,
    rocmLaunch,
    rocmGetCapabilities,
    Entries::eventCreate,
    Entries::eventDestroy,
    Entries::eventRecord,
    Entries::eventSynchronize,
    Entries::eventElapsedMs,
    rocmStreamWrap,
    rocmStreamUnwrap,
    rocmCompileTarget,
    /*device_native=*/nullptr,
    /*target_rank=*/nullptr,
};

} // namespace

TK_ROCM_EXPORT const tk_backend_interface *
tk_backend_get_interface(uint32_t abi_major) {
  return tk::plugin::interfaceForAbi(abi_major, kInterface, lastError);
}

TK_ROCM_EXPORT uint32_t tk_backend_abi_version(void) {
  return TK_PLUGIN_ABI_MAJOR;
}
