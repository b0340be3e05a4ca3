//===- MatrixCores.cpp - tk.dot on AMD's MFMA and WMMA --------------------===//
//
// AMD's half of the layout-driven matrix unit: how a lane passes its
// operand elements to MFMA and WMMA, and the call of the LLVM intrinsic
// `llvm.amdgcn.<preset name>`.
//
//===----------------------------------------------------------------------===//

#include "compiler/MatrixCores.h"
#include "tk/core/Conversion/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace tk::rocm {

namespace {
bool isWmma(const MatrixIntrinsic &intrinsic) {
  return llvm::StringRef(intrinsic.name).starts_with("wmma.");
}
} // namespace

Type MatrixCoreUnit::operandType(OpBuilder &b, const MatrixIntrinsic &intrinsic,
                                 unsigned, Type element, int64_t count) const {
  if (count == 1)
    return element;
  if (element.isBF16())
    return VectorType::get({count}, b.getI16Type());
  if (element.isInteger(8) || isFp8(element))
    return isWmma(intrinsic)
               ? Type(VectorType::get({count / 4}, b.getI32Type()))
               : Type(b.getIntegerType(8 * count));
  return VectorType::get({count}, element);
}

Value MatrixCoreUnit::multiply(OpBuilder &b, Location loc,
                               const MatrixIntrinsic &intrinsic, Value aOperand,
                               Value bOperand, Value acc) const {
  auto i32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  bool integer = intrinsic.aType == MatrixElementType::I8;
  SmallVector<Value> operands;
  if (isWmma(intrinsic) && integer) {
    // iu8: each operand's signedness, then clamping off.
    Value isSigned = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
    Value noClamp = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
    operands = {isSigned, aOperand, isSigned, bOperand, acc, noClamp};
  } else if (isWmma(intrinsic)) {
    operands = {aOperand, bOperand, acc};
  } else {
    // cbsz, abid, blgp: no broadcast between blocks, no lane swizzle.
    operands = {aOperand, bOperand, acc, i32(0), i32(0), i32(0)};
  }
  return LLVM::CallIntrinsicOp::create(
             b, loc, acc.getType(),
             b.getStringAttr("llvm.amdgcn." + intrinsic.name), operands)
      .getResult(0);
}

std::shared_ptr<const MatrixUnit> makeMatrixUnit(const TargetInfo &info) {
  if (info.intrinsics.empty())
    return nullptr;
  return std::make_shared<MatrixCoreUnit>(info);
}

} // namespace tk::rocm
