//===- Reductions.cpp - sum, max, min, argmax along each axis -------------===//
//
// One program per matrix of a batch loads it into a masked 64x128 tile
// (masked lanes hold the operation's identity) and reduces it along axis 1
// (one result per row) and along axis 0 (one per column), so each kernel
// checks both axes and the masking of rows and columns that do not fill the
// tile.
//
//===----------------------------------------------------------------------===//

#include "Cases.h"

#include <cmath>
#include <limits>

using namespace tk;
using namespace tk::conformance;

namespace {

enum class Reduction { Sum, Max, Min, ArgMax };

constexpr int64_t kRows = 64, kCols = 128;

/// The identity of `op` for masked lanes.
#ifndef TK_CONFORMANCE_RUN_ONLY
Operand identity(Reduction op, DType dtype) {
  if (op == Reduction::Sum)
    return Operand(0);
  bool low = op != Reduction::Min; // max and argmax start from the lowest
  if (isFloat(dtype))
    return Operand(low ? -std::numeric_limits<double>::infinity()
                       : std::numeric_limits<double>::infinity());
  unsigned bits = unsigned(dtypeBytes(dtype) * 8);
  int64_t max = int64_t((uint64_t(1) << (bits - 1)) - 1);
  return Operand(low ? -max - 1 : max);
}

KernelModule buildReduction(mlir::MLIRContext *ctx, Reduction op, DType dtype,
                            std::string *error) {
  const char *names[] = {"reduce_sum", "reduce_max", "reduce_min", "argmax"};
  KernelBuilder k(ctx, names[int(op)]);
  mlir::Type type = toMLIR(ctx, dtype);
  Tile x = k.argPtr("x", type, 16);
  bool arg = op == Reduction::ArgMax;
  Tile rowOut = k.argPtr("row_out", arg ? k.i32() : type, 16);
  Tile colOut = k.argPtr("col_out", arg ? k.i32() : type, 16);
  Tile R = k.argI32("R"), C = k.argI32("C");
  int64_t BR = k.constexpr_("BLOCK_R", kRows);
  int64_t BC = k.constexpr_("BLOCK_C", kCols);

  Tile batch = k.programId(0);
  Tile size = R * C;
  Tile base = batch * size;
  Tile rows = k.arange(0, BR), cols = k.arange(0, BC);
  Tile rowIdx = rows.col(), colIdx = cols.row();
  Tile rowOff = rowIdx * C;
  Tile offs = rowOff + colIdx;
  Tile rowMask = rowIdx < R, colMask = colIdx < C;
  Tile mask = rowMask & colMask;
  Tile xBase = x + base;
  Tile tile = k.load(xBase + offs, mask, identity(op, dtype));

  auto reduce = [&](int axis) -> Tile {
    switch (op) {
    case Reduction::Sum:
      return k.sum(tile, axis);
    case Reduction::Max:
      return k.max(tile, axis);
    case Reduction::Min:
      return k.min(tile, axis);
    case Reduction::ArgMax:
      return k.argmax(tile, axis).second;
    }
    return Tile();
  };
  // Axis 1: one value per row.
  Tile perRow = reduce(1);
  Tile rowBase = batch * R;
  Tile rowDst = rowOut + rowBase;
  Tile rowsValid = rows < R;
  k.store(rowDst + rows, perRow.to(arg ? k.i32() : type), rowsValid);
  // Axis 0: one value per column.
  Tile perCol = reduce(0);
  Tile colBase = batch * C;
  Tile colDst = colOut + colBase;
  Tile colsValid = cols < C;
  k.store(colDst + cols, perCol.to(arg ? k.i32() : type), colsValid);
  return finishKernel(k, error);
}
#endif

/// The reference of one line of values (`stride` apart).
void reduceLine(Reduction op, const double *line, int64_t count, int64_t stride,
                double &value, double &sumAbs) {
  value = op == Reduction::Sum ? 0 : line[0];
  double best = line[0];
  sumAbs = 0;
  for (int64_t i = 0; i < count; ++i) {
    double v = line[i * stride];
    sumAbs += std::fabs(v);
    switch (op) {
    case Reduction::Sum:
      value += v;
      break;
    // maxnum and minnum: a NaN loses to any number (std::fmax, std::fmin),
    // so a line is NaN only where all of it is.
    case Reduction::Max:
      value = std::fmax(value, v);
      break;
    case Reduction::Min:
      value = std::fmin(value, v);
      break;
    case Reduction::ArgMax:
      // Ties go to the lowest index, as tk's argmax promises.
      if (v > best) {
        best = v;
        value = double(i);
      } else if (i == 0) {
        value = 0;
      }
      break;
    }
  }
}

void runReduction(CellRun &r, Reduction op, bool withNaNs) {
  int64_t B = r.dim(0), R = r.dim(1), C = r.dim(2);
  DType dtype = r.dtype();
  // Integers in a range where sums stay exact; ties are likely in narrow
  // types, which checks argmax's lowest-index rule.
  std::vector<double> x = isFloat(dtype)
                              ? r.random(B * R * C, -10, 10, dtype, 21)
                              : r.random(B * R * C, -100, 100, dtype, 21);
  // NaNs at every seventh element, and all of the last row of each batch:
  // lines with some NaN, lines of NaN alone (that row; every column of a
  // one-row batch), and NaNs first, last and between the lanes' parts.
  if (withNaNs)
    for (int64_t i = 0; i < B * R * C; ++i)
      if (i % 7 == 3 || (i % (R * C)) / C == R - 1)
        x[i] = std::nan("");
  DType outType = op == Reduction::ArgMax ? DType::I32 : dtype;
  tk_arg dx = r.input(dtype, x);
  tk_arg rowOut = r.output(outType, B * R), colOut = r.output(outType, B * C);
  r.launch({int32_t(B), 1, 1}, {dx, rowOut, colOut, tk_arg_i32(int32_t(R)),
                                tk_arg_i32(int32_t(C))});

  std::vector<double> wantRows(B * R), wantCols(B * C), boundRows(B * R),
      boundCols(B * C);
  for (int64_t b = 0; b < B; ++b) {
    const double *m = &x[b * R * C];
    for (int64_t i = 0; i < R; ++i)
      reduceLine(op, m + i * C, C, 1, wantRows[b * R + i],
                 boundRows[b * R + i]);
    for (int64_t j = 0; j < C; ++j)
      reduceLine(op, m + j, R, C, wantCols[b * C + j], boundCols[b * C + j]);
  }
  // A line shorter than its block has the masked elements' identity (-inf
  // for max, inf for min) in the reduction too: where the line is all NaN,
  // that is the result.
  if (withNaNs && op != Reduction::Sum) {
    double identity = op == Reduction::Max ? -INFINITY : INFINITY;
    for (double &want : wantRows)
      if (std::isnan(want) && C < kCols)
        want = identity;
    for (double &want : wantCols)
      if (std::isnan(want) && R < kRows)
        want = identity;
  }
  // A sum accumulates in f32 (exact for integers) and rounds once to the
  // dtype; max, min and argmax are exact.
  Tolerance tol = defaultTolerance(outType);
  if (op == Reduction::Sum) {
    DType acc = accumulationOf(dtype);
    for (int64_t i = 0; i < B * R; ++i)
      boundRows[i] = sumErrorBound(acc, boundRows[i], C);
    for (int64_t j = 0; j < B * C; ++j)
      boundCols[j] = sumErrorBound(acc, boundCols[j], R);
    r.check("row_out", r.read(rowOut), wantRows, tol, &boundRows);
    r.check("col_out", r.read(colOut), wantCols, tol, &boundCols);
    return;
  }
  r.check("row_out", r.read(rowOut), wantRows, {});
  r.check("col_out", r.read(colOut), wantCols, {});
}

ConformanceCase reductionCase(Reduction op, const char *name,
                              const char *summary, std::vector<DType> dtypes,
                              bool withNaNs = false) {
  ConformanceCase c;
  c.name = name;
  c.summary = summary;
  c.dtypes = std::move(dtypes);
  // argmax of one element is always 0, an answer a kernel that writes
  // zeros would give too: its smallest shape has rows and columns to choose
  // from.
  Shape smallest =
      op == Reduction::ArgMax ? shape({1, 2, 3}) : shape({1, 1, 1});
  c.shapes = {smallest, shape({3, 37, 100}), shape({2, 64, 128}),
              shape({1, 1, 128})};
  c.build = TK_KERNEL_BUILDER([op](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
    return buildReduction(ctx, op, dtype, error);
  });
  c.run = [op, withNaNs](CellRun &r) { runReduction(r, op, withNaNs); };
  return c;
}

/// out[c] = x[0, c] + x[1, c] + ... + x[R - 1, c], one row per trip of a
/// loop that carries the running sum as a tile of the dtype: rounded to it
/// after every trip, and on a GPU carried in registers as 16-bit values
/// (8 elements of 16 bits to a 16-byte run).
#ifndef TK_CONFORMANCE_RUN_ONLY
KernelModule buildRunningSum(mlir::MLIRContext *ctx, DType dtype,
                             std::string *error) {
  KernelBuilder k(ctx, "running_sum");
  mlir::Type type = toMLIR(ctx, dtype);
  Tile x = k.argPtr("x", type, 16);
  Tile out = k.argPtr("out", type, 16);
  Tile R = k.argI32("R"), C = k.argI32("C");
  int64_t BC = k.constexpr_("BLOCK_C", 1024);
  Tile cols = k.programId(0) * BC + k.arange(0, BC);
  Tile mask = cols < C;
  llvm::SmallVector<Tile> sum = k.forLoop(
      0, R, 1, {k.zeros({BC}, type)},
      [&](Tile row, llvm::ArrayRef<Tile> carried) -> llvm::SmallVector<Tile> {
        return {carried[0] + k.load(x + (row * C + cols), mask, 0)};
      });
  if (sum.empty())
    return finishKernel(k, error);
  k.store(out + cols, sum[0], mask);
  return finishKernel(k, error);
}
#endif

/// Each trip adds two values of the dtype and rounds once (in f32 for 16
/// bits, which holds the exact sum's correct rounding): the reference does
/// the same in double, so the result must match exactly.
void runRunningSum(CellRun &r) {
  int64_t R = r.dim(0), C = r.dim(1);
  DType dtype = r.dtype();
  std::vector<double> x = isFloat(dtype) ? r.random(R * C, -4, 4, dtype, 23)
                                         : r.random(R * C, -3, 4, dtype, 23);
  tk_arg dx = r.input(dtype, x);
  tk_arg out = r.output(dtype, C);
  r.launch({int32_t(cdiv(C, 1024)), 1, 1},
           {dx, out, tk_arg_i32(int32_t(R)), tk_arg_i32(int32_t(C))});
  std::vector<double> want(C, 0.0);
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j)
      want[j] = roundTo(dtype, want[j] + x[i * C + j]);
  r.check("out", r.read(out), want, {});
}

} // namespace

void tk::conformance::addReductionCases(std::vector<ConformanceCase> &cases) {
  {
    ConformanceCase c;
    c.name = "running_sum";
    c.summary = "out[c] = sum_r x[r, c], one row per loop trip into a tile "
                "the loop carries, rounded to the dtype each trip";
    c.dtypes = {DType::F32, DType::F16, DType::BF16, DType::I8};
    c.shapes = {shape({1, 1}), shape({7, 1000}), shape({33, 2048})};
    c.build = TK_KERNEL_BUILDER(
        [](mlir::MLIRContext *ctx, DType dtype, const Shape &,
           std::string *error) { return buildRunningSum(ctx, dtype, error); });
    c.run = runRunningSum;
    cases.push_back(std::move(c));
  }
  cases.push_back(reductionCase(
      Reduction::Sum, "reduce_sum", "tk.reduce add along axis 0 and axis 1",
      {DType::F32, DType::F16, DType::BF16, DType::I32}));
  cases.push_back(reductionCase(
      Reduction::Max, "reduce_max", "tk.reduce max along axis 0 and axis 1",
      {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I8}));
  cases.push_back(reductionCase(
      Reduction::Min, "reduce_min", "tk.reduce min along axis 0 and axis 1",
      {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I8}));
  cases.push_back(reductionCase(
      Reduction::Max, "reduce_max_nan",
      "tk.reduce max (maxnum: a NaN loses to any number) over lines with "
      "NaNs and lines of NaNs alone, both axes",
      {DType::F32, DType::F16, DType::BF16}, /*withNaNs=*/true));
  cases.push_back(reductionCase(
      Reduction::Min, "reduce_min_nan",
      "tk.reduce min (minnum: a NaN loses to any number) over lines with "
      "NaNs and lines of NaNs alone, both axes",
      {DType::F32, DType::F16, DType::BF16}, /*withNaNs=*/true));
  cases.push_back(reductionCase(Reduction::ArgMax, "argmax",
                                "two-operand tk.reduce (value, index), ties "
                                "to the lowest index, both axes",
                                {DType::F32, DType::F16, DType::I32}));
}
