//===- ApproxExp2.h - an approximate exp2 as one instruction ----*- C++ -*-===//
//
// The conversion to LLVM of `math.exp2` on f32 with `fastmath<afn>` that the
// backends ending in LLVM share, each with its own instruction.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_COMMON_APPROXEXP2_H_
#define TK_BACKENDS_COMMON_APPROXEXP2_H_

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <string>

namespace tk::plugin {

/// `math.exp2` of f32 with `fastmath<afn>` as the target's one exponential
/// instruction, named by its LLVM intrinsic (NVIDIA's
/// llvm.nvvm.ex2.approx.ftz.f32, MUFU.EX2; AMD's llvm.amdgcn.exp2.f32,
/// v_exp_f32), which gives zero for a subnormal result. The vendor
/// libraries' exp2 keeps subnormal results with a range check and a scaling
/// around every call; approximate exponentials (softmax's, attention's) are
/// summed and scaled, where a subnormal counts as zero. Triton lowers them
/// the same way on both vendors (on AMD with its default flush to zero).
struct ApproxExp2Lowering : mlir::ConvertOpToLLVMPattern<mlir::math::Exp2Op> {
  ApproxExp2Lowering(const mlir::LLVMTypeConverter &converter,
                     std::string intrinsic, mlir::PatternBenefit benefit)
      : ConvertOpToLLVMPattern(converter, benefit),
        intrinsic(std::move(intrinsic)) {}

  mlir::LogicalResult
  matchAndRewrite(mlir::math::Exp2Op op, OpAdaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    if (!op.getType().isF32() ||
        !mlir::arith::bitEnumContainsAll(op.getFastmath(),
                                         mlir::arith::FastMathFlags::afn))
      return rewriter.notifyMatchFailure(op, "not an approximate f32 exp2");
    rewriter.replaceOpWithNewOp<mlir::LLVM::CallIntrinsicOp>(
        op, op.getType(), rewriter.getStringAttr(intrinsic),
        mlir::ValueRange{adaptor.getOperand()});
    return mlir::success();
  }

  std::string intrinsic;
};

} // namespace tk::plugin

#endif // TK_BACKENDS_COMMON_APPROXEXP2_H_
