//===- WarpShuffles.cpp - layout conversions within a warp ----------------===//
//
// With C = from.invertAndCompose(to), the index of `from` that holds what
// `to` places at (register r, lane L, warp W) is C(r, L, W); C is linear,
// so its lane and register parts split into
//   source lane     = Clr(r) ^ Cll(L),
//   source register = Crr(r) ^ Crl(L).
// One shuffle per register r works when readers that read one lane for r
// need one register of it: Crl vanishes on the kernel of Cll. Then a map g
// with g(Cll(L)) = Crl(L) exists (defined on Cll's image, extended by 0),
// and the source lane S offers Crr(r) ^ g(Clr(r)) ^ g(S).
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout/WarpShuffles.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace tk;

namespace {

/// The most registers a lane selects among for one shuffle: beyond it, the
/// selects cost more than a trip through shared memory.
constexpr int32_t kMaxSelectingLaneBits = 3;

/// The parts of C's image of one input bit.
struct Source {
  int32_t reg = 0, lane = 0, warp = 0, block = 0;
};

Source sourceOf(const LinearLayout &c, llvm::StringRef dim, int32_t bit) {
  Source source;
  for (auto &[name, value] : c.apply({{dim, int32_t(1) << bit}})) {
    if (name == kRegisterDim)
      source.reg = value;
    else if (name == kLaneDim)
      source.lane = value;
    else if (name == kWarpDim)
      source.warp = value;
    else if (name == kBlockDim)
      source.block = value;
  }
  return source;
}

int32_t sizeLog2(const LinearLayout &layout, llvm::StringRef dim) {
  return layout.hasInDim(dim) ? layout.getInDimSizeLog2(dim) : 0;
}

/// The bits of `dim` whose bases are 0 (copies of the same elements), as a
/// mask.
int32_t zeroBases(const LinearLayout &layout, llvm::StringRef dim) {
  int32_t mask = 0;
  for (int32_t bit = 0; bit < sizeLog2(layout, dim); ++bit)
    if (llvm::all_of(layout.getBasis(dim, bit),
                     [](int32_t value) { return value == 0; }))
      mask |= int32_t(1) << bit;
  return mask;
}

/// Pairs (lane, register) in echelon form over the lane part: each row has a
/// distinct highest lane bit, rows kept from the highest down, so reducing a
/// lane in their span clears it and XORs the registers of the rows used.
class LaneToRegister {
public:
  /// Adds Cll(e) = lane with Crl(e) = reg; false where lane is already
  /// spanned but maps to another register (the kernel condition fails).
  bool insert(int32_t lane, int32_t reg) {
    auto [rest, registers] = reduce(lane);
    reg ^= registers;
    if (rest == 0)
      return reg == 0;
    auto at = llvm::find_if(rows, [&](const Row &row) {
      return row.lane < rest; // The highest bit decides: rest's is unused.
    });
    rows.insert(at, Row{rest, reg});
    return true;
  }

  /// g(lane): the registers of the rows that reduce `lane`, and what is left
  /// of it (outside the span, where g is 0).
  std::pair<int32_t, int32_t> reduce(int32_t lane) const {
    int32_t registers = 0;
    for (const Row &row : rows)
      if (lane & highestBit(row.lane)) {
        lane ^= row.lane;
        registers ^= row.reg;
      }
    return {lane, registers};
  }

  int32_t apply(int32_t lane) const { return reduce(lane).second; }

private:
  static int32_t highestBit(int32_t value) {
    return int32_t(1) << llvm::Log2_32(uint32_t(value));
  }
  struct Row {
    int32_t lane, reg;
  };
  llvm::SmallVector<Row> rows;
};

} // namespace

bool WarpShufflePlan::readsOwnLane() const {
  for (auto [bit, lane] : llvm::enumerate(readLanes))
    if (lane != int32_t(1) << bit)
      return false;
  return llvm::all_of(laneOffsets, [](int32_t offset) { return offset == 0; });
}

int32_t WarpShufflePlan::selectingLaneBits() const {
  int32_t mask = 0;
  for (auto [bit, flip] : llvm::enumerate(registerFlips))
    if (flip != 0)
      mask |= int32_t(1) << bit;
  return mask;
}

int32_t WarpShufflePlan::pairedRegisters() const {
  if (readsOwnLane())
    return 0;
  for (size_t bit = 1; bit < laneOffsets.size(); bit <<= 1)
    if (laneOffsets[bit] == 0)
      return int32_t(bit);
  return 0;
}

int64_t WarpShufflePlan::countShuffles(unsigned bits) const {
  if (readsOwnLane())
    return 0;
  int64_t registers = int64_t(laneOffsets.size());
  return bits > 1 && bits <= 16 && pairedRegisters() ? registers / 2
                                                     : registers;
}

std::optional<WarpShufflePlan> tk::getWarpShufflePlan(const LinearLayout &from,
                                                      const LinearLayout &to) {
  for (llvm::StringRef dim : {kRegisterDim, kLaneDim, kWarpDim})
    if (!from.hasInDim(dim) || !to.hasInDim(dim))
      return std::nullopt;
  if (sizeLog2(from, kLaneDim) != sizeLog2(to, kLaneDim) ||
      sizeLog2(from, kWarpDim) != sizeLog2(to, kWarpDim) ||
      sizeLog2(from, kBlockDim) != sizeLog2(to, kBlockDim))
    return std::nullopt;
  llvm::Expected<LinearLayout> c = from.invertAndCompose(to);
  if (!c) {
    llvm::consumeError(c.takeError());
    return std::nullopt;
  }
  // Warps of `from` that hold the same elements: a source in another of
  // them is also in the reader's own warp.
  int32_t copiedWarps = zeroBases(from, kWarpDim);
  // Every element in the reader's warp and block; lane and register
  // independent of them.
  for (llvm::StringRef dim : {kRegisterDim, kLaneDim, kWarpDim, kBlockDim})
    for (int32_t bit = 0; bit < sizeLog2(to, dim); ++bit) {
      Source source = sourceOf(*c, dim, bit);
      int32_t ownWarp = dim == kWarpDim ? int32_t(1) << bit : 0;
      int32_t ownBlock = dim == kBlockDim ? int32_t(1) << bit : 0;
      if (((source.warp ^ ownWarp) & ~copiedWarps) != 0 ||
          source.block != ownBlock)
        return std::nullopt;
      if ((ownWarp || ownBlock) && (source.reg != 0 || source.lane != 0))
        return std::nullopt;
    }
  // Lanes of `from` that hold the same elements: C reads the lowest of
  // them; a reader reads its own instead, which keeps copies from needing a
  // shuffle or a lane-dependent register.
  int32_t copiedLanes = zeroBases(from, kLaneDim);
  WarpShufflePlan plan;
  LaneToRegister g;
  for (int32_t bit = 0; bit < sizeLog2(to, kLaneDim); ++bit) {
    Source source = sourceOf(*c, kLaneDim, bit);
    source.lane |= (int32_t(1) << bit) & copiedLanes;
    if (!g.insert(source.lane, source.reg))
      return std::nullopt;
    plan.readLanes.push_back(source.lane);
  }
  for (int32_t bit = 0; bit < sizeLog2(to, kLaneDim); ++bit)
    plan.registerFlips.push_back(g.apply(int32_t(1) << bit));
  if (llvm::popcount(uint32_t(plan.selectingLaneBits())) >
      kMaxSelectingLaneBits)
    return std::nullopt;
  llvm::SmallVector<Source> registerSources;
  for (int32_t bit = 0; bit < sizeLog2(to, kRegisterDim); ++bit)
    registerSources.push_back(sourceOf(*c, kRegisterDim, bit));
  for (int32_t reg = 0; reg < to.getInDimSize(kRegisterDim); ++reg) {
    int32_t lane = 0, sourceRegister = 0;
    for (auto [bit, source] : llvm::enumerate(registerSources))
      if (reg & (int32_t(1) << bit)) {
        lane ^= source.lane;
        sourceRegister ^= source.reg;
      }
    plan.laneOffsets.push_back(lane);
    plan.offeredRegisters.push_back(sourceRegister ^ g.apply(lane));
  }
  return plan;
}
