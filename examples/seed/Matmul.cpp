//===- Matmul.cpp - c = a @ b, tiled, grouped program order ---------------===//

#include "Example.h"
#include "SeedKernels.h"

namespace tk::examples {

int runMatmul(DType dtype) {
  Example ex("matmul", dtype);
  const int32_t M = 333, N = 257, K = 200; // none a multiple of the blocks
  seeds::MatmulConfig config;
  std::string error;
  tk_kernel kernel = ex.compile(
      seeds::buildMatmul(ex.context(), dtypeToMLIR(ex.context(), dtype),
                         dtypeToMLIR(ex.context(), dtype), config, &error),
      error);

  std::vector<float> a = randomValues(size_t(M) * K, 7),
                     b = randomValues(size_t(K) * N, 8);
  DeviceArray da(ex.device(), dtype, a.size()),
      db(ex.device(), dtype, b.size()), dc(ex.device(), dtype, size_t(M) * N);
  da.upload(a);
  db.upload(b);
  int32_t gridM = int32_t((M + config.blockM - 1) / config.blockM);
  int32_t gridN = int32_t((N + config.blockN - 1) / config.blockN);
  ex.launch(kernel, {gridM * gridN, 1, 1},
            {da.arg(), db.arg(), dc.arg(), tk_arg_i32(M), tk_arg_i32(N),
             tk_arg_i32(K), tk_arg_i32(K), tk_arg_i32(1), tk_arg_i32(N),
             tk_arg_i32(1), tk_arg_i32(N), tk_arg_i32(1)});

  // The reference accumulates in double over the rounded inputs; the kernel
  // accumulates in f32 and rounds once to the output dtype.
  std::vector<float> want(size_t(M) * N);
  for (int32_t i = 0; i < M; ++i)
    for (int32_t j = 0; j < N; ++j) {
      double sum = 0;
      for (int32_t k = 0; k < K; ++k)
        sum += double(roundTo(dtype, a[size_t(i) * K + k])) *
               double(roundTo(dtype, b[size_t(k) * N + j]));
      want[size_t(i) * N + j] = float(sum);
    }
  tk_kernel_release(kernel);
  return ex.finish(std::to_string(M) + "x" + std::to_string(N) + "x" +
                       std::to_string(K),
                   dc.download(), want);
}

} // namespace tk::examples
