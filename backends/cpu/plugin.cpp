//===- plugin.cpp - the CPU backend's plugin interface ----------*- C++ -*-===//
//
// Exports tk_backend_get_interface for libtk_backend_cpu.so (and, without
// compile and validate, libtk_driver_cpu.so): one device (the host), host
// memory as device memory, synchronous streams, kernels compiled to shared
// objects and run on a thread pool.
//
//===----------------------------------------------------------------------===//

#include "common/PluginSupport.h"
#include "compiler/DeviceTarget.h"
#include "driver/Device.h"
#include "driver/Executable.h"
#include "driver/ThreadPool.h"
#include "tk/tk_plugin.h"

#ifndef TK_PLUGIN_DRIVER_ONLY
#include "compiler/Compiler.h"

#include "llvm/Config/llvm-config.h"
// Part of the disk cache key: bump the number whenever the generated code
// changes, or binaries of the older compiler keep being loaded.
#define TK_CPU_COMPILER "tk-cpu 4 llvm " LLVM_VERSION_STRING
#else
#define TK_CPU_COMPILER "tk-cpu 4 (driver only)"
#endif

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>

#define TK_CPU_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

thread_local std::string lastError;

tk_status fail(tk_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

tk_status checkDevice(int32_t device) {
  if (device != 0)
    return fail(TK_ERROR_NOT_FOUND,
                "tk-cpu: device " + std::to_string(device) +
                    " does not exist (the CPU is device 0)");
  return TK_SUCCESS;
}

const char *cpuLastError() { return lastError.c_str(); }

// The pool starts on the first launch; a TK_CPU_THREADS it could not honour
// is refused here, where the caller sees it, rather than ignored then.
tk_status cpuInitialize() {
  std::string error;
  tk::cpu::threadsFromEnvironment(std::getenv("TK_CPU_THREADS"), error);
  if (!error.empty())
    return fail(TK_ERROR_INVALID_ARGUMENT, "tk-cpu: " + error);
  return TK_SUCCESS;
}

tk_status cpuDeviceCount(int32_t *out) {
  if (!out)
    return fail(TK_ERROR_INVALID_ARGUMENT, "tk-cpu: out_count is NULL");
  *out = 1;
  return TK_SUCCESS;
}

/// The CPU's arch as device_props reports it: LLVM's name of it, or
/// without a compiler its x86-64 level.
std::string getArchName() {
#ifndef TK_PLUGIN_DRIVER_ONLY
  return tk::cpu::hostCpuName();
#else
  std::string level = tk::cpu::hostLevel();
  return level.empty() ? "host" : level;
#endif
}

tk_status cpuDeviceProps(int32_t device, tk_device_props *out) {
  if (tk_status status = checkDevice(device))
    return status;
  if (!out || out->struct_size == 0)
    return fail(TK_ERROR_INVALID_ARGUMENT,
                "tk-cpu: device_props needs a struct with struct_size set");
  tk::cpu::queryDevice(out, getArchName());
  return TK_SUCCESS;
}

tk_status cpuMemAlloc(int32_t device, size_t bytes, void **out) {
  if (tk_status status = checkDevice(device))
    return status;
  if (!out)
    return fail(TK_ERROR_INVALID_ARGUMENT, "tk-cpu: out_pointer is NULL");
  // 64-byte aligned (a cache line, an AVX-512 vector); aligned_alloc wants
  // a multiple of the alignment.
  // Rounding up must not wrap: SIZE_MAX - 62 would round to 0 and hand out
  // 64 bytes for a buffer the runtime believes is huge.
  if (bytes > std::numeric_limits<size_t>::max() - 63)
    return fail(TK_ERROR_OUT_OF_MEMORY,
                "tk-cpu: cannot allocate " + std::to_string(bytes) +
                    " bytes: more than the address space holds");
  size_t rounded = (bytes + 63) / 64 * 64;
  void *pointer = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!pointer)
    return fail(TK_ERROR_OUT_OF_MEMORY,
                "tk-cpu: cannot allocate " + std::to_string(bytes) + " bytes");
  *out = pointer;
  return TK_SUCCESS;
}

tk_status cpuMemFree(int32_t device, void *pointer) {
  if (tk_status status = checkDevice(device))
    return status;
  std::free(pointer);
  return TK_SUCCESS;
}

tk_status cpuMemcpy(int32_t device, void *dst, const void *src, size_t bytes) {
  if (tk_status status = checkDevice(device))
    return status;
  if (bytes && (!dst || !src))
    return fail(TK_ERROR_INVALID_ARGUMENT,
                "tk-cpu: memcpy with a NULL pointer");
  if (bytes)
    std::memmove(dst, src, bytes);
  return TK_SUCCESS;
}

/// Streams execute synchronously: work is done when the call returns, so a
/// stream is only a token.
char streamToken;

tk_status cpuStreamCreate(int32_t device, void **out) {
  if (tk_status status = checkDevice(device))
    return status;
  if (!out)
    return fail(TK_ERROR_INVALID_ARGUMENT, "tk-cpu: out_stream is NULL");
  *out = &streamToken;
  return TK_SUCCESS;
}

tk_status cpuStreamDestroy(int32_t device, void *) {
  return checkDevice(device);
}
tk_status cpuStreamSynchronize(int32_t device, void *) {
  return checkDevice(device);
}
tk_status cpuDeviceSynchronize(int32_t device) { return checkDevice(device); }

/// Events: with synchronous streams, the work before a record is done when
/// the record runs, so an event is the host's clock at its last record.
struct CpuEvent {
  std::chrono::steady_clock::time_point recorded;
};

tk_status cpuEventCreate(int32_t device, void **out) {
  if (tk_status status = checkDevice(device))
    return status;
  if (!out)
    return fail(TK_ERROR_INVALID_ARGUMENT, "tk-cpu: out_event is NULL");
  *out = new CpuEvent{std::chrono::steady_clock::now()};
  return TK_SUCCESS;
}

tk_status cpuEventDestroy(int32_t device, void *event) {
  if (tk_status status = checkDevice(device))
    return status;
  delete static_cast<CpuEvent *>(event);
  return TK_SUCCESS;
}

tk_status cpuEventRecord(int32_t device, void *event, void *) {
  if (tk_status status = checkDevice(device))
    return status;
  if (!event)
    return fail(TK_ERROR_INVALID_ARGUMENT, "tk-cpu: event is NULL");
  static_cast<CpuEvent *>(event)->recorded = std::chrono::steady_clock::now();
  return TK_SUCCESS;
}

tk_status cpuEventSynchronize(int32_t device, void *event) {
  if (!event)
    return fail(TK_ERROR_INVALID_ARGUMENT, "tk-cpu: event is NULL");
  return checkDevice(device);
}

tk_status cpuEventElapsedMs(int32_t device, void *start, void *end,
                            float *out) {
  if (tk_status status = checkDevice(device))
    return status;
  if (!start || !end || !out)
    return fail(TK_ERROR_INVALID_ARGUMENT,
                "tk-cpu: event_elapsed_ms needs two events and an output");
  std::chrono::duration<float, std::milli> elapsed =
      static_cast<CpuEvent *>(end)->recorded -
      static_cast<CpuEvent *>(start)->recorded;
  *out = elapsed.count();
  return TK_SUCCESS;
}

#ifndef TK_PLUGIN_DRIVER_ONLY
tk_status cpuCompile(const tk_plugin_compile_request *request,
                     tk_plugin_binary *out) {
  if (!request || !out || !request->module_bytecode ||
      request->module_size == 0)
    return fail(TK_ERROR_INVALID_ARGUMENT,
                "tk-cpu: compile needs a request with a module and an output");
  tk::cpu::CompileInput input;
  input.module = request->module_bytecode;
  input.size = request->module_size;
  input.entry = request->entry ? request->entry : "";
  input.dumpDir = request->dump_dir ? request->dump_dir : "";
  std::string object, error;
  tk_status status = tk::cpu::compileToSharedObject(input, object, error);
  if (status != TK_SUCCESS)
    return fail(status, error);
  return tk::plugin::fillBinary(
      object, request->num_warps, /*sharedMemoryBytes=*/0,
      /*registersPerThread=*/0, out, "tk-cpu", lastError);
}

tk_status cpuValidate(const void *binary, size_t size) {
  std::string error;
  tk_status status = tk::cpu::validateObject(binary, size, error);
  if (status != TK_SUCCESS)
    return fail(status, error);
  return TK_SUCCESS;
}

#endif // TK_PLUGIN_DRIVER_ONLY

tk_status cpuExecutableLoad(int32_t device, const void *binary, size_t size,
                            const char *entry,
                            const tk_plugin_arg_type *argTypes, size_t numArgs,
                            void **out) {
  if (tk_status status = checkDevice(device))
    return status;
  return tk::plugin::loadExecutable<tk::cpu::Executable>(
      binary, size, entry, argTypes, numArgs, out, "tk-cpu", lastError,
      [&](auto &executable, std::string &error) {
        return tk::cpu::loadExecutable(binary, size, entry, executable, error);
      });
}

tk_status cpuExecutableOccupancy(void *executable, int32_t *out) {
  if (tk_status status =
          tk::plugin::checkOccupancy(executable, out, "tk-cpu", lastError))
    return status;
  // One program at a time per hardware thread.
  *out = 1;
  return TK_SUCCESS;
}

tk_status cpuLaunch(void *executable, const int32_t grid[3], void *const *args,
                    void *stream) {
  auto *exe = static_cast<tk::cpu::Executable *>(executable);
  std::string error;
  if (tk_status status = tk::plugin::checkLaunch(
          exe, grid, exe && !exe->argTypes.empty(), args, "tk-cpu", error))
    return fail(status, std::move(error));
  tk::cpu::ThreadPool::get().run(exe->launch, args, grid, exe->tileStackBytes);
  return TK_SUCCESS;
}

tk_status cpuGetCapabilities(int32_t device, tk_backend_capabilities *out) {
  if (tk_status status = checkDevice(device))
    return status;
  if (!out || out->struct_size < sizeof(size_t))
    return fail(TK_ERROR_INVALID_ARGUMENT,
                "tk-cpu: get_capabilities needs a struct with struct_size set");
  tk_backend_capabilities caps;
  std::memset(&caps, 0, sizeof(caps));
  // Every type: TkToLoops lowers them all (f16, bf16 and fp8 computed in
  // f32; fp8 moves as bytes and converts by tk-expand-fp8).
  caps.dtypes = tk::plugin::kAllDtypes;
  // Each atomic_rmw kind is an llvm.atomicrmw, CAS an llvm.cmpxchg.
  caps.atomics = tk::plugin::kAllAtomics;
  caps.fp8 = 1;
  // tk.dot is an i-k-j loop nest of fmas; no matrix unit.
  caps.mma_kinds = TK_MMA_NONE;
  // Tiles live in stack buffers of the program's thread; no fixed limit.
  caps.max_tile_elements = 0;
  tk::plugin::copyVersioned(caps, out);
  return TK_SUCCESS;
}

/// What compile makes code for: the host as LLVM describes it, or the
/// x86-64 level TK_CPU_ARCH names. Without a compiler to describe the host,
/// the highest level this CPU runs.
tk_status selectTarget(std::string &name, std::string &error) {
#ifndef TK_PLUGIN_DRIVER_ONLY
  return tk::cpu::compileTargetName(name, error);
#else
  std::string level;
  if (tk_status status = tk::cpu::requestedLevel(level, error))
    return status;
  if (level.empty())
    level = tk::cpu::hostLevel();
  if (level.empty()) {
    error = "tk-cpu: the driver-only plugin runs x86-64 code only";
    return TK_ERROR_UNSUPPORTED;
  }
  name = tk::cpu::levelTargetName(level);
  return TK_SUCCESS;
#endif
}

tk_status cpuCompileTarget(int32_t device, char *out, size_t capacity) {
  if (tk_status status = checkDevice(device))
    return status;
  std::string name, error;
  if (tk_status status = selectTarget(name, error))
    return fail(status, error);
  if (tk_status status =
          tk::plugin::copyTargetName(name, out, capacity, "tk-cpu", error))
    return fail(status, error);
  return TK_SUCCESS;
}

/// 2 for this CPU's own target, 1 for an x86-64 level it runs, 0 for
/// anything else (code for another CPU's features, which only a compiler
/// could compare).
tk_status cpuTargetRank(int32_t device, const char *name, int32_t *out) {
  if (tk_status status = checkDevice(device))
    return status;
  if (!name || !out)
    return fail(TK_ERROR_INVALID_ARGUMENT,
                "tk-cpu: target_rank needs a target and an output");
  std::string own, error;
  if (tk_status status = selectTarget(own, error))
    return fail(status, error);
  *out = own == name ? 2 : tk::cpu::levelRunsOnHost(name) ? 1 : 0;
  return TK_SUCCESS;
}

const tk_backend_interface kInterface = {
    /*struct_size=*/sizeof(tk_backend_interface),
    /*abi_major=*/TK_PLUGIN_ABI_MAJOR,
    /*abi_minor=*/TK_PLUGIN_ABI_MINOR,
    /*name=*/"cpu",
    /*compiler_version=*/TK_CPU_COMPILER,
    cpuLastError,
    cpuInitialize,
    cpuDeviceCount,
    cpuDeviceProps,
    cpuMemAlloc,
    cpuMemFree,
    cpuMemcpy,
    cpuMemcpy,
    cpuMemcpy,
    cpuStreamCreate,
    cpuStreamDestroy,
    cpuStreamSynchronize,
    cpuDeviceSynchronize,
    TK_IF_COMPILER(cpuCompile),
    tk::plugin::freeBinary,
    TK_IF_COMPILER(cpuValidate),
    cpuExecutableLoad,
    tk::plugin::unloadExecutable<tk::cpu::Executable>,
    cpuExecutableOccupancy,
    cpuLaunch,
    cpuGetCapabilities,
    cpuEventCreate,
    cpuEventDestroy,
    cpuEventRecord,
    cpuEventSynchronize,
    cpuEventElapsedMs,
    // No native streams: the host's work is the caller's own thread's.
    /*stream_wrap=*/nullptr,
    /*stream_unwrap=*/nullptr,
    cpuCompileTarget,
    /*device_native=*/nullptr,
    cpuTargetRank,
};

} // namespace

TK_CPU_EXPORT const tk_backend_interface *
tk_backend_get_interface(uint32_t abi_major) {
  return tk::plugin::interfaceForAbi(abi_major, kInterface, lastError);
}

TK_CPU_EXPORT uint32_t tk_backend_abi_version(void) {
  return TK_PLUGIN_ABI_MAJOR;
}
