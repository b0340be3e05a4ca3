//===- LayoutPresetsTest.cpp - the layout presets against their sources ---===//
//
// Each preset of tk/core/Layout/LayoutPresets.h, element by element, against
// the formula it follows, written out here independently: Triton's blocked
// indexing and swizzled addressing, the vendors' fragment formulae (PTX ISA,
// AMD's and Intel's manuals), and the defining property of slices and
// broadcasts (each thread keeps what it held). LinearLayoutFragmentsTest
// compares the fragments with the backends' TargetInfo presets too.
//
//===----------------------------------------------------------------------===//

#include "LinearLayoutTestSupport.h"

#include "tk/core/Layout/LayoutPresets.h"
#include "tk/core/Layout/LinearLayout.h"

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <set>
#include <tuple>

namespace {

using namespace tk::test;
using tk::ConversionKind;
using tk::LinearLayout;

/// The coordinates of `linear` in `grid`, walked with order[0] fastest.
std::vector<int64_t> gridCoords(int64_t linear, llvm::ArrayRef<int32_t> grid,
                                llvm::ArrayRef<int32_t> order) {
  std::vector<int64_t> at(grid.size());
  for (int32_t dim : order) {
    at[dim] = linear % grid[dim];
    linear /= grid[dim];
  }
  return at;
}

int64_t product(llvm::ArrayRef<int32_t> sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

DimSizes standardDims(llvm::ArrayRef<int32_t> shape) {
  DimSizes dims;
  for (size_t dim = 0; dim < shape.size(); ++dim)
    dims.emplace_back("dim" + std::to_string(dim), shape[dim]);
  return dims;
}

struct BlockedCase {
  std::vector<int32_t> shape, sizePerThread, threadsPerWarp, warpsPerCTA, order;
  /// Consecutive registers in memory (order[0] fastest).
  int32_t vectorWidth;
};

const std::vector<BlockedCase> kBlockedCases = {
    // The CTA covers the tile exactly.
    {{16, 16}, {1, 4}, {8, 4}, {2, 1}, {1, 0}, 4},
    // Repeats along dim0.
    {{64, 32}, {2, 2}, {4, 8}, {2, 2}, {1, 0}, 2},
    // A tile smaller than the CTA: wraps, lanes and warps hold copies.
    {{4, 8}, {1, 4}, {8, 4}, {4, 1}, {1, 0}, 4},
    {{32}, {4}, {32}, {4}, {0}, 4},
    // Smaller than one thread's block: registers hold copies too (registers
    // 0 and 1 still hold a row's two elements).
    {{2, 2}, {4, 4}, {2, 2}, {2, 2}, {1, 0}, 2},
    // Three dimensions, repeats along two.
    {{8, 16, 32}, {1, 2, 4}, {2, 4, 4}, {2, 1, 2}, {2, 1, 0}, 4},
    // dim0 fastest, repeats along both.
    {{128, 64}, {4, 1}, {4, 8}, {1, 4}, {0, 1}, 4},
    // One thread holds the whole tile, contiguous across rows.
    {{4, 4}, {4, 4}, {1, 1}, {1, 1}, {1, 0}, 16},
};

TEST(LayoutPresetsTest, BlockedAgainstTritonsIndexing) {
  for (const BlockedCase &c : kBlockedCases) {
    LinearLayout layout = take(tk::blockedLayout(
        c.shape, c.sizePerThread, c.threadsPerWarp, c.warpsPerCTA, c.order));
    SCOPED_TRACE(layout.toString());
    size_t rank = c.shape.size();
    std::vector<int32_t> cover(rank), repeats(rank);
    for (size_t d = 0; d < rank; ++d) {
      cover[d] = c.sizePerThread[d] * c.threadsPerWarp[d] * c.warpsPerCTA[d];
      repeats[d] = std::max(1, c.shape[d] / cover[d]);
    }
    int64_t perBlock = product(c.sizePerThread);
    EXPECT_EQ(layout.getInDims(),
              (DimSizes{{"register", int32_t(perBlock * product(repeats))},
                        {"lane", int32_t(product(c.threadsPerWarp))},
                        {"warp", int32_t(product(c.warpsPerCTA))}}));
    EXPECT_EQ(layout.getOutDims(), standardDims(c.shape));
    expectMap(layout, [&](const Coord &in) {
      int64_t reg = lookup(in, "register");
      std::vector<int64_t> elem =
          gridCoords(reg % perBlock, c.sizePerThread, c.order);
      std::vector<int64_t> rep = gridCoords(reg / perBlock, repeats, c.order);
      std::vector<int64_t> lane =
          gridCoords(lookup(in, "lane"), c.threadsPerWarp, c.order);
      std::vector<int64_t> warp =
          gridCoords(lookup(in, "warp"), c.warpsPerCTA, c.order);
      Coord out;
      for (size_t d = 0; d < rank; ++d)
        out["dim" + std::to_string(d)] =
            int32_t((rep[d] * cover[d] +
                     warp[d] * c.sizePerThread[d] * c.threadsPerWarp[d] +
                     lane[d] * c.sizePerThread[d] + elem[d]) %
                    c.shape[d]);
      return out;
    });
    // The vector width, in memory order (order[0] first).
    std::vector<std::string> memoryOrder;
    for (int32_t dim : c.order)
      memoryOrder.push_back("dim" + std::to_string(dim));
    EXPECT_EQ(layout.transposeOuts(memoryOrder).getNumConsecutiveInOut(),
              c.vectorWidth);
  }
  // Spot checks written from Triton's documentation of #blocked<{
  // sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [2, 1],
  // order = [1, 0]}>: lane 1 holds row 0's columns 4..7, lane 4 row 1,
  // warp 1 rows 8..15.
  LinearLayout blocked =
      take(tk::blockedLayout({16, 16}, {1, 4}, {8, 4}, {2, 1}, {1, 0}));
  EXPECT_EQ(applied(blocked, {{"register", 3}, {"lane", 1}}),
            (Coord{{"dim0", 0}, {"dim1", 7}}));
  EXPECT_EQ(applied(blocked, {{"lane", 4}}), (Coord{{"dim0", 1}, {"dim1", 0}}));
  EXPECT_EQ(applied(blocked, {{"lane", 31}, {"warp", 1}}),
            (Coord{{"dim0", 15}, {"dim1", 12}}));
  EXPECT_TRUE(blocked.isInvertible());

  EXPECT_NE(errorOf(tk::blockedLayout({16, 12}, {1, 4}, {8, 4}, {2, 1}, {1, 0}))
                .find("shape[1] is 12"),
            std::string::npos);
  EXPECT_NE(errorOf(tk::blockedLayout({16, 16}, {1}, {8, 4}, {2, 1}, {1, 0}))
                .find("sizePerThread has 1"),
            std::string::npos);
  EXPECT_NE(errorOf(tk::blockedLayout({16, 16}, {1, 4}, {8, 4}, {2, 1}, {0, 0}))
                .find("permutation"),
            std::string::npos);
}

struct FragmentCase {
  std::string name;
  LinearLayout layout;
  int32_t registers, lanes, warps, rows, cols;
  /// (row, col) of register i of lane l of warp w, from the vendor's manual.
  std::function<std::pair<int32_t, int32_t>(int32_t, int32_t, int32_t)> at;
};

std::vector<FragmentCase> fragmentCases() {
  // PTX ISA: groupID = lane / 4, threadID_in_group = lane % 4.
  auto g = [](int32_t l) { return l / 4; };
  auto t = [](int32_t l) { return l % 4; };
  std::vector<FragmentCase> cases = {
      {"mma.m16n8 accumulator", tk::mmaSyncM16N8AccumulatorLayout(), 4, 32, 1,
       16, 8,
       [=](int32_t i, int32_t l, int32_t) {
         return std::pair{g(l) + 8 * (i >= 2), 2 * t(l) + (i & 1)};
       }},
      {"mma.m16n8k16 a", tk::mmaSyncM16N8K16ALayout(), 8, 32, 1, 16, 16,
       [=](int32_t i, int32_t l, int32_t) {
         bool lower = i == 2 || i == 3 || i == 6 || i == 7;
         return std::pair{g(l) + 8 * lower, 2 * t(l) + (i & 1) + 8 * (i >= 4)};
       }},
      {"mma.m16n8k16 b", tk::mmaSyncM16N8K16BLayout(), 4, 32, 1, 16, 8,
       [=](int32_t i, int32_t l, int32_t) {
         return std::pair{2 * t(l) + (i & 1) + 8 * (i >= 2), g(l)};
       }},
      {"mfma 32x32x8", tk::mfma32x32AccumulatorLayout(), 16, 64, 1, 32, 32,
       [](int32_t i, int32_t l, int32_t) {
         return std::pair{8 * (i / 4) + 4 * (l / 32) + i % 4, l % 32};
       }},
      {"mfma 16x16x16", tk::mfma16x16AccumulatorLayout(), 4, 64, 1, 16, 16,
       [](int32_t i, int32_t l, int32_t) {
         return std::pair{4 * (l / 16) + i, l % 16};
       }},
      {"wmma 16x16x16", tk::wmma16x16AccumulatorLayout(), 8, 32, 1, 16, 16,
       [](int32_t i, int32_t l, int32_t) {
         return std::pair{2 * i + l / 16, l % 16};
       }},
      {"dpas 8x16", tk::dpas8x16AccumulatorLayout(), 8, 16, 1, 8, 16,
       [](int32_t i, int32_t l, int32_t) {
         return std::pair{i, l};
       }},
      {"dpas 8x8", tk::dpas8x8AccumulatorLayout(), 8, 8, 1, 8, 8,
       [](int32_t i, int32_t l, int32_t) {
         return std::pair{i, l};
       }},
  };
  for (int32_t n = 8; n <= 256; n *= 2)
    cases.push_back({"wgmma.m64n" + std::to_string(n) + "k16 accumulator",
                     take(tk::wgmmaM64AccumulatorLayout(n)), n / 2, 32, 4, 64,
                     n, [=](int32_t i, int32_t l, int32_t w) {
                       return std::pair{16 * w + g(l) + 8 * ((i / 2) % 2),
                                        8 * (i / 4) + 2 * t(l) + (i & 1)};
                     }});
  return cases;
}

TEST(LayoutPresetsTest, FragmentsAgainstTheManuals) {
  for (const FragmentCase &c : fragmentCases()) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.layout.getInDims(), (DimSizes{{"register", c.registers},
                                              {"lane", c.lanes},
                                              {"warp", c.warps}}));
    EXPECT_EQ(c.layout.getOutDims(), standardDims({c.rows, c.cols}));
    expectMap(c.layout, [&](const Coord &in) {
      auto [row, col] =
          c.at(lookup(in, "register"), lookup(in, "lane"), lookup(in, "warp"));
      return Coord{{"dim0", row}, {"dim1", col}};
    });
    // Every element is held once: a copy of an accumulator would be a
    // second, diverging sum.
    EXPECT_TRUE(c.layout.isInvertible());
  }
  EXPECT_NE(errorOf(tk::wgmmaM64AccumulatorLayout(24)).find("power of two"),
            std::string::npos);
  EXPECT_NE(errorOf(tk::wgmmaM64AccumulatorLayout(512)).find("8 to 256"),
            std::string::npos);
}

struct SwizzleCase {
  std::vector<int32_t> shape;
  int32_t vec, perPhase, maxPhase;
  std::vector<int32_t> order;
};

TEST(LayoutPresetsTest, SwizzledSharedAgainstTritonsSwizzle) {
  const std::vector<SwizzleCase> cases = {
      // 128-byte rows of f16: 8 vectors of 8, 8 phases.
      {{8, 64}, 8, 1, 8, {1, 0}},
      {{16, 32}, 4, 2, 4, {1, 0}},
      // dim0 contiguous.
      {{32, 16}, 2, 1, 8, {0, 1}},
      // No swizzle: row-major.
      {{8, 8}, 1, 1, 1, {1, 0}},
      // Matrices stacked along the slowest dimension.
      {{4, 8, 16}, 4, 1, 4, {2, 1, 0}},
      // More phases than vectors in a row: the swizzle wraps modulo the row.
      {{16, 16}, 8, 1, 4, {1, 0}},
  };
  for (const SwizzleCase &c : cases) {
    LinearLayout layout = take(tk::swizzledSharedLayout(
        c.shape, c.vec, c.perPhase, c.maxPhase, c.order));
    SCOPED_TRACE(layout.toString());
    int32_t cols = c.shape[c.order[0]], rows = c.shape[c.order[1]];
    EXPECT_EQ(layout.getInDims(),
              (DimSizes{{"offset", int32_t(product(c.shape))}}));
    EXPECT_EQ(layout.getOutDims(), standardDims(c.shape));
    expectMap(layout, [&](const Coord &in) {
      int64_t offset = lookup(in, "offset");
      int64_t stored = offset % cols, row = offset / cols % rows;
      int64_t phase = row / c.perPhase % c.maxPhase;
      // Triton's swizzled addressing: vector (c / vec) ^ phase of the row.
      int64_t col = c.vec * c.maxPhase <= cols
                        ? ((stored / c.vec) ^ phase) * c.vec + stored % c.vec
                        : stored ^ (c.vec * phase % cols);
      Coord out;
      out["dim" + std::to_string(c.order[0])] = int32_t(col);
      out["dim" + std::to_string(c.order[1])] = int32_t(row);
      int64_t rest = offset / (int64_t(cols) * rows);
      for (size_t i = 2; i < c.order.size(); ++i) {
        out["dim" + std::to_string(c.order[i])] =
            int32_t(rest % c.shape[c.order[i]]);
        rest /= c.shape[c.order[i]];
      }
      return out;
    });
    EXPECT_TRUE(layout.isInvertible());
  }
  // What the 128-byte swizzle is for: the first vector of each of 8 rows
  // lies in a different 16-byte chunk of the 128 bytes the banks span.
  LinearLayout where =
      take(take(tk::swizzledSharedLayout({8, 64}, 8, 1, 8, {1, 0})).invert());
  std::set<int32_t> chunks;
  for (int32_t row = 0; row < 8; ++row)
    chunks.insert(where.apply({{"dim0", row}, {"dim1", 0}})[0].second % 64 / 8);
  EXPECT_EQ(chunks.size(), 8u);

  EXPECT_NE(errorOf(tk::swizzledSharedLayout({8, 64}, 3, 1, 8, {1, 0}))
                .find("vec is 3"),
            std::string::npos);
  EXPECT_NE(errorOf(tk::swizzledSharedLayout({64}, 8, 1, 8, {0}))
                .find("two dimensions"),
            std::string::npos);
}

TEST(LayoutPresetsTest, NvmmaSharedLayoutIsTheHardwareSwizzle) {
  struct NvmmaCase {
    std::vector<int32_t> shape;
    int32_t elementBytes, swizzleBytes;
    std::vector<int32_t> order;
  };
  const NvmmaCase cases[] = {
      // wgmma's A, K-major: k = 64 f16 in one 128-byte atom.
      {{64, 64}, 2, 128, {1, 0}},
      // A with k = 32: 64-byte atoms.
      {{128, 32}, 2, 64, {1, 0}},
      // B MN-major, n = 256 over four columns of atoms.
      {{32, 256}, 2, 128, {1, 0}},
      // B K-major (dim0 contiguous), 32-byte atoms of tf32.
      {{8, 16}, 4, 32, {0, 1}},
  };
  for (const NvmmaCase &c : cases) {
    LinearLayout layout = take(tk::nvmmaSharedLayout(c.shape, c.elementBytes,
                                                     c.swizzleBytes, c.order));
    SCOPED_TRACE(layout.toString());
    int64_t cols = c.shape[c.order[0]], rows = c.shape[c.order[1]];
    int64_t atomCols = c.swizzleBytes / c.elementBytes;
    LinearLayout where = take(layout.invert());
    // The hardware's address of (row, col): the unswizzled byte within its
    // column of atoms, with bits 4.. XORed by bits 7.. (CUTLASS's
    // Swizzle<log2(swizzle / 16), 4, 3>).
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t col = 0; col < cols; ++col) {
        int64_t address = (col / atomCols) * rows * c.swizzleBytes +
                          row * c.swizzleBytes +
                          (col % atomCols) * c.elementBytes;
        address ^= ((address >> 7) & (c.swizzleBytes / 16 - 1)) << 4;
        int32_t at[2];
        at[c.order[0]] = int32_t(col);
        at[c.order[1]] = int32_t(row);
        EXPECT_EQ(where.apply({{"dim0", at[0]}, {"dim1", at[1]}})[0].second *
                      c.elementBytes,
                  address)
            << "row " << row << " col " << col;
      }
  }
  EXPECT_NE(errorOf(tk::nvmmaSharedLayout({64, 16}, 2, 64, {1, 0}))
                .find("wider than the tile"),
            std::string::npos);
  EXPECT_NE(errorOf(tk::nvmmaSharedLayout({64, 64}, 2, 48, {1, 0}))
                .find("expected 32, 64 or 128"),
            std::string::npos);
}

// Each element of a column-blocked tile at the offset the formula gives,
// enumerated, for the shapes of a cooperative matmul's operands.
TEST(LayoutPresetsTest, ColumnBlockedSharedMatchesFormula) {
  struct BlockedCase {
    int32_t rows, cols, blockCols;
  };
  for (BlockedCase c : {BlockedCase{128, 32, 16}, BlockedCase{32, 256, 16},
                        BlockedCase{16, 16, 16}, BlockedCase{64, 64, 8}}) {
    LinearLayout layout =
        take(tk::columnBlockedSharedLayout({c.rows, c.cols}, c.blockCols));
    SCOPED_TRACE(layout.toString());
    LinearLayout where = take(layout.invert());
    for (int32_t row = 0; row < c.rows; ++row)
      for (int32_t col = 0; col < c.cols; ++col)
        EXPECT_EQ(where.apply({{"dim0", row}, {"dim1", col}})[0].second,
                  (col / c.blockCols) * c.rows * c.blockCols +
                      row * c.blockCols + col % c.blockCols)
            << "row " << row << " col " << col;
  }
  EXPECT_NE(errorOf(tk::columnBlockedSharedLayout({16, 16}, 32))
                .find("blocks of 32 columns"),
            std::string::npos);
  EXPECT_NE(errorOf(tk::columnBlockedSharedLayout({16, 16}, 12))
                .find("blocks of 12 columns"),
            std::string::npos);
}

TEST(LayoutPresetsTest, SliceOfKnownLayout) {
  LinearLayout parent =
      take(tk::blockedLayout({16, 16}, {1, 4}, {8, 4}, {2, 1}, {1, 0}));
  // Along dim1: each thread's registers held one row, so one remains; the
  // four lanes of a row hold copies.
  EXPECT_EQ(take(tk::sliceLayout(parent, 1)),
            LinearLayout({{"register", {}},
                          {"lane", {{0}, {0}, {1}, {2}, {4}}},
                          {"warp", {{8}}}},
                         {{"dim0", 16}}));
  // Along dim0: registers and the lanes along dim1 remain, renamed dim0.
  EXPECT_EQ(take(tk::sliceLayout(parent, 0)),
            LinearLayout({{"register", {{1}, {2}}},
                          {"lane", {{4}, {8}, {0}, {0}, {0}}},
                          {"warp", {{0}}}},
                         {{"dim0", 16}}));
  EXPECT_NE(errorOf(tk::sliceLayout(parent, 2)).find("dimension 2"),
            std::string::npos);
  EXPECT_NE(errorOf(tk::sliceLayout(parent.transposeOuts({"dim1", "dim0"}), 0))
                .find("dim0, dim1"),
            std::string::npos);
}

TEST(LayoutPresetsTest, SliceExpandBroadcastAgainstEnumeration) {
  for (const BlockedCase &c : kBlockedCases) {
    LinearLayout parent = take(tk::blockedLayout(
        c.shape, c.sizePerThread, c.threadsPerWarp, c.warpsPerCTA, c.order));
    Table whole = tabulate(parent);
    for (int32_t dim = 0; dim < int32_t(c.shape.size()); ++dim) {
      SCOPED_TRACE(parent.toString() + "along " + std::to_string(dim));
      LinearLayout slice = take(tk::sliceLayout(parent, dim));
      std::vector<int32_t> sliceShape = c.shape;
      sliceShape.erase(sliceShape.begin() + dim);
      EXPECT_EQ(slice.getOutDims(), standardDims(sliceShape));
      // The parent's coordinate without `dim`, named as in the slice.
      auto drop = [&](const Coord &element) {
        Coord out;
        for (int32_t d = 0, next = 0; d < int32_t(c.shape.size()); ++d)
          if (d != dim)
            out["dim" + std::to_string(next++)] =
                lookup(element, "dim" + std::to_string(d));
        return out;
      };
      // Each thread holds, in the slice, exactly the rows it held.
      Table part = tabulate(slice);
      using Held = std::set<std::tuple<int32_t, int32_t, int64_t>>;
      Held parentHeld, sliceHeld;
      for (int64_t flat = 0; flat < whole.numInputs(); ++flat) {
        Coord in = whole.input(flat);
        parentHeld.insert({in["lane"], in["warp"],
                           fromNamed(drop(whole.images[flat]), part.outs)});
      }
      for (int64_t flat = 0; flat < part.numInputs(); ++flat) {
        Coord in = part.input(flat);
        sliceHeld.insert(
            {in["lane"], in["warp"], fromNamed(part.images[flat], part.outs)});
      }
      EXPECT_EQ(parentHeld, sliceHeld);
      LinearLayout::BasesT sliceBases = slice.getBases();
      ASSERT_EQ(sliceBases[0].first, "register");
      for (const std::vector<int32_t> &basis : sliceBases[0].second)
        EXPECT_TRUE(llvm::any_of(basis, [](int32_t v) { return v != 0; }));

      // expand_dims puts a zero coordinate back.
      LinearLayout expanded = take(tk::expandDimsLayout(slice, dim));
      std::vector<int32_t> expandedShape = c.shape;
      expandedShape[dim] = 1;
      EXPECT_EQ(expanded.getOutDims(), standardDims(expandedShape));
      expectMap(expanded, [&](const Coord &in) {
        Coord out, element = part(in);
        for (int32_t d = 0; d < int32_t(c.shape.size()); ++d)
          out["dim" + std::to_string(d)] =
              d == dim ? 0
                       : lookup(element,
                                "dim" + std::to_string(d < dim ? d : d - 1));
        return out;
      });

      // Broadcasting back: registers above the slice's walk `dim`.
      LinearLayout broadcast =
          take(tk::broadcastLayout(expanded, dim, c.shape[dim]));
      int32_t sliceRegisters = slice.getInDimSize("register");
      EXPECT_EQ(broadcast.getInDimSize("register"),
                sliceRegisters * c.shape[dim]);
      expectMap(broadcast, [&](const Coord &in) {
        Coord low = in;
        low["register"] = lookup(in, "register") % sliceRegisters;
        Coord out = applied(expanded, low);
        out["dim" + std::to_string(dim)] =
            lookup(in, "register") / sliceRegisters;
        return out;
      });
      // ... so each thread of the parent already holds what it needs.
      ConversionKind kind = take(tk::classifyConversion(broadcast, parent));
      EXPECT_TRUE(kind == ConversionKind::None ||
                  kind == ConversionKind::Registers)
          << tk::stringifyConversionKind(kind).str();
    }
  }
  LinearLayout parent = tk::mmaSyncM16N8AccumulatorLayout();
  EXPECT_NE(errorOf(tk::broadcastLayout(parent, 0, 4)).find("expected 1"),
            std::string::npos);
  EXPECT_NE(errorOf(tk::expandDimsLayout(parent, 3)).find("dimension 3"),
            std::string::npos);
}

TEST(LayoutPresetsTest, JoinAndReshapeAgainstEnumeration) {
  for (const BlockedCase &c : kBlockedCases) {
    LinearLayout source = take(tk::blockedLayout(
        c.shape, c.sizePerThread, c.threadsPerWarp, c.warpsPerCTA, c.order));
    SCOPED_TRACE(source.toString());
    Table part = tabulate(source);
    int32_t rank = int32_t(c.shape.size());
    std::string pair = "dim" + std::to_string(rank);

    // join: register 2r + h holds half h of what register r held.
    LinearLayout joined = take(tk::joinLayout(source));
    std::vector<int32_t> joinedShape = c.shape;
    joinedShape.push_back(2);
    EXPECT_EQ(joined.getOutDims(), standardDims(joinedShape));
    expectMap(joined, [&](const Coord &in) {
      Coord held = in;
      held["register"] = lookup(in, "register") / 2;
      Coord out = part(held);
      out[pair] = lookup(in, "register") % 2;
      return out;
    });
    EXPECT_EQ(take(tk::joinSourceLayout(joined)), source);

    // reshape to one dimension: the row-major index of the element held.
    int64_t elements = product(c.shape);
    LinearLayout flat =
        take(tk::reshapeLayout(source, std::vector<int64_t>{elements}));
    EXPECT_EQ(flat.getOutDims(), standardDims({int32_t(elements)}));
    expectMap(flat, [&](const Coord &in) {
      Coord element = part(in);
      int64_t index = 0;
      for (int32_t d = 0; d < rank; ++d)
        index = index * c.shape[d] + lookup(element, "dim" + std::to_string(d));
      return Coord{{"dim0", int32_t(index)}};
    });
    std::vector<int64_t> shape(c.shape.begin(), c.shape.end());
    EXPECT_EQ(take(tk::reshapeLayout(flat, shape)), source);
  }
  LinearLayout blocked =
      take(tk::blockedLayout({16, 16}, {1, 4}, {8, 4}, {2, 1}, {1, 0}));
  EXPECT_NE(errorOf(tk::joinSourceLayout(blocked)).find("not a pair"),
            std::string::npos);
  // Pairs spread over lanes are not a join's.
  LinearLayout acrossLanes =
      take(tk::blockedLayout({16, 2}, {1, 1}, {16, 2}, {1, 1}, {1, 0}));
  EXPECT_NE(errorOf(tk::joinSourceLayout(acrossLanes)).find("register bit"),
            std::string::npos);
  EXPECT_NE(errorOf(tk::reshapeLayout(blocked, std::vector<int64_t>{8, 24}))
                .find("not a power of two"),
            std::string::npos);
}

} // namespace
