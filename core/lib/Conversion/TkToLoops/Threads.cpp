//===- Threads.cpp - scans and dots spread over GPU threads -----*- C++ -*-===//
//
// The GPU forms of scans (one thread per scanned line) and dots (issued to
// the matrix unit, held in its registers, or an FMA loop). Reductions are in
// Reductions.cpp.
//
//===----------------------------------------------------------------------===//

#include "SIMTKernelLowering.h"

using namespace mlir;

namespace mlir::tk_to_loops {

//===----------------------------------------------------------------------===//
// GPU programs: scans and dots spread over threads
//===----------------------------------------------------------------------===//

LogicalResult SIMTKernelLowering::lowerScan(tk::ScanOp scan) {
  // One thread per scanned line, serially along the axis: the only split a
  // scan takes (read() refuses any other).
  if (!splits.count(scan))
    return scan.emitOpError(passName() + ": a scan has no split over the "
                                         "threads");
  auto srcType = cast<RankedTensorType>(scan.getSrcs()[0].getType());
  int64_t axis = scan.getAxis();
  int64_t size = srcType.getDimSize(axis);
  bool reverse = scan.getReverse();
  SmallVector<int64_t> lines(srcType.getShape());
  lines.erase(lines.begin() + axis);
  unsigned numSrcs = scan.getSrcs().size();
  SmallVector<Value> out;
  for (Value result : scan.getResults())
    out.push_back(allocBuffer(cast<RankedTensorType>(result.getType())));
  auto at = [&](ArrayRef<Value> line, Value k) {
    SmallVector<Value> index(line);
    index.insert(index.begin() + axis, k);
    return index;
  };
  LogicalResult status = forEachIndex(lines, [&](ArrayRef<Value> line) {
    SmallVector<Value> first = at(line, constIndex(reverse ? size - 1 : 0));
    FailureOr<SmallVector<Value>> acc = elements(scan.getSrcs(), first);
    if (failed(acc))
      return failure();
    storeBuffers(*acc, out, first);
    if (size == 1)
      return success();
    OpBuilder::InsertionGuard guard(b);
    auto steps = scf::ForOp::create(b, loc, constIndex(1), constIndex(size),
                                    constIndex(1), *acc);
    b.setInsertionPointToStart(steps.getBody());
    Value k = steps.getInductionVar();
    if (reverse)
      k = arith::SubIOp::create(b, loc, constIndex(size - 1), k);
    auto saved = std::move(elementCache);
    elementCache.clear();
    SmallVector<Value> index = at(line, k);
    FailureOr<SmallVector<Value>> next = elements(scan.getSrcs(), index);
    FailureOr<SmallVector<Value>> combined =
        succeeded(next)
            ? combine(scan.getCombineOp(), steps.getRegionIterArgs(), *next)
            : FailureOr<SmallVector<Value>>(failure());
    elementCache = std::move(saved);
    if (failed(combined))
      return failure();
    storeBuffers(*combined, out, index);
    scf::YieldOp::create(b, loc, *combined);
    return success();
  });
  if (failed(status))
    return failure();
  for (unsigned s = 0; s < numSrcs; ++s)
    buffers[scan.getResult(s)] = out[s];
  return success();
}

FailureOr<Value>
SIMTKernelLowering::heldOperand(tk::DotOp dot,
                                const tk::MatrixUnit::HeldProduct &product,
                                unsigned operand) {
  Value tile = operand == 0 ? dot.getA() : dot.getB();
  if (!matrixUnit->laysOutOperands(product))
    return getBuffer(tile);
  // A ring's slot its async copies filled in the unit's layout, or a
  // conversion's tile written before the products' loop.
  if (laidOutOperands.count(tile))
    return buffers.lookup(tile);
  if (Value hoisted = hoistedOperands.lookup(tile))
    return hoisted;
  auto pending = pendingOperands.find(tile);
  if (pending == pendingOperands.end())
    return dot.emitOpError(passName())
           << ": operand " << operand
           << " is not in the matrix unit's operand layout: it needs a "
              "tkw.convert_layout to #tkw.operand (tk-assign-thread-layouts "
              "places one)";
  // The conversion's move, written here: at the product, or, for a
  // conversion before the products' loop, where that loop starts (after
  // its first async copies are issued, which then overlap it), once.
  Value source = pending->second.source;
  tk::SharedLayout layout = pending->second.layout;
  bool beforeLoop = pending->second.beforeLoop && loweredLoop;
  int64_t run = pending->second.run;
  pendingOperands.erase(pending);
  OpBuilder::InsertionGuard guard(b);
  // Elements computed inside the loop do not dominate code before it.
  std::optional<decltype(elementCache)> loopCache;
  if (beforeLoop) {
    b.setInsertionPoint(loweredLoop);
    loopCache = std::move(elementCache);
    elementCache.clear();
  }
  auto type = cast<RankedTensorType>(source.getType());
  std::array<int64_t, 2> shape = {type.getDimSize(0), type.getDimSize(1)};
  Value buffer = allocBuffer({type.getNumElements()}, type.getElementType(),
                             layout.alignment);
  // A transposed tile that is not stored (attention's k^T) is copied in its
  // source's order, so that the reads run along the source's rows (vectors
  // of a masked load versioned on its mask) rather than down its columns:
  // the runs the conversion records are of that tile.
  Value read = operandReadThrough(source);
  bool transposed = read != source;
  if (failed(storeTile(
          read, buffer,
          [&](ArrayRef<Value> index) {
            return transposed
                       ? layout.offset(b, loc, index[1], index[0], shape)
                       : layout.offset(b, loc, index[0], index[1], shape);
          },
          run)))
    return failure();
  if (beforeLoop) {
    // Written once: published to the unit's reads here, not per product.
    matrixUnit->publishOperands(b, loc);
    elementCache = std::move(*loopCache);
    hoistedOperands[tile] = buffer;
  }
  return buffer;
}

LogicalResult SIMTKernelLowering::lowerOperandConversion(
    tk::warp::ConvertLayoutOp convert, const OperandConversion &conversion) {
  Value tile = convert.getSrc(), result = convert.getResult();
  // A ring's slot in that layout, filled by async copies: nothing to move.
  if (laidOutOperands.count(tile)) {
    buffers[result] = buffers.lookup(tile);
    laidOutOperands.insert(result);
    return success();
  }
  // Written by the first product that reads it (heldOperand), where the
  // unit's reads and the loop's async copies are ordered around it.
  // By the writers it records (checked against operandWriters on reading):
  // a ring's slot has none.
  if (!conversion.written)
    return convert.emitOpError(passName())
           << ": a dot operand's conversion the threads write needs its "
              "writers (written = ..., which tk-assign-thread-layouts records)";
  pendingOperands[result] = {tile, conversion.layout,
                             convert->getBlock() !=
                                 conversion.product->getBlock(),
                             conversion.written->run};
  return success();
}

LogicalResult
SIMTKernelLowering::lowerConvertLayout(tk::warp::ConvertLayoutOp convert) {
  if (auto it = operandConversions.find(convert);
      it != operandConversions.end())
    return lowerOperandConversion(convert, it->second);
  auto held = heldResults.find(convert.getSrc());
  if (held == heldResults.end() ||
      !isa_and_present<tk::warp::SharedLayoutAttr>(
          convert->getAttr(tk::warp::TkwDialect::kLayoutAttrName)))
    return convert.emitOpError(passName())
           << ": converts a held accumulator's loop result or a held "
              "product from the matrix unit's registers to workgroup "
              "memory (tkw.layout = #tkw.shared), nothing else";
  const tk::MatrixUnit::HeldProduct &product = held->second.product;
  Value buffer = allocBuffer({product.m, product.n}, product.accumulator);
  if (failed(storeHeld(product, held->second.registers, buffer)))
    return failure();
  barrier();
  return narrowAccumulator(convert.getResult(), buffer);
}

LogicalResult
SIMTKernelLowering::lowerHeldDot(tk::DotOp dot,
                                 const tk::MatrixUnit::HeldProduct &held) {
  if (isa<Float8E4M3FNType, Float8E5M2Type>(held.a))
    return dot.emitOpError(passName() + ": fp8 dot is not supported on "
                                        "this target yet");
  // A computed from a product the unit holds, in its register layout
  // (FlashAttention's probabilities), goes to the unit in registers.
  const OwnedTile *ownedA = ownedRead(dot.getA());
  std::optional<tk::MatrixUnit::HeldProduct> registerA;
  if (ownedA && ownedA->fragment &&
      matrixUnit->takesRegisterA(held, *ownedA->fragment))
    registerA = ownedA->fragment;
  SmallVector<Value> aElements;
  if (registerA) {
    OwnerIteration owners(*this, ownedA);
    auto aType = cast<RankedTensorType>(dot.getA().getType());
    if (failed(forEachIndex(
            aType.getShape(),
            [&](ArrayRef<Value> index) -> LogicalResult {
              FailureOr<Value> elem = element(dot.getA(), index);
              if (failed(elem))
                return failure();
              aElements.push_back(*elem);
              return success();
            },
            /*contiguous=*/true)))
      return failure();
  }
  FailureOr<Value> aBuf =
      registerA ? FailureOr<Value>(Value()) : heldOperand(dot, held, 0);
  FailureOr<Value> bBuf = heldOperand(dot, held, 1);
  if (failed(aBuf) || failed(bBuf))
    return failure();
  Value rescaled = rescaledHeldAccumulator(dot.getAcc());
  tk::MatrixUnit::HeldProduct product = held;
  // Prefetched operands were published by their wait, operands laid out
  // before the loop there.
  auto published = [&](Value operand) {
    return laidOutOperands.count(operand) || hoistedOperands.count(operand);
  };
  product.operandsPublished =
      (registerA || published(dot.getA())) && published(dot.getB());
  // In a pipelined loop the next write of these operands' slots comes after
  // the barrier below and a wait of the unit, so the product may still run
  // when the unit returns (finish waits for it after the loop).
  product.mayStayInFlight =
      product.operandsPublished && heldAccumulators.count(dot.getAcc());
  // A product whose result stays in registers (the scores) or rescales an
  // accumulator (p v) may run on past the unit's return in the body of a
  // loop whose copies go out at the top: its operands' slots are written
  // again only after the next trip's barrier, and the trip settles its
  // running products before it ends.
  product.deferWait = b.getInsertionBlock() == ringsWrittenAtTopBody &&
                      product.operandsPublished && !product.mayStayInFlight &&
                      (rescaled || residentLayout.count(dot)) &&
                      matrixUnit->defersWaits(held);
  // A product issued before this one and not read yet runs on only when
  // this one may run too; its accumulator must be done.
  if (!product.deferWait)
    settleProducts();
  settleProducts(dot.getAcc());
  if (rescaled)
    settleProducts(rescaled);
  // In a loop that carries the accumulator, the registers are updated in
  // place; otherwise they start from the accumulator tile and end in a
  // buffer.
  auto carried = heldAccumulators.find(dot.getAcc());
  SmallVector<Value> registers;
  if (carried != heldAccumulators.end()) {
    registers = carried->second;
  } else if (rescaled) {
    // Each register through the element-wise ops at its own position (the
    // positions differ, so cached elements never mix registers; what was
    // cached with a register in place is dropped afterwards).
    SmallVector<Value> old = heldAccumulators.lookup(rescaled);
    auto savedCache = elementCache;
    std::optional<tk::MatrixUnit::RegisterRows> rows =
        matrixUnit->registerRows(held);
    for (auto [i, position] :
         llvm::enumerate(matrixUnit->registerPositions(b, loc, held))) {
      RowVisit visit(*this, rows, i, position.first);
      heldElementOverride[rescaled] = old[i];
      FailureOr<Value> value =
          element(dot.getAcc(), {position.first, position.second});
      if (failed(value))
        return failure();
      registers.push_back(*value);
    }
    heldElementOverride.erase(rescaled);
    elementCache = std::move(savedCache);
  } else {
    FailureOr<SmallVector<Value>> init =
        initHeldAccumulator(held, dot.getAcc());
    if (failed(init))
      return failure();
    registers = std::move(*init);
  }
  // (A rescaled accumulator is read by ordinary instructions at the start
  // of the next trip: its product is done when the trip ends.)
  FailureOr<SmallVector<Value>> next =
      registerA
          ? matrixUnit->accumulateRegisterA(b, loc, product, *registerA,
                                            aElements, *bBuf, registers)
          : matrixUnit->accumulate(b, loc, product, *aBuf, *bBuf, registers);
  if (failed(next))
    return failure();
  // The operands' buffers may be written next (the next trip's tiles),
  // unless they are prefetch slots (or laid out before the loop) that are
  // only written after the next trip's barrier.
  if (!(ringsWrittenAtTop && product.operandsPublished))
    barrier();
  if (product.deferWait)
    runningProducts.push_back({dot.getResult(), product});
  if (carried != heldAccumulators.end() || rescaled) {
    heldAccumulators[dot.getResult()] = std::move(*next);
    return success();
  }
  if (residentLayout.count(dot)) {
    ownedTiles[dot.getResult()] = {std::move(*next), product};
    return success();
  }
  // Otherwise a tkw.convert_layout right after moves the registers to
  // workgroup memory (placeConversions); nothing reads an unused product.
  if (!dot.use_empty())
    heldResults[dot.getResult()] = HeldResult{held, std::move(*next)};
  return success();
}

Value SIMTKernelLowering::inPlaceAccumulator(tk::DotOp dot) {
  auto carried = dyn_cast<BlockArgument>(dot.getAcc());
  if (!carried || !carried.hasOneUse() || carried.getArgNumber() == 0)
    return {};
  auto loop = dyn_cast<scf::ForOp>(carried.getOwner()->getParentOp());
  if (!loop ||
      loop.getYieldedValues()[carried.getArgNumber() - 1] != dot.getResult())
    return {};
  auto found = buffers.find(carried);
  if (found == buffers.end())
    return {};
  auto type = dyn_cast<MemRefType>(found->second.getType());
  auto result = cast<RankedTensorType>(dot.getType());
  if (!type || type.getShape() != result.getShape() ||
      type.getElementType() != storageType(result.getElementType()))
    return {};
  return found->second;
}

LogicalResult SIMTKernelLowering::lowerDot(tk::DotOp dot) {
  if (std::optional<tk::MatrixUnit::HeldProduct> held = heldProduct(dot))
    return lowerHeldDot(dot, *held);
  FailureOr<DotPlan> plan = planDot(dot, "this target");
  if (failed(plan))
    return failure();
  int64_t m = plan->m, n = plan->n, k = plan->k;
  Type accElem = plan->accElem, computeElem = plan->computeElem;
  bool isFloat = plan->isFloat;
  Value aBuf = plan->a, bBuf = plan->b;
  auto widen = [&](Value v) { return widenForDot(*plan, v); };
  auto aType = cast<RankedTensorType>(dot.getA().getType());
  auto bType = cast<RankedTensorType>(dot.getB().getType());
  auto cType = cast<RankedTensorType>(dot.getType());
  auto narrow = [&](Value v) -> Value {
    if (computeElem == accElem)
      return v;
    return arith::TruncFOp::create(b, loc, accElem, v);
  };

  if (matrixUnit &&
      matrixUnit->supports(aType.getElementType(), bType.getElementType(),
                           computeElem, m, n, k)) {
    Value wide = allocBuffer({m, n}, computeElem);
    LogicalResult status = success();
    auto accumulator = [&](OpBuilder &, Location, Value row,
                           Value col) -> Value {
      FailureOr<Value> c = element(dot.getAcc(), {row, col});
      if (failed(c)) {
        status = failure();
        return zeroOf(computeElem);
      }
      return widen(*c);
    };
    tk::MatrixUnit::Product product{aBuf,        bBuf,     wide,
                                    accumulator, threadId, numThreads};
    auto saved = std::move(elementCache);
    elementCache.clear();
    ++parallelDepth;
    if (failed(matrixUnit->emit(b, loc, product)))
      status = failure();
    --parallelDepth;
    elementCache = std::move(saved);
    if (failed(status))
      return failure();
    barrier();
    return narrowAccumulator(dot.getResult(), wide);
  }

  // One thread per output element, the k loop in registers. Each thread
  // reads an accumulator element before it writes the same element, and no
  // other thread reads it, so a loop-carried accumulator is updated in
  // place: one tile of workgroup memory less, and no copy at the yield.
  Value result = inPlaceAccumulator(dot);
  if (!result)
    result = allocBuffer(cType);
  // The threads take the elements as the dot's #tkw.shared says: runs of
  // `run` (1 unless edited).
  auto written = sharedWrites.find(dot);
  int64_t run = written != sharedWrites.end() ? written->second.run : 1;
  if (failed(forEachIndex(
          {m, n},
          [&](ArrayRef<Value> index) {
            FailureOr<Value> c = element(dot.getAcc(), index);
            if (failed(c))
              return failure();
            OpBuilder::InsertionGuard guard(b);
            auto steps =
                scf::ForOp::create(b, loc, constIndex(0), constIndex(k),
                                   constIndex(1), ValueRange{widen(*c)});
            b.setInsertionPointToStart(steps.getBody());
            Value kk = steps.getInductionVar();
            Value aik = widen(
                memref::LoadOp::create(b, loc, aBuf, ValueRange{index[0], kk}));
            Value bkj = widen(
                memref::LoadOp::create(b, loc, bBuf, ValueRange{kk, index[1]}));
            Value acc = steps.getRegionIterArgs()[0];
            Value sum = isFloat
                            ? Value(math::FmaOp::create(b, loc, aik, bkj, acc))
                            : Value(arith::AddIOp::create(
                                  b, loc, acc,
                                  arith::MulIOp::create(b, loc, aik, bkj)));
            scf::YieldOp::create(b, loc, sum);
            b.setInsertionPointAfter(steps);
            storeBuffer(narrow(steps.getResult(0)), result, index);
            return success();
          },
          /*contiguous=*/run > 1, /*afterRun=*/nullptr, /*maxRun=*/run)))
    return failure();
  buffers[dot.getResult()] = result;
  return success();
}

} // namespace mlir::tk_to_loops
