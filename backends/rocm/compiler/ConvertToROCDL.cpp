//===- ConvertToROCDL.cpp - loops to the LLVM dialect with ROCDL ----------===//
//
// One dialect conversion, as MLIR's convert-gpu-to-rocdl does for
// gpu.module, but on the kernels tk-convert-registers-to-simt leaves at module
// level (the CUDA backend's ConvertToNVVM.cpp is the same shape).
//
//===----------------------------------------------------------------------===//

#include "compiler/ConvertToROCDL.h"
#include "common/ApproxExp2.h"

#include "tk/core/Conversion/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToROCDL/MathToROCDL.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/AMDGPU/Utils/Chipset.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace tk::rocm {
namespace {

struct ConvertToROCDL
    : public PassWrapper<ConvertToROCDL, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConvertToROCDL)

  ConvertToROCDL(std::string chip, int64_t threadsPerBlock)
      : chip(std::move(chip)), threadsPerBlock(threadsPerBlock) {}

  StringRef getArgument() const override { return "tk-rocm-convert-to-rocdl"; }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect, ROCDL::ROCDLDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    FailureOr<amdgpu::Chipset> chipset = amdgpu::Chipset::parse(chip);
    if (failed(chipset)) {
      module.emitError("tk-rocm-convert-to-rocdl: unknown chip '")
          << chip << "'";
      return signalPassFailure();
    }
    SmallVector<std::string> kernels;
    module.walk([&](func::FuncOp func) {
      if (func->hasAttr(tk::kLoweredKernelAttrName))
        kernels.push_back(func.getSymName().str());
    });

    LowerToLLVMOptions options(ctx);
    LLVMTypeConverter converter(ctx, options);
    // Workgroup tiles live in LDS (address space 3).
    populateGpuMemorySpaceAttributeConversions(
        converter, [](gpu::AddressSpace space) -> unsigned {
          switch (space) {
          case gpu::AddressSpace::Global:
            return ROCDL::ROCDLDialect::kGlobalMemoryAddressSpace;
          case gpu::AddressSpace::Workgroup:
            return ROCDL::ROCDLDialect::kSharedMemoryAddressSpace;
          case gpu::AddressSpace::Private:
            return ROCDL::ROCDLDialect::kPrivateMemoryAddressSpace;
          }
          llvm_unreachable("unknown gpu address space");
        });
    LLVMConversionTarget target(*ctx);
    configureGpuToROCDLConversionLegality(target);
    RewritePatternSet patterns(ctx);
    // exp, log, sin ... of f64 and of the types AMDGPU has no instruction
    // for become ocml calls, ahead of LLVM intrinsics that would stay
    // unresolved library calls.
    populateMathToROCDLConversionPatterns(converter, patterns, *chipset);
    // ocml's exp2 keeps subnormal results with a compare, two selects and a
    // scaling around v_exp_f32.
    patterns.add<tk::plugin::ApproxExp2Lowering>(
        converter, "llvm.amdgcn.exp2.f32", /*benefit=*/20);
    populateGpuToROCDLConversionPatterns(converter, patterns,
                                         gpu::amd::Runtime::HIP, *chipset);
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    populateMathToLLVMConversionPatterns(converter, patterns);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    populateFuncToLLVMConversionPatterns(converter, patterns);
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns);
    ub::populateUBToLLVMConversionPatterns(converter, patterns);
    // Conversions through workgroup memory move vectors
    // (TargetInfo::workgroupVectorBytes).
    populateVectorToLLVMConversionPatterns(converter, patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();

    OpBuilder builder(ctx);
    std::string flatSize =
        std::to_string(threadsPerBlock) + "," + std::to_string(threadsPerBlock);
    for (const std::string &name : kernels) {
      auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      if (!func) {
        module.emitError("tk-rocm-convert-to-rocdl: kernel '")
            << name << "' was not converted";
        return signalPassFailure();
      }
      func->setAttr(ROCDL::ROCDLDialect::getKernelFuncAttrName(),
                    builder.getUnitAttr());
      // Exactly this many threads: the backend sizes registers for it.
      func->setAttr(ROCDL::ROCDLDialect::getFlatWorkGroupSizeAttrName(),
                    builder.getStringAttr(flatSize));
      func->setAttr(ROCDL::ROCDLDialect::getReqdWorkGroupSizeAttrName(),
                    builder.getDenseI32ArrayAttr(
                        {static_cast<int32_t>(threadsPerBlock), 1, 1}));
      func->removeAttr(tk::kLoweredKernelAttrName);
    }
  }

  std::string chip;
  int64_t threadsPerBlock;
};

} // namespace

std::unique_ptr<Pass> createConvertToROCDLPass(std::string chip,
                                               int64_t threadsPerBlock) {
  return std::make_unique<ConvertToROCDL>(std::move(chip), threadsPerBlock);
}

} // namespace tk::rocm
