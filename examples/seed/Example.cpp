//===- Example.cpp - shared plumbing of the seed-kernel examples ----------===//

#include "Example.h"

#include "tk/ir/Dialect.h"

#include "mlir/IR/Builders.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tk::examples {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  }
  return "?";
}

size_t dtypeSize(DType dtype) { return dtype == DType::F32 ? 4 : 2; }

mlir::Type dtypeToMLIR(mlir::MLIRContext *ctx, DType dtype) {
  mlir::Builder b(ctx);
  switch (dtype) {
  case DType::F32:
    return b.getF32Type();
  case DType::F16:
    return b.getF16Type();
  case DType::BF16:
    return b.getBF16Type();
  }
  return {};
}

double tolerance(DType dtype) {
  // Relative to values of order 1: f16 keeps 11 significant bits, bf16 8.
  switch (dtype) {
  case DType::F32:
    return 1e-4;
  case DType::F16:
    return 1e-2;
  case DType::BF16:
    return 6e-2;
  }
  return 0;
}

float roundTo(DType dtype, float value) {
  switch (dtype) {
  case DType::F32:
    return value;
  case DType::F16:
    return tk_f16_to_f32(tk_f32_to_f16(value));
  case DType::BF16:
    return tk_bf16_to_f32(tk_f32_to_bf16(value));
  }
  return value;
}

std::vector<float> randomValues(size_t count, uint32_t seed) {
  std::vector<float> values(count);
  uint32_t state = seed * 2654435761u + 1;
  for (float &v : values) {
    state = state * 1664525u + 1013904223u; // Numerical Recipes LCG
    v = float(state >> 8) / float(1u << 24) * 2.0f - 1.0f;
  }
  return values;
}

//===----------------------------------------------------------------------===//
// DeviceArray
//===----------------------------------------------------------------------===//

DeviceArray::DeviceArray(tk_device device, DType dtype, size_t count)
    : dtype_(dtype), count_(count) {
  if (tk_buffer_create(device, count * dtypeSize(dtype), &buffer_) !=
      TK_SUCCESS) {
    std::fprintf(stderr, "tk_buffer_create: %s\n", tk_last_error());
    std::exit(1);
  }
}

DeviceArray::~DeviceArray() { tk_buffer_release(buffer_); }

void DeviceArray::upload(const std::vector<float> &values) {
  std::vector<uint8_t> bytes(count_ * dtypeSize(dtype_));
  for (size_t i = 0; i < count_; ++i) {
    if (dtype_ == DType::F32) {
      std::memcpy(&bytes[i * 4], &values[i], 4);
    } else {
      uint16_t h = dtype_ == DType::F16 ? tk_f32_to_f16(values[i])
                                        : tk_f32_to_bf16(values[i]);
      std::memcpy(&bytes[i * 2], &h, 2);
    }
  }
  if (tk_buffer_write(buffer_, 0, bytes.data(), bytes.size()) != TK_SUCCESS) {
    std::fprintf(stderr, "tk_buffer_write: %s\n", tk_last_error());
    std::exit(1);
  }
}

std::vector<float> DeviceArray::download() const {
  std::vector<uint8_t> bytes(count_ * dtypeSize(dtype_));
  if (tk_buffer_read(buffer_, 0, bytes.data(), bytes.size()) != TK_SUCCESS) {
    std::fprintf(stderr, "tk_buffer_read: %s\n", tk_last_error());
    std::exit(1);
  }
  std::vector<float> values(count_);
  for (size_t i = 0; i < count_; ++i) {
    if (dtype_ == DType::F32) {
      std::memcpy(&values[i], &bytes[i * 4], 4);
    } else {
      uint16_t h;
      std::memcpy(&h, &bytes[i * 2], 2);
      values[i] = dtype_ == DType::F16 ? tk_f16_to_f32(h) : tk_bf16_to_f32(h);
    }
  }
  return values;
}

//===----------------------------------------------------------------------===//
// Example
//===----------------------------------------------------------------------===//

Example::Example(const char *name, DType dtype) : name_(name), dtype_(dtype) {
  mlir::DialectRegistry registry;
  tk::registerTkDialects(registry);
  context_.appendDialectRegistry(registry);
  context_.loadAllAvailableDialects();
  check(tk_device_get(0, &device_), "tk_device_get");
}

void Example::fail(const std::string &what) {
  std::printf("%-20s %-5s FAIL  %s\n", name_, dtypeName(dtype_), what.c_str());
  std::exit(1);
}

void Example::check(tk_status status, const char *what) {
  if (status != TK_SUCCESS)
    fail(std::string(what) + ": " + tk_status_string(status) + ": " +
         tk_last_error());
}

tk_kernel
Example::compile(mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>> module,
                 const std::string &builderError) {
  if (mlir::failed(module))
    fail("the builder refused the kernel: " + builderError);
  mlir::ModuleOp op = module->get();
  tk_kernel_source source = {TK_SOURCE_MODULE, &op, 0, nullptr};
  tk_kernel kernel = nullptr;
  check(tk_kernel_create(device_, &source, nullptr, &kernel),
        "tk_kernel_create");
  return kernel;
}

void Example::launch(tk_kernel kernel, tk_grid grid, std::vector<tk_arg> args) {
  tk_args packed = {args.data(), args.size()};
  auto start = std::chrono::steady_clock::now();
  check(tk_launch(kernel, grid, &packed), "tk_launch");
  launchMs_ = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
}

int Example::finish(const std::string &shape, const std::vector<float> &got,
                    const std::vector<float> &want) {
  double maxError = 0;
  size_t worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double error = std::fabs(double(got[i]) - double(want[i])) /
                   std::max(1.0, std::fabs(double(want[i])));
    if (!(error <= maxError)) { // NaN counts as the worst error
      maxError = std::isnan(error) ? INFINITY : error;
      worst = i;
    }
  }
  const char *backend = "?";
  tk_backend_name(&backend);
  bool ok = maxError <= tolerance(dtype_);
  std::printf("%-20s %-5s %-16s on %-5s max_rel_err %.2e  %s  (%.2f ms)\n",
              name_, dtypeName(dtype_), shape.c_str(), backend, maxError,
              ok ? "PASS" : "FAIL", launchMs_);
  if (!ok)
    std::printf("  first worst element %zu: got %g, want %g\n", worst,
                got[worst], want[worst]);
  return ok ? 0 : 1;
}

} // namespace tk::examples
