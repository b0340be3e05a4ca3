//===- ConvertToNVVM.cpp - loops to the LLVM dialect with NVVM ------------===//
//
// One dialect conversion, as MLIR's convert-gpu-to-nvvm does for gpu.module,
// but on the kernels tk-convert-registers-to-simt leaves at module level.
//
//===----------------------------------------------------------------------===//

#include "compiler/ConvertToNVVM.h"
#include "common/ApproxExp2.h"

#include "tk/core/Conversion/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace tk::cuda {
namespace {

/// `gpu.subgroup_broadcast` of a 32-bit value from a given lane as
/// `shfl.sync.idx` over the whole warp: ptxas treats its result, and what
/// derives from it, as uniform (the register pipeline's warp index). MLIR's
/// GPU-to-NVVM patterns have no lowering of the op.
struct SubgroupBroadcastLowering
    : ConvertOpToLLVMPattern<gpu::SubgroupBroadcastOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(gpu::SubgroupBroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getBroadcastType() != gpu::BroadcastType::specific_lane ||
        !op.getType().isInteger(32))
      return rewriter.notifyMatchFailure(
          op, "only an i32 broadcast from a given lane");
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    Value allLanes = LLVM::ConstantOp::create(rewriter, loc, i32, -1);
    // shfl's c operand: no segment mask, the last lane 31.
    Value clamp = LLVM::ConstantOp::create(rewriter, loc, i32, 31);
    rewriter.replaceOpWithNewOp<NVVM::ShflOp>(
        op, i32, allLanes, adaptor.getSrc(), adaptor.getLane(), clamp,
        NVVM::ShflKind::idx, /*return_value_and_is_valid=*/UnitAttr());
    return success();
  }
};

struct ConvertToNVVM
    : public PassWrapper<ConvertToNVVM, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConvertToNVVM)

  ConvertToNVVM(int64_t threadsPerBlock, int64_t minBlocksPerSM)
      : threadsPerBlock(threadsPerBlock), minBlocksPerSM(minBlocksPerSM) {}

  StringRef getArgument() const override { return "tk-cuda-convert-to-nvvm"; }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect, NVVM::NVVMDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<std::string> kernels;
    module.walk([&](func::FuncOp func) {
      if (func->hasAttr(tk::kLoweredKernelAttrName))
        kernels.push_back(func.getSymName().str());
    });

    LowerToLLVMOptions options(ctx);
    LLVMTypeConverter converter(ctx, options);
    configureGpuToNVVMTypeConverter(converter);
    LLVMConversionTarget target(*ctx);
    configureGpuToNVVMConversionLegality(target);
    RewritePatternSet patterns(ctx);
    // exp, log, sqrt, sin ... as libdevice calls, ahead of LLVM intrinsics
    // that NVPTX cannot select.
    populateLibDeviceConversionPatterns(converter, patterns,
                                        /*benefit=*/10);
    // libdevice's __nv_exp2f is ex2.approx.f32, to which ptxas adds a range
    // check and two multiplications that keep subnormal results.
    patterns.add<tk::plugin::ApproxExp2Lowering>(
        converter, "llvm.nvvm.ex2.approx.ftz.f32", /*benefit=*/20);
    patterns.add<SubgroupBroadcastLowering>(converter);
    populateGpuToNVVMConversionPatterns(converter, patterns);
    // Ceil and floor divisions have no LLVM instruction. The float
    // minimum and maximum keep theirs: llvm.maxnum / llvm.maximum become
    // one max.f32 / max.NaN.f32 where arith-expand-ops would leave two
    // compares and two selects.
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    populateMathToLLVMConversionPatterns(converter, patterns);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    populateFuncToLLVMConversionPatterns(converter, patterns);
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns);
    ub::populateUBToLLVMConversionPatterns(converter, patterns);
    // The register pipeline's vectors of workgroup memory (a dot's operands).
    populateVectorToLLVMConversionPatterns(converter, patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();

    OpBuilder builder(ctx);
    for (const std::string &name : kernels) {
      auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      if (!func) {
        module.emitError("tk-cuda-convert-to-nvvm: kernel '")
            << name << "' was not converted";
        return signalPassFailure();
      }
      func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(),
                    builder.getUnitAttr());
      func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                    builder.getDenseI32ArrayAttr(
                        {static_cast<int32_t>(threadsPerBlock), 1, 1}));
      if (minBlocksPerSM > 0)
        func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      builder.getI32IntegerAttr(minBlocksPerSM));
      func->removeAttr(tk::kLoweredKernelAttrName);
    }
  }

  int64_t threadsPerBlock;
  int64_t minBlocksPerSM;
};

} // namespace

std::unique_ptr<Pass> createConvertToNVVMPass(int64_t threadsPerBlock,
                                              int64_t minBlocksPerSM) {
  return std::make_unique<ConvertToNVVM>(threadsPerBlock, minBlocksPerSM);
}

} // namespace tk::cuda
