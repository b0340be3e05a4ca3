//===- Storage.cpp - buffers and loop nests over tiles ----------*- C++ -*-===//
//
// Where tile elements live and how loop nests visit them, in what the CPU and
// GPU forms share: stores of tiles into buffers, the index arithmetic of a
// nest and the serial nest. Tiles in registers are the GPU's
// (Registers.cpp). The buffers and nests that differ (stack or workgroup
// memory, serial or spread over the threads) are in TkToLoops.cpp and
// TkToSIMT.cpp.
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
  LogicalResult result = visitAsOwners(owned, [&] {
    return full ? versionOnMask(full, store) : store(Value());
  });
  if (owned)
    barrier();
  return result;
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

} // namespace mlir::tk_to_loops
