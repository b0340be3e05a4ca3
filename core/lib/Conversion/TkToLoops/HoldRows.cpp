//===- HoldRows.cpp - per-row values kept in registers ----------*- C++ -*-===//
//
// tk-hold-rows: which 1-D tiles of one value per row of a held product stay
// in the registers of the lanes holding the row
// (TilePlacement::placeRowResident: attention's running max and sum),
// recorded as #tkw.rows for tk-assign-thread-layouts to place the other
// tiles around, tk-convert-to-simt to follow and TK_DUMP_IR to show.
//
//===----------------------------------------------------------------------===//

#include "TilePlacement.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/WarpDialect.h"

namespace tk {
#define GEN_PASS_DEF_TKHOLDROWS
#include "tk/core/Conversion/Passes.h.inc"
} // namespace tk

using namespace mlir;
using mlir::tk_to_loops::TilePlacement;

namespace {

struct HoldRows : public tk::impl::TkHoldRowsBase<HoldRows> {
  using TkHoldRowsBase::TkHoldRowsBase;
  HoldRows(const tk::TkHoldRowsOptions &options,
           std::shared_ptr<const tk::MatrixUnit> matrixUnit)
      : TkHoldRowsBase(options), matrixUnit(std::move(matrixUnit)) {}

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
      if (failed(placement.refuseIfPlaced(getArgument())))
        return signalPassFailure();
      // Decided around the accumulators tk-hold-accumulators chose to hold.
      if (failed(placement.readHeldAccumulators()))
        return signalPassFailure();
      placement.placeRowResident();
      placement.writeRowResident();
    }
  }
};

} // namespace

std::unique_ptr<Pass>
tk::createHoldRowsPass(const TkHoldRowsOptions &options,
                       std::shared_ptr<const MatrixUnit> matrixUnit) {
  return std::make_unique<HoldRows>(options, std::move(matrixUnit));
}
