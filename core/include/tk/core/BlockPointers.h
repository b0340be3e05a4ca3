//===- BlockPointers.h - a block pointer's elements as tiles ----*- C++ -*-===//
//
// A block pointer (tk.make_block_ptr) is a window of a strided tensor. Its
// loads and stores are gathers and scatters of the window's elements, its
// boundary checks their masks. tk-rewrite-block-pointers (the register
// pipeline) and the bounds-checked launch mode (BoundsChecks.h) both build
// them from the pointer's scalars with these functions.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_BLOCKPOINTERS_H
#define TK_CORE_BLOCKPOINTERS_H

#include "tk/ir/Dialect.h"

#include "mlir/IR/Builders.h"

#include <optional>

namespace tk {

/// The i64 tile of `shape` holding each element's position along dimension
/// `dim` in a window that starts at `offset` (i32) there: `offset` plus the
/// element's index, sign-extended. Built on a line of `shape[dim]` values,
/// then broadcast, so that a comparison can run before the broadcast.
mlir::Value buildBlockPositions(mlir::OpBuilder &b, mlir::Location loc,
                                llvm::ArrayRef<int64_t> shape, int64_t dim,
                                mlir::Value offset);

/// The i64 tile of each element's distance in elements from the tensor's
/// base: the sum over dimensions of position times stride (`offsets` i32,
/// `strides` i64, one per dimension of `shape`).
mlir::Value buildBlockElementOffsets(mlir::OpBuilder &b, mlir::Location loc,
                                     llvm::ArrayRef<int64_t> shape,
                                     mlir::ValueRange offsets,
                                     mlir::ValueRange strides);

/// The i1 tile of the elements whose position along each dimension in
/// `checked` lies in [0, `bounds[d]`) (i64); null when `checked` is empty.
mlir::Value buildBlockInBounds(mlir::OpBuilder &b, mlir::Location loc,
                               llvm::ArrayRef<int64_t> shape,
                               mlir::ValueRange offsets,
                               mlir::ValueRange bounds,
                               llvm::ArrayRef<int32_t> checked);

/// The tile a block load of `tile` yields outside its bounds: zeros, or
/// NaNs for floats under `padding = nan`; null without a padding (the
/// elements are then undefined).
mlir::Value buildBlockPadding(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::RankedTensorType tile,
                              std::optional<PaddingOption> padding);

} // namespace tk

#endif // TK_CORE_BLOCKPOINTERS_H
