//===- GpuPipeline.cpp - the register pipeline every GPU backend runs -----===//
//
// The passes every GPU backend runs, in this order, from a verified tk
// module to the code of one thread (DESIGN.md §3), and the stages every GPU
// backend dumps (TK_DUMP_IR: the module after each pass, 2-NN-<pass>.mlir,
// the register pipeline's result, 3-registers.mlir, and the code of one
// thread, 4-loops.mlir): one place, so that the backends' pipelines and
// dumps cannot drift apart.
//
//===----------------------------------------------------------------------===//

#include "tk/core/CompileSupport.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/DotOperands.h"
#include "tk/core/Passes.h"
#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Format.h"

#include <algorithm>

using namespace mlir;

/// The 32-bit registers a thread holds of a tile of `type` in a #tkw.linear
/// layout (0 for any other).
static int64_t registersOf(Type type) {
  auto tile = dyn_cast<RankedTensorType>(type);
  auto layout =
      tile ? dyn_cast_or_null<tk::warp::LinearLayoutAttr>(tile.getEncoding())
           : nullptr;
  if (!layout)
    return 0;
  int64_t bits = tile.getElementType().isIntOrFloat()
                     ? tile.getElementType().getIntOrFloatBitWidth()
                     : 64;
  return tk::getThreadRegisters(layout.getLinearLayout(), bits);
}

/// Why a dot without a matrix intrinsic cannot take registers: each thread
/// unrolls the multiply-adds of the product elements it holds, and where
/// its accumulator and the operands it holds (whole rows and columns, or
/// the tiles it writes to the dot's workgroup memory, tk-dot-operand-layouts)
/// need more than a GPU thread's 255 registers they spill, and a JIT that
/// builds a whole subgroup's code at once (lavapipe) takes minutes.
static std::optional<std::string> findOversizedFmaDot(ModuleOp module,
                                                      int64_t budget) {
  std::optional<std::string> problem;
  module.walk([&](tk::DotOp dot) {
    if (dot->hasAttr(tk::warp::TkwDialect::kIntrinsicAttrName))
      return WalkResult::advance();
    int64_t registers = registersOf(dot.getA().getType()) +
                        registersOf(dot.getB().getType()) +
                        registersOf(dot.getType());
    if (registers <= budget)
      return WalkResult::advance();
    problem = "a dot without a matrix intrinsic needs " +
              std::to_string(registers) + " registers a thread, over " +
              std::to_string(budget);
    return WalkResult::interrupt();
  });
  return problem;
}

namespace {

/// TK_DUMP_IR's view of each pass of the register pipeline: the module after
/// it, as 2-NN-<pass>.mlir (3-registers.mlir is the module after the last).
/// A kernel module holds one function, so a pass nested on functions runs
/// once.
class PassDumper : public PassInstrumentation {
public:
  PassDumper(ModuleOp module, const tk::StageDumpFn &dump)
      : module(module), dump(dump) {}

  void runAfterPass(Pass *pass, Operation *) override {
    // The pass managers' adaptors have no argument; tk's passes all do.
    if (pass->getArgument().empty())
      return;
    std::string file;
    llvm::raw_string_ostream os(file);
    os << "2-" << llvm::format_decimal(++count, 2) << "-" << pass->getArgument()
       << ".mlir";
    std::replace(file.begin(), file.end(), ' ', '0');
    dump(file, module);
  }

private:
  ModuleOp module;
  const tk::StageDumpFn &dump;
  int count = 0;
};

} // namespace

/// The register pipeline on a copy of `module`; the copy's body replaces
/// the module's where every pass succeeds. Otherwise the module is as it
/// was, `refusal` holds the first error the pipeline gave, and
/// `deviceLimit` says whether it was the target's limit (workgroup memory,
/// a thread's registers for a dot of multiply-adds) rather than a fault of
/// the compiler.
static LogicalResult
lowerWithRegisters(ModuleOp module, const tk::SIMTLowering &lowering,
                   const tk::StageDumpFn &dump, bool stageOperands,
                   std::string &refusal, bool &deviceLimit, bool &staged) {
  deviceLimit = false;
  staged = false;
  OwningOpRef<ModuleOp> copy = module.clone();
  // The attempt's diagnostics are the refusal, not the compile's errors.
  ScopedDiagnosticHandler quiet(module.getContext(), [&](Diagnostic &d) {
    if (refusal.empty() && d.getSeverity() == DiagnosticSeverity::Error)
      refusal = d.str();
    return success();
  });
  std::string failedPass;
  LogicalResult layouts = tk::runPasses(
      *copy, failedPass,
      [&](OpPassManager &pm) {
        pm.addNestedPass<tk::FuncOp>(tk::createTkRewriteBlockPointers());
        pm.addNestedPass<tk::FuncOp>(tk::createTkHoistLoopInvariants());
        tk::TkAssignLinearLayoutsOptions assign;
        assign.target = lowering.target;
        assign.numWarps = lowering.numWarps;
        pm.addNestedPass<tk::FuncOp>(tk::createTkAssignLinearLayouts(assign));
        pm.addNestedPass<tk::FuncOp>(tk::createTkRemoveLayoutConversions());
        tk::TkDotOperandLayoutsOptions operands;
        operands.stageOperands = stageOperands;
        pm.addNestedPass<tk::FuncOp>(tk::createTkDotOperandLayouts(operands));
        // The operands' conversions may fold into their producers.
        pm.addNestedPass<tk::FuncOp>(tk::createTkRemoveLayoutConversions());
        tk::TkPipelineLoadsOptions pipelining;
        pipelining.numStages = lowering.numStages;
        pm.addNestedPass<tk::FuncOp>(tk::createTkPipelineLoads(pipelining));
        pm.addNestedPass<tk::FuncOp>(tk::createTkDeferDotWaits());
        pm.addNestedPass<tk::FuncOp>(tk::createTkCooperativeAccumulators());
        tk::TkAllocateSharedMemoryOptions allocate;
        allocate.target = lowering.target;
        pm.addNestedPass<tk::FuncOp>(
            tk::createTkAllocateSharedMemory(allocate));
        pm.addNestedPass<tk::FuncOp>(tk::createTkInsertBarriers());
      },
      dump ? std::make_unique<PassDumper>(*copy, dump) : nullptr);
  staged =
      copy->walk([](tk::warp::LocalStoreOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
  if (failed(layouts)) {
    if (refusal.empty())
      refusal = "pass '" + failedPass + "' failed";
    deviceLimit = failedPass == "tk-allocate-shared-memory";
    return failure();
  }
  if (std::optional<std::string> problem =
          findOversizedFmaDot(*copy, lowering.maxFmaDotRegisters)) {
    refusal = *problem;
    deviceLimit = true;
    return failure();
  }
  // Dumped only where the pipeline goes on to lower the module.
  OwningOpRef<ModuleOp> withLayouts;
  if (dump)
    withLayouts = copy->clone();
  if (failed(tk::runPasses(*copy, failedPass, [&](OpPassManager &pm) {
        pm.addPass(tk::createConvertRegistersToSIMTPass(lowering.matrixUnit,
                                                        lowering.asyncCopy));
        pm.addPass(tk::createTkRemoveDeadLoopValues());
        pm.addPass(tk::createCanonicalizer());
        pm.addPass(createCSEPass());
      }))) {
    if (refusal.empty())
      refusal = "pass '" + failedPass + "' failed";
    return failure();
  }
  if (dump)
    dump("3-registers.mlir", *withLayouts);
  module.getBodyRegion().takeBody(copy->getBodyRegion());
  return success();
}

LogicalResult tk::lowerToSIMT(ModuleOp module, const SIMTLowering &lowering,
                              const StageDumpFn &dump, std::string &error,
                              bool *refused, bool *staged) {
  std::string refusal;
  bool deviceLimit = false, stagedOperand = false;
  LogicalResult lowered =
      lowerWithRegisters(module, lowering, dump, lowering.stageOperands,
                         refusal, deviceLimit, stagedOperand);
  // Operands staged in workgroup memory that then does not fit: the kernel
  // runs with them in registers instead (spilling where it must).
  if (failed(lowered) && deviceLimit && stagedOperand) {
    refusal.clear();
    lowered = lowerWithRegisters(module, lowering, dump,
                                 /*stageOperands=*/false, refusal, deviceLimit,
                                 stagedOperand);
  }
  if (staged)
    *staged = succeeded(lowered) && stagedOperand;
  if (failed(lowered)) {
    error = "the register pipeline cannot lower the kernel: " + refusal;
    // Only the target's limits make a kernel unsupported there; any other
    // failure is the compiler's, and the conformance matrix counts it as
    // one (a FAIL, not an UNSUPPORTED cell).
    if (refused)
      *refused = deviceLimit;
    return failure();
  }
  if (dump)
    dump("4-loops.mlir", module);
  return success();
}
