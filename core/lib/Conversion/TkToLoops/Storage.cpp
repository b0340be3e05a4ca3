//===- Storage.cpp - buffers and loop nests over tiles ----------*- C++ -*-===//
//
// Where tile elements live and how loop nests visit them: stack buffers,
// stores of tiles into them, and the serial nest over a tile's indices.
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

LogicalResult KernelLowering::forEachIndex(
    ArrayRef<int64_t> shape,
    function_ref<LogicalResult(ArrayRef<Value>)> body) {
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
  elementCache = std::move(saved);
  return result;
}

Value KernelLowering::allocBuffer(ArrayRef<int64_t> shape, Type elementType) {
  // Allocas live at function entry so that loops do not grow the stack.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entryBlock);
  auto type = MemRefType::get(shape, storageType(elementType));
  return memref::AllocaOp::create(b, loc, type, b.getI64IntegerAttr(64));
}

LogicalResult KernelLowering::storeTile(Value value, Value buffer,
                                        IndexOffsetFn offsetOf) {
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
  auto store = [&](Value on) {
    auto type = cast<RankedTensorType>(value.getType());
    return forEachIndex(type.getShape(), [&](ArrayRef<Value> index) {
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
    });
  };
  return full ? versionOnMask(full, store) : store(Value());
}

FailureOr<Value> KernelLowering::getBuffer(Value value) {
  auto it = buffers.find(value);
  if (it != buffers.end())
    return it->second;
  Value buffer = allocBuffer(cast<RankedTensorType>(value.getType()));
  if (failed(storeTile(value, buffer)))
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
