//===- Lowering.cpp - tk module to the LLVM dialect for NVPTX -------------===//
//
// Core's register pipeline with the CUDA TargetInfo (wgmma through WgmmaUnit
// on sm_90a, mma.sync through MmaSyncUnit from sm_80, cp.async rings), then
// NVVM. Pipelines are built in C++ rather than parsed, so
// nothing lands in MLIR's global pass registry: two plugins linking core's
// passes can live in one process.
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering.h"

#include "compiler/ConvertToNVVM.h"
#include "compiler/CpAsync.h"
#include "compiler/MmaSync.h"
#include "compiler/TargetInfo.h"
#include "compiler/Wgmma.h"
#include <cstdlib>

#include "tk/core/CompileSupport.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/Passes.h"
#include "tk/core/TargetInfo.h"
#include "tk/ir/Dialect.h"

#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include <mutex>

using namespace mlir;

namespace tk::cuda {

namespace {

/// The most registers PTX gives a thread (ptxas' --maxrregcount ceiling).
constexpr int64_t kMaxRegistersPerThread = 255;

/// The units of a GPU of compute capability `computeCapability`: mma.sync
/// from sm_80, wgmma on sm_90a only (not in sm_90's forward-compatible PTX),
/// cp.async from sm_80 (its copies read by wgmma's async proxy on sm_90a).
TargetUnits unitsFor(int computeCapability, bool archSpecific) {
  bool wgmma = computeCapability >= 90 && archSpecific;
  TargetUnits units;
  if (wgmma)
    units.matrixUnit = std::make_shared<WgmmaUnit>();
  else if (computeCapability >= 80)
    units.matrixUnit = std::make_shared<MmaSyncUnit>();
  if (computeCapability >= 80)
    units.asyncCopy = std::make_shared<CpAsyncUnit>(
        /*asyncProxyReaders=*/wgmma);
  units.dialects = [](DialectRegistry &registry) {
    registry.insert<NVVM::NVVMDialect>();
  };
  return units;
}

} // namespace

void registerTargetUnits() {
  tk::registerTargetUnits("cuda-sm80", [](const TargetInfo &) {
    return unitsFor(80, /*archSpecific=*/false);
  });
  tk::registerTargetUnits("cuda-sm90a", [](const TargetInfo &) {
    return unitsFor(90, /*archSpecific=*/true);
  });
}

void registerLoweringDialects(DialectRegistry &registry) {
  tk::registerTkDialects(registry);
  registry.insert<func::FuncDialect, memref::MemRefDialect, LLVM::LLVMDialect,
                  NVVM::NVVMDialect, gpu::GPUDialect, cf::ControlFlowDialect,
                  scf::SCFDialect, arith::ArithDialect, math::MathDialect,
                  ub::UBDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

tk_status lowerToLLVMDialect(ModuleOp module, llvm::StringRef entry,
                             const LoweringOptions &options,
                             LoweredKernel &result, std::string &error,
                             const DumpFn &dump) {
  (void)entry;
  auto stage = [&](llvm::StringRef file) {
    if (dump)
      dump(file, module);
  };
  const Target &target = options.target;
  // The layout passes and the loops look the preset up by name.
  static std::once_flag presets;
  std::call_once(presets, [] { registerTargetPresets(); });
  std::string targetInfo = target.computeCapability >= 90 && target.archSpecific
                               ? "cuda-sm90a"
                               : "cuda-sm80";
  std::optional<TargetInfo> info = TargetInfo::parse(targetInfo, error);
  if (!info)
    return TK_ERROR_INTERNAL;
  int64_t numWarps = std::max(1, options.numWarps);
  int64_t numThreads = numWarps * info->warpSize;
  std::string failedPass;
  // The layout passes plan for a thread's register budget, the preset's 255
  // (PTX's ceiling) or, with an occupancy hint (.minnctapersm), the register
  // file's share of that many programs, which ptxas then holds each thread
  // to. An invariant dot operand that would not fit beside the loop's tiles
  // waits in shared memory instead (tk-dot-operand-layouts); whether that
  // spills less is ptxas's answer, which Compiler.cpp asks.
  if (options.minProgramsPerSM > 0) {
    int64_t budget =
        info->registersPerCU / (numThreads * int64_t(options.minProgramsPerSM));
    budget = std::min<int64_t>(budget, kMaxRegistersPerThread) & ~int64_t(7);
    if (budget > 0)
      targetInfo += ":thread-registers=" + std::to_string(budget);
  }

  // Core's register pipeline (DESIGN §3): num_warps warps of the preset's
  // size, dots on mma.sync or wgmma, cp.async loading operands trips
  // ahead into rings. A kernel it refuses is unsupported.
  SIMTLowering lowering;
  lowering.target = targetInfo;
  lowering.numWarps = numWarps;
  lowering.stageOperands = options.stageOperands;
  TargetUnits units = unitsFor(target.computeCapability, target.archSpecific);
  lowering.matrixUnit = units.matrixUnit;
  lowering.asyncCopy = units.asyncCopy;
  if (lowering.asyncCopy)
    lowering.numStages = std::max(1, options.numStages);
  if (lowering.matrixUnit) {
    // The unit creates NVVM ops inside tk-convert-registers-to-simt, which
    // does not know to load the dialect.
    module->getContext()->getOrLoadDialect<NVVM::NVVMDialect>();
  }
  bool refused = false;
  if (failed(lowerToSIMT(module, lowering, dump, error, &refused,
                         &result.stagedOperands))) {
    error = "tk-cuda: " + error;
    return refused ? TK_ERROR_UNSUPPORTED : TK_ERROR_COMPILATION;
  }
  result.threadsPerBlock = static_cast<int>(numThreads);

  if (failed(runPasses(module, failedPass, [&](OpPassManager &pm) {
        pm.addPass(createSCFToControlFlowPass());
        // fp8 is computed in f32 and moves as bytes; its conversions become
        // integer arithmetic (NVPTX's cvt to fp8 saturates, as tk's
        // conversions do not; and LLVM has no fp8 type).
        pm.addPass(createTkExpandFp8());
        pm.addPass(
            createConvertToNVVMPass(numThreads, options.minProgramsPerSM));
        // NVVM ops without an LLVM intrinsic (wgmma.mma_async) become
        // inline PTX.
        pm.addPass(createConvertNVVMToLLVMPass());
        pm.addPass(createReconcileUnrealizedCastsPass());
      }))) {
    error = "tk-cuda: lowering to NVVM failed in pass '" + failedPass + "'";
    return TK_ERROR_COMPILATION;
  }
  stage("5-llvm-dialect.mlir");
  return TK_SUCCESS;
}

} // namespace tk::cuda
