//===- AxisFactsTest.cpp - contiguity and divisibility of pointer tiles ---===//
//
// The facts that let the pipelined copies of a held dot skip their checks
// per run: a row-major tile whose unit inner stride and 16-element row stride
// are known is proven contiguous and 16-byte aligned in runs of 8 f16;
// unknown strides, an odd offset or a strided column axis prove nothing. A
// loop's pointer walk keeps what its start and its step both prove. A tile
// loaded transposed has those facts along its first dimension. A loop
// counter is divisible by what divides its lower bound and its step.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Analysis/AxisFacts.h"

#include "tk/ir/Dialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

using namespace mlir;

namespace {

class AxisFactsTest : public ::testing::Test {
protected:
  AxisFactsTest() {
    DialectRegistry registry;
    tk::registerTkDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }

  /// The facts of the pointer of the only tk.load in `body`, a kernel of
  /// %a: !tk.ptr<f16> (divisibility 16), %stride (divisibility 16),
  /// %any and %one (the constant 1).
  tk::AxisFacts loadFacts(const std::string &body) {
    std::string source =
        "tk.func @k(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32}, "
        "%stride: i32 {tk.divisibility = 16 : i32}, %any: i32) {\n"
        "  %one = arith.constant 1 : i32\n"
        "  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : "
        "tensor<64xi32>\n"
        "  %rows = tk.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> "
        "tensor<64x1xi32>\n"
        "  %cols = tk.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> "
        "tensor<1x64xi32>\n" +
        body + "  tk.return\n}\n";
    module = parseSourceString<ModuleOp>(source, ParserConfig(&ctx));
    EXPECT_TRUE(module) << source;
    std::optional<tk::AxisFacts> facts;
    if (module)
      module->walk([&](tk::LoadOp load) {
        facts = tk::getAxisFacts(load.getPtr(), [](BlockArgument) {
          return std::optional<tk::AxisFacts>();
        });
      });
    EXPECT_TRUE(facts.has_value());
    return facts.value_or(tk::AxisFacts{});
  }

  /// The facts of the mask of the only tk.load in `body` (a kernel as for
  /// loadFacts).
  tk::AxisFacts maskFacts(const std::string &body) {
    loadFacts(body);
    std::optional<tk::AxisFacts> facts;
    if (module)
      module->walk([&](tk::LoadOp load) {
        if (load.getMask())
          facts = tk::getAxisFacts(load.getMask(), [](BlockArgument) {
            return std::optional<tk::AxisFacts>();
          });
      });
    EXPECT_TRUE(facts.has_value());
    return facts.value_or(tk::AxisFacts{});
  }

  /// The facts of the pointer of the only tk.load in `body` along its
  /// first dimension (getAxisFactsAlong).
  tk::AxisFacts loadFactsAlongRows(const std::string &body) {
    loadFacts(body);
    std::optional<tk::AxisFacts> facts;
    if (module)
      module->walk([&](tk::LoadOp load) {
        facts = tk::getAxisFactsAlong(load.getPtr(), 0);
      });
    EXPECT_TRUE(facts.has_value());
    return facts.value_or(tk::AxisFacts{});
  }

  /// Runs of 8 f16 (16 bytes) contiguous and 16-byte aligned.
  static bool copiesIn16Bytes(const tk::AxisFacts &facts) {
    return tk::runsAreContiguousAndAligned(facts, 8, 2, 16);
  }

  /// `a + rows * <rowStride> + cols * <colStride>` loaded.
  static std::string rowMajor(const std::string &rowStride,
                              const std::string &colStride) {
    return "  %rs = tk.splat " + rowStride +
           " : i32 -> tensor<64x1xi32>\n"
           "  %ro = arith.muli %rows, %rs : tensor<64x1xi32>\n"
           "  %cs = tk.splat " +
           colStride +
           " : i32 -> tensor<1x64xi32>\n"
           "  %co = arith.muli %cols, %cs : tensor<1x64xi32>\n"
           "  %rb = tk.broadcast %ro : tensor<64x1xi32> -> tensor<64x64xi32>\n"
           "  %cb = tk.broadcast %co : tensor<1x64xi32> -> tensor<64x64xi32>\n"
           "  %off = arith.addi %rb, %cb : tensor<64x64xi32>\n"
           "  %base = tk.splat %a : !tk.ptr<f16> -> "
           "tensor<64x64x!tk.ptr<f16>>\n"
           "  %p = tk.addptr %base, %off : tensor<64x64x!tk.ptr<f16>>, "
           "tensor<64x64xi32>\n"
           "  %x = tk.load %p : tensor<64x64x!tk.ptr<f16>>\n";
  }

  /// `a + <offsets>` loaded, offsets (1 x 64) the same on every row.
  static std::string sameOffsetsOnEveryRow(const std::string &offsets) {
    return "  %ob = tk.broadcast " + offsets +
           " : tensor<1x64xi32> -> tensor<64x64xi32>\n"
           "  %base = tk.splat %a : !tk.ptr<f16> -> "
           "tensor<64x64x!tk.ptr<f16>>\n"
           "  %p = tk.addptr %base, %ob : tensor<64x64x!tk.ptr<f16>>, "
           "tensor<64x64xi32>\n"
           "  %x = tk.load %p : tensor<64x64x!tk.ptr<f16>>\n";
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(AxisFactsTest, RowMajorWithKnownStridesCopiesIn16Bytes) {
  tk::AxisFacts facts = loadFacts(rowMajor("%stride", "%one"));
  EXPECT_EQ(facts.contiguity, 64);
  EXPECT_EQ(facts.divisibility, 16);
  EXPECT_TRUE(copiesIn16Bytes(facts));
}

TEST_F(AxisFactsTest, UnknownRowStrideProvesNoAlignment) {
  tk::AxisFacts facts = loadFacts(rowMajor("%any", "%one"));
  EXPECT_EQ(facts.contiguity, 64);
  EXPECT_EQ(facts.divisibility, 2);
  EXPECT_FALSE(copiesIn16Bytes(facts));
}

TEST_F(AxisFactsTest, UnknownColumnStrideProvesNoContiguity) {
  tk::AxisFacts facts = loadFacts(rowMajor("%stride", "%any"));
  EXPECT_EQ(facts.contiguity, 1);
  EXPECT_FALSE(copiesIn16Bytes(facts));
}

// A tile loaded transposed (attention's k: rows of d, columns of keys
// `stride` apart) runs down its columns: along its first dimension the
// facts are those a row-major tile has along its last; along its last,
// none.
TEST_F(AxisFactsTest, ATransposedTileRunsAlongItsFirstDimension) {
  std::string transposed = rowMajor("%one", "%stride");
  tk::AxisFacts rows = loadFactsAlongRows(transposed);
  EXPECT_EQ(rows.contiguity, 64);
  EXPECT_EQ(rows.divisibility, 16);
  EXPECT_TRUE(copiesIn16Bytes(rows));
  EXPECT_EQ(loadFacts(transposed).contiguity, 1);
  // Down a row-major tile's columns nothing runs, and since its columns
  // differ by one element, every address is only known 2-byte aligned.
  tk::AxisFacts rowMajorRows = loadFactsAlongRows(rowMajor("%stride", "%one"));
  EXPECT_EQ(rowMajorRows.contiguity, 1);
  EXPECT_EQ(rowMajorRows.divisibility, 2);
}

// tk.trans carries the facts of the dimension it moves.
TEST_F(AxisFactsTest, TransposeCarriesTheFactsOfTheDimensionItMoves) {
  std::string body =
      "  %rs = tk.splat %stride : i32 -> tensor<64x1xi32>\n"
      "  %ro = arith.muli %rows, %rs : tensor<64x1xi32>\n"
      "  %rb = tk.broadcast %ro : tensor<64x1xi32> -> tensor<64x64xi32>\n"
      "  %cb = tk.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>\n"
      "  %off = arith.addi %rb, %cb : tensor<64x64xi32>\n"
      "  %t = tk.trans %off {order = array<i32: 1, 0>} : tensor<64x64xi32> "
      "-> tensor<64x64xi32>\n"
      "  %base = tk.splat %a : !tk.ptr<f16> -> tensor<64x64x!tk.ptr<f16>>\n"
      "  %p = tk.addptr %base, %t : tensor<64x64x!tk.ptr<f16>>, "
      "tensor<64x64xi32>\n"
      "  %x = tk.load %p : tensor<64x64x!tk.ptr<f16>>\n";
  EXPECT_EQ(loadFactsAlongRows(body).contiguity, 64);
  EXPECT_EQ(loadFacts(body).contiguity, 1);
}

TEST_F(AxisFactsTest, OddOffsetBreaksAlignment) {
  // One element past an aligned start: runs stay contiguous, not aligned.
  tk::AxisFacts facts =
      loadFacts("  %c1 = arith.constant dense<1> : tensor<1x64xi32>\n"
                "  %cols1 = arith.addi %cols, %c1 : tensor<1x64xi32>\n" +
                sameOffsetsOnEveryRow("%cols1"));
  EXPECT_EQ(facts.contiguity, 64);
  EXPECT_EQ(facts.divisibility, 2);
  EXPECT_FALSE(copiesIn16Bytes(facts));
}

TEST_F(AxisFactsTest, SumOfTwoRangesIsNotContiguousNorDivisible) {
  // cols + cols = 0, 2, 4, ...: neither consecutive nor all divisible by
  // what divides their first value.
  tk::AxisFacts facts =
      loadFacts("  %cols1 = arith.addi %cols, %cols : tensor<1x64xi32>\n" +
                sameOffsetsOnEveryRow("%cols1"));
  EXPECT_EQ(facts.contiguity, 1);
  EXPECT_LE(facts.divisibility, 2);
  EXPECT_FALSE(copiesIn16Bytes(facts));
}

TEST_F(AxisFactsTest, ComparingRunsWithABoundGivesRunsOfEqualMasks) {
  // cols < N: aligned runs of g consecutive offsets never straddle a bound
  // that g divides, so the mask is constant over them (Triton's rule); for
  // cols <= N the run ending at N straddles it.
  auto masked = [&](const std::string &predicate, const std::string &bound) {
    return maskFacts("  %n = tk.splat " + bound +
                     " : i32 -> tensor<64xi32>\n"
                     "  %m = arith.cmpi " +
                     predicate +
                     ", %r, %n : tensor<64xi32>\n"
                     "  %base = tk.splat %a : !tk.ptr<f16> -> "
                     "tensor<64x!tk.ptr<f16>>\n"
                     "  %p = tk.addptr %base, %r : tensor<64x!tk.ptr<f16>>, "
                     "tensor<64xi32>\n"
                     "  %x = tk.load %p, %m : tensor<64x!tk.ptr<f16>>\n");
  };
  EXPECT_EQ(masked("slt", "%stride").constancy, 16);
  EXPECT_EQ(masked("sge", "%stride").constancy, 16);
  EXPECT_EQ(masked("slt", "%any").constancy, 1);
  EXPECT_EQ(masked("sle", "%stride").constancy, 1);
  EXPECT_EQ(masked("eq", "%stride").constancy, 1);
}

TEST_F(AxisFactsTest, ABoundLessAMultipleKeepsItsDivisibility) {
  // A matmul's last K trip: cols < K - i * 32. K a multiple of 16 less a
  // multiple of 32 is a multiple of 16, so the mask is constant over
  // aligned runs of 16; a bound less an unknown value proves nothing, and
  // a run subtracted runs backwards.
  auto masked = [&](const std::string &less) {
    return maskFacts("  %c32 = arith.constant 32 : i32\n"
                     "  %done = arith.muli %any, %c32 : i32\n"
                     "  %left = arith.subi %stride, " +
                     less +
                     " : i32\n"
                     "  %n = tk.splat %left : i32 -> tensor<64xi32>\n"
                     "  %m = arith.cmpi slt, %r, %n : tensor<64xi32>\n"
                     "  %base = tk.splat %a : !tk.ptr<f16> -> "
                     "tensor<64x!tk.ptr<f16>>\n"
                     "  %p = tk.addptr %base, %r : tensor<64x!tk.ptr<f16>>, "
                     "tensor<64xi32>\n"
                     "  %x = tk.load %p, %m : tensor<64x!tk.ptr<f16>>\n");
  };
  EXPECT_EQ(masked("%done").constancy, 16);
  EXPECT_EQ(masked("%any").constancy, 1);
}

TEST_F(AxisFactsTest, RemainderKeepsRunsTheDivisorDivides) {
  // Triton's tutorials wrap offsets: (pid * 64 + cols) % N. With N a
  // multiple of 16, runs of 16 stay consecutive and 16-aligned (32 bytes of
  // f16); with N unknown, nothing is consecutive.
  auto wrapped = [&](const std::string &divisor) {
    return loadFacts("  %c64 = arith.constant 64 : i32\n"
                     "  %start = arith.muli %any, %c64 : i32\n"
                     "  %b = tk.splat %start : i32 -> tensor<1x64xi32>\n"
                     "  %o = arith.addi %b, %cols : tensor<1x64xi32>\n"
                     "  %n = tk.splat " +
                     divisor +
                     " : i32 -> tensor<1x64xi32>\n"
                     "  %w = arith.remsi %o, %n : tensor<1x64xi32>\n" +
                     sameOffsetsOnEveryRow("%w"));
  };
  tk::AxisFacts known = wrapped("%stride");
  EXPECT_EQ(known.contiguity, 16);
  EXPECT_EQ(known.divisibility, 16); // bytes: %a's
  EXPECT_TRUE(copiesIn16Bytes(known));
  tk::AxisFacts unknown = wrapped("%any");
  EXPECT_EQ(unknown.contiguity, 1);
  EXPECT_FALSE(copiesIn16Bytes(unknown));
}

TEST_F(AxisFactsTest, WalkStepsKeepOrBreakAlignment) {
  tk::AxisFacts start{64, 1, 16};
  Type pointers = RankedTensorType::get(
      {64, 64}, tk::PtrType::get(&ctx, Float16Type::get(&ctx)));
  EXPECT_TRUE(copiesIn16Bytes(
      tk::getWalkFacts(start, tk::AxisFacts{1, 1, 64}, pointers)));
  EXPECT_FALSE(copiesIn16Bytes(
      tk::getWalkFacts(start, tk::AxisFacts{1, 1, 4}, pointers)));
}

/// The facts of the pointer of the only tk.load in `source`, a loop's
/// pointer walks taken as getLoopWalkFacts gives them.
tk::AxisFacts loopLoadFacts(MLIRContext &ctx, OwningOpRef<ModuleOp> &module,
                            const std::string &source) {
  module = parseSourceString<ModuleOp>(source, ParserConfig(&ctx));
  EXPECT_TRUE(module) << source;
  std::optional<tk::AxisFacts> facts;
  if (module)
    module->walk([&](tk::LoadOp load) {
      facts = tk::getAxisFacts(load.getPtr(), tk::getLoopWalkFacts);
    });
  EXPECT_TRUE(facts.has_value());
  return facts.value_or(tk::AxisFacts{});
}

/// The facts getLoopWalkFacts gives the pointer a loop walks from 16-byte
/// aligned runs of 64 f16 by `step` elements a trip, as the loop's load
/// sees it.
tk::AxisFacts walkFacts(MLIRContext &ctx, OwningOpRef<ModuleOp> &module,
                        const std::string &step) {
  std::string source =
      "tk.func @k(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32}, "
      "%step: i32 {tk.divisibility = 16 : i32}, %any: i32, %n: i32) {\n"
      "  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : "
      "tensor<64xi32>\n"
      "  %base = tk.splat %a : !tk.ptr<f16> -> tensor<64x!tk.ptr<f16>>\n"
      "  %p = tk.addptr %base, %r : tensor<64x!tk.ptr<f16>>, "
      "tensor<64xi32>\n"
      "  %s = tk.splat " +
      step +
      " : i32 -> tensor<64xi32>\n"
      "  %c0 = arith.constant 0 : i32\n"
      "  %c1 = arith.constant 1 : i32\n"
      "  %q = scf.for %i = %c0 to %n step %c1 iter_args(%w = %p) -> "
      "(tensor<64x!tk.ptr<f16>>) : i32 {\n"
      "    %x = tk.load %w : tensor<64x!tk.ptr<f16>>\n"
      "    %next = tk.addptr %w, %s : tensor<64x!tk.ptr<f16>>, "
      "tensor<64xi32>\n"
      "    scf.yield %next : tensor<64x!tk.ptr<f16>>\n"
      "  }\n"
      "  tk.return\n}\n";
  return loopLoadFacts(ctx, module, source);
}

TEST_F(AxisFactsTest, WalkByAlignedStepsKeepsTheStartsFacts) {
  tk::AxisFacts facts = walkFacts(ctx, module, "%step");
  EXPECT_EQ(facts.contiguity, 64);
  EXPECT_EQ(facts.divisibility, 16);
  EXPECT_TRUE(copiesIn16Bytes(facts));
}

TEST_F(AxisFactsTest, WalkByAnyStepKeepsContiguityOnly) {
  tk::AxisFacts facts = walkFacts(ctx, module, "%any");
  EXPECT_EQ(facts.contiguity, 64);
  EXPECT_EQ(facts.divisibility, 2);
  EXPECT_FALSE(copiesIn16Bytes(facts));
}

TEST_F(AxisFactsTest, WalkFactsAreNothingForOtherArguments) {
  walkFacts(ctx, module, "%step");
  module->walk([&](mlir::scf::ForOp loop) {
    EXPECT_FALSE(
        tk::getLoopWalkFacts(cast<BlockArgument>(loop.getInductionVar()))
            .has_value());
  });
  module->walk([&](tk::FuncOp func) {
    EXPECT_FALSE(tk::getLoopWalkFacts(func.getArgument(0)).has_value());
  });
}

/// The facts of `a + off + arange(64)` loaded in a loop whose counter
/// `off` runs from `lower` by `step` (the blocks of a row, as layernorm
/// walks one).
tk::AxisFacts counterFacts(MLIRContext &ctx, OwningOpRef<ModuleOp> &module,
                           const std::string &lower, const std::string &step) {
  std::string source =
      "tk.func @k(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32}, "
      "%n: i32, %any: i32) {\n"
      "  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : "
      "tensor<64xi32>\n"
      "  %lower = arith.constant " +
      lower +
      " : i32\n"
      "  %step = arith.constant " +
      step +
      " : i32\n"
      "  scf.for %off = %lower to %n step %step : i32 {\n"
      "    %s = tk.splat %off : i32 -> tensor<64xi32>\n"
      "    %cols = arith.addi %s, %r : tensor<64xi32>\n"
      "    %base = tk.splat %a : !tk.ptr<f16> -> tensor<64x!tk.ptr<f16>>\n"
      "    %p = tk.addptr %base, %cols : tensor<64x!tk.ptr<f16>>, "
      "tensor<64xi32>\n"
      "    %x = tk.load %p : tensor<64x!tk.ptr<f16>>\n"
      "  }\n"
      "  tk.return\n}\n";
  return loopLoadFacts(ctx, module, source);
}

TEST_F(AxisFactsTest, ACounterByBlocksKeepsTheRowsAlignment) {
  tk::AxisFacts facts = counterFacts(ctx, module, "0", "64");
  EXPECT_EQ(facts.contiguity, 64);
  EXPECT_EQ(facts.divisibility, 16);
  EXPECT_TRUE(copiesIn16Bytes(facts));
}

TEST_F(AxisFactsTest, ACounterFromAnOddStartProvesNoAlignment) {
  // 3 + 64 i elements: only an f16's two bytes divide each offset.
  tk::AxisFacts facts = counterFacts(ctx, module, "3", "64");
  EXPECT_EQ(facts.contiguity, 64);
  EXPECT_EQ(facts.divisibility, 2);
  EXPECT_FALSE(copiesIn16Bytes(facts));
}

TEST_F(AxisFactsTest, ACounterByAnOddStepProvesNoAlignment) {
  tk::AxisFacts facts = counterFacts(ctx, module, "0", "6");
  EXPECT_EQ(facts.divisibility, 4);
  EXPECT_FALSE(copiesIn16Bytes(facts));
}

} // namespace
