//===- SharedMemoryAllocation.cpp - shared memory of a kernel -------------===//

#include "tk/core/Analysis/SharedMemoryAllocation.h"

#include "tk/core/DotOperands.h"
#include "tk/core/Layout.h"
#include "tk/core/Layout/LayoutPresets.h"
#include "tk/core/WarpDialect.h"

#include "llvm/ADT/DenseSet.h"
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

/// 2 to the number of register bits whose basis along `axis` is above
/// every warp bit's.
int64_t chunksAboveWarps(const LinearLayout &layout, int64_t axis) {
  std::string dim = standardOutDimName(axis);
  int32_t highestWarp = 0;
  for (int32_t bit = 0; bit < layout.getInDimSizeLog2(kWarpDim); ++bit)
    highestWarp = std::max(highestWarp, layout.getBasis(kWarpDim, bit, dim));
  int64_t chunks = 1;
  for (int32_t bit = 0; bit < layout.getInDimSizeLog2(kRegisterDim); ++bit)
    if (highestWarp != 0 &&
        layout.getBasis(kRegisterDim, bit, dim) > highestWarp)
      chunks *= 2;
  return chunks;
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

} // namespace

bool isRegisterPermutation(const LinearLayout &from, const LinearLayout &to) {
  for (StringRef dim : {kLaneDim, kWarpDim}) {
    int32_t bits = from.hasInDim(dim) ? from.getInDimSizeLog2(dim) : 0;
    if (bits != (to.hasInDim(dim) ? to.getInDimSizeLog2(dim) : 0))
      return false;
    for (int32_t bit = 0; bit < bits; ++bit)
      if (from.apply({{dim, 1 << bit}}) != to.apply({{dim, 1 << bit}}))
        return false;
  }
  llvm::DenseSet<uint64_t> held;
  for (int32_t reg = 0; reg < from.getInDimSize(kRegisterDim); ++reg)
    held.insert(from.applyFlat(reg));
  for (int32_t reg = 0; reg < to.getInDimSize(kRegisterDim); ++reg)
    if (!held.contains(to.applyFlat(reg)))
      return false;
  return true;
}

std::optional<WarpShufflePlan> getShufflePlan(const LinearLayout &from,
                                              const LinearLayout &to,
                                              Type element,
                                              int64_t vectorBytes) {
  if (!element.isIntOrFloat())
    return std::nullopt;
  std::optional<WarpShufflePlan> plan = getWarpShufflePlan(from, to);
  if (!plan)
    return std::nullopt;
  int64_t bytes = elementBytes(element);
  ConversionPlan trip = getConversionPlan(from, to, bytes, vectorBytes);
  int32_t copies = 0;
  for (auto &[dim, mask] : trip.from.getFreeVariableMasks())
    if (dim == kRegisterDim)
      copies = mask;
  int64_t written =
      trip.from.getInDimSize(kRegisterDim) >> llvm::popcount(uint32_t(copies));
  int64_t memory = written / trip.writeWidth +
                   trip.to.getInDimSize(kRegisterDim) / trip.readWidth +
                   2 * (int64_t(1) << trip.rounds.size());
  if (plan->countShuffles(element.getIntOrFloatBitWidth()) > memory)
    return std::nullopt;
  return plan;
}

std::optional<WarpShufflePlan> getShufflePlan(warp::ConvertLayoutOp convert,
                                              int64_t vectorBytes) {
  auto from = dyn_cast_or_null<warp::LinearLayoutAttr>(
      warp::getLayout(convert.getSrc().getType()));
  auto to = dyn_cast_or_null<warp::LinearLayoutAttr>(
      warp::getLayout(convert.getType()));
  if (!from || !to)
    return std::nullopt;
  return getShufflePlan(from.getLinearLayout(), to.getLinearLayout(),
                        convert.getType().getElementType(), vectorBytes);
}

namespace {

/// The first `bits` register bases of `layout` step the flat output by 1,
/// 2, 4, ...: the vector bits of getNumConsecutiveInOut, at most `maxBits`.
int32_t vectorBits(const LinearLayout &layout, int32_t maxBits) {
  return std::min<int32_t>(llvm::Log2_32(layout.getNumConsecutiveInOut()),
                           maxBits);
}

llvm::SmallVector<RoundBit> chooseRounds(const LinearLayout &from,
                                         const LinearLayout &to,
                                         int32_t lowestPosition) {
  // Register is a tile layout's first input dimension: its bit b is the
  // flat input 1 << b, and applyFlat gives the basis as one number.
  auto registerBases = [](const LinearLayout &layout) {
    llvm::SmallVector<uint64_t> bases;
    for (int32_t bit = 0; bit < layout.getInDimSizeLog2(kRegisterDim); ++bit)
      bases.push_back(layout.applyFlat(uint64_t(1) << bit));
    return bases;
  };
  // Every flat coordinate bit some basis of either layout sets, counted.
  auto touches = [](const LinearLayout &layout,
                    llvm::DenseMap<int, int> &count) {
    for (int32_t bit = 0; bit < layout.getTotalInDimSizeLog2(); ++bit) {
      uint64_t basis = layout.applyFlat(uint64_t(1) << bit);
      for (int position = 0; basis; ++position, basis >>= 1)
        if (basis & 1)
          ++count[position];
    }
  };
  llvm::DenseMap<int, int> fromCount, toCount;
  touches(from, fromCount);
  touches(to, toCount);
  llvm::SmallVector<uint64_t> fromBases = registerBases(from);
  llvm::SmallVector<uint64_t> toBases = registerBases(to);
  llvm::SmallVector<RoundBit> rounds;
  for (auto [fromBit, basis] : llvm::enumerate(fromBases)) {
    if (!llvm::isPowerOf2_64(basis))
      continue;
    int position = llvm::countr_zero(basis);
    // One basis of each layout sets this coordinate bit, and nothing else
    // does: within a round it is fixed, so dropping it keeps addresses
    // distinct.
    if (position < lowestPosition || fromCount[position] != 1 ||
        toCount[position] != 1)
      continue;
    auto toBit = llvm::find(toBases, basis);
    if (toBit == toBases.end())
      continue;
    rounds.push_back({static_cast<int32_t>(fromBit),
                      static_cast<int32_t>(toBit - toBases.begin()), position});
  }
  return rounds;
}

} // namespace

ConversionPlan getConversionPlan(const LinearLayout &from,
                                 const LinearLayout &to, int64_t elementBytes,
                                 int64_t vectorBytes) {
  int32_t maxBits =
      llvm::Log2_64(std::max<int64_t>(vectorBytes / elementBytes, 1));
  std::vector<std::string> dims = from.getOutDimNames();
  // Candidate orders: each dimension fastest, the others from the last to
  // the first. The last dimension first is tried first and kept on ties.
  ConversionPlan plan;
  int32_t best = -1;
  for (int32_t fastest = int32_t(dims.size()) - 1; fastest >= 0; --fastest) {
    std::vector<std::string> order{dims[fastest]};
    for (int32_t dim = int32_t(dims.size()) - 1; dim >= 0; --dim)
      if (dim != fastest)
        order.push_back(dims[dim]);
    LinearLayout orderedFrom = from.transposeOuts(order);
    LinearLayout orderedTo = to.transposeOuts(order);
    int32_t writeBits = vectorBits(orderedFrom, maxBits);
    int32_t readBits = vectorBits(orderedTo, maxBits);
    if (writeBits + readBits <= best)
      continue;
    best = writeBits + readBits;
    plan.rounds =
        chooseRounds(orderedFrom, orderedTo, std::max(writeBits, readBits));
    plan.from = std::move(orderedFrom);
    plan.to = std::move(orderedTo);
    plan.writeWidth = int32_t(1) << writeBits;
    plan.readWidth = int32_t(1) << readBits;
  }
  return plan;
}

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
    int64_t align = std::max(alignment, buffer->alignment);
    for (SharedBuffer *other : alive) {
      if (offset + buffer->bytes <= other->offset)
        break;
      offset = std::max<int64_t>(
          offset, llvm::alignTo(other->offset + other->bytes, align));
    }
    buffer->offset = offset;
    total = std::max(total, offset + buffer->bytes);
    placed.push_back(buffer);
  }
  return total;
}

/// The scratch of an atomic whose old values threads other than the one
/// that updates an element read: a scalar's, or a tile's whose lanes or
/// warps hold copies. The updater writes each old value, the rest read it.
llvm::Expected<int64_t> atomicExchangeBytes(Operation *op) {
  Value old = op->getResult(0);
  if (old.use_empty())
    return 0;
  auto tile = dyn_cast<RankedTensorType>(old.getType());
  if (!tile)
    return elementBytes(old.getType());
  llvm::Expected<const LinearLayout *> layout = linearLayoutOf(op, old);
  if (!layout)
    return layout.takeError();
  for (auto &[dim, mask] : (*layout)->getFreeVariableMasks())
    if ((dim == kLaneDim || dim == kWarpDim) && mask != 0)
      return tile.getNumElements() * elementBytes(tile);
  return 0;
}

llvm::Expected<int64_t> getScratchBytes(Operation *op,
                                        const TargetInfo &target) {
  if (auto convert = dyn_cast<warp::ConvertLayoutOp>(op)) {
    // A cooperative-matrix tile leaves (or enters) through its warp's
    // workgroup memory, one matrix a warp at a time.
    for (Value side : {convert.getSrc(), convert.getResult()})
      if (auto opaque = dyn_cast_or_null<warp::CooperativeMatrixAttr>(
              warp::getLayout(side.getType())))
        return getCooperativeMatrixScratchBytes(
            opaque, elementBytes(convert.getType()));
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
    if (*kind == ConversionKind::None || isRegisterPermutation(**from, **to) ||
        getShufflePlan(convert, target.workgroupVectorBytes))
      return 0;
    RankedTensorType type = convert.getType();
    int64_t bytes = elementBytes(type);
    return (type.getNumElements() * bytes) >>
           getConversionPlan(**from, **to, bytes, target.workgroupVectorBytes)
               .rounds.size();
  }
  // A vector broadcast into a cooperative-matrix tile passes through
  // workgroup memory once, whole.
  if (auto broadcast = dyn_cast<BroadcastOp>(op))
    if (isa_and_nonnull<warp::CooperativeMatrixAttr>(
            warp::getLayout(broadcast.getType())))
      return broadcast.getSrc().getType().getNumElements() *
             elementBytes(broadcast.getSrc().getType());
  // A dot writes the operands it reads one k step at a time.
  if (auto dot = dyn_cast<DotOp>(op)) {
    llvm::Expected<DotOperandPlan> plan = planDotOperands(dot, nullptr);
    if (!plan)
      return plan.takeError();
    return plan->sharedBytes;
  }
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    int64_t lines = 1;
    if (auto result =
            dyn_cast<RankedTensorType>(reduce->getResult(0).getType()))
      lines = result.getNumElements();
    return combineScratch(op, reduce.getSrcs(), reduce.getAxis(), lines);
  }
  if (isa<AtomicRMWOp, AtomicCASOp>(op))
    return atomicExchangeBytes(op);
  if (auto scan = dyn_cast<ScanOp>(op)) {
    auto type = cast<RankedTensorType>(scan.getSrcs()[0].getType());
    int64_t lines = type.getNumElements() / type.getDimSize(scan.getAxis());
    // A scan exchanges the warps' totals of each run of the axis a thread
    // holds in a register above the warps' positions (its chunks).
    llvm::Expected<const LinearLayout *> layout =
        linearLayoutOf(op, scan.getSrcs()[0]);
    if (!layout)
      return layout.takeError();
    return combineScratch(op, scan.getSrcs(), scan.getAxis(),
                          lines * chunksAboveWarps(**layout, scan.getAxis()));
  }
  return 0;
}

int64_t getSharedAlignment(Operation *op) {
  if (auto ring = dyn_cast<warp::LocalAllocOp>(op))
    return isa<warp::NvmmaSharedAttr>(ring.getType().getLayout())
               ? kDescriptorAlignment
               : 16;
  if (auto dot = dyn_cast<DotOp>(op)) {
    llvm::Expected<DotOperandPlan> plan = planDotOperands(dot, nullptr);
    if (!plan) {
      llvm::consumeError(plan.takeError());
      return 16;
    }
    if (plan->descriptors[0] || plan->descriptors[1])
      return kDescriptorAlignment;
  }
  return 16;
}

} // namespace tk
