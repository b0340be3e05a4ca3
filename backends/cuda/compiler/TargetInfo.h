//===- TargetInfo.h - the CUDA backend's TargetInfo presets -----*- C++ -*-===//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CUDA_COMPILER_TARGETINFO_H_
#define TK_BACKENDS_CUDA_COMPILER_TARGETINFO_H_

#include "tk/core/TargetInfo.h"

namespace tk::cuda {

/// mma.sync's accumulator fragment (every m16n8 shape): c0, c1 at (g, 2t),
/// (g, 2t + 1), c2, c3 eight rows down (g = lane / 4, t = lane % 4).
FragmentLayout mmaAccumulatorLayout();

/// mma.sync m16n8k16's f16 and bf16 operand fragments: a0, a1 at (g, 2t ..
/// 2t + 1), a2, a3 eight rows down, a4 .. a7 eight columns right; b0, b1 at
/// (2t .. 2t + 1, g), b2, b3 eight rows down.
FragmentLayout mmaHalfALayout();
FragmentLayout mmaHalfBLayout();

/// mma.sync m16n8k8's tf32 operand fragments: a0 (g, t), a1 (g + 8, t), a2
/// (g, t + 4), a3 (g + 8, t + 4); b0 (t, g), b1 (t + 4, g).
FragmentLayout mmaTf32ALayout();
FragmentLayout mmaTf32BLayout();

/// mma.sync m16n8k32's 8-bit operand fragments (s8, e4m3, e5m2): four
/// bytes a lane where f16 has two.
FragmentLayout mmaByteALayout();
FragmentLayout mmaByteBLayout();

/// wgmma's accumulator fragment: warp w of the warpgroup holds rows 16w ..
/// 16w + 15, as mma.sync holds its 16 x 8 blocks, for every 8 columns.
FragmentLayout wgmmaAccumulatorLayout();

/// Registers cuda-sm80 (alias sm80) and cuda-sm90a (sm90a) with core's
/// registry. Idempotent.
void registerTargetPresets();

} // namespace tk::cuda

#endif // TK_BACKENDS_CUDA_COMPILER_TARGETINFO_H_
