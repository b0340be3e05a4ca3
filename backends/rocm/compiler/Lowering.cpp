//===- Lowering.cpp - tk module to the LLVM dialect for AMDGPU ------------===//
//
// Core's loops in their GPU form at the target's wave size (MFMA or WMMA
// through MatrixCores.h where the target has them), LDS shared between tiles
// whose lives do not overlap, then ROCDL. Pipelines are built in C++, so
// nothing lands in MLIR's global pass registry.
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering.h"
#include "compiler/ConvertToROCDL.h"
#include "compiler/MatrixCores.h"
#include "compiler/TargetInfo.h"
#include "tk/core/Conversion/LayoutMatrixUnit.h"
#include "tk/core/Passes.h"

#include "tk/core/CompileSupport.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/TargetInfo.h"
#include "tk/ir/Dialect.h"

#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include <mutex>

using namespace mlir;

namespace tk::rocm {

void registerTargetUnits() {
  auto units = [](const TargetInfo &info) {
    return TargetUnits{makeMatrixUnit(info), nullptr, nullptr};
  };
  tk::registerTargetUnits("amd-cdna3", units);
  tk::registerTargetUnits("amd-cdna2", units);
  tk::registerTargetUnits("amd-rdna3", units);
}

void registerLoweringDialects(DialectRegistry &registry) {
  tk::registerTkDialects(registry);
  registry.insert<func::FuncDialect, memref::MemRefDialect, LLVM::LLVMDialect,
                  ROCDL::ROCDLDialect, gpu::GPUDialect, cf::ControlFlowDialect,
                  scf::SCFDialect, arith::ArithDialect, math::MathDialect,
                  ub::UBDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerROCDLDialectTranslation(registry);
}

tk_status lowerToLLVMDialect(ModuleOp module, const LoweringOptions &options,
                             LoweredKernel &result, std::string &error,
                             const DumpFn &dump) {
  auto stage = [&](llvm::StringRef file) {
    if (dump)
      dump(file, module);
  };
  static std::once_flag presets;
  std::call_once(presets, [] { registerTargetPresets(); });
  const Target &target = options.target;
  std::optional<TargetInfo> info = TargetInfo::parse(target.preset, error);
  if (!info)
    return TK_ERROR_INTERNAL;
  int64_t numWarps = std::max(1, options.numWarps);
  if (std::optional<std::string> problem = info->workgroupProblem(numWarps)) {
    error = *problem;
    return TK_ERROR_UNSUPPORTED;
  }
  int64_t numThreads = numWarps * info->warpSize;
  result.ldsBytesLimit = info->sharedMemoryPerBlock;
  std::string failedPass;

  // Core's register pipeline (DESIGN §3) at wave64 or wave32, dots on MFMA
  // and WMMA from the lanes' fragments; 64 KiB of LDS a workgroup, which
  // tiles whose lives do not overlap share (tk-allocate-shared-memory). A
  // kernel it refuses is unsupported.
  SIMTLowering lowering;
  lowering.target = target.preset;
  lowering.numWarps = numWarps;
  lowering.matrixUnit = makeMatrixUnit(*info);
  lowering.stageOperands = options.stageOperands;
  result.matrixDots = countMatrixDots(module, *info);
  bool refused = false;
  if (failed(lowerToSIMT(module, lowering, dump, error, &refused,
                         &result.stagedOperands)))
    return refused ? TK_ERROR_UNSUPPORTED : TK_ERROR_COMPILATION;
  result.threadsPerBlock = static_cast<int>(numThreads);

  if (failed(runPasses(module, failedPass, [&](OpPassManager &pm) {
        pm.addPass(createSCFToControlFlowPass());
        // fp8 computes in f32 and converts with integer code, as on every
        // backend (gfx942's fp8 conversions and MFMA are not used).
        pm.addPass(createTkExpandFp8());
        pm.addPass(createConvertToROCDLPass(target.arch, numThreads));
        pm.addPass(createReconcileUnrealizedCastsPass());
      }))) {
    error = "lowering to ROCDL failed in pass '" + failedPass + "'";
    return TK_ERROR_COMPILATION;
  }
  stage("5-llvm-dialect.mlir");
  return TK_SUCCESS;
}

} // namespace tk::rocm
