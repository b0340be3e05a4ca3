//===- MaskBounds.h - whole-tile tests of bounds checks ---------*- C++ -*-===//
//
// A load's mask is usually bounds checks: offsets (a range plus a scalar)
// compared with a size, along each axis, and-ed. Whether the whole tile is
// in bounds is then one comparison per axis, of the largest offset, and
// whether it is wholly out one of the smallest: a thread can copy (or
// zero-fill) its runs without testing each one where either holds, and
// test them only on the tiles at a size's edge.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_ANALYSIS_MASKBOUNDS_H
#define TK_CORE_ANALYSIS_MASKBOUNDS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace tk {

/// A comparison read as `offsets < bound` (`inclusive`: <=), signed or
/// not, the operands swapped where the bound is on the left.
struct BoundCompare {
  mlir::Value offsets, bound;
  bool isSigned = true, inclusive = false;
};
/// `cmp` (an arith.cmpi) as a BoundCompare; nullopt for == and !=.
std::optional<BoundCompare> getBoundCompare(mlir::Operation *cmp);

/// Builds at `b` a scalar i1 that is true only where every element of
/// `mask` (a tile of i1) is, from the ops of the tile IR that compute it:
/// and-ed terms, each a splat i1 or a comparison `offsets < bound` (or
/// <=, either signedness, either side), where the offsets are a
/// tk.make_range plus an optional splat scalar and the bound a splat
/// scalar or constant, through tk.expand_dims and tk.broadcast. Null, and
/// nothing built, where the mask is computed otherwise. The scalars it
/// reads must dominate `b`'s insertion point; the ops are built there by a
/// builder of its own (not `b`'s listener).
mlir::Value buildWholeMaskTest(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value mask);

/// Builds at `b` a scalar i1 that is true only where no element of `mask`
/// is: of the same forms, a splat that is false, or a comparison whose
/// first offset is already out (and whose offsets do not wrap), or an and
/// with such a term. Null, and nothing built, where no term has that form.
mlir::Value buildWholeMaskOffTest(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Value mask);

} // namespace tk

#endif // TK_CORE_ANALYSIS_MASKBOUNDS_H
