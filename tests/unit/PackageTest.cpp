//===- PackageTest.cpp - kernels from a package, through tk.h -------------===//
//
// A package tk-compile built (ctest's fixture package-build: vector_add,
// softmax and Triton's gelu_clamp for cpu, vulkan, cuda sm_90a, rocm gfx942
// and xe pvc) loads on
// the device TK_BACKEND selects without compiling, and its kernels give
// what the host computes; a package without this device's target, a
// damaged or truncated one, an unknown kernel, and options a package cannot
// honour are each refused with their message.
//
//===----------------------------------------------------------------------===//

#include "tk/package/Package.h"
#include "tk/runtime/Kernel.h"
#include "tk/tk.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using ::testing::HasSubstr;

namespace {

#define CHECK_TK(call) ASSERT_EQ((call), TK_SUCCESS) << tk_last_error()

std::string readPackage() {
  const char *path = std::getenv("TK_TEST_PACKAGE");
  std::ifstream in(path ? path : "", std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class PackageTest : public ::testing::Test {
protected:
  void SetUp() override {
    bytes = readPackage();
    ASSERT_FALSE(bytes.empty()) << "TK_TEST_PACKAGE names no package";
    CHECK_TK(tk_device_get(0, &device));
    CHECK_TK(tk_backend_name(&backend));
  }

  tk_status create(const std::string &package, const char *entry,
                   const tk_compile_options *options = nullptr) {
    tk_kernel_source source = {};
    source.kind = TK_SOURCE_PACKAGE;
    source.data = package.data();
    source.size = package.size();
    source.entry = entry;
    if (kernel)
      tk_kernel_release(kernel);
    kernel = nullptr;
    return tk_kernel_create(device, &source, options, &kernel);
  }

  void TearDown() override {
    if (kernel)
      tk_kernel_release(kernel);
  }

  std::string bytes;
  tk_device device = nullptr;
  const char *backend = nullptr;
  tk_kernel kernel = nullptr;
};

TEST_F(PackageTest, KernelsRunWithoutACompile) {
  CHECK_TK(create(bytes, "vector_add"));
  auto *object = reinterpret_cast<tk::runtime::Kernel *>(
      reinterpret_cast<tk::runtime::HandleObject *>(kernel));
  EXPECT_EQ(object->getOrigin(), tk::runtime::BinaryOrigin::Package);
  int count = 0;
  CHECK_TK(tk_kernel_num_args(kernel, &count));
  EXPECT_EQ(count, 4);

  constexpr int32_t n = 4099;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int32_t i = 0; i < n; ++i) {
    x[i] = 0.5f * float(i);
    y[i] = float(n - i);
  }
  tk_buffer bx, by, bout;
  CHECK_TK(tk_buffer_create(device, n * 4, &bx));
  CHECK_TK(tk_buffer_create(device, n * 4, &by));
  CHECK_TK(tk_buffer_create(device, n * 4, &bout));
  CHECK_TK(tk_buffer_write(bx, 0, x.data(), n * 4));
  CHECK_TK(tk_buffer_write(by, 0, y.data(), n * 4));
  tk_arg args[] = {tk_arg_buffer(bx), tk_arg_buffer(by), tk_arg_buffer(bout),
                   tk_arg_i32(n)};
  tk_args list = {args, 4};
  CHECK_TK(tk_launch(kernel, tk_grid{(n + 1023) / 1024, 1, 1}, &list));
  CHECK_TK(tk_buffer_read(bout, 0, out.data(), n * 4));
  for (int32_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i], x[i] + y[i]) << i << " on " << backend;
  // The signature came from the package: a launch is checked against it.
  tk_args short_list = {args, 3};
  EXPECT_EQ(tk_launch(kernel, tk_grid{1, 1, 1}, &short_list),
            TK_ERROR_ARGUMENT_MISMATCH);

  // Softmax, the package's second kernel, row by row.
  CHECK_TK(create(bytes, "softmax"));
  constexpr int32_t rows = 3, cols = 1000;
  std::vector<float> in(rows * cols), soft(rows * cols, -1.0f);
  for (int32_t i = 0; i < rows * cols; ++i)
    in[i] = std::sin(0.01f * float(i));
  tk_buffer bin, bsoft;
  CHECK_TK(tk_buffer_create(device, in.size() * 4, &bin));
  CHECK_TK(tk_buffer_create(device, in.size() * 4, &bsoft));
  CHECK_TK(tk_buffer_write(bin, 0, in.data(), in.size() * 4));
  tk_arg softArgs[] = {tk_arg_buffer(bin), tk_arg_buffer(bsoft),
                       tk_arg_i32(cols), tk_arg_i32(cols), tk_arg_i32(cols)};
  tk_args softList = {softArgs, 5};
  CHECK_TK(tk_launch(kernel, tk_grid{rows, 1, 1}, &softList));
  CHECK_TK(tk_buffer_read(bsoft, 0, soft.data(), soft.size() * 4));
  for (int32_t r = 0; r < rows; ++r) {
    double max = -INFINITY, sum = 0;
    for (int32_t c = 0; c < cols; ++c)
      max = std::max<double>(max, in[r * cols + c]);
    for (int32_t c = 0; c < cols; ++c)
      sum += std::exp(in[r * cols + c] - max);
    for (int32_t c = 0; c < cols; ++c)
      ASSERT_NEAR(soft[r * cols + c], std::exp(in[r * cols + c] - max) / sum,
                  1e-6)
          << r << ", " << c;
  }
  for (tk_buffer buffer : {bx, by, bout, bin, bsoft})
    CHECK_TK(tk_buffer_release(buffer));
}

/// Triton's kernel, from its TTIR, with Triton's num_warps (its JSON).
TEST_F(PackageTest, ATritonKernelLoads) {
  tk::package::Package package;
  std::string error;
  ASSERT_TRUE(tk::package::read(bytes.data(), bytes.size(), package, error));
  const tk::package::Kernel *gelu = package.find("gelu_clamp");
  ASSERT_NE(gelu, nullptr);
  EXPECT_EQ(gelu->numWarps, 4);
  EXPECT_EQ(gelu->numStages, 3);
  CHECK_TK(create(bytes, "gelu_clamp"));
  int count = 0;
  CHECK_TK(tk_kernel_num_args(kernel, &count));
  EXPECT_EQ(count, static_cast<int>(gelu->arguments.size()));
}

TEST_F(PackageTest, ADeviceThePackageLacksIsNamed) {
  tk::package::Package package;
  std::string error;
  ASSERT_TRUE(tk::package::read(bytes.data(), bytes.size(), package, error));
  for (tk::package::Kernel &kernel : package.kernels)
    kernel.binaries.erase(
        std::remove_if(kernel.binaries.begin(), kernel.binaries.end(),
                       [&](const tk::package::Binary &binary) {
                         return binary.backend == backend;
                       }),
        kernel.binaries.end());
  std::string without;
  ASSERT_TRUE(tk::package::write(package, without, error)) << error;
  EXPECT_EQ(create(without, "vector_add"), TK_ERROR_UNSUPPORTED);
  EXPECT_THAT(tk_last_error(), HasSubstr("has no binary for this device (" +
                                         std::string(backend) + " '"));
  // The package's other targets are listed.
  EXPECT_THAT(tk_last_error(), HasSubstr(std::string(backend) == "cuda"
                                             ? "rocm 'gfx942"
                                             : "cuda 'sm_90a'"));
  EXPECT_EQ(kernel, nullptr);
}

/// A package built for another arch of the device's backend (another CPU's
/// ISA, a subgroup size the device does not run, a later GPU's
/// arch-specific code) is refused, naming both.
TEST_F(PackageTest, APackageForAnotherArchIsRefused) {
  tk::package::Package package;
  std::string error;
  ASSERT_TRUE(tk::package::read(bytes.data(), bytes.size(), package, error));
  const std::string own = backend;
  std::string foreign = own == "cpu" ? "aarch64-unknown-linux-gnu generic"
                        : own == "vulkan"
                            ? "subgroup128 shared32768 threads1024"
                        : own == "cuda" ? "sm_120a"
                                        : "an arch of no device";
  for (tk::package::Kernel &kernel : package.kernels)
    for (tk::package::Binary &binary : kernel.binaries)
      if (binary.backend == own)
        binary.target = foreign;
  // Two binaries of one target are refused by the writer: keep the first.
  for (tk::package::Kernel &kernel : package.kernels) {
    bool seen = false;
    kernel.binaries.erase(
        std::remove_if(kernel.binaries.begin(), kernel.binaries.end(),
                       [&](const tk::package::Binary &binary) {
                         if (binary.backend != own)
                           return false;
                         bool drop = seen;
                         seen = true;
                         return drop;
                       }),
        kernel.binaries.end());
  }
  std::string other;
  ASSERT_TRUE(tk::package::write(package, other, error)) << error;
  EXPECT_EQ(create(other, "vector_add"), TK_ERROR_UNSUPPORTED);
  EXPECT_THAT(tk_last_error(), HasSubstr("nor one that runs there"));
  EXPECT_THAT(tk_last_error(), HasSubstr(own + " '" + foreign + "'"));
  EXPECT_EQ(kernel, nullptr);
}

/// Where the package lacks the device's own target, code that runs there
/// in a portable form loads: SPIR-V for the generic Vulkan target at the
/// device's subgroup size, or sm_80 code with its PTX on a later NVIDIA GPU.
/// The cpu has none.
TEST_F(PackageTest, PortableCodeLoadsWhereTheOwnTargetIsMissing) {
  const char *path = std::getenv("TK_TEST_PORTABLE_PACKAGE");
  ASSERT_NE(path, nullptr);
  std::ifstream in(path, std::ios::binary);
  std::stringstream read;
  read << in.rdbuf();
  std::string portable = read.str();
  ASSERT_FALSE(portable.empty());
  if (std::string(backend) == "cpu") {
    EXPECT_EQ(create(portable, "vector_add"), TK_ERROR_UNSUPPORTED);
    EXPECT_THAT(tk_last_error(), HasSubstr("nor one that runs there"));
    return;
  }
  CHECK_TK(create(portable, "vector_add"));
  constexpr int32_t n = 3000;
  std::vector<float> x(n, 1.5f), out(n, 0.0f);
  tk_buffer bx, bout;
  CHECK_TK(tk_buffer_create(device, n * 4, &bx));
  CHECK_TK(tk_buffer_create(device, n * 4, &bout));
  CHECK_TK(tk_buffer_write(bx, 0, x.data(), n * 4));
  tk_arg args[] = {tk_arg_buffer(bx), tk_arg_buffer(bx), tk_arg_buffer(bout),
                   tk_arg_i32(n)};
  tk_args list = {args, 4};
  CHECK_TK(tk_launch(kernel, tk_grid{(n + 1023) / 1024, 1, 1}, &list));
  CHECK_TK(tk_buffer_read(bout, 0, out.data(), n * 4));
  for (int32_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i], 3.0f) << i;
  CHECK_TK(tk_buffer_release(bx));
  CHECK_TK(tk_buffer_release(bout));
}

TEST_F(PackageTest, DamageIsNamed) {
  std::string damaged = bytes;
  damaged[damaged.size() / 2] ^= 0x10;
  EXPECT_EQ(create(damaged, "vector_add"), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(), HasSubstr("package: "));
  EXPECT_THAT(tk_last_error(), HasSubstr("damaged"));
  EXPECT_EQ(create(bytes.substr(0, bytes.size() - 100), "vector_add"),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(), HasSubstr("(truncated?)"));
  EXPECT_EQ(create(bytes.substr(0, 10), "vector_add"),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(), HasSubstr("32-byte header"));
  EXPECT_EQ(create("", "vector_add"), TK_ERROR_INVALID_ARGUMENT);
  std::string text =
      "tk.func @f() {\n  tk.return\n}\n// a source, not a package\n";
  EXPECT_EQ(create(text, "f"), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(), HasSubstr("not a tk package"));
}

TEST_F(PackageTest, WhatThePackageFixedCannotChange) {
  EXPECT_EQ(create(bytes, "matmul"), TK_ERROR_NOT_FOUND);
  EXPECT_THAT(tk_last_error(),
              HasSubstr("(it has: vector_add, softmax, gelu_clamp)"));
  EXPECT_EQ(create(bytes, nullptr), TK_ERROR_NOT_FOUND);
  EXPECT_THAT(tk_last_error(), HasSubstr("the package has 3 kernels"));

  tk_constexpr_value block = {"BLOCK", 256};
  tk_compile_options options = {};
  options.struct_size = sizeof(options);
  options.constexprs = &block;
  options.num_constexprs = 1;
  EXPECT_EQ(create(bytes, "vector_add", &options), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(), HasSubstr("specialised when the package"));
  options.num_constexprs = 0;
  options.num_warps = 8;
  EXPECT_EQ(create(bytes, "vector_add", &options), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(), HasSubstr("options ask for 8"));
  options.num_warps = 0;
  options.check_bounds = 1;
  EXPECT_EQ(create(bytes, "vector_add", &options), TK_ERROR_UNSUPPORTED);
  EXPECT_THAT(tk_last_error(), HasSubstr("has no bounds checks"));
}

} // namespace
