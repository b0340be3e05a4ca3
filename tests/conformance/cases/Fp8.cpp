//===- Fp8.cpp - fp8 conversions (e4m3, e5m2) -----------------------------===//
//
// out = f32(fp8(x)): an f32 tile narrowed to fp8 with round-to-nearest-even
// (tk.fp_to_fp) and widened back. The reference rounds with LLVM's APFloat in
// the same fp8 semantics, so a backend that declares fp8 is checked bit for
// bit; one that does not gets UNSUPPORTED from its declaration.
//
//===----------------------------------------------------------------------===//

#include "Cases.h"

#include "llvm/ADT/APFloat.h"

using namespace tk;
using namespace tk::conformance;

namespace {

constexpr int64_t kBlock = 1024;

/// `value` rounded to nearest even in `semantics` (saturating formats such as
/// e4m3fn have no infinity; out-of-range values become NaN, as in hardware
/// conversions without the saturate flag).
double roundThrough(const llvm::fltSemantics &semantics, double value) {
  llvm::APFloat f(value);
  bool losesInfo = false;
  f.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return f.convertToDouble();
}

ConformanceCase fp8Case(const char *name, bool e4m3) {
  ConformanceCase c;
  c.name = name;
  c.summary = std::string("out = f32(") + (e4m3 ? "f8E4M3FN" : "f8E5M2") +
              "(x)), round to nearest even";
  c.needs.fp8 = true;
  c.dtypes = {DType::F32};
  c.shapes = {shape({1}), shape({1000}), shape({4099})};
  std::string kernel = name;
  c.build = TK_KERNEL_BUILDER([kernel, e4m3](mlir::MLIRContext *ctx, DType,
                                             const Shape &,
                                             std::string *error) {
    KernelBuilder k(ctx, kernel);
    Tile x = k.argPtr("x", k.f32(), 16), out = k.argPtr("out", k.f32(), 16);
    Tile n = k.argI32("n");
    Tile offs = k.programId(0) * kBlock + k.arange(0, kBlock);
    Tile mask = offs < n;
    Tile narrow = k.fpToFp(k.load(x + offs, mask),
                           e4m3 ? k.f8e4m3() : k.f8e5m2(), RoundingMode::RTNE);
    k.store(out + offs, k.fpToFp(narrow, k.f32()), mask);
    return finishKernel(k, error);
  });
  c.run = [e4m3](CellRun &r) {
    int64_t n = r.dim(0);
    // Within both formats' normal range, where rounding, not saturation, is
    // what the case checks.
    std::vector<double> x = r.random(n, -200.0, 200.0, DType::F32, 71);
    tk_arg dx = r.input(DType::F32, x), out = r.output(DType::F32, n);
    r.launch({cdiv(n, kBlock), 1, 1}, {dx, out, tk_arg_i32(int32_t(n))});
    const llvm::fltSemantics &semantics =
        e4m3 ? llvm::APFloat::Float8E4M3FN() : llvm::APFloat::Float8E5M2();
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i)
      want[i] = roundThrough(semantics, x[i]);
    r.check("out", r.read(out), want, Tolerance{0, 0});
  };
  return c;
}

} // namespace

void tk::conformance::addFp8Cases(std::vector<ConformanceCase> &cases) {
  cases.push_back(fp8Case("fp8_e4m3_roundtrip", /*e4m3=*/true));
  cases.push_back(fp8Case("fp8_e5m2_roundtrip", /*e4m3=*/false));
}
