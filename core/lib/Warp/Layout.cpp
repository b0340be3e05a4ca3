//===- Layout.cpp - what a layout gives each warp -------------------------===//
//
// Interprets the layout attributes: dot operands and slices derive their
// distribution from their parent (ML-Triton, table 3), so every layout comes
// down to one warp grid and one block per tile dimension.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>

using namespace mlir;
using namespace tk::warp;

int64_t WarpDistribution::getNumWarps() const {
  int64_t product = 1;
  for (int64_t warps : warpsPerCTA)
    product *= warps;
  return product;
}

SmallVector<int64_t> WarpDistribution::getWarpCoords(int64_t warpId) const {
  SmallVector<int64_t> coords(warpsPerCTA.size(), 0);
  for (int64_t d : order) {
    coords[d] = warpId % warpsPerCTA[d];
    warpId /= warpsPerCTA[d];
  }
  return coords;
}

int64_t WarpDistribution::getWarpOffset(int64_t warpId, int64_t dim,
                                        ArrayRef<int64_t> shape) const {
  if (gridDim[dim] < 0)
    return 0;
  return getWarpCoords(warpId)[gridDim[dim]] * blockStride[dim] % shape[dim];
}

bool WarpDistribution::sameElementsPerWarp(const WarpDistribution &other,
                                           ArrayRef<int64_t> shape) const {
  if (getNumWarps() != other.getNumWarps() || sizePerWarp != other.sizePerWarp)
    return false;
  for (int64_t warp = 0, e = getNumWarps(); warp < e; ++warp)
    for (size_t d = 0; d < shape.size(); ++d)
      if (getWarpOffset(warp, d, shape) != other.getWarpOffset(warp, d, shape))
        return false;
  return true;
}

/// Fills dimension `d` of `result` for a block of `stride` elements selected
/// by grid dimension `grid`, checking that one block per warp covers `size`.
static LogicalResult addBlockedDim(WarpDistribution &result, int64_t d,
                                   int64_t size, int64_t stride, int64_t grid,
                                   int64_t warps, std::string &error) {
  // A warp holds one block: a larger tile would need several per warp.
  if (size > stride * warps) {
    error = "a tile of " + std::to_string(size) + " along dimension " +
            std::to_string(d) + " needs more than one block of " +
            std::to_string(stride) + " per warp over " + std::to_string(warps) +
            " warps";
    return failure();
  }
  int64_t held = std::min(stride, size);
  if (size % held != 0) {
    error = "blocks of " + std::to_string(held) + " do not divide dimension " +
            std::to_string(d) + " of " + std::to_string(size);
    return failure();
  }
  result.sizePerWarp[d] = held;
  result.blockStride[d] = stride;
  result.gridDim[d] = grid;
  return success();
}

static void resetPerDim(WarpDistribution &result, size_t rank) {
  result.sizePerWarp.assign(rank, 0);
  result.blockStride.assign(rank, 0);
  result.gridDim.assign(rank, -1);
}

LogicalResult tk::warp::getWarpDistribution(Attribute layout,
                                            ArrayRef<int64_t> shape,
                                            WarpDistribution &result,
                                            std::string &error) {
  if (!isLayout(layout)) {
    error = "the tile has no tkw layout";
    return failure();
  }
  if (getLayoutRank(layout) != static_cast<int64_t>(shape.size())) {
    error = "a layout of rank " + std::to_string(getLayoutRank(layout)) +
            " cannot describe a tile of rank " + std::to_string(shape.size());
    return failure();
  }
  if (auto blocked = dyn_cast<BlockedLayoutAttr>(layout)) {
    result.warpsPerCTA.assign(blocked.getWarpsPerCTA().begin(),
                              blocked.getWarpsPerCTA().end());
    result.order.assign(blocked.getOrder().begin(), blocked.getOrder().end());
    resetPerDim(result, shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      if (failed(addBlockedDim(result, d, shape[d], blocked.getSizePerWarp()[d],
                               d, blocked.getWarpsPerCTA()[d], error)))
        return failure();
    return success();
  }
  if (auto operand = dyn_cast<DotOperandLayoutAttr>(layout)) {
    // A warp holds the rows of `a` (columns of `b`) of its block of the
    // result and the whole reduction dimension.
    BlockedLayoutAttr parent = operand.getParent();
    result.warpsPerCTA.assign(parent.getWarpsPerCTA().begin(),
                              parent.getWarpsPerCTA().end());
    result.order.assign(parent.getOrder().begin(), parent.getOrder().end());
    resetPerDim(result, 2);
    int64_t split = operand.getOpIdx() == 0 ? 0 : 1;
    int64_t whole = 1 - split;
    if (failed(addBlockedDim(result, split, shape[split],
                             parent.getSizePerWarp()[split], split,
                             parent.getWarpsPerCTA()[split], error)))
      return failure();
    result.sizePerWarp[whole] = shape[whole];
    result.blockStride[whole] = shape[whole];
    result.gridDim[whole] = -1;
    return success();
  }
  if (isa<FragmentLayoutAttr>(layout)) {
    // Below the warp level: the pieces of a split dot, already one warp's.
    error = "a fragment layout describes lanes within a warp's piece, not "
            "how warps share a tile";
    return failure();
  }
  auto slice = cast<SliceLayoutAttr>(layout);
  // The parent's distribution of the tile with the sliced dimension put
  // back (size 1, which any parent can hold), less that dimension.
  SmallVector<int64_t> parentShape(shape);
  parentShape.insert(parentShape.begin() + slice.getDim(), 1);
  WarpDistribution parent;
  if (failed(
          getWarpDistribution(slice.getParent(), parentShape, parent, error)))
    return failure();
  result.warpsPerCTA = parent.warpsPerCTA;
  result.order = parent.order;
  result.sizePerWarp = parent.sizePerWarp;
  result.blockStride = parent.blockStride;
  result.gridDim = parent.gridDim;
  result.sizePerWarp.erase(result.sizePerWarp.begin() + slice.getDim());
  result.blockStride.erase(result.blockStride.begin() + slice.getDim());
  result.gridDim.erase(result.gridDim.begin() + slice.getDim());
  return success();
}

int64_t tk::warp::getNumWarps(Attribute layout) {
  if (auto blocked = dyn_cast<BlockedLayoutAttr>(layout))
    return blocked.getNumWarps();
  if (auto operand = dyn_cast<DotOperandLayoutAttr>(layout))
    return operand.getParent().getNumWarps();
  if (auto slice = dyn_cast<SliceLayoutAttr>(layout))
    return getNumWarps(slice.getParent());
  if (auto linear = dyn_cast<LinearLayoutAttr>(layout))
    return linear.getNumWarps();
  return 1;
}

int64_t tk::warp::getLayoutRank(Attribute layout) {
  if (auto blocked = dyn_cast<BlockedLayoutAttr>(layout))
    return blocked.getRank();
  if (isa<DotOperandLayoutAttr, FragmentLayoutAttr>(layout))
    return 2;
  if (auto slice = dyn_cast<SliceLayoutAttr>(layout))
    return getLayoutRank(slice.getParent()) - 1;
  if (auto linear = dyn_cast<LinearLayoutAttr>(layout))
    return linear.getRank();
  return 0;
}

bool tk::warp::isLayout(Attribute attr) {
  return isa_and_present<BlockedLayoutAttr, DotOperandLayoutAttr,
                         SliceLayoutAttr, FragmentLayoutAttr, LinearLayoutAttr>(
      attr);
}

bool tk::warp::isThreadLayout(Attribute attr) {
  return isa_and_present<SharedLayoutAttr, RunsLayoutAttr,
                         AccumulatorLayoutAttr, RowsLayoutAttr,
                         OperandLayoutAttr>(attr);
}

bool tk::warp::isTileLike(Type type) {
  if (isa<RankedTensorType>(type))
    return true;
  auto ptr = dyn_cast<tk::PtrType>(type);
  return ptr && ptr.isBlockPointer();
}

ArrayRef<int64_t> tk::warp::getTileShape(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return tile.getShape();
  if (auto ptr = dyn_cast<tk::PtrType>(type))
    if (auto block = dyn_cast<RankedTensorType>(ptr.getPointeeType()))
      return block.getShape();
  return {};
}

std::pair<int32_t, tk::LinearLayout>
tk::warp::getMemoryRunOrder(const tk::LinearLayout &layout) {
  std::vector<std::string> names = layout.getOutDimNames();
  int32_t rank = names.size();
  std::pair<int32_t, tk::LinearLayout> best = {-1, layout};
  int32_t bestRun = 0;
  for (int32_t dim = rank - 1; dim >= 0; --dim) {
    std::vector<std::string> order = {names[dim]};
    for (int32_t other = rank - 1; other >= 0; --other)
      if (other != dim)
        order.push_back(names[other]);
    tk::LinearLayout memory = layout.transposeOuts(order);
    int32_t run = memory.getNumConsecutiveInOut();
    if (run > bestRun) {
      bestRun = run;
      best = {dim, std::move(memory)};
    }
  }
  return best;
}

Attribute tk::warp::getLayout(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return tile.getEncoding();
  if (auto ptr = dyn_cast<tk::PtrType>(type))
    if (auto block = dyn_cast<RankedTensorType>(ptr.getPointeeType()))
      return block.getEncoding();
  return {};
}

Type tk::warp::withLayout(Type type, Attribute layout) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return RankedTensorType::get(tile.getShape(), tile.getElementType(),
                                 layout);
  if (auto ptr = dyn_cast<tk::PtrType>(type))
    if (auto block = dyn_cast<RankedTensorType>(ptr.getPointeeType()))
      return tk::PtrType::get(type.getContext(), withLayout(block, layout));
  return type;
}

Type tk::warp::withTileShape(Type type, ArrayRef<int64_t> shape) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return RankedTensorType::get(shape, tile.getElementType(),
                                 tile.getEncoding());
  if (auto ptr = dyn_cast<tk::PtrType>(type))
    if (auto block = dyn_cast<RankedTensorType>(ptr.getPointeeType()))
      return tk::PtrType::get(type.getContext(), withTileShape(block, shape));
  return type;
}

bool tk::warp::isSameLayoutOp(Operation *op) {
  // Ops that change shape or layout have rules of their own, terminators
  // (scf.yield) tie values to their parent, not to each other.
  if (isa<tk::DotOp, tk::ReduceOp, tk::ExpandDimsOp, tk::BroadcastOp,
          tk::TransOp, tk::ReshapeOp, tk::CatOp, tk::JoinOp, tk::FuncOp>(op) ||
      isa_and_present<TkwDialect>(op->getDialect()) ||
      op->hasTrait<OpTrait::IsTerminator>())
    return false;
  if (op->getNumRegions() != 0 && !isa<ScanOp>(op))
    return false;
  std::optional<ArrayRef<int64_t>> shape;
  auto sameShape = [&](Value value) {
    if (!isTileLike(value.getType()))
      return true;
    ArrayRef<int64_t> own = getTileShape(value.getType());
    if (!shape)
      shape = own;
    return *shape == own;
  };
  return llvm::all_of(op->getOperands(), sameShape) &&
         llvm::all_of(op->getResults(), sameShape) && shape.has_value();
}

std::string tk::warp::getTargetSpec(tk::FuncOp func, StringRef option) {
  if (!option.empty())
    return option.str();
  if (auto recorded =
          func->getAttrOfType<StringAttr>(TkwDialect::kTargetAttrName))
    return recorded.getValue().str();
  return "";
}

void tk::warp::recordLayoutTarget(tk::FuncOp func, int64_t numWarps,
                                  int64_t threadsPerWarp, StringRef target) {
  Builder builder(func.getContext());
  func->setAttr(TkwDialect::kNumWarpsAttrName,
                builder.getI32IntegerAttr(numWarps));
  func->setAttr(TkwDialect::kThreadsPerWarpAttrName,
                builder.getI32IntegerAttr(threadsPerWarp));
  func->setAttr(TkwDialect::kTargetAttrName, builder.getStringAttr(target));
}
