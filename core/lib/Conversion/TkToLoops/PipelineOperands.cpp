//===- PipelineOperands.cpp - dot operands loaded trips ahead ---*- C++ -*-===//
//
// tk-pipeline-operands: software pipelining over num_stages, decided on the
// thread layouts tk-assign-thread-layouts recorded and recorded beside them
// as #tkw.ring on the loads (TilePlacement::placeRings), for
// tk-convert-to-simt to follow and TK_DUMP_IR to show.
//
//===----------------------------------------------------------------------===//

#include "TilePlacement.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/WarpDialect.h"

namespace tk {
#define GEN_PASS_DEF_TKPIPELINEOPERANDS
#include "tk/core/Conversion/Passes.h.inc"
} // namespace tk

using namespace mlir;
using mlir::tk_to_loops::TilePlacement;

namespace {

struct PipelineOperands
    : public tk::impl::TkPipelineOperandsBase<PipelineOperands> {
  using TkPipelineOperandsBase::TkPipelineOperandsBase;
  PipelineOperands(const tk::TkPipelineOperandsOptions &options,
                   std::shared_ptr<const tk::MatrixUnit> matrixUnit,
                   std::shared_ptr<const tk::AsyncCopyUnit> asyncCopy)
      : TkPipelineOperandsBase(options), matrixUnit(std::move(matrixUnit)),
        asyncCopy(std::move(asyncCopy)) {}

  std::shared_ptr<const tk::MatrixUnit> matrixUnit;
  std::shared_ptr<const tk::AsyncCopyUnit> asyncCopy;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (numStages < 1) {
      module.emitError(getArgument()) << ": num-stages must be at least 1, not "
                                      << static_cast<int64_t>(numStages);
      return signalPassFailure();
    }
    TilePlacement::Config config;
    FailureOr<tk::TargetUnits> units = mlir::tk_to_loops::configureForTarget(
        module, getArgument(), target, numWarps, targetUnits,
        {matrixUnit, asyncCopy}, config);
    if (failed(units))
      return signalPassFailure();
    config.numStages = numStages;
    for (tk::FuncOp kernel : module.getOps<tk::FuncOp>()) {
      TilePlacement placement(kernel, config);
      if (!placement.isPlaced()) {
        kernel.emitOpError(getArgument())
            << ": the kernel has no thread layouts; run "
               "tk-assign-thread-layouts first";
        return signalPassFailure();
      }
      if (failed(placement.read()))
        return signalPassFailure();
      placement.placeRings();
      placement.writeRings();
    }
  }
};

} // namespace

std::unique_ptr<Pass>
tk::createPipelineOperandsPass(const TkPipelineOperandsOptions &options,
                               std::shared_ptr<const MatrixUnit> matrixUnit,
                               std::shared_ptr<const AsyncCopyUnit> asyncCopy) {
  return std::make_unique<PipelineOperands>(options, std::move(matrixUnit),
                                            std::move(asyncCopy));
}
