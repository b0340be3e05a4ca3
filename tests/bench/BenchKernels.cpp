//===- BenchKernels.cpp - the kernels and configurations the bench times --===//
//
// The candidate spaces: what tk_autotune chooses among for each figure of
// the GPU benchmark. Each list says why it holds what it holds; what was
// tried on the H100 and left out is named with it.
//
//===----------------------------------------------------------------------===//

#include "BenchKernels.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

using namespace tk;
using namespace tk::bench;

const char *tk::bench::kindName(BenchKind kind) {
  switch (kind) {
  case BenchKind::VectorAdd:
    return "vector_add";
  case BenchKind::Softmax:
    return "softmax";
  case BenchKind::Matmul:
    return "matmul";
  case BenchKind::ScaledMatmul:
    return "scaled_matmul";
  case BenchKind::RowScaledMatmul:
    return "row_scaled_matmul";
  case BenchKind::Attention:
    return "attention";
  case BenchKind::CausalAttention:
    return "causal_attention";
  }
  return "?";
}

namespace {

#ifndef TK_CONFORMANCE_RUN_ONLY
mlir::Type typeOf(mlir::MLIRContext *ctx, const std::string &dtype) {
  if (dtype == "f16")
    return mlir::Float16Type::get(ctx);
  if (dtype == "bf16")
    return mlir::BFloat16Type::get(ctx);
  if (dtype == "f8e4m3")
    return mlir::Float8E4M3FNType::get(ctx);
  return mlir::Float32Type::get(ctx);
}
#endif

std::string dims(const std::vector<int64_t> &shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

BenchFigure vectorAdd() {
  BenchFigure figure{"vector_add f32 268435456",
                     BenchKind::VectorAdd,
                     "f32",
                     {int64_t(1) << 28},
                     {}};
  BenchCandidate c;
  c.label = "BLOCK 1024 w4";
  c.numWarps = 4;
  c.blockN = 1024;
  c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx) {
    return seeds::buildVectorAdd(ctx, mlir::Float32Type::get(ctx), 1024);
  });
  figure.candidates.push_back(std::move(c));
  return figure;
}

/// Softmax over rows of `cols` f32 in one program a row: every warp count
/// from 2 to one element per thread, each with ptxas free to use registers
/// and with occupancy hints that cap them.
BenchFigure softmax(int64_t rows, int64_t cols) {
  BenchFigure figure{"softmax f32 " + dims({rows, cols}),
                     BenchKind::Softmax,
                     "f32",
                     {rows, cols},
                     {}};
  const int registersPerSm = 65536, threadsPerSm = 2048;
  int64_t block = seeds::nextPowerOf2(cols);
  for (int warps = 2; warps <= 32 && warps * 32 <= block; warps *= 2) {
    int threads = warps * 32, rowShare = int(block) / threads;
    auto programsWithin = [&](int registers) {
      return std::min(registersPerSm / (threads * registers),
                      threadsPerSm / threads);
    };
    // The most programs whose registers hold a thread's share of the row
    // with 20 to spare (at 16384 columns and 8 warps, 3 programs of 85
    // registers), then, where the share fits them, registers capped at 40
    // and at 32.
    std::vector<int> hints = {0, programsWithin(rowShare + 20)};
    if (rowShare <= 32)
      hints.insert(hints.end(), {programsWithin(40), programsWithin(32)});
    std::sort(hints.begin(), hints.end());
    hints.erase(std::unique(hints.begin(), hints.end()), hints.end());
    for (int programs : hints) {
      if (programs == 1)
        continue; // one program an SM is no hint at all
      BenchCandidate c;
      c.label = "w" + std::to_string(warps) +
                (programs ? " o" + std::to_string(programs) : "");
      c.numWarps = warps;
      c.minProgramsPerCu = programs;
      c.blockN = block;
      // Row strides declared multiples of 16 elements, as Triton's launcher
      // specialises them: the rows load as 128-bit vectors.
      c.build = TK_KERNEL_BUILDER([block](mlir::MLIRContext *ctx) {
        return seeds::buildSoftmax(ctx, mlir::Float32Type::get(ctx), block,
                                   nullptr, /*rowStrideDivisibility=*/16);
      });
      figure.candidates.push_back(std::move(c));
    }
  }
  return figure;
}

struct MatmulTiles {
  int64_t bm, bn, bk;
  int warps, stages;
  /// MatmulConfig::peelK: whole K slices without masks, the cut one after.
  bool peelK = false;
  /// M, N and K declared multiples of 16 (MatmulConfig::sizeDivisibility),
  /// as Triton's launcher declares sizes such as 4096: a row's (column's)
  /// mask is one test a 16-byte run, not one an element (cuda sm_90a's PTX
  /// for 128x256x64 w8 s3: 1,314 lines and 18 branches, against 5,115
  /// and 521).
  bool div16 = false;
};

/// The candidate of the seed matmul with tiles `t`: `config` with t's
/// blocks and row strides declared multiples of 16 elements, on `input`
/// operands into `output`, the unit inner strides `constexprs` folded in.
BenchCandidate
matmulCandidate(const MatmulTiles &t, seeds::MatmulConfig config,
                const std::string &input, const std::string &output,
                std::vector<std::pair<std::string, int64_t>> constexprs) {
  BenchCandidate c;
  c.label = std::to_string(t.bm) + "x" + std::to_string(t.bn) + "x" +
            std::to_string(t.bk) + " w" + std::to_string(t.warps) + " s" +
            std::to_string(t.stages) + (t.peelK ? " peel" : "") +
            (t.div16 ? " div16" : "");
  c.numWarps = t.warps;
  c.numStages = t.stages;
  c.sizeDivisibility = t.div16 ? 16 : 0;
  c.constexprs = std::move(constexprs);
  c.blockM = t.bm;
  c.blockN = t.bn;
  // Configured inside the builder, which a run-only build leaves out.
  c.build =
      TK_KERNEL_BUILDER([t, config, input, output](mlir::MLIRContext *ctx) {
        seeds::MatmulConfig tiled = config;
        tiled.blockM = t.bm;
        tiled.blockN = t.bn;
        tiled.blockK = t.bk;
        tiled.peelK = t.peelK;
        tiled.sizeDivisibility = t.div16 ? 16 : 0;
        tiled.rowStrideDivisibility = 16;
        return seeds::buildMatmul(ctx, typeOf(ctx, input), typeOf(ctx, output),
                                  tiled);
      });
  return c;
}

/// The seed matmul for row-major operands with each of `tiles`: unit inner
/// strides folded in and row strides declared multiples of 16 elements
/// (what Triton's launcher does by itself for strides of 1 and multiples of
/// 16), so rows of every tile load as 128-bit vectors.
BenchFigure matmul(const std::string &dtype, int64_t m, int64_t n, int64_t k,
                   const std::vector<MatmulTiles> &tiles) {
  BenchFigure figure{"matmul " + dtype + " " + dims({m, n, k}),
                     BenchKind::Matmul,
                     dtype,
                     {m, n, k},
                     {}};
  for (const MatmulTiles &t : tiles)
    figure.candidates.push_back(matmulCandidate(
        t, seeds::MatmulConfig(), dtype, dtype,
        {{"stride_ak", 1}, {"stride_bn", 1}, {"stride_cn", 1}}));
  return figure;
}

/// The seed matmul on fp8 operands, b stored as N rows of K (the form
/// cuBLASLt's fp8 takes, and the one wgmma reads fp8 in), with per-tensor
/// or per-row scales and a bf16 result: torch._scaled_mm's computation.
BenchFigure scaledMatmul(seeds::MatmulScales scales, int64_t m, int64_t n,
                         int64_t k, const std::vector<MatmulTiles> &tiles) {
  bool perRow = scales == seeds::MatmulScales::PerRow;
  BenchFigure figure{
      std::string(perRow ? "row_scaled_matmul" : "scaled_matmul") + " f8e4m3 " +
          dims({m, n, k}),
      perRow ? BenchKind::RowScaledMatmul : BenchKind::ScaledMatmul,
      "f8e4m3",
      {m, n, k},
      {}};
  seeds::MatmulConfig config;
  config.kMajorB = true;
  config.scales = scales;
  for (const MatmulTiles &t : tiles)
    figure.candidates.push_back(matmulCandidate(
        t, config, "f8e4m3", "bf16",
        {{"stride_ak", 1}, {"stride_bk", 1}, {"stride_cn", 1}}));
  return figure;
}

struct AttentionBlocks {
  int64_t bm, bn;
  int warps, stages, minPrograms;
  /// AttentionConfig::overlapProducts.
  bool overlap = false;
};

/// FlashAttention forward, fp16, head dim `d` declared divisible by 16;
/// `causal`: each query over the keys up to its own position.
BenchFigure attention(int64_t heads, int64_t n, int64_t d, bool causal) {
  BenchFigure figure{
      std::string(causal ? "causal attention f16 " : "attention f16 ") +
          dims({heads, n, d}),
      causal ? BenchKind::CausalAttention : BenchKind::Attention,
      "f16",
      {heads, n, d},
      {}};
  // With the scores held in registers one warpgroup can take 128 rows (two
  // 64-row tiles) and wider key blocks fit in shared memory; two stages
  // leave room for more programs an SM. Two warpgroups of 64 rows (8 warps)
  // run as two programs an SM only with the occupancy hint (o2: 128
  // registers a thread). Row groups (AttentionConfig::rowGroups) are not
  // candidates: on the H100 they never timed faster than one group. Tried
  // on the H100 and left out: 128x32 w4 (s2-s4), 64x64 w4 (s2 o4, s4),
  // 128x64 w8 s3 o2, 64x128 w4 s2 o3 and 256x64 w16 s2, all slower at both
  // head dims; and 128x32 w8 s2 o2 and s3 o2 (session 36), which ptxas
  // compiles without the spill and the serialised wgmmas (C7512) of 128x64
  // w8 s2 o2 at head dim 128, yet 14-35% slower than the pick at every
  // head dim, causal or not.
  const std::vector<AttentionBlocks> blocks = {
      {64, 64, 4, 3, 0},
      {128, 64, 8, 3, 0},
      {64, 32, 4, 3, 0},
      {128, 32, 8, 3, 0},
      {128, 64, 4, 3, 0},
      {128, 128, 8, 3, 0},
      {128, 64, 4, 2, 0},
      {128, 64, 8, 2, 0},
      {128, 128, 8, 2, 0},
      {64, 128, 4, 2, 0},
      {128, 64, 8, 2, 2},
      {128, 128, 8, 2, 2},
      // FlashAttention-3's overlap of a trip's softmax with its products
      // (AttentionConfig::overlapProducts). On the H100 these two tied the
      // fastest at one head dim or the other; with the occupancy hint
      // (o2), 128x128 blocks and in the causal figures it was slower (its
      // softmax holds the running p v's registers besides its own).
      {128, 64, 8, 2, 0, true},
      {128, 64, 4, 2, 0, true}};
  // Causal: the configurations that won the full figures on the H100
  // (128x64 w8 s2, with and without o2) and two of 4 warps, so that each
  // is also a conformance cell of every column without doubling them.
  const std::vector<AttentionBlocks> causalBlocks = {{128, 64, 8, 2, 0},
                                                     {128, 64, 8, 2, 2},
                                                     {128, 64, 4, 2, 0},
                                                     {64, 64, 4, 3, 0}};
  // Head dim 256: a warpgroup's 64 rows hold 128 accumulator registers a
  // thread, so only warpgroups of 64 rows compile without spilling, and
  // only with q in shared memory (0 bytes; 8-4780 with q in registers; the
  // CUDA compiler keeps whichever ptxas spills less).
  const std::vector<AttentionBlocks> wideBlocks = {{128, 64, 8, 2, 0},
                                                   {128, 32, 8, 3, 0},
                                                   {128, 64, 8, 2, 0, true},
                                                   {64, 32, 4, 3, 0}};
  const std::vector<AttentionBlocks> wideCausalBlocks = {{128, 64, 8, 2, 0},
                                                         {128, 32, 8, 3, 0}};
  const std::vector<AttentionBlocks> &chosen =
      d > 128 ? (causal ? wideCausalBlocks : wideBlocks)
              : (causal ? causalBlocks : blocks);
  for (const AttentionBlocks &b : chosen) {
    // 128x128 blocks with 3 stages at head dim 128 need 238080 bytes of
    // shared memory, more than an H100's 232448.
    if (d == 128 && b.bm == 128 && b.bn == 128 && b.stages == 3)
      continue;
    BenchCandidate c;
    c.label = std::to_string(b.bm) + "x" + std::to_string(b.bn) + " w" +
              std::to_string(b.warps) + " s" + std::to_string(b.stages) +
              (b.minPrograms ? " o" + std::to_string(b.minPrograms) : "") +
              (b.overlap ? " overlap" : "");
    c.numWarps = b.warps;
    c.numStages = b.stages;
    c.minProgramsPerCu = b.minPrograms;
    c.blockM = b.bm;
    c.blockN = b.bn;
    c.build = TK_KERNEL_BUILDER([b, d, causal](mlir::MLIRContext *ctx) {
      seeds::AttentionConfig config;
      config.blockM = b.bm;
      config.blockN = b.bn;
      config.blockD = d;
      config.headDimDivisibility = 16;
      config.causal = causal;
      config.overlapProducts = b.overlap;
      return seeds::buildAttention(ctx, mlir::Float16Type::get(ctx), config);
    });
    figure.candidates.push_back(std::move(c));
  }
  return figure;
}

} // namespace

BenchCandidate tk::bench::getMatmulCandidate(const std::string &dtype,
                                             const std::string &label) {
  MatmulTiles tiles;
  int used = 0;
  if (std::sscanf(label.c_str(),
                  "%" SCNd64 "x%" SCNd64 "x%" SCNd64 " w%d s%d%n", &tiles.bm,
                  &tiles.bn, &tiles.bk, &tiles.warps, &tiles.stages,
                  &used) != 5)
    return {};
  // Then " peel" and " div16", each or neither, in that order.
  llvm::StringRef rest = llvm::StringRef(label).drop_front(used);
  tiles.peelK = rest.consume_front(" peel");
  tiles.div16 = rest.consume_front(" div16");
  auto isPowerOfTwo = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
  if (!rest.empty() || !isPowerOfTwo(tiles.bm) || !isPowerOfTwo(tiles.bn) ||
      !isPowerOfTwo(tiles.bk) || !isPowerOfTwo(tiles.warps) ||
      tiles.stages < 1 || (dtype != "f16" && dtype != "bf16"))
    return {};
  return matmulCandidate(
      tiles, seeds::MatmulConfig(), dtype, dtype,
      {{"stride_ak", 1}, {"stride_bn", 1}, {"stride_cn", 1}});
}

std::vector<BenchFigure> tk::bench::getBenchFigures() {
  // Square shapes: tiles of 128 to 256 on two warpgroups, 3 or 4 stages;
  // the two that won on the H100, again with the K loop peeled (a main
  // loop without K masks nor the per-element path of cut vectors: 37%
  // shorter in gfx942's code, session 30), and again with M, N and K
  // declared multiples of 16, as Triton's launcher declares these sizes
  // (session 34: a quarter of the PTX; timed on an H100 in session 35,
  // docs/bench/2026-12-07-466e00c-h100, and not the fastest at either
  // size).
  const std::vector<MatmulTiles> square = {{128, 256, 64, 8, 3},
                                           {256, 128, 64, 8, 3},
                                           {128, 256, 64, 8, 4},
                                           {256, 128, 64, 8, 4},
                                           {128, 256, 32, 8, 4},
                                           {256, 128, 32, 8, 4},
                                           {128, 128, 64, 8, 4},
                                           {128, 128, 64, 4, 4},
                                           {128, 256, 64, 8, 3, true},
                                           {128, 256, 64, 8, 4, true},
                                           {128, 256, 64, 8, 3, false, true},
                                           {128, 256, 64, 8, 4, false, true}};
  // The decode shape (16 rows): thin tiles, long K steps, deep rings.
  // Split-K (2 to 16 slices) was never faster on the H100 for it.
  const std::vector<MatmulTiles> decode = {
      {16, 64, 64, 4, 3},  {16, 64, 64, 4, 5},  {16, 128, 64, 4, 4},
      {16, 64, 128, 4, 3}, {16, 32, 128, 4, 4}, {32, 64, 64, 4, 4},
      {16, 64, 256, 4, 3}, {16, 32, 256, 4, 4}, {16, 128, 128, 4, 3}};
  std::vector<BenchFigure> figures = {vectorAdd(), softmax(32768, 1024),
                                      softmax(32768, 4096),
                                      softmax(8192, 16384)};
  for (const char *dtype : {"f16", "bf16"}) {
    figures.push_back(matmul(dtype, 4096, 4096, 4096, square));
    figures.push_back(matmul(dtype, 8192, 8192, 8192, square));
    figures.push_back(matmul(dtype, 16, 8192, 8192, decode));
  }
  // fp8: a K step of 128 bytes, as the 16-bit tiles' 64 elements.
  const std::vector<MatmulTiles> fp8 = {
      {128, 256, 128, 8, 3}, {256, 128, 128, 8, 3}, {128, 256, 128, 8, 4},
      {128, 128, 128, 8, 4}, {128, 128, 128, 4, 4}, {128, 256, 64, 8, 4}};
  for (seeds::MatmulScales scales :
       {seeds::MatmulScales::PerTensor, seeds::MatmulScales::PerRow}) {
    figures.push_back(scaledMatmul(scales, 4096, 4096, 4096, fp8));
    figures.push_back(scaledMatmul(scales, 8192, 8192, 8192, fp8));
  }
  for (bool causal : {false, true}) {
    figures.push_back(attention(128, 4096, 64, causal));
    figures.push_back(attention(128, 4096, 128, causal));
    figures.push_back(attention(128, 4096, 256, causal));
  }
  return figures;
}
