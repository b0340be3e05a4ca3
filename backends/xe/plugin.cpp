//===- plugin.cpp - the Xe backend's plugin interface -----------*- C++ -*-===//
//
// Exports tk_backend_get_interface for libtk_backend_xe.so (and, without
// compile and validate, libtk_driver_xe.so): Intel GPUs
// through Level Zero (opened at run time, so the plugin loads anywhere and
// reports "no device" without one), kernels compiled to SPIR-V and, where
// ocloc is installed, Intel's native code.
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
#include "compiler/Compiler.h"

#include "llvm/Config/llvm-config.h"
#define TK_XE_COMPILER "tk-xe 1 llvm " LLVM_VERSION_STRING
#else
#define TK_XE_COMPILER "tk-xe 1 (driver only)"
#endif

#include <cstdlib>
#include <cstring>
#include <string>

#define TK_XE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

thread_local std::string lastError;

/// The driver layer the plain entries forward to (common/DriverEntries.h).
struct XeDriver {
  static constexpr const char *name = "tk-xe";
  static std::string &lastError() { return ::lastError; }
  using CopyKind = tk::xe::CopyKind;
  static constexpr auto initializeDevices = &tk::xe::initializeDevices;
  static constexpr auto deviceCount = &tk::xe::deviceCount;
  static constexpr auto queryDeviceProps = &tk::xe::queryDeviceProps;
  static constexpr auto allocateMemory = &tk::xe::allocateMemory;
  static constexpr auto freeMemory = &tk::xe::freeMemory;
  static constexpr auto copyMemory = &tk::xe::copyMemory;
  static constexpr auto createStream = &tk::xe::createStream;
  static constexpr auto destroyStream = &tk::xe::destroyStream;
  static constexpr auto synchronizeStream = &tk::xe::synchronizeStream;
  static constexpr auto synchronizeDevice = &tk::xe::synchronizeDevice;
  static constexpr auto createEvent = &tk::xe::createEvent;
  static constexpr auto destroyEvent = &tk::xe::destroyEvent;
  static constexpr auto recordEvent = &tk::xe::recordEvent;
  static constexpr auto synchronizeEvent = &tk::xe::synchronizeEvent;
  static constexpr auto eventElapsedMs = &tk::xe::eventElapsedMs;
};
using Entries = tk::plugin::DriverEntries<XeDriver>;

/// Whether Level Zero answered with at least one Intel GPU.
bool haveDevices() {
  std::string ignored;
  return tk::xe::initializeDevices(ignored) == TK_SUCCESS &&
         tk::xe::deviceCount() > 0;
}

/// The target code for `device` is compiled for: TK_XE_ARCH when set, else
/// the device's own (when Level Zero found one tk knows), else pvc, the GPU
/// tk's Intel code is tuned for.
tk_status selectTarget(int32_t device, tk::xe::Target &target,
                       std::string &error) {
  if (const char *arch = std::getenv("TK_XE_ARCH"); arch && *arch)
    return tk::xe::parseTarget(arch, target, error);
  if (haveDevices() && device >= 0 && device < tk::xe::deviceCount()) {
    std::string name;
    if (tk_status status = tk::xe::deviceTarget(device, name, error))
      return status;
    if (!name.empty())
      return tk::xe::parseTarget(name, target, error);
    // A GPU tk has no preset for: pvc's code at subgroup 16 runs on every
    // Xe GPU with DPAS of that width; others load the SPIR-V anyway.
  }
  return tk::xe::parseTarget("pvc", target, error);
}

/// Whether packages carry a native binary: TK_XE_NATIVE=0 leaves it to
/// the driver (a faster compile where no Intel GPU will load it).
bool buildNative() {
  const char *set = std::getenv("TK_XE_NATIVE");
  return !set || std::string(set) != "0";
}

/// The arch, and whether the package carries its native binary.
tk_status xeCompileTarget(int32_t device, char *out, size_t capacity) {
  return Entries::call([&](std::string &error) {
    tk::xe::Target target;
    if (tk_status status = selectTarget(device, target, error))
      return status;
    return tk::plugin::copyTargetName(
        target.name + (buildNative() ? " native" : " spirv"), out, capacity,
        "tk-xe", error);
  });
}

tk_status xeStreamWrap(int32_t device, void *stream, void **out) {
  if (!stream || !out)
    return Entries::fail(TK_ERROR_INVALID_ARGUMENT,
                         "tk-xe: stream_wrap needs a command list and an "
                         "output");
  return Entries::call([&](std::string &error) {
    return tk::xe::wrapStream(device, stream, out, error);
  });
}

/// tk's wrapper goes; the caller's command list stays the caller's.
tk_status xeStreamUnwrap(int32_t device, void *stream) {
  return Entries::call([&](std::string &error) {
    return tk::xe::destroyStream(device, stream, error);
  });
}

#ifndef TK_PLUGIN_DRIVER_ONLY
tk_status xeCompile(const tk_plugin_compile_request *request,
                    tk_plugin_binary *out) {
  if (!request || !out || !request->module_bytecode ||
      request->module_size == 0)
    return Entries::fail(TK_ERROR_INVALID_ARGUMENT,
                         "tk-xe: compile needs a request with a module and an "
                         "output");
  tk::xe::CompileInput input;
  input.module = request->module_bytecode;
  input.size = request->module_size;
  input.entry = request->entry ? request->entry : "";
  input.dumpDir = request->dump_dir ? request->dump_dir : "";
  input.options.numWarps = request->num_warps > 0 ? request->num_warps : 4;
  input.options.numStages = request->num_stages > 0 ? request->num_stages : 2;
  input.native = buildNative();
  std::string error;
  if (tk_status status =
          selectTarget(request->device, input.options.target, error))
    return Entries::fail(status, error);
  tk::xe::Package package;
  if (tk_status status = tk::xe::compileToPackage(input, package, error))
    return Entries::fail(status, error);
  const tk::xe::NativeBinary *native = package.nativeFor(package.target);
  return tk::plugin::fillBinary(tk::xe::serializePackage(package),
                                package.numWarps, package.sharedMemoryBytes,
                                native ? native->grfRegisters : 0, out, "tk-xe",
                                lastError);
}

tk_status xeValidate(const void *binary, size_t size) {
  return Entries::call([&](std::string &error) {
    std::string report;
    return tk::xe::validatePackage(binary, size, report, error);
  });
}

#endif // TK_PLUGIN_DRIVER_ONLY

tk_status xeExecutableLoad(int32_t device, const void *binary, size_t size,
                           const char *entry,
                           const tk_plugin_arg_type *argTypes, size_t numArgs,
                           void **out) {
  return tk::plugin::loadExecutable<tk::xe::Executable>(
      binary, size, entry, argTypes, numArgs, out, "tk-xe", lastError,
      [&](auto &executable, std::string &error) {
        return tk::xe::loadExecutable(device, binary, size, entry, executable,
                                      error);
      });
}

tk_status xeExecutableOccupancy(void *executable, int32_t *out) {
  if (tk_status status =
          tk::plugin::checkOccupancy(executable, out, "tk-xe", lastError))
    return status;
  return Entries::call([&](std::string &error) {
    return tk::xe::executableOccupancy(
        *static_cast<tk::xe::Executable *>(executable), *out, error);
  });
}

tk_status xeLaunch(void *executable, const int32_t grid[3], void *const *args,
                   void *stream) {
  auto *exe = static_cast<tk::xe::Executable *>(executable);
  std::string error;
  if (tk_status status = tk::plugin::checkLaunch(
          exe, grid, exe && !exe->argTypes.empty(), args, "tk-xe", error))
    return Entries::fail(status, std::move(error));
  if (tk_status status =
          tk::xe::launchExecutable(*exe, grid, args, stream, error))
    return Entries::fail(status, std::move(error));
  return TK_SUCCESS;
}

tk_status xeGetCapabilities(int32_t device, tk_backend_capabilities *out) {
  if (!out || out->struct_size < sizeof(size_t))
    return Entries::fail(TK_ERROR_INVALID_ARGUMENT,
                         "tk-xe: get_capabilities needs a struct with "
                         "struct_size set");
  // Without a device, device 0 describes the compile target (pvc).
  std::string error;
  if (haveDevices())
    if (tk_status status = tk::xe::checkDevice(device, error))
      return Entries::fail(status, error);
  tk::xe::Target target;
  if (tk_status status = selectTarget(device, target, error))
    return Entries::fail(status, error);
  tk_backend_capabilities caps;
  std::memset(&caps, 0, sizeof(caps));
  // Every type; bf16 as its 16 bits around f32 arithmetic
  // (compiler/BFloat16AsInt.h), fp8 as its 8 bits, converted by
  // tk-expand-fp8's integer code (Xe-HPC has no fp8 DPAS).
  caps.dtypes = tk::plugin::kAllDtypes;
  if (!target.fp64)
    caps.dtypes &= ~uint32_t(TK_DTYPE_BIT_F64);
  // OpenCL's atomics, with the float ones of SPV_EXT_shader_atomic_float_*.
  caps.atomics = tk::plugin::kAllAtomics;
  caps.fp8 = 1;
  caps.mma_kinds = TK_MMA_BIT_DPAS;
  // Tiles live in SLM; a kernel whose tiles do not fit fails to compile.
  caps.max_tile_elements = 0;
  tk::plugin::copyVersioned(caps, out);
  return TK_SUCCESS;
}

const tk_backend_interface kInterface = {
    /*struct_size=*/sizeof(tk_backend_interface),
    /*abi_major=*/TK_PLUGIN_ABI_MAJOR,
    /*abi_minor=*/TK_PLUGIN_ABI_MINOR,
    /*name=*/"xe",
    /*compiler_version=*/TK_XE_COMPILER,
    Entries::lastError,
    Entries::initialize,
    Entries::deviceCount,
    Entries::deviceProps,
    Entries::memAlloc,
    Entries::memFree,
    Entries::memcpy<tk::xe::CopyKind::HostToDevice>,
    Entries::memcpy<tk::xe::CopyKind::DeviceToHost>,
    Entries::memcpy<tk::xe::CopyKind::DeviceToDevice>,
    Entries::streamCreate,
    Entries::streamDestroy,
    Entries::streamSynchronize,
    Entries::deviceSynchronize,
    TK_IF_COMPILER(xeCompile),
    tk::plugin::freeBinary,
    TK_IF_COMPILER(xeValidate),
    xeExecutableLoad,
    tk::plugin::unloadExecutable<tk::xe::Executable>,
    xeExecutableOccupancy,
    xeLaunch,
    xeGetCapabilities,
    Entries::eventCreate,
    Entries::eventDestroy,
    Entries::eventRecord,
    Entries::eventSynchronize,
    Entries::eventElapsedMs,
    xeStreamWrap,
    xeStreamUnwrap,
    xeCompileTarget,
    /*device_native=*/nullptr,
    /*target_rank=*/nullptr,
};

} // namespace

TK_XE_EXPORT const tk_backend_interface *
tk_backend_get_interface(uint32_t abi_major) {
  return tk::plugin::interfaceForAbi(abi_major, kInterface, lastError);
}

TK_XE_EXPORT uint32_t tk_backend_abi_version(void) {
  return TK_PLUGIN_ABI_MAJOR;
}
