//===- FragmentsTest.cpp - placeFragment against FragmentLayout -----------===//
//
// The code a matrix unit emits for its fragments (tk::placeFragment) must
// put every register where the layout says: for every intrinsic of every
// registered preset, every operand whose lanes do not hold copies, every
// warp and lane, the emitted index arithmetic is evaluated and compared with
// FragmentLayout::elementsOf.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Conversion/Fragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

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
protected:
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

} // namespace
