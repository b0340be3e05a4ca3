//===- LayoutPresets.h - the linear layouts GPU code starts from -*- C++
//-*-===//
//
// The layouts tk's GPU lowering assigns, each as a tk::LinearLayout: blocked
// layouts for memory operations, slices and broadcasts for reductions, the
// matrix units' fragments, and swizzled shared memory. Tile layouts map
// register, lane and warp to the standard output dimensions dim0, dim1, ...
// (dim0 the row of a matrix, dim1 its column), listed in that order.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_LAYOUT_LAYOUTPRESETS_H_
#define TK_CORE_LAYOUT_LAYOUTPRESETS_H_

#include "tk/core/Layout/LinearLayout.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tk {

/// "dim<index>", and the names of a tile of `rank` dimensions.
std::string standardOutDimName(int32_t index);
std::vector<std::string> standardOutDimNames(int32_t rank);

//===----------------------------------------------------------------------===//
// Layouts of tiles in registers
//===----------------------------------------------------------------------===//

/// The layout of Triton's BlockedEncoding: each thread holds a block of
/// `sizePerThread` elements, the lanes of a warp form a `threadsPerWarp`
/// grid of blocks and the warps a `warpsPerCTA` grid of those; every grid is
/// walked with `order[0]` the fastest dimension. Where the CTA covers less
/// than `shape` along a dimension its tile repeats in further registers
/// (repeats of order[0] first, all above the block's registers); where it
/// covers more, coordinates wrap modulo `shape` and indices hold copies
/// (zero bases, registers included). In dimensions register, lane, warp
/// (each present, size 1 where unused); out dims dim0.. with `shape`.
///
/// Register r of lane l of warp w holds, along dimension d,
///   (rep[d] * cover[d] + warp[d] * spt[d] * tpw[d] + lane[d] * spt[d] +
///    elem[d]) mod shape[d],
/// cover = spt * tpw * wpc, where lane (warp) is l (w) in its grid, and r =
/// elem + prod(spt) * rep, each in its grid (spt, then the repeats
/// max(1, shape / cover)). An error unless every size is a power of two,
/// the ranks agree and `order` is a permutation.
llvm::Expected<LinearLayout> blockedLayout(
    llvm::ArrayRef<int32_t> shape, llvm::ArrayRef<int32_t> sizePerThread,
    llvm::ArrayRef<int32_t> threadsPerWarp, llvm::ArrayRef<int32_t> warpsPerCTA,
    llvm::ArrayRef<int32_t> order);

/// The layout of a reduction's result along `dim` of a tile in `parent`
/// (Triton's SliceEncoding): the parent with output dimension `dim` dropped
/// and the others renamed dim0, dim1, ... Each index keeps the elements it
/// held, less the reduced coordinate, so a broadcast back along `dim` moves
/// nothing: every thread holding (.., i, .., j, ..) in `parent` holds (..,
/// i, .., ..) here. Register bits whose basis is now zero are dropped (a
/// thread need not hold a value twice); lane and warp bits keep theirs
/// (those indices hold copies). `parent`'s outputs must be the standard
/// ones in order.
llvm::Expected<LinearLayout> sliceLayout(const LinearLayout &parent,
                                         int32_t dim);

/// `layout` with an output dimension of size 1 inserted at `dim` (0 to
/// rank) and the outputs renamed dim0, dim1, ...: the layout of
/// expand_dims. `layout`'s outputs must be the standard ones in order.
llvm::Expected<LinearLayout> expandDimsLayout(const LinearLayout &layout,
                                              int32_t dim);

/// `layout` with its outputs permuted as tk.trans permutes a tile's
/// dimensions: output i of the result is output `order[i]` of `layout`.
/// Every thread keeps its registers; nothing moves. `layout`'s outputs must
/// be the standard ones in order, `order` a permutation of them.
llvm::Expected<LinearLayout> transLayout(const LinearLayout &layout,
                                         llvm::ArrayRef<int32_t> order);

/// The layout of tk.join of two tiles in `source`: a new last output
/// dimension of size 2 spread by a new lowest register bit, so that every
/// thread holds both halves of each pair it held, side by side (a join
/// moves nothing). `source`'s outputs must be the standard ones in order.
llvm::Expected<LinearLayout> joinLayout(const LinearLayout &source);

/// The layout of the two halves of a join whose result is in `joined`:
/// `joined` less its last output dimension, which one register bit alone
/// must spread (as joinLayout's does); an error otherwise.
llvm::Expected<LinearLayout> joinSourceLayout(const LinearLayout &joined);

/// `layout` with its outputs taken as a tile of `shape` (row-major order,
/// as tk.reshape reads and writes a tile): each thread keeps its registers.
/// `layout`'s outputs must be the standard ones in order, the sizes
/// powers of two of the same product.
llvm::Expected<LinearLayout> reshapeLayout(const LinearLayout &layout,
                                           llvm::ArrayRef<int64_t> shape);

/// `layout`, whose output `dim` has size 1, broadcast to `size` along it by
/// registers: every thread repeats each value it holds `size` times, in
/// registers above its own, so the broadcast moves nothing between threads.
/// (A consumer that wants another layout converts from this one.)
llvm::Expected<LinearLayout> broadcastLayout(const LinearLayout &layout,
                                             int32_t dim, int32_t size);

//===----------------------------------------------------------------------===//
// Matrix units' fragments (one instruction, one warp or warpgroup)
//===----------------------------------------------------------------------===//
//
// Output dim0 is the row, dim1 the column of the operand as the instruction
// names it (a: m x k, b: k x n, accumulator: m x n); inputs register, lane,
// warp (of size 1 where one warp executes the instruction).

/// mma.sync's 16 x 8 accumulator (every m16n8 shape). PTX ISA, "Matrix
/// Fragments for mma.m16n8k16 with floating point type", C/D: c_i at row =
/// groupID + 8 * (i >= 2), col = 2 * threadID_in_group + (i & 1), with
/// groupID = lane / 4 and threadID_in_group = lane % 4.
LinearLayout mmaSyncM16N8AccumulatorLayout();

/// mma.sync m16n8k16's 16 x 16 f16/bf16 a. PTX ISA, ibid., A: a_i at row =
/// groupID + 8 * (i in {2, 3, 6, 7}), col = 2 * threadID_in_group + (i & 1)
/// + 8 * (i >= 4).
LinearLayout mmaSyncM16N8K16ALayout();

/// mma.sync m16n8k16's 16 x 8 f16/bf16 b. PTX ISA, ibid., B: b_i at row =
/// 2 * threadID_in_group + (i & 1) + 8 * (i >= 2), col = groupID.
LinearLayout mmaSyncM16N8K16BLayout();

/// wgmma.mma_async m64nNk16's 64 x `n` accumulator on a warpgroup of four
/// warps. PTX ISA, "Register Fragments and Shared Memory Matrix Layouts",
/// the accumulator D of .m64nNk16: d_i of lane l of warp w at row = 16 *
/// (w % 4) + groupID + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 *
/// threadID_in_group + (i & 1). `n` is a power of two from 8 to 256 (the
/// ISA allows any multiple of 8; others are not linear).
llvm::Expected<LinearLayout> wgmmaM64AccumulatorLayout(int32_t n);

/// CDNA's v_mfma_f32_32x32x8f16 accumulator (wave64). AMD Instinct MI300
/// ISA, "Matrix Arithmetic Instructions" (as AMD's matrix instruction
/// calculator prints it): register i of lane l at row = 8 * (i / 4) + 4 *
/// (l / 32) + i % 4, col = l % 32; 16 registers.
LinearLayout mfma32x32AccumulatorLayout();

/// CDNA's v_mfma_f32_16x16x16f16 accumulator (wave64). Ibid.: register i
/// of lane l at row = 4 * (l / 16) + i, col = l % 16; 4 registers.
LinearLayout mfma16x16AccumulatorLayout();

/// RDNA3's (gfx11) v_wmma_f32_16x16x16_f16 accumulator in wave32. RDNA3
/// ISA, "Wave Matrix Multiply Accumulate": VGPR i of lane l at row = 2 * i
/// + l / 16, col = l % 16; 8 registers.
LinearLayout wmma16x16AccumulatorLayout();

/// Intel Xe-HPC DPAS 8 x 16 accumulator on a subgroup of 16.
/// cl_intel_subgroup_matrix_multiply_accumulate: the accumulator's column
/// n is work-item n's, its 8 rows the components of the work-item's vector:
/// register i of lane l at row = i, col = l.
LinearLayout dpas8x16AccumulatorLayout();

/// Intel Xe-HPG DPAS 8 x 8 accumulator on a subgroup of 8. Ibid.: register
/// i of lane l at row = i, col = l.
LinearLayout dpas8x8AccumulatorLayout();

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

/// A tile of `shape` in shared memory with Triton's SwizzledShared XOR
/// swizzle: input `offset` (elements from the buffer's start) to the
/// standard outputs. `order` lists the dimensions fastest first; for the
/// two fastest, col = order[0] and row = order[1], the element at offset
/// row * cols + c is (row, c ^ s(row)) with
///   s(row) = (vec * ((row / perPhase) % maxPhase)) % cols:
/// rows in groups of `perPhase` share a phase, `maxPhase` phases, each
/// moving vectors of `vec` elements. Slower dimensions stack whole
/// matrices. vec = perPhase = maxPhase = 1 is no swizzle. An error unless
/// every size is a power of two (the swizzle is linear only then), the
/// rank is at least 2 and `order` a permutation.
llvm::Expected<LinearLayout>
swizzledSharedLayout(llvm::ArrayRef<int32_t> shape, int32_t vec,
                     int32_t perPhase, int32_t maxPhase,
                     llvm::ArrayRef<int32_t> order);

/// A two-dimensional [rows, cols] tile in shared memory cut into column
/// blocks of `blockCols`, each stored whole and row-major (row stride
/// `blockCols`), the blocks one after another: the element (r, c) is at
/// (c / blockCols) * rows * blockCols + r * blockCols + c % blockCols.
/// A reader that takes a matrix of `blockCols` columns at one row stride
/// (Vulkan's cooperative-matrix loads, which allow no swizzle) then finds
/// consecutive rows 2 * blockCols bytes apart instead of a whole tile row:
/// fewer rows of one access share a bank. Input `offset` (elements); an
/// error unless the sizes are powers of two and blockCols divides cols.
llvm::Expected<LinearLayout>
columnBlockedSharedLayout(llvm::ArrayRef<int32_t> shape, int32_t blockCols);

/// A two-dimensional tile in shared memory as NVIDIA's matrix descriptors
/// (wgmma, TMA) read it, Triton's NVMMAShared encoding: the contiguous
/// dimension (order[0]) is cut into atoms of `swizzleBytes` (32, 64 or
/// 128) bytes; each column of atoms is stored whole, row after row, the
/// columns one after another; within a column, the 16-byte vectors of row
/// r are XOR-swizzled by (r / perPhase) % maxPhase, perPhase = 128 /
/// swizzleBytes and maxPhase = swizzleBytes / 16 (the hardware's swizzle of
/// address bits 4.. by bits 7..). Input `offset` (elements); an error
/// unless the sizes are powers of two, the swizzle is one of the three and
/// an atom is no wider than the tile.
llvm::Expected<LinearLayout> nvmmaSharedLayout(llvm::ArrayRef<int32_t> shape,
                                               int32_t elementBytes,
                                               int32_t swizzleBytes,
                                               llvm::ArrayRef<int32_t> order);

} // namespace tk

#endif // TK_CORE_LAYOUT_LAYOUTPRESETS_H_
