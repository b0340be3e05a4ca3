//===- Elements.cpp - the element of a tile at an index ---------*- C++ -*-===//
//
// The sink-driven core: element(value, index) recomputes an element-wise
// chain inside its consumer's loop nest, reads a buffer, or loads from
// memory; the scalar forms of arith and math ops.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"
#include "tk/core/Conversion/ScalarOps.h"
#include "tk/core/WarpDialect.h"

using namespace mlir;

namespace mlir::tk_to_loops {

//===----------------------------------------------------------------------===//
// Elements
//===----------------------------------------------------------------------===//

FailureOr<Value> KernelLowering::scalar(Value value) {
  if (Value mapped = scalars.lookupOrNull(value))
    return mapped;
  if (Operation *def = value.getDefiningOp())
    return def->emitOpError(passName() + ": no lowered value for "
                                         "this scalar");
  return emitError(value.getLoc(), passName() + ": unmapped argument");
}

FailureOr<SmallVector<Value>> KernelLowering::elements(ValueRange values,
                                                       ArrayRef<Value> index) {
  SmallVector<Value> result;
  for (Value value : values) {
    FailureOr<Value> elem = element(value, index);
    if (failed(elem))
      return failure();
    result.push_back(*elem);
  }
  return result;
}

FailureOr<Value> KernelLowering::element(Value value, ArrayRef<Value> index) {
  if (!isTile(value.getType()))
    return scalar(value);
  Type elementType = cast<RankedTensorType>(value.getType()).getElementType();
  auto buffer = buffers.find(value);
  if (buffer != buffers.end())
    return loadBuffer(buffer->second, index, elementType);
  auto walk = pointerWalks.find(value);
  if (walk != pointerWalks.end()) {
    PointerWalk at = walk->second;
    FailureOr<Value> start = element(at.start, index);
    if (failed(start))
      return failure();
    Type pointee = cast<tk::PtrType>(elementType).getPointeeType();
    return Value(LLVM::GEPOp::create(b, loc, ptrType,
                                     tk::getMemoryType(pointee), *start,
                                     ValueRange{at.offset}));
  }

  std::pair<void *, SmallVector<void *, 4>> key;
  key.first = value.getAsOpaquePointer();
  for (Value i : index)
    key.second.push_back(i.getAsOpaquePointer());
  auto cached = elementCache.find(key);
  if (cached != elementCache.end())
    return cached->second;

  Operation *op = value.getDefiningOp();
  if (!op || !isElementwiseLike(op))
    return emitError(value.getLoc(),
                     passName() + ": tile has no lowered storage");
  FailureOr<Value> result = computeElement(op, index);
  if (succeeded(result))
    elementCache[key] = *result;
  return result;
}

FailureOr<Value> KernelLowering::computeElement(Operation *op,
                                                ArrayRef<Value> index) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](arith::ConstantOp constant) -> FailureOr<Value> {
        auto splat = cast<SplatElementsAttr>(constant.getValue());
        auto attr = cast<TypedAttr>(splat.getSplatValue<Attribute>());
        return Value(arith::ConstantOp::create(b, loc, attr));
      })
      .Case([&](tk::SplatOp splat) { return scalar(splat.getSrc()); })
      .Case([&](tk::MakeRangeOp range) -> FailureOr<Value> {
        Value i = arith::IndexCastOp::create(b, loc, b.getI32Type(), index[0]);
        if (range.getStart() == 0)
          return i;
        return Value(arith::AddIOp::create(
            b, loc, i, constInt(b.getI32Type(), range.getStart())));
      })
      .Case([&](tk::BroadcastOp broadcast) {
        auto srcType = cast<RankedTensorType>(broadcast.getSrc().getType());
        SmallVector<Value> srcIndex(index);
        for (int64_t d = 0; d < srcType.getRank(); ++d)
          if (srcType.getDimSize(d) == 1 && resultType.getDimSize(d) != 1)
            srcIndex[d] = constIndex(0);
        return element(broadcast.getSrc(), srcIndex);
      })
      .Case([&](tk::ExpandDimsOp expand) {
        SmallVector<Value> srcIndex(index);
        srcIndex.erase(srcIndex.begin() + expand.getAxis());
        return element(expand.getSrc(), srcIndex);
      })
      .Case([&](tk::TransOp trans) {
        ArrayRef<int32_t> order = trans.getOrder();
        SmallVector<Value> srcIndex(index.size());
        for (auto [i, d] : llvm::enumerate(order))
          srcIndex[d] = index[i];
        return element(trans.getSrc(), srcIndex);
      })
      .Case([&](tk::ReshapeOp reshape) {
        auto srcType = cast<RankedTensorType>(reshape.getSrc().getType());
        if (srcType.getShape() == resultType.getShape())
          return element(reshape.getSrc(), index);
        // Row-major: linearise in the result shape, split in the source's.
        Value linear = constIndex(0);
        for (auto [i, size] : llvm::enumerate(resultType.getShape()))
          linear = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, linear, constIndex(size)),
              index[i]);
        SmallVector<Value> srcIndex(srcType.getRank());
        for (int64_t d = srcType.getRank() - 1; d >= 0; --d) {
          Value size = constIndex(srcType.getDimSize(d));
          srcIndex[d] = arith::RemUIOp::create(b, loc, linear, size);
          linear = arith::DivUIOp::create(b, loc, linear, size);
        }
        return element(reshape.getSrc(), srcIndex);
      })
      .Case([&](tk::CatOp cat) -> FailureOr<Value> {
        int64_t half =
            cast<RankedTensorType>(cat.getLhs().getType()).getDimSize(0);
        Value inLhs = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            index[0], constIndex(half));
        Type elemType = scalarType(resultType.getElementType());
        auto branch = scf::IfOp::create(b, loc, TypeRange{elemType}, inLhs,
                                        /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        for (int side = 0; side < 2; ++side) {
          Block *block = side == 0 ? branch.thenBlock() : branch.elseBlock();
          b.setInsertionPointToEnd(block);
          auto saved = elementCache;
          SmallVector<Value> srcIndex(index);
          if (side == 1)
            srcIndex[0] =
                arith::SubIOp::create(b, loc, index[0], constIndex(half));
          FailureOr<Value> elem =
              element(side == 0 ? cat.getLhs() : cat.getRhs(), srcIndex);
          elementCache = std::move(saved);
          if (failed(elem))
            return failure();
          scf::YieldOp::create(b, loc, *elem);
        }
        return branch.getResult(0);
      })
      .Case([&](tk::JoinOp join) -> FailureOr<Value> {
        SmallVector<Value> srcIndex(index.drop_back());
        Value second = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                             index.back(), constIndex(0));
        Type elemType = scalarType(resultType.getElementType());
        auto branch = scf::IfOp::create(b, loc, TypeRange{elemType}, second,
                                        /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        for (int side = 0; side < 2; ++side) {
          Block *block = side == 0 ? branch.thenBlock() : branch.elseBlock();
          b.setInsertionPointToEnd(block);
          auto saved = elementCache;
          FailureOr<Value> elem =
              element(side == 0 ? join.getRhs() : join.getLhs(), srcIndex);
          elementCache = std::move(saved);
          if (failed(elem))
            return failure();
          scf::YieldOp::create(b, loc, *elem);
        }
        return branch.getResult(0);
      })
      .Case([&](tk::AddPtrOp addptr) -> FailureOr<Value> {
        FailureOr<Value> base = element(addptr.getPtr(), index);
        FailureOr<Value> offset = element(addptr.getOffset(), index);
        if (failed(base) || failed(offset))
          return failure();
        Type pointee =
            cast<tk::PtrType>(getElementTypeOrSelf(addptr.getPtr().getType()))
                .getPointeeType();
        return Value(LLVM::GEPOp::create(b, loc, ptrType,
                                         tk::getMemoryType(pointee), *base,
                                         ValueRange{*offset}));
      })
      .Case([&](tk::LoadOp load) { return loadElement(load, index); })
      .Case([&](tk::FpToFpOp convert) -> FailureOr<Value> {
        FailureOr<Value> src = element(convert.getSrc(), index);
        if (failed(src))
          return failure();
        return convertFloat(*src, cast<FloatType>(resultType.getElementType()),
                            convert.getRounding());
      })
      .Default([&](Operation *op) -> FailureOr<Value> {
        SmallVector<Value> operands;
        for (Value operand : op->getOperands()) {
          FailureOr<Value> elem = element(operand, index);
          if (failed(elem))
            return failure();
          operands.push_back(*elem);
        }
        return emitScalarOp(op, operands);
      });
}

FailureOr<Value> KernelLowering::blockAddress(const BlockPtrValue &bp,
                                              Type elementType,
                                              ArrayRef<Value> index,
                                              ArrayRef<int32_t> check,
                                              Value &inBounds) {
  Type i64 = b.getI64Type();
  Value linear = constInt(i64, 0);
  inBounds = nullptr;
  for (size_t d = 0; d < index.size(); ++d) {
    Value position = arith::AddIOp::create(
        b, loc, arith::ExtSIOp::create(b, loc, i64, bp.offsets[d]),
        arith::IndexCastOp::create(b, loc, i64, index[d]));
    linear = arith::AddIOp::create(
        b, loc, linear, arith::MulIOp::create(b, loc, position, bp.strides[d]));
    if (!llvm::is_contained(check, static_cast<int32_t>(d)))
      continue;
    // 0 <= position < shape as one unsigned comparison.
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                     position, bp.shape[d]);
    inBounds =
        inBounds ? Value(arith::AndIOp::create(b, loc, inBounds, ok)) : ok;
  }
  return Value(LLVM::GEPOp::create(b, loc, ptrType,
                                   tk::getMemoryType(elementType), bp.base,
                                   ValueRange{linear}));
}

FailureOr<Value> KernelLowering::loadElement(tk::LoadOp load,
                                             ArrayRef<Value> index) {
  Type resultElem = getElementTypeOrSelf(load.getType());
  Type valueType = scalarType(resultElem);
  Value address, guard, other;
  if (isBlockPtr(load.getPtr().getType())) {
    auto it = blockPtrs.find(load.getPtr());
    if (it == blockPtrs.end())
      return load.emitOpError(passName() + ": unknown block pointer");
    FailureOr<Value> addr = blockAddress(it->second, resultElem, index,
                                         load.getBoundaryCheck(), guard);
    if (failed(addr))
      return failure();
    address = *addr;
    if (guard && load.getPadding() == tk::PaddingOption::NaN)
      other = arith::ConstantOp::create(
          b, loc, valueType,
          b.getFloatAttr(
              valueType,
              APFloat::getNaN(cast<FloatType>(valueType).getFloatSemantics())));
  } else {
    FailureOr<Value> addr = element(load.getPtr(), index);
    if (failed(addr))
      return failure();
    address = *addr;
    if (load.getMask()) {
      FailureOr<Value> mask = element(load.getMask(), index);
      if (failed(mask))
        return failure();
      guard = *mask;
      if (load.getOther()) {
        FailureOr<Value> o = element(load.getOther(), index);
        if (failed(o))
          return failure();
        other = *o;
      }
    }
  }
  unsigned align = isa<LLVM::LLVMPointerType>(valueType)
                       ? 8
                       : std::max(1u, valueType.getIntOrFloatBitWidth() / 8);
  bool isVolatile = load.getIsVolatile();
  // A mask known to be on (see lowerStore's versioning) needs no branch.
  if (guard && matchPattern(guard, m_One()))
    guard = nullptr;
  if (!guard)
    return tk::loadScalar(b, loc, valueType, address, align, isVolatile);
  if (!other)
    other = zeroOf(valueType);
  // The load sits in a branch on the mask: a masked-off lane never touches
  // memory (LLVM if-converts this into a masked vector load).
  auto branch = scf::IfOp::create(b, loc, TypeRange{valueType}, guard,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard insertion(b);
  b.setInsertionPointToEnd(branch.thenBlock());
  Value loaded = tk::loadScalar(b, loc, valueType, address, align, isVolatile);
  scf::YieldOp::create(b, loc, loaded);
  b.setInsertionPointToEnd(branch.elseBlock());
  scf::YieldOp::create(b, loc, other);
  return branch.getResult(0);
}

Value KernelLowering::convertFloat(Value value, FloatType to,
                                   std::optional<tk::RoundingMode> rounding) {
  return tk::convertFloat(b, loc, value, to, rounding);
}

FailureOr<Value> KernelLowering::emitScalarOp(Operation *op,
                                              ArrayRef<Value> operands) {
  return tk::emitScalarOp(b, loc, op, operands,
                          [&](Type type) { return scalarType(type); });
}

FailureOr<Value> KernelLowering::combinerValue(const IRMapping &mapping,
                                               Value value) {
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  // A scalar from outside the combiner (CSE moves a constant it shares
  // with the kernel out of it): the kernel's own lowered value.
  return scalar(value);
}

FailureOr<SmallVector<Value>>
KernelLowering::combine(Region &region, ValueRange acc, ValueRange next) {
  Block &block = region.front();
  IRMapping mapping;
  for (auto [i, value] : llvm::enumerate(acc))
    mapping.map(block.getArgument(i), value);
  for (auto [i, value] : llvm::enumerate(next))
    mapping.map(block.getArgument(acc.size() + i), value);
  for (Operation &op : block.without_terminator()) {
    if (op.getNumRegions() != 0 ||
        !isa_and_present<arith::ArithDialect, math::MathDialect>(
            op.getDialect()))
      return op.emitOpError(passName() + ": a combiner may use only "
                                         "arith and math ops");
    SmallVector<Value> operands;
    for (Value operand : op.getOperands()) {
      FailureOr<Value> value = combinerValue(mapping, operand);
      if (failed(value))
        return failure();
      operands.push_back(*value);
    }
    FailureOr<Value> result = emitScalarOp(&op, operands);
    if (failed(result))
      return failure();
    mapping.map(op.getResult(0), *result);
  }
  SmallVector<Value> results;
  for (Value operand : block.getTerminator()->getOperands()) {
    FailureOr<Value> value = combinerValue(mapping, operand);
    if (failed(value))
      return failure();
    results.push_back(*value);
  }
  return results;
}

} // namespace mlir::tk_to_loops
