//===- ThreadLayoutPipeline.cpp - the thread-level decisions ----*- C++ -*-===//
//
// The passes every GPU backend runs, in this order, before
// tk-convert-to-simt: one place, so that the backends' pipelines cannot
// drift apart.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Conversion/Passes.h"
#include "tk/core/Passes.h"
#include "tk/ir/Dialect.h"

#include "mlir/Pass/PassManager.h"

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
