//===- SharedMemoryAllocation.cpp - shared memory of a kernel -------------===//

#include "tk/core/Analysis/SharedMemoryAllocation.h"

#include "tk/core/Layout.h"
#include "tk/core/Layout/LayoutPresets.h"
#include "tk/core/WarpDialect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;

namespace tk {
namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The bytes of one element of `type` (a tile or scalar): pointers are 8.
int64_t elementBytes(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    type = tile.getElementType();
  if (type.isIntOrFloat())
    return std::max<int64_t>(llvm::divideCeil(type.getIntOrFloatBitWidth(), 8),
                             1);
  return 8;
}

llvm::Expected<const LinearLayout *> linearLayoutOf(Operation *op,
                                                    Value value) {
  auto layout = dyn_cast_or_null<warp::LinearLayoutAttr>(
      warp::getLayout(value.getType()));
  if (!layout)
    return makeError("'" + op->getName().getStringRef() +
                     "' has a tile without a #tkw.linear layout");
  return &layout.getLinearLayout();
}

/// How many warps hold different parts of the tile along `axis`: 2 to the
/// number of warp bits whose basis is not zero along it.
int64_t warpsAlongAxis(const LinearLayout &layout, int64_t axis) {
  std::string dim = standardOutDimName(axis);
  int64_t warps = 1;
  for (int32_t bit = 0; bit < layout.getInDimSizeLog2(kWarpDim); ++bit)
    if (layout.getBasis(kWarpDim, bit, dim) != 0)
      warps *= 2;
  return warps;
}

/// A reduction or scan along `axis` of `srcs`, into results of `lines`
/// values a source: one partial value per warp along the axis and line,
/// for every source, when the axis crosses warps.
llvm::Expected<int64_t> combineScratch(Operation *op, ValueRange srcs,
                                       int64_t axis, int64_t lines) {
  if (srcs.empty())
    return 0;
  llvm::Expected<const LinearLayout *> layout = linearLayoutOf(op, srcs[0]);
  if (!layout)
    return layout.takeError();
  int64_t warps = warpsAlongAxis(**layout, axis);
  if (warps == 1)
    return 0;
  int64_t bytes = 0;
  for (Value src : srcs)
    bytes += elementBytes(src.getType());
  return warps * lines * bytes;
}

/// How many register bits both layouts give the same tile coordinates:
/// independent bases that are register bases of `from` and of `to` alike.
/// A conversion moves in one round per value of those bits, each round the
/// elements whose coordinates have that value along them: every thread
/// then finds its part of the round in its own registers on both sides,
/// and the scratch holds one round. The smallest scratch the two layouts
/// allow; Triton rounds over the tile's repetitions only, and a lowering
/// may take larger rounds (fewer barriers) where the memory allows.
int32_t sharedRegisterBits(const LinearLayout &from, const LinearLayout &to) {
  // Register is a tile layout's first input dimension: its bit b is the
  // flat input 1 << b, and applyFlat gives the basis as one number.
  llvm::SmallVector<uint64_t> toBases;
  for (int32_t bit = 0; bit < to.getInDimSizeLog2(kRegisterDim); ++bit)
    toBases.push_back(to.applyFlat(uint64_t(1) << bit));
  // Gaussian elimination over GF(2): `pivots` spans the bases taken so far.
  llvm::SmallVector<uint64_t> pivots;
  int32_t count = 0;
  for (int32_t bit = 0; bit < from.getInDimSizeLog2(kRegisterDim); ++bit) {
    uint64_t basis = from.applyFlat(uint64_t(1) << bit);
    if (basis == 0 || !llvm::is_contained(toBases, basis))
      continue;
    uint64_t reduced = basis;
    for (uint64_t pivot : pivots)
      reduced = std::min(reduced, reduced ^ pivot);
    if (reduced == 0)
      continue;
    pivots.push_back(reduced);
    llvm::sort(pivots, std::greater<uint64_t>());
    ++count;
  }
  return count;
}

} // namespace

int64_t packSharedBuffers(llvm::MutableArrayRef<SharedBuffer> buffers,
                          int64_t alignment) {
  SmallVector<SharedBuffer *> order;
  for (SharedBuffer &buffer : buffers)
    order.push_back(&buffer);
  // Largest first, then earliest: the order does not depend on pointers.
  llvm::stable_sort(order, [](const SharedBuffer *a, const SharedBuffer *b) {
    if (a->bytes != b->bytes)
      return a->bytes > b->bytes;
    return a->start < b->start;
  });
  SmallVector<SharedBuffer *> placed;
  int64_t total = 0;
  for (SharedBuffer *buffer : order) {
    // The placed buffers alive with this one, by offset: the lowest gap
    // that fits it is its place.
    SmallVector<SharedBuffer *> alive;
    for (SharedBuffer *other : placed)
      if (other->start <= buffer->end && buffer->start <= other->end)
        alive.push_back(other);
    llvm::sort(alive, [](const SharedBuffer *a, const SharedBuffer *b) {
      return a->offset < b->offset;
    });
    int64_t offset = 0;
    for (SharedBuffer *other : alive) {
      if (offset + buffer->bytes <= other->offset)
        break;
      offset = std::max<int64_t>(
          offset, llvm::alignTo(other->offset + other->bytes, alignment));
    }
    buffer->offset = offset;
    total = std::max(total, offset + buffer->bytes);
    placed.push_back(buffer);
  }
  return total;
}

llvm::Expected<int64_t> getScratchBytes(Operation *op) {
  if (auto convert = dyn_cast<warp::ConvertLayoutOp>(op)) {
    llvm::Expected<const LinearLayout *> from =
        linearLayoutOf(op, convert.getSrc());
    if (!from)
      return from.takeError();
    llvm::Expected<const LinearLayout *> to =
        linearLayoutOf(op, convert.getResult());
    if (!to)
      return to.takeError();
    llvm::Expected<ConversionKind> kind = classifyConversion(**from, **to);
    if (!kind)
      return kind.takeError();
    if (*kind != ConversionKind::SharedMemory)
      return 0;
    RankedTensorType type = convert.getType();
    return (type.getNumElements() * elementBytes(type)) >>
           sharedRegisterBits(**from, **to);
  }
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    int64_t lines = 1;
    if (auto result =
            dyn_cast<RankedTensorType>(reduce->getResult(0).getType()))
      lines = result.getNumElements();
    return combineScratch(op, reduce.getSrcs(), reduce.getAxis(), lines);
  }
  if (auto scan = dyn_cast<ScanOp>(op)) {
    auto type = cast<RankedTensorType>(scan.getSrcs()[0].getType());
    int64_t lines = type.getNumElements() / type.getDimSize(scan.getAxis());
    return combineScratch(op, scan.getSrcs(), scan.getAxis(), lines);
  }
  return 0;
}

} // namespace tk
