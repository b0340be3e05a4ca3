//===- BuilderTest.cpp - tests of tk::KernelBuilder and the seed kernels --===//
//
// The seed kernels built in C++ must print exactly as their `.tk` twins
// parse; operators must pick the op the dtype calls for and broadcast as
// numpy does; misuse must end in a failed finish() whose message says what
// went wrong, never in a crash.
//
//===----------------------------------------------------------------------===//

#include "tk/ir/Builder.h"
#include "SeedKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>

using namespace mlir;
using namespace tk;
using ::testing::HasSubstr;

namespace tk {
namespace seeds {
/// Names the kernel when gtest prints a test parameter.
static void PrintTo(const SeedKernel &kernel, std::ostream *os) {
  *os << kernel.name.str();
}
} // namespace seeds
} // namespace tk

namespace {

std::string printOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

/// The name of the op defining `x` (`arith.addf`), or "" for an argument.
std::string opName(const Tile &x) {
  if (!x.valid() || !x.value().getDefiningOp())
    return "";
  return x.value().getDefiningOp()->getName().getStringRef().str();
}

std::string typeStr(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

class BuilderTest : public ::testing::Test {
protected:
  BuilderTest() {
    DialectRegistry registry;
    registerTkDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }

  /// Finishes `k` and returns its module's text; fails the test when the
  /// builder or the verifier rejected the kernel.
  std::string finishOk(KernelBuilder &k) {
    auto module = k.finish();
    EXPECT_TRUE(succeeded(module)) << k.error().str();
    if (failed(module))
      return "";
    return printOp(module->get());
  }

  /// Finishes `k`, expects failure, and returns the message.
  std::string finishError(KernelBuilder &k) {
    auto module = k.finish();
    EXPECT_TRUE(failed(module)) << "the kernel was accepted";
    return k.error().str();
  }

  MLIRContext ctx;
};

//===----------------------------------------------------------------------===//
// Seed kernels: builder == text
//===----------------------------------------------------------------------===//

class SeedKernelTest : public BuilderTest,
                       public ::testing::WithParamInterface<seeds::SeedKernel> {
};

TEST_P(SeedKernelTest, BuilderMatchesTextFile) {
  const seeds::SeedKernel &kernel = GetParam();
  std::string error;
  auto built = kernel.build(&ctx, &error);
  ASSERT_TRUE(succeeded(built)) << error;

  std::string path =
      std::string(TK_SEED_KERNELS_DIR) + "/" + kernel.fileName.str();
  std::string diagnostics;
  OwningOpRef<ModuleOp> parsed;
  {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
    parsed = parseSourceFile<ModuleOp>(path, ParserConfig(&ctx));
  }
  ASSERT_TRUE(parsed) << "cannot parse " << path << ":\n" << diagnostics;
  ASSERT_TRUE(succeeded(verify(*parsed)));
  // Printing both with the default flags drops the value names and the
  // locations, so equal text means structurally equal modules.
  EXPECT_EQ(printOp(built->get()), printOp(parsed.get()));
}

INSTANTIATE_TEST_SUITE_P(
    Seeds, SeedKernelTest, ::testing::ValuesIn(seeds::getSeedKernels()),
    [](const ::testing::TestParamInfo<seeds::SeedKernel> &info) {
      return info.param.name.str();
    });

/// The builder functions take the dtype: every variant must verify.
TEST_F(BuilderTest, SeedKernelsInOtherDtypes) {
  Type f16 = Float16Type::get(&ctx), bf16 = BFloat16Type::get(&ctx);
  Type f32 = Float32Type::get(&ctx), f64 = Float64Type::get(&ctx);
  Type i8 = IntegerType::get(&ctx, 8), i32 = IntegerType::get(&ctx, 32);
  Type f8 = Float8E4M3FNType::get(&ctx);
  std::string error;
  auto expectOk = [&](seeds::KernelModule module, const char *what) {
    EXPECT_TRUE(succeeded(module)) << what << ": " << error;
  };
  expectOk(seeds::buildVectorAdd(&ctx, f16, 256, &error), "vector_add f16");
  expectOk(seeds::buildVectorAdd(&ctx, i32, 128, &error), "vector_add i32");
  expectOk(seeds::buildVectorAdd(&ctx, f64, 64, &error), "vector_add f64");
  expectOk(seeds::buildMatrixCopy(&ctx, i8, 32, &error), "matrix_copy i8");
  expectOk(seeds::buildMatrixTranspose(&ctx, bf16, 16, &error),
           "matrix_transpose bf16");
  expectOk(seeds::buildSoftmax(&ctx, f16, seeds::nextPowerOf2(781), &error),
           "softmax f16");
  expectOk(seeds::buildPersistentSoftmax(&ctx, bf16, 2048, &error),
           "persistent_softmax bf16");
  expectOk(seeds::buildLayerNorm(&ctx, f16, 512, &error), "layernorm f16");
  seeds::MatmulConfig tf32;
  tf32.blockM = 128;
  tf32.inputPrecision = InputPrecision::TF32;
  expectOk(seeds::buildMatmul(&ctx, f32, f32, tf32, &error), "matmul tf32");
  expectOk(seeds::buildMatmul(&ctx, i8, i32, seeds::MatmulConfig(), &error),
           "matmul i8");
  expectOk(seeds::buildMatmul(&ctx, f8, f16, seeds::MatmulConfig(), &error),
           "matmul fp8");
  EXPECT_EQ(seeds::nextPowerOf2(781), 1024);
  EXPECT_EQ(seeds::nextPowerOf2(1024), 1024);
  EXPECT_EQ(seeds::nextPowerOf2(1), 1);
}

TEST_F(BuilderTest, SeedKernelBuildErrorIsReported) {
  // BLOCK must be a power of two: the builder says so through `error`.
  std::string error;
  auto module =
      seeds::buildVectorAdd(&ctx, Float32Type::get(&ctx), 1000, &error);
  EXPECT_TRUE(failed(module));
  EXPECT_THAT(error, HasSubstr("arange(0, 1000)"));
  EXPECT_THAT(error, HasSubstr("power of two"));
}

//===----------------------------------------------------------------------===//
// Arguments and attributes
//===----------------------------------------------------------------------===//

TEST_F(BuilderTest, ArgumentsAndConstexprs) {
  KernelBuilder k(&ctx, "args");
  Tile x = k.argPtr("x", k.f16(), 16);
  Tile n = k.argI32("n", 16);
  Tile s = k.argF32("s");
  EXPECT_EQ(k.constexpr_("BLOCK", 128), 128);
  EXPECT_EQ(k.constexpr_("BIG", int64_t(1) << 40), int64_t(1) << 40);
  EXPECT_TRUE(x.isPointer());
  EXPECT_TRUE(n.isInt());
  EXPECT_TRUE(s.isFloat());
  std::string text = finishOk(k);
  EXPECT_THAT(text, HasSubstr("!tk.ptr<f16> {tk.divisibility = 16 : i32}"));
  EXPECT_THAT(text, HasSubstr("i32 {tk.divisibility = 16 : i32}"));
  EXPECT_THAT(text, HasSubstr("tk.arg_names = [\"x\", \"n\", \"s\"]"));
  EXPECT_THAT(text, HasSubstr("tk.constexprs = {BIG = 1099511627776 : i64, "
                              "BLOCK = 128 : i32}"));
}

TEST_F(BuilderTest, DuplicateArgumentIsAnError) {
  KernelBuilder k(&ctx, "dup");
  k.argI32("n");
  Tile again = k.argI32("n");
  EXPECT_FALSE(again.valid());
  EXPECT_THAT(finishError(k), HasSubstr("argument 'n' is declared twice"));
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

TEST_F(BuilderTest, BroadcastColumnAndRow) {
  KernelBuilder k(&ctx, "bcast");
  Tile a = k.arange(0, 64);
  Tile b = k.arange(0, 32);
  Tile col = a.col(), row = b.row();
  EXPECT_EQ(col.shape(), ArrayRef<int64_t>({64, 1}));
  EXPECT_EQ(row.shape(), ArrayRef<int64_t>({1, 32}));
  Tile sum = col + row;
  EXPECT_EQ(sum.shape(), ArrayRef<int64_t>({64, 32}));
  EXPECT_EQ(opName(sum), "arith.addi");
  Operation *add = sum.value().getDefiningOp();
  EXPECT_EQ(add->getOperand(0).getDefiningOp()->getName().getStringRef(),
            "tk.broadcast");
  EXPECT_EQ(add->getOperand(1).getDefiningOp()->getName().getStringRef(),
            "tk.broadcast");
  finishOk(k);
}

TEST_F(BuilderTest, BroadcastLowerRankPrependsDimensions) {
  KernelBuilder k(&ctx, "bcast_rank");
  Tile a = k.arange(0, 32);            // [32]
  Tile m = k.zeros({64, 32}, k.i32()); // [64, 32]
  Tile sum = m + a;
  EXPECT_EQ(sum.shape(), ArrayRef<int64_t>({64, 32}));
  // [32] -> expand_dims axis 0 -> [1, 32] -> broadcast -> [64, 32].
  Operation *bcast = sum.value().getDefiningOp()->getOperand(1).getDefiningOp();
  ASSERT_TRUE(isa<BroadcastOp>(bcast));
  auto expand = bcast->getOperand(0).getDefiningOp<ExpandDimsOp>();
  ASSERT_TRUE(expand);
  EXPECT_EQ(expand.getAxis(), 0u);
  Tile direct = k.broadcastTo(a, {8, 64, 32});
  EXPECT_EQ(direct.shape(), ArrayRef<int64_t>({8, 64, 32}));
  finishOk(k);
}

TEST_F(BuilderTest, ScalarsSplatToTiles) {
  KernelBuilder k(&ctx, "splat");
  Tile n = k.argI32("n");
  Tile offs = k.arange(0, 128);
  Tile mask = offs < n;
  EXPECT_EQ(mask.shape(), ArrayRef<int64_t>({128}));
  EXPECT_TRUE(mask.isBool());
  EXPECT_EQ(opName(mask), "arith.cmpi");
  auto splat = mask.value().getDefiningOp()->getOperand(1).getDefiningOp();
  EXPECT_TRUE(isa<SplatOp>(splat));
  // Scalar with scalar stays scalar.
  Tile pid = k.programId(0);
  Tile prod = pid * n;
  EXPECT_TRUE(prod.isScalar());
  EXPECT_EQ(opName(prod), "arith.muli");
  finishOk(k);
}

TEST_F(BuilderTest, LiteralsTakeTheTilesDtype) {
  KernelBuilder k(&ctx, "literals");
  Tile h = k.load(k.argPtr("p", k.f16()));
  Tile twice = h * 2; // int literal beside f16: an f16 constant
  EXPECT_EQ(opName(twice), "arith.mulf");
  auto cst = twice.value().getDefiningOp()->getOperand(1).getDefiningOp();
  ASSERT_TRUE(isa<arith::ConstantOp>(cst));
  EXPECT_TRUE(cst->getResult(0).getType().isF16());
  Tile offs = k.arange(0, 16);
  Tile tile = 3 + offs; // a dense constant of the tile's type
  auto dense = tile.value().getDefiningOp()->getOperand(0).getDefiningOp();
  ASSERT_TRUE(isa<arith::ConstantOp>(dense));
  EXPECT_EQ(typeStr(dense->getResult(0).getType()), "tensor<16xi32>");
  finishOk(k);
}

//===----------------------------------------------------------------------===//
// Dtype-directed op choice
//===----------------------------------------------------------------------===//

TEST_F(BuilderTest, ArithmeticFollowsDtype) {
  KernelBuilder k(&ctx, "arith");
  Tile fp = k.argPtr("f", k.f32());
  Tile ip = k.argPtr("i", k.i32());
  Tile offs = k.arange(0, 64);
  Tile f = k.load(fp + offs);
  Tile i = k.load(ip + offs);
  EXPECT_EQ(opName(f + f), "arith.addf");
  EXPECT_EQ(opName(i + i), "arith.addi");
  EXPECT_EQ(opName(f - f), "arith.subf");
  EXPECT_EQ(opName(i - i), "arith.subi");
  EXPECT_EQ(opName(f * f), "arith.mulf");
  EXPECT_EQ(opName(i * i), "arith.muli");
  EXPECT_EQ(opName(f / f), "arith.divf");
  EXPECT_EQ(opName(i / i), "arith.divsi");
  EXPECT_EQ(opName(f % f), "arith.remf");
  EXPECT_EQ(opName(i % i), "arith.remsi");
  EXPECT_EQ(opName(i & i), "arith.andi");
  EXPECT_EQ(opName(i | i), "arith.ori");
  EXPECT_EQ(opName(i ^ i), "arith.xori");
  EXPECT_EQ(opName(i << 2), "arith.shli");
  EXPECT_EQ(opName(i >> 2), "arith.shrsi");
  EXPECT_EQ(opName(-f), "arith.negf");
  EXPECT_EQ(opName(-i), "arith.subi");
  EXPECT_EQ(opName(k.maximum(f, f)), "arith.maxnumf");
  EXPECT_EQ(opName(k.maximum(i, 0)), "arith.maxsi");
  EXPECT_EQ(opName(k.minimum(f, 1.5)), "arith.minnumf");
  EXPECT_EQ(opName(k.minimum(i, i)), "arith.minsi");
  EXPECT_EQ(opName(k.exp(f)), "math.exp");
  EXPECT_EQ(opName(k.log(f)), "math.log");
  EXPECT_EQ(opName(k.sqrt(f)), "math.sqrt");
  EXPECT_EQ(opName(k.rsqrt(f)), "math.rsqrt");
  EXPECT_EQ(opName(k.abs(f)), "math.absf");
  EXPECT_EQ(opName(k.abs(i)), "math.absi");
  Tile cdiv = k.cdiv(k.argI32("n"), 128);
  EXPECT_EQ(opName(cdiv), "arith.divsi");
  finishOk(k);
}

TEST_F(BuilderTest, FastMathCarriesApproximateFunctions) {
  KernelBuilder k(&ctx, "fast");
  Tile fp = k.argPtr("f", k.f32());
  Tile f = k.load(fp + k.arange(0, 64));
  Tile fastExp = k.fastExp(f), fastExp2 = k.fastExp2(f);
  Tile fastDiv = k.fastDiv(f, 2.0);
  EXPECT_EQ(opName(fastExp), "math.exp");
  EXPECT_EQ(opName(fastExp2), "math.exp2");
  EXPECT_EQ(opName(fastDiv), "arith.divf");
  auto flags = [](const Tile &t) {
    return mlir::cast<mlir::arith::ArithFastMathInterface>(
               t.value().getDefiningOp())
        .getFastMathFlagsAttr()
        .getValue();
  };
  for (const Tile &t : {fastExp, fastExp2, fastDiv})
    EXPECT_EQ(flags(t), mlir::arith::FastMathFlags::afn) << opName(t);
  // The plain forms stay exact.
  EXPECT_EQ(flags(k.exp(f)), mlir::arith::FastMathFlags::none);
  EXPECT_EQ(flags(f / 2.0), mlir::arith::FastMathFlags::none);
  finishOk(k);
}

TEST_F(BuilderTest, FastDivOfIntegersIsAnError) {
  KernelBuilder k(&ctx, "fast_div_int");
  Tile i = k.zeros({64}, k.i32());
  EXPECT_FALSE(k.fastDiv(i, 3).valid());
  EXPECT_THAT(finishError(k), HasSubstr("fastDiv needs float operands"));
}

TEST_F(BuilderTest, ComparisonsFollowDtype) {
  KernelBuilder k(&ctx, "cmp");
  Tile offs = k.arange(0, 64);
  Tile f = k.load(k.argPtr("f", k.f32()) + offs);
  Tile i = k.load(k.argPtr("i", k.i32()) + offs);
  auto fpred = [](const Tile &t) {
    return arith::stringifyCmpFPredicate(
               t.value().getDefiningOp<arith::CmpFOp>().getPredicate())
        .str();
  };
  auto ipred = [](const Tile &t) {
    return arith::stringifyCmpIPredicate(
               t.value().getDefiningOp<arith::CmpIOp>().getPredicate())
        .str();
  };
  EXPECT_EQ(fpred(f < f), "olt");
  EXPECT_EQ(fpred(f <= f), "ole");
  EXPECT_EQ(fpred(f > f), "ogt");
  EXPECT_EQ(fpred(f >= f), "oge");
  EXPECT_EQ(fpred(f == f), "oeq");
  EXPECT_EQ(fpred(f != f), "une");
  EXPECT_EQ(ipred(i < i), "slt");
  EXPECT_EQ(ipred(i <= 3), "sle");
  EXPECT_EQ(ipred(i > i), "sgt");
  EXPECT_EQ(ipred(i >= i), "sge");
  EXPECT_EQ(ipred(i == i), "eq");
  EXPECT_EQ(ipred(i != i), "ne");
  Tile m = i < 4;
  EXPECT_EQ(opName(m & (i > 0)), "arith.andi");
  EXPECT_EQ(opName(!m), "arith.xori");
  EXPECT_EQ(opName(!i), "arith.cmpi");
  EXPECT_EQ(opName(~i), "arith.xori");
  EXPECT_EQ(opName(k.where(m, f, 0.0)), "arith.select");
  finishOk(k);
}

TEST_F(BuilderTest, CastsChooseTheConversion) {
  KernelBuilder k(&ctx, "casts");
  Tile offs = k.arange(0, 32);
  Tile f32 = k.load(k.argPtr("f", k.f32()) + offs);
  Tile f16 = k.load(k.argPtr("h", k.f16()) + offs);
  Tile i32 = k.load(k.argPtr("i", k.i32()) + offs);
  Tile i64 = k.load(k.argPtr("l", k.i64()) + offs);
  Tile b = i32 < 0;
  EXPECT_EQ(opName(k.cast(i32, k.f32())), "arith.sitofp");
  EXPECT_EQ(opName(k.cast(b, k.f32())), "arith.uitofp");
  EXPECT_EQ(opName(k.cast(f32, k.i32())), "arith.fptosi");
  EXPECT_EQ(opName(k.cast(f32, k.i1())), "arith.cmpf");
  EXPECT_EQ(opName(f16.to(k.f32())), "arith.extf");
  EXPECT_EQ(opName(f32.to(k.f16())), "arith.truncf");
  EXPECT_EQ(opName(i32.to(k.i64())), "arith.extsi");
  EXPECT_EQ(opName(b.to(k.i32())), "arith.extui");
  EXPECT_EQ(opName(i64.to(k.i32())), "arith.trunci");
  EXPECT_EQ(opName(f32.to(k.f8e4m3())), "tk.fp_to_fp");
  EXPECT_EQ(f32.to(k.f32()).value(), f32.value());
  // f16 -> bf16 goes through f32.
  Tile bf = f16.to(k.bf16());
  EXPECT_EQ(opName(bf), "arith.truncf");
  EXPECT_EQ(bf.value().getDefiningOp()->getOperand(0).getType(), f32.type());
  Tile narrowed = k.fpToFp(f32, k.f16(), RoundingMode::RTZ);
  EXPECT_EQ(narrowed.value().getDefiningOp<FpToFpOp>().getRounding(),
            RoundingMode::RTZ);
  EXPECT_EQ(opName(k.bitcast(f32, k.i32())), "arith.bitcast");
  finishOk(k);
}

//===----------------------------------------------------------------------===//
// Pointers and memory
//===----------------------------------------------------------------------===//

TEST_F(BuilderTest, PointerArithmetic) {
  KernelBuilder k(&ctx, "ptrs");
  Tile p = k.argPtr("p", k.f32());
  Tile offs = k.arange(0, 128);
  Tile ptrs = p + offs;
  EXPECT_EQ(opName(ptrs), "tk.addptr");
  EXPECT_EQ(typeStr(ptrs.type()), "tensor<128x!tk.ptr<f32>>");
  EXPECT_TRUE(ptrs.isPointer());
  Tile flipped = offs + p;
  EXPECT_EQ(opName(flipped), "tk.addptr");
  Tile scalar = p + 4;
  EXPECT_EQ(opName(scalar), "tk.addptr");
  EXPECT_EQ(typeStr(scalar.type()), "!tk.ptr<f32>");
  Tile back = ptrs - 1; // ptr - n is ptr + (0 - n)
  EXPECT_EQ(opName(back), "tk.addptr");
  EXPECT_EQ(back.value()
                .getDefiningOp()
                ->getOperand(1)
                .getDefiningOp()
                ->getName()
                .getStringRef(),
            "arith.subi");
  Tile moved = ptrs;
  moved += 128;
  EXPECT_EQ(opName(moved), "tk.addptr");
  Tile wide = p + k.arange(0, 8).to(k.i64());
  EXPECT_EQ(opName(wide), "tk.addptr");
  finishOk(k);
}

TEST_F(BuilderTest, LoadStoreBroadcastMaskAndOther) {
  KernelBuilder k(&ctx, "ldst");
  Tile p = k.argPtr("p", k.f16());
  Tile q = k.argPtr("q", k.f16());
  Tile n = k.argI32("n");
  Tile rows = k.arange(0, 16).col();
  Tile cols = k.arange(0, 32).row();
  Tile offs = rows * 32 + cols;
  Tile mask = cols < n; // [1, 32] broadcasts to the pointers' [16, 32]
  Tile x = k.load(p + offs, mask, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(typeStr(x.type()), "tensor<16x32xf16>");
  auto load = x.value().getDefiningOp<LoadOp>();
  ASSERT_TRUE(load);
  EXPECT_EQ(typeStr(load.getMask().getType()), "tensor<16x32xi1>");
  EXPECT_EQ(typeStr(load.getOther().getType()), "tensor<16x32xf16>");
  k.store(q + offs, x, mask);
  k.store(q + offs, 0, mask); // a number becomes an f16 splat
  Tile s = k.load(p);         // scalar load
  EXPECT_TRUE(s.isScalar());
  std::string text = finishOk(k);
  EXPECT_THAT(text, HasSubstr("arith.constant dense<0xFC00> : "
                              "tensor<16x32xf16>"));
}

TEST_F(BuilderTest, BlockPointers) {
  KernelBuilder k(&ctx, "block_ptrs");
  Tile a = k.argPtr("a", k.f16(), 16);
  Tile out = k.argPtr("out", k.f16(), 16);
  Tile M = k.argI32("M");
  Tile K = k.argI32("K");
  Tile stride = k.argI64("stride");
  Tile pid = k.programId(0);
  Tile row = pid * 64;
  Tile bp = k.makeBlockPtr(a, {M, K}, {stride, 1}, {row, 0}, {64, 32}, {1, 0});
  EXPECT_TRUE(bp.isBlockPointer());
  EXPECT_EQ(typeStr(bp.type()), "!tk.ptr<tensor<64x32xf16>>");
  Tile tile = k.loadBlock(bp, {0, 1}, PaddingOption::Zero);
  EXPECT_EQ(typeStr(tile.type()), "tensor<64x32xf16>");
  Tile next = k.advance(bp, {0, 32});
  EXPECT_EQ(opName(next), "tk.advance");
  Tile ob =
      k.makeBlockPtr(out, {M, K}, {stride, 1}, {row, 0}, {64, 32}, {1, 0});
  k.storeBlock(ob, tile, {0, 1});
  k.store(ob, tile); // store() forwards block pointers to storeBlock()
  std::string text = finishOk(k);
  EXPECT_THAT(text, HasSubstr("tk.make_block_ptr"));
  EXPECT_THAT(text, HasSubstr("boundary_check = array<i32: 0, 1>"));
  // i32 shape values are widened to i64 as Triton does.
  EXPECT_THAT(text, HasSubstr("arith.extsi"));
}

TEST_F(BuilderTest, Atomics) {
  KernelBuilder k(&ctx, "atomics");
  Tile p = k.argPtr("p", k.f32());
  Tile c = k.argPtr("c", k.i32());
  Tile offs = k.arange(0, 64);
  Tile old = k.atomicAdd(p + offs, 1.0, offs < 10);
  EXPECT_EQ(old.value().getDefiningOp<AtomicRMWOp>().getKind(),
            AtomicRMWKind::FAdd);
  Tile prev = k.atomicCAS(c, 0, 1);
  EXPECT_EQ(opName(prev), "tk.atomic_cas");
  finishOk(k);
}

//===----------------------------------------------------------------------===//
// Dot, reductions, scans, loops
//===----------------------------------------------------------------------===//

TEST_F(BuilderTest, DotWithDefaultAccumulator) {
  KernelBuilder k(&ctx, "dot");
  Tile a = k.zeros({64, 32}, k.f16());
  Tile b = k.zeros({32, 128}, k.f16());
  Tile c = k.dot(a, b);
  EXPECT_EQ(typeStr(c.type()), "tensor<64x128xf32>");
  DotOptions options;
  options.inputPrecision = InputPrecision::TF32;
  options.tiling = DotTiling::Horizontal;
  Tile x = k.zeros({16, 16}, k.f32());
  Tile y = k.dot(x, x, Tile(), options);
  auto dot = y.value().getDefiningOp<DotOp>();
  EXPECT_EQ(dot.getInputPrecision(), InputPrecision::TF32);
  EXPECT_EQ(dot.getTiling(), DotTiling::Horizontal);
  finishOk(k);
}

TEST_F(BuilderTest, Reductions) {
  KernelBuilder k(&ctx, "reduce");
  Tile x = k.load(k.argPtr("x", k.f32()) + k.arange(0, 128));
  Tile m = k.zeros({16, 8}, k.i8());
  Tile total = k.sum(x, 0);
  EXPECT_TRUE(total.isScalar());
  EXPECT_EQ(opName(total), "tk.reduce");
  Tile rowSums = k.sum(m, 1); // i8 is summed as i32
  EXPECT_EQ(typeStr(rowSums.type()), "tensor<16xi32>");
  // f16 and bf16 are summed in f32, not with a rounding per addition.
  Tile halfSums = k.sum(k.zeros({16, 8}, k.f16()), 1);
  EXPECT_EQ(typeStr(halfSums.type()), "tensor<16xf32>");
  Tile bfScan = k.cumsum(k.zeros({8}, k.bf16()), 0);
  EXPECT_EQ(typeStr(bfScan.type()), "tensor<8xf32>");
  Tile kept = k.max(m, 0, /*keepDims=*/true);
  EXPECT_EQ(typeStr(kept.type()), "tensor<1x8xi8>");
  Tile keptScalar = k.min(x, 0, /*keepDims=*/true);
  EXPECT_EQ(typeStr(keptScalar.type()), "tensor<1xf32>");
  auto [value, index] = k.argmax(x, 0);
  EXPECT_TRUE(value.dtype().isF32());
  EXPECT_TRUE(index.dtype().isInteger(32));
  EXPECT_EQ(value.value().getDefiningOp(), index.value().getDefiningOp());
  auto [minValue, minIndex] = k.argmin(m, 1);
  EXPECT_EQ(typeStr(minIndex.type()), "tensor<16xi32>");
  // A custom combiner: the product along an axis.
  Tile prod = k.reduce(x, 0, [](Tile a, Tile b) { return a * b; });
  auto reduce = prod.value().getDefiningOp<ReduceOp>();
  ASSERT_TRUE(reduce);
  EXPECT_TRUE(isa<arith::MulFOp>(reduce.getCombineOp().front().front()));
  std::string text = finishOk(k);
  EXPECT_THAT(text, HasSubstr("arith.minnumf"));
}

TEST_F(BuilderTest, Scans) {
  KernelBuilder k(&ctx, "scan");
  Tile x = k.arange(0, 64);
  Tile c = k.cumsum(x, 0);
  EXPECT_EQ(opName(c), "tk.scan");
  EXPECT_EQ(c.type(), x.type());
  Tile r = k.cumprod(k.zeros({4, 8}, k.f32()), 1, /*reverse=*/true);
  EXPECT_TRUE(r.value().getDefiningOp<ScanOp>().getReverse());
  finishOk(k);
}

TEST_F(BuilderTest, ForLoopCarriesValues) {
  KernelBuilder k(&ctx, "loop");
  Tile n = k.argI32("n");
  Tile acc = k.zeros({32}, k.f32());
  Tile offs = k.arange(0, 32);
  SmallVector<Tile> results =
      k.forLoop(0, n, 1, {acc, offs},
                [&](Tile iv, ArrayRef<Tile> carried) -> SmallVector<Tile> {
                  Tile bump = carried[0] + 1.0;
                  Tile next = carried[1] + iv;
                  return {bump, next};
                });
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].type(), acc.type());
  EXPECT_EQ(opName(results[0]), "scf.for");
  Tile i64n = n.to(k.i64());
  k.forLoop(0, i64n, 2,
            [&](Tile iv) { EXPECT_TRUE(iv.dtype().isInteger(64)); });
  k.ifThen(n > 0, [&] { k.deviceAssert(offs < 32, "in range"); });
  std::string text = finishOk(k);
  EXPECT_THAT(text, HasSubstr("iter_args"));
  EXPECT_THAT(text, HasSubstr("scf.if"));
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(BuilderTest, ShapeMismatchNamesBothShapes) {
  KernelBuilder k(&ctx, "bad_shapes");
  Tile a = k.arange(0, 64);
  Tile b = k.arange(0, 128);
  Tile c = a + b;
  EXPECT_FALSE(c.valid());
  EXPECT_FALSE(k.ok());
  std::string message = finishError(k);
  EXPECT_THAT(message,
              HasSubstr("operator+: cannot broadcast shapes [64] and [128]"));
}

TEST_F(BuilderTest, TwoDimensionalShapeMismatch) {
  KernelBuilder k(&ctx, "bad_shapes_2d");
  Tile a = k.zeros({64, 32}, k.f32());
  Tile b = k.zeros({16, 32}, k.f32());
  (void)(a * b);
  EXPECT_THAT(finishError(k),
              HasSubstr("operator*: cannot broadcast shapes [64, 32] and "
                        "[16, 32]"));
}

TEST_F(BuilderTest, DtypeMismatch) {
  KernelBuilder k(&ctx, "bad_dtypes");
  Tile f = k.zeros({64}, k.f32());
  Tile h = k.zeros({64}, k.f16());
  (void)(f + h);
  EXPECT_THAT(finishError(k),
              HasSubstr("operator+: dtype mismatch: f32 and f16; cast one "
                        "side first"));
}

TEST_F(BuilderTest, StoreF16IntoF32Pointers) {
  KernelBuilder k(&ctx, "bad_store");
  Tile p = k.argPtr("p", k.f32());
  Tile offs = k.arange(0, 64);
  Tile h = k.zeros({64}, k.f16());
  k.store(p + offs, h);
  EXPECT_THAT(finishError(k),
              HasSubstr("store: cannot store f16 values through pointers to "
                        "f32; cast the value first"));
}

TEST_F(BuilderTest, LoadFromNonPointer) {
  KernelBuilder k(&ctx, "bad_load");
  Tile f = k.zeros({64}, k.f32());
  Tile x = k.load(f);
  EXPECT_FALSE(x.valid());
  EXPECT_THAT(finishError(k),
              HasSubstr("load: expected a pointer or a tile of pointers, got "
                        "tensor<64xf32>"));
}

TEST_F(BuilderTest, PointerMisuse) {
  {
    KernelBuilder k(&ctx, "ptr_times");
    Tile p = k.argPtr("p", k.f32());
    (void)(p * 2);
    EXPECT_THAT(finishError(k),
                HasSubstr("operator* is not defined on !tk.ptr<f32>"));
  }
  {
    KernelBuilder k(&ctx, "ptr_plus_float");
    Tile p = k.argPtr("p", k.f32());
    Tile f = k.zeros({4}, k.f32());
    (void)(p + f);
    EXPECT_THAT(finishError(k),
                HasSubstr("pointers only take + and - of integer offsets"));
  }
  {
    KernelBuilder k(&ctx, "ptr_plus_float_literal");
    Tile p = k.argPtr("p", k.f32());
    (void)(p + 0.5);
    EXPECT_THAT(finishError(k),
                HasSubstr("operator+: pointers take integer offsets, not the "
                          "float literal 0.5"));
  }
}

TEST_F(BuilderTest, BlockPointerArithmeticIsAnError) {
  KernelBuilder k(&ctx, "bad_block_ptr");
  Tile a = k.argPtr("a", k.f32());
  Tile bp = k.makeBlockPtr(a, {64, 64}, {64, 1}, {0, 0}, {16, 16}, {1, 0});
  (void)(bp + 16);
  EXPECT_THAT(finishError(k),
              HasSubstr("operator+ is not defined on block pointers "
                        "(!tk.ptr<tensor<16x16xf32>>); use advance()"));
}

TEST_F(BuilderTest, FloatLiteralWithIntegerTile) {
  KernelBuilder k(&ctx, "bad_literal");
  Tile offs = k.arange(0, 16);
  (void)(offs * 0.5);
  EXPECT_THAT(finishError(k),
              HasSubstr("the float literal 0.5 cannot meet an integer value "
                        "of dtype i32"));
}

TEST_F(BuilderTest, LiteralOutOfRange) {
  KernelBuilder k(&ctx, "bad_range");
  Tile c = k.zeros({16}, k.i8());
  (void)(c + 300);
  EXPECT_THAT(finishError(k), HasSubstr("the literal 300 does not fit in i8"));
}

TEST_F(BuilderTest, ReduceAxisOutOfRange) {
  KernelBuilder k(&ctx, "bad_axis");
  Tile x = k.zeros({16, 8}, k.f32());
  Tile s = k.sum(x, 2);
  EXPECT_FALSE(s.valid());
  EXPECT_THAT(finishError(k),
              HasSubstr("reduce: axis 2 is out of range for a tile of shape "
                        "[16, 8]"));
}

TEST_F(BuilderTest, CombinerReturningTheWrongDtype) {
  KernelBuilder k(&ctx, "bad_combiner");
  Tile x = k.zeros({16}, k.f32());
  k.reduce(x, 0, [&](Tile a, Tile b) { return (a + b).to(k.f64()); });
  EXPECT_THAT(finishError(k), HasSubstr("reduce: the combiner returned f64 "
                                        "for source 0 of dtype f32"));
}

TEST_F(BuilderTest, LoopYieldingTheWrongType) {
  KernelBuilder k(&ctx, "bad_loop");
  Tile acc = k.zeros({16}, k.f32());
  k.forLoop(0, 4, 1, {acc},
            [&](Tile, ArrayRef<Tile> carried) -> SmallVector<Tile> {
              return {carried[0].to(k.f16())};
            });
  EXPECT_THAT(finishError(k),
              HasSubstr("forLoop: the body yields tensor<16xf16> for carried "
                        "value 0 of type tensor<16xf32>"));
}

TEST_F(BuilderTest, DotShapeMismatch) {
  KernelBuilder k(&ctx, "bad_dot");
  Tile a = k.zeros({64, 32}, k.f16());
  Tile b = k.zeros({16, 64}, k.f16());
  k.dot(a, b);
  EXPECT_THAT(finishError(k),
              HasSubstr("dot: the inner dimensions differ: [64, 32] · "
                        "[16, 64]"));
}

TEST_F(BuilderTest, FirstErrorWinsAndLaterCallsAreNoOps) {
  KernelBuilder k(&ctx, "first_error");
  Tile p = k.argPtr("p", k.f32());
  Tile a = k.arange(0, 64);
  Tile b = k.arange(0, 32);
  Tile bad = a + b; // first error
  Tile f = k.zeros({64}, k.f32());
  Tile worse = f + a; // would be a dtype mismatch: ignored
  EXPECT_FALSE(worse.valid());
  // Empty tiles flow through everything without crashing.
  Tile chained = k.exp(bad) * 2 + worse;
  k.store(p + bad, chained, bad < 3);
  auto [v, i] = k.argmax(chained, 0);
  k.forLoop(0, 8, 1, [&](Tile iv) { k.store(p + iv, chained); });
  EXPECT_FALSE(chained.valid());
  EXPECT_FALSE(v.valid());
  std::string message = finishError(k);
  EXPECT_THAT(message, HasSubstr("cannot broadcast shapes [64] and [32]"));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("dtype mismatch")));
}

TEST_F(BuilderTest, EmptyTileIsReported) {
  KernelBuilder k(&ctx, "empty");
  Tile p = k.argPtr("p", k.f32());
  k.store(p, Tile());
  EXPECT_THAT(finishError(k), HasSubstr("store: an operand is an empty Tile"));
}

TEST_F(BuilderTest, VerifierDiagnosticsBecomeTheError) {
  // The builder accepts an f16 x f16 dot into an i32 accumulator; the tk
  // verifier does not, and finish() reports its diagnostic.
  KernelBuilder k(&ctx, "bad_verify");
  Tile a = k.zeros({16, 16}, k.f16());
  Tile acc = k.zeros({16, 16}, k.i32());
  k.dot(a, a, acc);
  std::string message = finishError(k);
  EXPECT_THAT(message, HasSubstr("kernel 'bad_verify' failed to verify"));
  EXPECT_THAT(message, HasSubstr("'tk.dot' op"));
  EXPECT_THAT(message, HasSubstr("accumulator"));
}

TEST_F(BuilderTest, FinishTwiceFails) {
  KernelBuilder k(&ctx, "twice");
  k.programId(0);
  EXPECT_TRUE(succeeded(k.finish()));
  EXPECT_TRUE(failed(k.finish()));
  EXPECT_THAT(k.error().str(), HasSubstr("finish() was already called"));
  EXPECT_FALSE(k.programId(0).valid());
}

} // namespace
