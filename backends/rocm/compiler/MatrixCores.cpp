//===- MatrixCores.cpp - tk.dot on AMD's MFMA and WMMA --------------------===//
//
// For each (M x N) tile of the result a wave owns, its lanes' accumulator
// registers are one vector (16 x f32 for mfma 32x32x8), initialised from
// the dot's accumulator and carried through a loop over k in steps of K;
// each step reads the lanes' operand fragments from workgroup memory at the
// positions the preset's layouts give, packs them into the vector or
// integer the instruction takes, and calls the LLVM intrinsic
// `llvm.amdgcn.<preset name>`.
//
//===----------------------------------------------------------------------===//

#include "compiler/MatrixCores.h"

#include "tk/core/Conversion/Fragments.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace tk::rocm {

namespace {

bool isWmma(const MatrixIntrinsic &intrinsic) {
  return llvm::StringRef(intrinsic.name).starts_with("wmma.");
}

/// The type the intrinsic takes `count` operand elements of `element` a lane
/// in: f16 as they are, bf16 as their 16 bits, i8 packed into one integer
/// (MFMA) or into i32s (WMMA), one f64 as a scalar.
Type operandType(OpBuilder &b, Type element, int64_t count, bool wmma) {
  if (count == 1)
    return element;
  if (element.isBF16())
    return VectorType::get({count}, b.getI16Type());
  if (element.isInteger(8))
    return wmma ? Type(VectorType::get({count / 4}, b.getI32Type()))
                : Type(b.getIntegerType(8 * count));
  return VectorType::get({count}, element);
}

/// The lane's operand elements at `at`, packed as operandType says.
Value packOperand(OpBuilder &b, Location loc, Value memref,
                  ArrayRef<std::pair<Value, Value>> at, Type packed) {
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  auto load = [&](size_t i) -> Value {
    return memref::LoadOp::create(b, loc, memref,
                                  ValueRange{at[i].first, at[i].second});
  };
  if (at.size() == 1)
    return load(0);
  // bf16 travels as its bits; the vector is then bitcast as a whole.
  Type lane = element.isBF16() ? b.getI16Type() : element;
  auto vectorType = VectorType::get({int64_t(at.size())}, lane);
  Value vector = LLVM::UndefOp::create(b, loc, vectorType);
  for (size_t i = 0; i < at.size(); ++i) {
    Value value = load(i);
    if (element.isBF16())
      value = arith::BitcastOp::create(b, loc, lane, value);
    vector = LLVM::InsertElementOp::create(
        b, loc, vector, value,
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), int64_t(i)));
  }
  if (vectorType == packed)
    return vector;
  return LLVM::BitcastOp::create(b, loc, packed, vector);
}

} // namespace

const MatrixIntrinsic *MatrixCoreUnit::select(Type a, Type b, Type accumulator,
                                              int64_t m, int64_t n,
                                              int64_t k) const {
  for (const MatrixIntrinsic *intrinsic : info.findIntrinsics(
           a, b, accumulator, /*allowTF32=*/false, MatrixScope::Warp))
    if (m % intrinsic->m == 0 && n % intrinsic->n == 0 &&
        k % intrinsic->k == 0 && intrinsic->aLayout && intrinsic->bLayout)
      return intrinsic;
  return nullptr;
}

LogicalResult MatrixCoreUnit::emit(OpBuilder &b, Location loc,
                                   const Product &product) const {
  auto aType = cast<MemRefType>(product.a.getType());
  auto bType = cast<MemRefType>(product.b.getType());
  auto resultType = cast<MemRefType>(product.result.getType());
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1),
          n = bType.getDimSize(1);
  const MatrixIntrinsic *intrinsic =
      select(aType.getElementType(), bType.getElementType(),
             resultType.getElementType(), m, n, k);
  if (!intrinsic)
    return emitError(loc, "tk-rocm: no matrix instruction of ")
           << info.name << " takes this dot";
  int64_t waveSize = info.warpSize;
  int64_t numWaves = std::max<int64_t>(1, product.numThreads / waveSize);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value lane = arith::RemUIOp::create(b, loc, product.threadId, index(waveSize));
  Value wave = arith::DivUIOp::create(b, loc, product.threadId, index(waveSize));
  // Where the lanes of a layout span more than the fragment (WMMA's lanes l
  // and l + 16 hold the same row of a), the layout is placed over the span
  // and each lane's coordinates wrap back into the fragment: those lanes
  // hold copies.
  auto place = [&](const FragmentLayout &layout, int64_t rows,
                   int64_t cols) -> FailureOr<FragmentPlacement> {
    std::array<int64_t, 2> extent = {rows, cols}, span = extent;
    for (int d = 0; d < 2; ++d)
      span[d] = std::max(extent[d],
                         layout.sizePerLane[d] * layout.lanesPerWarp[d]);
    FailureOr<FragmentPlacement> placed = placeFragment(
        b, loc, layout, span[0], span[1], Value(), Value(), Value(), lane);
    if (failed(placed))
      return failure();
    Value *origin[2] = {&placed->row, &placed->col};
    for (int d = 0; d < 2; ++d)
      if (span[d] > extent[d] && *origin[d]) {
        if (extent[d] % layout.sizePerLane[d] != 0)
          return failure();
        *origin[d] =
            arith::RemUIOp::create(b, loc, *origin[d], index(extent[d]));
      }
    return placed;
  };
  const int64_t tileM = intrinsic->m, tileN = intrinsic->n,
                tileK = intrinsic->k;
  FailureOr<FragmentPlacement> aPlaced =
      place(*intrinsic->aLayout, tileM, tileK);
  FailureOr<FragmentPlacement> bPlaced =
      place(*intrinsic->bLayout, tileK, tileN);
  FailureOr<FragmentPlacement> accPlaced =
      place(intrinsic->accLayout, tileM, tileN);
  if (failed(aPlaced) || failed(bPlaced) || failed(accPlaced))
    return emitError(loc, "tk-rocm: the fragments of ")
           << intrinsic->name << " do not cover their tiles";
  bool wmma = isWmma(*intrinsic);
  Type aPacked = operandType(b, aType.getElementType(),
                             aPlaced->offsets.size(), wmma);
  Type bPacked = operandType(b, bType.getElementType(),
                             bPlaced->offsets.size(), wmma);
  Type accElement = resultType.getElementType();
  int64_t accCount = accPlaced->offsets.size();
  Type accType = VectorType::get({accCount}, accElement);
  auto i32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };

  int64_t tilesN = n / tileN, tiles = (m / tileM) * tilesN;
  auto tileLoop = scf::ForOp::create(b, loc, wave, index(tiles), index(numWaves));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(tileLoop.getBody());
  Value tile = tileLoop.getInductionVar();
  Value tileRow = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, tile, index(tilesN)),
      index(tileM));
  Value tileCol = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, tile, index(tilesN)),
      index(tileN));
  SmallVector<std::pair<Value, Value>> accAt =
      accPlaced->shifted(b, loc, tileRow, tileCol).positions(b, loc);
  Value init = LLVM::UndefOp::create(b, loc, accType);
  for (auto [i, at] : llvm::enumerate(accAt))
    init = LLVM::InsertElementOp::create(
        b, loc, init, product.accumulator(b, loc, at.first, at.second),
        i32(int64_t(i)));

  auto kLoop =
      scf::ForOp::create(b, loc, index(0), index(k), index(tileK), init);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value kk = kLoop.getInductionVar();
    Value aOperand = packOperand(
        b, loc, product.a,
        aPlaced->shifted(b, loc, tileRow, kk).positions(b, loc), aPacked);
    Value bOperand = packOperand(
        b, loc, product.b,
        bPlaced->shifted(b, loc, kk, tileCol).positions(b, loc), bPacked);
    Value acc = kLoop.getRegionIterArgs()[0];
    SmallVector<Value> operands;
    bool integer = aType.getElementType().isInteger(8);
    if (wmma && integer) {
      // iu8: each operand's signedness, then clamping off.
      Value isSigned = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
      Value noClamp = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
      operands = {isSigned, aOperand, isSigned, bOperand, acc, noClamp};
    } else if (wmma) {
      operands = {aOperand, bOperand, acc};
    } else {
      // cbsz, abid, blgp: no broadcast between blocks, no lane swizzle.
      operands = {aOperand, bOperand, acc, i32(0), i32(0), i32(0)};
    }
    auto call = LLVM::CallIntrinsicOp::create(
        b, loc, accType, b.getStringAttr("llvm.amdgcn." + intrinsic->name),
        operands);
    scf::YieldOp::create(b, loc, call.getResult(0));
  }
  for (auto [i, at] : llvm::enumerate(accAt)) {
    Value value = LLVM::ExtractElementOp::create(b, loc, kLoop.getResult(0),
                                                 i32(int64_t(i)));
    memref::StoreOp::create(b, loc, value, product.result,
                            ValueRange{at.first, at.second});
  }
  return success();
}

std::shared_ptr<const MatrixUnit> makeMatrixUnit(const TargetInfo &info) {
  if (info.intrinsics.empty())
    return nullptr;
  return std::make_shared<MatrixCoreUnit>(info);
}

int countMatrixDots(ModuleOp module, const TargetInfo &info) {
  int count = 0;
  module.walk([&](tk::DotOp dot) {
    auto elementOf = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getElementType();
    };
    Type a = elementOf(dot.getA()), bElem = elementOf(dot.getB());
    // A 16-bit float accumulator is kept in f32 (the loops' planDot).
    Type acc = elementOf(dot.getResult());
    if (acc.isF16() || acc.isBF16())
      acc = Float32Type::get(dot.getContext());
    if (!info.findIntrinsics(a, bElem, acc, /*allowTF32=*/false,
                             MatrixScope::Warp)
             .empty())
      ++count;
  });
  return count;
}

} // namespace tk::rocm
