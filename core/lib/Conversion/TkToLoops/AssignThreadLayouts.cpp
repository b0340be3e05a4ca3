//===- AssignThreadLayouts.cpp - where each tile lives ----------*- C++ -*-===//
//
// tk-assign-thread-layouts: records the thread layout of every tile
// (TilePlacement) as attributes, for the loop lowering to follow and for
// TK_DUMP_IR to show. Also what both lowering passes share to configure
// themselves from a TargetInfo preset.
//
//===----------------------------------------------------------------------===//

#include "TilePlacement.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/TargetInfo.h"
#include "tk/core/WarpDialect.h"

namespace tk {
#define GEN_PASS_DEF_TKASSIGNTHREADLAYOUTS
#include "tk/core/Conversion/Passes.h.inc"
} // namespace tk

using namespace mlir;
using mlir::tk_to_loops::TilePlacement;

FailureOr<tk::TargetUnits> mlir::tk_to_loops::configureForTarget(
    ModuleOp module, StringRef pass, StringRef target, int64_t numWarps,
    bool targetUnits, tk::TargetUnits given, TilePlacement::Config &config) {
  if (target.empty())
    return module.emitError(pass)
           << ": target=<preset> is required: its warp size is what the "
              "threads form warps of";
  std::string error;
  std::optional<tk::TargetInfo> info = tk::TargetInfo::parse(target, error);
  if (!info)
    return module.emitError(pass) << ": " << error;
  if (std::optional<std::string> problem = info->workgroupProblem(numWarps))
    return module.emitError(pass) << ": " << *problem;
  config.pass = pass;
  config.numThreads = numWarps * info->warpSize;
  config.warpSize = info->warpSize;
  config.globalAddressSpace = info->globalAddressSpace;
  std::optional<tk::TargetUnits> units =
      targetUnits ? tk::lookupTargetUnits(*info) : std::move(given);
  if (!units)
    return module.emitError(pass)
           << ": target-units: no units are registered for preset '"
           << info->preset
           << "' (its backend has no matrix unit or was not built, or this "
              "program registers none: tk-opt registers every built "
              "backend's)";
  config.matrixUnit = units->matrixUnit.get();
  config.asyncCopy = units->asyncCopy.get();
  return *units;
}

namespace {

struct AssignThreadLayouts
    : public tk::impl::TkAssignThreadLayoutsBase<AssignThreadLayouts> {
  using TkAssignThreadLayoutsBase::TkAssignThreadLayoutsBase;
  AssignThreadLayouts(const tk::TkAssignThreadLayoutsOptions &options,
                      std::shared_ptr<const tk::MatrixUnit> matrixUnit)
      : TkAssignThreadLayoutsBase(options), matrixUnit(std::move(matrixUnit)) {}

  std::shared_ptr<const tk::MatrixUnit> matrixUnit;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TilePlacement::Config config;
    config.pass = getArgument();
    config.fuseLoadsIntoStores = fuseLoadsIntoStores;
    // The CPU form: one host thread a program, nothing in registers.
    tk::TargetUnits units;
    if (target != "cpu") {
      FailureOr<tk::TargetUnits> taken = mlir::tk_to_loops::configureForTarget(
          module, getArgument(), target, numWarps, targetUnits,
          {matrixUnit, nullptr}, config);
      if (failed(taken))
        return signalPassFailure();
      units = *taken;
    }
    for (tk::FuncOp kernel : module.getOps<tk::FuncOp>()) {
      TilePlacement placement(kernel, config);
      // The accumulators tk-hold-accumulators chose to hold and the rows
      // tk-hold-rows chose to keep in registers (none where they did not
      // run): the other layouts are decided around them.
      if (failed(placement.readHeldAccumulators()) ||
          failed(placement.readRowResident()))
        return signalPassFailure();
      placement.place();
      placement.write();
    }
  }
};

} // namespace

std::unique_ptr<Pass> tk::createAssignThreadLayoutsPass(
    const TkAssignThreadLayoutsOptions &options,
    std::shared_ptr<const MatrixUnit> matrixUnit) {
  return std::make_unique<AssignThreadLayouts>(options, std::move(matrixUnit));
}
