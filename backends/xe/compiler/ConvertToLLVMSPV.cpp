//===- ConvertToLLVMSPV.cpp - loops to the LLVM dialect for SPIR-V --------===//
//
// One dialect conversion, as MLIR's convert-gpu-to-llvm-spv does for
// gpu.module, but on the kernels tk-convert-registers-to-simt leaves at module
// level (the ROCm backend's ConvertToROCDL.cpp is the same shape). MLIR's
// patterns turn gpu ops into calls of OpenCL builtins (get_local_id,
// sub_group_shuffle_xor, barrier), which LLVM's SPIR-V backend then turns
// into SPIR-V built-in variables and instructions.
//
//===----------------------------------------------------------------------===//

#include "compiler/ConvertToLLVMSPV.h"

#include "tk/core/Conversion/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToLLVMSPV/GPUToLLVMSPVPass.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace tk::xe {
namespace {

/// The Itanium code of a float type in OpenCL's builtin names.
std::string floatCode(Type type) {
  if (type.isF32())
    return "f";
  if (type.isF64())
    return "d";
  if (type.isF16())
    return "Dh";
  return "";
}

/// A math op LLVM has no intrinsic for, as a call of OpenCL's function of
/// that name (`_Z4tanhf`); LLVM's SPIR-V backend recognises the name and
/// emits the OpenCL.std extended instruction.
template <typename MathOp>
struct OpenCLMathCall : public ConvertOpToLLVMPattern<MathOp> {
  OpenCLMathCall(const LLVMTypeConverter &converter, StringRef name)
      : ConvertOpToLLVMPattern<MathOp>(converter, /*benefit=*/0),
        name(name.str()) {}

  LogicalResult
  matchAndRewrite(MathOp op, typename MathOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = op.getType();
    std::string code = floatCode(type);
    if (code.empty())
      return rewriter.notifyMatchFailure(op, "not a scalar float");
    std::string mangled = "_Z" + std::to_string(name.size()) + name;
    // A second argument of the same type is the substitution "S_" only for
    // non-builtin types; f, d and Dh are builtin, so they repeat.
    for (size_t i = 0; i < op->getNumOperands(); ++i)
      mangled += code;
    auto module = op->template getParentOfType<ModuleOp>();
    SmallVector<Type> argTypes(op->getNumOperands(), type);
    auto fnType = LLVM::LLVMFunctionType::get(type, argTypes);
    auto callee = module.template lookupSymbol<LLVM::LLVMFuncOp>(mangled);
    if (!callee) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(module.getBody());
      callee = LLVM::LLVMFuncOp::create(rewriter, op.getLoc(), mangled, fnType);
      callee.setCConv(LLVM::CConv::SPIR_FUNC);
      callee.setNoUnwind(true);
      callee.setWillReturn(true);
    }
    auto call = LLVM::CallOp::create(rewriter, op.getLoc(), callee,
                                     adaptor.getOperands());
    call.setCConv(LLVM::CConv::SPIR_FUNC);
    rewriter.replaceOp(op, call.getResults());
    return success();
  }

  std::string name;
};

struct ConvertToLLVMSPV
    : public PassWrapper<ConvertToLLVMSPV, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConvertToLLVMSPV)

  explicit ConvertToLLVMSPV(int subgroupSize) : subgroupSize(subgroupSize) {}

  StringRef getArgument() const override { return "tk-xe-convert-to-llvm-spv"; }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    OpBuilder builder(ctx);
    SmallVector<std::string> kernels;
    module.walk([&](func::FuncOp func) {
      if (!func->hasAttr(tk::kLoweredKernelAttrName))
        return;
      kernels.push_back(func.getSymName().str());
      // The patterns of sub_group_shuffle check a shuffle's width against
      // the subgroup size the function requires; the attribute moves to the
      // llvm.func with the conversion.
      func->setAttr("intel_reqd_sub_group_size",
                    builder.getI32IntegerAttr(subgroupSize));
    });

    LowerToLLVMOptions options(ctx);
    LLVMTypeConverter converter(ctx, options);
    // Global memory is OpenCL's global (1), SLM its local (3).
    populateGpuMemorySpaceAttributeConversions(converter);
    LLVMConversionTarget target(*ctx);
    target.addIllegalDialect<gpu::GPUDialect, math::MathDialect>();
    RewritePatternSet patterns(ctx);
    populateGpuToLLVMSPVConversionPatterns(converter, patterns);
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    populateMathToLLVMConversionPatterns(converter, patterns);
    patterns.add<OpenCLMathCall<math::ErfOp>>(converter, "erf");
    patterns.add<OpenCLMathCall<math::ErfcOp>>(converter, "erfc");
    patterns.add<OpenCLMathCall<math::TanhOp>>(converter, "tanh");
    patterns.add<OpenCLMathCall<math::TanOp>>(converter, "tan");
    patterns.add<OpenCLMathCall<math::AtanOp>>(converter, "atan");
    patterns.add<OpenCLMathCall<math::Atan2Op>>(converter, "atan2");
    patterns.add<OpenCLMathCall<math::AsinOp>>(converter, "asin");
    patterns.add<OpenCLMathCall<math::AcosOp>>(converter, "acos");
    patterns.add<OpenCLMathCall<math::SinhOp>>(converter, "sinh");
    patterns.add<OpenCLMathCall<math::CoshOp>>(converter, "cosh");
    patterns.add<OpenCLMathCall<math::AsinhOp>>(converter, "asinh");
    patterns.add<OpenCLMathCall<math::AcoshOp>>(converter, "acosh");
    patterns.add<OpenCLMathCall<math::AtanhOp>>(converter, "atanh");
    patterns.add<OpenCLMathCall<math::ExpM1Op>>(converter, "expm1");
    patterns.add<OpenCLMathCall<math::Log1pOp>>(converter, "log1p");
    patterns.add<OpenCLMathCall<math::CbrtOp>>(converter, "cbrt");
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

    for (const std::string &name : kernels) {
      auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      if (!func) {
        module.emitError("tk-xe-convert-to-llvm-spv: kernel '")
            << name << "' was not converted";
        return signalPassFailure();
      }
      func.setCConv(LLVM::CConv::SPIR_KERNEL);
      func.setIntelReqdSubGroupSize(subgroupSize);
      func->removeAttr(tk::kLoweredKernelAttrName);
    }
  }

  int subgroupSize;
};

} // namespace

std::unique_ptr<Pass> createConvertToLLVMSPVPass(int subgroupSize) {
  return std::make_unique<ConvertToLLVMSPV>(subgroupSize);
}

} // namespace tk::xe
