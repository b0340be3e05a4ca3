//===- SeedKernels.h - the seed kernels, written with the builder -*- C++
//-*-===//
//
// The Triton kernels of the seed documents (vector add, matrix copy and
// transpose, fused and persistent softmax, grouped matmul, layer norm) as
// tk::KernelBuilder code. Each has a `.tk` twin in this folder holding the
// same module for the default parameters; tests/unit/BuilderTest.cpp checks
// that the two agree.
//
//===----------------------------------------------------------------------===//

#ifndef TK_EXAMPLES_KERNELS_SEEDKERNELS_H_
#define TK_EXAMPLES_KERNELS_SEEDKERNELS_H_

#include "tk/ir/Dialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MathExtras.h"

#include <cstdint>
#include <string>

/// A kernel's builder (or TTIR) at the place a case or a benchmark figure
/// names it. Built only where the compiler is: tk-conformance-run
/// (TK_CONFORMANCE_RUN_ONLY) takes every kernel from a package and makes
/// none, so that nothing of it links the compiler. Helpers only builders
/// use sit in `#ifndef TK_CONFORMANCE_RUN_ONLY`.
#ifdef TK_CONFORMANCE_RUN_ONLY
#define TK_KERNEL_BUILDER(...) nullptr
#else
#define TK_KERNEL_BUILDER(...) __VA_ARGS__
#endif

namespace tk {
namespace seeds {

/// A built kernel module, or failure with the reason in the `error` argument
/// of the builder function.
using KernelModule = mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>;

/// The smallest power of two >= n (Triton's `next_power_of_2`), for BLOCK
/// sizes that cover a whole row.
inline int64_t nextPowerOf2(int64_t n) {
  return n <= 1 ? 1 : static_cast<int64_t>(llvm::PowerOf2Ceil(n));
}

/// `out[i] = x[i] + y[i]` for `i < n`, `block` elements per program
/// (seed 002). Grid: `cdiv(n, block)`.
KernelModule buildVectorAdd(mlir::MLIRContext *ctx, mlir::Type dtype,
                            int64_t block = 1024, std::string *error = nullptr);

/// Copies a `rows x cols` strided matrix `src` into `dst` (same strides) in
/// `block x block` tiles (seed 003). Grid: `(cdiv(rows, block),
/// cdiv(cols, block))`.
KernelModule buildMatrixCopy(mlir::MLIRContext *ctx, mlir::Type dtype,
                             int64_t block = 64, std::string *error = nullptr);

/// `output = input^T` for a `rows x cols` input, tile by tile (seed 003).
/// Grid: `(cdiv(rows, block), cdiv(cols, block))`.
KernelModule buildMatrixTranspose(mlir::MLIRContext *ctx, mlir::Type dtype,
                                  int64_t block = 32,
                                  std::string *error = nullptr);

/// Fused row softmax, one row per program (seeds 002 and 004); `block` is
/// `nextPowerOf2(n_cols)`. Computes in f32 whatever the dtype. Grid:
/// `n_rows`. `rowStrideDivisibility` (0: none) is the `tk.divisibility` of
/// both row strides: with 16 (what Triton's launcher specialises by itself
/// for strides divisible by 16), rows start 16-byte aligned and load as
/// 128-bit vectors; the runtime rejects a launch whose strides are not.
KernelModule buildSoftmax(mlir::MLIRContext *ctx, mlir::Type dtype,
                          int64_t block = 1024, std::string *error = nullptr,
                          unsigned rowStrideDivisibility = 0);

/// The persistent softmax of seed 002: each program loops over rows
/// `program_id, program_id + num_programs, ...`. Grid: occupancy x SMs.
KernelModule buildPersistentSoftmax(mlir::MLIRContext *ctx, mlir::Type dtype,
                                    int64_t block = 1024,
                                    std::string *error = nullptr);

/// Tile sizes and options of the matmul kernel.
enum class MatmulScales { None, PerTensor, PerRow };

struct MatmulConfig {
  int64_t blockM = 64;
  int64_t blockN = 64;
  int64_t blockK = 32;
  /// Rows of program tiles walked together for L2 reuse (seed 004, §5.3).
  int64_t groupSizeM = 8;
  InputPrecision inputPrecision = InputPrecision::IEEE;
  /// Split-K (decode shapes, where M x N tiles are too few to fill the
  /// GPU): program (tile, s) of a `cdiv(M, blockM) * cdiv(N, blockN) x S`
  /// grid sums K rows [s * k_per_split, (s + 1) * k_per_split) into plane
  /// s of an f32 output (c + s * stride_cs); buildSplitKSum adds the planes.
  /// Two more arguments: k_per_split (a multiple of blockK and of 16) and
  /// stride_cs.
  bool splitK = false;
  /// tk.divisibility of stride_am, stride_bk and stride_cm (0: none). With
  /// 16 and unit inner strides (constexprs stride_ak = stride_bn =
  /// stride_cn = 1, what Triton specialises by itself), rows of every tile
  /// start 16-byte aligned and load as 128-bit vectors.
  unsigned rowStrideDivisibility = 0;
  /// tk.divisibility of M, N and K (0: none), as Triton's launcher declares
  /// sizes that are multiples of 16: each row's (column's) mask is then
  /// one test for a whole 16-byte run, not one an element.
  unsigned sizeDivisibility = 0;
  /// b stored transposed, N rows of K (cuBLASLt's "TN", the form fp8
  /// matmuls take b in): rowStrideDivisibility applies to stride_bn, and
  /// the unit inner stride is stride_bk.
  bool kMajorB = false;
  /// Scales of an fp8 matmul, as torch._scaled_mm takes them, in two more
  /// arguments after the others, scale_a and scale_b; the product is
  /// scaled in f32 and rounded once to the output type:
  ///   PerTensor: f32 scalars, c = (a @ b) * scale_a * scale_b;
  ///   PerRow: f32 pointers to M and N scales (a's rows, b's columns),
  ///   c[m, n] = (a @ b)[m, n] * scale_a[m] * scale_b[n].
  MatmulScales scales = MatmulScales::None;
  /// The K loop in two (CUTLASS's residue): the whole BLOCK_K slices
  /// without K masks, then the slice K cuts, masked.
  bool peelK = false;
};

/// `c = a @ b` (`a` MxK, `b` KxN, strided), tiled with a K loop, an f32
/// accumulator (i32 for i8 inputs) and GROUP_SIZE_M program ordering
/// (seeds 003 and 004). The result is cast to `outputType`. Grid:
/// `cdiv(M, blockM) * cdiv(N, blockN)`.
KernelModule buildMatmul(mlir::MLIRContext *ctx, mlir::Type inputType,
                         mlir::Type outputType,
                         const MatmulConfig &config = MatmulConfig(),
                         std::string *error = nullptr);

/// The second kernel of a split-K matmul: `out[i] = sum over s < splits of
/// partial[s * stride_s + i]` for i < n, f32 planes summed in order and
/// rounded once to `outputType`; `block` elements a program. Arguments:
/// partial, out, n, stride_s. Grid: `cdiv(n, block)`.
KernelModule buildSplitKSum(mlir::MLIRContext *ctx, mlir::Type outputType,
                            int64_t splits, int64_t block,
                            std::string *error = nullptr);

/// Layer norm of each row: `(x - mean) * rsqrt(var + eps) * weight + bias`,
/// one row per program, f32 statistics; `block` >= n_cols. Grid: `n_rows`.
KernelModule buildLayerNorm(mlir::MLIRContext *ctx, mlir::Type dtype,
                            int64_t block = 1024, std::string *error = nullptr);

/// Block sizes of the attention kernel; BLOCK_D must cover the head dim.
struct AttentionConfig {
  int64_t blockM = 64;
  int64_t blockN = 64;
  int64_t blockD = 64;
  /// tk.divisibility of the head dim D (0: none). With 16, rows of q, k,
  /// v and o start 16-byte aligned and load as 128-bit vectors; the runtime
  /// rejects a launch whose D is not a multiple.
  unsigned headDimDivisibility = 0;
  /// The block's rows in this many groups of blockM / rowGroups, each with
  /// its own scores, statistics and accumulator. A trip issues every
  /// group's q k^T first, then runs the groups' softmax and p v in turn:
  /// the matrix unit computes one group's products while the next group's
  /// softmax runs (FlashAttention-3's overlap, within one program).
  int64_t rowGroups = 1;
  /// Causal attention: query i sees keys j <= i. The keys before the
  /// block's first row are visible to all its rows and run unmasked; only
  /// the blocks on the diagonal apply the mask, and none past it runs.
  bool causal = false;
  /// FlashAttention-3's overlap within a warpgroup: each trip of the
  /// unmasked loop issues its q k^T, then the previous trip's p v, then
  /// runs its softmax while the matrix unit computes both (the loop
  /// carries p, and the first trip's p v adds zeros). A backend whose dots
  /// run asynchronously waits for each product only where it is read
  /// (tk-defer-dot-waits); elsewhere it is the same arithmetic in another
  /// order.
  bool overlapProducts = false;
};

/// Fused attention forward (FlashAttention-2): `o = softmax(q k^T * scale)
/// v` per head (with AttentionConfig::causal, each query over the keys up to
/// its own position), q, k, v and o [heads, N, D] contiguous, an f32
/// accumulator and online softmax (in base 2: exp2, log2(e) folded into the
/// scale); sm_scale must be positive (the running max is taken before scaling).
/// Arguments: q, k, v, o, N, D, sm_scale. Grid:
/// `cdiv(N, blockM) x heads`. Not a seed kernel: it has no `.tk` twin (the
/// conformance suite and tk-bench-cuda build it).
KernelModule buildAttention(mlir::MLIRContext *ctx, mlir::Type type,
                            const AttentionConfig &config = AttentionConfig(),
                            std::string *error = nullptr);

/// A seed kernel in the variant its `.tk` file holds.
struct SeedKernel {
  /// The kernel's symbol name, e.g. `vector_add`.
  llvm::StringRef name;
  /// Its text twin in examples/kernels, e.g. `vector_add.tk`.
  llvm::StringRef fileName;
  KernelModule (*build)(mlir::MLIRContext *ctx, std::string *error);
};

/// Every seed kernel, in the order above.
llvm::ArrayRef<SeedKernel> getSeedKernels();

} // namespace seeds
} // namespace tk

#endif // TK_EXAMPLES_KERNELS_SEEDKERNELS_H_
