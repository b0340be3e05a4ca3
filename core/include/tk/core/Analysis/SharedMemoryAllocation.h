//===- SharedMemoryAllocation.h - shared memory of a kernel -----*- C++ -*-===//
//
// Which ops of a kernel in #tkw.linear layouts need workgroup (shared)
// memory, how much, and where each buffer goes when the buffers are packed
// by liveness (DESIGN.md §3, pass 6): a kernel's shared bytes are known
// before code generation, so one that does not fit is refused with the
// number.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_ANALYSIS_SHAREDMEMORYALLOCATION_H
#define TK_CORE_ANALYSIS_SHAREDMEMORYALLOCATION_H

#include "tk/core/Layout/LinearLayout.h"
#include "tk/core/Layout/WarpShuffles.h"
#include "tk/core/TargetInfo.h"
#include "tk/core/WarpDialect.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace tk {

/// A buffer of shared memory: live from program point `start` to `end`
/// (inclusive, in the order of a pre-order walk), `bytes` long.
struct SharedBuffer {
  mlir::Operation *owner = nullptr;
  int64_t start = 0;
  int64_t end = 0;
  int64_t bytes = 0;
  /// Assigned by packSharedBuffers.
  int64_t offset = 0;
  /// At least packSharedBuffers' alignment (0: that).
  int64_t alignment = 0;
};

/// The workgroup memory a conversion to or from a #tkw.cooperative_matrix
/// tile of `elementBytes` elements moves through: one matrix for each warp
/// (the warp's matrices pass one after another).
inline int64_t
getCooperativeMatrixScratchBytes(warp::CooperativeMatrixAttr opaque,
                                 int64_t elementBytes) {
  return opaque.getPlacement().getNumWarps() * opaque.getRows() *
         opaque.getCols() * elementBytes;
}

/// Gives every buffer an offset, a multiple of `alignment` (a power of
/// two) or of its own, where larger, such that two buffers live at one point
/// never overlap; returns the bytes all of them need together. Buffers are
/// placed largest first, each at the lowest offset free over its whole life
/// (first fit): the total is the largest buffer when no two lives overlap;
/// otherwise first fit may leave gaps above the peak of live bytes.
int64_t packSharedBuffers(llvm::MutableArrayRef<SharedBuffer> buffers,
                          int64_t alignment);

/// A register bit that both sides of a conversion give the same tile
/// coordinate bit, `position` of the scratch's flat coordinate, which no
/// other basis of either layout sets.
struct RoundBit {
  int32_t fromBit = 0;
  int32_t toBit = 0;
  int32_t position = 0;
};

/// How a conversion moves a tile through shared memory.
struct ConversionPlan {
  /// Both layouts with their output dimensions in the scratch's order,
  /// fastest first: the dimension that lets the two sides move the most
  /// consecutive elements at once, then the others from the last to the
  /// first (row-major where that ties).
  LinearLayout from;
  LinearLayout to;
  /// One round per value of these bits. Within a round every thread writes
  /// and reads only its own registers with those bits, and the elements'
  /// flat coordinates without those positions are distinct, so the scratch
  /// holds the tile divided by 2 to their number. A position inside either
  /// side's vectors is never a round's, so rounds do not split vectors.
  llvm::SmallVector<RoundBit> rounds;
  /// Consecutive registers each thread writes, and reads, as one vector
  /// (a power of two, at most the target's workgroup vector bytes).
  int32_t writeWidth = 1;
  int32_t readWidth = 1;
};

/// The plan of a conversion from `from` to `to` of elements of
/// `elementBytes` on a target whose lanes move `vectorBytes` of workgroup
/// memory at once (TargetInfo::workgroupVectorBytes). The analysis sizes
/// the scratch by it and the lowering converts by it, so the two agree.
ConversionPlan getConversionPlan(const LinearLayout &from,
                                 const LinearLayout &to, int64_t elementBytes,
                                 int64_t vectorBytes);

/// Whether converting from `from` to `to` permutes the registers of each
/// thread: both give each lane and warp bit the same coordinates, and
/// every register of `to` finds its element in a register of `from`. The
/// register lowering converts those without memory; others go through
/// scratch (even where classifyConversion says Registers because the
/// register a thread reads depends on its lane, as from a broadcast).
bool isRegisterPermutation(const LinearLayout &from, const LinearLayout &to);

/// How a conversion of `element`s from `from` to `to` moves by shuffles
/// within warps (getWarpShufflePlan), where that takes no more
/// instructions than the round trip of getConversionPlan on a target that
/// moves `vectorBytes` of workgroup memory at once: its shuffles against
/// its writes, reads and two barriers a round. A lane that reads many
/// elements another lane holds too (a broadcast operand) reads them as
/// vectors from memory more cheaply than one shuffle each. nullopt where
/// the conversion takes shared memory, and for elements that are not
/// numbers.
std::optional<WarpShufflePlan> getShufflePlan(const LinearLayout &from,
                                              const LinearLayout &to,
                                              mlir::Type element,
                                              int64_t vectorBytes);
/// The same for `convert`, whose tiles have #tkw.linear layouts.
std::optional<WarpShufflePlan> getShufflePlan(warp::ConvertLayoutOp convert,
                                              int64_t vectorBytes);

/// The scratch memory `op` needs while it runs, in bytes, from the
/// #tkw.linear layouts of its tiles: a tkw.convert_layout that is neither a
/// register permutation nor a conversion within warps (getShufflePlan)
/// moves the tile through shared memory in the rounds of getConversionPlan
/// (the scratch holds one round); a tk.reduce or tk.scan whose axis is spread
/// over warps keeps one partial value per warp along the axis for
/// every line; an atomic whose old values threads other than an element's
/// updater read (a scalar's, or copies') passes them through one element
/// each. 0 for everything else. An error for a tile without a
/// #tkw.linear layout where the answer depends on it.
llvm::Expected<int64_t> getScratchBytes(mlir::Operation *op,
                                        const TargetInfo &target);

/// The alignment the workgroup memory of `op` (a scratch op or a
/// tkw.local_alloc) needs beyond 16 bytes: kDescriptorAlignment where a
/// warpgroup dot reads it through descriptors, else 16.
int64_t getSharedAlignment(mlir::Operation *op);

} // namespace tk

#endif // TK_CORE_ANALYSIS_SHAREDMEMORYALLOCATION_H
