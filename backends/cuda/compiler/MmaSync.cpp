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
// Held accumulators (a loop-carried accumulator in registers): the warps
// form a warpsM x warpsN grid and each owns a block of rows x cols m16n8
// tiles, so that one A fragment serves a row of tiles and one B fragment a
// column. Their operands are laid out row-major with each row's 16-byte
// chunks permuted (operandLayout), so that the 8 rows an ldmatrix reads lie
// in different banks. Fragments come from workgroup memory through
// ldmatrix: .x4 for the four 8x8 matrices of an A fragment (lanes 8j..8j+7
// address the rows of matrix j: rows +8 for odd j, columns +8 for j >= 2, which
// is the register order above), .x4.trans for the B fragments of two tiles
// (rows along k, +8 for odd j; columns +8 for j >= 2), .x2.trans for a last odd
// tile. f32 operands of a dot with input_precision tf32 run m16n8k8 on
// their f32 bits (the unit reads them as tf32), fragments read one element
// at a time: A reg i = A[g + 8 (i%2)][q + 4 (i/2)], B reg i = B[q + 4i][g].
//
//===----------------------------------------------------------------------===//

#include "compiler/MmaSync.h"
#include "compiler/SharedMemory.h"
#include "compiler/TargetInfo.h"
#include "tk/core/Conversion/Fragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;

namespace tk::cuda {

namespace {
constexpr int64_t kTileM = 16, kTileN = 8, kTileK = 16, kWarpSize = 32;
/// ldmatrix reads rows of one 16-byte chunk; a 128-byte line of workgroup
/// memory spans the 32 banks once.
constexpr int64_t kChunkBytes = 16, kBankLineBytes = 128;
} // namespace

bool MmaSyncUnit::supports(Type a, Type b, Type accumulator, int64_t m,
                           int64_t n, int64_t k) const {
  bool halfInputs = (a.isF16() && b.isF16()) || (a.isBF16() && b.isBF16());
  return halfInputs && accumulator.isF32() && m % kTileM == 0 &&
         n % kTileN == 0 && k % kTileK == 0;
}

std::optional<tk::HeldLayout>
MmaSyncUnit::emittedLayout(const HeldProduct &product) const {
  if (!supports(product.a, product.b, product.accumulator, product.m, product.n,
                product.k))
    return std::nullopt;
  tk::HeldLayout layout;
  layout.intrinsic =
      product.a.isBF16() ? "mma.m16n8k16.f32.bf16" : "mma.m16n8k16.f32.f16";
  layout.fragment = mmaAccumulatorLayout();
  layout.tile = {kTileM, kTileN};
  layout.groupThreads = kWarpSize;
  layout.cyclic = true;
  return layout;
}

LogicalResult MmaSyncUnit::emit(OpBuilder &b, Location loc,
                                const Product &product) const {
  auto aType = cast<MemRefType>(product.a.getType());
  auto bType = cast<MemRefType>(product.b.getType());
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1),
          n = bType.getDimSize(1);
  bool bf16 = aType.getElementType().isBF16();
  // The tiles go to the warps as emittedLayout states.
  HeldProduct shape;
  shape.a = aType.getElementType();
  shape.b = bType.getElementType();
  shape.accumulator =
      cast<MemRefType>(product.result.getType()).getElementType();
  shape.m = m;
  shape.n = n;
  shape.k = k;
  shape.numThreads = product.numThreads;
  std::optional<tk::HeldLayout> dealt = emittedLayout(shape);
  if (!dealt)
    return emitError(loc, "tk-cuda: mma.sync does not take this dot");
  int64_t warpSize = dealt->groupThreads;
  int64_t numWarps = std::max<int64_t>(1, product.numThreads / warpSize);
  Type i16 = b.getI16Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };

  Value lane =
      arith::RemUIOp::create(b, loc, product.threadId, index(warpSize));
  Value warp =
      arith::DivUIOp::create(b, loc, product.threadId, index(warpSize));
  // The fragments as the preset states them; each tile and k step moves
  // them.
  auto place = [&](const FragmentLayout &layout, int64_t rows,
                   int64_t cols) -> FailureOr<FragmentPlacement> {
    return placeFragment(b, loc, layout, rows, cols, /*originRow=*/Value(),
                         /*originCol=*/Value(), /*warp=*/Value(), lane);
  };
  FailureOr<FragmentPlacement> aPlaced =
      place(mmaHalfALayout(), kTileM, kTileK);
  FailureOr<FragmentPlacement> bPlaced =
      place(mmaHalfBLayout(), kTileK, kTileN);
  FailureOr<FragmentPlacement> accPlaced =
      place(dealt->fragment, dealt->tile[0], dealt->tile[1]);
  if (failed(aPlaced) || failed(bPlaced) || failed(accPlaced))
    return emitError(loc, "tk-cuda: mma.sync's fragments do not cover their "
                          "tiles");
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

  int64_t tilesN = n / dealt->tile[1], tiles = (m / dealt->tile[0]) * tilesN;
  auto tileLoop =
      scf::ForOp::create(b, loc, warp, index(tiles), index(numWarps));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(tileLoop.getBody());
  Value tile = tileLoop.getInductionVar();
  Value tileRow = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, tile, index(tilesN)),
      index(dealt->tile[0]));
  Value tileCol = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, tile, index(tilesN)),
      index(dealt->tile[1]));
  SmallVector<std::pair<Value, Value>> accAt =
      accPlaced->shifted(b, loc, tileRow, tileCol).positions(b, loc);

  SmallVector<Value> init;
  for (auto [row, col] : accAt)
    init.push_back(product.accumulator(b, loc, row, col));
  auto kLoop =
      scf::ForOp::create(b, loc, index(0), index(k), index(kTileK), init);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value kk = kLoop.getInductionVar();
    // Registers hold pairs of consecutive elements of the fragment.
    auto packAll = [&](Value memref, ArrayRef<std::pair<Value, Value>> at) {
      SmallVector<Value> registers;
      for (size_t i = 0; i + 1 < at.size(); i += 2)
        registers.push_back(pack(memref, at[i].first, at[i].second,
                                 at[i + 1].first, at[i + 1].second));
      return registers;
    };
    SmallVector<Value> aRegisters = packAll(
        product.a, aPlaced->shifted(b, loc, tileRow, kk).positions(b, loc));
    SmallVector<Value> bRegisters = packAll(
        product.b, bPlaced->shifted(b, loc, kk, tileCol).positions(b, loc));
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(4, f32));
    NVVM::MMATypes inputType =
        bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    auto mma = NVVM::MmaOp::create(
        b, loc, resultType, aRegisters, bRegisters, kLoop.getRegionIterArgs(),
        ArrayRef<int64_t>{kTileM, kTileN, kTileK}, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{inputType, inputType},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> next;
    for (int64_t i = 0; i < 4; ++i)
      next.push_back(LLVM::ExtractValueOp::create(b, loc, mma.getResult(),
                                                  ArrayRef<int64_t>{i}));
    scf::YieldOp::create(b, loc, next);
  }
  for (auto [value, at] : llvm::zip_equal(kLoop.getResults(), accAt))
    memref::StoreOp::create(b, loc, value, product.result,
                            ValueRange{at.first, at.second});
  return success();
}

namespace {

/// At most this many fp32 accumulators per thread (half the register file
/// of a thread at 255), so that the rest of the kernel keeps room.
constexpr int64_t kMaxHeldRegisters = 128;

/// How the warps share a held product.
struct WarpTiling {
  int64_t warpsM, warpsN, rows, cols;
};

/// f32 operands rounded to tf32: m16n8k8.
constexpr int64_t kTf32TileK = 8;

bool isTf32(const MatrixUnit::HeldProduct &product) {
  return product.tf32 && product.a.isF32() && product.b.isF32() &&
         product.accumulator.isF32();
}

std::optional<WarpTiling> tileWarps(const MatrixUnit::HeldProduct &product) {
  MmaSyncUnit unit;
  bool shapeFits =
      isTf32(product) ? product.m % kTileM == 0 && product.n % kTileN == 0 &&
                            product.k % kTf32TileK == 0
                      : unit.supports(product.a, product.b, product.accumulator,
                                      product.m, product.n, product.k);
  if (product.numThreads % kWarpSize != 0 || !shapeFits)
    return std::nullopt;
  int64_t numWarps = product.numThreads / kWarpSize;
  int64_t tilesM = product.m / kTileM, tilesN = product.n / kTileN;
  std::optional<WarpTiling> best;
  for (int64_t warpsM = 1; warpsM <= numWarps; ++warpsM) {
    int64_t warpsN = numWarps / warpsM;
    if (numWarps % warpsM != 0 || tilesM % warpsM != 0 || tilesN % warpsN != 0)
      continue;
    WarpTiling tiling{warpsM, warpsN, tilesM / warpsM, tilesN / warpsN};
    if (tiling.rows * tiling.cols * 4 > kMaxHeldRegisters)
      continue;
    // Fewest fragment registers loaded per k step: 4 per A, 2 per B.
    auto cost = [](const WarpTiling &t) { return 4 * t.rows + 2 * t.cols; };
    if (!best || cost(tiling) < cost(*best))
      best = tiling;
  }
  return best;
}

} // namespace

// Row-major (A: m x k, B: k x n), with 16-byte chunk c of row r stored at
// chunk c ^ phase(r). An ldmatrix reads one chunk of 8 consecutive rows; in
// plain row-major rows of 128 bytes or more those all start in the same
// bank. The phase counts the rows of each 128-byte line of banks (rows of
// 128 bytes or more: one line per row; 64-byte rows: two rows per line ...)
// so that the 8 chunks land on the line's 8 distinct 16-byte bank groups;
// the permutation repeats every line, so buffers are aligned to one. Rows
// whose chunk count is not a power of two are not permuted. f32 operands
// (tf32) are read an element at a time, and a B taken K-major would need
// ldmatrix without .trans: both stay plain row-major.
std::optional<SharedLayout>
MmaSyncUnit::operandLayout(const HeldProduct &product, unsigned operand) const {
  if (!holds(product) || isTf32(product) || product.kMajorB)
    return std::nullopt;
  SharedLayout layout;
  layout.tile = operandShape(product, operand);
  layout.alignment = kBankLineBytes;
  // Laid-out operands are f16 or bf16.
  int64_t chunkElements = kChunkBytes / 2;
  int64_t chunks = layout.tile[1] / chunkElements;
  if (chunks < 2 || !llvm::isPowerOf2_64(chunks))
    return layout;
  int64_t lineChunks = kBankLineBytes / kChunkBytes;
  layout.vec = chunkElements;
  layout.maxPhase = std::min(chunks, lineChunks);
  layout.perPhase = lineChunks / layout.maxPhase;
  return layout;
}

// Warp w sits at (w / warpsN, w % warpsN) and holds a block of rows x cols
// tiles of 16 x 8, each as mma.sync's accumulator fragment.
std::optional<tk::HeldLayout>
MmaSyncUnit::heldLayout(const HeldProduct &product) const {
  std::optional<WarpTiling> tiling = tileWarps(product);
  if (!tiling)
    return std::nullopt;
  tk::HeldLayout layout;
  layout.intrinsic = isTf32(product)      ? "mma.m16n8k8.f32.tf32"
                     : product.a.isBF16() ? "mma.m16n8k16.f32.bf16"
                                          : "mma.m16n8k16.f32.f16";
  layout.fragment = mmaAccumulatorLayout();
  layout.tile = {kTileM, kTileN};
  layout.groupThreads = kWarpSize;
  layout.groups = {tiling->warpsM, tiling->warpsN};
  layout.tilesPerGroup = {tiling->rows, tiling->cols};
  return layout;
}

FailureOr<SmallVector<Value>>
MmaSyncUnit::accumulate(OpBuilder &b, Location loc, const HeldProduct &product,
                        Value aBuffer, Value bBuffer,
                        ValueRange registers) const {
  std::optional<WarpTiling> tiling = tileWarps(product);
  if (!tiling)
    return emitError(loc, "tk-cuda: mma.sync cannot hold this accumulator");
  // The registers are where the held layout puts them: each warp's block
  // of tiles at (rowBase, colBase), read from lane `lane`'s fragments.
  FailureOr<HeldBlockPlacement> layout =
      heldLayout(product)->placeBlock(b, loc, product.threadId);
  if (failed(layout))
    return emitError(loc, "tk-cuda: mma.sync's accumulator does not cover "
                          "its tile");
  MLIRContext *ctx = b.getContext();
  bool bf16 = product.a.isBF16();
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto add = [&](Value x, int64_t c) -> Value {
    return c == 0 ? x : arith::AddIOp::create(b, loc, x, index(c));
  };
  // The shared-window address of element (row, col) of operand `operand`
  // (0: A, 1: B): in the operandLayout, or row-major.
  std::optional<SharedLayout> layouts[2] = {operandLayout(product, 0),
                                            operandLayout(product, 1)};
  auto address = [&](unsigned operand, Value buffer, Value row,
                     Value col) -> Value {
    if (layouts[operand])
      return sharedElementAddress(
          b, loc, buffer,
          layouts[operand]->offset(b, loc, row, col,
                                   operandShape(product, operand)));
    int64_t width = cast<MemRefType>(buffer.getType()).getDimSize(1);
    Value offset = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, row, index(width)), col);
    return sharedElementAddress(b, loc, buffer, offset);
  };
  // ldmatrix of `count` 8x8 matrices; each i32 register as mma.sync wants
  // it (two f16 or, for bf16, the i32 itself).
  auto loadMatrices = [&](Value pointer, int count,
                          NVVM::MMALayout order) -> SmallVector<Value> {
    Type resultType = count == 1 ? i32
                                 : Type(LLVM::LLVMStructType::getLiteral(
                                       ctx, SmallVector<Type>(count, i32)));
    Value loaded =
        NVVM::LdMatrixOp::create(b, loc, resultType, pointer, count, order,
                                 NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
                                 NVVM::LdStMatrixEltType::B16);
    SmallVector<Value> parts;
    for (int i = 0; i < count; ++i) {
      Value part = count == 1 ? loaded
                              : Value(LLVM::ExtractValueOp::create(
                                    b, loc, loaded, ArrayRef<int64_t>{i}));
      if (!bf16)
        part = LLVM::BitcastOp::create(
            b, loc, VectorType::get({2}, b.getF16Type()), part);
      parts.push_back(part);
    }
    return parts;
  };

  // Lane l addresses row l % 8 of matrix l / 8.
  Value matrix = arith::DivUIOp::create(b, loc, layout->lane, index(8));
  Value rowInMatrix = arith::RemUIOp::create(b, loc, layout->lane, index(8));
  Value oddMatrix = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, matrix, index(2)), index(8));
  Value upperMatrix = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, matrix, index(2)), index(8));
  Value fragmentRow = arith::AddIOp::create(b, loc, rowInMatrix, oddMatrix);

  const WarpTiling &t = *tiling;
  SmallVector<Value> acc(registers);
  auto resultType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(4, f32));
  // One mma.sync per (row, col) tile of the warp's block.
  auto multiply = [&](ArrayRef<SmallVector<Value>> aFragments,
                      ArrayRef<SmallVector<Value>> bFragments, int64_t tileK,
                      NVVM::MMATypes inputType) {
    for (int64_t r = 0; r < t.rows; ++r) {
      for (int64_t c = 0; c < t.cols; ++c) {
        int64_t first = (r * t.cols + c) * 4;
        auto mma = NVVM::MmaOp::create(
            b, loc, resultType, aFragments[r], bFragments[c],
            ArrayRef<Value>(acc).slice(first, 4),
            ArrayRef<int64_t>{kTileM, kTileN, tileK}, std::nullopt,
            std::nullopt, std::array<NVVM::MMATypes, 2>{inputType, inputType},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                           NVVM::MMALayout::col});
        for (int64_t i = 0; i < 4; ++i)
          acc[first + i] = LLVM::ExtractValueOp::create(b, loc, mma.getResult(),
                                                        ArrayRef<int64_t>{i});
      }
    }
  };

  if (isTf32(product)) {
    // m16n8k8 with f32 bits as tf32 (the unit ignores the low 13 mantissa
    // bits), its fragments placed as the preset states them and read one
    // 32-bit element at a time: A's at the warp's rows, B's at its columns.
    FailureOr<FragmentPlacement> aPlaced = placeFragment(
        b, loc, mmaTf32ALayout(), kTileM, kTf32TileK, /*originRow=*/Value(),
        /*originCol=*/Value(), /*warp=*/Value(), layout->lane);
    FailureOr<FragmentPlacement> bPlaced = placeFragment(
        b, loc, mmaTf32BLayout(), kTf32TileK, kTileN, /*originRow=*/Value(),
        /*originCol=*/Value(), /*warp=*/Value(), layout->lane);
    if (failed(aPlaced) || failed(bPlaced))
      return emitError(loc, "tk-cuda: the tf32 fragments do not cover their "
                            "tiles");
    FragmentPlacement aFragment =
        aPlaced->shifted(b, loc, layout->rowBase, /*colOrigin=*/Value());
    FragmentPlacement bFragment =
        bPlaced->shifted(b, loc, /*rowOrigin=*/Value(), layout->colBase);
    auto bits = [&](Value buffer, Value row, Value col) -> Value {
      Value value =
          memref::LoadOp::create(b, loc, buffer, ValueRange{row, col});
      return arith::BitcastOp::create(b, loc, i32, value);
    };
    auto read = [&](Value buffer, ArrayRef<Value> rows, ArrayRef<Value> cols) {
      SmallVector<Value> fragment;
      for (auto [row, col] : llvm::zip_equal(rows, cols))
        fragment.push_back(bits(buffer, row, col));
      return fragment;
    };
    for (int64_t kk = 0; kk < product.k; kk += kTf32TileK) {
      SmallVector<SmallVector<Value>> aFragments, bFragments;
      SmallVector<Value> aCols = aFragment.along(b, loc, 1, kk);
      SmallVector<Value> bRows = bFragment.along(b, loc, 0, kk);
      for (int64_t r = 0; r < t.rows; ++r)
        aFragments.push_back(
            read(aBuffer, aFragment.along(b, loc, 0, r * kTileM), aCols));
      for (int64_t c = 0; c < t.cols; ++c)
        bFragments.push_back(
            read(bBuffer, bRows, bFragment.along(b, loc, 1, c * kTileN)));
      multiply(aFragments, bFragments, kTf32TileK, NVVM::MMATypes::tf32);
    }
    return acc;
  }

  NVVM::MMATypes inputType = bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  for (int64_t kk = 0; kk < product.k; kk += kTileK) {
    SmallVector<SmallVector<Value>> aFragments, bFragments;
    for (int64_t r = 0; r < t.rows; ++r) {
      Value row =
          add(arith::AddIOp::create(b, loc, layout->rowBase, fragmentRow),
              r * kTileM);
      Value col = add(upperMatrix, kk);
      aFragments.push_back(
          loadMatrices(address(0, aBuffer, row, col), 4, NVVM::MMALayout::row));
    }
    for (int64_t c = 0; c < t.cols; c += 2) {
      bool pair = c + 1 < t.cols;
      Value row = add(fragmentRow, kk);
      Value col =
          add(pair ? arith::AddIOp::create(b, loc, layout->colBase, upperMatrix)
                   : layout->colBase,
              c * kTileN);
      SmallVector<Value> parts = loadMatrices(
          address(1, bBuffer, row, col), pair ? 4 : 2, NVVM::MMALayout::col);
      bFragments.push_back({parts[0], parts[1]});
      if (pair)
        bFragments.push_back({parts[2], parts[3]});
    }
    multiply(aFragments, bFragments, kTileK, inputType);
  }
  return acc;
}

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
  bool shapeOk = half ? (intrinsic.m == 16 && intrinsic.n == 8 &&
                         intrinsic.k == 16 && a.size() == 8 && b.size() == 4)
                 : tf32
                     ? (intrinsic.m == 16 && intrinsic.n == 8 &&
                        intrinsic.k == 8 && a.size() == 4 && b.size() == 2)
                     : (s8 && intrinsic.m == 16 && intrinsic.n == 8 &&
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
  // Four bytes in the 32-bit register mma.sync reads, the first lowest.
  auto packBytes = [&](ValueRange bytes) -> Value {
    Value packed;
    for (auto [i, byte] : llvm::enumerate(bytes)) {
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
    if (s8) {
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
  NVVM::MMATypes inputType = intrinsic.aType == ET::F16 ? NVVM::MMATypes::f16
                             : intrinsic.aType == ET::BF16
                                 ? NVVM::MMATypes::bf16
                             : s8 ? NVVM::MMATypes::s8
                                  : NVVM::MMATypes::tf32;
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
