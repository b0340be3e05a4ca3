//===- CooperativeMatrix.cpp - tiles the implementation places ------------===//
//
// A #tkw.cooperative_matrix tile is the matrices its warp holds, one
// !tkw.matrix value each, whose elements the implementation places
// among the lanes (Vulkan's cooperative matrix, DESIGN.md §3). Nothing here
// knows where an element is: a dot loads its operands' matrices from its
// workgroup memory with the unit's own loads and multiplies; a conversion
// to or from the placement passes each matrix through the warp's part of
// its scratch, where the unit stores (loads) it whole and the lanes read
// (write) the elements the placement gives them. Float conversions and
// arithmetic happen on the matrices, with splats and broadcast vectors
// made matrices (a vector through memory, loaded with stride 0).
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"

#include "tk/core/Analysis/SharedMemoryAllocation.h"
#include "tk/core/DotOperands.h"
#include "tk/core/TargetInfo.h"
#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <map>

using namespace mlir;

namespace tk::simt {

namespace {

warp::CooperativeMatrixAttr getOpaque(Type type) {
  auto tile = dyn_cast<RankedTensorType>(type);
  return tile
             ? dyn_cast_or_null<warp::CooperativeMatrixAttr>(tile.getEncoding())
             : nullptr;
}

Value constantI32(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}

/// Where each of a thread's matrices starts in the tile: (row, column),
/// i32, the placement's coordinates of the matrix's first register
/// aligned down to the matrix (the lanes move within it).
SmallVector<std::pair<Value, Value>>
getMatrixOrigins(OpBuilder &b, Location loc, warp::CooperativeMatrixAttr opaque,
                 const ThreadPosition &thread) {
  const LinearLayout &placement = opaque.getPlacement().getLinearLayout();
  ThreadCoordinates coordinates(b, loc, placement, thread);
  Value rowMask = constantI32(b, loc, ~(opaque.getRows() - 1));
  Value colMask = constantI32(b, loc, ~(opaque.getCols() - 1));
  SmallVector<std::pair<Value, Value>> origins;
  for (int64_t matrix = 0; matrix < opaque.getNumMatrices(); ++matrix) {
    int32_t reg = matrix * opaque.getRegistersPerMatrix();
    origins.push_back({arith::AndIOp::create(
                           b, loc, coordinates.get(b, loc, reg, 0), rowMask),
                       arith::AndIOp::create(
                           b, loc, coordinates.get(b, loc, reg, 1), colMask)});
  }
  return origins;
}

/// The element (index) `row` * `stride` + `col` after `base` (all i32), or
/// with `perWord` elements a word, the word that starts there.
Value elementAt(OpBuilder &b, Location loc, Value base, Value row,
                int64_t stride, Value col, int64_t perWord = 1) {
  Value offset = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, row, constantI32(b, loc, stride)),
      col);
  Value element = arith::AddIOp::create(b, loc, base, offset);
  if (perWord > 1)
    element = arith::ShRUIOp::create(
        b, loc, element, constantI32(b, loc, llvm::Log2_64(perWord)));
  return toIndex(b, loc, element);
}

/// A splat constant: one matrix of the value, for each matrix.
struct ConstantLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    warp::CooperativeMatrixAttr opaque = getOpaque(op.getType());
    if (!opaque)
      return failure();
    auto splat = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!splat)
      return rewriter.notifyMatchFailure(op, "a constant that is not a splat");
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertType(op.getType(), types)))
      return failure();
    Value scalar = arith::ConstantOp::create(
        rewriter, op.getLoc(),
        cast<TypedAttr>(splat.getSplatValue<Attribute>()));
    Value matrix = warp::MatrixSplatOp::create(rewriter, op.getLoc(),
                                               types.front(), scalar);
    rewriter.replaceOpWithMultiple(
        op, {SmallVector<Value>(opaque.getNumMatrices(), matrix)});
    return success();
  }
};

/// A float conversion of a cooperative-matrix tile: each matrix converted
/// where it is.
template <typename OpTy>
struct FloatConversionLowering : OpConversionPattern<OpTy> {
  FloatConversionLowering(const TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern<OpTy>(converter, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(OpTy op,
                  typename OpConversionPattern<OpTy>::OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!getOpaque(op.getType()))
      return failure();
    SmallVector<Type> types;
    if (failed(this->getTypeConverter()->convertType(op.getType(), types)))
      return failure();
    SmallVector<Value> results;
    for (auto [matrix, type] : llvm::zip_equal(adaptor.getIn(), types))
      results.push_back(
          warp::MatrixConvertOp::create(rewriter, op.getLoc(), type, matrix));
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// A float operation on two cooperative-matrix tiles: each pair of
/// matrices combined where they are.
template <typename OpTy, warp::MatrixElementwiseKind kind>
struct ElementwiseLowering : OpConversionPattern<OpTy> {
  ElementwiseLowering(const TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern<OpTy>(converter, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(OpTy op,
                  typename OpConversionPattern<OpTy>::OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!getOpaque(op.getType()))
      return failure();
    SmallVector<Value> results;
    for (auto [lhs, rhs] : llvm::zip_equal(adaptor.getLhs(), adaptor.getRhs()))
      results.push_back(warp::MatrixElementwiseOp::create(
          rewriter, op.getLoc(), lhs.getType(), kind, lhs, rhs));
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// A scalar splat into a cooperative-matrix tile: one matrix of it, for
/// each matrix.
struct SplatLowering : OpConversionPattern<tk::SplatOp> {
  SplatLowering(const TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(tk::SplatOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    warp::CooperativeMatrixAttr opaque = getOpaque(op.getType());
    if (!opaque)
      return failure();
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertType(op.getType(), types)))
      return failure();
    Value matrix = warp::MatrixSplatOp::create(
        rewriter, op.getLoc(), types.front(), adaptor.getSrc().front());
    rewriter.replaceOpWithMultiple(
        op, {SmallVector<Value>(opaque.getNumMatrices(), matrix)});
    return success();
  }
};

/// A column (m x 1) or row (1 x n) broadcast into a cooperative-matrix
/// tile: the one thread that holds each element writes it to the op's
/// workgroup memory, and after a barrier each matrix loads its rows' (its
/// columns') part of the vector with stride 0, column-major for a column:
/// every column (row) of the matrix reads the same elements.
struct BroadcastLowering : OpConversionPattern<tk::BroadcastOp> {
  BroadcastLowering(const TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(tk::BroadcastOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    warp::CooperativeMatrixAttr opaque = getOpaque(op.getType());
    if (!opaque)
      return failure();
    Location loc = op.getLoc();
    auto sourceType = cast<RankedTensorType>(op.getSrc().getType());
    const LinearLayout *source = getLinearLayout(sourceType);
    // The axis the vector runs along: 0 for a column, 1 for a row.
    int axis = sourceType.getDimSize(0) == 1 ? 1 : 0;
    if (!source || sourceType.getRank() != 2 ||
        sourceType.getDimSize(1 - axis) != 1)
      return op.emitOpError("tk-convert-registers-to-simt: a broadcast into "
                            "a cooperative-matrix tile from ")
             << sourceType << ", not an m x 1 or 1 x n tile in registers";
    auto scratch = op->getAttrOfType<DenseI64ArrayAttr>(
        warp::TkwDialect::kScratchAttrName);
    Type element = sourceType.getElementType();
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    Value buffer = getScratchBuffer(rewriter, loc, op, element);
    if (!scratch || !buffer || scratch[0] % bytes ||
        scratch[1] < sourceType.getNumElements() * bytes)
      return op.emitOpError("tk-convert-registers-to-simt: a broadcast into a "
                            "cooperative-matrix tile without its tkw.scratch "
                            "(run tk-allocate-shared-memory first)");
    SmallVector<Type> matrixTypes;
    if (failed(getTypeConverter()->convertType(op.getType(), matrixTypes)))
      return failure();
    ThreadPosition thread = ThreadPosition::get(
        rewriter, loc, *getTypeConverter<RegisterTypeConverter>());
    Value base = constantI32(rewriter, loc, scratch[0] / bytes);
    Writers writers = getWriters(rewriter, loc, sourceType, thread);
    ThreadCoordinates coordinates(rewriter, loc, *source, thread);
    ValueRange values = adaptor.getSrc();
    guarded(rewriter, loc, writers.holder, [&](OpBuilder &b) {
      for (auto [reg, value] : llvm::enumerate(values)) {
        if (reg & writers.registerCopies)
          continue;
        Value index = arith::AddIOp::create(b, loc, base,
                                            coordinates.get(b, loc, reg, axis));
        memref::StoreOp::create(b, loc, value, buffer, toIndex(b, loc, index));
      }
    });
    gpu::BarrierOp::create(rewriter, loc);
    SmallVector<Value> results;
    for (auto [origin, type] : llvm::zip_equal(
             getMatrixOrigins(rewriter, loc, opaque, thread), matrixTypes)) {
      Value start = arith::AddIOp::create(
          rewriter, loc, base, axis == 0 ? origin.first : origin.second);
      results.push_back(warp::MatrixLoadOp::create(
          rewriter, loc, type, buffer, toIndex(rewriter, loc, start),
          /*stride=*/0, /*column_major=*/axis == 0));
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// A conversion between a cooperative-matrix tile and its placement,
/// matrix by matrix through the warp's part of the scratch: the unit stores
/// the matrix and each lane reads its registers of it, or the lanes write
/// theirs and the unit loads it. A barrier orders each matrix's writes
/// before its reads, and its reads before the next one's writes.
struct ConversionLowering : OpConversionPattern<warp::ConvertLayoutOp> {
  ConversionLowering(const TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(warp::ConvertLayoutOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    warp::CooperativeMatrixAttr leaving = getOpaque(op.getSrc().getType());
    warp::CooperativeMatrixAttr entering = getOpaque(op.getType());
    warp::CooperativeMatrixAttr opaque = leaving ? leaving : entering;
    if (!opaque)
      return failure();
    Location loc = op.getLoc();
    auto scratch = op->getAttrOfType<DenseI64ArrayAttr>(
        warp::TkwDialect::kScratchAttrName);
    Type element = op.getType().getElementType();
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    Value buffer = getScratchBuffer(rewriter, loc, op, element);
    if (!scratch || !buffer || scratch[0] % bytes ||
        scratch[1] < getCooperativeMatrixScratchBytes(opaque, bytes))
      return op.emitOpError("tk-convert-registers-to-simt: a conversion of a "
                            "cooperative-matrix tile without its tkw.scratch "
                            "(run tk-allocate-shared-memory first)");
    const LinearLayout &placement = opaque.getPlacement().getLinearLayout();
    int64_t rows = opaque.getRows(), cols = opaque.getCols();
    int64_t perMatrix = opaque.getRegistersPerMatrix();
    ThreadPosition thread = ThreadPosition::get(
        rewriter, loc, *getTypeConverter<RegisterTypeConverter>());
    ThreadCoordinates coordinates(rewriter, loc, placement, thread);
    // The warp's matrix, row-major.
    Value slot = arith::AddIOp::create(
        rewriter, loc, constantI32(rewriter, loc, scratch[0] / bytes),
        arith::MulIOp::create(rewriter, loc, thread.warp,
                              constantI32(rewriter, loc, rows * cols)));
    Value rowMask = constantI32(rewriter, loc, rows - 1);
    Value colMask = constantI32(rewriter, loc, cols - 1);
    auto elementOf = [&](int32_t reg) {
      return elementAt(
          rewriter, loc, slot,
          arith::AndIOp::create(
              rewriter, loc, coordinates.get(rewriter, loc, reg, 0), rowMask),
          cols,
          arith::AndIOp::create(
              rewriter, loc, coordinates.get(rewriter, loc, reg, 1), colMask));
    };
    Value matrixStart = toIndex(rewriter, loc, slot);
    ValueRange values = adaptor.getSrc();
    // The matrices a conversion into the opaque tile loads, one a block.
    SmallVector<Type> matrixTypes;
    if (entering &&
        failed(getTypeConverter()->convertType(op.getType(), matrixTypes)))
      return failure();
    SmallVector<Value> results;
    for (int64_t matrix = 0; matrix < opaque.getNumMatrices(); ++matrix) {
      if (matrix > 0)
        gpu::BarrierOp::create(rewriter, loc);
      if (leaving) {
        warp::MatrixStoreOp::create(rewriter, loc, values[matrix], buffer,
                                    matrixStart, cols);
        gpu::BarrierOp::create(rewriter, loc);
        for (int64_t i = 0; i < perMatrix; ++i)
          results.push_back(memref::LoadOp::create(
              rewriter, loc, buffer, elementOf(matrix * perMatrix + i)));
      } else {
        for (int64_t i = 0; i < perMatrix; ++i) {
          int32_t reg = matrix * perMatrix + i;
          memref::StoreOp::create(rewriter, loc, values[reg], buffer,
                                  elementOf(reg));
        }
        gpu::BarrierOp::create(rewriter, loc);
        results.push_back(warp::MatrixLoadOp::create(
            rewriter, loc, matrixTypes[matrix], buffer, matrixStart, cols));
      }
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// A dot on cooperative matrices: both operands written to the dot's
/// scratch row-major by the threads that hold them, and after a barrier,
/// for each k step, each row's matrix of a and each column's of b loaded
/// once and multiplied into each of the warp's accumulator matrices.
struct DotLowering : OpConversionPattern<tk::DotOp> {
  DotLowering(const TypeConverter &converter, MLIRContext *context,
              std::shared_ptr<const TargetInfo> target)
      : OpConversionPattern(converter, context, /*benefit=*/2),
        target(std::move(target)) {}

  LogicalResult
  matchAndRewrite(tk::DotOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    warp::CooperativeMatrixAttr opaque = getOpaque(op.getType());
    if (!opaque)
      return failure();
    llvm::Expected<DotOperandPlan> plan = planDotOperands(op, target.get());
    if (!plan)
      return op.emitOpError("tk-convert-registers-to-simt: ")
             << llvm::toString(plan.takeError());
    if (!plan->intrinsic || !plan->intrinsic->opaque || !plan->shared[0] ||
        !plan->shared[1])
      return op.emitOpError("tk-convert-registers-to-simt: a dot into a "
                            "cooperative-matrix tile whose intrinsic is not "
                            "opaque");
    const MatrixIntrinsic &intrinsic = *plan->intrinsic;
    Location loc = op.getLoc();
    ThreadPosition thread = ThreadPosition::get(
        rewriter, loc, *getTypeConverter<RegisterTypeConverter>());
    Type words = getCooperativeOperandWords(op, *plan);
    FailureOr<std::array<OperandScratch, 2>> written = writeOperandsToScratch(
        rewriter, loc, op, *plan, {adaptor.getA(), adaptor.getB()}, thread,
        target->workgroupVectorBytes, words);
    if (failed(written))
      return failure();
    const std::array<OperandScratch, 2> &scratch = *written;
    // Offsets and strides count the buffer's elements: operand elements,
    // or words of several.
    std::array<int64_t, 2> perWord = {1, 1};
    if (words)
      perWord = {getWordElements(scratch[0].buffer,
                                 op.getA().getType().getElementType()),
                 getWordElements(scratch[1].buffer,
                                 op.getB().getType().getElementType())};

    auto aType = cast<RankedTensorType>(op.getA().getType());
    auto bType = cast<RankedTensorType>(op.getB().getType());
    int64_t depth = aType.getDimSize(1);
    // Integer operands are signed (tk's i8 dots are s8): the matrix type
    // says so, and the product's lowering marks its operands signed.
    auto matrixType = [&](int64_t rows, int64_t cols, Type element,
                          StringRef use) {
      if (auto integer = dyn_cast<IntegerType>(element))
        element = IntegerType::get(integer.getContext(), integer.getWidth(),
                                   IntegerType::Signed);
      return warp::MatrixType::get(element.getContext(), rows, cols, element,
                                   use);
    };
    Type aMatrix =
        matrixType(intrinsic.m, intrinsic.k, aType.getElementType(), "a");
    Type bMatrix =
        matrixType(intrinsic.k, intrinsic.n, bType.getElementType(), "b");
    SmallVector<std::pair<Value, Value>> origins =
        getMatrixOrigins(rewriter, loc, opaque, thread);
    // Matrices of one row (column) share their operand matrices: their
    // origins differ only in the register part, a constant.
    const LinearLayout &placement = opaque.getPlacement().getLinearLayout();
    SmallVector<std::pair<int32_t, int32_t>> keys;
    for (int64_t matrix = 0; matrix < opaque.getNumMatrices(); ++matrix) {
      SmallVector<int32_t> at = registerCoordinates(
          placement, matrix * opaque.getRegistersPerMatrix());
      keys.push_back({at[0] & ~int32_t(intrinsic.m - 1),
                      at[1] & ~int32_t(intrinsic.n - 1)});
    }
    SmallVector<Value> results(adaptor.getAcc().begin(),
                               adaptor.getAcc().end());
    // Both operands wait in column blocks (planDotOperands): a's matrix at
    // (row, k) starts row rows into block k / blockA, b's at (k, col) k
    // rows into block col / blockB, each block a rows (depth) high.
    int64_t blockA = getOpaqueOperandBlock(intrinsic, 0);
    int64_t blockB = getOpaqueOperandBlock(intrinsic, 1);
    int64_t rowsA = aType.getDimSize(0);
    for (int64_t k = 0; k < depth; k += intrinsic.k) {
      Value aBlock = constantI32(rewriter, loc,
                                 (k / blockA) * rowsA * blockA + k % blockA);
      Value kRow = constantI32(rewriter, loc, k);
      std::map<int32_t, Value> aStep, bStep;
      for (auto [matrix, key] : llvm::enumerate(keys)) {
        auto [row, col] = origins[matrix];
        if (!aStep.count(key.first))
          aStep[key.first] = warp::MatrixLoadOp::create(
              rewriter, loc, aMatrix, scratch[0].buffer,
              elementAt(rewriter, loc, scratch[0].base, row, blockA, aBlock,
                        perWord[0]),
              blockA / perWord[0]);
        if (!bStep.count(key.second)) {
          // col is a multiple of blockB (n): its block starts (col / blockB)
          // * depth * blockB = col * depth elements in.
          Value bBlock = arith::MulIOp::create(
              rewriter, loc, col, constantI32(rewriter, loc, depth));
          bStep[key.second] = warp::MatrixLoadOp::create(
              rewriter, loc, bMatrix, scratch[1].buffer,
              elementAt(rewriter, loc, scratch[1].base, kRow, blockB, bBlock,
                        perWord[1]),
              blockB / perWord[1]);
        }
        results[matrix] = warp::MatrixMultiplyAddOp::create(
            rewriter, loc, results[matrix].getType(), aStep[key.first],
            bStep[key.second], results[matrix]);
      }
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }

  std::shared_ptr<const TargetInfo> target;
};

} // namespace

Type getCooperativeOperandWords(tk::DotOp dot, const DotOperandPlan &plan) {
  if (!plan.intrinsic || !plan.intrinsic->opaque)
    return {};
  constexpr int64_t kWordBytes = 16;
  for (unsigned opIdx : {0u, 1u}) {
    Value operand = opIdx == 0 ? dot.getA() : dot.getB();
    const LinearLayout *source = getLinearLayout(operand.getType());
    Type element = getElementTypeOrSelf(operand.getType());
    if (!source || !plan.shared[opIdx] || !element.isIntOrFloat() ||
        element.getIntOrFloatBitWidth() > 16 ||
        plan.sharedOffset[opIdx] % kWordBytes)
      return {};
    int64_t perWord = kWordBytes * 8 / element.getIntOrFloatBitWidth();
    llvm::Expected<LinearLayout> toOffset = plan.shared[opIdx]->invert();
    llvm::Expected<LinearLayout> written =
        toOffset ? source->compose(*toOffset) : toOffset.takeError();
    if (!written) {
      llvm::consumeError(written.takeError());
      return {};
    }
    // Whole words a thread writes, and matrices that start on words.
    if (written->getNumConsecutiveInOut() < perWord ||
        (getFreeMask(*source, kRegisterDim) & (perWord - 1)) ||
        source->getInDimSize(kRegisterDim) % perWord ||
        getOpaqueOperandBlock(*plan.intrinsic, opIdx) % perWord)
      return {};
  }
  return VectorType::get({4}, IntegerType::get(dot.getContext(), 32));
}

void populateCooperativeMatrixPatterns(
    RegisterTypeConverter &converter, RewritePatternSet &patterns,
    std::shared_ptr<const TargetInfo> target) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ConstantLowering>(converter, context, /*benefit=*/2);
  patterns.add<FloatConversionLowering<arith::TruncFOp>,
               FloatConversionLowering<arith::ExtFOp>>(converter, context);
  using Kind = warp::MatrixElementwiseKind;
  patterns.add<ElementwiseLowering<arith::AddFOp, Kind::addf>,
               ElementwiseLowering<arith::SubFOp, Kind::subf>,
               ElementwiseLowering<arith::MulFOp, Kind::mulf>,
               ElementwiseLowering<arith::DivFOp, Kind::divf>, SplatLowering,
               BroadcastLowering>(converter, context);
  patterns.add<ConversionLowering>(converter, context);
  patterns.add<DotLowering>(converter, context, std::move(target));
}

} // namespace tk::simt
