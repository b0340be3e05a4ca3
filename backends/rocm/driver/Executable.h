//===- Executable.h - a loaded ROCm kernel ----------------------*- C++ -*-===//
//
// A package's AMDGPU code object (hsaco) loaded as a hipModule_t for one
// device, the kernel's hipFunction_t, and the launch shape the package
// recorded.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_ROCM_DRIVER_EXECUTABLE_H_
#define TK_BACKENDS_ROCM_DRIVER_EXECUTABLE_H_

#include "driver/Driver.h"
#include "tk/tk_plugin.h"

#include <memory>
#include <string>
#include <vector>

namespace tk::rocm {

struct Executable {
  int32_t device = 0;
  hipModule_t module = nullptr;
  hipFunction_t function = nullptr;
  unsigned threadsPerBlock = 0;
  /// The kernel's LDS. Static: the code object declares it, so launches
  /// pass no dynamic shared memory.
  unsigned sharedMemoryBytes = 0;
  /// VGPRs per lane: the loaded function's (HIP_FUNC_ATTRIBUTE_NUM_REGS),
  /// or the package's where the runtime cannot say.
  int registers = 0;
  std::string entry;
  std::vector<tk_plugin_arg_type> argTypes;
  /// The hsaco the module was loaded from, kept while the module lives: the
  /// runtime may go on pointing at the image it was given (ROCm 5's
  /// FatBinaryInfo keeps the pointer; debuggers read code objects loaded from
  /// memory through a memory:// URI naming its address).
  std::string codeObject;

  ~Executable();
};

/// Loads `package` (RocmPackage bytes) on `device`. TK_ERROR_UNSUPPORTED
/// when it was compiled for another gfx target or wave size.
tk_status loadExecutable(int32_t device, const void *package, size_t size,
                         const std::string &entry,
                         std::unique_ptr<Executable> &out, std::string &error);

/// Resident workgroups per CU at the executable's launch shape.
tk_status executableOccupancy(const Executable &executable, int32_t &out,
                              std::string &error);

/// hipModuleLaunchKernel over `grid` with `args` as kernelParams. Allocates
/// nothing unless it fails.
tk_status launchExecutable(const Executable &executable, const int32_t grid[3],
                           void *const *args, void *stream, std::string &error);

} // namespace tk::rocm

#endif // TK_BACKENDS_ROCM_DRIVER_EXECUTABLE_H_
