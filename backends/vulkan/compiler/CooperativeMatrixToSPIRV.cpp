//===- CooperativeMatrixToSPIRV.cpp - tkw matrices as KHR ones -----------===//
//
// Each `!tkw.matrix` is one `!spirv.coopmatrix` at subgroup scope, of the
// same element type: bf16 stays bf16 here (SPV_KHR_bfloat16), where bf16
// scalars are their 16 bits, and a signed integer's product says so in its
// operands (SPIR-V takes them unsigned otherwise). Loads and stores go
// through OpCooperativeMatrixLoadKHR/StoreKHR, row-major (a broadcast
// column's load column-major), at a stride counted in the buffer's
// elements: the extension lets the buffer's element differ from the
// matrix's (16-byte words of f16 or bf16). Element-wise float operations
// are SPIR-V's own arithmetic instructions on the matrices.
//
//===----------------------------------------------------------------------===//

#include "compiler/CooperativeMatrixToSPIRV.h"

#include "tk/core/WarpDialect.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace tk::vulkan {

namespace {

spirv::CooperativeMatrixType convertMatrix(warp::MatrixType type) {
  auto use = llvm::StringSwitch<spirv::CooperativeMatrixUseKHR>(type.getUse())
                 .Case("a", spirv::CooperativeMatrixUseKHR::MatrixA)
                 .Case("b", spirv::CooperativeMatrixUseKHR::MatrixB)
                 .Default(spirv::CooperativeMatrixUseKHR::MatrixAcc);
  return spirv::CooperativeMatrixType::get(type.getElementType(),
                                           type.getRows(), type.getCols(),
                                           spirv::Scope::Subgroup, use);
}

spirv::ConstantOp strideConstant(OpBuilder &b, Location loc, int64_t stride) {
  IntegerType i32 = b.getI32Type();
  return spirv::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(stride));
}

/// The row-major matrix access of `op` (a load or a store) at its buffer's
/// element `index`: the element's pointer, the stride as an i32 constant.
template <typename OpTy>
std::pair<Value, spirv::ConstantOp>
rowMajorAccess(const SPIRVTypeConverter &converter, OpTy op,
               typename OpTy::Adaptor adaptor, OpBuilder &b) {
  Value pointer = spirv::getElementPtr(converter, op.getBuffer().getType(),
                                       adaptor.getBuffer(), adaptor.getIndex(),
                                       op.getLoc(), b);
  return {pointer, pointer ? strideConstant(b, op.getLoc(), op.getStride())
                           : spirv::ConstantOp()};
}

/// `From` as the SPIR-V op `To` of the converted matrix type and the same
/// operands: a splat's `OpCompositeConstruct` of its one scalar, a float
/// conversion's `OpFConvert`.
template <typename From, typename To>
struct OneToOneLowering : OpConversionPattern<From> {
  using OpConversionPattern<From>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(From op, typename From::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<To>(op, TypeRange{convertMatrix(op.getType())},
                                    adaptor.getOperands());
    return success();
  }
};

struct LoadLowering : OpConversionPattern<warp::MatrixLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(warp::MatrixLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto [pointer, stride] = rowMajorAccess(
        *getTypeConverter<SPIRVTypeConverter>(), op, adaptor, rewriter);
    if (!pointer)
      return rewriter.notifyMatchFailure(op, "a buffer without a pointer");
    rewriter.replaceOpWithNewOp<spirv::KHRCooperativeMatrixLoadOp>(
        op, convertMatrix(op.getType()), pointer, stride,
        op.getColumnMajor() ? spirv::CooperativeMatrixLayoutKHR::ColumnMajor
                            : spirv::CooperativeMatrixLayoutKHR::RowMajor);
    return success();
  }
};

struct StoreLowering : OpConversionPattern<warp::MatrixStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(warp::MatrixStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto [pointer, stride] = rowMajorAccess(
        *getTypeConverter<SPIRVTypeConverter>(), op, adaptor, rewriter);
    if (!pointer)
      return rewriter.notifyMatchFailure(op, "a buffer without a pointer");
    rewriter.replaceOpWithNewOp<spirv::KHRCooperativeMatrixStoreOp>(
        op, pointer, adaptor.getValue(), stride,
        spirv::CooperativeMatrixLayoutKHR::RowMajor);
    return success();
  }
};

/// An element-wise operation as SPIR-V's arithmetic instruction on the
/// matrices (OpFAdd, OpFSub, OpFMul, OpFDiv take cooperative matrices of
/// one type, element by element).
struct ElementwiseLowering : OpConversionPattern<warp::MatrixElementwiseOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(warp::MatrixElementwiseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = convertMatrix(op.getType());
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    switch (op.getKind()) {
    case warp::MatrixElementwiseKind::addf:
      rewriter.replaceOpWithNewOp<spirv::FAddOp>(op, type, lhs, rhs);
      break;
    case warp::MatrixElementwiseKind::subf:
      rewriter.replaceOpWithNewOp<spirv::FSubOp>(op, type, lhs, rhs);
      break;
    case warp::MatrixElementwiseKind::mulf:
      rewriter.replaceOpWithNewOp<spirv::FMulOp>(op, type, lhs, rhs);
      break;
    case warp::MatrixElementwiseKind::divf:
      rewriter.replaceOpWithNewOp<spirv::FDivOp>(op, type, lhs, rhs);
      break;
    }
    return success();
  }
};

struct MultiplyAddLowering : OpConversionPattern<warp::MatrixMultiplyAddOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(warp::MatrixMultiplyAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // tk's integer dots are s8 x s8 -> s32, the product the device lists.
    spirv::CooperativeMatrixOperandsKHRAttr operands;
    if (op.getA().getType().getElementType().isSignedInteger()) {
      using Operands = spirv::CooperativeMatrixOperandsKHR;
      operands = spirv::CooperativeMatrixOperandsKHRAttr::get(
          op.getContext(), Operands::ASigned | Operands::BSigned |
                               Operands::CSigned | Operands::ResultSigned);
    }
    rewriter.replaceOpWithNewOp<spirv::KHRCooperativeMatrixMulAddOp>(
        op, adaptor.getAcc().getType(), adaptor.getA(), adaptor.getB(),
        adaptor.getAcc(), operands);
    return success();
  }
};

} // namespace

void populateCooperativeMatrixToSPIRVPatterns(SPIRVTypeConverter &converter,
                                              RewritePatternSet &patterns) {
  converter.addConversion(
      [](warp::MatrixType type) -> Type { return convertMatrix(type); });
  patterns
      .add<OneToOneLowering<warp::MatrixSplatOp, spirv::CompositeConstructOp>,
           OneToOneLowering<warp::MatrixConvertOp, spirv::FConvertOp>,
           LoadLowering, StoreLowering, ElementwiseLowering,
           MultiplyAddLowering>(converter, patterns.getContext());
}

} // namespace tk::vulkan
