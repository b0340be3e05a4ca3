//===- MmaSync.cpp - tk.dot on NVIDIA mma.sync ----------------------------===//
//
// The register pipeline's warp-level products (tk-convert-registers-to-simt,
// Dot.cpp): one mma.sync on a lane's fragments, in the register order of
// the preset's fragment layouts, which follow the PTX ISA for m16n8k16
// (lane = 4 * group + thread-in-group):
//   A (row-major): reg 0 = A[g][2t..2t+1],   reg 1 = A[g+8][2t..2t+1],
//                  reg 2 = A[g][2t+8..+9],   reg 3 = A[g+8][2t+8..+9]
//   B (col-major): reg 0 = B[2t..2t+1][g],   reg 1 = B[2t+8..2t+9][g]
//   C:             c0,c1 = C[g][2t..2t+1],   c2,c3 = C[g+8][2t..2t+1]
// f32 operands of a dot with input_precision tf32 run m16n8k8 on their f32
// bits (the unit reads them as tf32); s8, e4m3 and e5m2 run m16n8k32, four
// bytes to a register. Fragments in workgroup memory come
// through ldmatrix (loadMatrices).
//
//===----------------------------------------------------------------------===//

#include "compiler/MmaSync.h"
#include "compiler/SharedMemory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;

namespace tk::cuda {

FailureOr<SmallVector<Value>>
MmaSyncUnit::emitFragmentProduct(OpBuilder &builder, Location loc,
                                 const MatrixIntrinsic &intrinsic, ValueRange a,
                                 ValueRange b, ValueRange accumulator) const {
  return emitMmaSyncFragments(builder, loc, intrinsic, a, b, accumulator);
}

FailureOr<SmallVector<Value>>
MmaSyncUnit::loadMatrices(OpBuilder &builder, Location loc, Value buffer,
                          Value index, int64_t count, bool transpose,
                          Type element) const {
  return emitLdMatrix(builder, loc, buffer, index, count, transpose, element);
}

FailureOr<SmallVector<Value>> emitLdMatrix(OpBuilder &b, Location loc,
                                           Value buffer, Value index,
                                           int64_t count, bool transpose,
                                           Type element) {
  if ((count != 1 && count != 2 && count != 4) ||
      !isa<Float16Type, BFloat16Type>(element))
    return failure();
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  Type resultType = count == 1 ? i32
                               : Type(LLVM::LLVMStructType::getLiteral(
                                     ctx, SmallVector<Type>(count, i32)));
  Value loaded = NVVM::LdMatrixOp::create(
      b, loc, resultType, sharedElementAddress(b, loc, buffer, index),
      int(count), transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8), NVVM::LdStMatrixEltType::B16);
  // Each 32-bit register: the row's two elements, the first in the low half.
  auto pair = VectorType::get({2}, element);
  SmallVector<Value> elements;
  for (int64_t i = 0; i < count; ++i) {
    Value part = count == 1 ? loaded
                            : Value(LLVM::ExtractValueOp::create(
                                  b, loc, loaded, ArrayRef<int64_t>{i}));
    Value halves = LLVM::BitcastOp::create(b, loc, pair, part);
    for (int64_t half : {0, 1})
      elements.push_back(LLVM::ExtractElementOp::create(
          b, loc, halves,
          LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(half))));
  }
  return elements;
}

FailureOr<SmallVector<Value>>
emitMmaSyncFragments(OpBuilder &builder, Location loc,
                     const MatrixIntrinsic &intrinsic, ValueRange a,
                     ValueRange b, ValueRange accumulator) {
  using ET = MatrixElementType;
  bool half = intrinsic.aType == ET::F16 || intrinsic.aType == ET::BF16;
  bool tf32 = intrinsic.aType == ET::TF32;
  bool s8 = intrinsic.aType == ET::I8;
  bool fp8 = intrinsic.aType == ET::F8E4M3 || intrinsic.aType == ET::F8E5M2;
  bool bytes = s8 || fp8;
  bool shapeOk = half ? (intrinsic.m == 16 && intrinsic.n == 8 &&
                         intrinsic.k == 16 && a.size() == 8 && b.size() == 4)
                 : tf32
                     ? (intrinsic.m == 16 && intrinsic.n == 8 &&
                        intrinsic.k == 8 && a.size() == 4 && b.size() == 2)
                     : (bytes && intrinsic.bType == intrinsic.aType &&
                        intrinsic.m == 16 && intrinsic.n == 8 &&
                        intrinsic.k == 32 && a.size() == 16 && b.size() == 8);
  // Core keeps narrow float accumulators in f32 (the f32 form of an
  // intrinsic); s8 products accumulate in i32.
  ET accType = s8 ? ET::I32 : ET::F32;
  if (!shapeOk || intrinsic.accType != accType || accumulator.size() != 4)
    return failure();
  MLIRContext *context = builder.getContext();
  Type i16 = builder.getI16Type(), i32 = builder.getI32Type();
  auto halfPair = VectorType::get({2}, builder.getF16Type());
  // Two 16-bit elements in the 32-bit register mma.sync reads, the first in
  // the low half: f16 as vector<2xf16>, bf16 as i32.
  auto pack = [&](Value lo, Value hi, bool asHalfPair) -> Value {
    auto widen = [&](Value v) -> Value {
      return arith::ExtUIOp::create(
          builder, loc, i32, arith::BitcastOp::create(builder, loc, i16, v));
    };
    Value packed =
        arith::OrIOp::create(builder, loc, widen(lo),
                             arith::ShLIOp::create(builder, loc, widen(hi),
                                                   arith::ConstantIntOp::create(
                                                       builder, loc, i32, 16)));
    if (!asHalfPair)
      return packed;
    return LLVM::BitcastOp::create(builder, loc, halfPair, packed);
  };
  // Four bytes in the 32-bit register mma.sync reads, the first lowest;
  // fp8 elements by their bits.
  Type i8 = builder.getI8Type();
  auto packBytes = [&](ValueRange elements) -> Value {
    Value packed;
    for (auto [i, element] : llvm::enumerate(elements)) {
      Value byte = element.getType() == i8
                       ? element
                       : arith::BitcastOp::create(builder, loc, i8, element);
      Value widened = arith::ExtUIOp::create(builder, loc, i32, byte);
      if (i)
        widened = arith::ShLIOp::create(
            builder, loc, widened,
            arith::ConstantIntOp::create(builder, loc, i32, 8 * i));
      packed = packed
                   ? Value(arith::OrIOp::create(builder, loc, packed, widened))
                   : widened;
    }
    return packed;
  };
  auto operands = [&](ValueRange elements) {
    SmallVector<Value> registers;
    if (bytes) {
      for (size_t i = 0; i + 3 < elements.size(); i += 4)
        registers.push_back(packBytes(elements.slice(i, 4)));
      return registers;
    }
    if (tf32) {
      for (Value element : elements)
        registers.push_back(
            arith::BitcastOp::create(builder, loc, i32, element));
      return registers;
    }
    bool f16 = intrinsic.aType == ET::F16;
    for (size_t i = 0; i + 1 < elements.size(); i += 2)
      registers.push_back(pack(elements[i], elements[i + 1], f16));
    return registers;
  };
  SmallVector<Value> aRegisters = operands(a), bRegisters = operands(b);
  SmallVector<Value> accRegisters(accumulator.begin(), accumulator.end());
  auto resultType = LLVM::LLVMStructType::getLiteral(
      context, SmallVector<Type>(4, s8 ? i32 : builder.getF32Type()));
  NVVM::MMATypes inputType =
      intrinsic.aType == ET::F16      ? NVVM::MMATypes::f16
      : intrinsic.aType == ET::BF16   ? NVVM::MMATypes::bf16
      : s8                            ? NVVM::MMATypes::s8
      : intrinsic.aType == ET::F8E4M3 ? NVVM::MMATypes::e4m3
      : intrinsic.aType == ET::F8E5M2 ? NVVM::MMATypes::e5m2
                                      : NVVM::MMATypes::tf32;
  if (fp8) {
    // NVVM's mma op does not verify e4m3 and e5m2 at m16n8k32 (MLIR 22);
    // LLVM's NVPTX backend has the intrinsics.
    std::string type = stringifyMMATypes(inputType).str();
    std::string name =
        "llvm.nvvm.mma.m16n8k32.row.col.f32." + type + "." + type + ".f32";
    SmallVector<Value> operands(aRegisters);
    operands.append(bRegisters);
    operands.append(accRegisters);
    auto call = LLVM::CallIntrinsicOp::create(
        builder, loc, resultType, builder.getStringAttr(name), operands);
    SmallVector<Value> result;
    for (int64_t i = 0; i < 4; ++i)
      result.push_back(LLVM::ExtractValueOp::create(
          builder, loc, call.getResult(0), ArrayRef<int64_t>{i}));
    return result;
  }
  // Integer sums wrap, as tk's multiply-add dots do (no .satfinite).
  std::optional<NVVM::MMAIntOverflow> overflow;
  if (s8)
    overflow = NVVM::MMAIntOverflow::wrapped;
  auto mma = NVVM::MmaOp::create(
      builder, loc, resultType, aRegisters, bRegisters, accRegisters,
      ArrayRef<int64_t>{intrinsic.m, intrinsic.n, intrinsic.k}, std::nullopt,
      overflow, std::array<NVVM::MMATypes, 2>{inputType, inputType},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> result;
  for (int64_t i = 0; i < 4; ++i)
    result.push_back(LLVM::ExtractValueOp::create(builder, loc, mma.getResult(),
                                                  ArrayRef<int64_t>{i}));
  return result;
}

} // namespace tk::cuda
