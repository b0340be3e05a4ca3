//===- Attention.cpp - fused attention forward (FlashAttention-2) ---------===//
//
// The kernel is tk::seeds::buildAttention (examples/kernels) with 32 x 32
// blocks and head dims up to 32; the reference below is the textbook
// softmax(q k^T * scale) v in double.
//
//===----------------------------------------------------------------------===//

#include "Cases.h"
#include "SeedKernels.h"

using namespace tk;
using namespace tk::conformance;

namespace {
constexpr int64_t kBlockM = 32, kBlockN = 32, kBlockD = 32;

/// The second case's blocks: 128 rows in two groups of 64, the products
/// of one group running while the other group's softmax does (wgmma on
/// sm_90 with the default 4 warps and 3 stages).
constexpr int64_t kGroupedBlockM = 128, kGroupedBlockN = 64,
                  kGroupedBlockD = 64, kRowGroups = 2;

/// The causal case's rows a block: two of its 32-key trips on the diagonal.
constexpr int64_t kCausalBlockM = 64;

/// Blocks of blockM x blockN keys over head dims up to blockD.
seeds::AttentionConfig blocks(int64_t blockM, int64_t blockN, int64_t blockD) {
  seeds::AttentionConfig config;
  config.blockM = blockM;
  config.blockN = blockN;
  config.blockD = blockD;
  return config;
}

/// The case's builder: buildAttention in `config` for the cell's dtype.
auto attentionBuilder(seeds::AttentionConfig config) {
  (void)config; // unused where the runtime-only build has no builders
  return TK_KERNEL_BUILDER([config](mlir::MLIRContext *ctx, DType dtype,
                                    const Shape &, std::string *error) {
    return seeds::buildAttention(ctx, toMLIR(ctx, dtype), config, error);
  });
}

} // namespace

/// Runs the kernel on heads x N x D and checks it against the textbook
/// softmax(q k^T * scale) v in double (causal: row i over keys 0..i).
void tk::conformance::runAttention(CellRun &r, int64_t blockM, bool causal) {
  int64_t H = r.dim(0), N = r.dim(1), D = r.dim(2);
  DType t = r.dtype();
  size_t count = size_t(H * N * D);
  std::vector<double> q = r.random(count, -1, 1, t, 101),
                      kk = r.random(count, -1, 1, t, 102),
                      v = r.random(count, -1, 1, t, 103);
  double scale = double(float(1 / std::sqrt(double(D))));
  tk_arg dq = r.input(t, q), dk = r.input(t, kk), dv = r.input(t, v);
  tk_arg dout = r.output(t, count);
  r.launch({cdiv(N, blockM), int32_t(H), 1},
           {dq, dk, dv, dout, tk_arg_i32(int32_t(N)), tk_arg_i32(int32_t(D)),
            tk_arg_f32(float(scale))});
  // The bound of each output element: the scores' f32 dot error (D eps
  // sum |q k| times the scale) moves each p = exp(s - max) by that much,
  // relative; p may be rounded to the dtype for the second dot, and the
  // exp approximation and the rescaling of the online softmax add a few
  // dozen f32 ulps. Each relative error of p moves the output by at most
  // that much of sum p |v| / sum p, the magnitude of the average.
  std::vector<double> want(count), bound(count), s(N);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < N; ++i) {
      const double *qi = &q[(h * N + i) * D];
      double rowMax = -INFINITY, sum = 0, scoreError = 0;
      int64_t keys = causal ? i + 1 : N;
      for (int64_t j = 0; j < keys; ++j) {
        const double *kj = &kk[(h * N + j) * D];
        double dotv = 0, dotAbs = 0;
        for (int64_t d = 0; d < D; ++d) {
          dotv += qi[d] * kj[d];
          dotAbs += std::fabs(qi[d] * kj[d]);
        }
        s[j] = dotv * scale;
        scoreError =
            std::max(scoreError, sumErrorBound(DType::F32, dotAbs * scale, D));
        rowMax = std::max(rowMax, s[j]);
      }
      for (int64_t j = 0; j < keys; ++j)
        sum += (s[j] = std::exp(s[j] - rowMax));
      double pError = 2 * scoreError + 64 * epsilonOf(DType::F32) +
                      (t == DType::F32 ? 0 : epsilonOf(t));
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0, accAbs = 0;
        for (int64_t j = 0; j < keys; ++j) {
          acc += s[j] * v[(h * N + j) * D + d];
          accAbs += s[j] * std::fabs(v[(h * N + j) * D + d]);
        }
        want[(h * N + i) * D + d] = acc / sum;
        bound[(h * N + i) * D + d] = pError * accAbs / sum;
      }
    }
  // The result rounds once to the dtype.
  r.check("o", r.read(dout), want, defaultTolerance(t), &bound);
}

void tk::conformance::addAttentionCases(std::vector<ConformanceCase> &cases) {
  ConformanceCase c;
  c.name = "attention_fwd";
  c.summary = "FlashAttention-2 forward: online softmax between two dots "
              "over K/V blocks in an scf.for; shape heads x N x D";
  c.needs.dtypes = TK_DTYPE_BIT_F32;
  c.dtypes = {DType::F16, DType::BF16, DType::F32};
  c.shapes = {shape({1, 1, 1}), shape({2, 77, 32}), shape({3, 128, 16}),
              shape({1, 200, 20})};
  c.build = attentionBuilder(blocks(kBlockM, kBlockN, kBlockD));
  c.run = [](CellRun &r) { runAttention(r, kBlockM); };
  cases.push_back(c);

  // FlashAttention-3's order: each trip's softmax between its q k^T and the
  // previous trip's p v. No full block, a partial last block, only full
  // blocks; bf16 takes f16's path (and lavapipe's attention cells are the
  // slowest of CI's).
  c.name = "attention_fwd_overlapped";
  c.summary = "FlashAttention forward whose trips issue q k^T, then the "
              "previous trip's p v, then the softmax; shape heads x N x D";
  c.dtypes = {DType::F16, DType::F32};
  c.shapes = {shape({1, 1, 1}), shape({2, 77, 32}), shape({3, 128, 16})};
  seeds::AttentionConfig overlapped = blocks(kBlockM, kBlockN, kBlockD);
  overlapped.overlapProducts = true;
  c.build = attentionBuilder(overlapped);
  cases.push_back(c);

  c.name = "attention_fwd_row_groups";
  c.summary = "FlashAttention forward over 128-row blocks in two row groups "
              "whose products overlap the other group's softmax; shape "
              "heads x N x D";
  c.dtypes = {DType::F16, DType::BF16};
  c.shapes = {shape({1, 1, 8}), shape({2, 300, 64}), shape({1, 256, 48}),
              shape({3, 130, 40})};
  seeds::AttentionConfig grouped =
      blocks(kGroupedBlockM, kGroupedBlockN, kGroupedBlockD);
  grouped.rowGroups = kRowGroups;
  c.build = attentionBuilder(grouped);
  c.run = [](CellRun &r) { runAttention(r, kGroupedBlockM); };
  cases.push_back(c);

  // Blocks of 64 rows over keys 32 at a time: two trips on the diagonal,
  // the second with rows that see none of its keys.
  c.name = "attention_fwd_causal";
  c.summary = "causal FlashAttention forward (query i over keys 0..i): "
              "unmasked trips before the diagonal, masked ones on it; shape "
              "heads x N x D";
  c.dtypes = {DType::F16, DType::BF16, DType::F32};
  c.shapes = {shape({1, 1, 1}), shape({2, 77, 32}), shape({1, 200, 20}),
              shape({2, 128, 16})};
  seeds::AttentionConfig causal = blocks(kCausalBlockM, kBlockN, kBlockD);
  causal.causal = true;
  c.build = attentionBuilder(causal);
  c.run = [](CellRun &r) { runAttention(r, kCausalBlockM, /*causal=*/true); };
  cases.push_back(std::move(c));
}
