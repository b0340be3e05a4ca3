//===- Scan.cpp - inclusive cumsum along each axis ------------------------===//
//
// One program per matrix of a batch: a masked 64x128 tile, tk.scan add along
// axis 1 (each row's running sum) and along axis 0 (each column's). The
// reverse case scans from the end: each row's sums of the elements at and
// after each one, and, with a combiner that does not commute (the later
// value where it is not 0, else the running one), each column's nearest
// nonzero value at or below each row.
//
//===----------------------------------------------------------------------===//

#include "Cases.h"

using namespace tk;
using namespace tk::conformance;

void tk::conformance::addScanCases(std::vector<ConformanceCase> &cases) {
  ConformanceCase c;
  c.name = "cumsum";
  c.summary = "tk.scan add (inclusive) along axis 1 and axis 0";
  c.dtypes = {DType::F32, DType::F16, DType::I32};
  c.shapes = {shape({1, 1, 1}), shape({3, 37, 100}), shape({2, 64, 128}),
              shape({1, 64, 1})};
  c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                 const Shape &, std::string *error) {
    KernelBuilder k(ctx, "cumsum");
    mlir::Type type = toMLIR(ctx, dtype);
    Tile x = k.argPtr("x", type, 16);
    Tile rowScan = k.argPtr("row_scan", type, 16);
    Tile colScan = k.argPtr("col_scan", type, 16);
    Tile R = k.argI32("R"), C = k.argI32("C");
    int64_t BR = k.constexpr_("BLOCK_R", 64);
    int64_t BC = k.constexpr_("BLOCK_C", 128);
    Tile batch = k.programId(0);
    Tile size = R * C;
    Tile base = batch * size;
    Tile rows = k.arange(0, BR).col(), cols = k.arange(0, BC).row();
    Tile rowOff = rows * C;
    Tile offs = rowOff + cols;
    Tile rowMask = rows < R, colMask = cols < C;
    Tile mask = rowMask & colMask;
    Tile xBase = x + base;
    Tile tile = k.load(xBase + offs, mask, 0);
    Tile along1 = k.cumsum(tile, 1).to(type);
    Tile along0 = k.cumsum(tile, 0).to(type);
    Tile rowDst = rowScan + base;
    k.store(rowDst + offs, along1, mask);
    Tile colDst = colScan + base;
    k.store(colDst + offs, along0, mask);
    return finishKernel(k, error);
  });
  c.run = [](CellRun &r) {
    int64_t B = r.dim(0), R = r.dim(1), C = r.dim(2);
    DType dtype = r.dtype();
    std::vector<double> x = isFloat(dtype)
                                ? r.random(B * R * C, -1, 1, dtype, 31)
                                : r.random(B * R * C, -1000, 1000, dtype, 31);
    tk_arg dx = r.input(dtype, x);
    tk_arg d1 = r.output(dtype, B * R * C), d0 = r.output(dtype, B * R * C);
    r.launch({int32_t(B), 1, 1},
             {dx, d1, d0, tk_arg_i32(int32_t(R)), tk_arg_i32(int32_t(C))});
    // The scan accumulates in f32 (exact for integers), then rounds once.
    DType acc = accumulationOf(dtype);
    std::vector<double> want1(x.size()), want0(x.size()), bound1(x.size()),
        bound0(x.size());
    for (int64_t b = 0; b < B; ++b) {
      int64_t o = b * R * C;
      for (int64_t i = 0; i < R; ++i) {
        double sum = 0, abs = 0;
        for (int64_t j = 0; j < C; ++j) {
          sum += x[o + i * C + j];
          abs += std::fabs(x[o + i * C + j]);
          want1[o + i * C + j] = sum;
          bound1[o + i * C + j] = sumErrorBound(acc, abs, j + 1);
        }
      }
      for (int64_t j = 0; j < C; ++j) {
        double sum = 0, abs = 0;
        for (int64_t i = 0; i < R; ++i) {
          sum += x[o + i * C + j];
          abs += std::fabs(x[o + i * C + j]);
          want0[o + i * C + j] = sum;
          bound0[o + i * C + j] = sumErrorBound(acc, abs, i + 1);
        }
      }
    }
    Tolerance tol = defaultTolerance(dtype);
    r.check("row_scan", r.read(d1), want1, tol, &bound1);
    r.check("col_scan", r.read(d0), want0, tol, &bound0);
  };
  cases.push_back(std::move(c));

  ConformanceCase r;
  r.name = "scan_reverse";
  r.summary = "reverse tk.scan: sums along axis 1, the nearest nonzero value "
              "at or after each element along axis 0 (a combiner that does "
              "not commute)";
  r.dtypes = {DType::F32, DType::I32};
  r.shapes = {shape({1, 1, 1}), shape({3, 37, 100}), shape({2, 64, 128})};
  r.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                 const Shape &, std::string *error) {
    KernelBuilder k(ctx, "scan_reverse");
    mlir::Type type = toMLIR(ctx, dtype);
    Tile x = k.argPtr("x", type, 16);
    Tile rowScan = k.argPtr("row_scan", type, 16);
    Tile colScan = k.argPtr("col_scan", type, 16);
    Tile R = k.argI32("R"), C = k.argI32("C");
    int64_t BR = k.constexpr_("BLOCK_R", 64);
    int64_t BC = k.constexpr_("BLOCK_C", 128);
    Tile base = k.programId(0) * (R * C);
    Tile rows = k.arange(0, BR).col(), cols = k.arange(0, BC).row();
    Tile offs = rows * C + cols;
    Tile mask = (rows < R) & (cols < C);
    Tile xBase = x + base;
    Tile tile = k.load(xBase + offs, mask, 0);
    Tile sums = k.cumsum(tile, 1, /*reverse=*/true).to(type);
    Tile nearest = k.scan(
        tile, 0,
        [&](Tile acc, Tile next) { return k.where(next != 0, next, acc); },
        /*reverse=*/true);
    Tile rowDst = rowScan + base;
    k.store(rowDst + offs, sums, mask);
    Tile colDst = colScan + base;
    k.store(colDst + offs, nearest, mask);
    return finishKernel(k, error);
  });
  r.run = [](CellRun &run) {
    int64_t B = run.dim(0), R = run.dim(1), C = run.dim(2);
    DType dtype = run.dtype();
    std::vector<double> x = run.random(B * R * C, -100, 100, dtype, 37);
    // A third of the values 0, so that the nearest nonzero one is often
    // further down its column; the first never, so that no cell's outputs
    // are all 0 (a plugin that zeroes them must fail every cell).
    for (size_t i = 1; i < x.size(); i += 3)
      x[i] = 0;
    if (x[0] == 0)
      x[0] = 1;
    tk_arg dx = run.input(dtype, x);
    tk_arg d1 = run.output(dtype, B * R * C), d0 = run.output(dtype, B * R * C);
    run.launch({int32_t(B), 1, 1},
               {dx, d1, d0, tk_arg_i32(int32_t(R)), tk_arg_i32(int32_t(C))});
    DType acc = accumulationOf(dtype);
    std::vector<double> want1(x.size()), want0(x.size()), bound1(x.size());
    for (int64_t b = 0; b < B; ++b) {
      int64_t o = b * R * C;
      for (int64_t i = 0; i < R; ++i) {
        double sum = 0, abs = 0;
        for (int64_t j = C - 1; j >= 0; --j) {
          sum += x[o + i * C + j];
          abs += std::fabs(x[o + i * C + j]);
          want1[o + i * C + j] = sum;
          bound1[o + i * C + j] = sumErrorBound(acc, abs, C - j);
        }
      }
      // Rows past R are masked off (0) and come first in the scan's order.
      for (int64_t j = 0; j < C; ++j) {
        double nearest = 0;
        for (int64_t i = R - 1; i >= 0; --i) {
          if (x[o + i * C + j] != 0)
            nearest = x[o + i * C + j];
          want0[o + i * C + j] = nearest;
        }
      }
    }
    Tolerance tol = defaultTolerance(dtype);
    run.check("row_scan", run.read(d1), want1, tol, &bound1);
    run.check("col_scan", run.read(d0), want0, Tolerance{});
  };
  cases.push_back(std::move(r));
}
