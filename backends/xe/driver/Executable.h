//===- Executable.h - a loaded Xe kernel ------------------------*- C++ -*-===//
//
// A package's kernel built for one device as a ze_module_handle_t (from its
// native binary for the device's target, or else from its SPIR-V), the
// ze_kernel_handle_t, and the launch shape the package recorded.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_XE_DRIVER_EXECUTABLE_H_
#define TK_BACKENDS_XE_DRIVER_EXECUTABLE_H_

#include "driver/Driver.h"
#include "tk/tk_plugin.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tk::xe {

struct Executable {
  int32_t device = 0;
  ze_module_handle_t module = nullptr;
  ze_kernel_handle_t kernel = nullptr;
  /// Work-items of a workgroup, set on the kernel once at load
  /// (zeKernelSetGroupSize).
  unsigned threadsPerBlock = 0;
  /// The kernel's SLM. Static: the module declares it, so launches pass no
  /// SLM argument.
  unsigned sharedMemoryBytes = 0;
  /// Work-items of a subgroup (a hardware thread's SIMD width): the
  /// package's, which the loaded kernel was checked to have.
  unsigned subgroupSize = 0;
  /// GRFs a hardware thread of the kernel has: the native binary's (256 in
  /// large-GRF mode), 128 for SPIR-V built with no options.
  unsigned grfRegisters = 128;
  /// Parameters of the loaded kernel (zeKernelGetProperties), which launch
  /// holds argTypes against.
  unsigned numKernelArgs = 0;
  std::string entry;
  std::vector<tk_plugin_arg_type> argTypes;
  /// Whether the module was made from the package's native binary (false:
  /// from its SPIR-V, finalized by the driver).
  bool native = false;
  /// Held from the first zeKernelSetArgumentValue to the launch's append:
  /// a kernel's arguments are state of the kernel object, read when a
  /// launch is appended, and two threads launching it must not mix theirs.
  mutable std::mutex launchMutex;

  ~Executable();
};

/// Loads `package` (XePackage bytes) on `device`. TK_ERROR_UNSUPPORTED when
/// the device cannot run it (its subgroup size, workgroup size or SLM);
/// TK_ERROR_COMPILATION, with the driver's build log, when the driver
/// cannot build its SPIR-V.
tk_status loadExecutable(int32_t device, const void *package, size_t size,
                         const std::string &entry,
                         std::unique_ptr<Executable> &out, std::string &error);

/// Resident workgroups per Xe-core at the executable's launch shape.
tk_status executableOccupancy(const Executable &executable, int32_t &out,
                              std::string &error);

/// Sets the kernel's arguments from `args` (args[i] points at argument i's
/// value, of argTypes[i]) and appends the launch over `grid` workgroups to
/// `stream` (NULL: the device's default stream). Allocates nothing unless it
/// fails, or the default stream is used for the first time.
tk_status launchExecutable(const Executable &executable, const int32_t grid[3],
                           void *const *args, void *stream, std::string &error);

} // namespace tk::xe

#endif // TK_BACKENDS_XE_DRIVER_EXECUTABLE_H_
