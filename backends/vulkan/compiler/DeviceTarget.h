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
#include <string>
#include <vector>

namespace tk::vulkan {

/// The operand and accumulator types of the cooperative-matrix products tk
/// lowers: f16 or bf16 into f32, and signed 8-bit integers into 32-bit
/// ones.
enum class CooperativeMatrixTypes { F16F32, BF16F32, S8S32 };

/// How a key names those types (".f16.f32", ".bf16.f32", ".s8.s32").
inline std::string cooperativeMatrixTypesSuffix(CooperativeMatrixTypes types) {
  switch (types) {
  case CooperativeMatrixTypes::F16F32:
    return ".f16.f32";
  case CooperativeMatrixTypes::BF16F32:
    return ".bf16.f32";
  case CooperativeMatrixTypes::S8S32:
    return ".s8.s32";
  }
  return "";
}

/// The key of the cooperative-matrix intrinsic of that shape and those
/// types ("coopmat.16x16x16.f16.f32", "coopmat.16x16x16.bf16.f32",
/// "coopmat.16x16x32.s8.s32").
inline std::string cooperativeMatrixKey(
    int64_t m, int64_t n, int64_t k,
    CooperativeMatrixTypes types = CooperativeMatrixTypes::F16F32) {
  return "coopmat." + std::to_string(m) + "x" + std::to_string(n) + "x" +
         std::to_string(k) + cooperativeMatrixTypesSuffix(types);
}

/// Whether `keys` hold a bf16 product (SPV_KHR_bfloat16's capabilities).
inline bool hasBFloat16CooperativeMatrix(const std::vector<std::string> &keys) {
  const std::string bf16 =
      cooperativeMatrixTypesSuffix(CooperativeMatrixTypes::BF16F32);
  for (const std::string &key : keys)
    if (key.size() >= bf16.size() &&
        key.compare(key.size() - bf16.size(), bf16.size(), bf16) == 0)
      return true;
  return false;
}

/// The products NVIDIA's driver lists that tk lowers (f16 into f32 at
/// 16x16x16, 16x8x16 and 16x8x8; bf16 into f32 at 16x16x16, with
/// VK_KHR_shader_bfloat16; s8 into s32 at 16x16x32 and 16x8x32): the
/// `32-coopmat` arch of tk-compile and TK_VULKAN_SUBGROUP_SIZE.
inline std::vector<std::string> nvidiaCooperativeMatrixKeys() {
  using T = CooperativeMatrixTypes;
  return {cooperativeMatrixKey(16, 16, 16),
          cooperativeMatrixKey(16, 8, 16),
          cooperativeMatrixKey(16, 8, 8),
          cooperativeMatrixKey(16, 16, 16, T::BF16F32),
          cooperativeMatrixKey(16, 16, 32, T::S8S32),
          cooperativeMatrixKey(16, 8, 32, T::S8S32)};
}

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
  /// The cooperative-matrix products (VK_KHR_cooperative_matrix) the
  /// device lists that tk lowers, as the intrinsics' keys
  /// ("coopmat.16x16x16.f16.f32", "coopmat.16x16x32.s8.s32"), in the
  /// device's order; empty without the extension. bf16 ones only where
  /// the device has shaderBFloat16CooperativeMatrix.
  std::vector<std::string> cooperativeMatrix;
};

/// The device code is compiled for.
struct DeviceTarget {
  DeviceFeatures features;
  int64_t sharedMemoryBytes = 32 * 1024;
  int64_t maxThreadsPerBlock = 1024;
};

} // namespace tk::vulkan

#endif // TK_BACKENDS_VULKAN_COMPILER_DEVICETARGET_H_
