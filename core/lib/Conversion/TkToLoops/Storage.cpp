//===- Storage.cpp - buffers, registers, loop nests over tiles --*- C++ -*-===//
//
// Where tile elements live and how loop nests visit them, in what the CPU and
// GPU forms share: ring slots, register-resident and row-resident tiles,
// stores of tiles into buffers, the index arithmetic of a nest and the serial
// nest. The buffers and nests that differ (stack or workgroup memory, serial
// or spread over the threads) are in TkToLoops.cpp and TkToSIMT.cpp.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

using namespace mlir;

namespace mlir::tk_to_loops {

//===----------------------------------------------------------------------===//
// Storage
//===----------------------------------------------------------------------===//

Value KernelLowering::loadBuffer(Value buffer, ArrayRef<Value> index,
                                 Type elementType) {
  Value stored = memref::LoadOp::create(b, loc, buffer, index);
  if (elementType && isa<tk::PtrType>(elementType))
    return LLVM::IntToPtrOp::create(b, loc, ptrType, stored);
  return stored;
}

void KernelLowering::storeBuffer(Value element, Value buffer,
                                 ArrayRef<Value> index) {
  if (isa<LLVM::LLVMPointerType>(element.getType()))
    element = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), element);
  memref::StoreOp::create(b, loc, element, buffer, index);
}

SmallVector<Value> KernelLowering::loadBuffers(ArrayRef<Value> buffers,
                                               ArrayRef<Value> index,
                                               TypeRange elementTypes) {
  SmallVector<Value> values;
  for (auto [buffer, type] : llvm::zip_equal(buffers, elementTypes))
    values.push_back(loadBuffer(buffer, index, type));
  return values;
}

void KernelLowering::storeBuffers(ValueRange values, ArrayRef<Value> buffers,
                                  ArrayRef<Value> index) {
  for (auto [value, buffer] : llvm::zip_equal(values, buffers))
    storeBuffer(value, buffer, index);
}

LogicalResult KernelLowering::combineInto(Region &combiner,
                                          ArrayRef<Value> buffers,
                                          TypeRange elementTypes,
                                          ArrayRef<Value> from, ValueRange next,
                                          ArrayRef<Value> to) {
  FailureOr<SmallVector<Value>> combined =
      combine(combiner, loadBuffers(buffers, from, elementTypes), next);
  if (failed(combined))
    return failure();
  storeBuffers(*combined, buffers, to);
  return success();
}

LogicalResult
KernelLowering::forOneIndex(ArrayRef<int64_t> shape, int64_t total,
                            Value linear,
                            function_ref<LogicalResult(ArrayRef<Value>)> body) {
  {
    SmallVector<Value> index(shape.size());
    int64_t stride = 1;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (shape[d] == 1) {
        index[d] = constIndex(0);
        continue;
      }
      Value scaled = stride == 1 ? linear
                                 : arith::DivUIOp::create(b, loc, linear,
                                                          constIndex(stride));
      index[d] =
          stride * shape[d] == total
              ? scaled
              : arith::RemUIOp::create(b, loc, scaled, constIndex(shape[d]));
      stride *= shape[d];
    }
    auto saved = std::move(elementCache);
    elementCache.clear();
    LogicalResult result = body(index);
    elementCache = std::move(saved);
    return result;
  }
}

LogicalResult KernelLowering::forEachIndexSerial(
    ArrayRef<int64_t> shape, function_ref<LogicalResult(ArrayRef<Value>)> body,
    function_ref<void()> afterRun) {
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Value> index;
  for (int64_t size : shape) {
    if (size == 1) {
      index.push_back(constIndex(0));
      continue;
    }
    auto loop = scf::ForOp::create(b, loc, constIndex(0), constIndex(size),
                                   constIndex(1));
    b.setInsertionPointToStart(loop.getBody());
    index.push_back(loop.getInductionVar());
  }
  auto saved = std::move(elementCache);
  elementCache.clear();
  LogicalResult result = body(index);
  if (afterRun)
    afterRun();
  elementCache = std::move(saved);
  return result;
}

LogicalResult KernelLowering::storeTile(Value value, Value buffer,
                                        IndexOffsetFn offsetOf,
                                        int64_t maxRun) {
  // A masked load whose bounds mask is on for every lane of this program
  // (most programs of a grid) loads without the per-lane branches, which
  // keep LLVM from merging a run's loads into vector loads; the others keep
  // them. The bounds check is O(1) (see lowerStore's versioning).
  auto load = value.getDefiningOp<tk::LoadOp>();
  Value mask = load ? load.getMask() : Value();
  Value full = mask && isTile(mask.getType()) &&
                       !isBlockPtr(load.getPtr().getType()) && isCheap(mask)
                   ? rangeMaskAllTrue(mask)
                   : Value();
  // A stored tile computed from register-resident ones is written by their
  // owners (then published with a barrier, which owner nests leave out).
  const OwnedTile *owned = ownedRead(value);
  OwnerIteration owners(*this, owned);
  auto store = [&](Value on) {
    auto type = cast<RankedTensorType>(value.getType());
    return forEachIndex(
        type.getShape(),
        [&](ArrayRef<Value> index) {
          if (on)
            assumeElement(mask, index, on);
          FailureOr<Value> elem = element(value, index);
          if (failed(elem))
            return failure();
          if (offsetOf)
            storeBuffer(*elem, buffer, {offsetOf(index)});
          else
            storeBuffer(*elem, buffer, index);
          return success();
        },
        /*contiguous=*/true, nullptr,
        maxRun > 0 ? maxRun : runOf(type.getElementType()));
  };
  LogicalResult result = full ? versionOnMask(full, store) : store(Value());
  if (owned)
    barrier();
  return result;
}

LogicalResult KernelLowering::keepInRegisters(Value value) {
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
  ownedTiles[value] = {SmallVector<Value>(branch.getResults()), fragment,
                       run};
  return success();
}

LogicalResult KernelLowering::keepInRows(Value value) {
  tk::DotOp layout = rowLayout.lookup(value);
  FailureOr<SmallVector<Value>> registers = computeRows(value, layout);
  if (failed(registers))
    return failure();
  rowTiles[value] = {rowOffsets(*heldProduct(layout)), std::move(*registers)};
  return success();
}

FailureOr<SmallVector<Value>> KernelLowering::computeRows(Value value,
                                                          tk::DotOp layout) {
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

FailureOr<Value> KernelLowering::getBuffer(Value value) {
  auto it = buffers.find(value);
  if (it != buffers.end())
    return it->second;
  Value buffer = allocBuffer(cast<RankedTensorType>(value.getType()));
  // The runs its #tkw.shared records (the owners of the registers it is
  // computed from write it where they are, whatever the runs).
  auto written = sharedWrites.find(value.getDefiningOp());
  int64_t run = written != sharedWrites.end() ? written->second.run : 0;
  if (failed(storeTile(value, buffer, nullptr, run)))
    return failure();
  buffers[value] = buffer;
  return buffer;
}

Value KernelLowering::zeroOf(Type type) {
  if (isa<LLVM::LLVMPointerType>(type))
    return LLVM::ZeroOp::create(b, loc, type);
  return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
}

const OwnedTile *KernelLowering::ownedRead(Value value) {
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

void KernelLowering::settleProducts(Value result) {
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

} // namespace mlir::tk_to_loops
