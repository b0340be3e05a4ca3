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
#include "tk/ir/Dialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;

namespace {

/// A K loop of 32x32 products, the accumulator of element type `acc`;
/// `body` is spliced into the loop after the dot %d.
std::string kLoop(const std::string &acc, const std::string &body = "") {
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
  tk.store %pc, %res : tensor<32x32x!tk.ptr<)" +
         acc + R"(>>
  tk.return
}
)";
}

/// A context for tk kernels, with CUDA's TargetInfo presets registered
/// (registering again replaces them).
struct KernelContext {
  KernelContext() {
    tk::cuda::registerTargetPresets();
    tk::registerTkDialects(registry);
    context.appendDialectRegistry(registry);
  }
  DialectRegistry registry;
  MLIRContext context;
};

/// The module `source` becomes after tk-hold-accumulators (when `hold`) and
/// tk-assign-thread-layouts (when `assign`) with mma.sync on sm_80.
std::string run(const std::string &source, bool hold, bool assign) {
  KernelContext kernels;
  MLIRContext &context = kernels.context;
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, ParserConfig(&context));
  if (!module)
    return "parse error";
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
    return "pass failed";
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
  EXPECT_NE(text, "pass failed");
  EXPECT_FALSE(contains(text, "tkw.iter_layouts")) << text;
}

TEST(HoldAccumulators, AssignThreadLayoutsHoldsThoseAndNoOthers) {
  // After the pass: the loop's result stays in the registers for its store.
  std::string held = run(kLoop("f32"), /*hold=*/true, /*assign=*/true);
  EXPECT_TRUE(contains(held, "tkw.iter_layouts = [#tkw.accumulator<product = "
                             "0>], tkw.result_layouts = "
                             "[#tkw.accumulator<product = 0>]"))
      << held;
  // Without it the same unit holds nothing: the decision is this pass's.
  std::string unheld = run(kLoop("f32"), /*hold=*/false, /*assign=*/true);
  EXPECT_TRUE(contains(unheld, "tkw.threads = 128")) << unheld;
  EXPECT_FALSE(contains(unheld, "#tkw.accumulator")) << unheld;
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
