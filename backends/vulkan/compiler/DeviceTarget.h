//===- DeviceTarget.h - what Vulkan code is made for ------------*- C++ -*-===//
//
// The device a kernel's SPIR-V is compiled for: subgroup size, optional
// features and limits. Shared by the compiler, which refuses a kernel that
// needs more, and the plugin's compile_target and target_rank, which the
// driver-only plugin has too (no MLIR here).
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_VULKAN_COMPILER_DEVICETARGET_H_
#define TK_BACKENDS_VULKAN_COMPILER_DEVICETARGET_H_

#include <cstdint>

namespace tk::vulkan {

/// What the device can run, from its features; the conversion refuses a
/// kernel that needs more, naming the feature.
struct DeviceFeatures {
  int64_t subgroupSize = 32;
  bool float16 = true;
  bool float64 = true;
  bool int8 = true;
  bool int16 = true;
  bool int64Atomics = true;
  bool float32AtomicAdd = true;
};

/// The device code is compiled for.
struct DeviceTarget {
  DeviceFeatures features;
  int64_t sharedMemoryBytes = 32 * 1024;
  int64_t maxThreadsPerBlock = 1024;
};

} // namespace tk::vulkan

#endif // TK_BACKENDS_VULKAN_COMPILER_DEVICETARGET_H_
