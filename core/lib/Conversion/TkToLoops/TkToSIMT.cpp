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
#include "tk/core/TargetInfo.h"

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

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (target.empty()) {
      module.emitError("tk-convert-to-simt: target=<preset> is required: "
                       "its warp size is what the threads form warps of");
      return signalPassFailure();
    }
    std::string error;
    std::optional<tk::TargetInfo> info = tk::TargetInfo::parse(target, error);
    if (!info) {
      module.emitError("tk-convert-to-simt: ") << error;
      return signalPassFailure();
    }
    int64_t warps = numWarps;
    if (std::optional<std::string> problem = info->workgroupProblem(warps)) {
      module.emitError("tk-convert-to-simt: ") << *problem;
      return signalPassFailure();
    }
    KernelLowering::Config config;
    config.fuseLoadsIntoStores = fuseLoadsIntoStores;
    config.numThreads = warps * info->warpSize;
    config.warpSize = info->warpSize;
    config.globalAddressSpace = info->globalAddressSpace;
    config.matrixUnit = matrixUnit.get();
    config.asyncCopy = asyncCopy.get();
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
