//===- TargetInfoTest.cpp - presets, fragments and the spec parser --------===//
//
// Every backend's TargetInfo presets are registered as tk-opt registers
// them. Each preset's matrix fragments must fit its warp and hold each
// accumulator element once; a lane of each is checked against the vendors'
// manuals, so that a layout typed wrong in a preset fails here rather than
// in a backend.
//
//===----------------------------------------------------------------------===//

#include "tk/core/TargetInfo.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "RegisterTargetPresets.h"

namespace {

using Position = std::array<int64_t, 2>;
using Positions = llvm::SmallVector<Position>;

class TargetInfoTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() { tk::registerAllTargetPresets(); }

  static tk::TargetInfo preset(llvm::StringRef spec) {
    std::string error;
    std::optional<tk::TargetInfo> info = tk::TargetInfo::parse(spec, error);
    EXPECT_TRUE(info) << error;
    return info ? *info : tk::TargetInfo();
  }

  /// The intrinsic whose key() is `name` (the manual's form where it has a
  /// transposed one) of `target` (which must outlive the reference).
  static const tk::MatrixIntrinsic &intrinsic(const tk::TargetInfo &target,
                                              llvm::StringRef name) {
    auto found = std::find_if(
        target.intrinsics.begin(), target.intrinsics.end(),
        [&](const tk::MatrixIntrinsic &i) { return i.key() == name; });
    static const tk::MatrixIntrinsic none;
    if (found == target.intrinsics.end()) {
      ADD_FAILURE() << target.name << " has no " << name.str();
      return none;
    }
    return *found;
  }
};

TEST_F(TargetInfoTest, EveryPresetsFragmentsFitItsWarp) {
  std::vector<std::string> names = tk::registeredTargetPresets();
  for (const char *expected :
       {"cpu", "cuda-sm80", "cuda-sm90a", "amd-cdna2", "amd-cdna3", "amd-rdna3",
        "intel-pvc", "intel-dg2", "vulkan", "vulkan-lavapipe"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end())
        << expected << " is not registered";
  for (const std::string &name : names) {
    tk::TargetInfo target = preset(name);
    EXPECT_EQ(tk::verifyFragments(target), std::nullopt) << name;
    for (const tk::MatrixIntrinsic &i : target.intrinsics) {
      // Each accumulator element in one lane's registers, once.
      EXPECT_EQ(i.accLayout.elementsPerLane(i.m, i.n) * i.accLayout.numLanes() *
                    i.accLayout.numWarps(),
                i.m * i.n)
          << name << " " << i.name;
      if (i.aLayout) {
        EXPECT_GE(i.aLayout->elementsPerLane(i.m, i.k) * target.warpSize,
                  i.m * i.k)
            << name << " " << i.name;
      }
    }
  }
}

TEST_F(TargetInfoTest, WarpSizesComeFromThePresets) {
  EXPECT_EQ(preset("cpu").warpSize, 1);
  EXPECT_EQ(preset("cuda-sm80").warpSize, 32);
  EXPECT_EQ(preset("amd-cdna3").warpSize, 64);
  EXPECT_EQ(preset("amd-rdna3").warpSize, 32);
  EXPECT_EQ(preset("intel-pvc").warpSize, 16);
  EXPECT_EQ(preset("vulkan-lavapipe").warpSize, 8);
  EXPECT_EQ(preset("vulkan-lavapipe").sharedMemoryPerBlock, 32 * 1024);
  EXPECT_EQ(preset("intel-dg2").warpSize, 8);
  EXPECT_EQ(preset("gfx942").name, "gfx942");
  EXPECT_EQ(preset("gfx942").warpSize, 64);
}

// What the backends' units are registered under (tk::registerTargetUnits):
// the preset's name, whatever alias and overrides the spec has.
TEST_F(TargetInfoTest, ThePresetIsNamedWhateverTheSpec) {
  EXPECT_EQ(preset("gfx942").preset, "amd-cdna3");
  EXPECT_EQ(preset("amd-cdna3").preset, "amd-cdna3");
  tk::TargetInfo small = preset("sm_80:warp-size=16");
  EXPECT_EQ(small.name, "sm_80:warp-size=16");
  EXPECT_EQ(small.preset, "cuda-sm80");
}

TEST_F(TargetInfoTest, MmaSyncFragmentsFollowThePtxIsa) {
  tk::TargetInfo sm80 = preset("cuda-sm80");
  const tk::MatrixIntrinsic &mma = intrinsic(sm80, "mma.m16n8k16.f32.f16");
  // Lane 4g + t = 9: g = 2, t = 1.
  EXPECT_EQ(mma.aLayout->elementsOf(0, 9, 16, 16), (Positions{{2, 2},
                                                              {2, 3},
                                                              {10, 2},
                                                              {10, 3},
                                                              {2, 10},
                                                              {2, 11},
                                                              {10, 10},
                                                              {10, 11}}));
  EXPECT_EQ(mma.bLayout->elementsOf(0, 9, 16, 8),
            (Positions{{2, 2}, {3, 2}, {10, 2}, {11, 2}}));
  EXPECT_EQ(mma.accLayout.elementsOf(0, 9, 16, 8),
            (Positions{{2, 2}, {2, 3}, {10, 2}, {10, 3}}));
}

TEST_F(TargetInfoTest, WgmmaAccumulatorsAreSixteenRowsAWarp) {
  tk::TargetInfo sm90a = preset("cuda-sm90a");
  const tk::MatrixIntrinsic &wgmma = intrinsic(sm90a, "wgmma.m64nNk16.f32.f16");
  EXPECT_FALSE(wgmma.bLayout) << "wgmma reads b from shared memory";
  Positions held = wgmma.accLayout.elementsOf(1, 5, 64, 16);
  // Warp 1, lane 5 (g = 1, t = 1): rows 16 + 1 and 16 + 9, columns 2, 3 and
  // 10, 11.
  EXPECT_EQ(held, (Positions{{17, 2},
                             {17, 3},
                             {25, 2},
                             {25, 3},
                             {17, 10},
                             {17, 11},
                             {25, 10},
                             {25, 11}}));
}

TEST_F(TargetInfoTest, MfmaFragmentsFollowTheCdna3Isa) {
  tk::TargetInfo cdna3 = preset("amd-cdna3");
  const tk::MatrixIntrinsic &big = intrinsic(cdna3, "mfma.f32.32x32x8f16");
  // Lane 33: a's row 1 at k 4..7; the accumulator's column 1, rows 4..7,
  // 12..15, 20..23, 28..31.
  EXPECT_EQ(big.aLayout->elementsOf(0, 33, 32, 8),
            (Positions{{1, 4}, {1, 5}, {1, 6}, {1, 7}}));
  Positions acc = big.accLayout.elementsOf(0, 33, 32, 32);
  ASSERT_EQ(acc.size(), 16u);
  EXPECT_EQ(acc[0], (Position{4, 1}));
  EXPECT_EQ(acc[3], (Position{7, 1}));
  EXPECT_EQ(acc[4], (Position{12, 1}));
  EXPECT_EQ(acc[15], (Position{31, 1}));
  // f64: one row a register, row 4r + lane / 16.
  const tk::MatrixIntrinsic &f64 = intrinsic(cdna3, "mfma.f64.16x16x4f64");
  EXPECT_EQ(f64.accLayout.elementsOf(0, 17, 16, 16),
            (Positions{{1, 1}, {5, 1}, {9, 1}, {13, 1}}));
}

TEST_F(TargetInfoTest, WmmaOperandsAreCopiedAcrossHalfWaves) {
  tk::TargetInfo rdna3 = preset("amd-rdna3");
  const tk::MatrixIntrinsic &wmma = intrinsic(rdna3, "wmma.f32.16x16x16.f16");
  EXPECT_EQ(wmma.aLayout->elementsOf(0, 3, 16, 16),
            wmma.aLayout->elementsOf(0, 19, 16, 16));
  EXPECT_EQ(wmma.aLayout->elementsPerLane(16, 16), 16);
  // The accumulator's rows interleave: lane 19 holds column 3 of rows 1,
  // 3, ..., 15.
  Positions acc = wmma.accLayout.elementsOf(0, 19, 16, 16);
  ASSERT_EQ(acc.size(), 8u);
  for (int64_t r = 0; r < 8; ++r)
    EXPECT_EQ(acc[r], (Position{2 * r + 1, 3}));
}

// The transposed form of an intrinsic, issued as LayoutMatrixUnit issues it
// (b's fragment as the instruction's first operand, a's as its second),
// computes a . b + acc where its own fragments place them: the instruction
// is simulated as its manual's fragments say it reads and writes lanes, on
// small integers (exact in every type).
TEST_F(TargetInfoTest, TransposedFormsComputeTheSameProduct) {
  using Matrix = std::vector<std::vector<int64_t>>;
  for (const char *name : {"amd-cdna3", "amd-cdna2", "amd-rdna3"}) {
    tk::TargetInfo target = preset(name);
    int forms = 0;
    for (const tk::MatrixIntrinsic &form : target.intrinsics) {
      if (!form.transposed)
        continue;
      ++forms;
      SCOPED_TRACE(std::string(name) + " " + form.key());
      const tk::MatrixIntrinsic &manual = intrinsic(target, form.name);
      ASSERT_FALSE(manual.transposed);
      int64_t m = form.m, n = form.n, k = form.k;
      auto filled = [](int64_t rows, int64_t cols, int64_t seed) {
        Matrix matrix(rows, std::vector<int64_t>(cols));
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c)
            matrix[r][c] = (seed * 7 + r * 13 + c * 5) % 11 - 5;
        return matrix;
      };
      Matrix a = filled(m, k, 1), b = filled(k, n, 2), acc = filled(m, n, 3);
      // Each lane's registers, as a fragment layout places a matrix's
      // elements, and the matrix an instruction reads from them.
      auto registers = [&](const tk::FragmentLayout &layout, const Matrix &of) {
        std::vector<std::vector<int64_t>> held(target.warpSize);
        for (int64_t lane = 0; lane < target.warpSize; ++lane)
          for (Position at :
               layout.elementsOf(0, lane, of.size(), of.front().size()))
            held[lane].push_back(of[at[0]][at[1]]);
        return held;
      };
      auto read = [&](const tk::FragmentLayout &layout, int64_t rows,
                      int64_t cols,
                      const std::vector<std::vector<int64_t>> &held) {
        Matrix matrix(rows, std::vector<int64_t>(cols, 0));
        for (int64_t lane = 0; lane < target.warpSize; ++lane) {
          Positions at = layout.elementsOf(0, lane, rows, cols);
          EXPECT_EQ(at.size(), held[lane].size());
          for (size_t r = 0; r < at.size() && r < held[lane].size(); ++r)
            matrix[at[r][0]][at[r][1]] = held[lane][r];
        }
        return matrix;
      };
      Matrix first = read(*manual.aLayout, m, k, registers(*form.bLayout, b));
      Matrix second = read(*manual.bLayout, k, n, registers(*form.aLayout, a));
      Matrix sum = read(manual.accLayout, m, n, registers(form.accLayout, acc));
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < n; ++c)
          for (int64_t i = 0; i < k; ++i)
            sum[r][c] += first[r][i] * second[i][c];
      // The instruction writes each lane's registers where the manual's
      // accumulator fragment says; the form reads them where its own does.
      for (int64_t lane = 0; lane < target.warpSize; ++lane) {
        Positions written = manual.accLayout.elementsOf(0, lane, m, n);
        Positions meant = form.accLayout.elementsOf(0, lane, m, n);
        ASSERT_EQ(written.size(), meant.size());
        for (size_t r = 0; r < written.size(); ++r) {
          int64_t want = acc[meant[r][0]][meant[r][1]];
          for (int64_t i = 0; i < k; ++i)
            want += a[meant[r][0]][i] * b[i][meant[r][1]];
          ASSERT_EQ(sum[written[r][0]][written[r][1]], want)
              << "lane " << lane << " register " << r;
        }
      }
    }
    EXPECT_GT(forms, 0) << name << " lists no transposed form";
  }
}

// An intrinsic that is not square, or whose b fragment is not a's
// transposed, has no transposed form, and says why.
TEST_F(TargetInfoTest, OnlySymmetricIntrinsicsHaveATransposedForm) {
  tk::TargetInfo sm80 = preset("cuda-sm80");
  llvm::Expected<tk::MatrixIntrinsic> mma =
      intrinsic(sm80, "mma.m16n8k16.f32.f16").transposedForm();
  ASSERT_FALSE(bool(mma));
  EXPECT_NE(llvm::toString(mma.takeError()).find("square warp intrinsic"),
            std::string::npos);
  tk::MatrixIntrinsic skewed =
      intrinsic(preset("amd-cdna3"), "mfma.f32.32x32x8f16");
  skewed.bLayout = skewed.aLayout;
  llvm::Expected<tk::MatrixIntrinsic> form = skewed.transposedForm();
  ASSERT_FALSE(bool(form));
  EXPECT_NE(llvm::toString(form.takeError()).find("not a's transposed"),
            std::string::npos);
}

TEST_F(TargetInfoTest, DpasFragmentsFollowTheOpenClExtension) {
  tk::TargetInfo pvc = preset("intel-pvc");
  const tk::MatrixIntrinsic &f16 = intrinsic(pvc, "dpas.8x16x16.f32.f16");
  // Work-item 5: a's column 5 of each row, b's and the accumulator's
  // column 5 whole.
  Positions a = f16.aLayout->elementsOf(0, 5, 8, 16);
  ASSERT_EQ(a.size(), 8u);
  for (int64_t r = 0; r < 8; ++r)
    EXPECT_EQ(a[r], (Position{r, 5}));
  EXPECT_EQ(f16.bLayout->elementsPerLane(16, 16), 16);
  EXPECT_EQ(f16.accLayout.elementsOf(0, 5, 8, 16).back(), (Position{7, 5}));
  // tf32: the first eight work-items hold the even rows, the rest the odd.
  const tk::MatrixIntrinsic &tf32 = intrinsic(pvc, "dpas.8x16x8.f32.tf32");
  EXPECT_EQ(tf32.aLayout->elementsOf(0, 9, 8, 8),
            (Positions{{1, 1}, {3, 1}, {5, 1}, {7, 1}}));
  // dg2, subgroup 8: two k a work-item a row.
  tk::TargetInfo dg2Target = preset("intel-dg2");
  const tk::MatrixIntrinsic &dg2 = intrinsic(dg2Target, "dpas.8x8x16.f32.f16");
  EXPECT_EQ(dg2.aLayout->elementsOf(0, 3, 8, 16).front(), (Position{0, 6}));
  EXPECT_EQ(dg2.aLayout->elementsOf(0, 3, 8, 16)[1], (Position{0, 7}));
}

TEST_F(TargetInfoTest, AFragmentThatMissesTheWarpIsReported) {
  tk::TargetInfo target = preset("cuda-sm80");
  target.intrinsics.front().accLayout =
      tk::FragmentLayout::of({1, 2}, {8, 8}, {1, 0});
  std::optional<std::string> problem = tk::verifyFragments(target);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("64 lanes, but a warp has 32"), std::string::npos)
      << *problem;
  // An accumulator laid out like wmma's a (half-waves holding copies).
  target = preset("amd-rdna3");
  target.intrinsics.front().accLayout =
      tk::FragmentLayout::of({1, 16}, {16, 2}, {0, 1});
  problem = tk::verifyFragments(target);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("2 lanes hold element (0, 0)"), std::string::npos)
      << *problem;
}

TEST_F(TargetInfoTest, OverridingTheWarpSizeDropsTheIntrinsics) {
  tk::TargetInfo wide = preset("cuda-sm80:warp-size=64:shared-memory-banks=16");
  EXPECT_EQ(wide.warpSize, 64);
  EXPECT_EQ(wide.sharedMemoryBanks, 16);
  EXPECT_TRUE(wide.intrinsics.empty());
}

TEST_F(TargetInfoTest, ADeviceKeepsTheCooperativeMatricesItLists) {
  tk::TargetInfo device =
      preset("vulkan-cooperative-matrix:warp-size=32:intrinsics="
             "coopmat.16x8x16.f16.f32,coopmat.16x16x16.f16.f32");
  // The preset's order (the larger product first), not the list's.
  ASSERT_EQ(device.intrinsics.size(), 2u);
  EXPECT_EQ(device.intrinsics[0].key(), "coopmat.16x16x16.f16.f32");
  EXPECT_EQ(device.intrinsics[1].key(), "coopmat.16x8x16.f16.f32");
  for (const tk::MatrixIntrinsic &intrinsic : device.intrinsics) {
    EXPECT_TRUE(intrinsic.opaque);
    EXPECT_FALSE(intrinsic.aLayout || intrinsic.bLayout);
  }
  EXPECT_TRUE(
      preset("vulkan-cooperative-matrix:intrinsics=none").intrinsics.empty());
  std::string error;
  EXPECT_FALSE(tk::TargetInfo::parse(
      "vulkan-cooperative-matrix:intrinsics=coopmat.3x3x3.f16.f32", error));
  EXPECT_NE(error.find("names 'coopmat.3x3x3.f16.f32', which the preset does "
                       "not have"),
            std::string::npos)
      << error;
}

TEST_F(TargetInfoTest, AnOpaqueAccumulatorLeavesInRowRunsForAnyWarp) {
  // Where the elements lie once a matrix has left through memory: each lane
  // a run along one row, every element once, for subgroups of 16, 32, 64.
  for (int64_t warpSize : {16, 32, 64}) {
    tk::TargetInfo device = preset(
        "vulkan-cooperative-matrix:warp-size=" + std::to_string(warpSize) +
        ":intrinsics=coopmat.16x16x16.f16.f32");
    ASSERT_EQ(device.intrinsics.size(), 1u) << warpSize;
    const tk::FragmentLayout &placement = device.intrinsics[0].accLayout;
    EXPECT_EQ(placement.numLanes(), warpSize);
    std::vector<int> held(16 * 16, 0);
    for (int64_t lane = 0; lane < warpSize; ++lane) {
      Positions elements = placement.elementsOf(0, lane, 16, 16);
      ASSERT_EQ(int64_t(elements.size()), 256 / warpSize);
      for (size_t i = 0; i < elements.size(); ++i) {
        ++held[elements[i][0] * 16 + elements[i][1]];
        EXPECT_EQ(elements[i][0], elements[0][0]);
        EXPECT_EQ(elements[i][1], elements[0][1] + int64_t(i));
      }
    }
    EXPECT_TRUE(std::all_of(held.begin(), held.end(), [](int count) {
      return count == 1;
    })) << warpSize;
  }
}

TEST_F(TargetInfoTest, UnknownPresetsAndOverridesAreNamed) {
  std::string error;
  EXPECT_FALSE(tk::TargetInfo::parse("nosuch-gpu", error));
  EXPECT_NE(error.find("unknown target 'nosuch-gpu'"), std::string::npos);
  EXPECT_NE(error.find("intel-pvc"), std::string::npos) << error;
  EXPECT_FALSE(tk::TargetInfo::parse("cpu:lanes=3", error));
  EXPECT_NE(error.find("unknown target override 'lanes'"), std::string::npos);
  EXPECT_FALSE(tk::TargetInfo::parse("cpu:warp-size=-4", error));
  EXPECT_NE(error.find("positive integer"), std::string::npos);
}

TEST(SubgroupsForWarps, WarpsCountThirtyTwoLanes) {
  // Narrower subgroups run 32 / width of them a warp.
  EXPECT_EQ(tk::getSubgroupsForWarps(4, 16, 1024), 8);
  EXPECT_EQ(tk::getSubgroupsForWarps(4, 8, 1024), 16);
  EXPECT_EQ(tk::getSubgroupsForWarps(1, 4, 1024), 8);
  // Within the workgroup's limit, never fewer than num_warps.
  EXPECT_EQ(tk::getSubgroupsForWarps(32, 8, 1024), 128);
  EXPECT_EQ(tk::getSubgroupsForWarps(16, 8, 256), 32);
  EXPECT_EQ(tk::getSubgroupsForWarps(64, 8, 256), 64);
  // 32 lanes or more: num_warps of them; no subgroup size known: the same.
  EXPECT_EQ(tk::getSubgroupsForWarps(4, 32, 1024), 4);
  EXPECT_EQ(tk::getSubgroupsForWarps(4, 64, 1024), 4);
  EXPECT_EQ(tk::getSubgroupsForWarps(4, 0, 1024), 4);
  EXPECT_EQ(tk::getSubgroupsForWarps(0, 16, 1024), 2);
}

} // namespace
