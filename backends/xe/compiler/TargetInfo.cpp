//===- TargetInfo.cpp - Intel GPUs as TargetInfos -------------------------===//
//
// Xe-HPC (Data Center GPU Max, "pvc": subgroup 16) and Xe-HPG (Arc A-series,
// "dg2": subgroup 8), with DPAS of systolic depth 8. Fragments as the
// cl_intel_subgroup_matrix_multiply_accumulate extension gives the operands
// of intel_sub_group_*_matrix_mad_k* to the work-items of a subgroup.
//
//===----------------------------------------------------------------------===//

#include "compiler/TargetInfo.h"

#include "tk/core/TargetInfo.h"

using namespace tk;

namespace {

using ET = MatrixElementType;
using FL = FragmentLayout;

/// DPAS of 8 rows on a subgroup of `lanes` (n = lanes): a's rows are spread
/// over the subgroup, `aPerLane` consecutive k elements a work-item a row;
/// b's column n is work-item n's, all of k; the accumulator's column n is
/// work-item n's, all 8 rows.
MatrixIntrinsic dpas(int64_t lanes, int64_t k, ET in, ET acc,
                     llvm::StringRef name) {
  int64_t aPerLane = k / lanes;
  return MatrixIntrinsic::of(8, lanes, k, in, acc, MatrixScope::Warp, name,
                             FL::of({1, aPerLane}, {1, lanes}, {1, 0}),
                             FL::of({k, 1}, {1, lanes}, {1, 0}),
                             FL::of({8, 1}, {1, lanes}, {1, 0}));
}

TargetInfo pvc() {
  TargetInfo info;
  info.name = "intel-pvc";
  // SIMD16 is PVC's native width for DPAS.
  info.warpSize = 16;
  // SPIR-V's CrossWorkgroup (OpenCL's global) space.
  info.globalAddressSpace = 1;
  info.maxThreadsPerBlock = 1024;
  // 8 EUs x 8 threads x 128 GRFs of 64 bytes (small-GRF mode).
  info.registersPerCU = 131072;
  // 128 KiB of SLM an Xe-core, 64 banks of 4 bytes.
  info.sharedMemoryPerBlock = 131072;
  info.sharedMemoryBanks = 64;
  info.sharedMemoryBankBytes = 4;
  info.maxVectorLoadBytes = 16;
  info.workgroupVectorBytes = 16;
  // 2-D block loads take up to 32 rows of 64 bytes (32x32xf16).
  info.has2DBlockIO = true;
  info.max2DBlockRows = 32;
  info.max2DBlockRowBytes = 64;
  info.intrinsics = {
      dpas(16, 16, ET::F16, ET::F32, "dpas.8x16x16.f32.f16"),
      dpas(16, 16, ET::BF16, ET::F32, "dpas.8x16x16.f32.bf16"),
      // tf32: k = 8, so half the subgroup holds a row of a: work-item l
      // holds a's column l % 8 of rows l / 8, l / 8 + 2, ...
      MatrixIntrinsic::of(
          8, 16, 8, ET::TF32, ET::F32, MatrixScope::Warp,
          "dpas.8x16x8.f32.tf32", FL::of({1, 1}, {2, 8}, {1, 0}),
          FL::of({8, 1}, {1, 16}, {1, 0}), FL::of({8, 1}, {1, 16}, {1, 0})),
      dpas(16, 32, ET::I8, ET::I32, "dpas.8x16x32.s32.s8"),
  };
  return info;
}

TargetInfo dg2() {
  TargetInfo info;
  info.name = "intel-dg2";
  info.warpSize = 8;
  info.globalAddressSpace = 1;
  info.maxThreadsPerBlock = 1024;
  // 16 EUs x 8 threads x 128 GRFs of 32 bytes.
  info.registersPerCU = 131072;
  info.sharedMemoryPerBlock = 65536;
  info.sharedMemoryBanks = 16;
  info.sharedMemoryBankBytes = 4;
  info.maxVectorLoadBytes = 16;
  info.workgroupVectorBytes = 16;
  info.intrinsics = {
      dpas(8, 16, ET::F16, ET::F32, "dpas.8x8x16.f32.f16"),
      dpas(8, 16, ET::BF16, ET::F32, "dpas.8x8x16.f32.bf16"),
      dpas(8, 32, ET::I8, ET::I32, "dpas.8x8x32.s32.s8"),
  };
  return info;
}

} // namespace

void tk::xe::registerTargetPresets() {
  registerTargetPreset("intel-pvc", {"pvc"}, pvc);
  registerTargetPreset("intel-dg2", {"dg2"}, dg2);
}
