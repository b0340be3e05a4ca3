//===- TargetInfo.h - the CUDA backend's TargetInfo presets -----*- C++ -*-===//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CUDA_COMPILER_TARGETINFO_H_
#define TK_BACKENDS_CUDA_COMPILER_TARGETINFO_H_

namespace tk::cuda {

/// Registers cuda-sm80 (alias sm80) and cuda-sm90a (sm90a) with core's
/// registry. Idempotent.
void registerTargetPresets();

} // namespace tk::cuda

#endif // TK_BACKENDS_CUDA_COMPILER_TARGETINFO_H_
