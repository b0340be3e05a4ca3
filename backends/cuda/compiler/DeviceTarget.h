//===- DeviceTarget.h - the GPU CUDA code is made for -----------*- C++ -*-===//
//
// Compute capabilities and target names ("sm_80", "sm_90a"): what the
// compiler compiles for, and what the plugin's compile_target and
// target_rank answer, which the driver-only plugin has too (no MLIR here).
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CUDA_COMPILER_DEVICETARGET_H_
#define TK_BACKENDS_CUDA_COMPILER_DEVICETARGET_H_

#include "tk/tk.h"

#include <string>

namespace tk::cuda {

/// The GPU a kernel is compiled for.
struct Target {
  /// Compute capability as major*10+minor: 80, 86, 89, 90.
  int computeCapability = 90;
  /// "sm_90a": architecture-specific features (wgmma) allowed.
  bool archSpecific = true;

  /// Threads one SM holds at once: 1536 on sm_86 and sm_89, else 2048.
  int maxThreadsPerSM() const {
    return computeCapability == 86 || computeCapability == 89 ? 1536 : 2048;
  }

  /// "sm_80", "sm_90a".
  std::string name() const {
    return "sm_" + std::to_string(computeCapability) +
           (archSpecific ? "a" : "");
  }
};

/// The target for a GPU of compute capability `computeCapability` (major*10
/// + minor): sm_90a for 9.0, sm_8x for 8.x, sm_90 (run through the PTX JIT)
/// for newer GPUs. TK_ERROR_UNSUPPORTED below sm_80.
tk_status targetForComputeCapability(int computeCapability, Target &out,
                                     std::string &error);

/// Parses "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a".
tk_status parseTargetName(const std::string &name, Target &out,
                          std::string &error);

/// Whether code compiled for `name` (a compile target: "sm_80",
/// "sm_90a"; older packages may add a lowering: "sm_90a+simt-dots") runs on a
/// GPU of compute capability `computeCapability`: its cubin or, on a later
/// GPU, its PTX through the driver's JIT. Code for an "a" target runs only
/// on that exact GPU.
bool runsOnComputeCapability(const std::string &name, int computeCapability);

} // namespace tk::cuda

#endif // TK_BACKENDS_CUDA_COMPILER_DEVICETARGET_H_
