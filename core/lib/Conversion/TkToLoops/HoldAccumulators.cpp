//===- HoldAccumulators.cpp - accumulators kept in registers ----*- C++ -*-===//
//
// tk-hold-accumulators: which loop-carried dot accumulators the backend's
// matrix unit keeps in its registers across trips
// (TilePlacement::placeHeldAccumulators), recorded as #tkw.accumulator in
// the loops' tkw.iter_layouts for tk-assign-thread-layouts to place the
// other tiles around, tk-convert-to-simt to follow and TK_DUMP_IR to show.
//
//===----------------------------------------------------------------------===//

#include "TilePlacement.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/WarpDialect.h"

namespace tk {
#define GEN_PASS_DEF_TKHOLDACCUMULATORS
#include "tk/core/Conversion/Passes.h.inc"
} // namespace tk

using namespace mlir;
using mlir::tk_to_loops::TilePlacement;

namespace {

struct HoldAccumulators
    : public tk::impl::TkHoldAccumulatorsBase<HoldAccumulators> {
  using TkHoldAccumulatorsBase::TkHoldAccumulatorsBase;
  HoldAccumulators(const tk::TkHoldAccumulatorsOptions &options,
                   std::shared_ptr<const tk::MatrixUnit> matrixUnit)
      : TkHoldAccumulatorsBase(options), matrixUnit(std::move(matrixUnit)) {}

  std::shared_ptr<const tk::MatrixUnit> matrixUnit;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TilePlacement::Config config;
    FailureOr<tk::TargetUnits> units = mlir::tk_to_loops::configureForTarget(
        module, getArgument(), target, numWarps, targetUnits,
        {matrixUnit, nullptr}, config);
    if (failed(units))
      return signalPassFailure();
    for (tk::FuncOp kernel : module.getOps<tk::FuncOp>()) {
      TilePlacement placement(kernel, config);
      // The other layouts were decided around the accumulators held then.
      if (failed(placement.refuseIfPlaced(getArgument())))
        return signalPassFailure();
      placement.placeHeldAccumulators();
      placement.writeHeldAccumulators();
    }
  }
};

} // namespace

std::unique_ptr<Pass>
tk::createHoldAccumulatorsPass(const TkHoldAccumulatorsOptions &options,
                               std::shared_ptr<const MatrixUnit> matrixUnit) {
  return std::make_unique<HoldAccumulators>(options, std::move(matrixUnit));
}
