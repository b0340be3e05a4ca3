//===- Matmul.cpp - tk.dot: dtypes, transposed operands -------------------===//
//
// The seed matmul (grouped program order, K loop, masked edges) over f16,
// bf16, f32 (input_precision ieee: no tf32) and i8 -> i32, with a or b stored
// transposed and read through strides, and split over K into f32 planes;
// a kernel that transposes both operand tiles in registers with tk.trans
// before the dot; and one that sums each row of its K loop's product (on a
// GPU with a matrix unit the held accumulator is moved to workgroup memory
// after the loop by an explicit tkw.convert_layout, for the reduction).
//
//===----------------------------------------------------------------------===//

#include "Cases.h"

#include "SeedKernels.h"

#include <algorithm>
#include <array>
#include <cmath>

using namespace tk;
using namespace tk::conformance;

namespace {

/// The accumulator / result dtype of a dot of `dtype` inputs.
DType accumulatorOf(DType dtype) {
  return dtype == DType::I8 ? DType::I32 : DType::F32;
}

/// Inputs: small non-zero integers for i8 (exact i32 sums; a product of
/// 1x1x1 that is 0 would be the answer of a kernel that writes zeros),
/// [-1, 1) otherwise; for fp8, magnitudes of at least 1/4, so that a
/// product is not within fp8's coarse tolerance of zero either.
std::vector<double> operand(CellRun &r, size_t count, uint32_t seed) {
  bool fp8 = r.dtype() == DType::F8E4M3 || r.dtype() == DType::F8E5M2;
  if (fp8) {
    std::vector<double> values = r.random(count, -1, 1, DType::F32, seed);
    for (double &v : values)
      v = roundTo(r.dtype(), std::copysign(0.25 + 0.75 * std::fabs(v), v));
    return values;
  }
  if (r.dtype() != DType::I8)
    return r.random(count, -1, 1, r.dtype(), seed);
  std::vector<double> values = r.random(count, -8, 8, DType::I8, seed);
  for (double &v : values)
    v = v == 0 ? 1 : v;
  return values;
}

/// c = a @ b in double from row-major a (MxK) and b (KxN); `bound` gets the
/// rounding-error bound of the dot's accumulation (`acc`: f32, K eps sum
/// |a b| per element; 0 for i32).
std::vector<double> matmulReference(const std::vector<double> &a,
                                    const std::vector<double> &b, int64_t M,
                                    int64_t N, int64_t K,
                                    std::vector<double> &bound,
                                    DType acc = DType::F32) {
  std::vector<double> c(M * N, 0.0);
  bound.assign(M * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double sum = 0, sumAbs = 0;
      for (int64_t k = 0; k < K; ++k) {
        sum += a[i * K + k] * b[k * N + j];
        sumAbs += std::fabs(a[i * K + k] * b[k * N + j]);
      }
      c[i * N + j] = sum;
      bound[i * N + j] = isFloat(acc) ? sumErrorBound(acc, sumAbs, K) : 0;
    }
  return c;
}

/// `m` (rows x cols, row-major) stored transposed (cols x rows).
std::vector<double> transposed(const std::vector<double> &m, int64_t rows,
                               int64_t cols) {
  std::vector<double> t(m.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      t[j * rows + i] = m[i * cols + j];
  return t;
}

const std::vector<DType> kDotTypes = {DType::F16, DType::BF16, DType::F32,
                                      DType::I8};
/// The seed matmul's: fp8 too, where a backend declares it.
const std::vector<DType> kSeedDotTypes = {DType::F16,    DType::BF16,
                                          DType::F32,    DType::I8,
                                          DType::F8E4M3, DType::F8E5M2};

} // namespace

/// Runs the seed matmul built with `blockM` x `blockN` tiles on the cell's
/// shape, its variant storing a ("tn") or b ("nt") transposed.
void tk::conformance::runMatmul(CellRun &r, int64_t blockM, int64_t blockN,
                                bool unitInnerStrides) {
  int64_t M = r.dim(0), N = r.dim(1), K = r.dim(2);
  DType out = r.dtype() == DType::I8 ? DType::I32 : r.dtype();
  std::vector<double> a = operand(r, M * K, 11), b = operand(r, K * N, 12);
  bool transA = r.shape().variantName == "tn";
  bool transB = r.shape().variantName == "nt";
  // A transposed operand is stored transposed and read with swapped
  // strides: the kernel sees the same logical matrix.
  tk_arg da = r.input(r.dtype(), transA ? transposed(a, M, K) : a);
  tk_arg db = r.input(r.dtype(), transB ? transposed(b, K, N) : b);
  tk_arg dc = r.output(out, M * N);
  int32_t strideAm = transA ? 1 : int32_t(K);
  int32_t strideAk = transA ? int32_t(M) : 1;
  int32_t strideBk = transB ? 1 : int32_t(N);
  int32_t strideBn = transB ? int32_t(K) : 1;
  std::vector<tk_arg> args = {da,
                              db,
                              dc,
                              tk_arg_i32(int32_t(M)),
                              tk_arg_i32(int32_t(N)),
                              tk_arg_i32(int32_t(K))};
  if (unitInnerStrides) // stride_ak, stride_bn, stride_cn are constexprs
    args.insert(args.end(), {tk_arg_i32(strideAm), tk_arg_i32(strideBk),
                             tk_arg_i32(int32_t(N))});
  else
    args.insert(args.end(), {tk_arg_i32(strideAm), tk_arg_i32(strideAk),
                             tk_arg_i32(strideBk), tk_arg_i32(strideBn),
                             tk_arg_i32(int32_t(N)), tk_arg_i32(1)});
  r.launch({cdiv(M, blockM) * cdiv(N, blockN), 1, 1}, args);
  std::vector<double> bound;
  std::vector<double> want =
      matmulReference(a, b, M, N, K, bound, accumulatorOf(r.dtype()));
  r.check("c", r.read(dc), want, defaultTolerance(out), &bound);
}

/// The seed matmul with unit inner strides and row strides padded to a
/// multiple of 16 elements, as its kernel declares them, over M, N and K of
/// any size: a tile's edge may cut a 16-byte run of a row (the padding, NaN
/// in the inputs, must not be read into the product; c's padding, -7, must
/// not be written). A K-major b is stored as N rows of Kp.
void tk::conformance::runPaddedMatmul(CellRun &r, const PaddedMatmul &options) {
  int64_t M = r.dim(0), N = r.dim(1), K = r.dim(2);
  auto padded = [](int64_t n) { return (n + 15) / 16 * 16; };
  int64_t Kp = padded(K), Np = padded(N);
  bool kMajorB = options.kMajorB;
  DType out = options.out              ? *options.out
              : r.dtype() == DType::I8 ? DType::I32
                                       : r.dtype();
  double gap = r.dtype() == DType::I8 ? 127 : std::nan("");
  std::vector<double> a = operand(r, M * K, 15), b = operand(r, K * N, 16);
  std::vector<double> aRows(M * Kp, gap), bRows(kMajorB ? N * Kp : K * Np, gap);
  for (int64_t m = 0; m < M; ++m)
    std::copy_n(&a[m * K], K, &aRows[m * Kp]);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n)
      bRows[kMajorB ? n * Kp + k : k * Np + n] = b[k * N + n];
  tk_arg da = r.input(r.dtype(), aRows), db = r.input(r.dtype(), bRows);
  tk_arg dc = r.output(out, M * Np, -7.0);
  // stride_am, b's row stride (stride_bn for a K-major b, else stride_bk),
  // stride_cm; then the scales: per tensor, powers of two apart from 1, so
  // that their product is exact; per row, a pattern of such values.
  constexpr float kScaleA = 0.75f, kScaleB = 1.5f;
  auto rowScale = [](int64_t i) { return 0.5 * double(1 + i % 3); };
  auto colScale = [](int64_t j) { return j % 2 ? 0.75 : 1.25; };
  std::vector<tk_arg> args = {da,
                              db,
                              dc,
                              tk_arg_i32(int32_t(M)),
                              tk_arg_i32(int32_t(N)),
                              tk_arg_i32(int32_t(K)),
                              tk_arg_i32(int32_t(Kp)),
                              tk_arg_i32(int32_t(kMajorB ? Kp : Np)),
                              tk_arg_i32(int32_t(Np))};
  if (options.scales == seeds::MatmulScales::PerTensor) {
    args.insert(args.end(), {tk_arg_f32(kScaleA), tk_arg_f32(kScaleB)});
  } else if (options.scales == seeds::MatmulScales::PerRow) {
    std::vector<double> rows(M), cols(N);
    for (int64_t i = 0; i < M; ++i)
      rows[i] = rowScale(i);
    for (int64_t j = 0; j < N; ++j)
      cols[j] = colScale(j);
    args.insert(args.end(),
                {r.input(DType::F32, rows), r.input(DType::F32, cols)});
  }
  r.launch({cdiv(M, options.blockM) * cdiv(N, options.blockN), 1, 1}, args);
  std::vector<double> c = r.read(dc), got(M * N);
  for (int64_t m = 0; m < M; ++m) {
    std::copy_n(&c[m * Np], N, &got[m * N]);
    for (int64_t n = N; n < Np; ++n)
      if (c[m * Np + n] != -7.0)
        return r.fail("c[" + std::to_string(m) + ", " + std::to_string(n) +
                      "] is padding past N = " + std::to_string(N) +
                      " and was written");
  }
  std::vector<double> bound;
  std::vector<double> want =
      matmulReference(a, b, M, N, K, bound, accumulatorOf(r.dtype()));
  // The f32 product times the scales' product (exact in f32), then one
  // rounding.
  if (options.scales != seeds::MatmulScales::None)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double scale = options.scales == seeds::MatmulScales::PerTensor
                           ? double(kScaleA) * double(kScaleB)
                           : rowScale(m) * colScale(n);
        want[m * N + n] *= scale;
        bound[m * N + n] *= scale;
      }
  r.check("c", got, want, defaultTolerance(out), &bound);
}

namespace {

/// The result type of the K-major cases: f16 for fp8 operands, as fp8
/// matmuls return (an fp8 result's tolerance would pass a corrupted
/// element near the -7 of c's padding), else the operands'.
DType kMajorOutput(DType dtype) {
  return dtype == DType::F8E4M3 || dtype == DType::F8E5M2 ? DType::F16 : dtype;
}

} // namespace

void tk::conformance::addMatmulCases(std::vector<ConformanceCase> &cases) {
  {
    ConformanceCase c;
    c.name = "matmul";
    c.summary = "seed: grouped matmul 64x64x32; a^T / b^T through strides";
    c.needs.dtypes = TK_DTYPE_BIT_I32 | TK_DTYPE_BIT_F32;
    c.dtypes = kSeedDotTypes;
    c.shapes = withVariants({shape({1, 1, 1}), shape({33, 17, 45}),
                             shape({130, 70, 100}), shape({64, 64, 64})},
                            {"nn", "tn", "nt"});
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      // Float results in the input dtype (as the seed), i8 into i32.
      DType out = dtype == DType::I8 ? DType::I32 : dtype;
      seeds::MatmulConfig config; // input_precision ieee: tf32 off
      return seeds::buildMatmul(ctx, toMLIR(ctx, dtype), toMLIR(ctx, out),
                                config, error);
    });
    c.run = [](CellRun &r) { runMatmul(r, 64, 64); };
    cases.push_back(std::move(c));
  }

  {
    // Tiles whose operands span whole 128-byte rows along K and N: on
    // sm_90a wgmma reads both through 128-byte swizzled layouts.
    ConformanceCase c;
    c.name = "matmul_wide";
    c.summary = "the seed matmul with 128x128x64 tiles; a^T / b^T through "
                "strides";
    c.needs.dtypes = TK_DTYPE_BIT_F32;
    c.dtypes = {DType::F16, DType::BF16};
    c.shapes = withVariants(
        {shape({1, 1, 1}), shape({130, 70, 100}), shape({256, 256, 192})},
        {"nn", "tn", "nt"});
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      seeds::MatmulConfig config;
      config.blockM = 128;
      config.blockN = 128;
      config.blockK = 64;
      return seeds::buildMatmul(ctx, toMLIR(ctx, dtype), toMLIR(ctx, dtype),
                                config, error);
    });
    c.run = [](CellRun &r) { runMatmul(r, 128, 128); };
    cases.push_back(std::move(c));
  }

  // The seed matmul with row strides declared and padded to 16 elements;
  // with `peelK`, its K loop in two (MatmulConfig::peelK).
  auto paddedMatmul = [&](const char *name, const char *summary,
                          std::vector<Shape> shapes, bool peelK,
                          std::vector<DType> dtypes) {
    ConformanceCase c;
    c.name = name;
    c.summary = summary;
    c.needs.dtypes = TK_DTYPE_BIT_I32 | TK_DTYPE_BIT_F32;
    c.dtypes = std::move(dtypes);
    c.shapes = std::move(shapes);
    c.build = TK_KERNEL_BUILDER([peelK](mlir::MLIRContext *ctx, DType dtype,
                                        const Shape &, std::string *error) {
      DType out = dtype == DType::I8 ? DType::I32 : dtype;
      seeds::MatmulConfig config;
      config.rowStrideDivisibility = 16;
      config.peelK = peelK;
      return seeds::buildMatmul(ctx, toMLIR(ctx, dtype), toMLIR(ctx, out),
                                config, error);
    });
    c.settings = [](DType, const Shape &) {
      CompileSettings settings;
      settings.constexprs = {
          {"stride_ak", 1}, {"stride_bn", 1}, {"stride_cn", 1}};
      return settings;
    };
    c.run = [](CellRun &r) { runPaddedMatmul(r, {}); };
    cases.push_back(std::move(c));
  };
  paddedMatmul("matmul_padded_rows",
               "the seed matmul, row strides declared and padded to 16 "
               "elements, sizes of any divisibility: tile edges cut 16-byte "
               "runs",
               {shape({1, 1, 1}), shape({33, 17, 45}), shape({130, 70, 100}),
                shape({70, 130, 9})},
               /*peelK=*/false, kDotTypes);
  // K: under one slice (no whole slice), two and a part, whole slices only
  // (no cut slice). The dtypes of 16-byte runs of 8 and of 4 elements.
  paddedMatmul("matmul_peeled_k",
               "the padded-row matmul with its K loop in two "
               "(MatmulConfig::peelK): whole slices unmasked, then the slice "
               "K cuts, masked",
               {shape({1, 1, 1}), shape({33, 17, 77}), shape({130, 70, 64})},
               /*peelK=*/true, {DType::F16, DType::F32});

  {
    ConformanceCase c;
    c.name = "matmul_walk_across_loops";
    c.summary = "a K loop in two whose pointer walks go on from the first "
                "loop into the second: 16-byte loads in the first, K-masked "
                "ones in the second, so the walks change layout between them";
    c.needs.dtypes = TK_DTYPE_BIT_F32;
    c.dtypes = {DType::F16};
    // No whole slice (the second loop converts the walk's start), and two
    // and a part (it converts the first loop's walk).
    c.shapes = {shape({1, 1, 1}), shape({33, 17, 77})};
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      KernelBuilder k(ctx, "matmul_walk_across_loops");
      mlir::Type type = toMLIR(ctx, dtype);
      Tile a = k.argPtr("a", type, 16), b = k.argPtr("b", type, 16);
      Tile c = k.argPtr("c", type, 16);
      Tile M = k.argI32("M"), N = k.argI32("N"), K = k.argI32("K");
      // Row strides padded to 16 elements, as runPaddedMatmul passes them.
      Tile strideAm = k.argI32("stride_am", 16);
      Tile strideBk = k.argI32("stride_bk", 16);
      Tile strideCm = k.argI32("stride_cm", 16);
      int64_t BM = k.constexpr_("BLOCK_M", 64);
      int64_t BN = k.constexpr_("BLOCK_N", 64);
      int64_t BK = k.constexpr_("BLOCK_K", 32);
      Tile tilesN = k.cdiv(N, BN);
      Tile offsM = (k.programId(0) / tilesN) * BM + k.arange(0, BM);
      Tile offsN = (k.programId(0) % tilesN) * BN + k.arange(0, BN);
      Tile rk = k.arange(0, BK);
      Tile mMask = offsM.col() < M, nMask = offsN.row() < N;
      Tile aPtrs = a + offsM.col() * strideAm + rk.row();
      Tile bPtrs = b + rk.col() * strideBk + offsN.row();
      Tile whole = K / BK;
      auto trip = [&](bool kMasked) {
        return [&, kMasked](
                   Tile kt,
                   llvm::ArrayRef<Tile> carried) -> llvm::SmallVector<Tile> {
          Tile aMask = mMask, bMask = nMask;
          if (kMasked) {
            Tile left = K - kt * BK;
            aMask = mMask & (rk.row() < left);
            bMask = (rk.col() < left) & nMask;
          }
          Tile aTile = k.load(carried[1], aMask, 0);
          Tile bTile = k.load(carried[2], bMask, 0);
          return {k.dot(aTile, bTile, carried[0]), carried[1] + BK,
                  carried[2] + strideBk * BK};
        };
      };
      llvm::SmallVector<Tile> walk = k.forLoop(
          0, whole, 1, {k.zeros({BM, BN}, k.f32()), aPtrs, bPtrs}, trip(false));
      if (walk.empty())
        return finishKernel(k, error);
      walk = k.forLoop(whole, k.cdiv(K, BK), 1, walk, trip(true));
      if (walk.empty())
        return finishKernel(k, error);
      k.store(c + offsM.col() * strideCm + offsN.row(), k.cast(walk[0], type),
              mMask & nMask);
      return finishKernel(k, error);
    });
    c.run = [](CellRun &r) { runPaddedMatmul(r, {}); };
    cases.push_back(std::move(c));
  }

  {
    // b stored as N rows of K, as fp8 matmuls take it (cuBLASLt's "TN"):
    // on sm_90a wgmma reads fp8 operands K-major only, which both then are
    // as loaded. 128x128x64 tiles, a warpgroup's product; 64x64x32 at one
    // warpgroup of 64 rows.
    for (auto [blockM, blockN, blockK] :
         {std::array<int64_t, 3>{128, 128, 64}, {64, 64, 32}}) {
      ConformanceCase c;
      c.name = blockM == 128 ? "matmul_k_major_b" : "matmul_k_major_b_64";
      c.summary = "the seed matmul with b stored as N rows of K (TN), rows "
                  "padded to 16 elements, fp8 into f16; " +
                  std::to_string(blockM) + "x" + std::to_string(blockN) + "x" +
                  std::to_string(blockK) + " tiles";
      c.needs.dtypes = TK_DTYPE_BIT_F32;
      c.dtypes = {DType::F16, DType::F8E4M3, DType::F8E5M2};
      c.shapes = {shape({1, 1, 1}), shape({33, 17, 45}), shape({130, 70, 100}),
                  shape({256, 256, 192})};
      c.build = TK_KERNEL_BUILDER([=](mlir::MLIRContext *ctx, DType dtype,
                                      const Shape &, std::string *error) {
        seeds::MatmulConfig config;
        config.blockM = blockM;
        config.blockN = blockN;
        config.blockK = blockK;
        config.rowStrideDivisibility = 16;
        config.kMajorB = true;
        return seeds::buildMatmul(ctx, toMLIR(ctx, dtype),
                                  toMLIR(ctx, kMajorOutput(dtype)), config,
                                  error);
      });
      c.settings = [](DType, const Shape &) {
        CompileSettings settings;
        settings.constexprs = {
            {"stride_ak", 1}, {"stride_bk", 1}, {"stride_cn", 1}};
        return settings;
      };
      c.run = [=](CellRun &r) {
        PaddedMatmul options;
        options.blockM = blockM;
        options.blockN = blockN;
        options.kMajorB = true;
        options.out = kMajorOutput(r.dtype());
        runPaddedMatmul(r, options);
      };
      cases.push_back(std::move(c));
    }
  }

  {
    ConformanceCase c;
    c.name = "matmul_tf32";
    c.summary = "the seed matmul on f32 with input_precision tf32: operands "
                "may be rounded to tf32 (10-bit mantissa)";
    c.needs.dtypes = TK_DTYPE_BIT_F32;
    c.dtypes = {DType::F32};
    c.shapes = {shape({1, 1, 1}), shape({33, 17, 45}), shape({130, 70, 100}),
                shape({64, 64, 64})};
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      seeds::MatmulConfig config;
      config.inputPrecision = InputPrecision::TF32;
      return seeds::buildMatmul(ctx, toMLIR(ctx, dtype), toMLIR(ctx, dtype),
                                config, error);
    });
    c.run = [](CellRun &r) {
      int64_t M = r.dim(0), N = r.dim(1), K = r.dim(2);
      std::vector<double> a = operand(r, M * K, 13), b = operand(r, K * N, 14);
      tk_arg da = r.input(DType::F32, a), db = r.input(DType::F32, b);
      tk_arg dc = r.output(DType::F32, M * N);
      r.launch({cdiv(M, 64) * cdiv(N, 64), 1, 1},
               {da, db, dc, tk_arg_i32(int32_t(M)), tk_arg_i32(int32_t(N)),
                tk_arg_i32(int32_t(K)), tk_arg_i32(int32_t(K)), tk_arg_i32(1),
                tk_arg_i32(int32_t(N)), tk_arg_i32(1), tk_arg_i32(int32_t(N)),
                tk_arg_i32(1)});
      std::vector<double> bound;
      std::vector<double> want = matmulReference(a, b, M, N, K, bound);
      // Each product may lose 2^-10 of each operand to tf32 (truncated):
      // 2^-9 sum |a b| on top of the f32 sum's K eps sum |a b|.
      double tf32 =
          0x1p-9 / (double(std::max<int64_t>(K, 1)) * epsilonOf(DType::F32));
      for (double &x : bound)
        x *= 1 + tf32;
      r.check("c", r.read(dc), want, defaultTolerance(DType::F32), &bound);
    };
    cases.push_back(std::move(c));
  }

  {
    // The first kernel of a split-K matmul: each program column of the grid
    // sums one slice of K into its own f32 plane.
    ConformanceCase c;
    c.name = "matmul_split_k";
    c.summary = "the seed matmul split over K: slices of 64 rows of K into "
                "f32 planes";
    c.needs.dtypes = TK_DTYPE_BIT_F32;
    c.dtypes = {DType::F16, DType::BF16, DType::F32};
    c.shapes = {shape({1, 1, 1}), shape({16, 70, 200}), shape({33, 64, 128})};
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      seeds::MatmulConfig config;
      config.splitK = true;
      return seeds::buildMatmul(ctx, toMLIR(ctx, dtype),
                                toMLIR(ctx, DType::F32), config, error);
    });
    c.run = [](CellRun &r) {
      int64_t M = r.dim(0), N = r.dim(1), K = r.dim(2);
      const int64_t kPerSplit = 64; // a multiple of BLOCK_K (32) and 16
      int64_t splits = cdiv(K, kPerSplit);
      std::vector<double> a = operand(r, M * K, 15), b = operand(r, K * N, 16);
      tk_arg da = r.input(r.dtype(), a), db = r.input(r.dtype(), b);
      tk_arg dc = r.output(DType::F32, splits * M * N);
      r.launch({cdiv(M, 64) * cdiv(N, 64), int32_t(splits), 1},
               {da, db, dc, tk_arg_i32(int32_t(M)), tk_arg_i32(int32_t(N)),
                tk_arg_i32(int32_t(K)), tk_arg_i32(int32_t(K)), tk_arg_i32(1),
                tk_arg_i32(int32_t(N)), tk_arg_i32(1), tk_arg_i32(int32_t(N)),
                tk_arg_i32(1), tk_arg_i32(int32_t(kPerSplit)),
                tk_arg_i32(int32_t(M * N))});
      // Plane s is the product of a's columns and b's rows of slice s.
      std::vector<double> want, bound;
      for (int64_t s = 0; s < splits; ++s) {
        int64_t k0 = s * kPerSplit, k1 = std::min(K, k0 + kPerSplit);
        std::vector<double> aSlice, bSlice, sliceBound;
        for (int64_t i = 0; i < M; ++i)
          aSlice.insert(aSlice.end(), a.begin() + i * K + k0,
                        a.begin() + i * K + k1);
        bSlice.assign(b.begin() + k0 * N, b.begin() + k1 * N);
        std::vector<double> plane =
            matmulReference(aSlice, bSlice, M, N, k1 - k0, sliceBound);
        want.insert(want.end(), plane.begin(), plane.end());
        bound.insert(bound.end(), sliceBound.begin(), sliceBound.end());
      }
      r.check("c", r.read(dc), want, defaultTolerance(DType::F32), &bound);
    };
    cases.push_back(std::move(c));
  }

  {
    ConformanceCase c;
    c.name = "dot_trans";
    c.summary = "c = a @ b from a stored KxM, b stored NxK, tk.trans on tiles";
    c.needs.dtypes = TK_DTYPE_BIT_I32 | TK_DTYPE_BIT_F32;
    c.dtypes = kDotTypes;
    c.shapes = {shape({1, 1, 1}), shape({45, 33, 40}), shape({64, 96, 32})};
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      KernelBuilder k(ctx, "dot_trans");
      mlir::Type in = toMLIR(ctx, dtype);
      mlir::Type acc = toMLIR(ctx, accumulatorOf(dtype));
      Tile aT = k.argPtr("a_t", in, 16); // K x M
      Tile bT = k.argPtr("b_t", in, 16); // N x K
      Tile cPtr = k.argPtr("c", acc, 16);
      Tile M = k.argI32("M"), N = k.argI32("N"), K = k.argI32("K");
      int64_t BM = k.constexpr_("BLOCK_M", 32);
      int64_t BN = k.constexpr_("BLOCK_N", 32);
      int64_t BK = k.constexpr_("BLOCK_K", 16);
      Tile pidM = k.programId(0), pidN = k.programId(1);
      Tile startM = pidM * BM;
      Tile offsM = startM + k.arange(0, BM);
      Tile startN = pidN * BN;
      Tile offsN = startN + k.arange(0, BN);
      Tile rk = k.arange(0, BK);
      Tile accInit = k.zeros({BM, BN}, acc);
      llvm::SmallVector<Tile> result = k.forLoop(
          0, K, BK, {accInit},
          [&](Tile k0,
              llvm::ArrayRef<Tile> carried) -> llvm::SmallVector<Tile> {
            Tile offsK = k0 + rk;
            // a^T tile [BK, BM]: element (k, m) at k * M + m.
            Tile aRow = offsK.col();
            Tile aCol = offsM.row();
            Tile aOff = aRow * M;
            Tile aIdx = aOff + aCol;
            Tile aKMask = aRow < K;
            Tile aMMask = aCol < M;
            Tile aMask = aKMask & aMMask;
            Tile aTile = k.load(aT + aIdx, aMask, 0);
            // b^T tile [BN, BK]: element (n, k) at n * K + k.
            Tile bRow = offsN.col();
            Tile bCol = offsK.row();
            Tile bOff = bRow * K;
            Tile bIdx = bOff + bCol;
            Tile bNMask = bRow < N;
            Tile bKMask = bCol < K;
            Tile bMask = bNMask & bKMask;
            Tile bTile = k.load(bT + bIdx, bMask, 0);
            Tile a = k.trans(aTile);
            Tile b = k.trans(bTile);
            return {k.dot(a, b, carried[0])};
          });
      if (result.empty())
        return finishKernel(k, error);
      Tile cRow = offsM.col();
      Tile cCol = offsN.row();
      Tile cOff = cRow * N;
      Tile cIdx = cOff + cCol;
      Tile cMMask = cRow < M;
      Tile cNMask = cCol < N;
      Tile cMask = cMMask & cNMask;
      k.store(cPtr + cIdx, result[0], cMask);
      return finishKernel(k, error);
    });
    c.run = [](CellRun &r) {
      int64_t M = r.dim(0), N = r.dim(1), K = r.dim(2);
      std::vector<double> a = operand(r, M * K, 13), b = operand(r, K * N, 14);
      tk_arg da = r.input(r.dtype(), transposed(a, M, K));
      tk_arg db = r.input(r.dtype(), transposed(b, K, N));
      DType acc = accumulatorOf(r.dtype());
      tk_arg dc = r.output(acc, M * N);
      r.launch({cdiv(M, 32), cdiv(N, 32), 1},
               {da, db, dc, tk_arg_i32(int32_t(M)), tk_arg_i32(int32_t(N)),
                tk_arg_i32(int32_t(K))});
      std::vector<double> bound;
      std::vector<double> want = matmulReference(a, b, M, N, K, bound, acc);
      r.check("c", r.read(dc), want, defaultTolerance(acc), &bound);
    };
    cases.push_back(std::move(c));
  }

  {
    ConformanceCase c;
    c.name = "matmul_row_sums";
    c.summary = "out[m] = sum_n (a @ b)[m, n]: a K loop's product reduced "
                "along its rows";
    c.needs.dtypes = TK_DTYPE_BIT_F32;
    c.dtypes = {DType::F16, DType::BF16, DType::F32};
    c.shapes = {shape({1, 1, 1}), shape({45, 64, 40}), shape({128, 64, 96})};
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      KernelBuilder k(ctx, "matmul_row_sums");
      mlir::Type in = toMLIR(ctx, dtype);
      mlir::Type acc = toMLIR(ctx, DType::F32);
      Tile aPtr = k.argPtr("a", in, 16); // M x K
      Tile bPtr = k.argPtr("b", in, 16); // K x 64
      Tile outPtr = k.argPtr("out", acc, 16);
      Tile M = k.argI32("M"), K = k.argI32("K");
      int64_t BM = k.constexpr_("BLOCK_M", 64);
      int64_t BN = k.constexpr_("BLOCK_N", 64);
      int64_t BK = k.constexpr_("BLOCK_K", 32);
      Tile offsM = k.programId(0) * BM + k.arange(0, BM);
      Tile offsN = k.arange(0, BN);
      Tile rk = k.arange(0, BK);
      Tile accInit = k.zeros({BM, BN}, acc);
      llvm::SmallVector<Tile> result = k.forLoop(
          0, K, BK, {accInit},
          [&](Tile k0,
              llvm::ArrayRef<Tile> carried) -> llvm::SmallVector<Tile> {
            Tile offsK = k0 + rk;
            Tile aRow = offsM.col();
            Tile aCol = offsK.row();
            Tile aMask = (aRow < M) & (aCol < K);
            Tile a = k.load(aPtr + (aRow * K + aCol), aMask, 0);
            Tile bRow = offsK.col();
            Tile bCol = offsN.row();
            Tile b = k.load(bPtr + (bRow * BN + bCol), bRow < K, 0);
            return {k.dot(a, b, carried[0])};
          });
      if (result.empty())
        return finishKernel(k, error);
      k.store(outPtr + offsM, k.sum(result[0], 1), offsM < M);
      return finishKernel(k, error);
    });
    c.run = [](CellRun &r) {
      int64_t M = r.dim(0), N = 64, K = r.dim(2);
      std::vector<double> a = operand(r, M * K, 17), b = operand(r, K * N, 18);
      tk_arg da = r.input(r.dtype(), a), db = r.input(r.dtype(), b);
      tk_arg dout = r.output(DType::F32, M);
      r.launch({cdiv(M, 64), 1, 1},
               {da, db, dout, tk_arg_i32(int32_t(M)), tk_arg_i32(int32_t(K))});
      std::vector<double> bound;
      std::vector<double> c = matmulReference(a, b, M, N, K, bound);
      // Each row sums N products, each within its bound, in f32.
      std::vector<double> want(M, 0.0), rowBound(M, 0.0);
      for (int64_t i = 0; i < M; ++i) {
        double sumAbs = 0;
        for (int64_t j = 0; j < N; ++j) {
          want[i] += c[i * N + j];
          rowBound[i] += bound[i * N + j];
          sumAbs += std::fabs(c[i * N + j]);
        }
        rowBound[i] += sumErrorBound(DType::F32, sumAbs, N);
      }
      r.check("out", r.read(dout), want, defaultTolerance(DType::F32),
              &rowBound);
    };
    cases.push_back(std::move(c));
  }
  {
    // A 16-bit product read down its columns: a matrix unit accumulates it
    // in f32, rounded into the 16-bit tile in its fragment's registers, and
    // the column reduction combines them across lanes and warps.
    ConformanceCase c;
    c.name = "dot_16bit_col_sums";
    c.summary = "out[n] = sum_m c[m, n] over a 64-row block, c = a @ b "
                "rounded to f16";
    c.needs.dtypes = TK_DTYPE_BIT_F32;
    // f16 only: a dot does not accumulate into bf16 (nor does Triton's).
    c.dtypes = {DType::F16};
    c.shapes = {shape({1, 1}), shape({45, 40}), shape({130, 64})};
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      KernelBuilder k(ctx, "dot_16bit_col_sums");
      mlir::Type in = toMLIR(ctx, dtype);
      mlir::Type f32 = toMLIR(ctx, DType::F32);
      Tile aPtr = k.argPtr("a", in, 16); // M x K
      Tile bPtr = k.argPtr("b", in, 16); // K x 64
      Tile outPtr = k.argPtr("out", f32, 16);
      Tile M = k.argI32("M"), K = k.argI32("K");
      int64_t BM = k.constexpr_("BLOCK_M", 64);
      int64_t BN = k.constexpr_("BLOCK_N", 64);
      int64_t BK = k.constexpr_("BLOCK_K", 64);
      Tile pid = k.programId(0);
      Tile offsM = pid * BM + k.arange(0, BM);
      Tile offsN = k.arange(0, BN);
      Tile rk = k.arange(0, BK);
      Tile aRow = offsM.col(), aCol = rk.row();
      Tile a = k.load(aPtr + (aRow * K + aCol), (aRow < M) & (aCol < K), 0);
      Tile bRow = rk.col(), bCol = offsN.row();
      Tile b = k.load(bPtr + (bRow * BN + bCol), bRow < K, 0);
      Tile product = k.dot(a, b, k.zeros({BM, BN}, in));
      k.store(outPtr + (pid * BN + offsN), k.sum(product.to(f32), 0));
      return finishKernel(k, error);
    });
    c.run = [](CellRun &r) {
      int64_t M = r.dim(0), N = 64, K = r.dim(1);
      DType dtype = r.dtype();
      std::vector<double> a = operand(r, M * K, 19), b = operand(r, K * N, 20);
      tk_arg da = r.input(dtype, a), db = r.input(dtype, b);
      int64_t blocks = cdiv(M, 64);
      tk_arg dout = r.output(DType::F32, blocks * N);
      r.launch({int32_t(blocks), 1, 1},
               {da, db, dout, tk_arg_i32(int32_t(M)), tk_arg_i32(int32_t(K))});
      std::vector<double> bound;
      std::vector<double> c = matmulReference(a, b, M, N, K, bound);
      // Each element: its f32 accumulation's bound, then one rounding to
      // the dtype (an ulp of the perturbed value, its subnormal spacing
      // near zero); each column then sums up to 64 of them in f32.
      double eps = epsilonOf(dtype);
      double tiny = std::ldexp(1.0, -24); // f16's subnormal spacing
      std::vector<double> want(blocks * N, 0.0), colBound(blocks * N, 0.0);
      for (int64_t p = 0; p < blocks; ++p)
        for (int64_t j = 0; j < N; ++j) {
          double sumAbs = 0;
          int64_t rows = std::min<int64_t>(64, M - p * 64);
          for (int64_t i = p * 64; i < p * 64 + rows; ++i) {
            double value = c[i * N + j], err = bound[i * N + j];
            want[p * N + j] += value;
            colBound[p * N + j] += err + (std::fabs(value) + err) * eps + tiny;
            sumAbs += std::fabs(value) + err;
          }
          colBound[p * N + j] += sumErrorBound(DType::F32, sumAbs, rows);
        }
      r.check("out", r.read(dout), want, defaultTolerance(DType::F32),
              &colBound);
    };
    cases.push_back(std::move(c));
  }
}
