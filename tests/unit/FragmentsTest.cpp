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
  if (isa<arith::XOrIOp>(op))
    return binary([](int64_t x, int64_t y) { return x ^ y; });
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

/// Checks `layout` for an operand of `shape`: a bijection onto the buffer,
/// the emitted IR giving the constant form's offset, and both giving
/// `want(row, col)`.
template <typename Want>
void checkSharedLayout(FragmentsTest &test, const tk::SharedLayout &layout,
                       std::array<int64_t, 2> shape, Want want,
                       const std::string &what) {
  ASSERT_FALSE(layout.misfit(shape)) << what << ": " << *layout.misfit(shape);
  std::set<int64_t> seen;
  for (int64_t r = 0; r < shape[0]; ++r)
    for (int64_t c = 0; c < shape[1]; ++c) {
      int64_t offset = layout.offset(r, c, shape);
      seen.insert(offset);
      EXPECT_EQ(offset, want(r, c)) << what << " (" << r << ", " << c << ")";
      Value emitted = layout.offset(test.builder, test.builder.getUnknownLoc(),
                                    test.index(r), test.index(c), shape);
      EXPECT_EQ(evaluate(emitted), offset)
          << what << " (" << r << ", " << c << ")";
    }
  EXPECT_EQ(int64_t(seen.size()), shape[0] * shape[1]) << what;
  EXPECT_EQ(*seen.rbegin(), shape[0] * shape[1] - 1) << what;
}

TEST_F(FragmentsTest, SharedLayoutsSpellOutTritonsSharedEncodings) {
  // NVMMA's 128-byte swizzle (wgmma), written as Triton's shared encoding
  // does: 16-bit elements in atoms of 8 rows of 64 along the contiguous
  // dimension c, stored down the other dimension o first; chunk (c % 64) / 8
  // of row o stored at chunk ^ (o % 8).
  auto nvmma = [](int64_t o, int64_t c, int64_t others) {
    int64_t atom = (c / 64) * (others / 8) + o / 8;
    return atom * 512 + (o % 8) * 64 + (((c % 64) / 8) ^ (o % 8)) * 8 + c % 8;
  };
  tk::SharedLayout swizzled;
  swizzled.tile = {8, 64};
  swizzled.tilesAlong = 0;
  swizzled.vec = 8;
  swizzled.maxPhase = 8;
  swizzled.alignment = 1024;
  checkSharedLayout(
      *this, swizzled, {64, 128},
      [&](int64_t r, int64_t c) { return nvmma(r, c, 64); }, "row-major");
  // The same, K-major B (k x n read as its transpose).
  tk::SharedLayout kMajor = swizzled;
  kMajor.contiguous = 0;
  kMajor.tile = {64, 8};
  kMajor.tilesAlong = 1;
  checkSharedLayout(
      *this, kMajor, {128, 64},
      [&](int64_t r, int64_t c) { return nvmma(c, r, 64); }, "K-major");
  // Core matrices of 8x8, stored down the columns first (wgmma's
  // interleaved MN-major B).
  tk::SharedLayout cores;
  cores.tile = {8, 8};
  cores.tilesAlong = 0;
  checkSharedLayout(
      *this, cores, {32, 16},
      [](int64_t r, int64_t c) {
        return ((c / 8) * 4 + r / 8) * 64 + (r % 8) * 8 + c % 8;
      },
      "core matrices");
  // Triton's #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4,
  // order = [1, 0]}> (mma.sync's A of 64-byte rows).
  tk::SharedLayout chunks;
  chunks.tile = {64, 32};
  chunks.vec = 8;
  chunks.perPhase = 2;
  chunks.maxPhase = 4;
  checkSharedLayout(
      *this, chunks, {64, 32},
      [](int64_t r, int64_t c) {
        return r * 32 + (((c / 8) ^ ((r / 2) % 4)) * 8) + c % 8;
      },
      "swizzled");
  EXPECT_EQ(chunks.consecutiveRun(), 8);
  EXPECT_EQ(cores.consecutiveRun(), 8);
}

TEST_F(FragmentsTest, SharedLayoutsThatDoNotFitAreReported) {
  tk::SharedLayout layout;
  layout.tile = {8, 64};
  layout.vec = 8;
  layout.maxPhase = 8;
  EXPECT_FALSE(layout.misfit({64, 128}));
  EXPECT_TRUE(layout.misfit({60, 128}));
  layout.maxPhase = 16;
  EXPECT_TRUE(layout.misfit({64, 128})); // 8 chunks a line, 16 phases
  layout.maxPhase = 6;
  EXPECT_TRUE(layout.misfit({64, 128}));
  layout.maxPhase = 8;
  layout.alignment = 48;
  EXPECT_TRUE(layout.misfit({64, 128}));
}

} // namespace
