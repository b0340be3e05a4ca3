//===- Seeds.cpp - the seed kernels of examples/kernels -------------------===//
//
// vector add, matrix copy, transpose, fused and persistent softmax and layer
// norm, built by tk::seeds::build* exactly as the examples launch them, over
// sizes of 1, sizes that are not multiples of the block, and several dtypes.
//
//===----------------------------------------------------------------------===//

#include "Cases.h"

#include "SeedKernels.h"

#include <algorithm>
#include <limits>

using namespace tk;
using namespace tk::conformance;

namespace {

/// Softmax of each row in double over the rounded inputs.
std::vector<double> softmaxReference(const std::vector<double> &x, int64_t rows,
                                     int64_t cols) {
  std::vector<double> want(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = &x[r * cols];
    double rowMax = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      rowMax = std::max(rowMax, row[c]);
    for (int64_t c = 0; c < cols; ++c)
      sum += std::exp(row[c] - rowMax);
    for (int64_t c = 0; c < cols; ++c)
      want[r * cols + c] = std::exp(row[c] - rowMax) / sum;
  }
  return want;
}

/// Softmax has no cancellation: every element is checked relative to its
/// own value. f32 goes through the backend's exp approximation and a long
/// f32 sum (a few 1e-7 relative); narrower dtypes round that once.
Tolerance softmaxTolerance(DType dtype) {
  if (dtype == DType::F32)
    return {1e-5, 0, 0x1p-149};
  return defaultTolerance(dtype);
}

/// Softmax rows up to the fixed BLOCK of 1024 columns, so that every shape
/// shares one kernel per dtype.
constexpr int64_t kSoftmaxBlock = 1024;

} // namespace

/// Launches the seed softmax, one program a row, and checks every row.
void tk::conformance::runSoftmax(CellRun &r) {
  int64_t rows = r.dim(0), cols = r.dim(1);
  std::vector<double> x = r.random(rows * cols, -4, 4, r.dtype(), 5);
  tk_arg in = r.input(r.dtype(), x);
  tk_arg out = r.output(r.dtype(), rows * cols);
  int32_t n = int32_t(cols);
  r.launch({int32_t(rows), 1, 1},
           {in, out, tk_arg_i32(n), tk_arg_i32(n), tk_arg_i32(n)});
  r.check("output", r.read(out), softmaxReference(x, rows, cols),
          softmaxTolerance(r.dtype()));
}

void tk::conformance::addSeedCases(std::vector<ConformanceCase> &cases) {
  const std::vector<DType> floats = {DType::F32, DType::F16, DType::BF16};

  {
    ConformanceCase c;
    c.name = "vector_add";
    c.summary = "seed: out = x + y, BLOCK 1024";
    c.dtypes = {DType::F32, DType::F16, DType::BF16, DType::I32};
    c.shapes = {shape({1}), shape({1000}), shape({4097})};
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      return seeds::buildVectorAdd(ctx, toMLIR(ctx, dtype), 1024, error);
    });
    c.run = [](CellRun &r) {
      int64_t n = r.dim(0);
      std::vector<double> x = r.random(n, -100, 100, r.dtype(), 1);
      std::vector<double> y = r.random(n, -100, 100, r.dtype(), 2);
      tk_arg dx = r.input(r.dtype(), x), dy = r.input(r.dtype(), y);
      tk_arg out = r.output(r.dtype(), n);
      r.launch({cdiv(n, 1024), 1, 1}, {dx, dy, out, tk_arg_i32(int32_t(n))});
      std::vector<double> want(n);
      for (int64_t i = 0; i < n; ++i)
        want[i] = roundTo(r.dtype(), x[i] + y[i]);
      r.check("out", r.read(out), want, defaultTolerance(r.dtype()));
    };
    cases.push_back(std::move(c));
  }

  {
    ConformanceCase c;
    c.name = "matrix_copy";
    c.summary = "seed: strided 2-D copy in 64x64 tiles; row stride cols+3";
    c.dtypes = {DType::F32, DType::F16, DType::BF16, DType::I8};
    c.shapes = {shape({1, 1}), shape({65, 33}), shape({130, 200})};
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      return seeds::buildMatrixCopy(ctx, toMLIR(ctx, dtype), 64, error);
    });
    c.run = [](CellRun &r) {
      int64_t rows = r.dim(0), cols = r.dim(1), stride = cols + 3;
      std::vector<double> src =
          r.random(rows * stride, -100, 100, r.dtype(), 3);
      tk_arg in = r.input(r.dtype(), src);
      // The gaps between rows must keep their fill: the masks stop at cols.
      tk_arg out = r.output(r.dtype(), rows * stride, -7);
      r.launch({cdiv(rows, 64), cdiv(cols, 64), 1},
               {in, out, tk_arg_i32(int32_t(rows)), tk_arg_i32(int32_t(cols)),
                tk_arg_i32(int32_t(stride)), tk_arg_i32(1)});
      std::vector<double> want(rows * stride, -7);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          want[i * stride + j] = src[i * stride + j];
      r.check("dst", r.read(out), want, {});
    };
    cases.push_back(std::move(c));
  }

  {
    ConformanceCase c;
    c.name = "matrix_transpose";
    c.summary = "seed: out = in^T in 32x32 tiles (tk.trans)";
    c.dtypes = {DType::F32, DType::F16, DType::BF16, DType::I16};
    c.shapes = {shape({1, 1}), shape({45, 70}), shape({128, 33})};
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      return seeds::buildMatrixTranspose(ctx, toMLIR(ctx, dtype), 32, error);
    });
    c.run = [](CellRun &r) {
      int64_t rows = r.dim(0), cols = r.dim(1);
      std::vector<double> in = r.random(rows * cols, -100, 100, r.dtype(), 4);
      tk_arg din = r.input(r.dtype(), in);
      tk_arg dout = r.output(r.dtype(), rows * cols);
      r.launch({cdiv(rows, 32), cdiv(cols, 32), 1},
               {din, dout, tk_arg_i32(int32_t(rows)), tk_arg_i32(int32_t(cols)),
                tk_arg_i32(int32_t(cols)), tk_arg_i32(1),
                tk_arg_i32(int32_t(rows)), tk_arg_i32(1)});
      std::vector<double> want(rows * cols);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          want[j * rows + i] = in[i * cols + j];
      r.check("output", r.read(dout), want, {});
    };
    cases.push_back(std::move(c));
  }

  {
    ConformanceCase c;
    c.name = "softmax";
    c.summary = "seed: fused row softmax in f32, one row per program";
    c.dtypes = floats;
    c.shapes = {shape({1, 1}), shape({17, 100}), shape({64, 781}),
                shape({3, 1024})};
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      return seeds::buildSoftmax(ctx, toMLIR(ctx, dtype), kSoftmaxBlock, error);
    });
    c.run = runSoftmax;
    cases.push_back(std::move(c));
  }

  {
    ConformanceCase c;
    c.name = "persistent_softmax";
    c.summary = "seed: softmax on a grid of occupancy x compute units";
    c.dtypes = floats;
    c.shapes = {shape({1, 1}), shape({100, 300}), shape({257, 1000})};
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      return seeds::buildPersistentSoftmax(ctx, toMLIR(ctx, dtype),
                                           kSoftmaxBlock, error);
    });
    c.run = [](CellRun &r) {
      int64_t rows = r.dim(0), cols = r.dim(1);
      std::vector<double> x = r.random(rows * cols, -4, 4, r.dtype(), 6);
      tk_arg in = r.input(r.dtype(), x);
      tk_arg out = r.output(r.dtype(), rows * cols);
      int32_t programs = int32_t(
          std::min<int64_t>(rows, int64_t(r.occupancy()) * r.computeUnits()));
      int32_t n = int32_t(cols);
      r.launch({programs, 1, 1}, {in, out, tk_arg_i32(n), tk_arg_i32(n),
                                  tk_arg_i32(int32_t(rows)), tk_arg_i32(n)});
      r.check("output", r.read(out), softmaxReference(x, rows, cols),
              softmaxTolerance(r.dtype()));
    };
    cases.push_back(std::move(c));
  }

  {
    ConformanceCase c;
    c.name = "layernorm";
    c.summary = "seed: (x - mean) * rsqrt(var + eps) * w + b, f32 statistics";
    c.dtypes = floats;
    c.shapes = {shape({1, 1}), shape({7, 100}), shape({33, 1000})};
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      return seeds::buildLayerNorm(ctx, toMLIR(ctx, dtype), 1024, error);
    });
    c.run = [](CellRun &r) {
      int64_t rows = r.dim(0), cols = r.dim(1);
      const double eps = 1e-5;
      std::vector<double> x = r.random(rows * cols, -1, 1, r.dtype(), 7);
      std::vector<double> w = r.random(cols, 0.5, 1.5, r.dtype(), 8);
      std::vector<double> b = r.random(cols, -0.5, 0.5, r.dtype(), 9);
      tk_arg dx = r.input(r.dtype(), x), dw = r.input(r.dtype(), w),
             db = r.input(r.dtype(), b);
      tk_arg dy = r.output(r.dtype(), rows * cols);
      r.launch({int32_t(rows), 1, 1},
               {dx, dy, dw, db, tk_arg_i32(int32_t(cols)),
                tk_arg_i32(int32_t(cols)), tk_arg_f32(float(eps))});
      std::vector<double> want(rows * cols);
      for (int64_t i = 0; i < rows; ++i) {
        double mean = 0, var = 0;
        for (int64_t j = 0; j < cols; ++j)
          mean += x[i * cols + j];
        mean /= double(cols);
        for (int64_t j = 0; j < cols; ++j)
          var += (x[i * cols + j] - mean) * (x[i * cols + j] - mean);
        var /= double(cols);
        double rstd = 1 / std::sqrt(var + double(float(eps)));
        for (int64_t j = 0; j < cols; ++j)
          want[i * cols + j] = (x[i * cols + j] - mean) * rstd * w[j] + b[j];
      }
      // The f32 statistics' error (a few ulps of f32 of the centred,
      // scaled value) survives the cancellation of "+ b": a floor of the
      // output's scale; narrower dtypes round the f32 result once.
      Tolerance tol = r.dtype() == DType::F32 ? epsTolerance(DType::F32, 64, 64)
                                              : defaultTolerance(r.dtype());
      tol.floor = 64 * epsilonOf(DType::F32);
      r.check("y", r.read(dy), want, tol);
    };
    cases.push_back(std::move(c));
  }
}
