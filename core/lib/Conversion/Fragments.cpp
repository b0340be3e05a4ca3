//===- Fragments.cpp - a matrix intrinsic's fragment as IR ----------------===//
//===----------------------------------------------------------------------===//

#include "tk/core/Conversion/Fragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <map>

using namespace mlir;

namespace {

Value constant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// `index`'s coordinates in a grid walked with order[0] fastest, as values
/// (null for a dimension of extent 1). `index` is below the grid's size.
std::array<Value, 2> coordinates(OpBuilder &b, Location loc, Value index,
                                 const std::array<int64_t, 2> &grid,
                                 const std::array<int64_t, 2> &order) {
  std::array<Value, 2> at;
  int64_t fast = order[0], slow = order[1];
  if (grid[slow] > 1)
    at[slow] = grid[fast] > 1
                   ? Value(arith::DivUIOp::create(b, loc, index,
                                                  constant(b, loc, grid[fast])))
                   : index;
  if (grid[fast] > 1)
    at[fast] = grid[slow] > 1
                   ? Value(arith::RemUIOp::create(b, loc, index,
                                                  constant(b, loc, grid[fast])))
                   : index;
  return at;
}

Value scaled(OpBuilder &b, Location loc, Value value, int64_t factor) {
  if (!value || factor == 1)
    return value;
  return arith::MulIOp::create(b, loc, value, constant(b, loc, factor));
}

/// base + term, either of which may be null (nothing to add).
Value plus(OpBuilder &b, Location loc, Value base, Value term) {
  if (!base || !term)
    return base ? base : term;
  return arith::AddIOp::create(b, loc, base, term);
}

Value plus(OpBuilder &b, Location loc, Value base, int64_t term) {
  return term ? plus(b, loc, base, constant(b, loc, term)) : base;
}

} // namespace

SmallVector<std::pair<Value, Value>>
tk::FragmentPlacement::positions(OpBuilder &b, Location loc, int64_t rowShift,
                                 int64_t colShift) const {
  // One value per distinct row and column, as a hand-written unit would.
  std::map<int64_t, Value> rows, cols;
  auto at = [&](std::map<int64_t, Value> &cache, Value base, int64_t offset) {
    Value &value = cache[offset];
    if (!value)
      value = plus(b, loc, base, offset);
    return value;
  };
  SmallVector<std::pair<Value, Value>> result;
  for (const std::array<int64_t, 2> &offset : offsets)
    result.push_back({at(rows, row, rowShift + offset[0]),
                      at(cols, col, colShift + offset[1])});
  return result;
}

SmallVector<Value> tk::FragmentPlacement::along(OpBuilder &b, Location loc,
                                                int dim, int64_t shift) const {
  std::map<int64_t, Value> made;
  SmallVector<Value> result;
  for (const std::array<int64_t, 2> &offset : offsets) {
    Value &value = made[shift + offset[dim]];
    if (!value)
      value = plus(b, loc, dim == 0 ? row : col, shift + offset[dim]);
    result.push_back(value);
  }
  return result;
}

tk::FragmentPlacement tk::FragmentPlacement::shifted(OpBuilder &b, Location loc,
                                                     Value rowOrigin,
                                                     Value colOrigin) const {
  FragmentPlacement moved = *this;
  moved.row = plus(b, loc, rowOrigin, row);
  moved.col = plus(b, loc, colOrigin, col);
  return moved;
}

FailureOr<tk::FragmentPlacement>
tk::placeFragment(OpBuilder &b, Location loc, const FragmentLayout &layout,
                  int64_t rows, int64_t cols, Value originRow, Value originCol,
                  Value warp, Value lane) {
  std::array<int64_t, 2> extent = {rows, cols}, share{};
  for (int d = 0; d < 2; ++d) {
    share[d] = extent[d] / layout.warpsPerFragment[d];
    if (share[d] < layout.sizePerLane[d] * layout.lanesPerWarp[d])
      return failure();
  }
  std::array<Value, 2> warpAt = {Value(), Value()};
  if (layout.numWarps() > 1) {
    if (!warp)
      return failure();
    warpAt = coordinates(b, loc, warp, layout.warpsPerFragment, layout.order);
  }
  std::array<Value, 2> laneAt =
      coordinates(b, loc, lane, layout.lanesPerWarp, layout.order);
  FragmentPlacement placement;
  std::array<Value, 2> origin = {originRow, originCol};
  std::array<Value, 2> start;
  // The fragment's origin, the warp's block, the lane's start.
  for (int d = 0; d < 2; ++d) {
    start[d] = plus(b, loc, origin[d], scaled(b, loc, warpAt[d], share[d]));
    start[d] = plus(b, loc, start[d],
                    scaled(b, loc, laneAt[d], layout.sizePerLane[d]));
  }
  placement.row = start[0] ? start[0] : constant(b, loc, 0);
  placement.col = start[1] ? start[1] : constant(b, loc, 0);
  placement.offsets = layout.elementsOf(/*warp=*/0, /*lane=*/0, rows, cols);
  return placement;
}

int64_t tk::rowLaneMask(const FragmentLayout &layout) {
  // Lanes along columns are the low bits of the lane index when columns are
  // walked first, the high bits otherwise.
  int64_t alongColumns = layout.lanesPerWarp[1];
  if (layout.order[0] == 1)
    return alongColumns - 1;
  return (alongColumns - 1) * layout.lanesPerWarp[0];
}
