//===- LayoutMatrixUnit.cpp - a matrix unit driven by its layouts ---------===//
//
// For each (M x N) tile of the result a subgroup owns, its lanes'
// accumulator registers are one vector (16 x f32 for mfma 32x32x8, 8 x f32
// for DPAS 8x16x16), initialised from the dot's accumulator and carried
// through a loop over k in steps of K; each step reads the lanes' operand
// fragments from workgroup memory at the positions the preset's layouts
// give, packs them as the backend's operandType says, and calls the
// backend's multiply.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Conversion/LayoutMatrixUnit.h"

#include "tk/core/Conversion/Fragments.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace tk {

namespace {

/// Places `layout` for a `rows` x `cols` fragment at `lane`. Where the
/// lanes of a layout span more than the fragment (WMMA's lanes l and l + 16
/// hold the same row of a), the layout is placed over the span and each
/// lane's coordinates wrap back into the fragment: those lanes hold copies.
FailureOr<FragmentPlacement> placeLanes(OpBuilder &b, Location loc,
                                        const FragmentLayout &layout,
                                        int64_t rows, int64_t cols,
                                        Value lane) {
  std::array<int64_t, 2> extent = {rows, cols}, span = extent;
  for (int d = 0; d < 2; ++d)
    span[d] =
        std::max(extent[d], layout.sizePerLane[d] * layout.lanesPerWarp[d]);
  FailureOr<FragmentPlacement> placed = placeFragment(
      b, loc, layout, span[0], span[1], Value(), Value(), Value(), lane);
  if (failed(placed))
    return failure();
  Value *origin[2] = {&placed->row, &placed->col};
  for (int d = 0; d < 2; ++d)
    if (span[d] > extent[d] && *origin[d]) {
      if (extent[d] % layout.sizePerLane[d] != 0)
        return failure();
      *origin[d] = arith::RemUIOp::create(
          b, loc, *origin[d],
          arith::ConstantIndexOp::create(b, loc, extent[d]));
    }
  return placed;
}

} // namespace

/// A 1-D `memref` holds the operand in the unit's layout: `offset` gives
/// the element of (row, col).
Value LayoutMatrixUnit::packOperand(
    OpBuilder &b, Location loc, const MatrixIntrinsic &intrinsic,
    unsigned operand, Value memref, ArrayRef<std::pair<Value, Value>> at,
    llvm::function_ref<Value(Value, Value)> offset) const {
  SmallVector<Value> elements;
  for (auto [row, col] : at) {
    if (cast<MemRefType>(memref.getType()).getRank() == 1)
      elements.push_back(
          memref::LoadOp::create(b, loc, memref, ValueRange{offset(row, col)}));
    else
      elements.push_back(
          memref::LoadOp::create(b, loc, memref, ValueRange{row, col}));
  }
  return packElements(b, loc, intrinsic, operand, elements);
}

Value LayoutMatrixUnit::packElements(OpBuilder &b, Location loc,
                                     const MatrixIntrinsic &intrinsic,
                                     unsigned operand,
                                     ValueRange elements) const {
  Type element = elements.front().getType();
  Type packed = operandType(b, intrinsic, operand, element, elements.size());
  if (elements.size() == 1 && packed == element)
    return elements.front();
  // bf16 travels as its bits; the vector is then bitcast as a whole.
  Type lane = element.isBF16() ? b.getI16Type() : element;
  auto vectorType = VectorType::get({int64_t(elements.size())}, lane);
  Value vector = LLVM::UndefOp::create(b, loc, vectorType);
  for (auto [i, value] : llvm::enumerate(elements)) {
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

FailureOr<SmallVector<Value>> LayoutMatrixUnit::emitFragmentProduct(
    OpBuilder &b, Location loc, const MatrixIntrinsic &intrinsic, ValueRange a,
    ValueRange bElements, ValueRange accumulator) const {
  if (a.empty() || bElements.empty() || accumulator.empty())
    return failure();
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

const MatrixIntrinsic *LayoutMatrixUnit::select(Type a, Type b,
                                                Type accumulator, int64_t m,
                                                int64_t n, int64_t k) const {
  for (const MatrixIntrinsic *intrinsic : info.findIntrinsics(
           a, b, accumulator, /*allowTF32=*/false, MatrixScope::Warp))
    if (m % intrinsic->m == 0 && n % intrinsic->n == 0 &&
        k % intrinsic->k == 0 && intrinsic->aLayout && intrinsic->bLayout)
      return intrinsic;
  return nullptr;
}

std::optional<HeldLayout>
LayoutMatrixUnit::emittedLayout(const HeldProduct &product) const {
  const MatrixIntrinsic *intrinsic =
      select(product.a, product.b, product.accumulator, product.m, product.n,
             product.k);
  if (!intrinsic)
    return std::nullopt;
  HeldLayout layout;
  layout.intrinsic = intrinsic->name;
  layout.fragment = intrinsic->accLayout;
  layout.tile = {intrinsic->m, intrinsic->n};
  layout.groupThreads = info.warpSize;
  layout.cyclic = true;
  return layout;
}

LogicalResult LayoutMatrixUnit::emit(OpBuilder &b, Location loc,
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
    return emitError(loc, "no matrix instruction of ")
           << info.name << " takes this dot";
  // The tiles go to the subgroups as emittedLayout states.
  HeldProduct shape;
  shape.a = aType.getElementType();
  shape.b = bType.getElementType();
  shape.accumulator = resultType.getElementType();
  shape.m = m;
  shape.n = n;
  shape.k = k;
  shape.numThreads = product.numThreads;
  std::optional<HeldLayout> dealt = emittedLayout(shape);
  int64_t waveSize = dealt->groupThreads;
  int64_t numWaves = std::max<int64_t>(1, product.numThreads / waveSize);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value lane =
      arith::RemUIOp::create(b, loc, product.threadId, index(waveSize));
  Value wave =
      arith::DivUIOp::create(b, loc, product.threadId, index(waveSize));
  auto place = [&](const FragmentLayout &layout, int64_t rows, int64_t cols) {
    return placeLanes(b, loc, layout, rows, cols, lane);
  };
  const int64_t tileM = dealt->tile[0], tileN = dealt->tile[1],
                tileK = intrinsic->k;
  FailureOr<FragmentPlacement> aPlaced =
      place(*intrinsic->aLayout, tileM, tileK);
  FailureOr<FragmentPlacement> bPlaced =
      place(*intrinsic->bLayout, tileK, tileN);
  FailureOr<FragmentPlacement> accPlaced =
      place(dealt->fragment, dealt->tile[0], dealt->tile[1]);
  if (failed(aPlaced) || failed(bPlaced) || failed(accPlaced))
    return emitError(loc, "the fragments of ")
           << intrinsic->name << " do not cover their tiles";
  Type accElement = resultType.getElementType();
  int64_t accCount = accPlaced->offsets.size();
  Type accType = VectorType::get({accCount}, accElement);
  auto i32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };

  int64_t tilesN = n / tileN, tiles = (m / tileM) * tilesN;
  auto tileLoop =
      scf::ForOp::create(b, loc, wave, index(tiles), index(numWaves));
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
    Value aOperand =
        packOperand(b, loc, *intrinsic, 0, product.a,
                    aPlaced->shifted(b, loc, tileRow, kk).positions(b, loc));
    Value bOperand =
        packOperand(b, loc, *intrinsic, 1, product.b,
                    bPlaced->shifted(b, loc, kk, tileCol).positions(b, loc));
    Value acc = kLoop.getRegionIterArgs()[0];
    Value next = multiply(b, loc, *intrinsic, aOperand, bOperand, acc);
    scf::YieldOp::create(b, loc, next);
  }
  for (auto [i, at] : llvm::enumerate(accAt)) {
    Value value = LLVM::ExtractElementOp::create(b, loc, kLoop.getResult(0),
                                                 i32(int64_t(i)));
    memref::StoreOp::create(b, loc, value, product.result,
                            ValueRange{at.first, at.second});
  }
  return success();
}

std::optional<LayoutMatrixUnit::WaveTiling>
LayoutMatrixUnit::tileWaves(const HeldProduct &product) const {
  if (product.tf32 || product.numThreads % info.warpSize != 0)
    return std::nullopt;
  int64_t numWaves = product.numThreads / info.warpSize;
  auto accPerTile = [&](const MatrixIntrinsic &intrinsic) {
    return intrinsic.accLayout.elementsPerLane(intrinsic.m, intrinsic.n);
  };
  if (product.rowsAcrossWarps) {
    // The layout passes give each wave whole rows (attention): the first
    // instruction, in the preset's order, whose tile height divides a
    // wave's rows. It depends on the rows alone, so that the products of one
    // attention (q.k^T and p.v) put a lane's registers in the same rows.
    if (product.m % numWaves != 0)
      return std::nullopt;
    int64_t waveRows = product.m / numWaves;
    for (const MatrixIntrinsic *intrinsic :
         info.findIntrinsics(product.a, product.b, product.accumulator,
                             /*allowTF32=*/false, MatrixScope::Warp)) {
      if (waveRows % intrinsic->m != 0 || !intrinsic->aLayout ||
          !intrinsic->bLayout)
        continue;
      if (product.n % intrinsic->n != 0 || product.k % intrinsic->k != 0)
        return std::nullopt;
      WaveTiling tiling{intrinsic, numWaves, 1, waveRows / intrinsic->m,
                        product.n / intrinsic->n};
      if (tiling.rows * tiling.cols * accPerTile(*intrinsic) > maxHeldRegisters)
        return std::nullopt;
      return tiling;
    }
    return std::nullopt;
  }
  const MatrixIntrinsic *intrinsic =
      select(product.a, product.b, product.accumulator, product.m, product.n,
             product.k);
  if (!intrinsic)
    return std::nullopt;
  int64_t tilesM = product.m / intrinsic->m, tilesN = product.n / intrinsic->n;
  std::optional<WaveTiling> best;
  for (int64_t wavesM = 1; wavesM <= numWaves; ++wavesM) {
    int64_t wavesN = numWaves / wavesM;
    if (numWaves % wavesM != 0 || tilesM % wavesM != 0 || tilesN % wavesN != 0)
      continue;
    WaveTiling tiling{intrinsic, wavesM, wavesN, tilesM / wavesM,
                      tilesN / wavesN};
    if (tiling.rows * tiling.cols * accPerTile(*intrinsic) > maxHeldRegisters)
      continue;
    // Fewest operand fragments read per k step.
    auto cost = [](const WaveTiling &t) { return t.rows + t.cols; };
    if (!best || cost(tiling) < cost(*best))
      best = tiling;
  }
  return best;
}

std::optional<HeldLayout>
LayoutMatrixUnit::heldLayout(const HeldProduct &product) const {
  std::optional<WaveTiling> t = tileWaves(product);
  if (!t)
    return std::nullopt;
  HeldLayout layout;
  layout.intrinsic = t->intrinsic->name;
  layout.fragment = t->intrinsic->accLayout;
  layout.tile = {t->intrinsic->m, t->intrinsic->n};
  layout.groupThreads = info.warpSize;
  layout.groups = {t->wavesM, t->wavesN};
  layout.tilesPerGroup = {t->rows, t->cols};
  return layout;
}

FailureOr<SmallVector<Value>>
LayoutMatrixUnit::accumulate(OpBuilder &b, Location loc,
                             const HeldProduct &product, Value aBuffer,
                             Value bBuffer, ValueRange registers) const {
  std::optional<WaveTiling> t = tileWaves(product);
  if (!t)
    return emitError(loc, "the matrix unit cannot hold this "
                          "accumulator");
  const MatrixIntrinsic &intrinsic = *t->intrinsic;
  // The registers are where the held layout puts them: each wave's block of
  // tiles at (rowBase, colBase), read from lane `lane`'s fragments.
  FailureOr<HeldBlockPlacement> place =
      heldLayout(product)->placeBlock(b, loc, product.threadId);
  if (failed(place))
    return emitError(loc, "the accumulator of ")
           << intrinsic.name << " does not cover its tile";
  FailureOr<FragmentPlacement> aPlaced = placeLanes(
      b, loc, *intrinsic.aLayout, intrinsic.m, intrinsic.k, place->lane);
  FailureOr<FragmentPlacement> bPlaced = placeLanes(
      b, loc, *intrinsic.bLayout, intrinsic.k, intrinsic.n, place->lane);
  if (failed(aPlaced) || failed(bPlaced))
    return emitError(loc, "the fragments of ")
           << intrinsic.name << " do not cover their tiles";
  int64_t accCount = place->accumulator.offsets.size();
  auto accType = VectorType::get({accCount}, product.accumulator);
  auto i32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  FragmentPlacement aFragment =
      aPlaced->shifted(b, loc, place->rowBase, /*colOrigin=*/Value());
  FragmentPlacement bFragment =
      bPlaced->shifted(b, loc, /*rowOrigin=*/Value(), place->colBase);
  SmallVector<Value> acc(registers);
  std::optional<SharedLayout> layouts[2] = {operandLayout(product, 0),
                                            operandLayout(product, 1)};
  for (int64_t kk = 0; kk < product.k; kk += intrinsic.k) {
    SmallVector<Value> aOperands, bOperands;
    auto offsetOf = [&](unsigned operand) {
      return [&, operand](Value row, Value col) -> Value {
        if (!layouts[operand])
          return {};
        return layouts[operand]->offset(b, loc, row, col,
                                        operandShape(product, operand));
      };
    };
    for (int64_t r = 0; r < t->rows; ++r)
      aOperands.push_back(packOperand(
          b, loc, intrinsic, 0, aBuffer,
          aFragment.positions(b, loc, r * intrinsic.m, kk), offsetOf(0)));
    for (int64_t c = 0; c < t->cols; ++c)
      bOperands.push_back(packOperand(
          b, loc, intrinsic, 1, bBuffer,
          bFragment.positions(b, loc, kk, c * intrinsic.n), offsetOf(1)));
    for (int64_t r = 0; r < t->rows; ++r)
      for (int64_t c = 0; c < t->cols; ++c) {
        int64_t first = (r * t->cols + c) * accCount;
        Value vector = LLVM::UndefOp::create(b, loc, accType);
        for (int64_t i = 0; i < accCount; ++i)
          vector = LLVM::InsertElementOp::create(b, loc, vector, acc[first + i],
                                                 i32(i));
        Value result =
            multiply(b, loc, intrinsic, aOperands[r], bOperands[c], vector);
        for (int64_t i = 0; i < accCount; ++i)
          acc[first + i] =
              LLVM::ExtractElementOp::create(b, loc, result, i32(i));
      }
  }
  return acc;
}

namespace {
/// The layout of operand `operand` of a held product on `intrinsic` (null:
/// the unit does not hold it) in LDS, K-major: rows of k elements (A's rows,
/// B's columns), cut in chunks of what one lane reads, chunk j of row r
/// stored at chunk j ^ (r % phases). `phases` is the chunks of a row, at
/// most what spans the banks of `info` once (32 of 4 bytes on AMD, 64 of 4
/// on Xe-HPC), so that consecutive rows read at one k land on distinct
/// banks.
std::optional<SharedLayout> layoutFor(const TargetInfo &info,
                                      const MatrixIntrinsic *intrinsic,
                                      const MatrixUnit::HeldProduct &product,
                                      unsigned operand) {
  if (!intrinsic)
    return std::nullopt;
  const FragmentLayout &fragment =
      operand == 0 ? *intrinsic->aLayout : *intrinsic->bLayout;
  // The k elements one lane holds: A's along its columns, B's along rows.
  int64_t run =
      operand == 0 ? fragment.sizePerLane[1] : fragment.sizePerLane[0];
  if (run <= 0 || product.k % run != 0)
    return std::nullopt;
  Type element = operand == 0 ? product.a : product.b;
  int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
  int64_t bankLineBytes = info.sharedMemoryBanks * info.sharedMemoryBankBytes;
  if (bankLineBytes <= 0)
    bankLineBytes = 128;
  SharedLayout layout;
  layout.contiguous = operand == 0 ? 1 : 0;
  layout.tile = MatrixUnit::operandShape(product, operand);
  layout.vec = run;
  int64_t runs = product.k / run;
  int64_t bankLineRuns =
      std::max<int64_t>(1, bankLineBytes / (run * elementBytes));
  layout.maxPhase =
      llvm::isPowerOf2_64(runs) ? std::min(runs, bankLineRuns) : 1;
  return layout;
}
} // namespace

const MatrixIntrinsic *
LayoutMatrixUnit::heldIntrinsic(const HeldProduct &product) const {
  std::optional<WaveTiling> t = tileWaves(product);
  return t ? t->intrinsic : nullptr;
}

std::optional<SharedLayout>
LayoutMatrixUnit::operandLayout(const HeldProduct &product,
                                unsigned operand) const {
  const MatrixIntrinsic *intrinsic = heldIntrinsic(product);
  std::optional<SharedLayout> a = layoutFor(info, intrinsic, product, 0);
  std::optional<SharedLayout> b = layoutFor(info, intrinsic, product, 1);
  // Both operands or neither.
  if (!a || !b)
    return std::nullopt;
  return operand == 0 ? a : b;
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
    // As select does: an instruction of these types whose shape divides the
    // dot's (an i8 dot of k = 16 is FMA code where the instruction's k is 32).
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
