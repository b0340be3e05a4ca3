//===- PluginSupport.h - what every plugin's ABI table needs ----*- C++ -*-===//
//
// Header-only helpers for the exported side of tk_plugin.h, shared by the
// backends so that each keeps only what is its own.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_COMMON_PLUGINSUPPORT_H_
#define TK_BACKENDS_COMMON_PLUGINSUPPORT_H_

#include "tk/tk_plugin.h"
#ifndef TK_PLUGIN_DRIVER_ONLY
#include "tk/core/CompileSupport.h"
#endif

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

/// A plugin's source builds twice: libtk_backend_<name>.so with its compiler,
/// and libtk_driver_<name>.so (TK_PLUGIN_DRIVER_ONLY; tk_add_driver_plugin)
/// without one, for the runtime that loads packages (libtk_runtime.so). An
/// ABI table entry that needs the compiler is TK_IF_COMPILER(entry): null in
/// the driver-only build.
#ifdef TK_PLUGIN_DRIVER_ONLY
#define TK_IF_COMPILER(entry) nullptr
#else
#define TK_IF_COMPILER(entry) entry
#endif

namespace tk::plugin {

#ifndef TK_PLUGIN_DRIVER_ONLY
/// The status a plugin's compile returns for readKernelModule's answer.
inline tk_status statusOf(tk::KernelModuleError error) {
  switch (error) {
  case tk::KernelModuleError::None:
    return TK_SUCCESS;
  case tk::KernelModuleError::InvalidIR:
    return TK_ERROR_INVALID_IR;
  case tk::KernelModuleError::UnknownEntry:
    return TK_ERROR_NOT_FOUND;
  }
  return TK_ERROR_INVALID_IR;
}
#endif

/// Copies the fields of `full` that fit in the caller's `out->struct_size`
/// (ABI structs only grow at the end), and records the size copied.
template <typename Versioned>
void copyVersioned(Versioned full, Versioned *out) {
  size_t size =
      out->struct_size < sizeof(full) ? out->struct_size : sizeof(full);
  full.struct_size = size;
  std::memcpy(out, &full, size);
}

/// compile's output: a malloc'ed copy of `bytes`, which freeBinary
/// releases, and the launch shape the runtime records. `plugin` names the
/// plugin in the error ("tk-cpu").
inline tk_status fillBinary(const std::string &bytes, int32_t numWarps,
                            int32_t sharedMemoryBytes,
                            int32_t registersPerThread, tk_plugin_binary *out,
                            const char *plugin, std::string &error) {
  void *data = std::malloc(bytes.size());
  if (!data) {
    error = std::string(plugin) + ": no memory for the binary";
    return TK_ERROR_OUT_OF_MEMORY;
  }
  std::memcpy(data, bytes.data(), bytes.size());
  if (out->struct_size == 0)
    out->struct_size = sizeof(*out);
  out->data = data;
  out->size = bytes.size();
  out->num_warps = numWarps;
  out->shared_memory_bytes = sharedMemoryBytes;
  out->registers_per_thread = registersPerThread;
  return TK_SUCCESS;
}

/// compile_target's output: `target` copied to `out` with its NUL, or
/// INVALID_ARGUMENT when `out` is NULL or `capacity` cannot hold it.
/// `plugin` names the plugin in the error ("tk-cuda").
inline tk_status copyTargetName(const std::string &target, char *out,
                                size_t capacity, const char *plugin,
                                std::string &error) {
  if (!out || capacity <= target.size()) {
    error = std::string(plugin) + ": compile_target needs " +
            std::to_string(target.size() + 1) + " bytes for '" + target +
            "', given " + std::to_string(out ? capacity : 0);
    return TK_ERROR_INVALID_ARGUMENT;
  }
  std::memcpy(out, target.c_str(), target.size() + 1);
  return TK_SUCCESS;
}

/// binary_free of a binary made by fillBinary.
inline void freeBinary(tk_plugin_binary *binary) {
  if (!binary)
    return;
  std::free(binary->data);
  binary->data = nullptr;
  binary->size = 0;
}

/// executable_load: checks the arguments, lets the backend's `load(loaded,
/// error)` make its `Executable` from the binary, records the argument
/// types launch checks against, and hands the executable out. `plugin`
/// names the plugin in errors ("tk-cpu"); a failure's message goes to
/// `lastError`.
template <typename Executable, typename Load>
tk_status loadExecutable(const void *binary, size_t size, const char *entry,
                         const tk_plugin_arg_type *argTypes, size_t numArgs,
                         void **out, const char *plugin, std::string &lastError,
                         Load &&load) {
  if (!binary || !size || !entry || !out || (numArgs && !argTypes)) {
    lastError = std::string(plugin) +
                ": executable_load needs a binary, an entry and an output";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  std::unique_ptr<Executable> executable;
  std::string error;
  if (tk_status status = load(executable, error)) {
    lastError = std::move(error);
    return status;
  }
  executable->argTypes.assign(argTypes, argTypes + numArgs);
  *out = executable.release();
  return TK_SUCCESS;
}

/// executable_unload of an executable made by loadExecutable.
template <typename Executable> tk_status unloadExecutable(void *executable) {
  delete static_cast<Executable *>(executable);
  return TK_SUCCESS;
}

/// What executable_occupancy needs before the backend answers.
inline tk_status checkOccupancy(const void *executable, const int32_t *out,
                                const char *plugin, std::string &lastError) {
  if (executable && out)
    return TK_SUCCESS;
  lastError =
      std::string(plugin) + ": occupancy needs an executable and an output";
  return TK_ERROR_INVALID_ARGUMENT;
}

/// Each integer and float type of the dialect but fp8.
constexpr uint32_t kDtypesButFp8 =
    TK_DTYPE_BIT_I1 | TK_DTYPE_BIT_I8 | TK_DTYPE_BIT_I16 | TK_DTYPE_BIT_I32 |
    TK_DTYPE_BIT_I64 | TK_DTYPE_BIT_F16 | TK_DTYPE_BIT_BF16 | TK_DTYPE_BIT_F32 |
    TK_DTYPE_BIT_F64;

/// Each integer and float type of the dialect, fp8 (e4m3, e5m2) included:
/// what the CPU and CUDA backends load, store and compute (fp8 in f32, its
/// conversions by tk-expand-fp8).
constexpr uint32_t kAllDtypes =
    kDtypesButFp8 | TK_DTYPE_BIT_F8E4M3 | TK_DTYPE_BIT_F8E5M2;

/// Every atomic_rmw kind and CAS.
constexpr uint32_t kAllAtomics =
    TK_ATOMIC_BIT_ADD | TK_ATOMIC_BIT_FADD | TK_ATOMIC_BIT_MAX |
    TK_ATOMIC_BIT_MIN | TK_ATOMIC_BIT_UMAX | TK_ATOMIC_BIT_UMIN |
    TK_ATOMIC_BIT_AND | TK_ATOMIC_BIT_OR | TK_ATOMIC_BIT_XOR |
    TK_ATOMIC_BIT_XCHG | TK_ATOMIC_BIT_CAS;

/// What launch needs before the backend runs the kernel: an executable, a
/// grid of at least 1 in every dimension, and arguments when the kernel
/// takes any. Builds a message only on failure: launch allocates nothing on
/// success.
inline tk_status checkLaunch(const void *executable, const int32_t grid[3],
                             bool takesArguments, void *const *args,
                             const char *plugin, std::string &error) {
  if (!executable || !grid) {
    error = std::string(plugin) + ": launch needs an executable and a grid";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  if (grid[0] < 1 || grid[1] < 1 || grid[2] < 1) {
    error = std::string(plugin) + ": grid (" + std::to_string(grid[0]) + ", " +
            std::to_string(grid[1]) + ", " + std::to_string(grid[2]) +
            ") has a dimension below 1";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  if (takesArguments && !args) {
    error = std::string(plugin) + ": launch without arguments";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  return TK_SUCCESS;
}

/// tk_backend_get_interface's answer: `table` for the major version it was
/// built for; otherwise NULL, with `lastError` naming both versions.
inline const tk_backend_interface *
interfaceForAbi(uint32_t abiMajor, const tk_backend_interface &table,
                std::string &lastError) {
  if (abiMajor == TK_PLUGIN_ABI_MAJOR)
    return &table;
  lastError = std::string("tk-") + table.name + ": built for plugin ABI " +
              std::to_string(TK_PLUGIN_ABI_MAJOR) + ", asked for " +
              std::to_string(abiMajor);
  return nullptr;
}

} // namespace tk::plugin

#endif // TK_BACKENDS_COMMON_PLUGINSUPPORT_H_
