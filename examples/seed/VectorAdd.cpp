//===- VectorAdd.cpp - out = x + y ----------------------------------------===//

#include "Example.h"
#include "SeedKernels.h"

namespace tk::examples {

int runVectorAdd(DType dtype) {
  Example ex("vector_add", dtype);
  const int32_t n =
      98432; // not a multiple of BLOCK: the last program is masked
  const int32_t block = 1024;
  std::string error;
  tk_kernel kernel = ex.compile(
      seeds::buildVectorAdd(ex.context(), dtypeToMLIR(ex.context(), dtype),
                            block, &error),
      error);

  std::vector<float> x = randomValues(n, 1), y = randomValues(n, 2);
  DeviceArray dx(ex.device(), dtype, n), dy(ex.device(), dtype, n),
      dout(ex.device(), dtype, n);
  dx.upload(x);
  dy.upload(y);
  ex.launch(kernel, {(n + block - 1) / block, 1, 1},
            {dx.arg(), dy.arg(), dout.arg(), tk_arg_i32(n)});

  std::vector<float> want(n);
  for (int32_t i = 0; i < n; ++i)
    want[i] = roundTo(dtype, roundTo(dtype, x[i]) + roundTo(dtype, y[i]));
  tk_kernel_release(kernel);
  return ex.finish(std::to_string(n), dout.download(), want);
}

} // namespace tk::examples
