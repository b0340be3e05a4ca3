//===- ConvertLayout.cpp - tkw.convert_layout from its two layouts --------===//
//
// A conversion whose every element stays in its thread is a permutation of
// registers. One whose elements stay in their warp moves by shuffles as
// getShufflePlan says: one a register of the result (two of 16 bits or less
// in one 32-bit word), each lane offering the register its own lane bits
// select. Any other goes through the op's scratch as getConversionPlan says
// (the allocation sized the scratch by it): each round, the first holder of
// each element writes it at its flat coordinate in the plan's order less the
// round's bits (XOR-swizzled against bank conflicts), a barrier, and every
// thread reads the elements its new registers hold. Consecutive registers at
// consecutive coordinates move as one vector of up to the target's workgroup
// vector bytes each way; the swizzle flips no bit inside a vector. A barrier
// separates the rounds; the one after the last is tk-insert-barriers' to
// place.
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"

#include "tk/core/Analysis/SharedMemoryAllocation.h"
#include "tk/core/WarpDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <functional>
#include <map>

using namespace mlir;

namespace tk::simt {

namespace {

/// `flat` without the bit positions a round fixes (`positions`, highest
/// first), as the scratch addresses a round.
uint64_t compress(uint64_t flat, ArrayRef<int32_t> positions) {
  for (int32_t position : positions)
    flat = ((flat >> (position + 1)) << position) |
           (flat & ((uint64_t(1) << position) - 1));
  return flat;
}

/// An XOR swizzle of a conversion's scratch addresses against bank
/// conflicts, chosen from both layouts: bit positions above the bank bits
/// and the bank bits each flips. The lanes of a warp write, then read, one
/// address each; their banks are the bank bits of the addresses, a linear
/// function of the lane bits. Each side's lanes get distinct banks where
/// that function's images of the lane bits are independent: for each lane
/// bit whose bank image depends on the ones before (a side striding a power
/// of two apart), one of its address bits above the bank bits that no
/// writer lane uses is made to flip a bank bit outside their span. A
/// bijection within every aligned block of the scratch, so it keeps its
/// size; the writers are served first, the readers as far as the bits
/// allow. Only bank bits from `lowestBank` up are flipped, so that vectors
/// of that many bank words stay whole.
SmallVector<std::pair<int32_t, uint32_t>>
chooseSwizzle(const LinearLayout &from, const LinearLayout &to,
              ArrayRef<int32_t> positions, int32_t wordShift, int32_t bankBits,
              int32_t lowestBank) {
  auto laneAddresses = [&](const LinearLayout &layout) {
    SmallVector<uint64_t> addresses;
    int32_t registerBits = layout.getInDimSizeLog2(kRegisterDim);
    for (int32_t bit = 0; bit < layout.getInDimSizeLog2(kLaneDim); ++bit)
      addresses.push_back(compress(
          layout.applyFlat(uint64_t(1) << (registerBits + bit)), positions));
    return addresses;
  };
  int32_t shift = wordShift + bankBits;
  uint32_t bankMask = (1u << bankBits) - 1;
  std::map<int32_t, uint32_t> flips;
  auto bankOf = [&](uint64_t address) {
    uint32_t bank = uint32_t(address >> wordShift) & bankMask;
    for (auto [bit, flip] : flips)
      if ((address >> bit) & 1)
        bank ^= flip;
    return bank;
  };
  // A flip by a bit that a lane already served holds would move that
  // lane's bank: such bits are never chosen.
  uint64_t served = 0;
  for (const SmallVector<uint64_t> &lanes :
       {laneAddresses(from), laneAddresses(to)}) {
    SmallVector<uint32_t> span; // reduced, independent bank images
    auto reduce = [&](uint32_t bank) {
      for (uint32_t pivot : span)
        bank = std::min(bank, bank ^ pivot);
      return bank;
    };
    auto add = [&](uint32_t bank) {
      span.push_back(bank);
      llvm::sort(span, std::greater<uint32_t>());
    };
    // The lanes whose banks are independent already, then the others.
    SmallVector<uint64_t> dependent;
    for (uint64_t address : lanes) {
      if (uint32_t bank = reduce(bankOf(address))) {
        add(bank);
        served |= address;
      } else {
        dependent.push_back(address);
      }
    }
    for (uint64_t address : dependent) {
      // Flip a bank bit outside the span by a high bit no served lane
      // holds.
      uint32_t free = 0;
      for (int32_t b = lowestBank; b < bankBits && !free; ++b)
        if (reduce(1u << b))
          free = 1u << b;
      int32_t chosen = -1;
      for (int32_t bit = shift; bit < 64 && chosen < 0; ++bit)
        if (((address >> bit) & 1) && !((served >> bit) & 1) &&
            !flips.count(bit))
          chosen = bit;
      served |= address;
      if (!free || chosen < 0)
        continue;
      flips[chosen] = free;
      add(reduce(bankOf(address)));
    }
    for (uint64_t address : lanes)
      served |= address;
  }
  return SmallVector<std::pair<int32_t, uint32_t>>(flips.begin(), flips.end());
}

struct ConvertLayoutLowering : OpConversionPattern<warp::ConvertLayoutOp> {
  ConvertLayoutLowering(const TypeConverter &converter, MLIRContext *context,
                        int64_t workgroupVectorBytes)
      : OpConversionPattern(converter, context),
        workgroupVectorBytes(workgroupVectorBytes) {}

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
    if (std::optional<WarpShufflePlan> plan =
            getShufflePlan(op, workgroupVectorBytes))
      return throughShuffles(op, rewriter, *plan, values);
    return throughScratch(op, rewriter, *from, *to, values);
  }

  LogicalResult throughShuffles(warp::ConvertLayoutOp op,
                                ConversionPatternRewriter &rewriter,
                                const WarpShufflePlan &plan,
                                ValueRange values) const {
    Location loc = op.getLoc();
    auto converter = getTypeConverter<RegisterTypeConverter>();
    ThreadPosition thread = ThreadPosition::get(rewriter, loc, *converter);
    Type i32 = rewriter.getI32Type();
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIntOp::create(rewriter, loc, i32, value);
    };
    auto laneBitSet = [&](int32_t bit) -> Value {
      Value masked = arith::AndIOp::create(rewriter, loc, thread.lane,
                                           constant(int64_t(1) << bit));
      return arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                                   masked, constant(0));
    };
    // What a lane offers: the register its selecting lane bits flip to,
    // one select a bit, shared by the registers of the result that offer
    // the same.
    SmallVector<std::pair<int32_t, Value>> selectors;
    for (auto [bit, flip] : llvm::enumerate(plan.registerFlips))
      if (flip != 0)
        selectors.push_back({flip, laneBitSet(bit)});
    std::map<std::pair<int32_t, size_t>, Value> offers;
    std::function<Value(int32_t, size_t)> offer = [&](int32_t reg,
                                                      size_t selector) {
      if (selector == selectors.size())
        return values[reg];
      Value &value = offers[{reg, selector}];
      if (!value) {
        auto [flip, set] = selectors[selector];
        value = arith::SelectOp::create(rewriter, loc, set,
                                        offer(reg ^ flip, selector + 1),
                                        offer(reg, selector + 1));
      }
      return value;
    };
    // The lane a thread reads, less the register's offset: its own lane,
    // some of its bits, or any linear map of them.
    bool ownLanes = true, maskOfOwnLanes = true;
    int32_t mask = 0;
    for (auto [bit, lane] : llvm::enumerate(plan.readLanes)) {
      ownLanes &= lane == int32_t(1) << bit;
      maskOfOwnLanes &= lane == 0 || lane == int32_t(1) << bit;
      mask |= lane;
    }
    Value readLane;
    if (ownLanes) {
      readLane = thread.lane;
    } else if (maskOfOwnLanes) {
      readLane =
          arith::AndIOp::create(rewriter, loc, thread.lane, constant(mask));
    } else {
      readLane = constant(0);
      for (auto [bit, lane] : llvm::enumerate(plan.readLanes))
        if (lane != 0)
          readLane = arith::XOrIOp::create(
              rewriter, loc, readLane,
              arith::SelectOp::create(rewriter, loc, laneBitSet(bit),
                                      constant(lane), constant(0)));
    }
    int64_t warpSize = converter->getWarpSize();
    auto read = [&](Value value, int32_t offset) -> Value {
      if (ownLanes && offset == 0)
        return value;
      if (ownLanes)
        return shuffle(rewriter, loc, value, constant(offset), warpSize,
                       gpu::ShuffleMode::XOR);
      Value lane = offset ? arith::XOrIOp::create(rewriter, loc, readLane,
                                                  constant(offset))
                                .getResult()
                          : readLane;
      return shuffle(rewriter, loc, value, lane, warpSize,
                     gpu::ShuffleMode::IDX);
    };
    int64_t registers = int64_t(plan.offeredRegisters.size());
    SmallVector<Value> results(registers);
    // Elements of 16 bits or less cross two to a 32-bit shuffle: registers
    // r and r ^ pair of the result read the same lane (the lowest register
    // bit whose lane offset is 0).
    // The registers' type, as the type converter gave it.
    Type element = values.front().getType();
    unsigned bits = element.getIntOrFloatBitWidth();
    int64_t pair = bits > 1 && bits <= 16 ? plan.pairedRegisters() : 0;
    Type narrow = rewriter.getIntegerType(bits);
    auto toWord = [&](Value value) -> Value {
      if (isa<FloatType>(element))
        value = arith::BitcastOp::create(rewriter, loc, narrow, value);
      return arith::ExtUIOp::create(rewriter, loc, i32, value);
    };
    auto fromWord = [&](Value word) -> Value {
      Value value = arith::TruncIOp::create(rewriter, loc, narrow, word);
      return isa<FloatType>(element) ? Value(arith::BitcastOp::create(
                                           rewriter, loc, element, value))
                                     : value;
    };
    for (int64_t reg = 0; reg < registers; ++reg) {
      if (results[reg])
        continue;
      Value value = offer(plan.offeredRegisters[reg], 0);
      if (!pair) {
        results[reg] = read(value, plan.laneOffsets[reg]);
        continue;
      }
      Value high = offer(plan.offeredRegisters[reg ^ pair], 0);
      Value word = arith::OrIOp::create(
          rewriter, loc, toWord(value),
          arith::ShLIOp::create(rewriter, loc, toWord(high), constant(bits)));
      word = read(word, plan.laneOffsets[reg]);
      results[reg] = fromWord(word);
      results[reg ^ pair] =
          fromWord(arith::ShRUIOp::create(rewriter, loc, word, constant(bits)));
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }

  LogicalResult throughScratch(warp::ConvertLayoutOp op,
                               ConversionPatternRewriter &rewriter,
                               const LinearLayout &original,
                               const LinearLayout &target,
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
    ConversionPlan plan =
        getConversionPlan(original, target, bytes, workgroupVectorBytes);
    const LinearLayout &from = plan.from;
    const LinearLayout &to = plan.to;
    ArrayRef<RoundBit> rounds = plan.rounds;
    // A scratch offset that does not align a vector moves elements one by
    // one (the allocation aligns scratch to 16 bytes).
    int32_t writeWidth = plan.writeWidth, readWidth = plan.readWidth;
    if (scratch[0] % (std::max(writeWidth, readWidth) * bytes))
      writeWidth = readWidth = 1;
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
    int32_t vectorBits = llvm::Log2_32(std::max(writeWidth, readWidth));
    SmallVector<std::pair<int32_t, uint32_t>> swizzle =
        chooseSwizzle(from, to, positions, wordShift, bankBits,
                      std::max(vectorBits - wordShift, 0));
    // A flat coordinate's slot: the rounds' positions taken out, then the
    // swizzle (each chosen bit above the bank bits flips bank bits). Both
    // are linear over GF(2), so a register's slot is its thread's slot
    // (computed once, shared by CSE) XOR the slot of its constant, which
    // xorConstant joins by addition where the thread sets no bit of it.
    auto slotOf = [&](int64_t flat) {
      for (int32_t position : positions)
        flat = ((flat >> (position + 1)) << position) |
               (flat & ((int64_t(1) << position) - 1));
      for (auto [bit, flip] : swizzle)
        if ((flat >> bit) & 1)
          flat ^= int64_t(flip) << wordShift;
      return flat;
    };
    auto threadSlot = [&](Value flat) {
      for (int32_t position : positions) {
        Value high = arith::ShLIOp::create(
            rewriter, loc,
            arith::ShRUIOp::create(rewriter, loc, flat, constant(position + 1)),
            constant(position));
        Value low = arith::AndIOp::create(rewriter, loc, flat,
                                          constant((1 << position) - 1));
        flat = arith::OrIOp::create(rewriter, loc, high, low);
      }
      for (auto [bit, flip] : swizzle) {
        Value set = arith::AndIOp::create(
            rewriter, loc,
            arith::ShRUIOp::create(rewriter, loc, flat, constant(bit)),
            constant(1));
        flat = arith::XOrIOp::create(
            rewriter, loc, flat,
            arith::MulIOp::create(rewriter, loc, set,
                                  constant(int64_t(flip) << wordShift)));
      }
      return flat;
    };
    // A side's thread slot and the bits it can set, once per side.
    struct ThreadSlot {
      Value value;
      int64_t bits = 0;
    };
    auto getThreadSlot = [&](const ThreadCoordinates &coordinates) {
      auto [flat, flatBits] = coordinates.getThreadFlat(rewriter, loc);
      ThreadSlot thread{threadSlot(flat)};
      for (int32_t bit = 0; bit < 63; ++bit)
        if ((flatBits >> bit) & 1)
          thread.bits |= slotOf(int64_t(1) << bit);
      return thread;
    };
    auto slot = [&](const ThreadSlot &thread, int64_t constantFlat) {
      Value flat = xorConstant(rewriter, loc, thread.value, thread.bits,
                               slotOf(constantFlat));
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
    ThreadPosition thread = ThreadPosition::get(rewriter, loc, *converter);
    ThreadCoordinates fromCoordinates(rewriter, loc, from, thread);
    ThreadCoordinates toCoordinates(rewriter, loc, to, thread);
    ThreadSlot fromSlot = getThreadSlot(fromCoordinates);
    ThreadSlot toSlot = getThreadSlot(toCoordinates);
    Value writer = isFirstHolder(rewriter, loc, from, thread);
    int32_t copies = getFreeMask(from, kRegisterDim);
    SmallVector<Value> results(to.getInDimSize(kRegisterDim));
    for (int64_t round = 0; round < (int64_t(1) << rounds.size()); ++round) {
      if (round > 0)
        gpu::BarrierOp::create(rewriter, loc);
      auto write = [&](OpBuilder &) {
        for (int32_t reg = 0; reg < from.getInDimSize(kRegisterDim);
             reg += writeWidth) {
          if ((reg & copies) || !inRound(reg, round, /*source=*/true))
            continue;
          SmallVector<Value> stored;
          for (Value value : values.slice(reg, writeWidth))
            stored.push_back(toStorage(rewriter, loc, value));
          storeRun(rewriter, loc, stored, buffer,
                   slot(fromSlot, fromCoordinates.getConstantFlat(reg)));
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
      for (int32_t reg = 0; reg < to.getInDimSize(kRegisterDim);
           reg += readWidth) {
        if (!inRound(reg, round, /*source=*/false))
          continue;
        SmallVector<Value> loaded = loadRun(
            rewriter, loc, buffer,
            slot(toSlot, toCoordinates.getConstantFlat(reg)), readWidth);
        for (auto [j, value] : llvm::enumerate(loaded))
          results[reg + j] =
              fromStorage(rewriter, loc, value, values.front().getType());
      }
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }

  /// The target's TargetInfo::workgroupVectorBytes.
  int64_t workgroupVectorBytes;
};

} // namespace

void populateConvertLayoutPatterns(RegisterTypeConverter &converter,
                                   RewritePatternSet &patterns,
                                   int64_t workgroupVectorBytes) {
  patterns.add<ConvertLayoutLowering>(converter, patterns.getContext(),
                                      workgroupVectorBytes);
}

} // namespace tk::simt
