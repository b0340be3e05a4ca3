//===- LayerNorm.cpp - y = (x - mean) / sqrt(var + eps) * w + b per row ---===//

#include "Example.h"
#include "SeedKernels.h"

#include <cmath>

namespace tk::examples {

int runLayerNorm(DType dtype) {
  Example ex("layernorm", dtype);
  const int32_t rows = 517, cols = 700;
  const float eps = 1e-5f;
  std::string error;
  tk_kernel kernel = ex.compile(
      seeds::buildLayerNorm(ex.context(), dtypeToMLIR(ex.context(), dtype),
                            seeds::nextPowerOf2(cols), &error),
      error);

  std::vector<float> x = randomValues(size_t(rows) * cols, 9),
                     w = randomValues(cols, 10), b = randomValues(cols, 11);
  DeviceArray dx(ex.device(), dtype, x.size()),
      dy(ex.device(), dtype, x.size()), dw(ex.device(), dtype, cols),
      db(ex.device(), dtype, cols);
  dx.upload(x);
  dw.upload(w);
  db.upload(b);
  ex.launch(kernel, {rows, 1, 1},
            {dx.arg(), dy.arg(), dw.arg(), db.arg(), tk_arg_i32(cols),
             tk_arg_i32(cols), tk_arg_f32(eps)});

  std::vector<float> want(x.size());
  for (int32_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int32_t c = 0; c < cols; ++c)
      mean += roundTo(dtype, x[size_t(r) * cols + c]);
    mean /= cols;
    for (int32_t c = 0; c < cols; ++c) {
      double d = roundTo(dtype, x[size_t(r) * cols + c]) - mean;
      var += d * d;
    }
    var /= cols;
    double rstd = 1.0 / std::sqrt(var + eps);
    for (int32_t c = 0; c < cols; ++c)
      want[size_t(r) * cols + c] =
          float((roundTo(dtype, x[size_t(r) * cols + c]) - mean) * rstd *
                    roundTo(dtype, w[c]) +
                roundTo(dtype, b[c]));
  }
  tk_kernel_release(kernel);
  return ex.finish(std::to_string(rows) + "x" + std::to_string(cols),
                   dy.download(), want);
}

} // namespace tk::examples
