//===- TkToSIMT.cpp - tile ops to the code of one GPU thread ---*- C++ -*-===//
//
// tk-convert-to-simt: the GPU form of the loop lowering (KernelLowering with
// the threads of a workgroup). Its warps are the target's: the TargetInfo
// preset names the warp size that lanes, shuffles and per-warp buffers
// follow, so nothing here assumes one.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"
#include "tk/core/Conversion/Passes.h"

namespace tk {
#define GEN_PASS_DEF_TKCONVERTTOSIMT
#include "tk/core/Conversion/Passes.h.inc"
} // namespace tk

using namespace mlir;
using mlir::tk_to_loops::KernelLowering;

namespace {

struct ConvertTkToSIMT : public tk::impl::TkConvertToSIMTBase<ConvertTkToSIMT> {
  using TkConvertToSIMTBase::TkConvertToSIMTBase;
  ConvertTkToSIMT(const tk::TkConvertToSIMTOptions &options,
                  std::shared_ptr<const tk::MatrixUnit> matrixUnit,
                  std::shared_ptr<const tk::AsyncCopyUnit> asyncCopy)
      : TkConvertToSIMTBase(options), matrixUnit(std::move(matrixUnit)),
        asyncCopy(std::move(asyncCopy)) {}

  std::shared_ptr<const tk::MatrixUnit> matrixUnit;
  std::shared_ptr<const tk::AsyncCopyUnit> asyncCopy;

  // With target-units, the dialects the registered units emit (NVVM for
  // mma.sync), loaded before the pass runs.
  void getDependentDialects(DialectRegistry &registry) const override {
    TkConvertToSIMTBase::getDependentDialects(registry);
    if (!targetUnits)
      return;
    std::string error;
    if (std::optional<tk::TargetInfo> info =
            tk::TargetInfo::parse(target, error))
      if (std::optional<tk::TargetUnits> units = tk::lookupTargetUnits(*info))
        if (units->dialects)
          units->dialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    KernelLowering::Config config;
    config.fuseLoadsIntoStores = fuseLoadsIntoStores;
    FailureOr<tk::TargetUnits> units = mlir::tk_to_loops::configureForTarget(
        module, getArgument(), target, numWarps, targetUnits,
        {matrixUnit, asyncCopy}, config);
    if (failed(units))
      return signalPassFailure();
    config.numStages = std::max<int64_t>(1, numStages);
    if (failed(mlir::tk_to_loops::convertKernels(module, config)))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass>
tk::createConvertToSIMTPass(const TkConvertToSIMTOptions &options,
                            std::shared_ptr<const MatrixUnit> matrixUnit,
                            std::shared_ptr<const AsyncCopyUnit> asyncCopy) {
  return std::make_unique<ConvertTkToSIMT>(options, std::move(matrixUnit),
                                           std::move(asyncCopy));
}
