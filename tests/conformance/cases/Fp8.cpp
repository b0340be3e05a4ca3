//===- Fp8.cpp - fp8 conversions (e4m3, e5m2) -----------------------------===//
//
// out = f32(fp8(x)): an f32 tile narrowed to fp8 with round-to-nearest-even
// (tk.fp_to_fp) and widened back. The reference rounds with LLVM's APFloat in
// the same fp8 semantics, so a backend that declares fp8 is checked bit for
// bit; one that does not gets UNSUPPORTED from its declaration. The
// `_roundtrip` cases take random values within both formats' normal range;
// the `_edges` cases every fp8 value, every midpoint between neighbours
// (ties) and the floats just either side of it, the subnormals, the
// overflow boundary, infinities and NaN.
//
//===----------------------------------------------------------------------===//

#include "Cases.h"

#include "llvm/ADT/APFloat.h"

#include <algorithm>
#include <cmath>

using namespace tk;
using namespace tk::conformance;

namespace {

constexpr int64_t kFp8Block = 1024;

/// `value` rounded to nearest even in `semantics` (saturating formats such as
/// e4m3fn have no infinity; out-of-range values become NaN, as in hardware
/// conversions without the saturate flag).
double roundThrough(const llvm::fltSemantics &semantics, double value,
                    llvm::RoundingMode mode) {
  llvm::APFloat f(value);
  bool losesInfo = false;
  f.convert(semantics, mode, &losesInfo);
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return f.convertToDouble();
}

/// Every value of the format, each midpoint between neighbours and the f32
/// on either side of it, and what lies past the ends: the inputs on which
/// rounding to fp8 can go wrong.
std::vector<double> edgeValues(const llvm::fltSemantics &semantics) {
  std::vector<double> finite;
  for (unsigned code = 0; code < 256; ++code) {
    llvm::APFloat value(semantics, llvm::APInt(8, code));
    if (value.isFinite() && !value.isNegative())
      finite.push_back(value.convertToDouble());
  }
  std::sort(finite.begin(), finite.end());
  finite.erase(std::unique(finite.begin(), finite.end()), finite.end());
  std::vector<float> magnitudes(finite.begin(), finite.end());
  double largest = finite.back();
  double step = largest - finite[finite.size() - 2];
  // The neighbour the format would have past its largest value: ties there
  // decide between the largest value and overflow.
  finite.push_back(largest + step);
  for (size_t i = 0; i + 1 < finite.size(); ++i) {
    float middle = static_cast<float>((finite[i] + finite[i + 1]) / 2);
    magnitudes.push_back(middle);
    magnitudes.push_back(std::nextafter(middle, 0.0f));
    magnitudes.push_back(std::nextafter(middle, INFINITY));
  }
  for (float far : {1e-30f, 1e-40f, 2.0f * float(largest), 1e30f, INFINITY})
    magnitudes.push_back(far);
  std::vector<double> values;
  for (float magnitude : magnitudes) {
    values.push_back(magnitude);
    values.push_back(-magnitude);
  }
  values.push_back(NAN);
  return values;
}

ConformanceCase fp8Case(const char *name, bool e4m3, bool edges,
                        RoundingMode rounding = RoundingMode::RTNE) {
  bool towardZero = rounding == RoundingMode::RTZ;
  ConformanceCase c;
  c.name = name;
  c.summary = std::string("out = f32(") + (e4m3 ? "f8E4M3FN" : "f8E5M2") +
              "(x)), round " + (towardZero ? "toward zero" : "to nearest even");
  c.needs.fp8 = true;
  c.dtypes = {DType::F32};
  c.shapes = edges
                 ? std::vector<Shape>{shape({2048})}
                 : std::vector<Shape>{shape({1}), shape({1000}), shape({4099})};
  std::string kernel = name;
  c.build = TK_KERNEL_BUILDER([kernel, e4m3, rounding](mlir::MLIRContext *ctx,
                                                       DType, const Shape &,
                                                       std::string *error) {
    KernelBuilder k(ctx, kernel);
    Tile x = k.argPtr("x", k.f32(), 16), out = k.argPtr("out", k.f32(), 16);
    Tile n = k.argI32("n");
    Tile offs = k.programId(0) * kFp8Block + k.arange(0, kFp8Block);
    Tile mask = offs < n;
    Tile narrow = k.fpToFp(k.load(x + offs, mask),
                           e4m3 ? k.f8e4m3() : k.f8e5m2(), rounding);
    k.store(out + offs, k.fpToFp(narrow, k.f32()), mask);
    return finishKernel(k, error);
  });
  c.run = [e4m3, edges, towardZero](CellRun &r) {
    int64_t n = r.dim(0);
    const llvm::fltSemantics &semantics =
        e4m3 ? llvm::APFloat::Float8E4M3FN() : llvm::APFloat::Float8E5M2();
    // Random values within both formats' normal range, where rounding, not
    // saturation, is what the case checks; or the edges, then random ones.
    std::vector<double> x = r.random(n, -200.0, 200.0, DType::F32, 71);
    if (edges) {
      std::vector<double> special = edgeValues(semantics);
      if (int64_t(special.size()) > n)
        return r.fail("the edge values (" + std::to_string(special.size()) +
                      ") outnumber the cell's " + std::to_string(n));
      std::copy(special.begin(), special.end(), x.begin());
    }
    tk_arg dx = r.input(DType::F32, x), out = r.output(DType::F32, n);
    r.launch({cdiv(n, kFp8Block), 1, 1}, {dx, out, tk_arg_i32(int32_t(n))});
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i)
      want[i] =
          roundThrough(semantics, x[i],
                       towardZero ? llvm::RoundingMode::TowardZero
                                  : llvm::RoundingMode::NearestTiesToEven);
    r.check("out", r.read(out), want, Tolerance{0, 0});
  };
  return c;
}

} // namespace

void tk::conformance::addFp8Cases(std::vector<ConformanceCase> &cases) {
  cases.push_back(fp8Case("fp8_e4m3_roundtrip", /*e4m3=*/true, false));
  cases.push_back(fp8Case("fp8_e5m2_roundtrip", /*e4m3=*/false, false));
  cases.push_back(fp8Case("fp8_e4m3_edges", /*e4m3=*/true, /*edges=*/true));
  cases.push_back(fp8Case("fp8_e5m2_edges", /*e4m3=*/false, /*edges=*/true));
  cases.push_back(fp8Case("fp8_e4m3_edges_rtz", /*e4m3=*/true, /*edges=*/true,
                          RoundingMode::RTZ));
  cases.push_back(fp8Case("fp8_e5m2_edges_rtz", /*e4m3=*/false, /*edges=*/true,
                          RoundingMode::RTZ));
}
