//===- MmaSync.cpp - tk.dot on NVIDIA mma.sync ----------------------------===//
//
// Each warp takes 16x8 tiles of the result in turn; for each it holds the
// four fp32 accumulators of its lane in registers and runs mma.sync over k
// in steps of 16, reading its fragments from the operands in workgroup
// memory at the positions the PTX ISA gives for m16n8k16 (lane = 4 * group
// + thread-in-group):
//   A (row-major): reg 0 = A[g][2t..2t+1],   reg 1 = A[g+8][2t..2t+1],
//                  reg 2 = A[g][2t+8..+9],   reg 3 = A[g+8][2t+8..+9]
//   B (col-major): reg 0 = B[2t..2t+1][g],   reg 1 = B[2t+8..2t+9][g]
//   C:             c0,c1 = C[g][2t..2t+1],   c2,c3 = C[g+8][2t..2t+1]
//
//===----------------------------------------------------------------------===//

#include "compiler/MmaSync.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace tk::cuda {

namespace {
constexpr int64_t kTileM = 16, kTileN = 8, kTileK = 16, kWarpSize = 32;
} // namespace

bool MmaSyncUnit::supports(Type a, Type b, Type accumulator, int64_t m,
                           int64_t n, int64_t k) const {
  bool halfInputs = (a.isF16() && b.isF16()) || (a.isBF16() && b.isBF16());
  return halfInputs && accumulator.isF32() && m % kTileM == 0 &&
         n % kTileN == 0 && k % kTileK == 0;
}

LogicalResult MmaSyncUnit::emit(OpBuilder &b, Location loc,
                                const Product &product) const {
  auto aType = cast<MemRefType>(product.a.getType());
  auto bType = cast<MemRefType>(product.b.getType());
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1),
          n = bType.getDimSize(1);
  bool bf16 = aType.getElementType().isBF16();
  int64_t numWarps = std::max<int64_t>(1, product.numThreads / kWarpSize);
  Type i16 = b.getI16Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto add = [&](Value x, int64_t c) -> Value {
    return c == 0 ? x : arith::AddIOp::create(b, loc, x, index(c));
  };

  Value lane =
      arith::RemUIOp::create(b, loc, product.threadId, index(kWarpSize));
  Value warp =
      arith::DivUIOp::create(b, loc, product.threadId, index(kWarpSize));
  Value group = arith::DivUIOp::create(b, loc, lane, index(4));
  Value pairCol = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, index(4)), index(2));

  // Two 16-bit elements packed into the 32-bit register mma.sync reads, the
  // first in the low half.
  auto pack = [&](Value memref, Value r0, Value c0, Value r1,
                  Value c1) -> Value {
    Value lo = memref::LoadOp::create(b, loc, memref, ValueRange{r0, c0});
    Value hi = memref::LoadOp::create(b, loc, memref, ValueRange{r1, c1});
    lo = arith::ExtUIOp::create(b, loc, i32,
                                arith::BitcastOp::create(b, loc, i16, lo));
    hi = arith::ExtUIOp::create(b, loc, i32,
                                arith::BitcastOp::create(b, loc, i16, hi));
    hi = arith::ShLIOp::create(b, loc, hi,
                               arith::ConstantIntOp::create(b, loc, i32, 16));
    Value packed = arith::OrIOp::create(b, loc, lo, hi);
    if (bf16)
      return packed;
    return LLVM::BitcastOp::create(b, loc, VectorType::get({2}, b.getF16Type()),
                                   packed);
  };

  int64_t tilesN = n / kTileN, tiles = (m / kTileM) * tilesN;
  auto tileLoop =
      scf::ForOp::create(b, loc, warp, index(tiles), index(numWarps));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(tileLoop.getBody());
  Value tile = tileLoop.getInductionVar();
  Value row = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc,
                            arith::DivUIOp::create(b, loc, tile, index(tilesN)),
                            index(kTileM)),
      group);
  Value tileCol = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, tile, index(tilesN)),
      index(kTileN));
  Value col = arith::AddIOp::create(b, loc, tileCol, pairCol);
  Value bCol = arith::AddIOp::create(b, loc, tileCol, group);
  Value row8 = add(row, 8), col1 = add(col, 1);

  SmallVector<Value> init{product.accumulator(b, loc, row, col),
                          product.accumulator(b, loc, row, col1),
                          product.accumulator(b, loc, row8, col),
                          product.accumulator(b, loc, row8, col1)};
  auto kLoop =
      scf::ForOp::create(b, loc, index(0), index(k), index(kTileK), init);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value kk = kLoop.getInductionVar();
    Value ka = arith::AddIOp::create(b, loc, kk, pairCol);
    Value ka1 = add(ka, 1), ka8 = add(ka, 8), ka9 = add(ka, 9);
    Value a0 = pack(product.a, row, ka, row, ka1);
    Value a1 = pack(product.a, row8, ka, row8, ka1);
    Value a2 = pack(product.a, row, ka8, row, ka9);
    Value a3 = pack(product.a, row8, ka8, row8, ka9);
    Value b0 = pack(product.b, ka, bCol, ka1, bCol);
    Value b1 = pack(product.b, ka8, bCol, ka9, bCol);
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(4, f32));
    NVVM::MMATypes inputType =
        bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    auto mma = NVVM::MmaOp::create(
        b, loc, resultType, ValueRange{a0, a1, a2, a3}, ValueRange{b0, b1},
        kLoop.getRegionIterArgs(), ArrayRef<int64_t>{kTileM, kTileN, kTileK},
        std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{inputType, inputType},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> next;
    for (int64_t i = 0; i < 4; ++i)
      next.push_back(LLVM::ExtractValueOp::create(b, loc, mma.getResult(),
                                                  ArrayRef<int64_t>{i}));
    scf::YieldOp::create(b, loc, next);
  }
  ValueRange acc = kLoop.getResults();
  memref::StoreOp::create(b, loc, acc[0], product.result, ValueRange{row, col});
  memref::StoreOp::create(b, loc, acc[1], product.result,
                          ValueRange{row, col1});
  memref::StoreOp::create(b, loc, acc[2], product.result,
                          ValueRange{row8, col});
  memref::StoreOp::create(b, loc, acc[3], product.result,
                          ValueRange{row8, col1});
  return success();
}

} // namespace tk::cuda
