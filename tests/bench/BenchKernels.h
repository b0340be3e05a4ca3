//===- BenchKernels.h - the kernels and configurations the bench times ----===//
//
// One definition of what the GPU benchmark measures: each figure (a kernel,
// a dtype and a problem size) and the configurations tk_autotune chooses
// among for it (tile sizes, warps, stages, occupancy hint). The benchmark
// (backends/cuda/test/bench/cuda_bench.py, through `tk-bench-kernels
// --emit`) times the candidates of each figure; the conformance suite makes
// a cell of every candidate (tests/conformance/cases/Bench.cpp), so that
// every configuration a benchmark can report has been checked against a
// reference.
//
//===----------------------------------------------------------------------===//

#ifndef TK_TESTS_BENCH_BENCHKERNELS_H_
#define TK_TESTS_BENCH_BENCHKERNELS_H_

#include "SeedKernels.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tk::bench {

/// What a figure's kernel computes, which fixes its arguments and grid:
///   VectorAdd  x, y, out, n                        grid cdiv(n, 1024)
///   Softmax    in, out, in_stride, out_stride, n    grid rows
///   Matmul     a, b, c, M, N, K, stride_am, stride_bk, stride_cm (unit
///              inner strides folded in as constexprs)
///                                                  grid cdiv(M, BM) cdiv(N,
///                                                  BN)
///   ScaledMatmul a, b, c, M, N, K, stride_am, stride_bn, stride_cm,
///              scale_a, scale_b: fp8 a (M x K) and b stored as N rows of
///              K (cuBLASLt's "TN"), c = a b scale_a scale_b in bf16,
///              per-tensor scales (f32 scalars)
///                                                  grid as Matmul
///   RowScaledMatmul the same with scale_a, scale_b pointers to M and N f32
///              scales (a's rows, b's columns)      grid as Matmul
///   Attention  q, k, v, o, N, D, scale             grid cdiv(N, BM) x heads
///   CausalAttention the same, each query over the keys up to its own
///              position
enum class BenchKind {
  VectorAdd,
  Softmax,
  Matmul,
  ScaledMatmul,
  RowScaledMatmul,
  Attention,
  CausalAttention
};

const char *kindName(BenchKind kind);

/// One configuration of a figure's kernel.
struct BenchCandidate {
  /// "128x256x64 w8 s4", unique within the figure.
  std::string label;
  int32_t numWarps = 0;
  int32_t numStages = 0;
  int32_t minProgramsPerCu = 0;
  /// Arguments folded into the kernel (tk_compile_options.constexprs).
  std::vector<std::pair<std::string, int64_t>> constexprs;
  /// The output rows and columns one program computes (matmul and
  /// attention: BLOCK_M x BLOCK_N; softmax: one row of `blockN` columns;
  /// vector add: 1 x 1024), from which the grid follows.
  int64_t blockM = 1, blockN = 1;
  /// What the kernel declares its sizes divisible by (matmul: M, N and K,
  /// tk.divisibility; 0: nothing): a problem it runs on has sizes that are
  /// multiples.
  int64_t sizeDivisibility = 0;
  /// The kernel's module (seeds::build*), in `ctx`.
  std::function<seeds::KernelModule(mlir::MLIRContext *ctx)> build;
};

struct BenchFigure {
  /// "matmul f16 4096x4096x4096": the key of the figure in the bench JSON.
  std::string name;
  BenchKind kind;
  /// "f32", "f16", "bf16", or for ScaledMatmul the operands' "f8e4m3".
  std::string dtype;
  /// vector add [n]; softmax [rows, cols]; matmul [M, N, K]; attention
  /// [heads, N, D].
  std::vector<int64_t> shape;
  std::vector<BenchCandidate> candidates;
};

/// Every figure of the GPU benchmark with its candidates. The occupancy
/// hints of the softmax candidates are counted for an SM of 65536
/// registers and 2048 threads (sm_80 to sm_90).
std::vector<BenchFigure> getBenchFigures();

/// The seed matmul on `dtype` ("f16" or "bf16") operands with the tiles of
/// `label`, "BMxBNxBK wW sS" (the matmul figures' labels), then " peel"
/// (MatmulConfig::peelK) and " div16" (sizeDivisibility 16), each or
/// neither, built as those figures' candidates are: for
/// configurations no figure lists, such as the ones that fit Vulkan's 48 KB
/// (backends/vulkan/test/gpu/bench-kit.sh). An empty `build` for a label of
/// another form.
BenchCandidate getMatmulCandidate(const std::string &dtype,
                                  const std::string &label);

} // namespace tk::bench

#endif // TK_TESTS_BENCH_BENCHKERNELS_H_
