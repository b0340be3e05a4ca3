//===- Registers.cpp - tiles a GPU thread keeps in registers ----*- C++ -*-===//
//
// What only the GPU form of the lowering keeps in registers, as the thread
// layouts say: register-resident tiles (#tkw.runs, or a held product's
// #tkw.accumulator) in their owners' registers, row tiles (#tkw.rows) in
// the registers of the lanes holding each row, and the matrix unit's held
// accumulators, carried through loops and stored from where they are.
// KernelLowering reads them through its virtual methods: the CPU form keeps
// nothing in registers.
//
//===----------------------------------------------------------------------===//

#include "SIMTKernelLowering.h"

using namespace mlir;

namespace mlir::tk_to_loops {

FailureOr<Value> SIMTKernelLowering::elementInRegisters(Value value,
                                                        ArrayRef<Value> index) {
  if (auto held = heldElementOverride.find(value);
      held != heldElementOverride.end())
    return held->second;
  settleProducts(value);
  if (auto owned = ownedTiles.find(value); owned != ownedTiles.end()) {
    if (ownedSlot < 0 || !llvm::equal(index, ownedIndex))
      return emitError(value.getLoc(),
                       passName() + ": a register-resident tile is read "
                                    "at an index its thread does not own");
    return owned->second.registers[ownedSlot];
  }
  if (auto rows = rowTiles.find(value); rows != rowTiles.end()) {
    const RowTile &tile = rows->second;
    const int64_t *offset = llvm::find(tile.offsets, visitedRowOffset);
    if (!visitedRow || index.size() != 1 || index[0] != visitedRow ||
        offset == tile.offsets.end())
      return emitError(value.getLoc(), passName() +
                                           ": a row-resident tile is read at "
                                           "a row its thread does not hold");
    return tile.registers[offset - tile.offsets.begin()];
  }
  return Value();
}

LogicalResult
SIMTKernelLowering::visitAsOwners(const OwnedTile *owned,
                                  function_ref<LogicalResult()> body) {
  OwnerIteration owners(*this, owned);
  return body();
}

FailureOr<bool> SIMTKernelLowering::storeFromHeldRegisters(
    tk::StoreOp store, const std::optional<StoreLayout> &layout,
    function_ref<LogicalResult(ArrayRef<Value>)> storeOne,
    function_ref<void()> emitPending) {
  Value held = heldRoot(store.getValue());
  if (layout && held && layout->product != heldLoopResults.lookup(held))
    return store.emitOpError(passName())
           << ": thread layout " << storeLayoutAttr(*layout)
           << " is not the held registers it stores";
  // A value computed from a held accumulator is stored by the threads that
  // hold it, each at its registers' positions, without workgroup memory.
  if (!held)
    return false;
  HeldResult &result = heldResults[held];
  auto storeRegisters = [&](Value knownMask) -> LogicalResult {
    auto positions = matrixUnit->registerPositions(b, loc, result.product);
    std::optional<tk::MatrixUnit::RegisterRows> rows =
        matrixUnit->registerRows(result.product);
    for (auto [i, value, position] :
         llvm::enumerate(result.registers, positions)) {
      RowVisit visit(*this, rows, i, position.first);
      SmallVector<Value> index{position.first, position.second};
      assumeElement(held, index, value);
      if (knownMask)
        assumeElement(store.getMask(), index, knownMask);
      if (failed(storeOne(index)))
        return failure();
      emitPending();
    }
    return success();
  };
  Value mask = store.getMask();
  Value full = mask && !isBlockPtr(store.getPtr().getType()) && isCheap(mask)
                   ? rangeMaskAllTrue(mask)
                   : Value();
  if (failed(full ? versionOnMask(full, storeRegisters)
                  : storeRegisters(Value())))
    return failure();
  return true;
}

FailureOr<std::optional<SmallVector<Value>>>
SIMTKernelLowering::carryInRegisters(LoopCarry &loop, unsigned i, Value init) {
  scf::ForOp source = loop.source;
  if (tk::DotOp layout = rowLayout.lookup(source.getRegionIterArgs()[i])) {
    loop.kinds[i] = Carried::Rows;
    FailureOr<SmallVector<Value>> registers = computeRows(init, layout);
    if (failed(registers))
      return failure();
    return std::optional<SmallVector<Value>>(std::move(*registers));
  }
  if ((loop.heldDots[i] = heldAccumulatorDot(source, i))) {
    loop.kinds[i] = Carried::Held;
    FailureOr<SmallVector<Value>> registers =
        initHeldAccumulator(*heldProduct(loop.heldDots[i]), init);
    if (failed(registers))
      return failure();
    return std::optional<SmallVector<Value>>(std::move(*registers));
  }
  return std::optional<SmallVector<Value>>();
}

LogicalResult SIMTKernelLowering::bindCarriedRegisters(const LoopCarry &loop,
                                                       unsigned i, Value value,
                                                       ValueRange registers,
                                                       bool isResult) {
  scf::ForOp source = loop.source;
  if (loop.kinds[i] == Carried::Rows) {
    rowTiles[value] = {rowOffsets(*heldProduct(
                           rowLayout.lookup(source.getRegionIterArgs()[i]))),
                       SmallVector<Value>(registers)};
    return success();
  }
  if (!isResult) {
    heldAccumulators[value] = SmallVector<Value>(registers);
    return success();
  }
  if (!heldLoopResults.count(value))
    return source.emitOpError(passName())
           << ": held accumulator " << i
           << " is read after the loop other than from its registers, "
              "without a tkw.convert_layout to workgroup memory";
  heldResults[value] =
      HeldResult{*heldProduct(loop.heldDots[i]), SmallVector<Value>(registers)};
  return success();
}

FailureOr<SmallVector<Value>>
SIMTKernelLowering::yieldCarriedRegisters(const LoopCarry &loop, unsigned i,
                                          Value value) {
  scf::ForOp source = loop.source;
  if (loop.kinds[i] == Carried::Rows)
    return computeRows(value, rowLayout.lookup(source.getRegionIterArgs()[i]));
  return heldAccumulators.lookup(value);
}

LogicalResult SIMTKernelLowering::keepInRegisters(Value value) {
  // The layout of the resident tile it is computed from (runs if none).
  const OwnedTile *source = ownedRead(value);
  std::optional<tk::MatrixUnit::HeldProduct> fragment =
      source ? source->fragment : std::nullopt;
  // The mask versioning of storeTile: most programs load every lane
  // unguarded, so runs merge into vector loads.
  auto load = value.getDefiningOp<tk::LoadOp>();
  Value mask = load ? load.getMask() : Value();
  Value full = mask && !fragment && isTile(mask.getType()) &&
                       !isBlockPtr(load.getPtr().getType()) && isCheap(mask)
                   ? rangeMaskAllTrue(mask)
                   : Value();
  auto type = cast<RankedTensorType>(value.getType());
  int64_t run = fragment ? 0 : residentRun.lookup(value.getDefiningOp());
  auto compute = [&](Value on) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> registers;
    OwnerIteration owners(*this, /*enabled=*/true, fragment, run);
    if (failed(forEachIndex(
            type.getShape(),
            [&](ArrayRef<Value> index) -> LogicalResult {
              if (on)
                assumeElement(mask, index, on);
              FailureOr<Value> elem = element(value, index);
              if (failed(elem))
                return failure();
              registers.push_back(*elem);
              return success();
            },
            /*contiguous=*/true)))
      return failure();
    return registers;
  };
  if (!full) {
    FailureOr<SmallVector<Value>> registers = compute(Value());
    if (failed(registers))
      return failure();
    ownedTiles[value] = {std::move(*registers), fragment, run};
    return success();
  }
  int64_t count = type.getNumElements() / numThreads;
  SmallVector<Type> types(count, scalarType(type.getElementType()));
  auto branch = scf::IfOp::create(b, loc, types, full, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    for (Block *side : {branch.thenBlock(), branch.elseBlock()}) {
      b.setInsertionPointToEnd(side);
      // Elements computed in one branch do not dominate the other.
      auto saved = elementCache;
      FailureOr<SmallVector<Value>> registers = compute(
          side == branch.thenBlock() ? constInt(b.getI1Type(), 1) : Value());
      elementCache = std::move(saved);
      if (failed(registers))
        return failure();
      scf::YieldOp::create(b, loc, *registers);
    }
  }
  ownedTiles[value] = {SmallVector<Value>(branch.getResults()), fragment, run};
  return success();
}

LogicalResult SIMTKernelLowering::keepInRows(Value value) {
  tk::DotOp layout = rowLayout.lookup(value);
  FailureOr<SmallVector<Value>> registers = computeRows(value, layout);
  if (failed(registers))
    return failure();
  rowTiles[value] = {rowOffsets(*heldProduct(layout)), std::move(*registers)};
  return success();
}

FailureOr<SmallVector<Value>>
SIMTKernelLowering::computeRows(Value value, tk::DotOp layout) {
  std::optional<tk::MatrixUnit::HeldProduct> product =
      layout ? heldProduct(layout) : std::nullopt;
  std::optional<tk::MatrixUnit::RegisterRows> rows =
      product ? matrixUnit->registerRows(*product) : std::nullopt;
  if (!rows)
    return emitError(loc, passName() + ": a row-resident tile outside "
                                       "the layout of a held product");
  // Each row at the position of its first register.
  auto positions = matrixUnit->registerPositions(b, loc, *product);
  SmallVector<Value> registers;
  for (int64_t offset : rowOffsets(*product)) {
    size_t first =
        llvm::find(rows->rowOfRegister, offset) - rows->rowOfRegister.begin();
    Value row = positions[first].first;
    RowVisit visit(*this, row, offset);
    auto saved = std::move(elementCache);
    elementCache.clear();
    FailureOr<Value> elem = element(value, {row});
    elementCache = std::move(saved);
    if (failed(elem))
      return failure();
    registers.push_back(*elem);
  }
  return registers;
}

const OwnedTile *SIMTKernelLowering::ownedRead(Value value) {
  if (ownedTiles.empty() || !isTile(value.getType()))
    return nullptr;
  if (auto it = ownedTiles.find(value); it != ownedTiles.end())
    return &it->second;
  if (buffers.count(value) || pointerWalks.count(value))
    return nullptr;
  Operation *op = value.getDefiningOp();
  if (!op || !isElementwiseLike(op))
    return nullptr;
  for (Value operand : op->getOperands())
    if (const OwnedTile *owned = ownedRead(operand))
      return owned;
  return nullptr;
}

void SIMTKernelLowering::settleProducts(Value result) {
  if (runningProducts.empty())
    return;
  auto last = result ? llvm::find_if(runningProducts,
                                     [&](const RunningProduct &running) {
                                       return running.result == result;
                                     })
                     : std::prev(runningProducts.end());
  if (last == runningProducts.end())
    return;
  auto registersOf = [&](Value value) -> SmallVector<Value> & {
    auto owned = ownedTiles.find(value);
    return owned != ownedTiles.end() ? owned->second.registers
                                     : heldAccumulators[value];
  };
  // One wait for all of them: the older products are done when it is.
  SmallVector<Value> registers;
  for (auto it = runningProducts.begin(); it != std::next(last); ++it)
    llvm::append_range(registers, registersOf(it->result));
  int64_t stillRunning = std::distance(last, runningProducts.end()) - 1;
  SmallVector<Value> done =
      matrixUnit->finish(b, loc, last->product, registers, stillRunning);
  ArrayRef<Value> rest = done;
  for (auto it = runningProducts.begin(); it != std::next(last); ++it) {
    SmallVector<Value> &own = registersOf(it->result);
    llvm::copy(rest.take_front(own.size()), own.begin());
    rest = rest.drop_front(own.size());
  }
  runningProducts.erase(runningProducts.begin(), std::next(last));
}

Value SIMTKernelLowering::rescaledHeldAccumulator(Value acc) {
  // Up the chain heldAccumulatorDot accepted: element-wise ops, one
  // operand each from the chain.
  while (acc && !heldAccumulators.count(acc)) {
    Operation *op = acc.getDefiningOp();
    if (!op || !isElementwiseLike(op))
      return {};
    Value next;
    for (Value operand : op->getOperands())
      if (operand.getType() == acc.getType() &&
          (heldAccumulators.count(operand) || rescaledHeldAccumulator(operand)))
        next = operand;
    acc = next;
  }
  return acc;
}

FailureOr<SmallVector<Value>> SIMTKernelLowering::initHeldAccumulator(
    const tk::MatrixUnit::HeldProduct &product, Value init) {
  // A previous loop's product handed over in its registers.
  if (auto held = heldResults.find(init);
      held != heldResults.end() && sameLayout(held->second.product, product))
    return held->second.registers;
  SmallVector<Value> registers;
  for (auto [row, col] : matrixUnit->registerPositions(b, loc, product)) {
    FailureOr<Value> c = element(init, {row, col});
    if (failed(c))
      return failure();
    if (c->getType() == product.accumulator)
      registers.push_back(*c);
    else if (isa<FloatType>(product.accumulator))
      registers.push_back(
          arith::ExtFOp::create(b, loc, product.accumulator, *c));
    else
      registers.push_back(
          arith::ExtSIOp::create(b, loc, product.accumulator, *c));
  }
  if (registers.empty())
    return emitError(loc, passName() + ": the matrix unit gave no "
                                       "accumulator registers");
  return registers;
}

Value SIMTKernelLowering::heldRoot(Value value) {
  return findThroughIndexKeeping(
      value, [&](Value v) { return heldResults.count(v) != 0; });
}

LogicalResult
SIMTKernelLowering::storeHeld(const tk::MatrixUnit::HeldProduct &product,
                              ValueRange registers, Value buffer) {
  auto positions = matrixUnit->registerPositions(b, loc, product);
  if (positions.size() != registers.size())
    return emitError(loc, passName() + ": the matrix unit gave ")
           << positions.size() << " register positions for " << registers.size()
           << " registers";
  for (auto [value, position] : llvm::zip_equal(registers, positions))
    memref::StoreOp::create(b, loc, value, buffer,
                            ValueRange{position.first, position.second});
  return success();
}

LogicalResult SIMTKernelLowering::narrowAccumulator(Value tile, Value wide) {
  auto type = cast<RankedTensorType>(tile.getType());
  Type elementType = type.getElementType();
  if (cast<MemRefType>(wide.getType()).getElementType() == elementType) {
    buffers[tile] = wide;
    return success();
  }
  // By the runs its #tkw.shared records (placeNarrowingWrites).
  Value result = allocBuffer(type);
  if (failed(forEachIndex(
          type.getShape(),
          [&](ArrayRef<Value> index) {
            Value value = loadBuffer(wide, index, Type());
            if (isa<FloatType>(elementType))
              value = arith::TruncFOp::create(b, loc, elementType, value);
            else
              value = arith::TruncIOp::create(b, loc, elementType, value);
            storeBuffer(value, result, index);
            return success();
          },
          /*contiguous=*/true, nullptr,
          narrowingWrites.lookup(tile.getDefiningOp()))))
    return failure();
  buffers[tile] = result;
  return success();
}

} // namespace mlir::tk_to_loops
