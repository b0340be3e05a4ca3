//===- OperandLayoutTest.cpp - mma.sync's operand layout
//-------------------===//
//
// The offsets of the layout MmaSyncUnit::operandLayout states, as
// tk::SharedLayout emits them, evaluated with MLIR's own folders
// (tk::foldToIntegers) for every element of an operand: each layout
// must be a bijection onto the buffer, keep aligned 16-byte runs whole
// (cp.async copies them as one), and put the 8 rows one ldmatrix reads on 8
// different 16-byte bank groups of a 128-byte line.
//
//===----------------------------------------------------------------------===//

#include "compiler/MmaSync.h"
#include "tk/core/Conversion/Folding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

using namespace mlir;

namespace {

struct LayoutCase {
  int64_t m, n, k, numThreads;
  /// Whether rows are permuted (16-byte chunks per row a power of two).
  bool permutedA, permutedB;
};

std::string name(const LayoutCase &c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
         std::to_string(c.k) + " on " + std::to_string(c.numThreads) +
         " threads";
}

class OperandLayoutTest : public ::testing::TestWithParam<LayoutCase> {
protected:
  OperandLayoutTest() { context.loadDialect<arith::ArithDialect>(); }

  tk::MatrixUnit::HeldProduct product() const {
    const LayoutCase &c = GetParam();
    tk::MatrixUnit::HeldProduct p;
    auto *ctx = const_cast<MLIRContext *>(&context);
    p.a = p.b = Float16Type::get(ctx);
    p.accumulator = Float32Type::get(ctx);
    p.m = c.m;
    p.n = c.n;
    p.k = c.k;
    p.numThreads = c.numThreads;
    return p;
  }

  /// The offset of every (row, col) of operand `operand`, row-major order:
  /// emitted with constant coordinates, then folded op by op.
  std::vector<int64_t> offsets(unsigned operand, int64_t rows, int64_t cols) {
    OpBuilder b(&context);
    Location loc = b.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToStart(module->getBody());
    tk::cuda::MmaSyncUnit unit;
    std::optional<tk::SharedLayout> layout =
        unit.operandLayout(product(), operand);
    if (!layout) {
      ADD_FAILURE() << "no layout for operand " << operand;
      return {};
    }
    std::vector<Value> results;
    std::vector<int64_t> constants;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        results.push_back(layout->offset(
            b, loc, arith::ConstantIndexOp::create(b, loc, r),
            arith::ConstantIndexOp::create(b, loc, c), {rows, cols}));
        constants.push_back(layout->offset(r, c, {rows, cols}));
      }
    std::string error;
    FailureOr<SmallVector<int64_t>> folded =
        tk::foldToIntegers(*module->getBody(), results, error);
    if (failed(folded)) {
      ADD_FAILURE() << error;
      return {};
    }
    // The IR and the constant form of the layout agree.
    std::vector<int64_t> emitted(folded->begin(), folded->end());
    EXPECT_EQ(emitted, constants);
    return emitted;
  }

  void checkOperand(unsigned operand, int64_t rows, int64_t cols,
                    bool permuted) {
    SCOPED_TRACE(std::string(operand == 0 ? "A" : "B") + " of " +
                 name(GetParam()));
    std::vector<int64_t> at = offsets(operand, rows, cols);
    ASSERT_EQ(at.size(), size_t(rows * cols));
    // A bijection onto [0, rows * cols).
    std::set<int64_t> seen(at.begin(), at.end());
    EXPECT_EQ(seen.size(), at.size());
    EXPECT_EQ(*seen.begin(), 0);
    EXPECT_EQ(*seen.rbegin(), rows * cols - 1);
    // Aligned runs of 8 f16 (16 bytes) stay consecutive; permuted or not,
    // each row keeps its own elements.
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        int64_t offset = at[r * cols + c];
        EXPECT_EQ(offset, at[r * cols + c - c % 8] + c % 8)
            << "(" << r << ", " << c << ")";
        EXPECT_EQ(offset / cols, r) << "(" << r << ", " << c << ")";
      }
    if (!permuted) {
      for (int64_t i = 0; i < rows * cols; ++i)
        EXPECT_EQ(at[i], i);
      return;
    }
    // The 8 rows of each ldmatrix (rows 8i..8i+7, one 16-byte chunk) fall
    // on 8 distinct 16-byte bank groups of a 128-byte line.
    for (int64_t r0 = 0; r0 + 8 <= rows; r0 += 8)
      for (int64_t c = 0; c < cols; c += 8) {
        std::set<int64_t> groups;
        for (int64_t r = r0; r < r0 + 8; ++r)
          groups.insert(at[r * cols + c] * 2 / 16 % 8);
        EXPECT_EQ(groups.size(), 8u) << "rows " << r0 << ".., column " << c;
      }
  }

  MLIRContext context;
};

TEST_P(OperandLayoutTest, BijectiveRunsWholeConflictFree) {
  const LayoutCase &c = GetParam();
  tk::cuda::MmaSyncUnit unit;
  ASSERT_TRUE(unit.laysOutOperands(product())) << name(c);
  EXPECT_EQ(unit.operandLayout(product(), 0)->alignment, 128);
  EXPECT_EQ(unit.operandLayout(product(), 1)->alignment, 128);
  checkOperand(0, c.m, c.k, c.permutedA);
  checkOperand(1, c.k, c.n, c.permutedB);
}

INSTANTIATE_TEST_SUITE_P(
    MmaSync, OperandLayoutTest,
    ::testing::Values(
        // The decode shape's tiles: rows of 128 and 256 bytes.
        LayoutCase{16, 128, 64, 128, true, true},
        LayoutCase{16, 32, 128, 128, true, true},
        // The seed matmul on sm_80: A rows of 64 bytes (two to a line).
        LayoutCase{64, 64, 32, 128, true, true},
        // 32-byte rows (four to a line); 16-byte B rows stay plain.
        LayoutCase{16, 8, 16, 32, true, false},
        // 24 columns: three chunks a row, not permuted.
        LayoutCase{16, 24, 16, 32, true, false}),
    [](const ::testing::TestParamInfo<LayoutCase> &info) {
      const LayoutCase &c = info.param;
      return "m" + std::to_string(c.m) + "n" + std::to_string(c.n) + "k" +
             std::to_string(c.k) + "t" + std::to_string(c.numThreads);
    });

/// An f16 product into f32 of m x n x k on `numThreads` threads.
tk::MatrixUnit::HeldProduct halfProduct(MLIRContext &context, int64_t m,
                                        int64_t n, int64_t k,
                                        int64_t numThreads) {
  tk::MatrixUnit::HeldProduct p;
  p.a = p.b = Float16Type::get(&context);
  p.accumulator = Float32Type::get(&context);
  p.m = m;
  p.n = n;
  p.k = k;
  p.numThreads = numThreads;
  return p;
}

TEST(OperandLayout, KMajorAndTf32StayRowMajor) {
  MLIRContext context;
  tk::MatrixUnit::HeldProduct p = halfProduct(context, 16, 64, 64, 128);
  tk::cuda::MmaSyncUnit unit;
  EXPECT_TRUE(unit.laysOutOperands(p));
  p.kMajorB = true;
  EXPECT_FALSE(unit.laysOutOperands(p));
  p.kMajorB = false;
  p.a = p.b = Float32Type::get(&context);
  p.tf32 = true;
  EXPECT_FALSE(unit.laysOutOperands(p));
}

TEST(OperandLayout, StatesTritonsSwizzle) {
  // The seed matmul on sm_80 (64x64x32 on 128 threads): A's rows of 64
  // bytes, two to a 128-byte line of banks, so a phase every 2 rows over 4
  // chunks; B's rows of 128 bytes, a phase a row over 8 chunks. As Triton's
  // #ttg.swizzled_shared<{vec = 8, perPhase, maxPhase, order = [1, 0]}>.
  MLIRContext context;
  tk::MatrixUnit::HeldProduct p = halfProduct(context, 64, 64, 32, 128);
  tk::cuda::MmaSyncUnit unit;
  std::optional<tk::SharedLayout> a = unit.operandLayout(p, 0),
                                  b = unit.operandLayout(p, 1);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->contiguous, 1);
  EXPECT_EQ(a->tile, (std::array<int64_t, 2>{64, 32}));
  EXPECT_EQ(a->vec, 8);
  EXPECT_EQ(a->perPhase, 2);
  EXPECT_EQ(a->maxPhase, 4);
  EXPECT_EQ(b->tile, (std::array<int64_t, 2>{32, 64}));
  EXPECT_EQ(b->perPhase, 1);
  EXPECT_EQ(b->maxPhase, 8);
  EXPECT_FALSE(a->misfit({64, 32}));
  EXPECT_TRUE(a->misfit({48, 32}));
  // Row 3, column 9: chunk 1 of row 3 (phase 1) stored at chunk 0.
  EXPECT_EQ(a->offset(3, 9, {64, 32}), 3 * 32 + 0 * 8 + 1);
}

} // namespace
