//===- AxisFacts.h - contiguity and divisibility along a tile's last axis -===//
//
// What the lowering can prove of an integer or pointer tile along its last
// dimension, from the ops that computed it (Triton's AxisInfo, reduced to
// what a copy of 16-byte runs needs): runs of consecutive values, runs of
// equal values, and a power of two dividing the first value of every run.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_ANALYSIS_AXISFACTS_H
#define TK_CORE_ANALYSIS_AXISFACTS_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <optional>

namespace tk {

struct AxisFacts {
  /// Values come in runs of this many consecutive values along the last
  /// axis (consecutive elements, for pointers), starting at multiples of it.
  int64_t contiguity = 1;
  /// Values come in runs of this many equal values along the last axis.
  int64_t constancy = 1;
  /// A power of two dividing the first value of every run (for pointers,
  /// its byte address); with contiguity 1, every value.
  int64_t divisibility = 1;
};

/// The facts of `value` (a tile or scalar of integers or pointers).
/// `blockArgument` supplies those of block arguments it knows (a loop's
/// pointer walks, say); others, and ops the analysis does not know, give
/// the facts of nothing known.
AxisFacts
getAxisFacts(mlir::Value value,
             llvm::function_ref<std::optional<AxisFacts>(mlir::BlockArgument)>
                 blockArgument);

/// The facts of a pointer walk: `start` advanced by any number of steps of
/// `step` elements of `pointerType`'s pointee.
AxisFacts getWalkFacts(const AxisFacts &start, const AxisFacts &step,
                       mlir::Type pointerType);

/// The facts of an scf.for iteration argument that walks a pointer tile: it
/// starts at the loop's init value and each trip yields `tk.addptr(arg,
/// step)` with `step` defined outside the loop. Nothing for other block
/// arguments. Suits getAxisFacts' `blockArgument` (nested walks included).
std::optional<AxisFacts> getLoopWalkFacts(mlir::BlockArgument arg);

/// The facts of `value` along its dimension `dim` instead of its last (a
/// tile whose rows run down its columns, say), with loops' pointer walks
/// known as getLoopWalkFacts knows them; nothing known for a dimension the
/// value does not have.
AxisFacts getAxisFactsAlong(mlir::Value value, int64_t dim);

/// Whether every aligned run of `width` elements of pointer tile `facts`
/// (elements of `elementBytes`) is contiguous and starts `runBytes`-aligned.
bool runsAreContiguousAndAligned(const AxisFacts &facts, int64_t width,
                                 int64_t elementBytes, int64_t runBytes);

} // namespace tk

#endif // TK_CORE_ANALYSIS_AXISFACTS_H
