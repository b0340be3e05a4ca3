//===- Elementwise.cpp - ops that work on the registers a thread holds ----===//
//
// arith and math on tiles, splat, make_range, addptr, and the shape ops
// whose result every thread finds in its own registers (expand_dims,
// broadcast, trans): each result register is computed from the operands'
// registers alone, so nothing crosses threads.
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"

#include "tk/core/Conversion/ScalarOps.h"

#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace tk::simt {
namespace {

/// The number of registers of `type`'s layout (1 for a scalar).
int64_t numRegisters(Type type) {
  const LinearLayout *layout = getLinearLayout(type);
  return layout ? layout->getInDimSize(kRegisterDim) : 1;
}

/// An arith or math op on tiles: the same op once per register; and one
/// on narrow float scalars, which is computed in f32 (emitScalarOp).
struct ElementwiseLowering : ConversionPattern {
  ElementwiseLowering(const TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<ValueRange> operands,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef dialect = op->getDialect()->getNamespace();
    if (dialect != "arith" && dialect != "math")
      return failure();
    if (op->getNumResults() != 1 || op->getNumRegions() != 0 ||
        isa<arith::ConstantOp>(op))
      return failure();
    Type resultType = op->getResult(0).getType();
    auto tile = dyn_cast<RankedTensorType>(resultType);
    if (!tile && !computesInF32(op))
      return failure();
    int64_t registers = numRegisters(resultType);
    for (ValueRange operand : operands)
      if (operand.size() != 1 && int64_t(operand.size()) != registers)
        return rewriter.notifyMatchFailure(op, "operands of other layouts");
    auto scalarType = [&](Type type) {
      return getTypeConverter()->convertType(type);
    };
    SmallVector<Value> results;
    for (int64_t reg = 0; reg < registers; ++reg) {
      SmallVector<Value> scalars;
      for (ValueRange operand : operands)
        scalars.push_back(operand.size() == 1 ? operand[0] : operand[reg]);
      FailureOr<Value> result =
          emitScalarOp(rewriter, op->getLoc(), op, scalars, scalarType);
      if (failed(result))
        return failure();
      results.push_back(*result);
    }
    if (!tile) {
      rewriter.replaceOp(op, results.front());
      return success();
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// A splat constant tile: its value in every register.
struct ConstantLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = dyn_cast<RankedTensorType>(op.getType());
    if (!tile)
      return failure();
    auto dense = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!dense)
      return rewriter.notifyMatchFailure(op, "a constant that is not a splat");
    Value value = arith::ConstantOp::create(
        rewriter, op.getLoc(),
        cast<TypedAttr>(dense.getSplatValue<Attribute>()));
    rewriter.replaceOpWithMultiple(
        op, {SmallVector<Value>(numRegisters(tile), value)});
    return success();
  }
};

struct SplatLowering : OpConversionPattern<tk::SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tk::SplatOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange scalar = adaptor.getSrc();
    if (scalar.size() != 1)
      return failure();
    rewriter.replaceOpWithMultiple(
        op, {SmallVector<Value>(numRegisters(op.getType()), scalar[0])});
    return success();
  }
};

/// Element i of make_range is start + its coordinate.
struct MakeRangeLowering : OpConversionPattern<tk::MakeRangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tk::MakeRangeOp op, OneToNOpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const LinearLayout *layout = getLinearLayout(op.getType());
    if (!layout)
      return failure();
    auto converter = getTypeConverter<RegisterTypeConverter>();
    Location loc = op.getLoc();
    ThreadPosition thread = ThreadPosition::get(rewriter, loc, *converter);
    ThreadCoordinates coordinates(rewriter, loc, *layout, thread);
    Value start = arith::ConstantIntOp::create(
        rewriter, loc, rewriter.getI32Type(), op.getStart());
    SmallVector<Value> results;
    for (int32_t reg = 0; reg < layout->getInDimSize(kRegisterDim); ++reg)
      results.push_back(arith::AddIOp::create(
          rewriter, loc, start, coordinates.get(rewriter, loc, reg, 0)));
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// A shape op whose result's registers are its source's, in the same
/// thread: `project` maps a result coordinate to the source's.
template <typename ShapeOp>
struct RegisterShapeLowering : OpConversionPattern<ShapeOp> {
  using OpConversionPattern<ShapeOp>::OpConversionPattern;
  using OneToNOpAdaptor =
      typename OpConversionPattern<ShapeOp>::OneToNOpAdaptor;

  static SmallVector<int32_t> project(ShapeOp op, ArrayRef<int32_t> result);

  LogicalResult
  matchAndRewrite(ShapeOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const LinearLayout *from = getLinearLayout(op.getSrc().getType());
    const LinearLayout *to = getLinearLayout(op.getType());
    if (!from || !to)
      return failure();
    std::optional<SmallVector<int32_t>> map =
        mapRegisters(*from, *to, [&](ArrayRef<int32_t> coordinates) {
          return project(op, coordinates);
        });
    if (!map)
      return rewriter.notifyMatchFailure(
          op, "the result's elements are not in the same thread");
    ValueRange source = adaptor.getSrc();
    SmallVector<Value> results;
    for (int32_t reg : *map)
      results.push_back(source[reg]);
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

template <>
SmallVector<int32_t>
RegisterShapeLowering<tk::ExpandDimsOp>::project(tk::ExpandDimsOp op,
                                                 ArrayRef<int32_t> result) {
  SmallVector<int32_t> source(result);
  source.erase(source.begin() + op.getAxis());
  return source;
}

template <>
SmallVector<int32_t>
RegisterShapeLowering<tk::BroadcastOp>::project(tk::BroadcastOp op,
                                                ArrayRef<int32_t> result) {
  SmallVector<int32_t> source(result);
  ArrayRef<int64_t> shape = op.getSrc().getType().getShape();
  for (auto [i, size] : llvm::enumerate(shape))
    if (size == 1)
      source[i] = 0;
  return source;
}

/// fp_to_fp: each register converted with the op's rounding.
struct FpToFpLowering : OpConversionPattern<tk::FpToFpOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tk::FpToFpOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto to = dyn_cast<FloatType>(getElementTypeOrSelf(op.getType()));
    if (!to)
      return failure();
    SmallVector<Value> results;
    for (Value value : adaptor.getSrc())
      results.push_back(
          convertFloat(rewriter, op.getLoc(), value, to, op.getRounding()));
    if (isa<RankedTensorType>(op.getType()))
      rewriter.replaceOpWithMultiple(op, {results});
    else
      rewriter.replaceOp(op, results.front());
    return success();
  }
};

template <>
SmallVector<int32_t>
RegisterShapeLowering<tk::TransOp>::project(tk::TransOp op,
                                            ArrayRef<int32_t> result) {
  // Result dimension i is source dimension order[i].
  SmallVector<int32_t> source(result.size());
  for (auto [i, d] : llvm::enumerate(op.getOrder()))
    source[d] = result[i];
  return source;
}

template <>
SmallVector<int32_t>
RegisterShapeLowering<tk::ReshapeOp>::project(tk::ReshapeOp op,
                                              ArrayRef<int32_t> result) {
  // Both shapes read the same elements in row-major order.
  int64_t flat = 0;
  for (auto [coordinate, size] : llvm::zip(result, op.getType().getShape()))
    flat = flat * size + coordinate;
  ArrayRef<int64_t> shape = op.getSrc().getType().getShape();
  SmallVector<int32_t> source(shape.size());
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    source[d] = int32_t(flat % shape[d]);
    flat /= shape[d];
  }
  return source;
}

/// join: the pairs a thread holds are its own elements of both sources
/// (joinLayout), the last coordinate saying which.
struct JoinLowering : OpConversionPattern<tk::JoinOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tk::JoinOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const LinearLayout *from = getLinearLayout(op.getLhs().getType());
    const LinearLayout *to = getLinearLayout(op.getType());
    if (!from || !to || getLinearLayout(op.getRhs().getType()) == nullptr ||
        *getLinearLayout(op.getRhs().getType()) != *from)
      return failure();
    size_t last = to->getNumOutDims() - 1;
    for (StringRef dim : {kLaneDim, kWarpDim})
      for (int32_t bit = 0;
           to->hasInDim(dim) && bit < to->getInDimSizeLog2(dim); ++bit)
        if (to->apply({{dim, 1 << bit}})[last].second != 0)
          return rewriter.notifyMatchFailure(
              op, "the pairs are spread over threads");
    std::optional<SmallVector<int32_t>> map =
        mapRegisters(*from, *to, [&](ArrayRef<int32_t> coordinates) {
          return SmallVector<int32_t>(coordinates.drop_back());
        });
    if (!map)
      return rewriter.notifyMatchFailure(
          op, "the result's elements are not in the same thread");
    ValueRange lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    SmallVector<Value> results;
    for (auto [reg, sourceReg] : llvm::enumerate(*map))
      results.push_back(registerCoordinates(*to, int32_t(reg))[last]
                            ? rhs[sourceReg]
                            : lhs[sourceReg]);
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// addptr: a getelementptr per register over the pointee.
struct AddPtrLowering : OpConversionPattern<tk::AddPtrOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tk::AddPtrOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type pointerType = op.getType();
    if (auto tile = dyn_cast<RankedTensorType>(pointerType))
      pointerType = tile.getElementType();
    auto pointer = dyn_cast<tk::PtrType>(pointerType);
    if (!pointer || isa<RankedTensorType>(pointer.getPointeeType()))
      return failure();
    Type pointee = getTypeConverter()->convertType(pointer.getPointeeType());
    Type llvmPointer = getTypeConverter()->convertType(pointer);
    if (!pointee || !llvmPointer)
      return failure();
    ValueRange bases = adaptor.getPtr();
    ValueRange offsets = adaptor.getOffset();
    int64_t registers = std::max(bases.size(), offsets.size());
    SmallVector<Value> results;
    for (int64_t reg = 0; reg < registers; ++reg)
      results.push_back(LLVM::GEPOp::create(
          rewriter, op.getLoc(), llvmPointer, getMemoryType(pointee),
          bases.size() == 1 ? bases[0] : bases[reg],
          ValueRange{offsets.size() == 1 ? offsets[0] : offsets[reg]}));
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

} // namespace

void populateElementwisePatterns(RegisterTypeConverter &converter,
                                 RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ElementwiseLowering>(converter, context);
  patterns.add<ConstantLowering, SplatLowering, MakeRangeLowering,
               RegisterShapeLowering<tk::ExpandDimsOp>,
               RegisterShapeLowering<tk::BroadcastOp>,
               RegisterShapeLowering<tk::TransOp>,
               RegisterShapeLowering<tk::ReshapeOp>, JoinLowering,
               AddPtrLowering, FpToFpLowering>(converter, context);
}

} // namespace tk::simt
