//===- Threads.cpp - tile ops spread over GPU threads -----------*- C++ -*-===//
//
// The GPU forms: reductions and scans spread over the threads (registers,
// warp shuffles, one value per warp in workgroup memory), row reductions of
// a held product's registers, and dots issued to the matrix unit.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

using namespace mlir;

namespace mlir::tk_to_loops {

//===----------------------------------------------------------------------===//
// GPU programs: reductions, scans and dots spread over threads
//===----------------------------------------------------------------------===//

LogicalResult KernelLowering::lowerReduceOnThreads(tk::ReduceOp reduce) {
  auto srcType = cast<RankedTensorType>(reduce.getSrcs()[0].getType());
  int64_t axis = reduce.getAxis();
  int64_t size = srcType.getDimSize(axis);
  SmallVector<int64_t> resultShape(srcType.getShape());
  resultShape.erase(resultShape.begin() + axis);
  int64_t results = 1;
  for (int64_t extent : resultShape)
    results *= extent;
  unsigned numSrcs = reduce.getSrcs().size();
  Region &combiner = reduce.getCombineOp();
  SmallVector<Type> elemTypes;
  for (Value src : reduce.getSrcs())
    elemTypes.push_back(cast<RankedTensorType>(src.getType()).getElementType());

  auto elementsAt = [&](ArrayRef<Value> index) {
    return elements(reduce.getSrcs(), index);
  };
  for (Value src : reduce.getSrcs())
    if (const OwnedTile *owned = ownedRead(src))
      return owned->fragment ? lowerRowReduceOfHeld(reduce, *owned->fragment)
                             : lowerReduceOfOwned(reduce, *owned);
  // Shuffles move 32-bit values.
  bool words = llvm::all_of(elemTypes, [](Type type) {
    return type.isIntOrFloat() && type.getIntOrFloatBitWidth() == 32;
  });

  // Along the rows of a 2-D tile (FlashAttention's row max and sum): each
  // warp takes whole rows, its lanes neighbouring columns, and combines
  // them with shuffles. (A thread per row would read down a column of
  // workgroup memory, every lane of a warp in one bank.)
  if (srcType.getRank() == 2 && axis == 1 && size % warpSize == 0 &&
      numThreads % warpSize == 0 && words) {
    SmallVector<Value> out;
    for (Type type : elemTypes)
      out.push_back(allocBuffer(resultShape, type));
    Value lane = arith::RemUIOp::create(b, loc, threadId, constIndex(warpSize));
    {
      OpBuilder::InsertionGuard guard(b);
      auto rows = scf::ForOp::create(
          b, loc,
          arith::DivUIOp::create(b, loc, threadId, constIndex(warpSize)),
          constIndex(results), constIndex(numThreads / warpSize));
      b.setInsertionPointToStart(rows.getBody());
      Value row = rows.getInductionVar();
      auto saved = std::move(elementCache);
      elementCache.clear();
      auto first = elementsAt({row, lane});
      if (failed(first))
        return failure();
      SmallVector<Value> acc = *first;
      if (size > warpSize) {
        auto rest = accumulateStrided(
            combiner, acc,
            arith::AddIOp::create(b, loc, lane, constIndex(warpSize)), size,
            warpSize, [&](Value col) {
              return elementsAt({row, col});
            });
        if (failed(rest))
          return failure();
        acc = *rest;
      }
      auto total = combineLanes(combiner, acc);
      elementCache = std::move(saved);
      if (failed(total))
        return failure();
      auto leader = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                constIndex(0)),
          /*withElseRegion=*/false);
      b.setInsertionPoint(leader.thenBlock()->getTerminator());
      for (unsigned s = 0; s < numSrcs; ++s)
        storeBuffer((*total)[s], out[s], {row});
    }
    barrier();
    for (unsigned s = 0; s < numSrcs; ++s)
      buffers[reduce.getResult(s)] = out[s];
    return success();
  }

  // `parts` interleaved partial results per output (part p combines the
  // elements p, p + parts, ... of its line, so that neighbouring threads
  // read neighbouring elements), then a tree over the parts. Combiners are
  // associative and commutative (as on the CPU's partial lanes).
  int64_t parts = 1;
  while (parts * 2 <= size && parts * 2 * results <= numThreads)
    parts *= 2;
  // One output and a part per thread: each warp combines its parts with
  // butterfly shuffles (no memory, no barrier), and only one value per warp
  // goes through workgroup memory.
  bool shuffle = srcType.getRank() == 1 && parts == numThreads &&
                 numThreads % warpSize == 0 && words;
  // Phase 1 runs over (part, output); the buffer holds a value per part, or
  // per warp when warps combine their parts first.
  SmallVector<int64_t> partialShape{parts};
  llvm::append_range(partialShape, resultShape);
  SmallVector<int64_t> bufferShape(partialShape);
  if (shuffle)
    bufferShape[0] = numThreads / warpSize;
  SmallVector<Value> partial;
  for (Type type : elemTypes)
    partial.push_back(allocBuffer(bufferShape, type));

  auto sourceIndex = [&](ArrayRef<Value> resultIndex, Value k) {
    SmallVector<Value> index(resultIndex);
    index.insert(index.begin() + axis, k);
    return index;
  };
  auto partialIndex = [&](Value p, ArrayRef<Value> resultIndex) {
    SmallVector<Value> index{p};
    llvm::append_range(index, resultIndex);
    return index;
  };
  auto loadParts = [&](ArrayRef<Value> index) {
    SmallVector<Value> values;
    for (unsigned s = 0; s < numSrcs; ++s)
      values.push_back(loadBuffer(partial[s], index, elemTypes[s]));
    return values;
  };
  auto storeParts = [&](ValueRange values, ArrayRef<Value> index) {
    for (unsigned s = 0; s < numSrcs; ++s)
      storeBuffer(values[s], partial[s], index);
  };

  if (failed(forEachIndex(partialShape, [&](ArrayRef<Value> index) {
        Value p = index[0];
        ArrayRef<Value> resultIndex = index.drop_front();
        auto first = elementsAt(sourceIndex(resultIndex, p));
        if (failed(first))
          return failure();
        SmallVector<Value> acc = *first;
        if (size > parts) {
          auto rest = accumulateStrided(
              combiner, acc,
              arith::AddIOp::create(b, loc, p, constIndex(parts)), size, parts,
              [&](Value k) { return elementsAt(sourceIndex(resultIndex, k)); });
          if (failed(rest))
            return failure();
          acc = *rest;
        }
        if (!shuffle) {
          storeParts(acc, index);
          return success();
        }
        auto total = combineLanes(combiner, acc);
        if (failed(total))
          return failure();
        acc = *total;
        Value lane = arith::RemUIOp::create(b, loc, p, constIndex(warpSize));
        Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             lane, constIndex(0));
        auto branch = scf::IfOp::create(b, loc, leader, false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(branch.thenBlock()->getTerminator());
        SmallVector<Value> warpIndex{
            arith::DivUIOp::create(b, loc, p, constIndex(warpSize))};
        llvm::append_range(warpIndex, resultIndex);
        storeParts(acc, warpIndex);
        return success();
      })))
    return failure();
  if (shuffle) {
    auto acc = combineWarpValues(combiner, partial, insideLoop(reduce));
    if (failed(acc))
      return failure();
    for (unsigned s = 0; s < numSrcs; ++s)
      scalars.map(reduce.getResult(s), (*acc)[s]);
    return success();
  }
  for (int64_t half = parts / 2; half >= 1; half /= 2) {
    SmallVector<int64_t> shape{half};
    llvm::append_range(shape, resultShape);
    if (failed(forEachIndex(shape, [&](ArrayRef<Value> index) {
          Value other =
              arith::AddIOp::create(b, loc, index[0], constIndex(half));
          auto combined =
              combine(combiner, loadParts(index),
                      loadParts(partialIndex(other, index.drop_front())));
          if (failed(combined))
            return failure();
          storeParts(*combined, index);
          return success();
        })))
      return failure();
  }

  if (srcType.getRank() == 1) {
    // Scalar results: every thread reads part 0, then waits so that a later
    // reduction (in a loop) does not overwrite it under a slow reader.
    SmallVector<Value> values = loadParts({constIndex(0)});
    barrier();
    for (unsigned s = 0; s < numSrcs; ++s)
      scalars.map(reduce.getResult(s), values[s]);
    return success();
  }
  for (unsigned s = 0; s < numSrcs; ++s) {
    Value result = allocBuffer(resultShape, elemTypes[s]);
    if (failed(forEachIndex(resultShape, [&](ArrayRef<Value> index) {
          storeBuffer(loadBuffer(partial[s], partialIndex(constIndex(0), index),
                                 Type()),
                      result, index);
          return success();
        })))
      return failure();
    buffers[reduce.getResult(s)] = result;
  }
  return success();
}

FailureOr<SmallVector<Value>> KernelLowering::accumulateStrided(
    Region &combiner, SmallVector<Value> acc, Value start, int64_t end,
    int64_t step,
    function_ref<FailureOr<SmallVector<Value>>(Value)> elementsAt) {
  OpBuilder::InsertionGuard guard(b);
  auto steps =
      scf::ForOp::create(b, loc, start, constIndex(end), constIndex(step), acc);
  b.setInsertionPointToStart(steps.getBody());
  auto saved = std::move(elementCache);
  elementCache.clear();
  auto next = elementsAt(steps.getInductionVar());
  FailureOr<SmallVector<Value>> combined =
      succeeded(next) ? combine(combiner, steps.getRegionIterArgs(), *next)
                      : FailureOr<SmallVector<Value>>(failure());
  elementCache = std::move(saved);
  if (failed(combined))
    return failure();
  scf::YieldOp::create(b, loc, *combined);
  return SmallVector<Value>(steps.getResults());
}

FailureOr<SmallVector<Value>>
KernelLowering::combineLanes(Region &combiner, SmallVector<Value> acc,
                             int64_t laneMask) {
  for (int64_t offset = warpSize / 2; offset >= 1; offset /= 2) {
    if (!(laneMask & offset))
      continue;
    SmallVector<Value> other;
    for (Value value : acc)
      other.push_back(gpu::ShuffleOp::create(b, loc, value, offset, warpSize,
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult());
    auto combined = combine(combiner, acc, other);
    if (failed(combined))
      return failure();
    acc = *combined;
  }
  return acc;
}

FailureOr<SmallVector<Value>>
KernelLowering::combineWarpValues(Region &combiner, ArrayRef<Value> perWarp,
                                  bool again) {
  // Every thread combines the warps' values in order: a handful of reads
  // of workgroup memory instead of a tree of barriers.
  auto valuesOf = [&](int64_t warp) {
    SmallVector<Value> values;
    for (Value buffer : perWarp)
      values.push_back(loadBuffer(buffer, {constIndex(warp)}, Type()));
    return values;
  };
  SmallVector<Value> acc = valuesOf(0);
  for (int64_t w = 1; w < numThreads / warpSize; ++w) {
    auto combined = combine(combiner, acc, valuesOf(w));
    if (failed(combined))
      return failure();
    acc = *combined;
  }
  // The buffers may be written again (in a loop) only after everyone read.
  if (again)
    barrier();
  return acc;
}

LogicalResult KernelLowering::lowerReduceOfOwned(tk::ReduceOp reduce,
                                                 const OwnedTile &owned) {
  auto srcType = cast<RankedTensorType>(reduce.getSrcs()[0].getType());
  Region &combiner = reduce.getCombineOp();
  // Each thread's own elements, in registers, combined in order.
  SmallVector<Value> acc;
  {
    OwnerIteration owners(*this, &owned);
    if (failed(forEachIndex(
            srcType.getShape(),
            [&](ArrayRef<Value> index) -> LogicalResult {
              auto next = elements(reduce.getSrcs(), index);
              if (failed(next))
                return failure();
              if (acc.empty()) {
                acc = *next;
                return success();
              }
              auto combined = combine(combiner, acc, *next);
              if (failed(combined))
                return failure();
              acc = *combined;
              return success();
            },
            /*contiguous=*/true)))
      return failure();
  }
  auto warpTotal = combineLanes(combiner, acc);
  if (failed(warpTotal))
    return failure();
  // Lane 0 of each warp publishes the warp's value.
  SmallVector<Value> perWarp;
  for (Value src : reduce.getSrcs())
    perWarp.push_back(
        allocBuffer({numThreads / warpSize},
                    cast<RankedTensorType>(src.getType()).getElementType()));
  {
    Value lane = arith::RemUIOp::create(b, loc, threadId, constIndex(warpSize));
    auto leader = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                              constIndex(0)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(leader.thenBlock()->getTerminator());
    Value warp = arith::DivUIOp::create(b, loc, threadId, constIndex(warpSize));
    for (auto [value, buffer] : llvm::zip_equal(*warpTotal, perWarp))
      storeBuffer(value, buffer, {warp});
  }
  barrier();
  auto total = combineWarpValues(combiner, perWarp, insideLoop(reduce));
  if (failed(total))
    return failure();
  for (auto [result, value] : llvm::zip_equal(reduce.getResults(), *total))
    scalars.map(result, value);
  return success();
}

LogicalResult
KernelLowering::lowerRowReduceOfHeld(tk::ReduceOp reduce,
                                     const tk::MatrixUnit::HeldProduct &held) {
  std::optional<tk::MatrixUnit::RegisterRows> rows =
      matrixUnit->registerRows(held);
  if (!rows ||
      int64_t(rows->rowOfRegister.size()) * numThreads != held.m * held.n)
    return reduce.emitOpError("tk-convert-to-loops: the matrix unit does not "
                              "describe the rows of its registers");
  Region &combiner = reduce.getCombineOp();
  // Each row's registers combined in register order (the row's index is
  // its first register's).
  struct RowPart {
    Value row;
    SmallVector<Value> acc;
  };
  llvm::MapVector<int64_t, RowPart> parts;
  {
    OwnerIteration owners(*this, /*enabled=*/true, held);
    if (failed(forEachIndex(
            cast<RankedTensorType>(reduce.getSrcs()[0].getType()).getShape(),
            [&](ArrayRef<Value> index) -> LogicalResult {
              auto next = elements(reduce.getSrcs(), index);
              if (failed(next))
                return failure();
              RowPart &part = parts[rows->rowOfRegister[ownedSlot]];
              if (part.acc.empty()) {
                part = {index[0], *next};
                return success();
              }
              auto combined = combine(combiner, part.acc, *next);
              if (failed(combined))
                return failure();
              part.acc = *combined;
              return success();
            },
            /*contiguous=*/true)))
      return failure();
  }
  // The lanes that hold a row meet in butterflies over the bits of the
  // lane mask. A row-resident result stays in their registers (every lane
  // ends with the row's value); otherwise the lowest of them writes it.
  if (rowLayout.count(reduce.getResult(0))) {
    RowTile tile{rowOffsets(held), {}};
    tile.registers.resize(tile.offsets.size());
    for (auto &[offset, part] : parts) {
      auto acc = combineLanes(combiner, part.acc, rows->laneMask);
      const int64_t *at = llvm::find(tile.offsets, offset);
      if (failed(acc) || at == tile.offsets.end())
        return failure();
      tile.registers[at - tile.offsets.begin()] = acc->front();
    }
    rowTiles[reduce.getResult(0)] = std::move(tile);
    return success();
  }
  SmallVector<Value> out;
  for (Value result : reduce.getResults())
    out.push_back(allocBuffer(cast<RankedTensorType>(result.getType())));
  Value lane = arith::RemUIOp::create(b, loc, threadId, constIndex(warpSize));
  Value writer = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::AndIOp::create(b, loc, lane, constIndex(rows->laneMask)),
      constIndex(0));
  for (auto &[id, part] : parts) {
    auto acc = combineLanes(combiner, part.acc, rows->laneMask);
    if (failed(acc))
      return failure();
    auto branch = scf::IfOp::create(b, loc, writer, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    for (auto [value, buffer] : llvm::zip_equal(*acc, out))
      storeBuffer(value, buffer, {part.row});
  }
  barrier();
  for (auto [result, buffer] : llvm::zip_equal(reduce.getResults(), out))
    buffers[result] = buffer;
  return success();
}

LogicalResult KernelLowering::lowerScanOnThreads(tk::ScanOp scan) {
  // One thread per scanned line, serially along the axis.
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
    SmallVector<Value> acc;
    SmallVector<Value> first = at(line, constIndex(reverse ? size - 1 : 0));
    for (unsigned s = 0; s < numSrcs; ++s) {
      FailureOr<Value> elem = element(scan.getSrcs()[s], first);
      if (failed(elem))
        return failure();
      storeBuffer(*elem, out[s], first);
      acc.push_back(*elem);
    }
    if (size == 1)
      return success();
    OpBuilder::InsertionGuard guard(b);
    auto steps = scf::ForOp::create(b, loc, constIndex(1), constIndex(size),
                                    constIndex(1), acc);
    b.setInsertionPointToStart(steps.getBody());
    Value k = steps.getInductionVar();
    if (reverse)
      k = arith::SubIOp::create(b, loc, constIndex(size - 1), k);
    auto saved = std::move(elementCache);
    elementCache.clear();
    SmallVector<Value> index = at(line, k), next;
    for (Value src : scan.getSrcs()) {
      FailureOr<Value> elem = element(src, index);
      if (failed(elem))
        return failure();
      next.push_back(*elem);
    }
    auto combined =
        combine(scan.getCombineOp(), steps.getRegionIterArgs(), next);
    elementCache = std::move(saved);
    if (failed(combined))
      return failure();
    for (unsigned s = 0; s < numSrcs; ++s)
      storeBuffer((*combined)[s], out[s], index);
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
KernelLowering::heldOperand(tk::DotOp dot,
                            const tk::MatrixUnit::HeldProduct &product,
                            unsigned operand) {
  Value tile = operand == 0 ? dot.getA() : dot.getB();
  if (!matrixUnit->laysOutOperands(product))
    return getBuffer(tile);
  if (laidOutOperands.count(tile))
    return buffers.lookup(tile);
  if (Value hoisted = hoistedOperands.lookup(tile))
    return hoisted;
  // Written into the unit's layout here (a tile stored row-major for other
  // users is copied), or once before the loop for a tile the loop does not
  // compute (FlashAttention's q).
  OpBuilder::InsertionGuard guard(b);
  bool invariant = loweredLoop && sourceLoop.isDefinedOutsideOfLoop(tile);
  // Elements computed inside the loop do not dominate code before it.
  std::optional<decltype(elementCache)> loopCache;
  if (invariant) {
    b.setInsertionPoint(loweredLoop);
    loopCache = std::move(elementCache);
    elementCache.clear();
  }
  auto type = cast<RankedTensorType>(tile.getType());
  Value buffer = allocBuffer({type.getNumElements()}, type.getElementType(),
                             matrixUnit->operandAlignment(product));
  // A transposed tile that is not stored (attention's k^T) is copied in its
  // source's order, so that the reads run along the source's rows (vectors
  // of a masked load versioned on its mask) rather than down its columns.
  Value source = tile;
  bool transposed = false;
  if (auto trans = tile.getDefiningOp<tk::TransOp>();
      trans && !buffers.count(tile) && !ownedRead(tile) &&
      !materialized.count(trans)) {
    source = trans.getSrc();
    transposed = true;
  }
  if (failed(storeTile(source, buffer, [&](ArrayRef<Value> index) {
        return transposed ? matrixUnit->operandOffset(b, loc, product, operand,
                                                      index[1], index[0])
                          : matrixUnit->operandOffset(b, loc, product, operand,
                                                      index[0], index[1]);
      })))
    return failure();
  if (invariant) {
    // Written once: published to the unit's reads here, not per product.
    matrixUnit->publishOperands(b, loc);
    elementCache = std::move(*loopCache);
    hoistedOperands[tile] = buffer;
  }
  return buffer;
}

LogicalResult
KernelLowering::lowerHeldDot(tk::DotOp dot,
                             const tk::MatrixUnit::HeldProduct &held) {
  if (isa<Float8E4M3FNType, Float8E5M2Type>(held.a))
    return dot.emitOpError("tk-convert-to-loops: fp8 dot is not supported on "
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
  Value wide = allocBuffer({held.m, held.n}, held.accumulator);
  if (failed(storeHeld(held, *next, wide)))
    return failure();
  barrier();
  return narrowAccumulator(dot.getResult(), wide);
}

LogicalResult KernelLowering::lowerDotOnThreads(tk::DotOp dot) {
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

  // One thread per output element, the k loop in registers.
  Value result = allocBuffer(cType);
  if (failed(forEachIndex({m, n}, [&](ArrayRef<Value> index) {
        FailureOr<Value> c = element(dot.getAcc(), index);
        if (failed(c))
          return failure();
        OpBuilder::InsertionGuard guard(b);
        auto steps = scf::ForOp::create(b, loc, constIndex(0), constIndex(k),
                                        constIndex(1), ValueRange{widen(*c)});
        b.setInsertionPointToStart(steps.getBody());
        Value kk = steps.getInductionVar();
        Value aik = widen(
            memref::LoadOp::create(b, loc, aBuf, ValueRange{index[0], kk}));
        Value bkj = widen(
            memref::LoadOp::create(b, loc, bBuf, ValueRange{kk, index[1]}));
        Value acc = steps.getRegionIterArgs()[0];
        Value sum =
            isFloat
                ? Value(math::FmaOp::create(b, loc, aik, bkj, acc))
                : Value(arith::AddIOp::create(
                      b, loc, acc, arith::MulIOp::create(b, loc, aik, bkj)));
        scf::YieldOp::create(b, loc, sum);
        b.setInsertionPointAfter(steps);
        storeBuffer(narrow(steps.getResult(0)), result, index);
        return success();
      })))
    return failure();
  buffers[dot.getResult()] = result;
  return success();
}

} // namespace mlir::tk_to_loops
