//===- WarpExchange.cpp - one value a warp through the scratch ------------===//
//
// What a tk.reduce and a tk.scan whose axis crosses warps both do: one
// thread of each warp writes a value per slot (a line, or a line's chunk)
// into the op's scratch, a barrier, and the threads read the warps' values
// back. tk-allocate-shared-memory sized the scratch the same way.
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"

#include "tk/core/WarpDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace tk::simt {

FailureOr<WarpExchange>
WarpExchange::create(OpBuilder &b, Location loc, Operation *op, ValueRange srcs,
                     const LinearLayout &layout, const ThreadPosition &thread,
                     ArrayRef<int32_t> warpBits, int32_t laneAxisMask,
                     int64_t slots) {
  auto scratch =
      op->getAttrOfType<DenseI64ArrayAttr>(warp::TkwDialect::kScratchAttrName);
  if (!scratch || scratch.size() != 2)
    return op->emitOpError("tk-convert-registers-to-simt: a combination "
                           "across warps without tkw.scratch (run "
                           "tk-allocate-shared-memory first)");
  Type i32 = b.getI32Type();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, value);
  };
  WarpExchange exchange;
  exchange.warps = int64_t(1) << warpBits.size();
  exchange.warpIndex = constant(0);
  for (auto [i, bit] : llvm::enumerate(warpBits)) {
    Value one = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, thread.warp, constant(bit)),
        constant(1));
    exchange.warpIndex =
        arith::OrIOp::create(b, loc, exchange.warpIndex,
                             arith::ShLIOp::create(b, loc, one, constant(i)));
  }
  // Every lane along the axis holds the value to write, and copies hold
  // the same: the first of them writes.
  exchange.writer = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::AndIOp::create(
          b, loc, thread.lane,
          constant(laneAxisMask | getFreeMask(layout, kLaneDim))),
      constant(0));
  if (int32_t warpCopies = getFreeMask(layout, kWarpDim))
    exchange.writer = arith::AndIOp::create(
        b, loc, exchange.writer,
        arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq,
            arith::AndIOp::create(b, loc, thread.warp, constant(warpCopies)),
            constant(0)));
  int64_t byteOffset = scratch[0];
  for (Value src : srcs) {
    Type element = cast<RankedTensorType>(src.getType()).getElementType();
    int64_t bytes =
        std::max<int64_t>(storageType(element).getIntOrFloatBitWidth() / 8, 1);
    if (byteOffset % bytes)
      return op->emitOpError("tk-convert-registers-to-simt: scratch at byte ")
             << byteOffset << " is not aligned to its " << bytes
             << "-byte elements";
    Value buffer = getScratchBuffer(b, loc, op, element);
    if (!buffer)
      return op->emitOpError(
                 "tk-convert-registers-to-simt: no scratch buffer for ")
             << element;
    exchange.buffers.push_back(buffer);
    exchange.elements.push_back(element);
    exchange.bases.push_back(byteOffset / bytes);
    byteOffset += exchange.warps * slots * bytes;
  }
  return exchange;
}

Value WarpExchange::index(OpBuilder &b, Location loc, unsigned source,
                          Value slot, Value warp) const {
  Type i32 = b.getI32Type();
  Value index = arith::AddIOp::create(
      b, loc, arith::ConstantIntOp::create(b, loc, i32, bases[source]),
      arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(
              b, loc, slot, arith::ConstantIntOp::create(b, loc, i32, warps)),
          warp));
  return toIndex(b, loc, index);
}

void WarpExchange::store(OpBuilder &b, Location loc, unsigned source,
                         Value value, Value slot) const {
  memref::StoreOp::create(b, loc, toStorage(b, loc, value), buffers[source],
                          ValueRange{index(b, loc, source, slot, warpIndex)});
}

Value WarpExchange::load(OpBuilder &b, Location loc, unsigned source,
                         Value slot, int64_t warp) const {
  Value loaded = memref::LoadOp::create(
      b, loc, buffers[source],
      ValueRange{
          index(b, loc, source, slot,
                arith::ConstantIntOp::create(b, loc, b.getI32Type(), warp))});
  return fromStorage(b, loc, loaded, elements[source]);
}

Value getLineIndex(OpBuilder &b, Location loc, const LinearLayout &layout,
                   const ThreadCoordinates &coordinates, int32_t reg,
                   int64_t axis) {
  Type i32 = b.getI32Type();
  std::vector<std::string> outs = layout.getOutDimNames();
  Value line = arith::ConstantIntOp::create(b, loc, i32, 0);
  int32_t shift = 0;
  for (unsigned dim = 0; dim < outs.size(); ++dim) {
    if (dim == axis)
      continue;
    line = arith::OrIOp::create(
        b, loc, line,
        arith::ShLIOp::create(
            b, loc, coordinates.get(b, loc, reg, dim),
            arith::ConstantIntOp::create(b, loc, i32, shift)));
    shift += layout.getOutDimSizeLog2(outs[dim]);
  }
  return line;
}

} // namespace tk::simt
