//===- Layout.h - what a layout gives each warp -----------------*- C++ -*-===//
//
// The one place that interprets layout attributes: which block of a tile a
// warp holds, and helpers to read and set the layout of tiles and block
// pointers. Every pass and backend asks here rather than decoding the
// attributes itself.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_LAYOUT_H_
#define TK_CORE_LAYOUT_H_

#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace tk::warp {

/// How the warps of a workgroup share a tile of one shape. The warps form a
/// grid (`warpsPerCTA`, dimensions listed fastest first in `order`); along
/// tile dimension `d` the warp at grid coordinate `c` holds `sizePerWarp[d]`
/// elements starting at `(c[gridDim[d]] * blockStride[d]) mod shape[d]`, or
/// the whole dimension from 0 where `gridDim[d]` is -1.
struct WarpDistribution {
  llvm::SmallVector<int64_t> warpsPerCTA;
  llvm::SmallVector<int64_t> order;
  llvm::SmallVector<int64_t> sizePerWarp;
  llvm::SmallVector<int64_t> blockStride;
  llvm::SmallVector<int64_t> gridDim;

  int64_t getNumWarps() const;
  /// The grid coordinates of warp `warpId`.
  llvm::SmallVector<int64_t> getWarpCoords(int64_t warpId) const;
  /// The offset of warp `warpId`'s block along tile dimension `dim` of a
  /// tile of `shape`.
  int64_t getWarpOffset(int64_t warpId, int64_t dim,
                        llvm::ArrayRef<int64_t> shape) const;
  /// True when every warp holds the same elements under both.
  bool sameElementsPerWarp(const WarpDistribution &other,
                           llvm::ArrayRef<int64_t> shape) const;
};

/// The distribution `layout` gives a tile of `shape`. Fails, saying why in
/// `error`, where the layout does not describe the shape (rank, a warp that
/// would hold several blocks, a block that does not divide the dimension).
mlir::LogicalResult getWarpDistribution(mlir::Attribute layout,
                                        llvm::ArrayRef<int64_t> shape,
                                        WarpDistribution &result,
                                        std::string &error);

/// The number of warps a layout spreads a tile over.
int64_t getNumWarps(mlir::Attribute layout);

/// The rank of the tiles a layout describes.
int64_t getLayoutRank(mlir::Attribute layout);

/// True for a layout attribute of tkw.
bool isLayout(mlir::Attribute attr);

/// True for a thread layout (#tkw.shared, #tkw.runs, #tkw.accumulator,
/// #tkw.rows): where a tile lives in the code of one GPU thread.
bool isThreadLayout(mlir::Attribute attr);

/// True for a type a layout can apply to: a tile or a block pointer.
bool isTileLike(mlir::Type type);

/// The shape of a tile or of the block of a block pointer.
llvm::ArrayRef<int64_t> getTileShape(mlir::Type type);

/// The layout of a tile or of the block of a block pointer (null if none).
mlir::Attribute getLayout(mlir::Type type);

/// `type` (a tile or block pointer) with layout `layout`.
mlir::Type withLayout(mlir::Type type, mlir::Attribute layout);

/// `type` (a tile or block pointer) with shape `shape`, same layout.
mlir::Type withTileShape(mlir::Type type, llvm::ArrayRef<int64_t> shape);

/// The output dimension along which consecutive registers of `layout` (a
/// #tkw.linear map) hold the longest run of consecutive elements, the last
/// on a tie (row-major memory), and `layout` with its outputs in memory
/// order for runs along it: that dimension first, then the others from the
/// last, so that getNumConsecutiveInOut counts the run.
std::pair<int32_t, tk::LinearLayout>
getMemoryRunOrder(const tk::LinearLayout &layout);

/// True for the ops whose tile operands and results all have one layout:
/// element-wise arithmetic, pointer arithmetic, loads, stores, block
/// pointers, scans, atomics, and the sources of tiles (splat, make_range,
/// constants). Dot, reduce, expand_dims, broadcast and scf have rules of
/// their own.
bool isSameLayoutOp(mlir::Operation *op);

/// The TargetInfo spec a pass works for: its `target=` option when given,
/// else the `tkw.target` a layout pass recorded on `func`; empty for none.
std::string getTargetSpec(tk::FuncOp func, llvm::StringRef option);

/// Records on `func` the workgroup its layouts were chosen for:
/// `tkw.num_warps`, `tkw.threads_per_warp` (the target's warp size) and
/// `tkw.target` (its spec), which the dialect then checks every layout in
/// `func` against.
void recordLayoutTarget(tk::FuncOp func, int64_t numWarps,
                        int64_t threadsPerWarp, llvm::StringRef target);

/// How the warps of a program share `dot`: its `tiling` hint when it has
/// one; otherwise rows across warps (`horizontal`) when its result flows
/// into a reduction or another dot's operand, or its `a` is computed from
/// another dot (attention: each warp keeps whole rows, so the softmax stays
/// in the warp), and a square partition of the warps over the result
/// otherwise. tk-assign-layouts lays the result out so, and the GPU lowering
/// tells a matrix unit (tk::MatrixUnit::HeldProduct::rowsAcrossWarps).
::tk::DotTiling chooseDotTiling(::tk::DotOp dot);

} // namespace tk::warp

#endif // TK_CORE_LAYOUT_H_
