//===- ThreadLayoutPipeline.cpp - the thread-level decisions ----*- C++ -*-===//
//
// The passes every GPU backend runs, in this order, before
// tk-convert-to-simt, and the stages every GPU backend dumps: one place, so
// that the backends' pipelines and dumps cannot drift apart.
//
//===----------------------------------------------------------------------===//

#include "tk/core/CompileSupport.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/Passes.h"
#include "tk/ir/Dialect.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tk::addThreadLayoutPasses(mlir::OpPassManager &pm,
                               const TkConvertToSIMTOptions &simt,
                               std::shared_ptr<const MatrixUnit> matrixUnit,
                               std::shared_ptr<const AsyncCopyUnit> asyncCopy) {
  // Loop invariants out first: the layouts and the lowering's pointer walks
  // are decided on the hoisted kernel.
  pm.addNestedPass<tk::FuncOp>(tk::createTkHoistLoopInvariants());
  // The held accumulators first: where every other tile lives depends on
  // them.
  TkHoldAccumulatorsOptions holding;
  holding.target = simt.target;
  holding.numWarps = simt.numWarps;
  pm.addPass(createHoldAccumulatorsPass(holding, matrixUnit));
  // Then the values per row of the products kept in registers.
  TkHoldRowsOptions rows;
  rows.target = simt.target;
  rows.numWarps = simt.numWarps;
  pm.addPass(createHoldRowsPass(rows, matrixUnit));
  TkAssignThreadLayoutsOptions layouts;
  layouts.target = simt.target;
  layouts.numWarps = simt.numWarps;
  layouts.fuseLoadsIntoStores = simt.fuseLoadsIntoStores;
  pm.addPass(createAssignThreadLayoutsPass(layouts, matrixUnit));
  if (!asyncCopy)
    return;
  TkPipelineOperandsOptions pipelining;
  pipelining.target = simt.target;
  pipelining.numWarps = simt.numWarps;
  pipelining.numStages = simt.numStages;
  pm.addPass(createPipelineOperandsPass(pipelining, std::move(matrixUnit),
                                        std::move(asyncCopy)));
}

LogicalResult tk::lowerToSIMT(ModuleOp module, const SIMTLowering &lowering,
                              const StageDumpFn &dump, std::string &error) {
  const TkConvertToSIMTOptions &simt = lowering.simt;
  std::string failedPass;
  // Which warp, lane and register holds each element of each tile
  // (TK_DUMP_IR shows it); tk-convert-to-simt follows it.
  if (failed(runPasses(module, failedPass, [&](OpPassManager &pm) {
        addThreadLayoutPasses(pm, simt, lowering.matrixUnit,
                              lowering.asyncCopy);
      }))) {
    error = "assigning thread layouts failed in pass '" + failedPass + "'";
    return failure();
  }
  if (dump)
    dump("3-thread-layouts.mlir", module);
  if (failed(runPasses(module, failedPass, [&](OpPassManager &pm) {
        pm.addPass(createConvertToSIMTPass(simt, lowering.matrixUnit,
                                           lowering.asyncCopy));
        pm.addPass(createCanonicalizerPass());
        pm.addPass(createCSEPass());
        if (lowering.shareWorkgroupMemory)
          pm.addPass(createTkShareWorkgroupMemory());
      }))) {
    error = "lowering to loops failed in pass '" + failedPass + "'";
    return failure();
  }
  if (dump)
    dump("4-loops.mlir", module);
  return success();
}
