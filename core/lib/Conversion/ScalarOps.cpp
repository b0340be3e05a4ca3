//===- ScalarOps.cpp - one element of a tile op --------------------------===//

#include "tk/core/Conversion/ScalarOps.h"

#include "tk/core/WarpDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace tk {

Value loadScalar(OpBuilder &b, Location loc, Type type, Value address,
                 unsigned alignment, bool isVolatile) {
  Type moved = getMemoryType(type);
  Value loaded =
      LLVM::LoadOp::create(b, loc, moved, address, alignment, isVolatile);
  return moved == type ? loaded
                       : Value(arith::BitcastOp::create(b, loc, type, loaded));
}

void storeScalar(OpBuilder &b, Location loc, Value value, Value address,
                 unsigned alignment) {
  Type moved = getMemoryType(value.getType());
  if (moved != value.getType())
    value = arith::BitcastOp::create(b, loc, moved, value);
  LLVM::StoreOp::create(b, loc, value, address, alignment);
}

Value convertFloat(OpBuilder &b, Location loc, Value value, FloatType to,
                   std::optional<RoundingMode> rounding) {
  auto from = cast<FloatType>(value.getType());
  if (from == to)
    return value;
  if (from.getWidth() < to.getWidth() ||
      (from.getWidth() == to.getWidth() && to.isF32()))
    return arith::ExtFOp::create(b, loc, to, value);
  if (isNarrowFloat(from) && isNarrowFloat(to)) {
    // f16 <-> bf16 goes through f32 (exact widening, one rounding).
    value = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    from = b.getF32Type();
  }
  if (from.isF64() && isNarrowFloat(to)) {
    // LLVM would call a runtime helper for double -> half; round twice.
    value = arith::TruncFOp::create(b, loc, b.getF32Type(), value);
    from = b.getF32Type();
  }
  Value nearest = arith::TruncFOp::create(b, loc, to, value);
  if (!rounding || *rounding == RoundingMode::RTNE)
    return nearest;
  // Toward zero: take round-to-nearest and step back one ulp towards zero
  // where it rounded away (larger magnitude than the source). This also turns
  // an overflow to infinity into the largest finite value, and a finite
  // value's overflow to NaN (f8E4M3FN has no infinity; its NaN is the code
  // above its largest finite value) into that value; an infinity stays NaN.
  Value back = arith::ExtFOp::create(b, loc, from, nearest);
  Value absBack = math::AbsFOp::create(b, loc, back);
  Value absSrc = math::AbsFOp::create(b, loc, value);
  Value away =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, absBack, absSrc);
  if (!APFloat::semanticsHasInf(to.getFloatSemantics()))
    away = arith::OrIOp::create(
        b, loc, away,
        arith::AndIOp::create(
            b, loc,
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, back,
                                  back),
            arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::OLT, absSrc,
                arith::ConstantOp::create(
                    b, loc, from,
                    b.getFloatAttr(
                        from, APFloat::getInf(from.getFloatSemantics()))))));
  Type bits = b.getIntegerType(to.getWidth());
  Value asInt = arith::BitcastOp::create(b, loc, bits, nearest);
  Value stepped = arith::SubIOp::create(
      b, loc, asInt,
      arith::ConstantOp::create(b, loc, bits, b.getIntegerAttr(bits, 1)));
  Value chosen = arith::SelectOp::create(b, loc, away, stepped, asInt);
  return arith::BitcastOp::create(b, loc, to, chosen);
}

bool computesInF32(Operation *op) {
  if (isa<arith::ExtFOp, arith::TruncFOp, arith::BitcastOp, arith::SelectOp,
          arith::ConstantOp>(op))
    return false;
  auto narrow = [](Type type) {
    return isNarrowFloat(getElementTypeOrSelf(type));
  };
  return llvm::any_of(op->getOperandTypes(), narrow) ||
         llvm::any_of(op->getResultTypes(), narrow);
}

FailureOr<Value> emitScalarOp(OpBuilder &b, Location loc, Operation *op,
                              ArrayRef<Value> operands,
                              function_ref<Type(Type)> scalarType) {
  Type f32 = b.getF32Type();
  bool promote = computesInF32(op);
  if (auto ext = dyn_cast<arith::ExtFOp>(op))
    return convertFloat(b, loc, operands[0],
                        cast<FloatType>(getElementTypeOrSelf(ext.getType())),
                        std::nullopt);
  if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
    std::optional<tk::RoundingMode> rounding;
    if (trunc.getRoundingmode() == arith::RoundingMode::toward_zero)
      rounding = RoundingMode::RTZ;
    return convertFloat(b, loc, operands[0],
                        cast<FloatType>(getElementTypeOrSelf(trunc.getType())),
                        rounding);
  }
  SmallVector<Value> newOperands(operands);
  if (promote)
    for (Value &operand : newOperands)
      if (isNarrowFloat(operand.getType()))
        operand = arith::ExtFOp::create(b, loc, f32, operand);
  Operation *clone = b.clone(*op);
  clone->setOperands(newOperands);
  for (OpResult result : clone->getResults()) {
    Type elem = scalarType(getElementTypeOrSelf(result.getType()));
    result.setType(promote && isNarrowFloat(elem) ? f32 : elem);
  }
  if (clone->getNumResults() != 1)
    return op->emitOpError("expected one result");
  Value result = clone->getResult(0);
  Type wanted = scalarType(getElementTypeOrSelf(op->getResult(0).getType()));
  if (result.getType() != wanted)
    result = arith::TruncFOp::create(b, loc, wanted, result);
  return result;
}

void foldExactNarrowRoundTrips(Operation *root) {
  // The narrow type each value is exactly representable in, in program
  // order: a value is known before its users within a block.
  llvm::DenseMap<Value, Type> exactIn;
  SmallVector<std::pair<arith::ExtFOp, Value>> roundTrips;
  root->walk([&](Operation *op) {
    if (auto ext = dyn_cast<arith::ExtFOp>(op)) {
      Type from = ext.getIn().getType();
      if (!ext.getType().isF32())
        return;
      if (isNarrowFloat(from))
        exactIn[ext] = from;
      if (auto trunc = ext.getIn().getDefiningOp<arith::TruncFOp>())
        if (exactIn.lookup(trunc.getIn()) == from)
          roundTrips.push_back({ext, trunc.getIn()});
      return;
    }
    Type common;
    ValueRange picked;
    if (isa<arith::MinNumFOp, arith::MaxNumFOp, arith::MinimumFOp,
            arith::MaximumFOp>(op))
      picked = op->getOperands();
    else if (auto select = dyn_cast<arith::SelectOp>(op))
      picked = select->getOperands().drop_front();
    else if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op))
      picked = shuffle->getOperands().take_front();
    else
      return;
    if (!op->getResult(0).getType().isF32())
      return;
    for (Value operand : picked) {
      Type narrow = exactIn.lookup(operand);
      if (!narrow || (common && narrow != common))
        return;
      common = narrow;
    }
    exactIn[op->getResult(0)] = common;
  });
  for (auto [ext, exact] : roundTrips)
    ext.getResult().replaceAllUsesWith(exact);
}

Value promoteForPrintf(OpBuilder &b, Location loc, Value value,
                       std::string &spec) {
  Type type = value.getType();
  if (isa<FloatType>(type)) {
    spec = "%g";
    if (type.isF64())
      return value;
    if (isNarrowFloat(type))
      value = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    return arith::ExtFOp::create(b, loc, b.getF64Type(), value);
  }
  if (isa<LLVM::LLVMPointerType>(type)) {
    spec = "%p";
    return value;
  }
  if (type.isInteger(64)) {
    spec = "%lld";
    return value;
  }
  spec = "%d";
  return type.isInteger(32)
             ? value
             : Value(arith::ExtSIOp::create(b, loc, b.getI32Type(), value));
}

} // namespace tk
