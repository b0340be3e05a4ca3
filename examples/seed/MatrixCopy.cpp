//===- MatrixCopy.cpp - dst = src, one BLOCK x BLOCK tile per program -----===//

#include "Example.h"
#include "SeedKernels.h"

namespace tk::examples {

int runMatrixCopy(DType dtype) {
  Example ex("matrix_copy", dtype);
  const int32_t rows = 300, cols = 200, block = 64;
  std::string error;
  tk_kernel kernel = ex.compile(
      seeds::buildMatrixCopy(ex.context(), dtypeToMLIR(ex.context(), dtype),
                             block, &error),
      error);

  std::vector<float> src = randomValues(size_t(rows) * cols, 3);
  DeviceArray dsrc(ex.device(), dtype, src.size()),
      ddst(ex.device(), dtype, src.size());
  dsrc.upload(src);
  ex.launch(kernel, {(rows + block - 1) / block, (cols + block - 1) / block, 1},
            {dsrc.arg(), ddst.arg(), tk_arg_i32(rows), tk_arg_i32(cols),
             tk_arg_i32(cols), tk_arg_i32(1)});

  std::vector<float> want(src.size());
  for (size_t i = 0; i < src.size(); ++i)
    want[i] = roundTo(dtype, src[i]);
  tk_kernel_release(kernel);
  return ex.finish(std::to_string(rows) + "x" + std::to_string(cols),
                   ddst.download(), want);
}

} // namespace tk::examples
