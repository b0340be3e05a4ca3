//===- Lowering.cpp - tk module to the LLVM dialect for SPIR-V ------------===//
//
// Core's loops in their GPU form at the target's subgroup size (DPAS
// through Dpas.h where the target has it), SLM shared between tiles whose
// lives do not overlap, then the LLVM dialect with OpenCL builtins.
// Pipelines are built in C++, so nothing lands in MLIR's global pass
// registry.
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering.h"
#include "compiler/BFloat16AsInt.h"
#include "compiler/ConvertToLLVMSPV.h"
#include "compiler/Dpas.h"
#include "compiler/TargetInfo.h"

#include "tk/core/CompileSupport.h"
#include "tk/core/Conversion/LayoutMatrixUnit.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/Passes.h"
#include "tk/core/TargetInfo.h"
#include "tk/ir/Dialect.h"

#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include <mutex>

using namespace mlir;

namespace tk::xe {

void registerTargetUnits() {
  auto units = [](const TargetInfo &info) {
    return TargetUnits{makeDpasUnit(info), nullptr, nullptr};
  };
  tk::registerTargetUnits("intel-pvc", units);
  tk::registerTargetUnits("intel-dg2", units);
}

void registerLoweringDialects(DialectRegistry &registry) {
  tk::registerTkDialects(registry);
  registry.insert<func::FuncDialect, memref::MemRefDialect, LLVM::LLVMDialect,
                  gpu::GPUDialect, cf::ControlFlowDialect, scf::SCFDialect,
                  arith::ArithDialect, math::MathDialect, ub::UBDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
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
  // num_warps counts warps of 32 lanes, as on Vulkan: pvc's subgroups of 16
  // run 2 a warp, dg2's of 8 run 4, so that a work-item holds the share of
  // each tile the kernel was tuned for. At 1 subgroup a warp, tiles of 128
  // and 256 elements a work-item spilled 6-92 KB a thread (IGC, even in
  // pvc's large-GRF mode) or took up to 280 KB of SLM on the older
  // lowering.
  int64_t numWarps = getSubgroupsForWarps(options.numWarps, info->warpSize,
                                          info->maxThreadsPerBlock);
  if (std::optional<std::string> problem = info->workgroupProblem(numWarps)) {
    error = *problem;
    return TK_ERROR_UNSUPPORTED;
  }
  int64_t numThreads = numWarps * info->warpSize;
  std::string failedPass;

  // Core's register pipeline (DESIGN §3) at the preset's subgroup size,
  // dots on DPAS from the work-items' fragments (as on rocm and vulkan); a
  // kernel it refuses (SLM beyond the workgroup's) is unsupported. A tile
  // of more elements a work-item than the register file holds spills to
  // scratch, as Triton's Intel code does: pvc retries in its large-GRF
  // mode (buildNativeLeastSpills). The older lowering's SLM tiles instead
  // refused the H100-sized bench tiles (163-311 KB of SLM) that compile
  // here (docs/decisions.md, "Xe moves to the register pipeline").
  SIMTLowering lowering;
  lowering.target = target.preset;
  lowering.numWarps = numWarps;
  lowering.matrixUnit = makeDpasUnit(*info);
  result.matrixDots = countMatrixDots(module, *info);
  result.slmLimit = info->sharedMemoryPerBlock;
  bool refused = false;
  if (failed(lowerToSIMT(module, lowering, dump, error, &refused)))
    return refused ? TK_ERROR_UNSUPPORTED : TK_ERROR_COMPILATION;
  result.threadsPerBlock = static_cast<int>(numThreads);

  if (failed(runPasses(module, failedPass, [&](OpPassManager &pm) {
        // fp8 computes in f32 and converts with integer code (tk-expand-fp8),
        // as on every backend.
        pm.addPass(createTkExpandFp8());
        // bf16 computes in f32 and converts with integer code, so that
        // bf16 values are only moved (BFloat16AsInt.h).
        arith::ArithEmulateUnsupportedFloatsOptions emulate;
        emulate.sourceTypeStrs = {"bf16"};
        pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
        math::MathExtendToSupportedTypesOptions extend;
        extend.extraTypeStrs = {"f16"};
        pm.addPass(math::createMathExtendToSupportedTypes(extend));
        arith::ArithExpandOpsPassOptions expand;
        expand.includeBf16 = true;
        pm.addPass(arith::createArithExpandOpsPass(expand));
        pm.addPass(createSCFToControlFlowPass());
        pm.addPass(createConvertToLLVMSPVPass(target.subgroupSize));
        pm.addPass(createReconcileUnrealizedCastsPass());
        pm.addPass(createBFloat16AsIntPass());
      }))) {
    error = "lowering to the LLVM dialect failed in pass '" + failedPass + "'";
    return TK_ERROR_COMPILATION;
  }
  stage("5-llvm-dialect.mlir");
  return TK_SUCCESS;
}

} // namespace tk::xe
