//===- Reductions.cpp - tk.reduce over the threads of a GPU -----*- C++ -*-===//
//
// Every GPU form of tk.reduce, in one place. A reduction runs at three
// levels, each the cheapest that can combine what the level below left:
//
//  - in a lane: each thread first combines the elements it reads (a strided
//    walk, accumulateStrided) or holds (register-resident tiles and a held
//    product's accumulator registers, lowerReduceOfOwned and
//    lowerRowReduceOfHeld);
//  - across the lanes of a warp: butterfly gpu.shuffle xor over exactly one
//    warp of the target's size (8, 16, 32 or 64 lanes: offsets warpSize / 2
//    down to 1, combineLanes), no memory and no barrier;
//  - across warps: lane 0 of each warp writes its warp's value to workgroup
//    memory and, after one barrier, every thread combines the warps' values
//    in order (combineWarpValues). Where a warp owns whole rows (a row
//    reduction of a 2-D tile) this level is not needed; where results
//    outnumber what shuffles can serve, partial values of interleaved parts
//    are combined as a tree in workgroup memory.
//
// Which of these a reduction takes is decided by tk-assign-thread-layouts
// and shown in TK_DUMP_IR: the layout of the registers it reduces, or, for
// a reduction of memory or of recomputed elements, its `tkw.split`
// (TilePlacement::chooseSplit): the parts per line and where they meet
// ("lanes", "warps", "memory"). The lowering follows it.
//
// The CPU form (partial accumulators LLVM vectorises) is
// HostKernelLowering::lowerReduce, in HostNests.cpp.
//
//===----------------------------------------------------------------------===//

#include "SIMTKernelLowering.h"

using namespace mlir;

namespace mlir::tk_to_loops {

LogicalResult SIMTKernelLowering::lowerReduce(tk::ReduceOp reduce) {
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
  // Otherwise the threads share the lines as the reduction's split says
  // (chooseSplit; read() checked that it fits).
  tk::warp::SplitLayoutAttr split = splits.lookup(reduce);
  if (!split)
    return reduce.emitOpError(passName() + ": a reduction has no split "
                                           "over the threads");

  // Along the rows of a 2-D tile (FlashAttention's row max and sum): each
  // warp takes whole rows, its lanes neighbouring columns, and combines
  // them with shuffles.
  if (split.getAcross() == "lanes") {
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
  int64_t parts = split.getParts();
  // One output and a part per thread: each warp combines its parts with
  // butterfly shuffles (no memory, no barrier), and only one value per warp
  // goes through workgroup memory.
  bool shuffle = split.getAcross() == "warps";
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
    return loadBuffers(partial, index, elemTypes);
  };
  auto storeParts = [&](ValueRange values, ArrayRef<Value> index) {
    storeBuffers(values, partial, index);
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

FailureOr<SmallVector<Value>> SIMTKernelLowering::accumulateStrided(
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
SIMTKernelLowering::combineLanes(Region &combiner, SmallVector<Value> acc,
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
SIMTKernelLowering::combineWarpValues(Region &combiner, ArrayRef<Value> perWarp,
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

LogicalResult SIMTKernelLowering::lowerReduceOfOwned(tk::ReduceOp reduce,
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

LogicalResult SIMTKernelLowering::lowerRowReduceOfHeld(
    tk::ReduceOp reduce, const tk::MatrixUnit::HeldProduct &held) {
  std::optional<tk::MatrixUnit::RegisterRows> rows =
      matrixUnit->registerRows(held);
  if (!rows ||
      int64_t(rows->rowOfRegister.size()) * numThreads != held.m * held.n)
    return reduce.emitOpError(passName() +
                              ": the matrix unit does not "
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

} // namespace mlir::tk_to_loops
