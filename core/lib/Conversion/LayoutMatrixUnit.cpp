//===- LayoutMatrixUnit.cpp - a matrix unit driven by its layouts ---------===//
//
// The lane's operand fragments, in the register order of the preset's
// fragment layouts, packed as the backend's operandType says; the
// accumulator as one vector (16 x f32 for mfma 32x32x8, 8 x f32 for DPAS
// 8x16x16); one call of the backend's multiply.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Conversion/LayoutMatrixUnit.h"

#include "tk/core/Conversion/ScalarOps.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace tk {

Value LayoutMatrixUnit::packElements(OpBuilder &b, Location loc,
                                     const MatrixIntrinsic &intrinsic,
                                     unsigned operand,
                                     ValueRange elements) const {
  Type element = elements.front().getType();
  Type packed = operandType(b, intrinsic, operand, element, elements.size());
  if (elements.size() == 1 && packed == element)
    return elements.front();
  // bf16 and fp8 travel as their bits; the vector is then bitcast as a
  // whole.
  Type lane = element.isBF16() ? b.getI16Type() : getMemoryType(element);
  auto vectorType = VectorType::get({int64_t(elements.size())}, lane);
  Value vector = LLVM::UndefOp::create(b, loc, vectorType);
  for (auto [i, value] : llvm::enumerate(elements)) {
    if (lane != element)
      value = arith::BitcastOp::create(b, loc, lane, value);
    vector = LLVM::InsertElementOp::create(
        b, loc, vector, value,
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), int64_t(i)));
  }
  if (vectorType == packed)
    return vector;
  return LLVM::BitcastOp::create(b, loc, packed, vector);
}

FailureOr<SmallVector<Value>> LayoutMatrixUnit::emitFragmentProduct(
    OpBuilder &b, Location loc, const MatrixIntrinsic &intrinsic, ValueRange a,
    ValueRange bElements, ValueRange accumulator) const {
  if (a.empty() || bElements.empty() || accumulator.empty())
    return failure();
  // The transposed form computes acc^T += b^T a^T: b's fragment is the
  // instruction's first operand (MatrixIntrinsic::transposed).
  if (intrinsic.transposed)
    std::swap(a, bElements);
  Value aOperand = packElements(b, loc, intrinsic, 0, a);
  Value bOperand = packElements(b, loc, intrinsic, 1, bElements);
  auto i32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  auto accType = VectorType::get({int64_t(accumulator.size())},
                                 accumulator.front().getType());
  Value acc = LLVM::UndefOp::create(b, loc, accType);
  for (auto [i, value] : llvm::enumerate(accumulator))
    acc = LLVM::InsertElementOp::create(b, loc, acc, value, i32(int64_t(i)));
  Value product = multiply(b, loc, intrinsic, aOperand, bOperand, acc);
  SmallVector<Value> result;
  for (int64_t i = 0; i < accType.getNumElements(); ++i)
    result.push_back(LLVM::ExtractElementOp::create(b, loc, product, i32(i)));
  return result;
}

int countMatrixDots(ModuleOp module, const TargetInfo &info) {
  int count = 0;
  module.walk([&](tk::DotOp dot) {
    auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
    RankedTensorType a = typeOf(dot.getA()), b = typeOf(dot.getB());
    // A 16-bit float accumulator is kept in f32 (the loops' planDot).
    Type acc = typeOf(dot.getResult()).getElementType();
    if (acc.isF16() || acc.isBF16())
      acc = Float32Type::get(dot.getContext());
    int64_t m = a.getDimSize(0), k = a.getDimSize(1), n = b.getDimSize(1);
    // An instruction of these types whose shape divides the dot's (an i8 dot of
    // k = 16 is FMA code where the instruction's k is 32).
    for (const MatrixIntrinsic *intrinsic :
         info.findIntrinsics(a.getElementType(), b.getElementType(), acc,
                             /*allowTF32=*/false, MatrixScope::Warp))
      if (m % intrinsic->m == 0 && n % intrinsic->n == 0 &&
          k % intrinsic->k == 0 && intrinsic->aLayout && intrinsic->bLayout) {
        ++count;
        break;
      }
  });
  return count;
}

} // namespace tk
