//===- Executable.h - a loaded CUDA kernel ----------------------*- C++ -*-===//
//
// A package's cubin (or its PTX, JIT-compiled by the driver) loaded as a
// CUmodule in a device's primary context, the kernel's CUfunction, and the
// launch shape the package recorded.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CUDA_DRIVER_EXECUTABLE_H_
#define TK_BACKENDS_CUDA_DRIVER_EXECUTABLE_H_

#include "driver/Driver.h"
#include "tk/tk_plugin.h"

#include <memory>
#include <string>
#include <vector>

namespace tk::cuda {

struct Executable {
  int32_t device = 0;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  unsigned threadsPerBlock = 0;
  unsigned sharedMemoryBytes = 0;
  /// From the loaded function (CU_FUNC_ATTRIBUTE_NUM_REGS).
  int registersPerThread = 0;
  /// Whether the cubin failed to load and the PTX was JIT-compiled.
  bool fromPtx = false;
  std::string entry;
  std::vector<tk_plugin_arg_type> argTypes;

  ~Executable();
};

/// Loads `package` (CudaPackage bytes) on `device`: the cubin, or the PTX
/// when the driver has no use for the cubin (another GPU generation).
tk_status loadExecutable(int32_t device, const void *package, size_t size,
                         const std::string &entry,
                         std::unique_ptr<Executable> &out, std::string &error);

/// Resident blocks per SM at the executable's launch shape.
tk_status executableOccupancy(const Executable &executable, int32_t &out,
                              std::string &error);

/// cuLaunchKernel over `grid` with `args` as kernelParams. Allocates nothing
/// unless it fails.
tk_status launchExecutable(const Executable &executable, const int32_t grid[3],
                           void *const *args, void *stream, std::string &error);

} // namespace tk::cuda

#endif // TK_BACKENDS_CUDA_DRIVER_EXECUTABLE_H_
