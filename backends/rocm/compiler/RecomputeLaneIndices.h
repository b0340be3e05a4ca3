//===- RecomputeLaneIndices.h - Lane indices again after loops --*- C++ -*-===//
//
// A kernel computes its lanes' rows and columns from the workitem id once,
// before its K loop, and the epilogue stores the accumulator with the same
// indices after it. LLVM keeps each such value in a VGPR across the loop
// (GVN shares the prologue's and the epilogue's), and where the loop holds
// all 256 VGPRs of an RDNA3 lane, the register allocator spills it: one
// 64-bit store offset was the whole scratch of gfx1100's 128x128x64 matmul.
// The register allocator rematerialises one instruction, never a chain.
//
// recomputeLaneIndicesAfterLoops clones those chains after each outermost
// loop, from the lane id (v_mbcnt, as inline assembly that nothing merges
// with the prologue's values) and the wave's first workitem id (uniform: an
// SGPR). It runs on optimised LLVM IR, just before code generation, and
// Compiler.cpp keeps its result only where it leaves less scratch.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_ROCM_COMPILER_RECOMPUTELANEINDICES_H
#define TK_BACKENDS_ROCM_COMPILER_RECOMPUTELANEINDICES_H

namespace llvm {
class Function;
} // namespace llvm

namespace tk::rocm {

/// Recomputes after each outermost loop of `kernel` the values derived from
/// `llvm.amdgcn.workitem.id.x` by arithmetic alone that were computed
/// before the loop and are used after it, and rewrites those uses. Applies
/// only to one-dimensional workgroups of whole waves of `waveSize` lanes
/// (`reqd_work_group_size`), where a workitem id is its wave's first plus
/// its lane. `onlyLoop` picks one outermost loop by its place in the code
/// (0 the first); -1 takes each. Returns how many values it cloned (0: the
/// kernel is unchanged).
unsigned recomputeLaneIndicesAfterLoops(llvm::Function &kernel,
                                        unsigned waveSize, int onlyLoop = -1);

/// The outermost loops of `kernel`: what `onlyLoop` counts.
unsigned countOutermostLoops(llvm::Function &kernel);

} // namespace tk::rocm

#endif // TK_BACKENDS_ROCM_COMPILER_RECOMPUTELANEINDICES_H
