//===- Cases.h - what the case files share ----------------------*- C++ -*-===//
//
// Declarations of each case file's registration function (Registry.cpp calls
// them in order) and the few helpers every case uses.
//
//===----------------------------------------------------------------------===//

#ifndef TK_TESTS_CONFORMANCE_CASES_CASES_H_
#define TK_TESTS_CONFORMANCE_CASES_CASES_H_

#include "Harness.h"
#include "SeedKernels.h"

#include "tk/ir/Builder.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace tk::conformance {

/// The MLIR type of a dtype (HarnessCompile.cpp).
mlir::Type toMLIR(mlir::MLIRContext *ctx, DType dtype);

/// Each file of cases/ appends its cases.
void addSeedCases(std::vector<ConformanceCase> &cases);
void addMatmulCases(std::vector<ConformanceCase> &cases);
void addReductionCases(std::vector<ConformanceCase> &cases);
void addScanCases(std::vector<ConformanceCase> &cases);
void addElementwiseCases(std::vector<ConformanceCase> &cases);
void addAtomicCases(std::vector<ConformanceCase> &cases);
void addBlockPointerCases(std::vector<ConformanceCase> &cases);
void addAttentionCases(std::vector<ConformanceCase> &cases);
void addFp8Cases(std::vector<ConformanceCase> &cases);
void addBenchCases(std::vector<ConformanceCase> &cases);
/// The TTIR corpus (tests/ttir/corpus): Triton's kernels, imported.
void addTtirCases(std::vector<ConformanceCase> &cases);
/// fixtures/: deliberately wrong kernels (--include-fixtures).
void addFixtureCases(std::vector<ConformanceCase> &cases);

/// Run functions the bench's cases share with the seeds' (Bench.cpp):
/// the seed softmax, one program a row, rows x cols with row strides of
/// cols; the seed matmul with `blockM` x `blockN` tiles, M x N x K, its
/// variant "tn" / "nt" storing a / b transposed (`unitInnerStrides`: the
/// inner strides are constexprs, not arguments); the attention forward
/// with `blockM` rows a program, heads x N x D.
void runSoftmax(CellRun &r);
void runMatmul(CellRun &r, int64_t blockM, int64_t blockN,
               bool unitInnerStrides = false);

/// The seed matmul with unit inner strides and row strides padded to 16
/// elements, as MatmulConfig::rowStrideDivisibility declares them.
struct PaddedMatmul {
  int64_t blockM = 64, blockN = 64;
  /// b stored as N rows of K (MatmulConfig::kMajorB).
  bool kMajorB = false;
  /// Scales passed after the strides (MatmulConfig::scales).
  seeds::MatmulScales scales = seeds::MatmulScales::None;
  /// The result's dtype; the input's (i32 for i8) when unset.
  std::optional<DType> out;
};
void runPaddedMatmul(CellRun &r, const PaddedMatmul &options);
/// Checks attention_fwd (seeds::buildAttention) of `blockM`-row blocks;
/// `causal`: each query over the keys up to its own position.
void runAttention(CellRun &r, int64_t blockM, bool causal = false);

/// Finishes `k`, copying the builder's error into `error` on failure.
inline KernelModule finishKernel(KernelBuilder &k, std::string *error) {
  KernelModule module = k.finish();
  if (mlir::failed(module) && error)
    *error = k.error().str();
  return module;
}

inline int32_t cdiv(int64_t a, int64_t b) {
  return static_cast<int32_t>((a + b - 1) / b);
}

inline Shape shape(std::vector<int64_t> dims, int variant = 0,
                   std::string variantName = "") {
  return Shape{std::move(dims), variant, std::move(variantName)};
}

/// Every shape of `base` once per variant name (variant i = names[i]).
inline std::vector<Shape> withVariants(const std::vector<Shape> &base,
                                       const std::vector<std::string> &names) {
  std::vector<Shape> shapes;
  for (size_t v = 0; v < names.size(); ++v)
    for (const Shape &s : base)
      shapes.push_back(shape(s.dims, int(v), names[v]));
  return shapes;
}

/// The config key of cases whose kernel changes with the variant only.
inline std::string variantKey(DType, const Shape &s) {
  return std::to_string(s.variant);
}

/// The error bound of a sum of n terms accumulated in `accumulator` with a
/// rounding after each addition, in any order: |error| <= (n - 1) u sum |x|
/// (Higham 4.2, u = eps / 2), per output element; n eps leaves room for
/// accumulators that truncate (tensor cores). Integer sums are exact (0).
/// Kernels accumulate narrow floats in f32 (tk.reduce, tk.scan, tk.dot), so
/// `accumulator` is f32 for them, not the storage type.
inline double sumErrorBound(DType accumulator, double sumAbs, int64_t n) {
  return double(std::max<int64_t>(n, 1)) * epsilonOf(accumulator) * sumAbs;
}

/// What a kernel accumulates sums of `dtype` in: f32 for floats up to f32,
/// f64 for f64, exact for integers.
inline DType accumulationOf(DType dtype) {
  if (!isFloat(dtype))
    return dtype;
  return dtype == DType::F64 ? DType::F64 : DType::F32;
}

} // namespace tk::conformance

#endif // TK_TESTS_CONFORMANCE_CASES_CASES_H_
