//===- FragmentsTest.cpp - placeFragment against FragmentLayout -----------===//
//
// The code a matrix unit emits for its fragments (tk::placeFragment) must
// put every register where the layout says: for every intrinsic of every
// registered preset, every operand whose lanes do not hold copies, every
// warp and lane, the emitted index arithmetic is evaluated and compared with
// FragmentLayout::elementsOf. The same for the held layouts built of those
// accumulators (tk::HeldLayout), which also hold every element once and
// describe their rows where each row stays in one warp.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Conversion/Fragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>

#include "RegisterTargetPresets.h"

using namespace mlir;

namespace {

/// The value of index arithmetic over constants (what the unit emitted for
/// a given warp and lane).
std::optional<int64_t> evaluate(Value value) {
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto constant = dyn_cast<arith::ConstantIndexOp>(op))
    return constant.value();
  auto binary = [&](auto combine) -> std::optional<int64_t> {
    std::optional<int64_t> lhs = evaluate(op->getOperand(0));
    std::optional<int64_t> rhs = evaluate(op->getOperand(1));
    if (!lhs || !rhs)
      return std::nullopt;
    return combine(*lhs, *rhs);
  };
  if (isa<arith::AddIOp>(op))
    return binary([](int64_t x, int64_t y) { return x + y; });
  if (isa<arith::MulIOp>(op))
    return binary([](int64_t x, int64_t y) { return x * y; });
  if (isa<arith::DivUIOp>(op))
    return binary([](int64_t x, int64_t y) { return x / y; });
  if (isa<arith::RemUIOp>(op))
    return binary([](int64_t x, int64_t y) { return x % y; });
  return std::nullopt;
}

class FragmentsTest : public ::testing::Test {
public:
  static void SetUpTestSuite() { tk::registerAllTargetPresets(); }

  FragmentsTest() : builder(&context) {
    context.loadDialect<arith::ArithDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToStart(module->getBody());
  }

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(builder, builder.getUnknownLoc(),
                                          value);
  }

  /// Checks every register of every lane of every warp of one fragment;
  /// returns how many layouts were placed (0 when the layout wraps).
  int check(const tk::FragmentLayout &layout, int64_t rows, int64_t cols,
            const std::string &what) {
    Location loc = builder.getUnknownLoc();
    int64_t warps = layout.numWarps(), lanes = layout.numLanes();
    for (int64_t warp = 0; warp < warps; ++warp)
      for (int64_t lane = 0; lane < lanes; ++lane) {
        FailureOr<tk::FragmentPlacement> placed = tk::placeFragment(
            builder, loc, layout, rows, cols, index(100), index(1000),
            warps > 1 ? index(warp) : Value(), index(lane));
        if (failed(placed))
          return 0;
        auto want = layout.elementsOf(warp, lane, rows, cols);
        auto got = placed->positions(builder, loc);
        EXPECT_EQ(got.size(), want.size()) << what;
        for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
          EXPECT_EQ(evaluate(got[i].first), 100 + want[i][0])
              << what << " warp " << warp << " lane " << lane << " reg " << i;
          EXPECT_EQ(evaluate(got[i].second), 1000 + want[i][1])
              << what << " warp " << warp << " lane " << lane << " reg " << i;
        }
      }
    return 1;
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};

TEST_F(FragmentsTest, PlacedRegistersAreWhereEveryPresetsLayoutSays) {
  int placed = 0, copies = 0;
  for (const std::string &name : tk::registeredTargetPresets()) {
    std::string error;
    std::optional<tk::TargetInfo> target = tk::TargetInfo::parse(name, error);
    ASSERT_TRUE(target) << error;
    for (const tk::MatrixIntrinsic &i : target->intrinsics) {
      std::string what = name + " " + i.name;
      placed += check(i.accLayout, i.m, i.n, what + " accumulator");
      if (i.aLayout) {
        int a = check(*i.aLayout, i.m, i.k, what + " a");
        placed += a;
        copies += 1 - a;
      }
      if (i.bLayout) {
        int b = check(*i.bLayout, i.k, i.n, what + " b");
        placed += b;
        copies += 1 - b;
      }
    }
  }
  // Every accumulator places; only wmma's a and b (half-waves holding
  // copies) do not.
  EXPECT_GT(placed, 50);
  EXPECT_EQ(copies, 8) << "wmma's 4 intrinsics, a and b each";
}

TEST_F(FragmentsTest, RowLanesAreTheLanesAlongColumns) {
  using FL = tk::FragmentLayout;
  EXPECT_EQ(tk::rowLaneMask(FL::of({1, 2}, {8, 4}, {1, 0})), 0b11);
  EXPECT_EQ(tk::rowLaneMask(FL::of({4, 1}, {2, 32}, {1, 0})), 0b11111);
  EXPECT_EQ(tk::rowLaneMask(FL::of({8, 1}, {1, 16}, {1, 0})), 0b1111);
  EXPECT_EQ(tk::rowLaneMask(FL::of({1, 4}, {32, 2}, {0, 1})), 0b100000);
}

/// A held layout of `acc`'s tiles, checked three ways for each thread of
/// the product: the emitted positions against elementsOf, every element
/// held once, and the rows where groups hold whole rows.
void checkHeld(FragmentsTest &test, const tk::HeldLayout &layout, int64_t m,
               int64_t n, const std::string &what);

TEST_F(FragmentsTest, HeldLayoutsPlaceEveryRegisterAtEveryWarpSize) {
  std::set<int64_t> warpSizes;
  int checked = 0;
  for (const std::string &name : tk::registeredTargetPresets()) {
    std::string error;
    std::optional<tk::TargetInfo> target = tk::TargetInfo::parse(name, error);
    ASSERT_TRUE(target) << error;
    for (const tk::MatrixIntrinsic &i : target->intrinsics) {
      tk::HeldLayout layout;
      layout.intrinsic = i.name;
      layout.fragment = i.accLayout;
      layout.tile = {i.m, i.n};
      layout.groupThreads = i.accLayout.numLanes() * i.accLayout.numWarps();
      warpSizes.insert(i.accLayout.numLanes());
      std::string what = name + " " + i.name;
      // 4 groups stacked by rows, 2 x 2 tiles each: whole rows per group.
      layout.groups = {4, 1};
      layout.tilesPerGroup = {2, 2};
      checkHeld(*this, layout, 8 * i.m, 2 * i.n, what + " rows");
      // A 2 x 2 grid of groups: rows split over groups.
      layout.groups = {2, 2};
      checkHeld(*this, layout, 4 * i.m, 4 * i.n, what + " grid");
      // Tiles dealt to 2 groups in turn.
      layout.groups = {1, 1};
      layout.tilesPerGroup = {1, 1};
      layout.cyclic = true;
      checkHeld(*this, layout, 4 * i.m, i.n, what + " cyclic");
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
  EXPECT_EQ(warpSizes, (std::set<int64_t>{8, 16, 32, 64}))
      << "accumulators at the warp sizes of DPAS (8, 16), mma and WMMA (32) "
         "and MFMA (64)";
}

TEST_F(FragmentsTest, HeldLayoutsThatMissOrOverflowTheProductAreReported) {
  // mma.sync's accumulator: a 16 x 8 tile over 32 lanes.
  tk::HeldLayout layout;
  layout.fragment = tk::FragmentLayout::of({1, 2}, {8, 4}, {1, 0});
  layout.tile = {16, 8};
  layout.groupThreads = 32;
  layout.groups = {2, 1};
  EXPECT_FALSE(layout.uncovered(64, 32, 8));
  // 2 groups of 1 tile leave the lower half of a 64 x 8 product.
  std::optional<std::string> gap = layout.uncovered(64, 64, 8);
  ASSERT_TRUE(gap);
  EXPECT_EQ(*gap, "(32, 0) is held by 0 threads, not 1");
  // 2 tiles a group put the second group's below a 32 x 8 product.
  layout.tilesPerGroup = {2, 1};
  gap = layout.uncovered(64, 32, 8);
  ASSERT_TRUE(gap);
  EXPECT_NE(gap->find("outside the 32x8 product"), std::string::npos) << *gap;
}

void checkHeld(FragmentsTest &test, const tk::HeldLayout &layout, int64_t m,
               int64_t n, const std::string &what) {
  SCOPED_TRACE(what);
  int64_t numGroups = layout.cyclic ? 2 : layout.groups[0] * layout.groups[1];
  int64_t numThreads = numGroups * layout.groupThreads;
  std::optional<std::string> gap = layout.uncovered(numThreads, m, n);
  ASSERT_FALSE(gap) << *gap;
  Location loc = test.builder.getUnknownLoc();
  for (int64_t thread = 0; thread < numThreads; thread += 7) {
    auto placed = layout.positions(test.builder, loc, test.index(thread),
                                   numThreads, m, n);
    ASSERT_TRUE(succeeded(placed));
    auto want = layout.elementsOf(thread, numThreads, m, n);
    ASSERT_EQ(placed->size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(evaluate((*placed)[i].first), want[i][0])
          << "thread " << thread << " reg " << i;
      EXPECT_EQ(evaluate((*placed)[i].second), want[i][1])
          << "thread " << thread << " reg " << i;
    }
  }
  std::optional<tk::RegisterRows> rows = layout.rowsOf(numThreads, m, n);
  bool splitOverGroups = !layout.cyclic && layout.groups[1] > 1;
  bool splitOverWarps =
      layout.fragment.numWarps() > 1 && layout.fragment.warpsPerFragment[1] > 1;
  if (splitOverGroups || splitOverWarps) {
    EXPECT_FALSE(rows) << "a row held by two warps";
    return;
  }
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->laneMask, tk::rowLaneMask(layout.fragment));
  auto first = layout.elementsOf(numThreads - 1, numThreads, m, n);
  for (size_t i = 0; i < first.size(); ++i)
    EXPECT_EQ(rows->rowOfRegister[i], first[i][0] - first[0][0]);
}

} // namespace
