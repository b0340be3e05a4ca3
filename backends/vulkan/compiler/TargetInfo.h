//===- TargetInfo.h - the Vulkan backend's TargetInfo presets ---*- C++ -*-===//
//
// A Vulkan device's subgroup size and limits come from the device (the
// plugin compiles for "vulkan:warp-size=N:shared-memory=M"); the presets
// give the passes and tk-opt a starting point without one.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_VULKAN_COMPILER_TARGETINFO_H_
#define TK_BACKENDS_VULKAN_COMPILER_TARGETINFO_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tk::vulkan {

/// Registers `vulkan` (subgroups of 32, Vulkan's guaranteed minimum limits
/// raised to what desktop GPUs have), `vulkan-lavapipe` (Mesa's CPU
/// driver: subgroups of 8, 32 KB of shared memory) and
/// `vulkan-cooperative-matrix` (`vulkan` with every cooperative-matrix
/// shape tk lowers). Idempotent.
void registerTargetPresets();

/// The TargetInfo spec of a device with subgroups of `subgroupSize`,
/// `sharedMemoryBytes` of workgroup memory, workgroups of at most
/// `maxThreads` invocations and the cooperative matrices whose keys
/// `cooperativeMatrix` lists.
std::string targetSpec(int64_t subgroupSize, int64_t sharedMemoryBytes,
                       int64_t maxThreads,
                       const std::vector<std::string> &cooperativeMatrix = {});

} // namespace tk::vulkan

#endif // TK_BACKENDS_VULKAN_COMPILER_TARGETINFO_H_
