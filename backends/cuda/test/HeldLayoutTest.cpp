//===- HeldLayoutTest.cpp - the held layouts mma.sync and wgmma state -----===//
//
// What MmaSyncUnit and WgmmaUnit state of a held accumulator (#tkw.held in
// the thread layouts) is where core places every register of every thread
// (registerPositions) and which lanes share a row (registerRows): each
// layout holds every element of its product once, and the emitted
// positions, folded for each constant thread id, are the layout's
// (tk::heldLayoutMismatch). And what they state of a product they compute
// without holding it (#tkw.held without a product number) is where emit
// writes its result from (tk::emittedLayoutMismatch).
//
//===----------------------------------------------------------------------===//

#include "compiler/MmaSync.h"
#include "compiler/Wgmma.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;

namespace {

struct HeldCase {
  int64_t m, n, k, numThreads;
  bool rowsAcrossWarps, tf32;
};

tk::MatrixUnit::HeldProduct productOf(MLIRContext &context, const HeldCase &c) {
  tk::MatrixUnit::HeldProduct p;
  p.a = p.b = c.tf32 ? Type(Float32Type::get(&context))
                     : Type(Float16Type::get(&context));
  p.accumulator = Float32Type::get(&context);
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.numThreads = c.numThreads;
  p.rowsAcrossWarps = c.rowsAcrossWarps;
  p.tf32 = c.tf32;
  return p;
}

std::string name(const HeldCase &c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
         std::to_string(c.k) + " on " + std::to_string(c.numThreads) +
         " threads" + (c.rowsAcrossWarps ? ", rows across warps" : "") +
         (c.tf32 ? ", tf32" : "");
}

void expectStatedLayout(const tk::MatrixUnit &unit, const HeldCase &c,
                        bool cyclic) {
  MLIRContext context;
  tk::MatrixUnit::HeldProduct product = productOf(context, c);
  SCOPED_TRACE(name(c));
  ASSERT_TRUE(unit.holds(product));
  std::optional<tk::HeldLayout> layout = unit.heldLayout(product);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->cyclic, cyclic);
  std::optional<std::string> gap = layout->uncovered(c.numThreads, c.m, c.n);
  EXPECT_FALSE(gap) << *gap;
  std::optional<std::string> mismatch =
      tk::heldLayoutMismatch(context, unit, product, *layout);
  EXPECT_FALSE(mismatch) << *mismatch;
  // The check can fail: the same layout with its tiles dealt the other
  // way is caught.
  tk::HeldLayout other = *layout;
  other.cyclic = !other.cyclic;
  if (other.elementsOf(1, c.numThreads, c.m, c.n) !=
      layout->elementsOf(1, c.numThreads, c.m, c.n)) {
    EXPECT_TRUE(tk::heldLayoutMismatch(context, unit, product, other));
  }
}

void expectEmittedLayout(const tk::MatrixUnit &unit, const HeldCase &c,
                         int64_t groupThreads) {
  MLIRContext context;
  context.loadDialect<NVVM::NVVMDialect>();
  tk::MatrixUnit::HeldProduct product = productOf(context, c);
  SCOPED_TRACE(name(c));
  ASSERT_TRUE(
      unit.supports(product.a, product.b, product.accumulator, c.m, c.n, c.k));
  std::optional<tk::HeldLayout> layout = unit.emittedLayout(product);
  ASSERT_TRUE(layout);
  EXPECT_TRUE(layout->cyclic);
  EXPECT_EQ(layout->groupThreads, groupThreads);
  std::optional<std::string> gap = layout->uncovered(c.numThreads, c.m, c.n);
  EXPECT_FALSE(gap) << *gap;
  std::optional<std::string> mismatch =
      tk::emittedLayoutMismatch(context, unit, product, *layout);
  EXPECT_FALSE(mismatch) << *mismatch;
  // The check can fail: the tiles dealt to groups of half the threads.
  tk::HeldLayout other = *layout;
  other.groupThreads /= 2;
  EXPECT_TRUE(tk::emittedLayoutMismatch(context, unit, product, other));
}

} // namespace

TEST(EmittedLayout, MmaSyncDealsTilesToWarps) {
  tk::cuda::MmaSyncUnit unit;
  // Tiles per warp 8, 2 and 1, and fewer tiles than warps.
  for (const HeldCase &c : {HeldCase{64, 64, 32, 128, false, false},
                            HeldCase{32, 64, 16, 256, false, false},
                            HeldCase{32, 32, 16, 256, false, false},
                            HeldCase{16, 16, 16, 128, false, false}})
    expectEmittedLayout(unit, c, /*groupThreads=*/32);
}

TEST(EmittedLayout, WgmmaDealsTilesToWarpgroups) {
  tk::cuda::WgmmaUnit unit;
  for (const HeldCase &c : {HeldCase{128, 128, 32, 256, false, false},
                            HeldCase{64, 64, 16, 128, false, false}})
    expectEmittedLayout(unit, c, /*groupThreads=*/128);
  // Two warps are no warpgroup: mma.sync's layout, which emit follows.
  expectEmittedLayout(unit, HeldCase{64, 64, 16, 64, false, false},
                      /*groupThreads=*/32);
}

TEST(HeldLayout, MmaSyncStatesWhereItsRegistersAre) {
  tk::cuda::MmaSyncUnit unit;
  for (const HeldCase &c : {HeldCase{64, 64, 32, 128, false, false},
                            HeldCase{128, 128, 32, 256, false, false},
                            HeldCase{64, 64, 64, 128, true, false},
                            HeldCase{64, 128, 32, 128, false, true}})
    expectStatedLayout(unit, c, /*cyclic=*/false);
}

TEST(HeldLayout, WgmmaStatesWhereItsRegistersAre) {
  tk::cuda::WgmmaUnit unit;
  for (const HeldCase &c : {HeldCase{64, 64, 32, 128, false, false},
                            HeldCase{128, 128, 32, 256, false, false},
                            HeldCase{128, 64, 64, 256, true, false},
                            HeldCase{256, 128, 64, 256, false, false}})
    expectStatedLayout(unit, c, /*cyclic=*/true);
}

// wgmma's accumulator gives each row of a 64-row tile to one quad of lanes
// (rows lane / 4 and lane / 4 + 8 of each warp's 16): with one column of
// tiles, row values stay in registers and shuffles over the quad.
TEST(HeldLayout, WgmmaRowsStayInQuads) {
  MLIRContext context;
  tk::cuda::WgmmaUnit unit;
  tk::MatrixUnit::HeldProduct product =
      productOf(context, HeldCase{128, 64, 64, 256, true, false});
  std::optional<tk::RegisterRows> rows = unit.registerRows(product);
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->laneMask, 0b11);
  // Each thread holds 64 * 64 / 128 registers of its tile: 2 columns of
  // rows r and r + 8 in every chunk of 8 columns.
  ASSERT_EQ(rows->rowOfRegister.size(), 32u);
  for (size_t i = 0; i < rows->rowOfRegister.size(); ++i)
    EXPECT_EQ(rows->rowOfRegister[i], i % 4 < 2 ? 0 : 8) << "register " << i;
  // Two warpgroups side by side along a row: no rows in registers.
  product = productOf(context, HeldCase{64, 128, 64, 256, false, false});
  std::optional<tk::HeldLayout> layout = unit.heldLayout(product);
  ASSERT_TRUE(layout);
  ASSERT_TRUE(layout->cyclic);
  EXPECT_EQ(layout->tile[1], 64);
  EXPECT_FALSE(unit.registerRows(product));
}

// Where mma.sync stacks its warps by rows (a narrow product), its layout
// would give each row to a quad of lanes too, but the unit keeps rows in
// workgroup memory until that runs on a GPU.
TEST(HeldLayout, MmaSyncKeepsRowsInWorkgroupMemory) {
  MLIRContext context;
  tk::cuda::MmaSyncUnit unit;
  tk::MatrixUnit::HeldProduct product =
      productOf(context, HeldCase{64, 16, 64, 128, true, false});
  std::optional<tk::HeldLayout> layout = unit.heldLayout(product);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->groups, (std::array<int64_t, 2>{4, 1}));
  EXPECT_TRUE(layout->rowsOf(128, 64, 16));
  EXPECT_FALSE(unit.registerRows(product));
}
