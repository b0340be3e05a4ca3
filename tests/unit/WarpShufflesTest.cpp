//===- WarpShufflesTest.cpp - conversions within a warp, simulated --------===//
//
// getWarpShufflePlan against enumeration: for every warp, lane and register
// of the result, the lane the plan reads from offers the register that
// holds the element the result places there. Random layouts of a tile
// that keep each warp's elements in the warp, RDNA3's attention
// probabilities (a transposed WMMA accumulator to the WMMA a operand), and
// the conversions no plan may cover.
//
//===----------------------------------------------------------------------===//

#include "LinearLayoutTestSupport.h"

#include "tk/core/Layout/WarpShuffles.h"

#include "llvm/ADT/bit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace {

using tk::LinearLayout;
using tk::WarpShufflePlan;
using tk::test::tile;

int32_t xorOfSetBits(llvm::ArrayRef<int32_t> values, int32_t bits) {
  int32_t result = 0;
  for (size_t bit = 0; bit < values.size(); ++bit)
    if (bits & (int32_t(1) << bit))
      result ^= values[bit];
  return result;
}

/// Runs the plan on every thread and register of `to`.
void expectPlanConverts(const WarpShufflePlan &plan, const LinearLayout &from,
                        const LinearLayout &to) {
  ASSERT_EQ(plan.laneOffsets.size(), size_t(to.getInDimSize("register")));
  for (int32_t warp = 0; warp < to.getInDimSize("warp"); ++warp)
    for (int32_t lane = 0; lane < to.getInDimSize("lane"); ++lane)
      for (int32_t reg = 0; reg < to.getInDimSize("register"); ++reg) {
        int32_t source =
            xorOfSetBits(plan.readLanes, lane) ^ plan.laneOffsets[reg];
        ASSERT_LT(source, from.getInDimSize("lane"));
        int32_t offered = plan.offeredRegisters[reg] ^
                          xorOfSetBits(plan.registerFlips, source);
        ASSERT_LT(offered, from.getInDimSize("register"));
        EXPECT_EQ(
            from.apply(
                {{"register", offered}, {"lane", source}, {"warp", warp}}),
            to.apply({{"register", reg}, {"lane", lane}, {"warp", warp}}))
            << "warp " << warp << " lane " << lane << " register " << reg;
      }
}

// RDNA3, attention's p: the transposed WMMA accumulator (a lane holds a row
// and every other column) to the a operand (a lane holds a whole row, both
// half-waves the same rows). Each register r reads lane (L & 15) | (r & 1)
// << 4, which offers its register r >> 1: no select.
TEST(WarpShufflesTest, TransposedWmmaAccumulatorToOperandA) {
  LinearLayout accumulator = tile({{0, 2}, {0, 4}, {0, 8}, {0, 16}, {0, 32}},
                                  {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 1}},
                                  {{16, 0}, {32, 0}}, {64, 64});
  LinearLayout operandA = tile(
      {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 16}, {0, 32}},
      {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 0}}, {{16, 0}, {32, 0}}, {64, 64});
  std::optional<WarpShufflePlan> plan =
      tk::getWarpShufflePlan(accumulator, operandA);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->readLanes, (llvm::SmallVector<int32_t>{1, 2, 4, 8, 0}));
  EXPECT_EQ(plan->selectingLaneBits(), 0);
  EXPECT_FALSE(plan->readsOwnLane());
  for (int32_t reg = 0; reg < 64; ++reg) {
    EXPECT_EQ(plan->laneOffsets[reg], (reg & 1) << 4);
    EXPECT_EQ(plan->offeredRegisters[reg], reg >> 1);
  }
  expectPlanConverts(*plan, accumulator, operandA);
  // The other way each lane holds what it needs (both half-waves hold the
  // row) and takes every other column by its lane bit 4.
  std::optional<WarpShufflePlan> back =
      tk::getWarpShufflePlan(operandA, accumulator);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->readsOwnLane());
  EXPECT_EQ(back->selectingLaneBits(), 16);
  expectPlanConverts(*back, operandA, accumulator);
}

// A row broadcast to every lane of a warp, then each lane taking one column
// of it in a register: every lane reads itself and selects its register by
// its own lane bits.
TEST(WarpShufflesTest, ColumnByLaneFromARowInEveryLane) {
  LinearLayout row = tile({{1}, {2}, {4}}, {{0}, {0}, {0}}, {{0}}, {8});
  LinearLayout column = tile({}, {{1}, {2}, {4}}, {{0}}, {8});
  std::optional<WarpShufflePlan> plan = tk::getWarpShufflePlan(row, column);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->readsOwnLane());
  EXPECT_EQ(plan->selectingLaneBits(), 7);
  expectPlanConverts(*plan, row, column);
}

TEST(WarpShufflesTest, RefusesWhatLeavesTheWarp) {
  // Rows by warp, then columns by warp.
  LinearLayout rows = tile({{0, 1}}, {{0, 2}, {1, 0}}, {{2, 0}}, {4, 4});
  LinearLayout columns = tile({{1, 0}}, {{2, 0}, {0, 1}}, {{0, 2}}, {4, 4});
  EXPECT_FALSE(tk::getWarpShufflePlan(rows, columns));
}

// Random layouts of a 16x16 tile on 2 warps of 8 lanes: the warp bit is
// the same coordinate bit on both sides, the other seven are shuffled among
// registers and lanes, and a lane or register basis is now and then a
// broadcast. Every plan converts. Where a lane's readers need two of its
// registers for one register of theirs there is no plan: about one draw in
// twenty has one, and the count guards against a test that checks none.
TEST(WarpShufflesTest, RandomLayoutsWithinWarpsConvert) {
  std::mt19937 random(45);
  int found = 0, trials = 400;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<std::vector<int32_t>> bits;
    for (int32_t b = 0; b < 4; ++b) {
      bits.push_back({1 << b, 0});
      bits.push_back({0, 1 << b});
    }
    std::shuffle(bits.begin(), bits.end(), random);
    std::vector<int32_t> warp = bits.back();
    bits.pop_back();
    std::vector<std::vector<int32_t>> fromBits = bits, toBits = bits;
    std::shuffle(fromBits.begin(), fromBits.end(), random);
    std::shuffle(toBits.begin(), toBits.end(), random);
    std::vector<std::vector<int32_t>> fromRegisters(fromBits.begin(),
                                                    fromBits.begin() + 4),
        fromLanes(fromBits.begin() + 4, fromBits.end());
    std::vector<std::vector<int32_t>> toRegisters(toBits.begin(),
                                                  toBits.begin() + 4),
        toLanes(toBits.begin() + 4, toBits.end());
    // Now and then `to` holds a lane's elements in two lanes (a broadcast
    // lane bit; its element bit moves to a register), or `from` holds
    // copies in two registers.
    if (random() % 3 == 0) {
      int32_t lane = random() % 3;
      toRegisters.push_back(toLanes[lane]);
      toLanes[lane] = {0, 0};
    }
    if (random() % 3 == 0)
      fromRegisters.push_back({0, 0});
    LinearLayout from = tile(fromRegisters, fromLanes, {warp}, {16, 16});
    LinearLayout to = tile(toRegisters, toLanes, {warp}, {16, 16});
    SCOPED_TRACE("trial " + std::to_string(trial));
    if (std::optional<WarpShufflePlan> plan =
            tk::getWarpShufflePlan(from, to)) {
      ++found;
      expectPlanConverts(*plan, from, to);
    }
  }
  EXPECT_GE(found, 15);
}

} // namespace
