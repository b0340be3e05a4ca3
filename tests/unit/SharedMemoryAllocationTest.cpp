//===- SharedMemoryAllocationTest.cpp - packing buffers by liveness -------===//
//
// packSharedBuffers against brute force: on random lives and sizes, no two
// buffers alive at one point overlap, every offset is aligned, the total
// covers every buffer and is at least the peak of live bytes; buffers that
// are never alive together all start at 0; the first fit is exact on a
// known case.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Analysis/SharedMemoryAllocation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace {

using tk::SharedBuffer;

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
