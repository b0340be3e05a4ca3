//===- TargetInfo.cpp - NVIDIA GPUs as TargetInfos ------------------------===//
//
// Ampere (sm_80: mma.sync) and Hopper with its arch-specific features
// (sm_90a: wgmma, TMA), from the CUDA C Programming Guide and the PTX ISA's
// "Matrix Fragments" sections. In the fragments, g = lane / 4 and t =
// lane % 4 (the PTX ISA's groupID and threadID_in_group).
//
//===----------------------------------------------------------------------===//

#include "compiler/TargetInfo.h"

#include "tk/core/TargetInfo.h"

using namespace tk;

namespace {

using ET = MatrixElementType;
using FL = FragmentLayout;

MatrixIntrinsic mma(int64_t m, int64_t n, int64_t k, ET in, ET acc,
                    llvm::StringRef name, FL a, FL b) {
  return MatrixIntrinsic::of(m, n, k, in, acc, MatrixScope::Warp, name, a, b,
                             cuda::mmaAccumulatorLayout());
}

TargetInfo sm80() {
  TargetInfo info;
  info.name = "cuda-sm80";
  info.warpSize = 32;
  info.maxThreadsPerBlock = 1024;
  info.registersPerCU = 65536;
  // PTX's ceiling; an occupancy hint lowers it to the register file's share
  // of that many programs (Lowering.cpp).
  info.registersPerThread = 255;
  // 163 KiB of the SM's 164 KiB with the opt-in attribute (CUDA C
  // Programming Guide, "Compute Capability 8.x"), in 32 banks of 4 bytes.
  info.sharedMemoryPerBlock = 166912;
  info.sharedMemoryBanks = 32;
  info.sharedMemoryBankBytes = 4;
  info.maxVectorLoadBytes = 16;
  info.workgroupVectorBytes = 16;
  info.broadcastWarpIndex = true;
  info.transposingMatrixLoads = true;
  info.hasAsyncCopy = true;
  // m16n8k16 f16 and bf16 (mmaHalfALayout, mmaHalfBLayout).
  FL a16 = cuda::mmaHalfALayout(), b16 = cuda::mmaHalfBLayout();
  // m16n8k8 tf32 (mmaTf32ALayout, mmaTf32BLayout).
  FL a8 = cuda::mmaTf32ALayout(), b8 = cuda::mmaTf32BLayout();
  // m16n8k32 s8 (mmaByteALayout, mmaByteBLayout).
  FL a32 = cuda::mmaByteALayout(), b32 = cuda::mmaByteBLayout();
  info.intrinsics = {
      mma(16, 8, 16, ET::F16, ET::F32, "mma.m16n8k16.f32.f16", a16, b16),
      mma(16, 8, 16, ET::F16, ET::F16, "mma.m16n8k16.f16.f16", a16, b16),
      mma(16, 8, 16, ET::BF16, ET::F32, "mma.m16n8k16.f32.bf16", a16, b16),
      mma(16, 8, 8, ET::TF32, ET::F32, "mma.m16n8k8.f32.tf32", a8, b8),
      mma(16, 8, 32, ET::I8, ET::I32, "mma.m16n8k32.s32.s8", a32, b32),
      // m8n8k4 f64: a0 (g, t), b0 (t, g), c0, c1 (g, 2t..2t+1).
      MatrixIntrinsic::of(8, 8, 4, ET::F64, ET::F64, MatrixScope::Warp,
                          "mma.m8n8k4.f64.f64", FL::of({1, 1}, {8, 4}, {1, 0}),
                          FL::of({1, 1}, {4, 8}, {0, 1}),
                          FL::of({1, 2}, {8, 4}, {1, 0})),
  };
  return info;
}

TargetInfo sm90a() {
  TargetInfo info = sm80();
  info.name = "cuda-sm90a";
  // 227 KiB per block with the opt-in attribute on Hopper.
  info.sharedMemoryPerBlock = 232448;
  info.hasTMA = true;
  // wgmma.mma_async m64nNk*: N is any multiple of 8 up to 256; the entries
  // record the largest. A warpgroup is four consecutive warps, warp w holding
  // rows 16w..16w+15 of the accumulator as mma.sync holds its 16 x 8 blocks.
  // a and b are read from shared memory through descriptors (a may come
  // from registers; tk reads it from shared memory).
  FL acc = cuda::wgmmaAccumulatorLayout();
  auto wgmma = [&](int64_t k, ET in, ET accType, llvm::StringRef name) {
    return MatrixIntrinsic::of(64, 256, k, in, accType, MatrixScope::Warpgroup,
                               name, std::nullopt, std::nullopt, acc);
  };
  llvm::SmallVector<MatrixIntrinsic, 8> wgmmas = {
      wgmma(16, ET::F16, ET::F32, "wgmma.m64nNk16.f32.f16"),
      wgmma(16, ET::BF16, ET::F32, "wgmma.m64nNk16.f32.bf16"),
      wgmma(8, ET::TF32, ET::F32, "wgmma.m64nNk8.f32.tf32"),
      wgmma(32, ET::F8E4M3, ET::F32, "wgmma.m64nNk32.f32.e4m3"),
      wgmma(32, ET::F8E5M2, ET::F32, "wgmma.m64nNk32.f32.e5m2"),
      wgmma(32, ET::I8, ET::I32, "wgmma.m64nNk32.s32.s8"),
  };
  info.intrinsics.insert(info.intrinsics.begin(), wgmmas.begin(), wgmmas.end());
  // m16n8k32 e4m3 and e5m2 (sm_89 on): the fragments of s8, accumulating
  // in f32.
  FL a32 = cuda::mmaByteALayout(), b32 = cuda::mmaByteBLayout();
  info.intrinsics.push_back(
      mma(16, 8, 32, ET::F8E4M3, ET::F32, "mma.m16n8k32.f32.e4m3", a32, b32));
  info.intrinsics.push_back(
      mma(16, 8, 32, ET::F8E5M2, ET::F32, "mma.m16n8k32.f32.e5m2", a32, b32));
  return info;
}

} // namespace

FragmentLayout tk::cuda::mmaAccumulatorLayout() {
  return FL::of({1, 2}, {8, 4}, {1, 0});
}

FragmentLayout tk::cuda::mmaHalfALayout() {
  return FL::of({1, 2}, {8, 4}, {1, 0});
}

FragmentLayout tk::cuda::mmaHalfBLayout() {
  return FL::of({2, 1}, {4, 8}, {0, 1});
}

FragmentLayout tk::cuda::mmaTf32ALayout() {
  return FL::of({1, 1}, {8, 4}, {1, 0});
}

FragmentLayout tk::cuda::mmaTf32BLayout() {
  return FL::of({1, 1}, {4, 8}, {0, 1});
}

FragmentLayout tk::cuda::mmaByteALayout() {
  return FL::of({1, 4}, {8, 4}, {1, 0});
}

FragmentLayout tk::cuda::mmaByteBLayout() {
  return FL::of({4, 1}, {4, 8}, {0, 1});
}

FragmentLayout tk::cuda::wgmmaAccumulatorLayout() {
  return FL::of({1, 2}, {8, 4}, {1, 0}, {4, 1});
}

void tk::cuda::registerTargetPresets() {
  registerTargetPreset("cuda-sm80", {"sm80", "sm_80"}, sm80);
  registerTargetPreset("cuda-sm90a", {"sm90a", "sm_90a"}, sm90a);
}
