//===- BuilderMemory.cpp - Loads, stores and atomics ----------------------===//
//
// The KernelBuilder's loads, stores and atomics (Builder.cpp has the rest).
//
//===----------------------------------------------------------------------===//

#include "BuilderSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tk;
using namespace tk::builder_support;

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

Tile KernelBuilder::load(const Tile &ptrIn, const Tile &maskIn,
                         std::optional<Operand> other) {
  if (!check(ptrIn, "load"))
    return Tile();
  if (ptrIn.isBlockPointer()) {
    if (maskIn.valid() || other) {
      emitError("load: a block pointer takes a boundary check, not a mask; "
                "use loadBlock()");
      return Tile();
    }
    return loadBlock(ptrIn);
  }
  if (!ptrIn.isPointer()) {
    emitError("load: expected a pointer or a tile of pointers, got " +
              str(ptrIn.type()));
    return Tile();
  }
  Tile ptr = ptrIn, mask = maskIn;
  if (mask.builder() || mask.valid()) {
    if (!check(mask, "load"))
      return Tile();
    if (!mask.isBool()) {
      emitError("load: the mask must be i1, not " + str(mask.type()));
      return Tile();
    }
    // Triton broadcasts pointers and mask against each other.
    if (!broadcastPair(ptr, mask, "load"))
      return Tile();
  }
  Type loaded = getLoadedType(ptr.type());
  Tile otherTile;
  if (other) {
    if (!mask.valid()) {
      emitError("load: 'other' needs a mask");
      return Tile();
    }
    otherTile =
        other->isTile() ? other->tile() : literal(*other, loaded, "load");
    if (!check(otherTile, "load"))
      return Tile();
    if (otherTile.dtype() != getElementTypeOrSelf(loaded)) {
      emitError("load: 'other' has dtype " + str(otherTile.dtype()) +
                " but the pointers load " + str(getElementTypeOrSelf(loaded)));
      return Tile();
    }
    otherTile = broadcastImpl(otherTile, ptr.shape(), "load");
    if (!otherTile.valid())
      return Tile();
  }
  return wrapResult(
      LoadOp::create(b_, loc_, ptr.value(), mask.value(), otherTile.value()));
}

void KernelBuilder::store(const Tile &ptr, const Operand &valueOp,
                          const Tile &maskIn) {
  if (!check(ptr, "store"))
    return;
  if (ptr.isBlockPointer()) {
    if (maskIn.valid()) {
      emitError("store: a block pointer takes a boundary check, not a mask; "
                "use storeBlock()");
      return;
    }
    storeBlock(ptr, valueOp);
    return;
  }
  if (!ptr.isPointer()) {
    emitError("store: expected a pointer or a tile of pointers, got " +
              str(ptr.type()));
    return;
  }
  Type loaded = getLoadedType(ptr.type());
  Type pointee = getElementTypeOrSelf(loaded);
  Tile value =
      valueOp.isTile() ? valueOp.tile() : literal(valueOp, loaded, "store");
  if (!check(value, "store"))
    return;
  if (value.dtype() != pointee) {
    emitError("store: cannot store " + str(value.dtype()) +
              " values through pointers to " + str(pointee) +
              "; cast the value first");
    return;
  }
  value = broadcastImpl(value, ptr.shape(), "store");
  if (!value.valid())
    return;
  Tile mask = maskIn;
  if (mask.builder() || mask.valid()) {
    if (!check(mask, "store"))
      return;
    if (!mask.isBool()) {
      emitError("store: the mask must be i1, not " + str(mask.type()));
      return;
    }
    mask = broadcastImpl(mask, ptr.shape(), "store");
    if (!mask.valid())
      return;
  }
  StoreOp::create(b_, loc_, ptr.value(), value.value(), mask.value());
}

Tile KernelBuilder::toIndex(const Operand &op, Type type, StringRef what) {
  if (!ok())
    return Tile();
  if (!op.isTile())
    return literal(op, type, what);
  const Tile &x = op.tile();
  if (!check(x, what))
    return Tile();
  if (x.isTile() || !x.isInt() || x.isBool()) {
    emitError(what + ": expected an integer scalar, got " + str(x.type()));
    return Tile();
  }
  return cast(x, type);
}

Tile KernelBuilder::makeBlockPtr(const Tile &base, ArrayRef<Operand> shape,
                                 ArrayRef<Operand> strides,
                                 ArrayRef<Operand> offsets,
                                 ArrayRef<int64_t> blockShape,
                                 ArrayRef<int32_t> order) {
  if (!check(base, "makeBlockPtr"))
    return Tile();
  if (!base.isPointer() || base.isTile()) {
    emitError("makeBlockPtr: the base must be a scalar pointer, got " +
              str(base.type()));
    return Tile();
  }
  size_t rank = blockShape.size();
  if (shape.size() != rank || strides.size() != rank ||
      offsets.size() != rank || order.size() != rank) {
    emitError("makeBlockPtr: a block of rank " + Twine(rank) + " needs " +
              Twine(rank) +
              " shape values, strides, offsets and order "
              "entries (got " +
              Twine(shape.size()) + ", " + Twine(strides.size()) + ", " +
              Twine(offsets.size()) + ", " + Twine(order.size()) + ")");
    return Tile();
  }
  // The tensor's shape and strides are i64, the window's offsets i32.
  SmallVector<Value> shapeValues, strideValues, offsetValues;
  for (const Operand &dim : shape)
    shapeValues.push_back(toIndex(dim, i64(), "makeBlockPtr").value());
  for (const Operand &stride : strides)
    strideValues.push_back(toIndex(stride, i64(), "makeBlockPtr").value());
  for (const Operand &offset : offsets)
    offsetValues.push_back(toIndex(offset, i32(), "makeBlockPtr").value());
  if (!ok())
    return Tile();
  Type pointee = llvm::cast<PtrType>(base.type()).getPointeeType();
  Type type = ptrTo(tileOf(blockShape, pointee));
  return wrapResult(MakeBlockPtrOp::create(b_, loc_, type, base.value(),
                                           shapeValues, strideValues,
                                           offsetValues, order));
}

Tile KernelBuilder::advance(const Tile &blockPtr, ArrayRef<Operand> offsets) {
  if (!check(blockPtr, "advance"))
    return Tile();
  if (!blockPtr.isBlockPointer()) {
    emitError("advance: expected a block pointer, got " + str(blockPtr.type()));
    return Tile();
  }
  SmallVector<Value> values;
  for (const Operand &offset : offsets)
    values.push_back(toIndex(offset, i32(), "advance").value());
  if (!ok())
    return Tile();
  return wrapResult(
      AdvanceOp::create(b_, loc_, blockPtr.type(), blockPtr.value(), values));
}

Tile KernelBuilder::loadBlock(const Tile &blockPtr,
                              ArrayRef<int32_t> boundaryCheck,
                              std::optional<PaddingOption> padding) {
  if (!check(blockPtr, "loadBlock"))
    return Tile();
  if (!blockPtr.isBlockPointer()) {
    emitError("loadBlock: expected a block pointer, got " +
              str(blockPtr.type()));
    return Tile();
  }
  return wrapResult(
      LoadOp::create(b_, loc_, blockPtr.value(), boundaryCheck, padding));
}

void KernelBuilder::storeBlock(const Tile &blockPtr, const Operand &valueOp,
                               ArrayRef<int32_t> boundaryCheck) {
  if (!check(blockPtr, "storeBlock"))
    return;
  if (!blockPtr.isBlockPointer()) {
    emitError("storeBlock: expected a block pointer, got " +
              str(blockPtr.type()));
    return;
  }
  auto block = llvm::cast<RankedTensorType>(
      llvm::cast<PtrType>(blockPtr.type()).getPointeeType());
  Tile value =
      valueOp.isTile() ? valueOp.tile() : literal(valueOp, block, "storeBlock");
  if (!check(value, "storeBlock"))
    return;
  if (value.dtype() != block.getElementType()) {
    emitError("storeBlock: cannot store " + str(value.dtype()) +
              " values into a block of " + str(block.getElementType()) +
              "; cast the value first");
    return;
  }
  value = broadcastImpl(value, block.getShape(), "storeBlock");
  if (!value.valid())
    return;
  StoreOp::create(b_, loc_, blockPtr.value(), value.value(), Value(),
                  boundaryCheck);
}

Tile KernelBuilder::atomicRMW(AtomicRMWKind kind, const Tile &ptr,
                              const Operand &valueOp, const Tile &maskIn,
                              MemSemantic sem) {
  if (!check(ptr, "atomicRMW"))
    return Tile();
  if (!ptr.isPointer()) {
    emitError("atomicRMW: expected a pointer or a tile of pointers, got " +
              str(ptr.type()));
    return Tile();
  }
  Type loaded = getLoadedType(ptr.type());
  Tile value =
      valueOp.isTile() ? valueOp.tile() : literal(valueOp, loaded, "atomicRMW");
  if (!check(value, "atomicRMW"))
    return Tile();
  if (value.dtype() != getElementTypeOrSelf(loaded)) {
    emitError("atomicRMW: the value has dtype " + str(value.dtype()) +
              " but the pointers point to " +
              str(getElementTypeOrSelf(loaded)));
    return Tile();
  }
  value = broadcastImpl(value, ptr.shape(), "atomicRMW");
  Tile mask = maskIn;
  if (mask.builder() || mask.valid()) {
    if (!check(mask, "atomicRMW"))
      return Tile();
    mask = broadcastImpl(mask, ptr.shape(), "atomicRMW");
  }
  if (!ok())
    return Tile();
  return wrapResult(AtomicRMWOp::create(
      b_, loc_, loaded, kind, sem, ptr.value(), value.value(), mask.value()));
}

Tile KernelBuilder::atomicAdd(const Tile &ptr, const Operand &value,
                              const Tile &mask, MemSemantic sem) {
  if (!check(ptr, "atomicAdd"))
    return Tile();
  bool isFloat =
      isa<FloatType>(getElementTypeOrSelf(getLoadedType(ptr.type())));
  return atomicRMW(isFloat ? AtomicRMWKind::FAdd : AtomicRMWKind::Add, ptr,
                   value, mask, sem);
}

Tile KernelBuilder::atomicCAS(const Tile &ptr, const Operand &cmpOp,
                              const Operand &valueOp, MemSemantic sem) {
  if (!check(ptr, "atomicCAS"))
    return Tile();
  if (!ptr.isPointer()) {
    emitError("atomicCAS: expected a pointer or a tile of pointers, got " +
              str(ptr.type()));
    return Tile();
  }
  Type loaded = getLoadedType(ptr.type());
  Tile cmp =
      cmpOp.isTile() ? cmpOp.tile() : literal(cmpOp, loaded, "atomicCAS");
  Tile value =
      valueOp.isTile() ? valueOp.tile() : literal(valueOp, loaded, "atomicCAS");
  if (!check(cmp, "atomicCAS") || !check(value, "atomicCAS"))
    return Tile();
  cmp = broadcastImpl(cmp, ptr.shape(), "atomicCAS");
  value = broadcastImpl(value, ptr.shape(), "atomicCAS");
  if (!ok())
    return Tile();
  return wrapResult(AtomicCASOp::create(b_, loc_, loaded, sem, ptr.value(),
                                        cmp.value(), value.value()));
}
