//===- ApproximateMath.cpp - vectorisable f32 math functions ----*- C++ -*-===//
//
// Replaces f32 transcendental functions by MLIR's polynomial approximations so
// that loops using them (softmax's exp, GELU's erf/tanh) vectorise.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tk::cpu {
#define GEN_PASS_DEF_TKCPUAPPROXIMATEMATH
#include "compiler/Passes.h.inc"
} // namespace tk::cpu

using namespace mlir;

namespace {

struct ApproximateMath
    : public tk::cpu::impl::TkCpuApproximateMathBase<ApproximateMath> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // The functions whose approximations are accurate to a few ulp over the
    // whole f32 range; sin/cos stay libm calls (their approximations lose
    // accuracy on large arguments).
    auto wanted = [](StringRef name) {
      return llvm::is_contained({"exp", "expm1", "log", "log1p", "log2", "tanh",
                                 "erf", "math.exp", "math.expm1", "math.log",
                                 "math.log1p", "math.log2", "math.tanh",
                                 "math.erf"},
                                name);
    };
    populateMathPolynomialApproximationPatterns(patterns, wanted);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
