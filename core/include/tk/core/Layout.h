//===- Layout.h - reading and setting the layouts of tiles ------*- C++ -*-===//
//
// Helpers to read and set the layout of tiles and block pointers, and what
// the layout passes share about them. Every pass and backend asks here
// rather than decoding the attributes itself.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_LAYOUT_H_
#define TK_CORE_LAYOUT_H_

#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace tk::warp {

/// True for a type a layout can apply to: a tile or a block pointer.
bool isTileLike(mlir::Type type);

/// The shape of a tile or of the block of a block pointer.
llvm::ArrayRef<int64_t> getTileShape(mlir::Type type);

/// The layout of a tile or of the block of a block pointer (null if none).
mlir::Attribute getLayout(mlir::Type type);

/// `type` (a tile or block pointer) with layout `layout`.
mlir::Type withLayout(mlir::Type type, mlir::Attribute layout);

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
/// otherwise. tk-assign-linear-layouts lays the result out so.
::tk::DotTiling chooseDotTiling(::tk::DotOp dot);

} // namespace tk::warp

#endif // TK_CORE_LAYOUT_H_
