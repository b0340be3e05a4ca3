//===- Attention.cpp - fused attention forward (FlashAttention-2) ---------===//
//
// o = softmax(q k^T * scale) v for each head, one program per block of 32
// query rows: an scf.for walks 32-row blocks of k and v, keeps the running
// row maximum m and denominator l (online softmax) and rescales the f32
// accumulator by exp(m_old - m_new) between the two dots, as FlashAttention-2
// does. p is cast to the input dtype before the second dot (f16/bf16 inputs
// multiply on the tensor cores of GPUs). Sequence lengths and head dims that
// do not fill a block are masked.
//
//===----------------------------------------------------------------------===//

#include "Cases.h"

#include <limits>

using namespace tk;
using namespace tk::conformance;

namespace {
constexpr int64_t kBlockM = 32, kBlockN = 32, kBlockD = 32;

KernelModule buildAttention(mlir::MLIRContext *ctx, DType dtype,
                            std::string *error) {
  KernelBuilder k(ctx, "attention_fwd");
  mlir::Type type = toMLIR(ctx, dtype);
  Tile q = k.argPtr("q", type, 16), kk = k.argPtr("k", type, 16);
  Tile v = k.argPtr("v", type, 16), o = k.argPtr("o", type, 16);
  Tile N = k.argI32("N"), D = k.argI32("D");
  Tile scale = k.argF32("sm_scale");
  int64_t BM = k.constexpr_("BLOCK_M", kBlockM);
  int64_t BN = k.constexpr_("BLOCK_N", kBlockN);
  int64_t BD = k.constexpr_("BLOCK_D", kBlockD);
  const double inf = std::numeric_limits<double>::infinity();

  // [heads, N, D], contiguous.
  Tile pidM = k.programId(0), head = k.programId(1);
  Tile headSize = N * D;
  Tile base = head * headSize;
  Tile startM = pidM * BM;
  Tile offsM = startM + k.arange(0, BM);
  Tile dIdx = k.arange(0, BD).row();
  Tile dMask = dIdx < D;
  Tile mIdx = offsM.col();
  Tile mRowOff = mIdx * D;
  Tile qOffs = mRowOff + dIdx;
  Tile mValid = mIdx < N;
  Tile qMask = mValid & dMask;
  Tile qBase = q + base;
  Tile qTile = k.load(qBase + qOffs, qMask, 0);
  Tile kBase = kk + base;
  Tile vBase = v + base;

  Tile mInit = k.full({BM}, -inf, k.f32());
  Tile lInit = k.zeros({BM}, k.f32());
  Tile accInit = k.zeros({BM, BD}, k.f32());
  llvm::SmallVector<Tile> state =
      k.forLoop(0, N, BN, {mInit, lInit, accInit},
                [&](Tile startN,
                    llvm::ArrayRef<Tile> carried) -> llvm::SmallVector<Tile> {
                  Tile m = carried[0], l = carried[1], acc = carried[2];
                  Tile offsN = startN + k.arange(0, BN);
                  Tile nIdx = offsN.col();
                  Tile nRowOff = nIdx * D;
                  Tile kvOffs = nRowOff + dIdx;
                  Tile nValid = nIdx < N;
                  Tile kvMask = nValid & dMask;
                  Tile kTile = k.load(kBase + kvOffs, kvMask, 0); // [BN, BD]
                  Tile vTile = k.load(vBase + kvOffs, kvMask, 0);
                  // s = q k^T * scale, with keys past N at -inf.
                  Tile kT = k.trans(kTile);
                  Tile qk = k.dot(qTile, kT);
                  Tile scaled = qk * scale;
                  Tile colValid = offsN.row() < N;
                  Tile s = k.where(colValid, scaled, -inf);
                  // Online softmax: new running max, rescale of l and acc.
                  Tile blockMax = k.max(s, 1);
                  Tile mNew = k.maximum(m, blockMax);
                  Tile shifted = s - mNew.col();
                  Tile p = k.exp(shifted);
                  Tile mDiff = m - mNew;
                  Tile alpha = k.exp(mDiff);
                  Tile lScaled = l * alpha;
                  Tile lNew = lScaled + k.sum(p, 1);
                  Tile accScaled = acc * alpha.col();
                  Tile pIn = p.to(type);
                  Tile accNew = k.dot(pIn, vTile, accScaled);
                  return {mNew, lNew, accNew};
                });
  if (state.empty())
    return finishKernel(k, error);
  Tile out = state[2] / state[1].col();
  Tile oBase = o + base;
  k.store(oBase + qOffs, out.to(type), qMask);
  return finishKernel(k, error);
}
} // namespace

void tk::conformance::addAttentionCases(std::vector<ConformanceCase> &cases) {
  ConformanceCase c;
  c.name = "attention_fwd";
  c.summary = "FlashAttention-2 forward: online softmax between two dots "
              "over K/V blocks in an scf.for; shape heads x N x D";
  c.needs.dtypes = TK_DTYPE_BIT_F32;
  c.dtypes = {DType::F16, DType::BF16, DType::F32};
  c.shapes = {shape({1, 1, 1}), shape({2, 77, 32}), shape({3, 128, 16}),
              shape({1, 200, 20})};
  c.build = [](mlir::MLIRContext *ctx, DType dtype, const Shape &,
               std::string *error) {
    return buildAttention(ctx, dtype, error);
  };
  c.run = [](CellRun &r) {
    int64_t H = r.dim(0), N = r.dim(1), D = r.dim(2);
    DType t = r.dtype();
    size_t count = size_t(H * N * D);
    std::vector<double> q = r.random(count, -1, 1, t, 101),
                        kk = r.random(count, -1, 1, t, 102),
                        v = r.random(count, -1, 1, t, 103);
    double scale = double(float(1 / std::sqrt(double(D))));
    tk_arg dq = r.input(t, q), dk = r.input(t, kk), dv = r.input(t, v);
    tk_arg dout = r.output(t, count);
    r.launch({cdiv(N, kBlockM), int32_t(H), 1},
             {dq, dk, dv, dout, tk_arg_i32(int32_t(N)), tk_arg_i32(int32_t(D)),
              tk_arg_f32(float(scale))});
    std::vector<double> want(count), s(N);
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < N; ++i) {
        const double *qi = &q[(h * N + i) * D];
        double rowMax = -INFINITY, sum = 0;
        for (int64_t j = 0; j < N; ++j) {
          const double *kj = &kk[(h * N + j) * D];
          double dotv = 0;
          for (int64_t d = 0; d < D; ++d)
            dotv += qi[d] * kj[d];
          s[j] = dotv * scale;
          rowMax = std::max(rowMax, s[j]);
        }
        for (int64_t j = 0; j < N; ++j)
          sum += (s[j] = std::exp(s[j] - rowMax));
        for (int64_t d = 0; d < D; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < N; ++j)
            acc += s[j] * v[(h * N + j) * D + d];
          want[(h * N + i) * D + d] = acc / sum;
        }
      }
    Tolerance tol =
        t == DType::F32 ? Tolerance{1e-5, 1e-5} : defaultTolerance(t);
    r.check("o", r.read(dout), want, tol);
  };
  cases.push_back(std::move(c));
}
