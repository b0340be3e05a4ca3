//===- Reduce.cpp - reductions: in a thread, across lanes, across warps ---===//
//
// A tk.reduce combines what each thread holds of a line first (its
// registers along the axis, in register order), then across the lanes that
// hold the line's other parts (butterfly shuffles over the lane bits along
// the axis), then, where warps split the axis, through the op's scratch:
// one value per warp and line, a barrier, and every thread combines the
// warps' values in warp order. The register layout says which of these a
// reduction needs; nothing is decided by the tile's shape.
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"

#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <map>

using namespace mlir;

namespace tk::simt {

Value toStorage(OpBuilder &b, Location loc, Value value) {
  if (value.getType().isInteger(1))
    return arith::ExtUIOp::create(b, loc, b.getI8Type(), value);
  if (isa<LLVM::LLVMPointerType>(value.getType()))
    return LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), value);
  return value;
}

Value fromStorage(OpBuilder &b, Location loc, Value value, Type type) {
  if (type.isInteger(1))
    return arith::TruncIOp::create(b, loc, type, value);
  if (isa<LLVM::LLVMPointerType>(type))
    return LLVM::IntToPtrOp::create(b, loc, type, value);
  return value;
}

Value toIndex(OpBuilder &b, Location loc, Value value) {
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), value);
}

namespace {

using Key = SmallVector<int32_t>;

/// A coordinate without dimension `axis`.
Key dropAxis(ArrayRef<int32_t> coordinates, int64_t axis) {
  Key key(coordinates);
  key.erase(key.begin() + axis);
  return key;
}

/// Which bits of `dim` of `layout` are along `axis` only (the bits a
/// reduction combines over); fails where a basis mixes the axis with other
/// dimensions.
FailureOr<SmallVector<int32_t>> bitsAlongAxis(const LinearLayout &layout,
                                              StringRef dim, int64_t axis) {
  SmallVector<int32_t> bits;
  std::vector<std::string> outs = layout.getOutDimNames();
  for (int32_t bit = 0; bit < layout.getInDimSizeLog2(dim); ++bit) {
    bool along = layout.getBasis(dim, bit, outs[axis]) != 0;
    bool across = false;
    for (auto [i, out] : llvm::enumerate(outs))
      if (int64_t(i) != axis && layout.getBasis(dim, bit, out) != 0)
        across = true;
    if (along && across)
      return failure();
    if (along)
      bits.push_back(bit);
  }
  return bits;
}

struct ReduceLowering : OpConversionPattern<tk::ReduceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tk::ReduceOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto converter = getTypeConverter<RegisterTypeConverter>();
    int64_t warpSize = converter->getWarpSize();
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    Type sourceType = op.getSrcs()[0].getType();
    const LinearLayout *layout = getLinearLayout(sourceType);
    if (!layout)
      return failure();
    for (Value src : op.getSrcs())
      if (cast<RankedTensorType>(src.getType()).getEncoding() !=
          cast<RankedTensorType>(sourceType).getEncoding())
        return rewriter.notifyMatchFailure(op, "sources of other layouts");
    FailureOr<SmallVector<int32_t>> laneBits =
        bitsAlongAxis(*layout, kLaneDim, axis);
    FailureOr<SmallVector<int32_t>> warpBits =
        bitsAlongAxis(*layout, kWarpDim, axis);
    if (failed(laneBits) || failed(warpBits))
      return rewriter.notifyMatchFailure(
          op, "a lane or warp basis mixes the axis with other dimensions");
    ArrayRef<ValueRange> sources = adaptor.getSrcs();
    unsigned numSources = sources.size();
    Region &region = op.getCombineOp();

    // The combiner, applied; a combiner it cannot apply fails the pattern
    // once the op is done.
    bool combinable = true;
    auto apply = [&](ValueRange accumulated, ValueRange next) {
      FailureOr<SmallVector<Value>> combined =
          combine(rewriter, loc, region, accumulated, next);
      if (failed(combined)) {
        combinable = false;
        return SmallVector<Value>(accumulated);
      }
      return *combined;
    };

    // 1. In each thread: its registers of each line, in register order,
    // each element once.
    int32_t copies = getFreeMask(*layout, kRegisterDim);
    std::map<Key, SmallVector<Value>> partial;
    std::map<Key, int32_t> representative;
    for (int32_t reg = 0; reg < layout->getInDimSize(kRegisterDim); ++reg) {
      if (reg & copies)
        continue;
      Key key = dropAxis(registerCoordinates(*layout, reg), axis);
      SmallVector<Value> values;
      for (ValueRange source : sources)
        values.push_back(source[reg]);
      auto [it, inserted] = partial.try_emplace(key, values);
      if (inserted)
        representative[key] = reg;
      else
        it->second = apply(it->second, values);
    }

    // 2. Across the lanes along the axis.
    for (int32_t bit : *laneBits)
      for (auto &[key, values] : partial) {
        SmallVector<Value> others;
        for (Value value : values)
          others.push_back(
              shuffleXor(rewriter, loc, value, 1 << bit, warpSize));
        values = apply(values, others);
      }
    if (!combinable)
      return failure();

    auto resultTile = dyn_cast<RankedTensorType>(op.getResult(0).getType());
    const LinearLayout *resultLayout =
        resultTile ? getLinearLayout(resultTile) : nullptr;
    if (resultTile && !resultLayout)
      return failure();

    SmallVector<SmallVector<Value>> results(numSources);
    if (warpBits->empty()) {
      // Every thread holds its lines whole: the result's registers are
      // the lines', by coordinate.
      if (!resultLayout) {
        for (unsigned i = 0; i < numSources; ++i)
          results[i].push_back(partial.begin()->second[i]);
      } else {
        // The result's lanes and warps hold the lines the source's do.
        for (StringRef dim : {kLaneDim, kWarpDim})
          for (int32_t bit = 0; bit < layout->getInDimSizeLog2(dim); ++bit) {
            Key source, result;
            for (auto &[name, value] : layout->apply({{dim, 1 << bit}}))
              source.push_back(value);
            for (auto &[name, value] : resultLayout->apply({{dim, 1 << bit}}))
              result.push_back(value);
            if (dropAxis(source, axis) != result)
              return rewriter.notifyMatchFailure(
                  op, "the result's threads hold other lines");
          }
        for (int32_t reg = 0; reg < resultLayout->getInDimSize(kRegisterDim);
             ++reg) {
          auto it = partial.find(registerCoordinates(*resultLayout, reg));
          if (it == partial.end())
            return rewriter.notifyMatchFailure(
                op, "the result holds a line the thread did not reduce");
          for (unsigned i = 0; i < numSources; ++i)
            results[i].push_back(it->second[i]);
        }
      }
    } else if (failed(combineAcrossWarps(op, rewriter, *layout, resultLayout,
                                         *laneBits, *warpBits, partial,
                                         representative, results))) {
      return failure();
    }

    if (resultTile) {
      rewriter.replaceOpWithMultiple(op, results);
    } else {
      SmallVector<Value> scalars;
      for (auto &values : results)
        scalars.push_back(values.front());
      rewriter.replaceOp(op, scalars);
    }
    return success();
  }

  /// Step 3: one value per warp and line through the op's scratch, then
  /// every thread combines the warps' values for the lines it holds.
  LogicalResult
  combineAcrossWarps(tk::ReduceOp op, ConversionPatternRewriter &rewriter,
                     const LinearLayout &layout,
                     const LinearLayout *resultLayout,
                     ArrayRef<int32_t> laneBits, ArrayRef<int32_t> warpBits,
                     const std::map<Key, SmallVector<Value>> &partial,
                     const std::map<Key, int32_t> &representative,
                     SmallVector<SmallVector<Value>> &results) const {
    Location loc = op.getLoc();
    auto converter = getTypeConverter<RegisterTypeConverter>();
    int64_t axis = op.getAxis();
    int64_t lines = 1;
    if (auto tile = dyn_cast<RankedTensorType>(op.getResult(0).getType()))
      lines = tile.getNumElements();
    int32_t laneAxisMask = 0;
    for (int32_t bit : laneBits)
      laneAxisMask |= 1 << bit;
    ThreadPosition thread = ThreadPosition::get(rewriter, loc, *converter);
    FailureOr<WarpExchange> exchange =
        WarpExchange::create(rewriter, loc, op, op.getSrcs(), layout, thread,
                             warpBits, laneAxisMask, lines);
    if (failed(exchange))
      return failure();

    ThreadCoordinates coordinates(rewriter, loc, layout, thread);
    auto write =
        scf::IfOp::create(rewriter, loc, exchange->getWriter(), /*else=*/false);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&write.getThenRegion().front());
      for (auto &[key, values] : partial) {
        Value line = getLineIndex(rewriter, loc, layout, coordinates,
                                  representative.at(key), axis);
        for (auto [i, value] : llvm::enumerate(values))
          exchange->store(rewriter, loc, i, value, line);
      }
    }
    gpu::BarrierOp::create(rewriter, loc);

    // Every thread: the warps' values of each line it holds, in order.
    bool failedToCombine = false;
    auto readLine = [&](Value line) {
      SmallVector<Value> accumulated;
      for (int64_t w = 0; w < exchange->getNumWarps(); ++w) {
        SmallVector<Value> values;
        for (unsigned i = 0; i < op.getSrcs().size(); ++i)
          values.push_back(exchange->load(rewriter, loc, i, line, w));
        if (w == 0) {
          accumulated = values;
          continue;
        }
        FailureOr<SmallVector<Value>> combined =
            combine(rewriter, loc, op.getCombineOp(), accumulated, values);
        if (succeeded(combined))
          accumulated = *combined;
        else
          failedToCombine = true;
      }
      return accumulated;
    };
    if (!resultLayout) {
      SmallVector<Value> values = readLine(arith::ConstantIntOp::create(
          rewriter, loc, rewriter.getI32Type(), 0));
      for (auto [i, value] : llvm::enumerate(values))
        results[i].push_back(value);
      return failure(failedToCombine);
    }
    ThreadCoordinates resultCoordinates(rewriter, loc, *resultLayout, thread);
    for (int32_t reg = 0; reg < resultLayout->getInDimSize(kRegisterDim);
         ++reg) {
      SmallVector<Value> values =
          readLine(resultCoordinates.getFlat(rewriter, loc, reg));
      for (auto [i, value] : llvm::enumerate(values))
        results[i].push_back(value);
    }
    return failure(failedToCombine);
  }
};

} // namespace

void populateReducePatterns(RegisterTypeConverter &converter,
                            RewritePatternSet &patterns) {
  patterns.add<ReduceLowering>(converter, patterns.getContext());
}

} // namespace tk::simt
