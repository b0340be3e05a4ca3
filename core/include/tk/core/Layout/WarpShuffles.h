//===- WarpShuffles.h - layout conversions within a warp --------*- C++ -*-===//
//
// A conversion whose every element stays in its warp moves by shuffles, one
// per register of the result, with no workgroup memory and no barrier
// (DESIGN.md §3: convert_layout is a register permutation, shuffles, or a
// shared-memory round trip). Each lane reads register r of the result from
// a source lane that depends linearly on its own lane and on r; the source
// lane offers a register that depends linearly on the source lane's own
// index and on r. getWarpShufflePlan derives both maps from the two layouts,
// or says the conversion needs more than that.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_LAYOUT_WARPSHUFFLES_H_
#define TK_CORE_LAYOUT_WARPSHUFFLES_H_

#include "tk/core/Layout/LinearLayout.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace tk {

/// How each register of the result of a conversion within warps is read.
/// For register r of the result, a thread at lane L reads from lane
///   source(L, r) = XOR of readLanes[i] over the set bits i of L, XOR
///   laneOffsets[r],
/// the value that lane offers; a lane S offers, for register r,
///   its register offered(S, r) = offeredRegisters[r] XOR the
///   registerFlips[j] of the set bits j of S.
/// Both are linear in the lane bits, so the lowering computes the source
/// lane once and selects the offered register with one select per lane bit
/// whose flip is not 0.
struct WarpShufflePlan {
  llvm::SmallVector<int32_t> readLanes;
  llvm::SmallVector<int32_t> laneOffsets;
  llvm::SmallVector<int32_t> offeredRegisters;
  llvm::SmallVector<int32_t> registerFlips;

  /// Every lane reads from itself: the conversion only selects among a
  /// thread's own registers by its lane (as from a broadcast), no shuffle.
  bool readsOwnLane() const;
  /// The lane bits whose flips are not 0, as a mask.
  int32_t selectingLaneBits() const;
  /// The lowest register bit of the result whose registers read the lane
  /// their partner reads (r and r ^ bit, the bit's lane offset 0), which
  /// can cross as one word; 0 where there is none or no lane is read.
  int32_t pairedRegisters() const;
  /// The shuffles the plan takes for elements of `bits` bits: one a
  /// register of the result, one a pair of them for 16 bits or less.
  int64_t countShuffles(unsigned bits) const;
};

/// The plan of a conversion of a tile from `from` to `to` by shuffles within
/// each warp, or nullopt where it takes more: an element in another warp, a
/// source lane or register that depends on the warp, or readers that read
/// one lane for one register of the result but need different registers of
/// it (then the lane would have to offer two). Both layouts have register,
/// lane and warp input dimensions (and block, which must match) over the
/// same tile.
std::optional<WarpShufflePlan> getWarpShufflePlan(const LinearLayout &from,
                                                  const LinearLayout &to);

} // namespace tk

#endif // TK_CORE_LAYOUT_WARPSHUFFLES_H_
