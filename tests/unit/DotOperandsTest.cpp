//===- DotOperandsTest.cpp - where a dot reads its operands ---------------===//
//
// tk::getMatrixOperandLayout and tk::getOperandSharedLayout
// (tk/core/DotOperands.h) against enumeration, on the layouts the register
// pipeline gives a 64x64x32 f16 matmul on 4 warps of sm_80 (its
// accumulator, and a and b as their coalesced loads hold them): the
// workgroup layout places every element once; the writers' 16-byte runs
// land on 8 consecutive elements; and the 8 rows that each ldmatrix phase
// reads of a fragment (`.trans` for b, whose rows run along n) start in 8
// different 16-byte groups of the 128 bytes the banks span, so the reads
// meet no bank conflict. Also wgmma's a in registers against the PTX ISA's
// fragment.
//
//===----------------------------------------------------------------------===//

#include "tk/core/DotOperands.h"
#include "tk/core/Layout/LayoutPresets.h"
#include "tk/core/TargetInfo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "LinearLayoutTestSupport.h"
#include "RegisterTargetPresets.h"

namespace {

using tk::LinearLayout;
using tk::test::take;

LinearLayout tile(std::vector<std::vector<int32_t>> registers,
                  std::vector<std::vector<int32_t>> lanes,
                  std::vector<std::vector<int32_t>> warps, int32_t rows,
                  int32_t cols) {
  return take(LinearLayout::create(
      {{"register", registers}, {"lane", lanes}, {"warp", warps}},
      {{"dim0", rows}, {"dim1", cols}}));
}

/// tk-assign-linear-layouts' accumulator of a 64x64 product of mma.sync
/// m16n8k16 on a 2 x 2 grid of warps, and the coalesced loads of a (64x32)
/// and b (32x64): 8 f16 a lane along the contiguous dimension.
LinearLayout accumulator() {
  return tile({{0, 1}, {8, 0}, {0, 16}, {0, 32}, {32, 0}},
              {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}, {{0, 8}, {16, 0}}, 64,
              64);
}
LinearLayout loadedA() {
  return tile({{0, 1}, {0, 2}, {0, 4}, {32, 0}},
              {{0, 8}, {0, 16}, {1, 0}, {2, 0}, {4, 0}}, {{8, 0}, {16, 0}}, 64,
              32);
}
LinearLayout loadedB() {
  return tile({{0, 1}, {0, 2}, {0, 4}, {16, 0}},
              {{0, 8}, {0, 16}, {0, 32}, {1, 0}, {2, 0}}, {{4, 0}, {8, 0}}, 32,
              64);
}

const tk::MatrixIntrinsic *mmaSync(std::optional<tk::TargetInfo> &target) {
  tk::registerAllTargetPresets();
  std::string error;
  target = tk::TargetInfo::parse("cuda-sm80", error);
  if (!target) {
    ADD_FAILURE() << error;
    return nullptr;
  }
  for (const tk::MatrixIntrinsic &intrinsic : target->intrinsics)
    if (intrinsic.name == "mma.m16n8k16.f32.f16")
      return &intrinsic;
  ADD_FAILURE() << "cuda-sm80 has no mma.m16n8k16.f32.f16";
  return nullptr;
}

/// The offset of (reg, lane, warp) of `layout` in `shared`'s buffer.
int32_t offsetOf(const LinearLayout &toOffset, int32_t reg, int32_t lane,
                 int32_t warp) {
  return toOffset.apply({{"register", reg}, {"lane", lane}, {"warp", warp}})
      .front()
      .second;
}

TEST(DotOperandsTest, SharedOperandsHoldEveryElementOnceAndTheWritersRuns) {
  for (auto [name, loaded] :
       {std::pair{"a", loadedA()}, std::pair{"b", loadedB()}}) {
    SCOPED_TRACE(name);
    std::vector<int64_t> shape = {loaded.getOutDimSize("dim0"),
                                  loaded.getOutDimSize("dim1")};
    LinearLayout shared =
        take(tk::getOperandSharedLayout(shape, 2, loaded, loaded));
    ASSERT_TRUE(shared.isInvertible());
    std::set<std::pair<int32_t, int32_t>> placed;
    for (int32_t offset = 0; offset < shape[0] * shape[1]; ++offset) {
      auto at = shared.apply({{"offset", offset}});
      placed.insert({at[0].second, at[1].second});
    }
    EXPECT_EQ(int64_t(placed.size()), shape[0] * shape[1]);
    // Each lane's 8 registers along the row: 8 consecutive, aligned offsets.
    LinearLayout written = take(loaded.compose(take(shared.invert())));
    for (int32_t lane = 0; lane < 32; ++lane)
      for (int32_t warp = 0; warp < 4; ++warp)
        for (int32_t run = 0; run < loaded.getInDimSize("register"); run += 8) {
          int32_t first = offsetOf(written, run, lane, warp);
          EXPECT_EQ(first % 8, 0);
          for (int32_t reg = 1; reg < 8; ++reg)
            EXPECT_EQ(offsetOf(written, run + reg, lane, warp), first + reg);
        }
  }
}

TEST(DotOperandsTest, ReadersFirstKeepsTheFragmentsRunsConsecutive) {
  // b is loaded in runs along n, and read in pairs along k: without a
  // transposing matrix load (TargetInfo::transposingMatrixLoads) the buffer
  // takes the readers' order, so each pair is one read and the writers'
  // runs are split; by default it takes the writers'.
  std::optional<tk::TargetInfo> target;
  const tk::MatrixIntrinsic *intrinsic = mmaSync(target);
  ASSERT_NE(intrinsic, nullptr);
  LinearLayout loaded = loadedB();
  LinearLayout fragments =
      take(tk::getMatrixOperandLayout(accumulator(), *intrinsic, 1, 32));
  std::vector<int64_t> shape = {32, 64};
  for (bool readersFirst : {false, true}) {
    SCOPED_TRACE(readersFirst ? "readers first" : "writers first");
    LinearLayout shared = take(
        tk::getOperandSharedLayout(shape, 2, loaded, fragments, readersFirst));
    LinearLayout read = take(fragments.compose(take(shared.invert())));
    LinearLayout written = take(loaded.compose(take(shared.invert())));
    bool readPairs = true, writtenRuns = true;
    for (int32_t lane = 0; lane < 32; ++lane)
      for (int32_t warp = 0; warp < 4; ++warp) {
        for (int32_t reg = 0; reg < fragments.getInDimSize("register");
             reg += 2)
          readPairs &= offsetOf(read, reg + 1, lane, warp) ==
                       offsetOf(read, reg, lane, warp) + 1;
        for (int32_t reg = 0; reg < loaded.getInDimSize("register"); reg += 8)
          for (int32_t next = 1; next < 8; ++next)
            writtenRuns &= offsetOf(written, reg + next, lane, warp) ==
                           offsetOf(written, reg, lane, warp) + next;
      }
    EXPECT_EQ(readPairs, readersFirst);
    EXPECT_EQ(writtenRuns, !readersFirst);
  }
  tk::registerAllTargetPresets();
  std::string error;
  std::optional<tk::TargetInfo> amd = tk::TargetInfo::parse("gfx942", error);
  ASSERT_TRUE(amd) << error;
  EXPECT_TRUE(target->transposingMatrixLoads);
  EXPECT_FALSE(amd->transposingMatrixLoads);
}

TEST(DotOperandsTest, LdmatrixRowsOfAFragmentMeetNoBankConflict) {
  std::optional<tk::TargetInfo> target;
  const tk::MatrixIntrinsic *intrinsic = mmaSync(target);
  ASSERT_NE(intrinsic, nullptr);
  for (unsigned opIdx : {0u, 1u}) {
    SCOPED_TRACE(opIdx == 0 ? "a" : "b");
    LinearLayout loaded = opIdx == 0 ? loadedA() : loadedB();
    LinearLayout fragments =
        take(tk::getMatrixOperandLayout(accumulator(), *intrinsic, opIdx, 32));
    std::vector<int64_t> shape = {loaded.getOutDimSize("dim0"),
                                  loaded.getOutDimSize("dim1")};
    LinearLayout shared =
        take(tk::getOperandSharedLayout(shape, 2, loaded, fragments));
    LinearLayout read = take(fragments.compose(take(shared.invert())));
    // a's register pairs run along k, its rows are lanes 4r; b's rows (along
    // k: register bit 0, lane bits 0 and 1) hold 8 columns, lanes 4..16.
    int32_t fragmentRegisters = opIdx == 0 ? 8 : 4;
    for (int32_t warp = 0; warp < 4; ++warp)
      for (int32_t first = 0; first < fragments.getInDimSize("register");
           first += fragmentRegisters)
        for (int32_t matrix = 0; matrix < fragmentRegisters / 2; ++matrix) {
          std::set<int32_t> groups;
          for (int32_t row = 0; row < 8; ++row) {
            int32_t reg = first + 2 * matrix, lane = 4 * row;
            if (opIdx == 1) {
              reg = first + 2 * matrix + (row & 1);
              lane = row >> 1;
            }
            int32_t offset = offsetOf(read, reg, lane, warp);
            EXPECT_EQ(offset % 8, 0) << "a row that is not 16-byte aligned";
            groups.insert((offset / 8) % 8);
          }
          EXPECT_EQ(groups.size(), 8u) << "registers " << first << ", matrix "
                                       << matrix << ", warp " << warp;
        }
  }
}

/// wgmma with a in registers (attention's p·v on 8 warps, BLOCK_M 128,
/// BLOCK_N 64, head dim 128): each register of a holds the element the PTX
/// ISA's register fragment of A for .m64nNk16 places there, and that layout
/// is the accumulator of the scores before it (q·kᵀ, 128x64), so p reaches
/// the second product without a conversion. b has no register fragment.
TEST(DotOperandsTest, WarpgroupAInRegistersIsTheScoresAccumulator) {
  tk::registerAllTargetPresets();
  std::string error;
  std::optional<tk::TargetInfo> target =
      tk::TargetInfo::parse("cuda-sm90a", error);
  ASSERT_TRUE(target) << error;
  const tk::MatrixIntrinsic *wgmma = nullptr;
  for (const tk::MatrixIntrinsic &intrinsic : target->intrinsics)
    if (intrinsic.name == "wgmma.m64nNk16.f32.f16")
      wgmma = &intrinsic;
  ASSERT_NE(wgmma, nullptr);
  // Warpgroup 1 takes the rows 64 and up.
  LinearLayout secondWarpgroup = LinearLayout::identity1D(2, "warp", "dim0");
  auto overWarpgroups = [&](int32_t n) {
    return take(tk::wgmmaM64AccumulatorLayout(n)) * secondWarpgroup;
  };
  LinearLayout output = overWarpgroups(128);
  LinearLayout scores = overWarpgroups(64);
  LinearLayout a = take(tk::getMatrixOperandLayout(output, *wgmma, 0, 64));
  EXPECT_EQ(a, scores);
  ASSERT_EQ(a.getInDimSize("register"), 32);
  for (int32_t warp = 0; warp < 8; ++warp)
    for (int32_t lane = 0; lane < 32; ++lane)
      for (int32_t reg = 0; reg < 32; ++reg) {
        int32_t step = reg / 8, i = reg % 8, g = lane / 4, q = lane % 4;
        auto at = a.apply({{"register", reg}, {"lane", lane}, {"warp", warp}});
        EXPECT_EQ(at[0].second,
                  64 * (warp / 4) + 16 * (warp % 4) + g + 8 * ((i / 2) % 2));
        EXPECT_EQ(at[1].second, 16 * step + 8 * (i / 4) + 2 * q + i % 2);
      }
  llvm::Expected<LinearLayout> b =
      tk::getMatrixOperandLayout(output, *wgmma, 1, 64);
  ASSERT_FALSE(bool(b));
  EXPECT_NE(llvm::toString(b.takeError()).find("shared memory itself"),
            std::string::npos);
}

} // namespace
