//===- PersistentSoftmax.cpp - softmax on a grid sized by occupancy -------===//
//
// The seed's persistent kernel: launch only as many programs as fit on the
// device at once (programs per compute unit × compute units) and let each
// loop over rows with a stride of num_programs.
//
//===----------------------------------------------------------------------===//

#include "Example.h"
#include "SeedKernels.h"

#include <algorithm>

namespace tk::examples {

int runPersistentSoftmax(DType dtype) {
  Example ex("persistent_softmax", dtype);
  const int32_t rows = 4099, cols = 1000;
  std::string error;
  tk_kernel kernel =
      ex.compile(seeds::buildPersistentSoftmax(
                     ex.context(), dtypeToMLIR(ex.context(), dtype),
                     seeds::nextPowerOf2(cols), &error),
                 error);

  tk_device_props props = {};
  props.struct_size = sizeof(props);
  ex.check(tk_device_query(ex.device(), &props), "tk_device_query");
  int perCU = 0;
  ex.check(tk_kernel_occupancy(kernel, &perCU), "tk_kernel_occupancy");
  int32_t programs =
      std::min<int32_t>(rows, std::max(1, perCU) * props.compute_units);

  std::vector<float> x = randomValues(size_t(rows) * cols, 6);
  DeviceArray din(ex.device(), dtype, x.size()),
      dout(ex.device(), dtype, x.size());
  din.upload(x);
  ex.launch(kernel, {programs, 1, 1},
            {din.arg(), dout.arg(), tk_arg_i32(cols), tk_arg_i32(cols),
             tk_arg_i32(rows), tk_arg_i32(cols)});
  tk_kernel_release(kernel);
  return ex.finish(std::to_string(rows) + "x" + std::to_string(cols) + " g" +
                       std::to_string(programs),
                   dout.download(), softmaxReference(dtype, x, rows, cols));
}

} // namespace tk::examples
