//===- BoundsCheckTest.cpp - the bounds-checked launch mode
//----------------===//
//
// TK_CHECK_BOUNDS=1 and tk_compile_options.check_bounds on the backend
// TK_BACKEND names (ctest runs this on cpu and on lavapipe): a launch that
// touches an element outside a buffer is TK_ERROR_OUT_OF_BOUNDS naming the
// kernel, the op's source line, the argument, the element and the buffer's
// size, and nothing outside the buffer is written (the unit tests also run
// under AddressSanitizer). Launches that stay inside give the results of
// the unchecked mode.
//
//===----------------------------------------------------------------------===//

#include "tk/tk.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

/// The newcomer's RMSNorm: one row a program, columns masked by n_cols.
constexpr const char *kRmsNorm = R"(
tk.func @rmsnorm(%x: !tk.ptr<f32>, %w: !tk.ptr<f32>, %y: !tk.ptr<f32>,
                 %stride: i32, %n_cols: i32, %eps: f32) {
  %row = tk.program_id 0 : i32
  %cols = tk.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %n = tk.splat %n_cols : i32 -> tensor<64xi32>
  %mask = arith.cmpi slt, %cols, %n : tensor<64xi32>
  %start = arith.muli %row, %stride : i32
  %starts = tk.splat %start : i32 -> tensor<64xi32>
  %offs = arith.addi %starts, %cols : tensor<64xi32>
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  %xp = tk.addptr %xs, %offs : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
  %xv = tk.load %xp, %mask, %zero : tensor<64x!tk.ptr<f32>>
  %sq = arith.mulf %xv, %xv : tensor<64xf32>
  %sum = tk.reduce(%sq : tensor<64xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tk.reduce.return %s : f32
  }
  %count = arith.sitofp %n_cols : i32 to f32
  %mean = arith.divf %sum, %count : f32
  %biased = arith.addf %mean, %eps : f32
  %rms = math.sqrt %biased : f32
  %rmss = tk.splat %rms : f32 -> tensor<64xf32>
  %ws = tk.splat %w : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  %wp = tk.addptr %ws, %cols : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
  %wv = tk.load %wp, %mask, %zero : tensor<64x!tk.ptr<f32>>
  %normed = arith.divf %xv, %rmss : tensor<64xf32>
  %yv = arith.mulf %normed, %wv : tensor<64xf32>
  %ys = tk.splat %y : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  %yp = tk.addptr %ys, %offs : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
  tk.store %yp, %yv, %mask : tensor<64x!tk.ptr<f32>>
  tk.return
}
)";

/// y = 2x over n elements, 1024 a program (the newcomer's GELU, in short).
constexpr const char *kScale = R"(
tk.func @scale(%x: !tk.ptr<f32>, %y: !tk.ptr<f32>, %n: i32) {
  %pid = tk.program_id 0 : i32
  %c1024 = arith.constant 1024 : i32
  %start = arith.muli %pid, %c1024 : i32
  %r = tk.make_range {start = 0 : i32, end = 1024 : i32} : tensor<1024xi32>
  %s = tk.splat %start : i32 -> tensor<1024xi32>
  %offs = arith.addi %s, %r : tensor<1024xi32>
  %ns = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %xp = tk.addptr %xs, %offs : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %v = tk.load %xp, %mask : tensor<1024x!tk.ptr<f32>>
  %two = arith.constant dense<2.0> : tensor<1024xf32>
  %d = arith.mulf %v, %two : tensor<1024xf32>
  %ys = tk.splat %y : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %yp = tk.addptr %ys, %offs : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %yp, %d, %mask : tensor<1024x!tk.ptr<f32>>
  tk.return
}
)";

/// out[row] = sum of x[row * k .. row * k + k), 16 columns a trip: a
/// pointer walk carried by a loop.
constexpr const char *kRowSums = R"(
tk.func @row_sums(%x: !tk.ptr<f32>, %out: !tk.ptr<f32>, %k: i32) {
  %row = tk.program_id 0 : i32
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %start = arith.muli %row, %k : i32
  %first = tk.addptr %x, %start : !tk.ptr<f32>, i32
  %r = tk.make_range {start = 0 : i32, end = 16 : i32} : tensor<16xi32>
  %fs = tk.splat %first : !tk.ptr<f32> -> tensor<16x!tk.ptr<f32>>
  %ptrs = tk.addptr %fs, %r : tensor<16x!tk.ptr<f32>>, tensor<16xi32>
  %step = tk.splat %c16 : i32 -> tensor<16xi32>
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %acc, %end = scf.for %i = %c0 to %k step %c16
      iter_args(%a = %zero, %p = %ptrs) -> (tensor<16xf32>, tensor<16x!tk.ptr<f32>>) : i32 {
    %v = tk.load %p : tensor<16x!tk.ptr<f32>>
    %s = arith.addf %a, %v : tensor<16xf32>
    %next = tk.addptr %p, %step : tensor<16x!tk.ptr<f32>>, tensor<16xi32>
    scf.yield %s, %next : tensor<16xf32>, tensor<16x!tk.ptr<f32>>
  }
  %total = tk.reduce(%acc : tensor<16xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tk.reduce.return %s : f32
  }
  %o = tk.addptr %out, %row : !tk.ptr<f32>, i32
  tk.store %o, %total : !tk.ptr<f32>
  tk.return
}
)";

/// A 16x8 block of an m x 8 matrix through a block pointer, the rows past
/// m padded with zeros by the boundary check, stored whole.
constexpr const char *kBlockCopy = R"(
tk.func @block_copy(%a: !tk.ptr<f32>, %out: !tk.ptr<f32>, %m: i64) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i64
  %c8 = arith.constant 8 : i64
  %c16 = arith.constant 16 : i64
  %bp = tk.make_block_ptr %a, [%m, %c8], [%c8, %c1], [%c0, %c0]
      {order = array<i32: 1, 0>} : !tk.ptr<f32> -> !tk.ptr<tensor<16x8xf32>>
  %v = tk.load %bp {boundary_check = array<i32: 0>, padding = #tk.padding<zero>}
      : !tk.ptr<tensor<16x8xf32>>
  %ob = tk.make_block_ptr %out, [%c16, %c8], [%c8, %c1], [%c0, %c0]
      {order = array<i32: 1, 0>} : !tk.ptr<f32> -> !tk.ptr<tensor<16x8xf32>>
  tk.store %ob, %v : !tk.ptr<tensor<16x8xf32>>
  tk.return
}
)";

/// counts[i % buckets] += 1 for i < 256, then a compare-and-swap on
/// lock[slot]: an atomic of each kind.
constexpr const char *kAtomics = R"(
tk.func @histogram(%counts: !tk.ptr<i32>, %lock: !tk.ptr<i32>, %buckets: i32,
                   %slot: i32) {
  %r = tk.make_range {start = 0 : i32, end = 256 : i32} : tensor<256xi32>
  %b = tk.splat %buckets : i32 -> tensor<256xi32>
  %bucket = arith.remsi %r, %b : tensor<256xi32>
  %cs = tk.splat %counts : !tk.ptr<i32> -> tensor<256x!tk.ptr<i32>>
  %cp = tk.addptr %cs, %bucket : tensor<256x!tk.ptr<i32>>, tensor<256xi32>
  %one = arith.constant dense<1> : tensor<256xi32>
  %old = tk.atomic_rmw add, acq_rel, %cp, %one
      : (tensor<256x!tk.ptr<i32>>, tensor<256xi32>) -> tensor<256xi32>
  %lp = tk.addptr %lock, %slot : !tk.ptr<i32>, i32
  %c0 = arith.constant 0 : i32
  %c7 = arith.constant 7 : i32
  %prev = tk.atomic_cas acq_rel, %lp, %c0, %c7 : (!tk.ptr<i32>, i32, i32) -> i32
  tk.return
}
)";

/// A pointer chosen by scf.if: not followed, so not checkable.
constexpr const char *kPointerFromIf = R"(
tk.func @pick(%x: !tk.ptr<f32>, %y: !tk.ptr<f32>, %c: i32) {
  %zero = arith.constant 0 : i32
  %which = arith.cmpi eq, %c, %zero : i32
  %p = scf.if %which -> !tk.ptr<f32> {
    scf.yield %x : !tk.ptr<f32>
  } else {
    scf.yield %y : !tk.ptr<f32>
  }
  %v = arith.constant 1.0 : f32
  tk.store %p, %v : !tk.ptr<f32>
  tk.return
}
)";

class BoundsCheckTest : public ::testing::Test {
protected:
  void SetUp() override {
    setenv("TK_CHECK_BOUNDS", "1", 1);
    ASSERT_EQ(tk_device_get(0, &device), TK_SUCCESS) << tk_last_error();
  }

  void TearDown() override {
    for (tk_buffer buffer : buffers)
      tk_buffer_release(buffer);
    for (tk_kernel kernel : kernels)
      tk_kernel_release(kernel);
    unsetenv("TK_CHECK_BOUNDS");
  }

  tk_kernel create(const char *text, const char *name,
                   const tk_compile_options *options = nullptr) {
    tk_kernel_source source{TK_SOURCE_TEXT, text, std::strlen(text), nullptr};
    tk_compile_options named{};
    if (!options) {
      named.struct_size = sizeof(named);
      named.source_name = name;
      options = &named;
    }
    tk_kernel kernel = nullptr;
    EXPECT_EQ(tk_kernel_create(device, &source, options, &kernel), TK_SUCCESS)
        << tk_last_error();
    if (kernel)
      kernels.push_back(kernel);
    return kernel;
  }

  template <typename T> tk_buffer buffer(const std::vector<T> &values) {
    tk_buffer made = nullptr;
    size_t bytes = values.size() * sizeof(T);
    EXPECT_EQ(tk_buffer_create(device, bytes, &made), TK_SUCCESS)
        << tk_last_error();
    buffers.push_back(made);
    EXPECT_EQ(tk_buffer_write(made, 0, values.data(), bytes), TK_SUCCESS);
    return made;
  }

  template <typename T> std::vector<T> read(tk_buffer from, size_t count) {
    std::vector<T> values(count);
    EXPECT_EQ(tk_buffer_read(from, 0, values.data(), count * sizeof(T)),
              TK_SUCCESS)
        << tk_last_error();
    return values;
  }

  tk_status launch(tk_kernel kernel, tk_grid grid, std::vector<tk_arg> args) {
    tk_args list{args.data(), args.size()};
    return tk_launch(kernel, grid, &list);
  }

  tk_device device = nullptr;
  std::vector<tk_buffer> buffers;
  std::vector<tk_kernel> kernels;
};

TEST_F(BoundsCheckTest, OutputTooSmallForTheGridIsNamed) {
  tk_kernel kernel = create(kRmsNorm, "rmsnorm.tk");
  ASSERT_TRUE(kernel);
  // The caller passes its six arguments; the extents and the record are
  // tk's.
  int count = 0;
  ASSERT_EQ(tk_kernel_num_args(kernel, &count), TK_SUCCESS);
  EXPECT_EQ(count, 6);
  std::vector<float> x(4 * 64), w(64, 1.0f);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i % 7) - 3.0f;
  tk_buffer bx = buffer(x), bw = buffer(w);
  tk_buffer by = buffer(std::vector<float>(4, -1.0f)); // 16 bytes
  EXPECT_EQ(launch(kernel, {4, 1, 1},
                   {tk_arg_buffer(bx), tk_arg_buffer(bw), tk_arg_buffer(by),
                    tk_arg_i32(64), tk_arg_i32(64), tk_arg_f32(1e-5f)}),
            TK_ERROR_OUT_OF_BOUNDS);
  EXPECT_THAT(std::string(tk_last_error()),
              AllOf(HasSubstr("launch of 'rmsnorm'"),
                    HasSubstr("the store at rmsnorm.tk:33:3"),
                    HasSubstr("of argument 2 ('y'), a buffer of 4 elements "
                              "of f32 (16 bytes)")));
  // The four elements inside are row 0's first four, as the unchecked
  // kernel computes them.
  double squares = 0;
  for (int i = 0; i < 64; ++i)
    squares += double(x[i]) * x[i];
  double rms = std::sqrt(squares / 64 + 1e-5);
  std::vector<float> y = read<float>(by, 4);
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(y[i], x[i] / rms, 1e-5) << i;
}

TEST_F(BoundsCheckTest, InputsTooSmallForNAreNamedAtTheirLoad) {
  tk_kernel kernel = create(kScale, "gelu.tk");
  ASSERT_TRUE(kernel);
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i)
    x[i] = float(i);
  tk_buffer bx = buffer(x), by = buffer(std::vector<float>(32, -1.0f));
  int n = 1 << 20;
  EXPECT_EQ(launch(kernel, {n / 1024, 1, 1},
                   {tk_arg_buffer(bx), tk_arg_buffer(by), tk_arg_i32(n)}),
            TK_ERROR_OUT_OF_BOUNDS);
  EXPECT_THAT(std::string(tk_last_error()),
              AllOf(HasSubstr("launch of 'scale'"),
                    HasSubstr("the load at gelu.tk:13:8 read element "),
                    HasSubstr("of argument 0 ('x'), a buffer of 32 elements "
                              "of f32 (128 bytes)"),
                    HasSubstr("(1 more access of the kernel went out of "
                              "bounds too)")));
  std::vector<float> y = read<float>(by, 32);
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(y[i], 2.0f * float(i)) << i;
}

TEST_F(BoundsCheckTest, LaunchesInsideTheirBuffersSucceed) {
  tk_kernel kernel = create(kScale, "scale.tk");
  ASSERT_TRUE(kernel);
  std::vector<float> x(3000);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i) * 0.5f;
  tk_buffer bx = buffer(x), by = buffer(std::vector<float>(3000, -1.0f));
  // Masked lanes past n are not out of bounds: the mask keeps them.
  ASSERT_EQ(launch(kernel, {3, 1, 1},
                   {tk_arg_buffer(bx), tk_arg_buffer(by), tk_arg_i32(3000)}),
            TK_SUCCESS)
      << tk_last_error();
  std::vector<float> y = read<float>(by, 3000);
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_EQ(y[i], 2.0f * x[i]) << i;
}

TEST_F(BoundsCheckTest, PointerWalksCarriedByLoopsAreChecked) {
  tk_kernel kernel = create(kRowSums, "row_sums.tk");
  ASSERT_TRUE(kernel);
  std::vector<float> x(4 * 64);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i % 13);
  tk_buffer bx = buffer(x), out = buffer(std::vector<float>(4, 0.0f));
  ASSERT_EQ(launch(kernel, {4, 1, 1},
                   {tk_arg_buffer(bx), tk_arg_buffer(out), tk_arg_i32(64)}),
            TK_SUCCESS)
      << tk_last_error();
  std::vector<float> sums = read<float>(out, 4);
  for (int row = 0; row < 4; ++row) {
    float want = 0;
    for (int k = 0; k < 64; ++k)
      want += x[row * 64 + k];
    EXPECT_EQ(sums[row], want) << row;
  }
  // Rows of 80: the last row's walk runs 64 elements past the buffer.
  EXPECT_EQ(launch(kernel, {4, 1, 1},
                   {tk_arg_buffer(bx), tk_arg_buffer(out), tk_arg_i32(80)}),
            TK_ERROR_OUT_OF_BOUNDS);
  EXPECT_THAT(
      std::string(tk_last_error()),
      AllOf(HasSubstr("the load at row_sums.tk:15:10 read element "),
            HasSubstr("of argument 0 ('x'), a buffer of 256 elements")));
}

TEST_F(BoundsCheckTest, BlockPointersKeepTheirBoundaryChecks) {
  tk_kernel kernel = create(kBlockCopy, "block_copy.tk");
  ASSERT_TRUE(kernel);
  std::vector<float> a(10 * 8);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(i) + 1.0f;
  tk_buffer ba = buffer(a), out = buffer(std::vector<float>(16 * 8, -1.0f));
  // m = 10: rows 10-15 are outside the shape, padded, never read.
  ASSERT_EQ(launch(kernel, {1, 1, 1},
                   {tk_arg_buffer(ba), tk_arg_buffer(out), tk_arg_i64(10)}),
            TK_SUCCESS)
      << tk_last_error();
  std::vector<float> copied = read<float>(out, 16 * 8);
  for (int i = 0; i < 16 * 8; ++i)
    ASSERT_EQ(copied[i], i < 80 ? a[i] : 0.0f) << i;
  // m = 16 claims rows the buffer does not have.
  EXPECT_EQ(launch(kernel, {1, 1, 1},
                   {tk_arg_buffer(ba), tk_arg_buffer(out), tk_arg_i64(16)}),
            TK_ERROR_OUT_OF_BOUNDS);
  EXPECT_THAT(std::string(tk_last_error()),
              AllOf(HasSubstr("the load at block_copy.tk:9:8 read element "),
                    HasSubstr("of argument 0 ('a'), a buffer of 80 elements")));
}

TEST_F(BoundsCheckTest, AtomicsOutsideTheirBufferDoNothing) {
  tk_kernel kernel = create(kAtomics, "histogram.tk");
  ASSERT_TRUE(kernel);
  tk_buffer counts = buffer(std::vector<int32_t>(8, 0));
  tk_buffer lock = buffer(std::vector<int32_t>(2, 0));
  ASSERT_EQ(launch(kernel, {1, 1, 1},
                   {tk_arg_buffer(counts), tk_arg_buffer(lock), tk_arg_i32(8),
                    tk_arg_i32(1)}),
            TK_SUCCESS)
      << tk_last_error();
  EXPECT_THAT(read<int32_t>(counts, 8), ::testing::Each(32));
  EXPECT_EQ(read<int32_t>(lock, 2), (std::vector<int32_t>{0, 7}));

  // 16 buckets in a buffer of 8, and the lock two past its buffer.
  tk_buffer fresh = buffer(std::vector<int32_t>(8, 0));
  tk_buffer freshLock = buffer(std::vector<int32_t>(2, 0));
  EXPECT_EQ(launch(kernel, {1, 1, 1},
                   {tk_arg_buffer(fresh), tk_arg_buffer(freshLock),
                    tk_arg_i32(16), tk_arg_i32(3)}),
            TK_ERROR_OUT_OF_BOUNDS);
  EXPECT_THAT(std::string(tk_last_error()),
              AllOf(HasSubstr("the atomic_rmw at histogram.tk:10:10 accessed "
                              "element "),
                    HasSubstr("of argument 0 ('counts'), a buffer of 8 "
                              "elements of i32 (32 bytes)"),
                    HasSubstr("(1 more access")));
  EXPECT_THAT(read<int32_t>(fresh, 8), ::testing::Each(16));
  EXPECT_EQ(read<int32_t>(freshLock, 2), (std::vector<int32_t>{0, 0}));
}

TEST_F(BoundsCheckTest, TritonKernelsNameTheirPythonLine) {
  std::ifstream file(std::string(TK_TEST_TTIR_CORPUS) + "/copy/kernel.ttir");
  std::string ttir((std::istreambuf_iterator<char>(file)),
                   std::istreambuf_iterator<char>());
  ASSERT_FALSE(ttir.empty());
  tk_kernel_source source{TK_SOURCE_TTIR, ttir.data(), ttir.size(), nullptr};
  tk_kernel kernel = nullptr;
  ASSERT_EQ(tk_kernel_create(device, &source, nullptr, &kernel), TK_SUCCESS)
      << tk_last_error();
  kernels.push_back(kernel);
  tk_buffer src = buffer(std::vector<float>(512, 1.0f));
  tk_buffer dst = buffer(std::vector<float>(600, 0.0f));
  // n = 600: the load reads past src's 512 elements.
  EXPECT_EQ(launch(kernel, {2, 1, 1},
                   {tk_arg_buffer(src), tk_arg_buffer(dst), tk_arg_i32(600)}),
            TK_ERROR_OUT_OF_BOUNDS);
  EXPECT_THAT(std::string(tk_last_error()),
              AllOf(HasSubstr("launch of 'copy'"),
                    HasSubstr("the load at /work/main/tests/ttir/"
                              "make_corpus.py:42:37"),
                    HasSubstr("of argument 0 ('src_ptr'), a buffer of 512 "
                              "elements of f32")));
  // What the masked-off load gave past 512 is undefined, as a masked load
  // without `other` is; the elements inside were copied.
  std::vector<float> copied = read<float>(dst, 512);
  for (int i = 0; i < 512; ++i)
    ASSERT_EQ(copied[i], 1.0f) << i;
}

TEST_F(BoundsCheckTest, UntraceablePointersAreRefusedAtCreation) {
  tk_kernel_source source{TK_SOURCE_TEXT, kPointerFromIf,
                          std::strlen(kPointerFromIf), nullptr};
  tk_compile_options options{};
  options.struct_size = sizeof(options);
  options.source_name = "pick.tk";
  tk_kernel kernel = nullptr;
  EXPECT_EQ(tk_kernel_create(device, &source, &options, &kernel),
            TK_ERROR_UNSUPPORTED);
  EXPECT_EQ(kernel, nullptr);
  EXPECT_THAT(std::string(tk_last_error()),
              AllOf(HasSubstr("cannot check kernel 'pick'"),
                    HasSubstr("pick.tk:11:3"),
                    HasSubstr("the pointers of this store do not come from "
                              "one argument")));
}

TEST_F(BoundsCheckTest, TheCompileOptionAloneTurnsItOn) {
  unsetenv("TK_CHECK_BOUNDS");
  tk_compile_options options{};
  options.struct_size = sizeof(options);
  options.source_name = "gelu.tk";
  options.check_bounds = 1;
  tk_kernel checked = create(kScale, "gelu.tk", &options);
  options.check_bounds = 0;
  tk_kernel unchecked = create(kScale, "gelu.tk", &options);
  ASSERT_TRUE(checked && unchecked);
  tk_buffer bx = buffer(std::vector<float>(32, 1.0f));
  tk_buffer by = buffer(std::vector<float>(32, 0.0f));
  EXPECT_EQ(launch(checked, {1, 1, 1},
                   {tk_arg_buffer(bx), tk_arg_buffer(by), tk_arg_i32(40)}),
            TK_ERROR_OUT_OF_BOUNDS);
  // The default mode is unchanged: the same launch in bounds succeeds.
  EXPECT_EQ(launch(unchecked, {1, 1, 1},
                   {tk_arg_buffer(bx), tk_arg_buffer(by), tk_arg_i32(32)}),
            TK_SUCCESS)
      << tk_last_error();
  EXPECT_THAT(read<float>(by, 32), ::testing::Each(2.0f));
}

} // namespace
