//===- HoldAccumulatorsTest.cpp - accumulators mma.sync holds -------------===//
//
// tk-hold-accumulators with CUDA's mma.sync unit (tk-opt gives the pass no
// unit, so its lit test sees nothing held): which loop-carried accumulators
// it records as #tkw.accumulator, which it leaves to workgroup memory, and
// that tk-assign-thread-layouts holds those and no others.
//
//===----------------------------------------------------------------------===//

#include "compiler/MmaSync.h"
#include "compiler/TargetInfo.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;

namespace {

/// The row sums of the K loop's result %res, stored.
const char *kRowSums = R"(
  %sum = tk.reduce(%res : tensor<32x32xf32>) {axis = 1 : i32} -> tensor<32xf32> {
  ^bb0(%lhs: f32, %rhs: f32):
    %add = arith.addf %lhs, %rhs : f32
    tk.reduce.return %add : f32
  }
  %so = tk.splat %c : !tk.ptr<f32> -> tensor<32x!tk.ptr<f32>>
  %po = tk.addptr %so, %r : tensor<32x!tk.ptr<f32>>, tensor<32xi32>
  tk.store %po, %sum : tensor<32x!tk.ptr<f32>>
)";

/// A K loop of 32x32 products, the accumulator of element type `acc`;
/// `body` is spliced into the loop after the dot %d, and `after` (else a
/// store of the result %res) after the loop.
std::string kLoop(const std::string &acc, const std::string &body = "",
                  const std::string &after = "") {
  return R"(
tk.func @k_loop(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                %c: !tk.ptr<)" +
         acc + R"(> {tk.divisibility = 16 : i32}, %K: i32) {
  %r = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %row = tk.expand_dims %r {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %col = tk.expand_dims %r {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %rowb = tk.broadcast %row : tensor<32x1xi32> -> tensor<32x32xi32>
  %colb = tk.broadcast %col : tensor<1x32xi32> -> tensor<32x32xi32>
  %c32 = arith.constant 32 : i32
  %c32t = tk.splat %c32 : i32 -> tensor<32x32xi32>
  %rows = arith.muli %rowb, %c32t : tensor<32x32xi32>
  %offs = arith.addi %rows, %colb : tensor<32x32xi32>
  %sa = tk.splat %a : !tk.ptr<f16> -> tensor<32x32x!tk.ptr<f16>>
  %pa = tk.addptr %sa, %offs : tensor<32x32x!tk.ptr<f16>>, tensor<32x32xi32>
  %sc = tk.splat %c : !tk.ptr<)" +
         acc + R"(> -> tensor<32x32x!tk.ptr<)" + acc + R"(>>
  %pc = tk.addptr %sc, %offs : tensor<32x32x!tk.ptr<)" +
         acc + R"(>>, tensor<32x32xi32>
  %zero = arith.constant dense<0.0> : tensor<32x32x)" +
         acc + R"(>
  %c0 = arith.constant 0 : i32
  %res = scf.for %k = %c0 to %K step %c32 iter_args(%acc = %zero) -> (tensor<32x32x)" +
         acc + R"(>) : i32 {
    %x = tk.load %pa : tensor<32x32x!tk.ptr<f16>>
    %d = tk.dot %x, %x, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32x)" +
         acc + R"(>
)" + body +
         R"(
    scf.yield %d : tensor<32x32x)" +
         acc + R"(>
  }
  )" +
         (after.empty()
              ? "tk.store %pc, %res : tensor<32x32x!tk.ptr<" + acc + ">>"
              : after) +
         R"(
  tk.return
}
)";
}

/// A context for tk kernels, with CUDA's TargetInfo presets registered
/// (registering again replaces them) and NVVM loaded for the unit's ops (as
/// the backend's pipeline loads it).
struct KernelContext {
  KernelContext() {
    tk::cuda::registerTargetPresets();
    tk::registerTkDialects(registry);
    context.appendDialectRegistry(registry);
    context.getOrLoadDialect<NVVM::NVVMDialect>();
  }
  DialectRegistry registry;
  MLIRContext context;
};

/// The module `source` becomes after tk-hold-accumulators (when `hold`) and
/// tk-assign-thread-layouts (when `assign`) with mma.sync on sm_80, then
/// `edit` (when given) and tk-convert-to-simt (when `lower`); "pass failed:
/// " and the diagnostics when a pass fails. `conversions` gets the count
/// tk-assign-thread-layouts recorded (tkw.conversions).
std::string run(const std::string &source, bool hold, bool assign,
                int64_t *conversions = nullptr,
                llvm::function_ref<void(ModuleOp)> edit = nullptr,
                bool lower = false) {
  KernelContext kernels;
  MLIRContext &context = kernels.context;
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, ParserConfig(&context));
  if (!module)
    return "parse error";
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return success();
  });
  auto unit = std::make_shared<tk::cuda::MmaSyncUnit>();
  PassManager pm(&context);
  if (hold) {
    tk::TkHoldAccumulatorsOptions options;
    options.target = "cuda-sm80";
    pm.addPass(tk::createHoldAccumulatorsPass(options, unit));
  }
  if (assign) {
    tk::TkAssignThreadLayoutsOptions options;
    options.target = "cuda-sm80";
    pm.addPass(tk::createAssignThreadLayoutsPass(options, unit));
  }
  if (failed(pm.run(*module)))
    return "pass failed: " + diagnostics;
  if (conversions)
    module->walk([&](tk::FuncOp kernel) {
      if (auto count = kernel->getAttrOfType<IntegerAttr>(
              tk::warp::TkwDialect::kConversionsAttrName))
        *conversions = count.getInt();
    });
  if (edit)
    edit(*module);
  if (lower) {
    PassManager simt(&context);
    tk::TkConvertToSIMTOptions options;
    options.target = "cuda-sm80";
    simt.addPass(tk::createConvertToSIMTPass(options, unit, nullptr));
    if (failed(simt.run(*module)))
      return "pass failed: " + diagnostics;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST(HoldAccumulators, HoldsAnF32AccumulatorOfMmaSync) {
  std::string text = run(kLoop("f32"), /*hold=*/true, /*assign=*/false);
  EXPECT_TRUE(contains(text, "tkw.iter_layouts = [#tkw.accumulator<product = "
                             "0>]"))
      << text;
  EXPECT_TRUE(contains(text, "tkw.product = 0")) << text;
  // The unit's statement of its registers comes with the product.
  EXPECT_TRUE(contains(text, "tkw.held = #tkw.held<")) << text;
  // Only the accumulators: the other layouts are not decided yet.
  EXPECT_FALSE(contains(text, "tkw.threads")) << text;
  EXPECT_FALSE(contains(text, "tkw.result_layouts")) << text;
}

TEST(HoldAccumulators, LeavesAnAccumulatorTheRegistersWouldNotRound) {
  // An f16 accumulator is rounded after every trip; mma.sync's registers
  // are f32.
  std::string text = run(kLoop("f16"), /*hold=*/true, /*assign=*/false);
  EXPECT_FALSE(contains(text, "tkw.iter_layouts")) << text;
  EXPECT_FALSE(contains(text, "tkw.product")) << text;
}

TEST(HoldAccumulators, LeavesAProductReadInTheLoop) {
  // The product is also stored in the loop: a reader other than the next
  // trip needs the whole tile.
  std::string text =
      run(kLoop("f32", "    tk.store %pc, %d : tensor<32x32x!tk.ptr<f32>>"),
          /*hold=*/true, /*assign=*/false);
  EXPECT_FALSE(contains(text, "pass failed")) << text;
  EXPECT_FALSE(contains(text, "tkw.iter_layouts")) << text;
}

TEST(HoldAccumulators, AssignThreadLayoutsHoldsThoseAndNoOthers) {
  // After the pass: the loop's result stays in the registers for its store.
  std::string held = run(kLoop("f32"), /*hold=*/true, /*assign=*/true);
  EXPECT_TRUE(contains(held, "tkw.iter_layouts = [#tkw.accumulator<product = "
                             "0>], tkw.result_layouts = "
                             "[#tkw.accumulator<product = 0>]"))
      << held;
  // Without it the same unit holds no accumulator across trips: the
  // decision is this pass's. Each trip's product is still computed in the
  // unit's registers, and a conversion moves it to workgroup memory for
  // the loop to carry.
  int64_t conversions = -1;
  std::string unheld =
      run(kLoop("f32"), /*hold=*/false, /*assign=*/true, &conversions);
  EXPECT_TRUE(contains(unheld, "tkw.threads = 128")) << unheld;
  // The loop carries it in workgroup memory, written by runs of 4 f32.
  EXPECT_TRUE(contains(unheld, "tkw.iter_layouts = [#tkw.shared<written = "
                               "#tkw.runs<width = 4, threads = 128>>]"))
      << unheld;
  EXPECT_FALSE(contains(unheld, "tkw.result_layouts")) << unheld;
  EXPECT_TRUE(contains(unheld, "tkw.layout = #tkw.accumulator<product = 0>"))
      << unheld;
  // %16 is the trip's product, yielded through its conversion; its
  // operands (%13 as A and as B) reach mma.sync's layout by two more.
  EXPECT_TRUE(contains(unheld, "%14 = tkw.convert_layout %13 {tkw.layout = "
                               "#tkw.operand<product = 0, operand = 0, "))
      << unheld;
  EXPECT_TRUE(contains(unheld, "%15 = tkw.convert_layout %13 {tkw.layout = "
                               "#tkw.operand<product = 0, operand = 1, "))
      << unheld;
  EXPECT_TRUE(contains(unheld, "%16 = tk.dot %14, %15, %arg4")) << unheld;
  EXPECT_TRUE(contains(unheld, "%17 = tkw.convert_layout %16 {tkw.layout = "
                               "#tkw.shared}"))
      << unheld;
  EXPECT_TRUE(contains(unheld, "scf.yield %17")) << unheld;
  EXPECT_EQ(conversions, 3);
}

TEST(HoldAccumulators, RefusesAKernelWhoseLayoutsAreAssigned) {
  KernelContext kernels;
  MLIRContext &context = kernels.context;
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kLoop("f32"), ParserConfig(&context));
  ASSERT_TRUE(module);
  auto unit = std::make_shared<tk::cuda::MmaSyncUnit>();
  PassManager pm(&context);
  tk::TkAssignThreadLayoutsOptions assign;
  assign.target = "cuda-sm80";
  pm.addPass(tk::createAssignThreadLayoutsPass(assign, unit));
  tk::TkHoldAccumulatorsOptions hold;
  hold.target = "cuda-sm80";
  pm.addPass(tk::createHoldAccumulatorsPass(hold, unit));
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagnostics += d.str();
    return success();
  });
  EXPECT_TRUE(failed(pm.run(*module)));
  EXPECT_TRUE(contains(diagnostics, "thread layouts are already assigned"))
      << diagnostics;
}

TEST(HeldResults, AResultReadElsewhereIsMovedByACountedConversion) {
  // Summed along rows, the result is read at other threads' positions: a
  // tkw.convert_layout after the loop moves it to workgroup memory, and the
  // loop result itself stays in the registers.
  int64_t conversions = -1;
  std::string text = run(kLoop("f32", "", kRowSums), /*hold=*/true,
                         /*assign=*/true, &conversions);
  EXPECT_TRUE(contains(text, "tkw.result_layouts = [#tkw.accumulator<product "
                             "= 0>]"))
      << text;
  // %12 is the loop's result.
  EXPECT_TRUE(contains(text, "%12 = scf.for")) << text;
  EXPECT_TRUE(contains(text, "%13 = tkw.convert_layout %12 {tkw.layout = "
                             "#tkw.shared}"))
      << text;
  EXPECT_TRUE(contains(text, "tk.reduce(%13 : tensor<32x32xf32>)")) << text;
  // With the product's two operand conversions (#tkw.operand).
  EXPECT_EQ(conversions, 3);
  // A result only stored needs none: only the operands are converted.
  conversions = -1;
  text = run(kLoop("f32"), /*hold=*/true, /*assign=*/true, &conversions);
  EXPECT_FALSE(contains(text, "#tkw.shared")) << text;
  EXPECT_EQ(conversions, 2);
}

TEST(HeldResults, TheLoweringFollowsTheConversion) {
  std::string text = run(kLoop("f32", "", kRowSums), /*hold=*/true,
                         /*assign=*/true, nullptr, nullptr, /*lower=*/true);
  EXPECT_FALSE(contains(text, "pass failed")) << text;
  EXPECT_FALSE(contains(text, "tkw.convert_layout")) << text;
  EXPECT_TRUE(contains(text, "nvvm.mma.sync")) << text;
}

TEST(HeldResults, TheLoweringRefusesAHeldResultReadWithoutItsConversion) {
  // The conversion taken out by hand: the reduction would read registers
  // other threads hold.
  auto dropConversion = [](ModuleOp module) {
    module.walk([](tk::warp::ConvertLayoutOp convert) {
      if (!isa<tk::warp::SharedLayoutAttr>(
              convert->getAttr(tk::warp::TkwDialect::kLayoutAttrName)))
        return;
      convert.getResult().replaceAllUsesWith(convert.getSrc());
      convert.erase();
    });
  };
  std::string text = run(kLoop("f32", "", kRowSums), /*hold=*/true,
                         /*assign=*/true, nullptr, dropConversion,
                         /*lower=*/true);
  EXPECT_TRUE(contains(text, "pass failed")) << text;
  EXPECT_TRUE(contains(text, "keeps a result in registers that is read other "
                             "than by stores"))
      << text;
}

TEST(HeldResults, TheLoweringRefusesAConversionOfAnythingElse) {
  // A conversion of the row sums (not a held loop result).
  auto convertSums = [](ModuleOp module) {
    module.walk([&](tk::ReduceOp reduce) {
      OpBuilder builder(reduce->getBlock(), std::next(reduce->getIterator()));
      Value sums = reduce->getResult(0);
      auto convert = tk::warp::ConvertLayoutOp::create(builder, reduce.getLoc(),
                                                       sums.getType(), sums);
      convert->setAttr(tk::warp::TkwDialect::kLayoutAttrName,
                       tk::warp::SharedLayoutAttr::get(module.getContext()));
      sums.replaceAllUsesExcept(convert.getResult(), convert);
    });
  };
  std::string text = run(kLoop("f32", "", kRowSums), /*hold=*/true,
                         /*assign=*/true, nullptr, convertSums,
                         /*lower=*/true);
  EXPECT_TRUE(contains(text, "converts a held accumulator's loop result or a "
                             "held product from the matrix unit's registers"))
      << text;
}

TEST(OperandConversions, TheLoweringStagesOperandsThroughTheirConversions) {
  // Both operands reach mma.sync's swizzled layout through their
  // conversions, which the lowering turns into stores to workgroup memory
  // before the product's ldmatrix reads.
  std::string text = run(kLoop("f32"), /*hold=*/true, /*assign=*/true, nullptr,
                         nullptr, /*lower=*/true);
  EXPECT_FALSE(contains(text, "pass failed")) << text;
  EXPECT_FALSE(contains(text, "tkw.convert_layout")) << text;
  EXPECT_TRUE(contains(text, "nvvm.ldmatrix")) << text;
  EXPECT_TRUE(contains(text, "nvvm.mma.sync")) << text;
}

/// Rewrites the recorded layout of A's conversion (#tkw.operand) as
/// operand `operand`, with `maxPhase` phases if given.
static void rewriteOperandLayoutA(ModuleOp module, int64_t operand,
                                  std::optional<int64_t> maxPhase) {
  module.walk([&](tk::warp::ConvertLayoutOp convert) {
    auto layout = dyn_cast<tk::warp::OperandLayoutAttr>(
        convert->getAttr(tk::warp::TkwDialect::kLayoutAttrName));
    if (!layout || layout.getOperand() != 0)
      return;
    convert->setAttr(
        tk::warp::TkwDialect::kLayoutAttrName,
        tk::warp::OperandLayoutAttr::get(
            module.getContext(), layout.getProduct(), operand, layout.getTile(),
            layout.getTilesAlong(), layout.getContiguous(), layout.getVec(),
            layout.getPerPhase(), maxPhase.value_or(layout.getMaxPhase()),
            layout.getAlign(), layout.getWritten()));
  });
}

TEST(OperandConversions, TheLoweringRefusesALayoutTheUnitDoesNotRead) {
  // A's conversion recorded unswizzled: mma.sync's ldmatrix reads A's
  // 16-byte chunks swizzled, so the lowering would write A elsewhere.
  auto unswizzle = [](ModuleOp module) {
    rewriteOperandLayoutA(module, /*operand=*/0, /*maxPhase=*/1);
  };
  std::string text = run(kLoop("f32"), /*hold=*/true, /*assign=*/true, nullptr,
                         unswizzle, /*lower=*/true);
  EXPECT_TRUE(contains(text, "pass failed")) << text;
  EXPECT_TRUE(contains(text, "maxPhase = 1, align = 128, written = "
                             "#tkw.runs<width = 8, threads = 128>> is not the "
                             "layout "
                             "the matrix unit reads this operand in: "
                             "#tkw.operand<product = 0, operand = 0, "))
      << text;
}

TEST(OperandConversions, TheLoweringRefusesAConversionToAnotherOperand) {
  // A's conversion relabelled as B's layout: the product would read A in
  // the layout of B.
  auto relabel = [](ModuleOp module) {
    rewriteOperandLayoutA(module, /*operand=*/1, /*maxPhase=*/std::nullopt);
  };
  std::string text = run(kLoop("f32"), /*hold=*/true, /*assign=*/true, nullptr,
                         relabel, /*lower=*/true);
  EXPECT_TRUE(contains(text, "pass failed")) << text;
  EXPECT_TRUE(contains(text, "thread layout #tkw.operand<product = 0, "
                             "operand = 1, tile = [32, 32], tilesAlong = 1, "
                             "contiguous = 1, vec = 8, perPhase = 2, "
                             "maxPhase = 4, align = 128, written = "
                             "#tkw.runs<width = 8, threads = 128>> is read "
                             "other than "
                             "as operand 1 of held products laid out alike"))
      << text;
}

/// Rewrites the writers recorded on A's conversion (#tkw.operand) as
/// `written` (null: none).
static void rewriteOperandWritersA(ModuleOp module, Attribute written) {
  module.walk([&](tk::warp::ConvertLayoutOp convert) {
    auto layout = dyn_cast<tk::warp::OperandLayoutAttr>(
        convert->getAttr(tk::warp::TkwDialect::kLayoutAttrName));
    if (!layout || layout.getOperand() != 0)
      return;
    convert->setAttr(tk::warp::TkwDialect::kLayoutAttrName,
                     tk::warp::OperandLayoutAttr::get(
                         module.getContext(), layout.getProduct(),
                         layout.getOperand(), layout.getTile(),
                         layout.getTilesAlong(), layout.getContiguous(),
                         layout.getVec(), layout.getPerPhase(),
                         layout.getMaxPhase(), layout.getAlign(), written));
  });
}

TEST(OperandConversions, NameTheThreadsThatWriteThem) {
  // A loaded tile (not in registers) is written into mma.sync's layout by
  // runs of 16 bytes, 8 f16.
  std::string text = run(kLoop("f32"), /*hold=*/true, /*assign=*/true);
  EXPECT_TRUE(contains(text, "align = 128, written = #tkw.runs<width = 8, "
                             "threads = 128>>"))
      << text;
}

TEST(OperandConversions, TheLoweringRefusesWritersItWouldNotTake) {
  // Runs of 4 recorded where the lowering takes runs of 8: the record would
  // not say which thread writes which element.
  auto narrower = [](ModuleOp module) {
    rewriteOperandWritersA(
        module, tk::warp::RunsLayoutAttr::get(module.getContext(), 4, 128));
  };
  std::string text = run(kLoop("f32"), /*hold=*/true, /*assign=*/true, nullptr,
                         narrower, /*lower=*/true);
  EXPECT_TRUE(contains(text, "pass failed")) << text;
  EXPECT_TRUE(contains(text, "a dot operand's conversion written by "
                             "#tkw.runs<width = 4, threads = 128> is written "
                             "by #tkw.runs<width = 8, threads = 128>"))
      << text;
  // None recorded: a conversion the threads write needs its writers.
  auto none = [](ModuleOp module) { rewriteOperandWritersA(module, {}); };
  text = run(kLoop("f32"), /*hold=*/true, /*assign=*/true, nullptr, none,
             /*lower=*/true);
  EXPECT_TRUE(contains(text, "a dot operand's conversion with no writers is "
                             "written by #tkw.runs<width = 8, threads = 128>"))
      << text;
}

/// Replaces the #tkw.shared of every tkw.convert_layout to workgroup memory
/// by one written by `written` (null: none).
static void rewriteSharedConversions(ModuleOp module, Attribute written) {
  module.walk([&](tk::warp::ConvertLayoutOp convert) {
    if (isa<tk::warp::SharedLayoutAttr>(
            convert->getAttr(tk::warp::TkwDialect::kLayoutAttrName)))
      convert->setAttr(
          tk::warp::TkwDialect::kLayoutAttrName,
          tk::warp::SharedLayoutAttr::get(module.getContext(), written));
  });
}

TEST(HeldResults, ARoundedProductNamesTheRunsThatRoundIt) {
  // An f16 accumulator mma.sync would not round every trip: each trip's
  // product is moved from the unit's f32 registers to workgroup memory, and
  // rounded into the f16 tile there by runs of 8.
  std::string text = run(kLoop("f16"), /*hold=*/true, /*assign=*/true);
  EXPECT_TRUE(contains(text, "{tkw.layout = #tkw.shared<written = "
                             "#tkw.runs<width = 8, threads = 128>>} : "
                             "tensor<32x32xf16> -> tensor<32x32xf16>"))
      << text;
  EXPECT_FALSE(contains(text, "pass failed")) << text;
  text = run(kLoop("f16"), /*hold=*/true, /*assign=*/true, nullptr, nullptr,
             /*lower=*/true);
  EXPECT_FALSE(contains(text, "pass failed")) << text;
  // Without the runs the lowering would pick its own.
  auto unnamed = [](ModuleOp module) { rewriteSharedConversions(module, {}); };
  text = run(kLoop("f16"), /*hold=*/true, /*assign=*/true, nullptr, unnamed,
             /*lower=*/true);
  EXPECT_TRUE(contains(text, "rounds a product's wider accumulator into its "
                             "tile; it needs the runs that write it"))
      << text;
  // An f32 product written where its registers are has nothing to round.
  auto named = [](ModuleOp module) {
    rewriteSharedConversions(
        module, tk::warp::RunsLayoutAttr::get(module.getContext(), 4, 128));
  };
  text = run(kLoop("f32"), /*hold=*/false, /*assign=*/true, nullptr, named,
             /*lower=*/true);
  EXPECT_TRUE(contains(text, "names the runs that round a product's wider "
                             "accumulator into its tile; this tile is not one"))
      << text;
}
