//===- Elementwise.cpp - math functions, fma, where, integer ops ----------===//
//
// One 1-D kernel per function over a BLOCK of 1024 (sizes 1, 1000, 4099):
// exp, log, sqrt, rsqrt, sin, cos, a fused multiply-add (math.fma), where
// (arith.select on a comparison), and the integer operators in two kernels
// that write one output per operator.
//
//===----------------------------------------------------------------------===//

#include "Cases.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <functional>

using namespace tk;
using namespace tk::conformance;

namespace {

constexpr int64_t kElementwiseBlock = 1024;
const std::vector<Shape> kElementwiseSizes = {shape({1}), shape({1000}),
                                              shape({4099})};
const std::vector<DType> kFloats = {DType::F32, DType::F16, DType::BF16,
                                    DType::F64};

#ifndef TK_CONFORMANCE_RUN_ONLY
/// The usual 1-D prologue: offsets of this program and their mask.
struct Lanes {
  Tile offs, mask;
};
Lanes lanes(KernelBuilder &k, const Tile &n) {
  Tile start = k.programId(0) * kElementwiseBlock;
  Tile offs = start + k.arange(0, kElementwiseBlock);
  Tile mask = offs < n;
  return {offs, mask};
}
#endif

using MathFn = Tile (KernelBuilder::*)(const Tile &);

/// out = f(x) for a math function computed in the dtype (f16/bf16 go
/// through f32 on the CPU, as on GPUs without half-precision math).
/// `f32Rtol` is the error allowed of the backend's f32 approximation,
/// relative; `hasZeros` says the function crosses zero in the range (sin,
/// cos, log), where an absolute error of the argument's reduction becomes
/// unbounded relative error: those get a floor of the same size in units
/// of the output's scale.
ConformanceCase unaryCase(const char *name, MathFn fn, double lo, double hi,
                          std::function<double(double)> reference,
                          double f32Rtol, bool hasZeros) {
  ConformanceCase c;
  c.name = name;
  c.summary = std::string("out = ") + name + "(x), x in [" +
              std::to_string(lo).substr(0, 5) + ", " +
              std::to_string(hi).substr(0, 5) + ")";
  c.dtypes = kFloats;
  c.shapes = kElementwiseSizes;
  std::string kernel = name;
  c.build = TK_KERNEL_BUILDER([kernel, fn](mlir::MLIRContext *ctx, DType dtype,
                                           const Shape &, std::string *error) {
    KernelBuilder k(ctx, kernel);
    mlir::Type type = toMLIR(ctx, dtype);
    Tile x = k.argPtr("x", type, 16), out = k.argPtr("out", type, 16);
    Tile n = k.argI32("n");
    Lanes l = lanes(k, n);
    Tile v = k.load(x + l.offs, l.mask);
    k.store(out + l.offs, (k.*fn)(v), l.mask);
    return finishKernel(k, error);
  });
  c.run = [lo, hi, reference, f32Rtol, hasZeros](CellRun &r) {
    int64_t n = r.dim(0);
    std::vector<double> x = r.random(n, lo, hi, r.dtype(), 41);
    tk_arg dx = r.input(r.dtype(), x), out = r.output(r.dtype(), n);
    r.launch({cdiv(n, kElementwiseBlock), 1, 1},
             {dx, out, tk_arg_i32(int32_t(n))});
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i)
      want[i] = reference(x[i]);
    // f32 may use the backend's polynomial approximations (a few ulps);
    // narrower types round an f32 result once; f64 libm-grade math is
    // within a few ulps.
    Tolerance tol = defaultTolerance(r.dtype());
    if (r.dtype() == DType::F32)
      tol.rtol = f32Rtol;
    if (r.dtype() == DType::F64)
      tol = epsTolerance(DType::F64, 8);
    if (hasZeros)
      tol.floor = tol.rtol;
    r.check("out", r.read(out), want, tol);
  };
  return c;
}

/// A kernel x, y -> one output per integer operator.
struct IntOp {
  const char *name;
  std::function<Tile(KernelBuilder &, Tile, Tile)> build;
  std::function<double(int64_t, int64_t)> reference;
};

ConformanceCase intCase(const char *name, const char *summary,
                        std::vector<IntOp> ops, double yLo, double yHi,
                        bool shiftAmounts) {
  ConformanceCase c;
  c.name = name;
  c.summary = summary;
  c.dtypes = {DType::I32, DType::I8, DType::I16, DType::I64};
  c.shapes = kElementwiseSizes;
  std::string kernel = name;
  c.build = TK_KERNEL_BUILDER([kernel, ops](mlir::MLIRContext *ctx, DType dtype,
                                            const Shape &, std::string *error) {
    KernelBuilder k(ctx, kernel);
    mlir::Type type = toMLIR(ctx, dtype);
    Tile x = k.argPtr("x", type, 16), y = k.argPtr("y", type, 16);
    std::vector<Tile> outs;
    for (const IntOp &op : ops)
      outs.push_back(k.argPtr(op.name, type, 16));
    Tile n = k.argI32("n");
    Lanes l = lanes(k, n);
    Tile xv = k.load(x + l.offs, l.mask);
    Tile yv = k.load(y + l.offs, l.mask, 1);
    for (size_t i = 0; i < ops.size(); ++i)
      k.store(outs[i] + l.offs, ops[i].build(k, xv, yv), l.mask);
    return finishKernel(k, error);
  });
  c.run = [ops, yLo, yHi, shiftAmounts](CellRun &r) {
    int64_t n = r.dim(0);
    DType dtype = r.dtype();
    unsigned bits = unsigned(dtypeBytes(dtype) * 8);
    double range = bits == 8 ? 100 : 30000;
    std::vector<double> x = r.random(n, -range, range, dtype, 51);
    std::vector<double> y =
        // i64 shifts stay below 2^53 * 4 so that doubles on both sides round
        // the same integers the same way.
        shiftAmounts ? r.random(n, 0, double(bits == 64 ? 40 : bits), dtype, 52)
                     : r.random(n, yLo * range, yHi * range, dtype, 52);
    for (double &v : y)
      if (!shiftAmounts && v == 0)
        v = 3; // no division by zero
    std::vector<tk_arg> args = {r.input(dtype, x), r.input(dtype, y)};
    for (size_t i = 0; i < ops.size(); ++i)
      args.push_back(r.output(dtype, n));
    args.push_back(tk_arg_i32(int32_t(n)));
    r.launch({cdiv(n, kElementwiseBlock), 1, 1}, args);
    for (size_t i = 0; i < ops.size(); ++i) {
      std::vector<double> want(n);
      for (int64_t j = 0; j < n; ++j)
        want[j] =
            roundTo(dtype, ops[i].reference(int64_t(x[j]), int64_t(y[j])));
      r.check(ops[i].name, r.read(args[2 + i]), want, {});
    }
  };
  return c;
}

} // namespace

void tk::conformance::addElementwiseCases(std::vector<ConformanceCase> &cases) {
  cases.push_back(unaryCase(
      "exp", TK_KERNEL_BUILDER(&KernelBuilder::exp), -10, 10,
      [](double v) { return std::exp(v); }, 4e-6, /*hasZeros=*/false));
  cases.push_back(unaryCase(
      "log", TK_KERNEL_BUILDER(&KernelBuilder::log), 0.001, 1000,
      [](double v) { return std::log(v); }, 4e-6, /*hasZeros=*/true));
  cases.push_back(unaryCase(
      "sqrt", TK_KERNEL_BUILDER(&KernelBuilder::sqrt), 0, 1000,
      [](double v) { return std::sqrt(v); }, 1e-6, /*hasZeros=*/false));
  cases.push_back(unaryCase(
      "rsqrt", TK_KERNEL_BUILDER(&KernelBuilder::rsqrt), 0.001, 1000,
      [](double v) { return 1 / std::sqrt(v); }, 1e-6, /*hasZeros=*/false));
  cases.push_back(unaryCase(
      "sin", TK_KERNEL_BUILDER(&KernelBuilder::sin), -10, 10,
      [](double v) { return std::sin(v); }, 1e-6, /*hasZeros=*/true));
  cases.push_back(unaryCase(
      "cos", TK_KERNEL_BUILDER(&KernelBuilder::cos), -10, 10,
      [](double v) { return std::cos(v); }, 1e-6, /*hasZeros=*/true));

  {
    ConformanceCase c;
    c.name = "fma";
    c.summary = "out = math.fma(a, b, c)";
    c.dtypes = kFloats;
    c.shapes = kElementwiseSizes;
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      KernelBuilder k(ctx, "fma");
      mlir::Type type = toMLIR(ctx, dtype);
      Tile a = k.argPtr("a", type, 16), b = k.argPtr("b", type, 16);
      Tile cc = k.argPtr("c", type, 16), out = k.argPtr("out", type, 16);
      Tile n = k.argI32("n");
      Lanes l = lanes(k, n);
      Tile av = k.load(a + l.offs, l.mask), bv = k.load(b + l.offs, l.mask),
           cv = k.load(cc + l.offs, l.mask);
      Tile fused = k.fma(av, bv, cv);
      k.store(out + l.offs, fused, l.mask);
      return finishKernel(k, error);
    });
    c.run = [](CellRun &r) {
      int64_t n = r.dim(0);
      DType t = r.dtype();
      std::vector<double> a = r.random(n, -4, 4, t, 61),
                          b = r.random(n, -4, 4, t, 62),
                          cv = r.random(n, -4, 4, t, 63);
      tk_arg da = r.input(t, a), db = r.input(t, b), dc = r.input(t, cv);
      tk_arg out = r.output(t, n);
      r.launch({cdiv(n, kElementwiseBlock), 1, 1},
               {da, db, dc, out, tk_arg_i32(int32_t(n))});
      std::vector<double> want(n);
      for (int64_t i = 0; i < n; ++i)
        want[i] = a[i] * b[i] + cv[i];
      // One rounding of the exact result; near cancellation a backend
      // that multiplies and adds separately is off by half an ulp of a * b
      // (|a b| <= 16, about the output's scale): a floor of one eps.
      Tolerance tol = defaultTolerance(t);
      tol.floor = epsilonOf(t);
      r.check("out", r.read(out), want, tol);
    };
    cases.push_back(std::move(c));
  }

  {
    ConformanceCase c;
    c.name = "where";
    c.summary = "out = where(x > y, x, y * 2) (cmpf/cmpi + select)";
    c.dtypes = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I8};
    c.shapes = kElementwiseSizes;
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      KernelBuilder k(ctx, "where");
      mlir::Type type = toMLIR(ctx, dtype);
      Tile x = k.argPtr("x", type, 16), y = k.argPtr("y", type, 16);
      Tile out = k.argPtr("out", type, 16);
      Tile n = k.argI32("n");
      Lanes l = lanes(k, n);
      Tile xv = k.load(x + l.offs, l.mask), yv = k.load(y + l.offs, l.mask);
      Tile cond = xv > yv;
      Tile twice = yv * 2;
      k.store(out + l.offs, k.where(cond, xv, twice), l.mask);
      return finishKernel(k, error);
    });
    c.run = [](CellRun &r) {
      int64_t n = r.dim(0);
      DType t = r.dtype();
      std::vector<double> x = r.random(n, -50, 50, t, 71),
                          y = r.random(n, -50, 50, t, 72);
      tk_arg dx = r.input(t, x), dy = r.input(t, y), out = r.output(t, n);
      r.launch({cdiv(n, kElementwiseBlock), 1, 1},
               {dx, dy, out, tk_arg_i32(int32_t(n))});
      std::vector<double> want(n);
      for (int64_t i = 0; i < n; ++i)
        want[i] = x[i] > y[i] ? x[i] : roundTo(t, y[i] * 2);
      r.check("out", r.read(out), want, {});
    };
    cases.push_back(std::move(c));
  }

  cases.push_back(intCase(
      "int_arith", "integer add, mul (wrapping), div and rem (signed, C)",
      {{"add", TK_KERNEL_BUILDER([](KernelBuilder &, Tile a, Tile b) {
          return a + b;
        }),
        [](int64_t a, int64_t b) { return double(a + b); }},
       {"mul", TK_KERNEL_BUILDER([](KernelBuilder &, Tile a, Tile b) {
          return a * b;
        }),
        [](int64_t a, int64_t b) { return double(a * b); }},
       {"div", TK_KERNEL_BUILDER([](KernelBuilder &, Tile a, Tile b) {
          return a / b;
        }),
        [](int64_t a, int64_t b) { return double(a / b); }},
       {"rem", TK_KERNEL_BUILDER([](KernelBuilder &, Tile a, Tile b) {
          return a % b;
        }),
        [](int64_t a, int64_t b) { return double(a % b); }}},
      -0.2, 0.2, /*shiftAmounts=*/false));
  cases.push_back(
      intCase("int_bitwise", "and, or, xor, shl, arithmetic shr",
              {{"and", TK_KERNEL_BUILDER([](KernelBuilder &, Tile a, Tile b) {
                  return a & b;
                }),
                [](int64_t a, int64_t b) { return double(a & b); }},
               {"or", TK_KERNEL_BUILDER([](KernelBuilder &, Tile a, Tile b) {
                  return a | b;
                }),
                [](int64_t a, int64_t b) { return double(a | b); }},
               {"xor", TK_KERNEL_BUILDER([](KernelBuilder &, Tile a, Tile b) {
                  return a ^ b;
                }),
                [](int64_t a, int64_t b) { return double(a ^ b); }},
               {"shl", TK_KERNEL_BUILDER([](KernelBuilder &, Tile a, Tile b) {
                  return a << b;
                }),
                [](int64_t a, int64_t b) {
                  // Shift the two's-complement bits; roundTo wraps to the
                  // width.
                  return double(int64_t(uint64_t(a) << b));
                }},
               {"shr", TK_KERNEL_BUILDER([](KernelBuilder &, Tile a, Tile b) {
                  return a >> b;
                }),
                [](int64_t a, int64_t b) { return double(a >> b); }}},
              0, 0, /*shiftAmounts=*/true));
}
