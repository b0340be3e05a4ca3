//===- Example.h - shared plumbing of the seed-kernel examples -*- C++ -*-===//
//
// Each example builds its kernel with the C++ builder, launches it through the
// C API on the default backend, compares with a host reference and prints one
// line. This header holds what they all need: dtype conversion of host data,
// buffers, launching, and the result line.
//
//===----------------------------------------------------------------------===//

#ifndef TK_EXAMPLES_SEED_EXAMPLE_H_
#define TK_EXAMPLES_SEED_EXAMPLE_H_

#include "tk/tk.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tk::examples {

/// The element types the examples run with.
enum class DType { F32, F16, BF16 };

const char *dtypeName(DType dtype);
size_t dtypeSize(DType dtype);
mlir::Type dtypeToMLIR(mlir::MLIRContext *ctx, DType dtype);
/// The largest error accepted against an f32/f64 reference.
double tolerance(DType dtype);

/// Rounds `value` to `dtype` and back, so references see the same inputs as
/// the kernel.
float roundTo(DType dtype, float value);

/// A device buffer holding `count` elements of `dtype`.
class DeviceArray {
public:
  DeviceArray(tk_device device, DType dtype, size_t count);
  ~DeviceArray();
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;

  void upload(const std::vector<float> &values);
  std::vector<float> download() const;
  tk_arg arg() const { return tk_arg_buffer(buffer_); }

private:
  tk_buffer buffer_ = nullptr;
  DType dtype_;
  size_t count_;
};

/// The state of one example run: the device, errors, timing.
class Example {
public:
  explicit Example(const char *name, DType dtype);

  tk_device device() const { return device_; }
  DType dtype() const { return dtype_; }
  mlir::MLIRContext *context() { return &context_; }

  /// Compiles `module` (a builder module) through tk_kernel_create.
  tk_kernel compile(mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>> module,
                    const std::string &builderError);
  /// Launches and waits; records the time of the launch.
  void launch(tk_kernel kernel, tk_grid grid, std::vector<tk_arg> args);

  /// Prints the result line, comparing `got` with `want`; returns the exit
  /// status of the example (0 on a match).
  int finish(const std::string &shape, const std::vector<float> &got,
             const std::vector<float> &want);

  /// Stops the example with a message (a tk call or the builder failed).
  [[noreturn]] void fail(const std::string &what);
  void check(tk_status status, const char *what);

private:
  const char *name_;
  DType dtype_;
  tk_device device_ = nullptr;
  mlir::MLIRContext context_;
  double launchMs_ = 0;
};

/// Deterministic inputs in [-1, 1).
std::vector<float> randomValues(size_t count, uint32_t seed);

/// Row softmax in double precision over the dtype-rounded inputs.
std::vector<float> softmaxReference(DType dtype, const std::vector<float> &x,
                                    int32_t rows, int32_t cols);

int runVectorAdd(DType dtype);
int runMatrixCopy(DType dtype);
int runMatrixTranspose(DType dtype);
int runSoftmax(DType dtype);
int runPersistentSoftmax(DType dtype);
int runMatmul(DType dtype);
int runLayerNorm(DType dtype);

} // namespace tk::examples

#endif // TK_EXAMPLES_SEED_EXAMPLE_H_
