//===- ConvertToSPIRV.h - the SIMT form to a Vulkan SPIR-V module -*- C++ -*-//
//
// tk-vulkan-convert-to-spirv: the kernel as tk-convert-registers-to-simt leaves
// it (func.func over gpu, arith, math, scf, memref and llvm pointer ops) to one
// spirv.module for the Vulkan environment: physical-storage-buffer pointers
// (tk kernels take raw device addresses), the arguments in a push-constant
// block, workgroup memory for shared tiles, subgroup shuffles for warp
// reductions.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_VULKAN_COMPILER_CONVERTTOSPIRV_H_
#define TK_BACKENDS_VULKAN_COMPILER_CONVERTTOSPIRV_H_

#include "compiler/DeviceTarget.h"

#include "mlir/Pass/Pass.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tk::vulkan {

/// How the kernel takes its arguments, for the loader and launches: a
/// push-constant block of `pushConstantBytes` holding argument i at
/// `argOffsets[i]` (pointers as 64-bit device addresses).
/// The push-constant bytes every Vulkan device has
/// (maxPushConstantsSize's required minimum). A package must load on any
/// device of its target, so an argument block larger than this goes in a
/// buffer, whichever device it is compiled for.
constexpr uint32_t kGuaranteedPushConstantBytes = 128;

struct KernelInterface {
  /// Each argument's byte offset in the argument block.
  std::vector<uint32_t> argOffsets;
  uint32_t pushConstantBytes = 0;
  /// 0: the block is the push constants. Otherwise the block is a buffer
  /// of this many bytes and the push constants are its 8-byte device
  /// address (a block over kGuaranteedPushConstantBytes).
  uint32_t argumentBufferBytes = 0;
  /// Bytes of workgroup memory the kernel's variables take.
  uint32_t sharedMemoryBytes = 0;
};

/// The pass: `module` must hold the SIMT form of `entry` only; afterwards it
/// holds one spirv.module. `interface` receives the argument layout.
std::unique_ptr<mlir::Pass>
createConvertToSPIRVPass(std::string entry, int64_t threadsPerBlock,
                         DeviceFeatures features, KernelInterface *interface);

} // namespace tk::vulkan

#endif // TK_BACKENDS_VULKAN_COMPILER_CONVERTTOSPIRV_H_
