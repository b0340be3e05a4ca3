//===- TargetInfo.cpp - AMD GPUs as TargetInfos ---------------------------===//
//
// CDNA (wave64, MFMA) and RDNA3 (wave32, WMMA), from AMD's ISA manuals
// ("Matrix Arithmetic Instructions" of the MI300 and MI200 ISAs, "Wave
// Matrix Multiply Accumulate" of RDNA3's). Fragments as AMD's matrix
// instruction calculator prints them, which Triton's AMD backend agrees with
// (its MFMA and WMMA linear layouts). Each name is LLVM's intrinsic
// without "llvm.amdgcn." (MatrixCores.cpp calls it by that name).
//
//===----------------------------------------------------------------------===//

#include "compiler/TargetInfo.h"

#include "tk/core/TargetInfo.h"

using namespace tk;

namespace {

using ET = MatrixElementType;
using FL = FragmentLayout;

/// An MFMA of `m` x `m` (32 or 16) with `kPerLane` consecutive k elements a
/// lane: lane l holds a's row l % m and b's column l % m at k = (l / m) *
/// kPerLane + ...; the accumulator's column l % m, four rows at a time from
/// row 4 * (l / m), repeated down the tile. The f64 MFMA's accumulator has
/// one row at a time: row 4r + l / 16 in register r.
MatrixIntrinsic mfma(int64_t m, int64_t k, ET in, ET acc, llvm::StringRef name,
                     int64_t kPerLane) {
  int64_t groups = 64 / m;
  int64_t accRows = acc == ET::F64 ? 1 : 4;
  return MatrixIntrinsic::of(m, m, k, in, acc, MatrixScope::Warp, name,
                             FL::of({1, kPerLane}, {m, groups}, {0, 1}),
                             FL::of({kPerLane, 1}, {groups, m}, {1, 0}),
                             FL::of({accRows, 1}, {groups, m}, {1, 0}));
}

TargetInfo cdna(llvm::StringRef name) {
  TargetInfo info;
  info.name = name.str();
  info.warpSize = 64;
  info.maxThreadsPerBlock = 1024;
  // 4 SIMDs x 512 VGPRs x 64 lanes (AGPRs not counted).
  info.registersPerCU = 131072;
  // A wave's 512: 256 VGPRs and 256 AGPRs, which hold MFMA accumulators.
  info.registersPerThread = 512;
  // 64 KiB of LDS a workgroup, 32 banks of 4 bytes.
  info.sharedMemoryPerBlock = 65536;
  info.sharedMemoryBanks = 32;
  info.sharedMemoryBankBytes = 4;
  info.maxVectorLoadBytes = 16;
  info.workgroupVectorBytes = 16;
  info.broadcastWarpIndex = true;
  return info;
}

/// The 16-bit MFMAs CDNA2 and CDNA3 share (bf16 in the "1k" forms, which
/// take f16's shapes), the larger block first: fewer instructions, more
/// reuse per operand load.
llvm::SmallVector<MatrixIntrinsic, 8> halfMfmas() {
  return {
      mfma(32, 8, ET::F16, ET::F32, "mfma.f32.32x32x8f16", 4),
      mfma(16, 16, ET::F16, ET::F32, "mfma.f32.16x16x16f16", 4),
      mfma(32, 8, ET::BF16, ET::F32, "mfma.f32.32x32x8bf16.1k", 4),
      mfma(16, 16, ET::BF16, ET::F32, "mfma.f32.16x16x16bf16.1k", 4),
  };
}

/// Each MFMA in its transposed form (MatrixIntrinsic::transposed), the
/// one tk chooses, then in the form the manual states.
llvm::SmallVector<MatrixIntrinsic, 8>
withTransposedForms(llvm::ArrayRef<MatrixIntrinsic> mfmas) {
  llvm::SmallVector<MatrixIntrinsic, 8> all;
  for (const MatrixIntrinsic &mfma : mfmas) {
    llvm::Expected<MatrixIntrinsic> transposed = mfma.transposedForm();
    if (transposed)
      all.push_back(std::move(*transposed));
    else
      llvm::consumeError(transposed.takeError());
  }
  all.append(mfmas.begin(), mfmas.end());
  return all;
}

TargetInfo cdna3() {
  TargetInfo info = cdna("amd-cdna3");
  info.intrinsics = halfMfmas();
  info.intrinsics.append({
      mfma(32, 16, ET::I8, ET::I32, "mfma.i32.32x32x16.i8", 8),
      mfma(16, 32, ET::I8, ET::I32, "mfma.i32.16x16x32.i8", 8),
      // No fp8 MFMA: CDNA3's fp8 is the FNUZ format (e4m3 with bias 8 and
      // NaN at 0x80; Triton's fp8e4b8), not tk's f8E4M3FN, so an fp8 dot
      // would read other values. fp8 dots are multiply-adds in f32 here.
      mfma(16, 4, ET::F64, ET::F64, "mfma.f64.16x16x4f64", 1),
  });
  info.intrinsics = withTransposedForms(info.intrinsics);
  return info;
}

TargetInfo cdna2() {
  TargetInfo info = cdna("amd-cdna2");
  // MI200's int8 MFMAs take half the k of CDNA3's; it has no fp8.
  info.intrinsics = halfMfmas();
  info.intrinsics.append({
      mfma(32, 8, ET::I8, ET::I32, "mfma.i32.32x32x8i8", 4),
      mfma(16, 16, ET::I8, ET::I32, "mfma.i32.16x16x16i8", 4),
      mfma(16, 4, ET::F64, ET::F64, "mfma.f64.16x16x4f64", 1),
  });
  info.intrinsics = withTransposedForms(info.intrinsics);
  return info;
}

TargetInfo rdna3() {
  TargetInfo info;
  info.name = "amd-rdna3";
  info.warpSize = 32;
  info.maxThreadsPerBlock = 1024;
  // 2 SIMDs x 1536 VGPRs x 32 lanes in wave32.
  info.registersPerCU = 98304;
  // A wave32's VGPRs.
  info.registersPerThread = 256;
  info.sharedMemoryPerBlock = 65536;
  info.sharedMemoryBanks = 32;
  info.sharedMemoryBankBytes = 4;
  info.maxVectorLoadBytes = 16;
  info.workgroupVectorBytes = 16;
  info.broadcastWarpIndex = true;
  // Lanes l and l + 16 hold the same row of a (column of b), all 16 k; the
  // accumulator's column l % 16 at rows 2i + l / 16.
  FL a = FL::of({1, 16}, {16, 2}, {0, 1});
  FL b = FL::of({16, 1}, {2, 16}, {1, 0});
  FL acc = FL::of({1, 1}, {2, 16}, {1, 0});
  auto wmma = [&](ET in, ET accType, llvm::StringRef name) {
    return MatrixIntrinsic::of(16, 16, 16, in, accType, MatrixScope::Warp, name,
                               a, b, acc);
  };
  info.intrinsics = {
      wmma(ET::F16, ET::F32, "wmma.f32.16x16x16.f16"),
      wmma(ET::F16, ET::F16, "wmma.f16.16x16x16.f16"),
      wmma(ET::BF16, ET::F32, "wmma.f32.16x16x16.bf16"),
      wmma(ET::I8, ET::I32, "wmma.i32.16x16x16.iu8"),
  };
  info.intrinsics = withTransposedForms(info.intrinsics);
  return info;
}

} // namespace

void tk::rocm::registerTargetPresets() {
  registerTargetPreset("amd-cdna3", {"gfx942"}, cdna3);
  registerTargetPreset("amd-cdna2", {"gfx90a"}, cdna2);
  registerTargetPreset("amd-rdna3", {"gfx1100"}, rdna3);
}
