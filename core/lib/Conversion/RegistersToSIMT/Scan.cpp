//===- Scan.cpp - scans bit by bit of the position along the axis ---------===//
//
// A tk.scan is computed by recursive doubling over the bits of the position
// along its axis, lowest first. Each bit belongs to one basis of the
// layout along the axis (a register, lane or warp bit; each a power of two
// along the axis only, so a position is the sum of its bits' bases). After
// bit b every element holds the combination of its aligned block of 2^(b+1)
// positions up to itself, and the block's total; the total of the other
// half of the block comes from the register that differs in that bit (in
// the thread), from the lane that does (one shuffle), or, for the warps'
// bits (consecutive, only registers above them), all at once through the
// op's scratch: one total per warp, line and chunk of registers above the
// warps, a barrier, and each thread combines the totals of the warps before
// its own. The combiner need not commute: the positions earlier in the
// scan's order are always its first operand. Which of the three steps a
// scan needs is the layout's to say, as for tk.reduce. A reverse scan is
// the same scan in the order of N - 1 - position, whose bits are the
// position's inverted: the half of a block that comes first is the upper
// one, and the warps come last to first.
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"

#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>

using namespace mlir;

namespace tk::simt {

namespace {

/// The index bit that moves an element by 2^b along the axis.
struct PositionBit {
  StringRef dim;
  int32_t bit = 0;
};

/// The owner of each bit of the position along `axis`, lowest first, or
/// failure where the layout's bases along the axis are not distinct powers
/// of two along it alone, the warps' bits are not consecutive, or a lane's
/// bit lies above them.
FailureOr<SmallVector<PositionBit>> positionBits(const LinearLayout &layout,
                                                 int64_t axis) {
  std::vector<std::string> outs = layout.getOutDimNames();
  int32_t size = layout.getOutDimSize(outs[axis]);
  SmallVector<std::optional<PositionBit>> owners(llvm::Log2_32(size));
  for (StringRef dim : {kRegisterDim, kLaneDim, kWarpDim}) {
    int32_t bits = layout.hasInDim(dim) ? layout.getInDimSizeLog2(dim) : 0;
    for (int32_t bit = 0; bit < bits; ++bit) {
      std::vector<int32_t> basis = layout.getBasis(dim, bit);
      int32_t along = basis[axis];
      for (auto [i, value] : llvm::enumerate(basis))
        if (int64_t(i) != axis && value != 0 && along != 0)
          return failure();
      if (along == 0)
        continue;
      if (!llvm::isPowerOf2_32(along) || owners[llvm::Log2_32(along)])
        return failure();
      owners[llvm::Log2_32(along)] = PositionBit{dim, bit};
    }
  }
  // The warps' bits are consecutive, and only registers' lie above them.
  SmallVector<PositionBit> result;
  enum { Below, Warps, Above } seen = Below;
  for (const std::optional<PositionBit> &owner : owners) {
    if (!owner)
      return failure();
    if (owner->dim == kWarpDim) {
      if (seen == Above)
        return failure();
      seen = Warps;
    } else if (seen != Below) {
      if (owner->dim != kRegisterDim)
        return failure();
      seen = Above;
    }
    result.push_back(*owner);
  }
  return result;
}

struct ScanLowering : OpConversionPattern<tk::ScanOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tk::ScanOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool reverse = op.getReverse();
    Type type = op.getSrcs()[0].getType();
    const LinearLayout *layout = getLinearLayout(type);
    if (!layout)
      return failure();
    auto encoding = cast<RankedTensorType>(type).getEncoding();
    for (Value value : llvm::concat<Value>(op.getSrcs(), op.getResults()))
      if (cast<RankedTensorType>(value.getType()).getEncoding() != encoding)
        return rewriter.notifyMatchFailure(op, "tiles of other layouts");
    FailureOr<SmallVector<PositionBit>> bits =
        positionBits(*layout, op.getAxis());
    if (failed(bits))
      return rewriter.notifyMatchFailure(
          op, "the layout does not place the axis bit by bit");

    Location loc = op.getLoc();
    auto converter = getTypeConverter<RegisterTypeConverter>();
    int64_t warpSize = converter->getWarpSize();
    bool combinable = true;
    auto apply = [&](ValueRange lower, ValueRange upper) {
      FailureOr<SmallVector<Value>> combined =
          combine(rewriter, loc, op.getCombineOp(), lower, upper);
      if (failed(combined)) {
        combinable = false;
        return SmallVector<Value>(lower);
      }
      return *combined;
    };
    int32_t registers = layout->getInDimSize(kRegisterDim);
    unsigned numSources = op.getSrcs().size();
    // The scan so far (prefix) and its block's total, per register: the
    // sources of register r are prefix[r], total[r].
    SmallVector<SmallVector<Value>> prefix(registers), total(registers);
    for (int32_t reg = 0; reg < registers; ++reg)
      for (ValueRange source : adaptor.getSrcs())
        prefix[reg].push_back(source[reg]);
    total = prefix;

    std::optional<ThreadPosition> thread;
    SmallVector<int32_t> warpBits;
    int32_t topWarpPosition = -1;
    for (auto [b, position] : llvm::enumerate(*bits))
      if (position.dim == kWarpDim) {
        warpBits.push_back(position.bit);
        topWarpPosition = b;
      }
    for (auto [b, position] : llvm::enumerate(*bits)) {
      if (position.dim == kWarpDim) {
        // The warps' bits together, at the last of them.
        if (int32_t(b) != topWarpPosition)
          continue;
        if (!thread)
          thread = ThreadPosition::get(rewriter, loc, *converter);
        if (failed(addWarpPrefixes(op, rewriter, *layout, *thread, *bits,
                                   warpBits, topWarpPosition, reverse, total,
                                   prefix, apply)))
          return failure();
        continue;
      }
      int32_t mask = 1 << position.bit;
      if (position.dim == kRegisterDim) {
        SmallVector<SmallVector<Value>> nextPrefix = prefix, nextTotal = total;
        for (int32_t reg = 0; reg < registers; ++reg) {
          int32_t other = reg ^ mask;
          // Whether this register holds the half that comes second.
          if (bool(reg & mask) != reverse) {
            nextPrefix[reg] = apply(total[other], prefix[reg]);
            nextTotal[reg] = apply(total[other], total[reg]);
          } else {
            nextTotal[reg] = apply(total[reg], total[other]);
          }
        }
        prefix = std::move(nextPrefix);
        total = std::move(nextTotal);
        continue;
      }
      // A lane bit: the lane that differs in it holds the other half.
      if (!thread)
        thread = ThreadPosition::get(rewriter, loc, *converter);
      Type i32 = rewriter.getI32Type();
      // Whether this lane holds the half that comes second.
      Value upper = arith::CmpIOp::create(
          rewriter, loc,
          reverse ? arith::CmpIPredicate::eq : arith::CmpIPredicate::ne,
          arith::AndIOp::create(
              rewriter, loc, thread->lane,
              arith::ConstantIntOp::create(rewriter, loc, i32, mask)),
          arith::ConstantIntOp::create(rewriter, loc, i32, 0));
      for (int32_t reg = 0; reg < registers; ++reg) {
        SmallVector<Value> other;
        for (Value value : total[reg])
          other.push_back(shuffleXor(rewriter, loc, value, mask, warpSize));
        SmallVector<Value> upperPrefix = apply(other, prefix[reg]);
        SmallVector<Value> upperTotal = apply(other, total[reg]);
        SmallVector<Value> lowerTotal = apply(total[reg], other);
        for (unsigned i = 0; i < numSources; ++i) {
          prefix[reg][i] = arith::SelectOp::create(
              rewriter, loc, upper, upperPrefix[i], prefix[reg][i]);
          total[reg][i] = arith::SelectOp::create(rewriter, loc, upper,
                                                  upperTotal[i], lowerTotal[i]);
        }
      }
    }
    if (!combinable)
      return failure();
    SmallVector<SmallVector<Value>> results(numSources);
    for (int32_t reg = 0; reg < registers; ++reg)
      for (unsigned i = 0; i < numSources; ++i)
        results[i].push_back(prefix[reg][i]);
    rewriter.replaceOpWithMultiple(op, results);
    return success();
  }

  /// The warps' bits: each warp's total of each line and chunk it holds
  /// (a chunk: the positions a thread holds in registers above the warps'
  /// bits; every register's `total` once the bits below are done) through
  /// the scratch, then each thread combines the totals of the warps before
  /// its own, in order, into the front of its `prefix`, and the totals of
  /// all the warps into its `total`.
  LogicalResult addWarpPrefixes(
      tk::ScanOp op, ConversionPatternRewriter &rewriter,
      const LinearLayout &layout, const ThreadPosition &thread,
      ArrayRef<PositionBit> bits, ArrayRef<int32_t> warpBits,
      int32_t topWarpPosition, bool reverse,
      SmallVector<SmallVector<Value>> &total,
      SmallVector<SmallVector<Value>> &prefix,
      function_ref<SmallVector<Value>(ValueRange, ValueRange)> apply) const {
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIntOp::create(rewriter, loc, i32, value);
    };
    int64_t axis = op.getAxis();
    auto tile = cast<RankedTensorType>(op.getSrcs()[0].getType());
    int64_t chunks = tile.getDimSize(axis) >> (topWarpPosition + 1);
    int64_t lines = tile.getNumElements() / tile.getDimSize(axis);
    int32_t laneAxisMask = 0;
    for (const PositionBit &position : bits)
      if (position.dim == kLaneDim)
        laneAxisMask |= 1 << position.bit;
    FailureOr<WarpExchange> exchange =
        WarpExchange::create(rewriter, loc, op, op.getSrcs(), layout, thread,
                             warpBits, laneAxisMask, lines * chunks);
    if (failed(exchange))
      return failure();
    Value warpIndex = exchange->getWarpIndex();

    // The lines and chunks the thread holds, and its registers of each.
    ThreadCoordinates coordinates(rewriter, loc, layout, thread);
    // Keyed by the chunk, then the line's coordinates.
    std::map<SmallVector<int32_t>, SmallVector<int32_t>> registersOfLine;
    for (int32_t reg = 0; reg < layout.getInDimSize(kRegisterDim); ++reg) {
      SmallVector<int32_t> key = registerCoordinates(layout, reg);
      key[axis] >>= topWarpPosition + 1;
      std::rotate(key.begin(), key.begin() + axis, key.begin() + axis + 1);
      registersOfLine[key].push_back(reg);
    }
    // The slot of a line and chunk: the line's index times the chunks,
    // plus the chunk.
    auto slotOf = [&](int32_t reg) {
      int64_t chunk =
          registerCoordinates(layout, reg)[axis] >> (topWarpPosition + 1);
      return arith::AddIOp::create(
          rewriter, loc,
          arith::MulIOp::create(
              rewriter, loc,
              getLineIndex(rewriter, loc, layout, coordinates, reg, axis),
              constant(chunks)),
          constant(chunk));
    };
    SmallVector<Value> slots;
    for (auto &[key, regs] : registersOfLine)
      slots.push_back(slotOf(regs.front()));
    auto write =
        scf::IfOp::create(rewriter, loc, exchange->getWriter(), /*else=*/false);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&write.getThenRegion().front());
      for (auto [slot, entry] : llvm::zip_equal(slots, registersOfLine))
        for (auto [i, value] : llvm::enumerate(total[entry.second.front()]))
          exchange->store(rewriter, loc, i, value, slot);
    }
    gpu::BarrierOp::create(rewriter, loc);

    // Each line and chunk: the running combination of the warps' totals in
    // the scan's order, the one before this warp's chosen at run time,
    // combined in front of every register of it where there is one; all of
    // them, its total.
    int64_t warps = exchange->getNumWarps();
    // The warp at step `n` of the scan's order.
    auto warpAt = [&](int64_t n) { return reverse ? warps - 1 - n : n; };
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        warpIndex, constant(warpAt(0)));
    for (auto [slot, entry] : llvm::zip_equal(slots, registersOfLine)) {
      SmallVector<Value> running, before;
      for (int64_t n = 0; n < warps; ++n) {
        SmallVector<Value> values;
        for (unsigned i = 0; i < op.getSrcs().size(); ++i)
          values.push_back(exchange->load(rewriter, loc, i, slot, warpAt(n)));
        running = n == 0 ? values : apply(running, values);
        if (n == 0) {
          before = running;
          continue;
        }
        if (n + 1 == warps)
          continue;
        Value chosen =
            arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                  warpIndex, constant(warpAt(n + 1)));
        for (auto [value, candidate] : llvm::zip_equal(before, running))
          value =
              arith::SelectOp::create(rewriter, loc, chosen, candidate, value);
      }
      for (int32_t reg : entry.second) {
        SmallVector<Value> combined = apply(before, prefix[reg]);
        for (auto [value, candidate] : llvm::zip_equal(prefix[reg], combined))
          value =
              arith::SelectOp::create(rewriter, loc, first, value, candidate);
        total[reg] = running;
      }
    }
    return success();
  }
};

} // namespace

void populateScanPatterns(RegisterTypeConverter &converter,
                          RewritePatternSet &patterns) {
  patterns.add<ScanLowering>(converter, patterns.getContext());
}

} // namespace tk::simt
