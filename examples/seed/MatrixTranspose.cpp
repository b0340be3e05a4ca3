//===- MatrixTranspose.cpp - output = input^T, tile by tile ---------------===//

#include "Example.h"
#include "SeedKernels.h"

namespace tk::examples {

int runMatrixTranspose(DType dtype) {
  Example ex("matrix_transpose", dtype);
  const int32_t rows = 257, cols = 130, block = 32;
  std::string error;
  tk_kernel kernel = ex.compile(
      seeds::buildMatrixTranspose(
          ex.context(), dtypeToMLIR(ex.context(), dtype), block, &error),
      error);

  std::vector<float> in = randomValues(size_t(rows) * cols, 4);
  DeviceArray din(ex.device(), dtype, in.size()),
      dout(ex.device(), dtype, in.size());
  din.upload(in);
  // input rows x cols (row-major), output cols x rows (row-major).
  ex.launch(kernel, {(rows + block - 1) / block, (cols + block - 1) / block, 1},
            {din.arg(), dout.arg(), tk_arg_i32(rows), tk_arg_i32(cols),
             tk_arg_i32(cols), tk_arg_i32(1), tk_arg_i32(rows), tk_arg_i32(1)});

  std::vector<float> want(in.size());
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t c = 0; c < cols; ++c)
      want[size_t(c) * rows + r] = roundTo(dtype, in[size_t(r) * cols + c]);
  tk_kernel_release(kernel);
  return ex.finish(std::to_string(rows) + "x" + std::to_string(cols),
                   dout.download(), want);
}

} // namespace tk::examples
