//===- Softmax.cpp - fused row softmax, one row per program ---------------===//

#include "Example.h"
#include "SeedKernels.h"

#include <cmath>

namespace tk::examples {

std::vector<float> softmaxReference(DType dtype, const std::vector<float> &x,
                                    int32_t rows, int32_t cols) {
  std::vector<float> want(x.size());
  for (int32_t r = 0; r < rows; ++r) {
    const float *row = &x[size_t(r) * cols];
    double rowMax = -INFINITY, sum = 0;
    for (int32_t c = 0; c < cols; ++c)
      rowMax = std::max(rowMax, double(roundTo(dtype, row[c])));
    for (int32_t c = 0; c < cols; ++c)
      sum += std::exp(double(roundTo(dtype, row[c])) - rowMax);
    for (int32_t c = 0; c < cols; ++c)
      want[size_t(r) * cols + c] =
          float(std::exp(double(roundTo(dtype, row[c])) - rowMax) / sum);
  }
  return want;
}

int runSoftmax(DType dtype) {
  Example ex("softmax", dtype);
  const int32_t rows = 1823, cols = 781;
  // One row per tile: BLOCK is the next power of two >= cols.
  const int64_t block = seeds::nextPowerOf2(cols);
  std::string error;
  tk_kernel kernel = ex.compile(
      seeds::buildSoftmax(ex.context(), dtypeToMLIR(ex.context(), dtype), block,
                          &error),
      error);

  std::vector<float> x = randomValues(size_t(rows) * cols, 5);
  for (float &v : x)
    v *= 4.0f; // a spread that makes the max-subtraction matter
  DeviceArray din(ex.device(), dtype, x.size()),
      dout(ex.device(), dtype, x.size());
  din.upload(x);
  ex.launch(kernel, {rows, 1, 1},
            {din.arg(), dout.arg(), tk_arg_i32(cols), tk_arg_i32(cols),
             tk_arg_i32(cols)});
  tk_kernel_release(kernel);
  return ex.finish(std::to_string(rows) + "x" + std::to_string(cols),
                   dout.download(), softmaxReference(dtype, x, rows, cols));
}

} // namespace tk::examples
