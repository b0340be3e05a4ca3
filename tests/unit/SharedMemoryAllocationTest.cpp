//===- SharedMemoryAllocationTest.cpp - packing buffers by liveness -------===//
//
// packSharedBuffers against brute force: on random lives and sizes, no two
// buffers alive at one point overlap, every offset is aligned, the total
// covers every buffer and is at least the peak of live bytes; buffers that
// are never alive together all start at 0; the first fit is exact on a
// known case. getConversionPlan against enumeration: in every round each
// element a reader holds was written at the address it reads, no two
// elements share an address, and each side's vectors are consecutive and
// aligned.
//
//===----------------------------------------------------------------------===//

#include "LinearLayoutTestSupport.h"

#include "tk/core/Analysis/SharedMemoryAllocation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

namespace {

using tk::ConversionPlan;
using tk::LinearLayout;
using tk::SharedBuffer;
using tk::test::tile;

SharedBuffer buffer(int64_t start, int64_t end, int64_t bytes) {
  return SharedBuffer{nullptr, start, end, bytes, 0};
}

TEST(SharedMemoryAllocationTest, DisjointLivesShareOffsetZero) {
  std::vector<SharedBuffer> buffers = {buffer(1, 1, 4096), buffer(2, 2, 256),
                                       buffer(5, 9, 100)};
  EXPECT_EQ(tk::packSharedBuffers(buffers, 16), 4096);
  for (const SharedBuffer &b : buffers)
    EXPECT_EQ(b.offset, 0);
}

TEST(SharedMemoryAllocationTest, FirstFitOnAKnownCase) {
  // A lives 0-9, B 0-4, C 5-9: B and C both sit above A, at one offset.
  std::vector<SharedBuffer> buffers = {buffer(0, 9, 1000), buffer(0, 4, 500),
                                       buffer(5, 9, 500)};
  EXPECT_EQ(tk::packSharedBuffers(buffers, 16), 1008 + 500);
  EXPECT_EQ(buffers[0].offset, 0);
  EXPECT_EQ(buffers[1].offset, 1008);
  EXPECT_EQ(buffers[2].offset, 1008);
}

TEST(SharedMemoryAllocationTest, RandomLivesNeverOverlap) {
  std::mt19937 random(2026);
  for (int round = 0; round < 500; ++round) {
    int count = 1 + random() % 12;
    int64_t alignment = int64_t{1} << (random() % 6);
    std::vector<SharedBuffer> buffers;
    for (int i = 0; i < count; ++i) {
      int64_t start = random() % 20;
      buffers.push_back(
          buffer(start, start + random() % 8, 1 + random() % 5000));
    }
    int64_t total = tk::packSharedBuffers(buffers, alignment);
    int64_t peak = 0;
    for (int64_t point = 0; point < 30; ++point) {
      int64_t live = 0;
      for (const SharedBuffer &b : buffers)
        if (b.start <= point && point <= b.end)
          live += b.bytes;
      peak = std::max(peak, live);
    }
    EXPECT_GE(total, peak);
    for (size_t i = 0; i < buffers.size(); ++i) {
      const SharedBuffer &a = buffers[i];
      EXPECT_EQ(a.offset % alignment, 0);
      EXPECT_LE(a.offset + a.bytes, total);
      for (size_t j = i + 1; j < buffers.size(); ++j) {
        const SharedBuffer &b = buffers[j];
        bool aliveTogether = a.start <= b.end && b.start <= a.end;
        bool overlap =
            a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
        EXPECT_FALSE(aliveTogether && overlap)
            << "round " << round << ": buffers " << i << " and " << j;
      }
    }
  }
}

} // namespace

namespace {

/// The scratch address of flat coordinate `flat`: without the rounds'
/// positions.
uint64_t scratchAddress(uint64_t flat, const ConversionPlan &plan) {
  std::vector<int32_t> positions;
  for (const tk::RoundBit &round : plan.rounds)
    positions.push_back(round.position);
  std::sort(positions.rbegin(), positions.rend());
  for (int32_t position : positions)
    flat = ((flat >> (position + 1)) << position) |
           (flat & ((uint64_t(1) << position) - 1));
  return flat;
}

/// Each side's vectors: registers reg..reg+width-1 of every thread at
/// consecutive scratch addresses from a multiple of width.
void expectVectors(const LinearLayout &layout, int32_t width,
                   const ConversionPlan &plan) {
  for (uint64_t in = 0; in < (uint64_t(1) << layout.getTotalInDimSizeLog2());
       in += width) {
    uint64_t first = scratchAddress(layout.applyFlat(in), plan);
    EXPECT_EQ(first % width, 0u) << "input " << in;
    for (int32_t j = 1; j < width; ++j)
      EXPECT_EQ(scratchAddress(layout.applyFlat(in + j), plan), first + j)
          << "input " << in;
  }
}

/// The plan moves every element: enumerated over every round, register,
/// lane and warp.
void expectPlanConverts(const ConversionPlan &plan) {
  const LinearLayout &from = plan.from, &to = plan.to;
  expectVectors(from, plan.writeWidth, plan);
  expectVectors(to, plan.readWidth, plan);
  auto inRound = [&](uint64_t in, const LinearLayout &layout, uint64_t round,
                     bool source) {
    uint64_t reg = in % layout.getInDimSize("register");
    for (size_t i = 0; i < plan.rounds.size(); ++i) {
      int32_t bit = source ? plan.rounds[i].fromBit : plan.rounds[i].toBit;
      if (((reg >> bit) & 1) != ((round >> i) & 1))
        return false;
    }
    return true;
  };
  for (uint64_t round = 0; round < (uint64_t(1) << plan.rounds.size());
       ++round) {
    std::map<uint64_t, uint64_t> written; // address -> flat coordinate
    for (uint64_t in = 0; in < (uint64_t(1) << from.getTotalInDimSizeLog2());
         ++in) {
      if (!inRound(in, from, round, /*source=*/true))
        continue;
      uint64_t flat = from.applyFlat(in);
      auto [at, inserted] = written.emplace(scratchAddress(flat, plan), flat);
      EXPECT_EQ(at->second, flat) << "two elements at one address";
    }
    for (uint64_t in = 0; in < (uint64_t(1) << to.getTotalInDimSizeLog2());
         ++in) {
      if (!inRound(in, to, round, /*source=*/false))
        continue;
      uint64_t flat = to.applyFlat(in);
      auto at = written.find(scratchAddress(flat, plan));
      ASSERT_NE(at, written.end()) << "round " << round << " input " << in;
      EXPECT_EQ(at->second, flat) << "round " << round << " input " << in;
    }
  }
}

// wgmma's f32 accumulator of a 128x256 tile on 8 warps, converted to rows of
// eight: the scratch is row-major, a thread writes its column pairs and
// reads 16 bytes of f16 at once. One round (row bit 3 is a register bit on
// both sides); coordinate bit 0, which is one too, is inside both sides'
// vectors and is no round.
TEST(ConversionPlanTest, AccumulatorToRowsMovesVectors) {
  LinearLayout accumulator =
      tile({{0, 1}, {8, 0}, {0, 8}, {0, 16}, {0, 32}, {0, 64}, {0, 128}},
           {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}},
           {{16, 0}, {32, 0}, {64, 0}}, {128, 256});
  LinearLayout rows =
      tile({{0, 1}, {0, 2}, {0, 4}, {8, 0}, {16, 0}, {32, 0}, {64, 0}},
           {{0, 8}, {0, 16}, {0, 32}, {0, 64}, {0, 128}},
           {{1, 0}, {2, 0}, {4, 0}}, {128, 256});
  ConversionPlan plan = tk::getConversionPlan(accumulator, rows, 2, 16);
  EXPECT_EQ(plan.from.getOutDimNames(),
            (std::vector<std::string>{"dim1", "dim0"}));
  EXPECT_EQ(plan.writeWidth, 2);
  EXPECT_EQ(plan.readWidth, 8);
  ASSERT_EQ(plan.rounds.size(), 1u);
  EXPECT_EQ(plan.rounds[0].position, 8 + 3);
  expectPlanConverts(plan);
  // f32: 16 bytes are four elements.
  EXPECT_EQ(tk::getConversionPlan(accumulator, rows, 4, 16).readWidth, 4);
  // A target that takes workgroup memory an element at a time: no vectors,
  // and coordinate bit 0 is a round again (a quarter of the tile).
  ConversionPlan scalar = tk::getConversionPlan(accumulator, rows, 2, 0);
  EXPECT_EQ(scalar.writeWidth, 1);
  EXPECT_EQ(scalar.readWidth, 1);
  EXPECT_EQ(scalar.rounds.size(), 2u);
  expectPlanConverts(scalar);
}

// Registers that step along dim0 (a column-major tile): the scratch puts
// dim0 fastest.
TEST(ConversionPlanTest, ColumnsFastestWhereTheyAreConsecutive) {
  LinearLayout columns = tile({{1, 0}, {2, 0}, {0, 4}},
                              {{4, 0}, {0, 1}, {0, 2}}, {{8, 0}}, {16, 8});
  LinearLayout spread = tile({{1, 0}, {0, 1}, {0, 2}}, {{2, 0}, {4, 0}, {8, 0}},
                             {{0, 4}}, {16, 8});
  ConversionPlan plan = tk::getConversionPlan(columns, spread, 4, 16);
  EXPECT_EQ(plan.from.getOutDimNames(),
            (std::vector<std::string>{"dim0", "dim1"}));
  EXPECT_EQ(plan.writeWidth, 4);
  EXPECT_EQ(plan.readWidth, 2);
  expectPlanConverts(plan);
}

// Random layouts of a 16x16 tile on 2 warps of 8 lanes (permutations of
// its eight coordinate bits, some register bits broadcast): every plan
// converts, for every element size and vector limit.
TEST(ConversionPlanTest, RandomLayoutsConvert) {
  std::mt19937 random(7);
  auto randomLayout = [&] {
    std::vector<std::vector<int32_t>> bits;
    for (int32_t b = 0; b < 4; ++b) {
      bits.push_back({1 << b, 0});
      bits.push_back({0, 1 << b});
    }
    std::shuffle(bits.begin(), bits.end(), random);
    std::vector<std::vector<int32_t>> registers(bits.begin(), bits.begin() + 4);
    // A broadcast register bit now and then: a copy the writers skip.
    if (random() % 3 == 0)
      registers.push_back({0, 0});
    return tile(registers, {bits[4], bits[5], bits[6]}, {bits[7]}, {16, 16});
  };
  for (int32_t trial = 0; trial < 200; ++trial) {
    LinearLayout from = randomLayout(), to = randomLayout();
    for (int64_t bytes : {1, 2, 4, 8}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", " +
                   std::to_string(bytes) + " bytes");
      for (int64_t vectorBytes : {0, 8, 16}) {
        ConversionPlan plan =
            tk::getConversionPlan(from, to, bytes, vectorBytes);
        EXPECT_LE(plan.writeWidth * bytes, std::max(vectorBytes, bytes));
        EXPECT_LE(plan.readWidth * bytes, std::max(vectorBytes, bytes));
        expectPlanConverts(plan);
      }
    }
  }
}

} // namespace
