//===- LinearLayoutFragmentsTest.cpp - fragment presets against backends --===//
//
// The matrix units' fragments as linear layouts (tk/core/Layout/
// LayoutPresets.h) must place every element where the backends' TargetInfo
// presets place it today (FragmentLayout::elementsOf): register r of lane l
// of warp w holds element r of elementsOf(w, l, rows, cols). Every backend's
// presets are registered as tk-opt registers them.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout/LayoutPresets.h"
#include "tk/core/TargetInfo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "RegisterTargetPresets.h"

namespace {

using tk::LinearLayout;

enum class Operand { A, B, Accumulator };

struct FragmentCase {
  const char *preset;
  const char *intrinsic;
  Operand operand;
  /// The layout of a rows x cols operand (one instruction).
  std::function<LinearLayout(int64_t rows, int64_t cols)> layout;
};

LinearLayout wgmma(int64_t, int64_t cols) {
  llvm::Expected<LinearLayout> layout =
      tk::wgmmaM64AccumulatorLayout(int32_t(cols));
  if (!layout) {
    ADD_FAILURE() << llvm::toString(layout.takeError());
    return LinearLayout();
  }
  return *layout;
}

const FragmentCase kCases[] = {
    {"cuda-sm80", "mma.m16n8k16.f32.f16", Operand::Accumulator,
     [](int64_t, int64_t) { return tk::mmaSyncM16N8AccumulatorLayout(); }},
    {"cuda-sm80", "mma.m16n8k16.f32.f16", Operand::A,
     [](int64_t, int64_t) { return tk::mmaSyncM16N8K16ALayout(); }},
    {"cuda-sm80", "mma.m16n8k16.f32.f16", Operand::B,
     [](int64_t, int64_t) { return tk::mmaSyncM16N8K16BLayout(); }},
    {"cuda-sm90a", "wgmma.m64nNk16.f32.f16", Operand::Accumulator, wgmma},
    {"amd-cdna3", "mfma.f32.32x32x8f16", Operand::Accumulator,
     [](int64_t, int64_t) { return tk::mfma32x32AccumulatorLayout(); }},
    {"amd-cdna3", "mfma.f32.16x16x16f16", Operand::Accumulator,
     [](int64_t, int64_t) { return tk::mfma16x16AccumulatorLayout(); }},
    {"amd-rdna3", "wmma.f32.16x16x16.f16", Operand::Accumulator,
     [](int64_t, int64_t) { return tk::wmma16x16AccumulatorLayout(); }},
    {"intel-pvc", "dpas.8x16x16.f32.f16", Operand::Accumulator,
     [](int64_t, int64_t) { return tk::dpas8x16AccumulatorLayout(); }},
    {"intel-dg2", "dpas.8x8x16.f32.f16", Operand::Accumulator,
     [](int64_t, int64_t) { return tk::dpas8x8AccumulatorLayout(); }},
};

TEST(LinearLayoutFragmentsTest, PresetsPlaceElementsAsTheBackendsDo) {
  tk::registerAllTargetPresets();
  std::vector<std::string> registered = tk::registeredTargetPresets();
  for (const FragmentCase &c : kCases) {
    SCOPED_TRACE(std::string(c.preset) + " " + c.intrinsic);
    if (std::find(registered.begin(), registered.end(), c.preset) ==
        registered.end()) {
      // A backend left out of this build has no presets to compare with.
      std::cerr << "skipped " << c.preset << ": its backend is not built\n";
      continue;
    }
    std::string error;
    std::optional<tk::TargetInfo> target =
        tk::TargetInfo::parse(c.preset, error);
    ASSERT_TRUE(target) << error;
    auto found = std::find_if(
        target->intrinsics.begin(), target->intrinsics.end(),
        [&](const tk::MatrixIntrinsic &i) { return i.key() == c.intrinsic; });
    ASSERT_NE(found, target->intrinsics.end());
    const tk::FragmentLayout *fragment =
        c.operand == Operand::A   ? &*found->aLayout
        : c.operand == Operand::B ? &*found->bLayout
                                  : &found->accLayout;
    int64_t rows = c.operand == Operand::B ? found->k : found->m;
    int64_t cols = c.operand == Operand::A ? found->k : found->n;
    // wgmma's entry records the largest n; the layout holds for each.
    for (int64_t n = found->scope == tk::MatrixScope::Warpgroup ? 8 : cols;
         n <= cols; n *= 2) {
      LinearLayout layout = c.layout(rows, n);
      ASSERT_EQ(layout.getOutDims(),
                (LinearLayout::DimSizes{{"dim0", int32_t(rows)},
                                        {"dim1", int32_t(n)}}));
      ASSERT_EQ(layout.getInDimSize("lane"), fragment->numLanes());
      ASSERT_EQ(layout.getInDimSize("warp"), fragment->numWarps());
      for (int32_t warp = 0; warp < fragment->numWarps(); ++warp)
        for (int32_t lane = 0; lane < fragment->numLanes(); ++lane) {
          auto held = fragment->elementsOf(warp, lane, rows, n);
          ASSERT_EQ(int64_t(held.size()), layout.getInDimSize("register"));
          for (int32_t reg = 0; reg < int32_t(held.size()); ++reg) {
            auto at = layout.apply(
                {{"register", reg}, {"lane", lane}, {"warp", warp}});
            ASSERT_EQ(at[0].second, held[reg][0])
                << "n " << n << " warp " << warp << " lane " << lane
                << " register " << reg;
            ASSERT_EQ(at[1].second, held[reg][1])
                << "n " << n << " warp " << warp << " lane " << lane
                << " register " << reg;
          }
        }
      // The backend's preset states the same layout as a linear one.
      llvm::Expected<LinearLayout> stated = fragment->toLinearLayout(rows, n);
      ASSERT_TRUE(bool(stated)) << llvm::toString(stated.takeError());
      EXPECT_EQ(*stated, layout) << "n " << n << "\n"
                                 << stated->toString() << "\nwant\n"
                                 << layout.toString();
    }
  }
}

// Every fragment every preset declares is a linear layout, at each shape
// the unit takes: operands and accumulators of every matrix intrinsic.
TEST(LinearLayoutFragmentsTest, EveryPresetFragmentIsLinear) {
  tk::registerAllTargetPresets();
  int checked = 0;
  for (const std::string &name : tk::registeredTargetPresets()) {
    std::string error;
    std::optional<tk::TargetInfo> target = tk::TargetInfo::parse(name, error);
    ASSERT_TRUE(target) << error;
    for (const tk::MatrixIntrinsic &unit : target->intrinsics) {
      SCOPED_TRACE(name + " " + unit.name);
      struct Operand {
        const tk::FragmentLayout *layout;
        int64_t rows, cols;
      };
      std::vector<Operand> operands = {{&unit.accLayout, unit.m, unit.n}};
      if (unit.aLayout)
        operands.push_back({&*unit.aLayout, unit.m, unit.k});
      if (unit.bLayout)
        operands.push_back({&*unit.bLayout, unit.k, unit.n});
      for (const Operand &operand : operands) {
        llvm::Expected<LinearLayout> layout =
            operand.layout->toLinearLayout(operand.rows, operand.cols);
        EXPECT_TRUE(bool(layout)) << llvm::toString(layout.takeError());
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

// A placement that is not linear is refused by name, not mis-stated.
TEST(LinearLayoutFragmentsTest, ANonLinearFragmentIsRefused) {
  tk::FragmentLayout threeLanes =
      tk::FragmentLayout::of({1, 1}, {1, 3}, {1, 0});
  llvm::Expected<LinearLayout> layout = threeLanes.toLinearLayout(4, 4);
  ASSERT_FALSE(bool(layout));
  EXPECT_NE(llvm::toString(layout.takeError()).find("not a power of two"),
            std::string::npos);
}

} // namespace
