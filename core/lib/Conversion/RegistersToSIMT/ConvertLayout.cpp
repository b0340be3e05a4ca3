//===- ConvertLayout.cpp - tkw.convert_layout from its two layouts --------===//
//
// A conversion whose every element stays in its thread is a permutation of
// registers. Any other goes through the op's scratch in the rounds of
// getConversionRounds (the allocation sized the scratch by them): each
// round, the first holder of each element writes it at its flat
// coordinate less the round's bits (XOR-swizzled against bank conflicts),
// a barrier, and every thread reads the elements its new registers hold. A
// barrier separates the rounds; the one after the last is tk-insert-barriers'
// to place.
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"

#include "tk/core/Analysis/SharedMemoryAllocation.h"
#include "tk/core/WarpDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace tk::simt {

namespace {

struct ConvertLayoutLowering : OpConversionPattern<warp::ConvertLayoutOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(warp::ConvertLayoutOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const LinearLayout *from = getLinearLayout(op.getSrc().getType());
    const LinearLayout *to = getLinearLayout(op.getType());
    if (!from || !to)
      return failure();
    ValueRange values = adaptor.getSrc();
    if (std::optional<SmallVector<int32_t>> map =
            mapRegisters(*from, *to, [](ArrayRef<int32_t> c) {
              return SmallVector<int32_t>(c);
            })) {
      SmallVector<Value> results;
      for (int32_t reg : *map)
        results.push_back(values[reg]);
      rewriter.replaceOpWithMultiple(op, {results});
      return success();
    }
    return throughScratch(op, rewriter, *from, *to, values);
  }

  LogicalResult throughScratch(warp::ConvertLayoutOp op,
                               ConversionPatternRewriter &rewriter,
                               const LinearLayout &from, const LinearLayout &to,
                               ValueRange values) const {
    Location loc = op.getLoc();
    auto scratch = op->getAttrOfType<DenseI64ArrayAttr>(
        warp::TkwDialect::kScratchAttrName);
    if (!scratch || scratch.size() != 2)
      return op.emitOpError("tk-convert-registers-to-simt: a conversion "
                            "across threads without tkw.scratch (run "
                            "tk-allocate-shared-memory first)");
    Type element = op.getType().getElementType();
    Value buffer = getScratchBuffer(rewriter, loc, op, element);
    int64_t bytes =
        std::max<int64_t>(storageType(element).getIntOrFloatBitWidth() / 8, 1);
    if (!buffer || scratch[0] % bytes)
      return op.emitOpError("tk-convert-registers-to-simt: no aligned "
                            "scratch buffer for ")
             << element;
    Type i32 = rewriter.getI32Type();
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIntOp::create(rewriter, loc, i32, value);
    };
    SmallVector<RoundBit> rounds = getConversionRounds(from, to);
    // The positions a round fixes, highest first, for compress.
    SmallVector<int32_t> positions;
    for (const RoundBit &round : rounds)
      positions.push_back(round.position);
    llvm::sort(positions, std::greater<int32_t>());
    Value base = constant(scratch[0] / bytes);
    // Bank bits: the bits of an element index that pick one of 32 4-byte
    // banks (elements of 2 bytes share a bank, one of 8 spans two).
    int32_t wordShift = bytes < 4 ? llvm::Log2_64(4 / bytes) : 0;
    int32_t bankBits = bytes <= 4 ? 5 : 5 - int32_t(llvm::Log2_64(bytes / 4));
    auto slot = [&](Value flat) {
      for (int32_t position : positions) {
        Value high = arith::ShLIOp::create(
            rewriter, loc,
            arith::ShRUIOp::create(rewriter, loc, flat, constant(position + 1)),
            constant(position));
        Value low = arith::AndIOp::create(rewriter, loc, flat,
                                          constant((1 << position) - 1));
        flat = arith::OrIOp::create(rewriter, loc, high, low);
      }
      // An XOR swizzle: the bits above the bank bits flip the bank bits,
      // so that lanes striding a power of two apart (one side of a
      // transpose) meet distinct banks, while lanes on consecutive
      // elements keep theirs. A bijection within every aligned block of
      // the round, so the scratch stays its size.
      int32_t shift = wordShift + bankBits;
      Value above =
          arith::ShRUIOp::create(rewriter, loc, flat, constant(shift));
      Value flips = arith::ShLIOp::create(
          rewriter, loc,
          arith::AndIOp::create(rewriter, loc, above,
                                constant((1 << bankBits) - 1)),
          constant(wordShift));
      flat = arith::XOrIOp::create(rewriter, loc, flat, flips);
      return toIndex(rewriter, loc,
                     arith::AddIOp::create(rewriter, loc, base, flat));
    };
    auto inRound = [&](int32_t reg, int64_t round, bool source) {
      for (auto [i, bit] : llvm::enumerate(rounds)) {
        int32_t registerBit = source ? bit.fromBit : bit.toBit;
        if (((reg >> registerBit) & 1) != ((round >> i) & 1))
          return false;
      }
      return true;
    };

    auto converter = getTypeConverter<RegisterTypeConverter>();
    ThreadPosition thread =
        ThreadPosition::get(rewriter, loc, converter->getWarpSize());
    ThreadCoordinates fromCoordinates(rewriter, loc, from, thread);
    ThreadCoordinates toCoordinates(rewriter, loc, to, thread);
    Value writer = isFirstHolder(rewriter, loc, from, thread);
    int32_t copies = getFreeMask(from, kRegisterDim);
    SmallVector<Value> results(to.getInDimSize(kRegisterDim));
    for (int64_t round = 0; round < (int64_t(1) << rounds.size()); ++round) {
      if (round > 0)
        gpu::BarrierOp::create(rewriter, loc);
      auto write = [&](OpBuilder &) {
        for (int32_t reg = 0; reg < from.getInDimSize(kRegisterDim); ++reg) {
          if ((reg & copies) || !inRound(reg, round, /*source=*/true))
            continue;
          memref::StoreOp::create(
              rewriter, loc, toStorage(rewriter, loc, values[reg]), buffer,
              ValueRange{slot(fromCoordinates.getFlat(rewriter, loc, reg))});
        }
      };
      if (writer) {
        auto branch = scf::IfOp::create(rewriter, loc, writer, false);
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(&branch.getThenRegion().front());
        write(rewriter);
      } else {
        write(rewriter);
      }
      gpu::BarrierOp::create(rewriter, loc);
      for (int32_t reg = 0; reg < to.getInDimSize(kRegisterDim); ++reg) {
        if (!inRound(reg, round, /*source=*/false))
          continue;
        Value loaded = memref::LoadOp::create(
            rewriter, loc, buffer,
            ValueRange{slot(toCoordinates.getFlat(rewriter, loc, reg))});
        results[reg] = fromStorage(rewriter, loc, loaded, element);
      }
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

} // namespace

void populateConvertLayoutPatterns(RegisterTypeConverter &converter,
                                   RewritePatternSet &patterns) {
  patterns.add<ConvertLayoutLowering>(converter, patterns.getContext());
}

} // namespace tk::simt
