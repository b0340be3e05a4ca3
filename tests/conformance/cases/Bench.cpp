//===- Bench.cpp - every configuration the GPU benchmark may time ---------===//
//
// One cell per candidate of tests/bench/BenchKernels.h, built and compiled
// exactly as the benchmark builds and compiles it (the same builder call,
// warps, stages, occupancy hint and constexprs), run on a small problem with
// edges that do not fill the blocks: whatever configuration tk_autotune
// picks on a GPU, the figure it reports is of a kernel the matrix checked.
//
//===----------------------------------------------------------------------===//

#include "Cases.h"

#include "BenchKernels.h"

using namespace tk;
using namespace tk::conformance;

namespace {

/// The candidates of every figure of `kind`, each with the figure's dtype,
/// in the figures' order; a label shared by several figures of one dtype
/// (4096^3 and 8192^3 tile the same) is one candidate.
struct Known {
  DType dtype;
  const bench::BenchFigure *figure;
  const bench::BenchCandidate *candidate;
};

const std::vector<bench::BenchFigure> &figures() {
  static const std::vector<bench::BenchFigure> all = bench::getBenchFigures();
  return all;
}

std::vector<Known> candidatesOf(bench::BenchKind kind) {
  std::vector<Known> known;
  for (const bench::BenchFigure &figure : figures()) {
    if (figure.kind != kind)
      continue;
    DType dtype = *parseDType(figure.dtype);
    for (const bench::BenchCandidate &candidate : figure.candidates) {
      bool seen = false;
      for (const Known &k : known)
        seen |= k.dtype == dtype && k.candidate->label == candidate.label &&
                k.figure->shape.back() == figure.shape.back();
      if (!seen)
        known.push_back({dtype, &figure, &candidate});
    }
  }
  return known;
}

/// A case of one cell per candidate of `kind`: variant i is the i-th
/// candidate of the case's first dtype (the others have the same labels),
/// `small(figure, candidate)` the problem it runs on.
ConformanceCase
benchCase(bench::BenchKind kind, std::string name, std::string summary,
          std::function<Shape(const Known &)> small,
          std::function<void(CellRun &, const bench::BenchCandidate &)> run) {
  std::vector<Known> known = candidatesOf(kind);
  ConformanceCase c;
  c.name = std::move(name);
  c.summary = std::move(summary);
  for (const Known &k : known)
    if (!llvm::is_contained(c.dtypes, k.dtype))
      c.dtypes.push_back(k.dtype);
  // The variants: the first dtype's candidates, by label (and, where one
  // label spans figures of different widths, by the figure's last extent).
  std::vector<Known> variants;
  for (const Known &k : known)
    if (k.dtype == c.dtypes.front())
      variants.push_back(k);
  for (size_t i = 0; i < variants.size(); ++i) {
    Shape s = small(variants[i]);
    s.variant = int(i);
    s.variantName = variants[i].candidate->label;
    c.shapes.push_back(std::move(s));
  }
  // The candidate of `dtype` with the variant's label and width.
  auto find = [known,
               variants](DType dtype,
                         const Shape &s) -> const bench::BenchCandidate * {
    const Known &variant = variants[size_t(s.variant)];
    for (const Known &k : known)
      if (k.dtype == dtype && k.candidate->label == variant.candidate->label &&
          k.figure->shape.back() == variant.figure->shape.back())
        return k.candidate;
    return nullptr;
  };
  c.configKey = variantKey;
  c.settings = [find](DType dtype, const Shape &s) {
    CompileSettings settings;
    if (const bench::BenchCandidate *candidate = find(dtype, s))
      settings = {candidate->numWarps, candidate->numStages,
                  candidate->minProgramsPerCu, candidate->constexprs};
    return settings;
  };
  c.build = TK_KERNEL_BUILDER([find](mlir::MLIRContext *ctx, DType dtype,
                                     const Shape &s,
                                     std::string *error) -> KernelModule {
    const bench::BenchCandidate *candidate = find(dtype, s);
    if (!candidate) {
      *error = "the bench has no " + dtypeName(dtype).str() + " candidate " +
               s.variantName;
      return mlir::failure();
    }
    KernelModule module = candidate->build(ctx);
    if (mlir::failed(module))
      *error = "the seed builder refused " + s.variantName;
    return module;
  });
  c.run = [find, run](CellRun &r) {
    if (const bench::BenchCandidate *candidate = find(r.dtype(), r.shape()))
      run(r, *candidate);
    else
      r.fail("no candidate " + r.shape().variantName);
  };
  return c;
}

} // namespace

void tk::conformance::addBenchCases(std::vector<ConformanceCase> &cases) {
  // A length that ends mid-block.
  cases.push_back(benchCase(
      bench::BenchKind::VectorAdd, "bench_vector_add",
      "the vector add configuration of the GPU bench",
      [](const Known &) { return shape({5000}); },
      [](CellRun &r, const bench::BenchCandidate &candidate) {
        int64_t n = r.dim(0);
        std::vector<double> x = r.random(n, -100, 100, r.dtype(), 1);
        std::vector<double> y = r.random(n, -100, 100, r.dtype(), 2);
        tk_arg dx = r.input(r.dtype(), x), dy = r.input(r.dtype(), y);
        tk_arg out = r.output(r.dtype(), n);
        r.launch({cdiv(n, candidate.blockN), 1, 1},
                 {dx, dy, out, tk_arg_i32(int32_t(n))});
        std::vector<double> want(n);
        for (int64_t i = 0; i < n; ++i)
          want[i] = roundTo(r.dtype(), x[i] + y[i]);
        r.check("out", r.read(out), want, defaultTolerance(r.dtype()));
      }));
  // Rows of a width that leaves the block's last 48 columns masked; row
  // strides stay multiples of 16 elements, as the kernels declare them.
  cases.push_back(benchCase(
      bench::BenchKind::Softmax, "bench_softmax",
      "every softmax configuration of the GPU bench (warps, occupancy hint)",
      [](const Known &k) {
        return shape({3, k.candidate->blockN - 48});
      },
      [](CellRun &r, const bench::BenchCandidate &) { runSoftmax(r); }));
  // Edges in M and N that do not fill the tiles, K a multiple of 16 that
  // ends mid-block; N and K multiples of 16, as the row strides declare,
  // and M too where the candidate declares its sizes so.
  cases.push_back(benchCase(
      bench::BenchKind::Matmul, "bench_matmul",
      "every matmul configuration of the GPU bench (tiles, warps, stages; "
      "unit inner strides folded in)",
      [](const Known &k) {
        if (k.candidate->blockM < 64)
          return shape({20, 96, 144});
        return k.candidate->sizeDivisibility ? shape({144, 304, 208})
                                             : shape({130, 304, 208});
      },
      [](CellRun &r, const bench::BenchCandidate &candidate) {
        runMatmul(r, candidate.blockM, candidate.blockN,
                  /*unitInnerStrides=*/true);
      }));
  // The fp8 matmuls, b K-major, per-tensor or per-row scales, bf16
  // results: edges as bench_matmul's.
  for (bool perRow : {false, true})
    cases.push_back(benchCase(
        perRow ? bench::BenchKind::RowScaledMatmul
               : bench::BenchKind::ScaledMatmul,
        perRow ? "bench_row_scaled_matmul" : "bench_scaled_matmul",
        std::string("every ") + (perRow ? "row-scaled" : "scaled") +
            " fp8 matmul configuration of the GPU bench (b K-major, " +
            (perRow ? "per-row" : "per-tensor") + " scales, bf16 result)",
        [](const Known &) {
          return shape({130, 304, 208});
        },
        [perRow](CellRun &r, const bench::BenchCandidate &candidate) {
          PaddedMatmul options;
          options.blockM = candidate.blockM;
          options.blockN = candidate.blockN;
          options.kMajorB = true;
          options.scales = perRow ? seeds::MatmulScales::PerRow
                                  : seeds::MatmulScales::PerTensor;
          options.out = DType::BF16;
          runPaddedMatmul(r, options);
        }));
  // A head dim 16 short of the block's, rows that end mid-block.
  cases.push_back(benchCase(
      bench::BenchKind::Attention, "bench_attention",
      "every attention configuration of the GPU bench (blocks, warps, "
      "stages, occupancy hint) at head dims 64, 128 and 256",
      [](const Known &k) {
        return shape({2, 150, k.figure->shape[2] - 16});
      },
      [](CellRun &r, const bench::BenchCandidate &candidate) {
        runAttention(r, candidate.blockM);
      }));
  cases.push_back(benchCase(
      bench::BenchKind::CausalAttention, "bench_causal_attention",
      "every causal attention configuration of the GPU bench at head dims "
      "64, 128 and 256",
      [](const Known &k) {
        return shape({2, 150, k.figure->shape[2] - 16});
      },
      [](CellRun &r, const bench::BenchCandidate &candidate) {
        runAttention(r, candidate.blockM, /*causal=*/true);
      }));
}
