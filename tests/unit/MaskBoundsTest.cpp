//===- MaskBoundsTest.cpp - one test for a whole tile of bounds checks ----===//
//
// tk::buildWholeMaskTest (and buildWholeMaskOffTest, whether no element
// is in) on the masks of a matmul's loads: rows
// start + [0, 64) below M and-ed with columns [0, 32) below what is left
// of K, written either way round. With the scalars constants the test
// folds to whether the last row and column are in, which is checked on both
// sides of each edge. Masks that are not bounds checks give no test and
// leave the kernel as it was.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Analysis/MaskBounds.h"

#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

using namespace mlir;

namespace {

class MaskBoundsTest : public ::testing::Test {
protected:
  MaskBoundsTest() {
    DialectRegistry registry;
    tk::registerTkDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }

  /// Builds the test (`off`: tk::buildWholeMaskOffTest's) of the mask of
  /// the only tk.load of a kernel whose
  /// `body` computes %mask (64x32 i1) from %rows (64x1: [0, 64)), %cols
  /// (1x32: [0, 32)) and the constants %start, %m and %k (i32), folds it,
  /// and returns its value: nullopt where there is no test, or where it
  /// did not fold to a constant.
  std::optional<bool> wholeTileIn(const std::string &body, int start, int m,
                                  int k, bool off = false) {
    std::string source =
        "tk.func @k(%a: !tk.ptr<f16>) {\n"
        "  %start = arith.constant " +
        std::to_string(start) +
        " : i32\n"
        "  %m = arith.constant " +
        std::to_string(m) +
        " : i32\n"
        "  %k = arith.constant " +
        std::to_string(k) +
        " : i32\n"
        "  %r64 = tk.make_range {end = 64 : i32, start = 0 : i32} : "
        "tensor<64xi32>\n"
        "  %r32 = tk.make_range {end = 32 : i32, start = 0 : i32} : "
        "tensor<32xi32>\n"
        "  %rows = tk.expand_dims %r64 {axis = 1 : i32} : tensor<64xi32> -> "
        "tensor<64x1xi32>\n"
        "  %cols = tk.expand_dims %r32 {axis = 0 : i32} : tensor<32xi32> -> "
        "tensor<1x32xi32>\n" +
        body +
        "  %p = tk.splat %a : !tk.ptr<f16> -> tensor<64x32x!tk.ptr<f16>>\n"
        "  %x = tk.load %p, %mask : tensor<64x32x!tk.ptr<f16>>\n"
        "  tk.return\n}\n";
    module = parseSourceString<ModuleOp>(source, ParserConfig(&ctx));
    EXPECT_TRUE(module) << source;
    if (!module)
      return std::nullopt;
    tk::LoadOp load;
    module->walk([&](tk::LoadOp op) { load = op; });
    opsBefore = countOps();
    OpBuilder b(load);
    Value test =
        off ? tk::buildWholeMaskOffTest(b, load.getLoc(), load.getMask())
            : tk::buildWholeMaskTest(b, load.getLoc(), load.getMask());
    if (!test)
      return std::nullopt;
    // Keeps the test alive through the folding.
    OperationState state(load.getLoc(), "test.use");
    state.addOperands(test);
    Operation *use = b.create(state);
    GreedyRewriteConfig config;
    (void)applyPatternsGreedily(module->getOperation(), RewritePatternSet(&ctx),
                                config);
    IntegerAttr folded;
    if (!matchPattern(use->getOperand(0), m_Constant(&folded)))
      return std::nullopt;
    return folded.getValue().getBoolValue();
  }

  int64_t countOps() {
    int64_t count = 0;
    module->walk([&](Operation *) { ++count; });
    return count;
  }

  /// rows start + [0, 64) < m, columns [0, 32) < k, broadcast and and-ed.
  static std::string matmulMask(const std::string &rowCompare,
                                const std::string &colCompare) {
    return "  %ss = tk.splat %start : i32 -> tensor<64x1xi32>\n"
           "  %offs = arith.addi %ss, %rows : tensor<64x1xi32>\n"
           "  %ms = tk.splat %m : i32 -> tensor<64x1xi32>\n"
           "  %ks = tk.splat %k : i32 -> tensor<1x32xi32>\n"
           "  %rin = " +
           rowCompare +
           " : tensor<64x1xi32>\n"
           "  %cin = " +
           colCompare +
           " : tensor<1x32xi32>\n"
           "  %rb = tk.broadcast %rin : tensor<64x1xi1> -> tensor<64x32xi1>\n"
           "  %cb = tk.broadcast %cin : tensor<1x32xi1> -> tensor<64x32xi1>\n"
           "  %mask = arith.andi %rb, %cb : tensor<64x32xi1>\n";
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  int64_t opsBefore = 0;
};

const char *kRowsBelowM = "arith.cmpi slt, %offs, %ms";
const char *kColsBelowK = "arith.cmpi slt, %cols, %ks";

TEST_F(MaskBoundsTest, WholeTileInOnlyWhenTheLastRowAndColumnAre) {
  std::string mask = matmulMask(kRowsBelowM, kColsBelowK);
  // Rows 64..127 of M = 128, all 32 columns of K = 32.
  EXPECT_EQ(wholeTileIn(mask, 64, 128, 32), std::optional<bool>(true));
  // Row 127 is out of M = 127; column 31 is out of K = 31.
  EXPECT_EQ(wholeTileIn(mask, 64, 127, 32), std::optional<bool>(false));
  EXPECT_EQ(wholeTileIn(mask, 64, 128, 31), std::optional<bool>(false));
  // Past every row.
  EXPECT_EQ(wholeTileIn(mask, 128, 100, 64), std::optional<bool>(false));
}

TEST_F(MaskBoundsTest, BoundOnEitherSideAndInclusiveCompares) {
  std::string swapped =
      matmulMask("arith.cmpi sgt, %ms, %offs", "arith.cmpi sle, %cols, %ks");
  EXPECT_EQ(wholeTileIn(swapped, 0, 64, 31), std::optional<bool>(true));
  EXPECT_EQ(wholeTileIn(swapped, 0, 63, 31), std::optional<bool>(false));
  EXPECT_EQ(wholeTileIn(swapped, 0, 64, 30), std::optional<bool>(false));
}

TEST_F(MaskBoundsTest, OffsetsThatDoNotFitI32AreNotIn) {
  // start + 63 wraps in i32: the test says not in, and the element-wise
  // tests decide.
  std::string mask = matmulMask(kRowsBelowM, kColsBelowK);
  EXPECT_EQ(wholeTileIn(mask, 2147483600, 2147483647, 32),
            std::optional<bool>(false));
}

TEST_F(MaskBoundsTest, WholeTileOffWhenTheFirstRowOrColumnIsOut) {
  std::string mask = matmulMask(kRowsBelowM, kColsBelowK);
  // Rows from 128 of M = 128, or columns from 0 of K = 0: nothing in.
  EXPECT_EQ(wholeTileIn(mask, 128, 128, 32, true), std::optional<bool>(true));
  EXPECT_EQ(wholeTileIn(mask, 0, 128, 0, true), std::optional<bool>(true));
  EXPECT_EQ(wholeTileIn(mask, 0, 128, -5, true), std::optional<bool>(true));
  // Row 127 of M = 128 is in, as is column 0 of K = 1: some element is.
  EXPECT_EQ(wholeTileIn(mask, 64, 128, 32, true), std::optional<bool>(false));
  EXPECT_EQ(wholeTileIn(mask, 127, 128, 32, true), std::optional<bool>(false));
  EXPECT_EQ(wholeTileIn(mask, 0, 128, 1, true), std::optional<bool>(false));
  // Inclusive and swapped compares: row 64 <= M = 64 is in; 65 is out.
  std::string swapped =
      matmulMask("arith.cmpi sge, %ms, %offs", "arith.cmpi sle, %cols, %ks");
  EXPECT_EQ(wholeTileIn(swapped, 64, 64, 31, true), std::optional<bool>(false));
  EXPECT_EQ(wholeTileIn(swapped, 65, 64, 31, true), std::optional<bool>(true));
  // start + 63 wraps in i32 (to negative offsets, below any bound): not
  // wholly out, though the first offset is.
  EXPECT_EQ(wholeTileIn(mask, 2147483600, 100, 32, true),
            std::optional<bool>(false));
}

TEST_F(MaskBoundsTest, OtherMasksGiveNoTestAndLeaveTheKernel) {
  // Columns below K (a bounds check, whose test is built first) and-ed
  // with rows below columns (no uniform bound): no test, and the ops built
  // for the first are gone.
  std::string triangle =
      "  %ks = tk.splat %k : i32 -> tensor<1x32xi32>\n"
      "  %cin = arith.cmpi slt, %cols, %ks : tensor<1x32xi32>\n"
      "  %cb = tk.broadcast %cin : tensor<1x32xi1> -> tensor<64x32xi1>\n"
      "  %rr = tk.broadcast %rows : tensor<64x1xi32> -> tensor<64x32xi32>\n"
      "  %cc = tk.broadcast %cols : tensor<1x32xi32> -> tensor<64x32xi32>\n"
      "  %tri = arith.cmpi slt, %rr, %cc : tensor<64x32xi32>\n"
      "  %mask = arith.andi %cb, %tri : tensor<64x32xi1>\n";
  EXPECT_EQ(wholeTileIn(triangle, 0, 64, 32), std::nullopt);
  EXPECT_EQ(countOps(), opsBefore);
  // The columns' term alone decides whether the tile is wholly out.
  EXPECT_EQ(wholeTileIn(triangle, 0, 64, 0, true), std::optional<bool>(true));
  EXPECT_EQ(wholeTileIn(triangle, 0, 64, 32, true), std::optional<bool>(false));
}

} // namespace
