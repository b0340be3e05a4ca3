//===- TargetInfo.h - the ROCm backend's TargetInfo presets -----*- C++ -*-===//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_ROCM_COMPILER_TARGETINFO_H_
#define TK_BACKENDS_ROCM_COMPILER_TARGETINFO_H_

namespace tk::rocm {

/// Registers amd-cdna3 (gfx942), amd-cdna2 (gfx90a) and amd-rdna3
/// (gfx1100) with core's registry. Idempotent.
void registerTargetPresets();

} // namespace tk::rocm

#endif // TK_BACKENDS_ROCM_COMPILER_TARGETINFO_H_
