//===- BlockPointers.cpp - a block pointer's elements as tiles ------------===//

#include "tk/core/BlockPointers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace {

/// `line` (a tile of `shape[dim]` values) to `shape`'s rank: size 1 in
/// every other dimension.
Value expandToRank(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   int64_t dim, Value line) {
  auto type = cast<RankedTensorType>(line.getType());
  SmallVector<int64_t> expanded{shape[dim]};
  for (int64_t axis = 0; axis < int64_t(shape.size()); ++axis) {
    if (axis == dim)
      continue;
    expanded.insert(expanded.begin() + axis, 1);
    line = tk::ExpandDimsOp::create(
        b, loc, RankedTensorType::get(expanded, type.getElementType()), line,
        int32_t(axis));
  }
  return line;
}

Value broadcastTo(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Value tile) {
  auto type = cast<RankedTensorType>(tile.getType());
  if (type.getShape() == shape)
    return tile;
  return tk::BroadcastOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), tile);
}

/// The positions along `dim` at `shape`'s rank, before the broadcast.
Value expandedPositions(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                        int64_t dim, Value offset) {
  auto line = RankedTensorType::get({shape[dim]}, b.getI32Type());
  Value position =
      tk::MakeRangeOp::create(b, loc, line, 0, int32_t(shape[dim]));
  if (!matchPattern(offset, m_Zero()))
    position = arith::AddIOp::create(b, loc, position,
                                     tk::SplatOp::create(b, loc, line, offset));
  Value wide = arith::ExtSIOp::create(
      b, loc, RankedTensorType::get({shape[dim]}, b.getI64Type()), position);
  return expandToRank(b, loc, shape, dim, wide);
}

} // namespace

Value tk::buildBlockPositions(OpBuilder &b, Location loc,
                              ArrayRef<int64_t> shape, int64_t dim,
                              Value offset) {
  return broadcastTo(b, loc, shape,
                     expandedPositions(b, loc, shape, dim, offset));
}

Value tk::buildBlockElementOffsets(OpBuilder &b, Location loc,
                                   ArrayRef<int64_t> shape, ValueRange offsets,
                                   ValueRange strides) {
  Value sum;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    Value term = expandedPositions(b, loc, shape, d, offsets[d]);
    // A stride of 1 is left out, so that the analyses see the unit stride
    // (contiguity) without folding first.
    if (!matchPattern(strides[d], m_One()))
      term = arith::MulIOp::create(
          b, loc, term,
          tk::SplatOp::create(b, loc, cast<RankedTensorType>(term.getType()),
                              strides[d]));
    term = broadcastTo(b, loc, shape, term);
    sum = sum ? Value(arith::AddIOp::create(b, loc, sum, term)) : term;
  }
  return sum;
}

Value tk::buildBlockInBounds(OpBuilder &b, Location loc,
                             ArrayRef<int64_t> shape, ValueRange offsets,
                             ValueRange bounds, ArrayRef<int32_t> checked) {
  Value inside;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    if (!llvm::is_contained(checked, int32_t(d)))
      continue;
    Value position = expandedPositions(b, loc, shape, d, offsets[d]);
    auto type = cast<RankedTensorType>(position.getType());
    // 0 <= position < bound in one unsigned comparison: a negative
    // position is a large unsigned one.
    Value keep =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, position,
                              tk::SplatOp::create(b, loc, type, bounds[d]));
    keep = broadcastTo(b, loc, shape, keep);
    inside = inside ? Value(arith::AndIOp::create(b, loc, inside, keep)) : keep;
  }
  return inside;
}

Value tk::buildBlockPadding(OpBuilder &b, Location loc, RankedTensorType tile,
                            std::optional<PaddingOption> padding) {
  if (!padding)
    return {};
  Type element = tile.getElementType();
  TypedAttr value =
      *padding == PaddingOption::NaN && isa<FloatType>(element)
          ? TypedAttr(FloatAttr::get(
                element,
                APFloat::getNaN(cast<FloatType>(element).getFloatSemantics())))
          : b.getZeroAttr(element);
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(tile, cast<Attribute>(value)));
}
