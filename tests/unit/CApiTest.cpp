//===- CApiTest.cpp - tests of the C API (tk.h) ---------------------------===//
//
// tk.h used from C++ (it must compile as C++), its handle and argument
// checks, and launches on the CPU backend: every bad input a user can make
// must come back as a status with a message that names the problem.
//
//===----------------------------------------------------------------------===//

// First, alone: tk.h must compile as C++ without help from other headers.
#include "tk/tk.h"

#include "RuntimeTestSupport.h"

#include "tk/runtime/Kernel.h"
#include "tk/runtime/KernelCache.h"
#include "tk/runtime/Runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "llvm/ADT/APFloat.h"

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <type_traits>
#include <vector>

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

static_assert(std::is_standard_layout<tk_device_props>::value,
              "tk_device_props is a C struct");
static_assert(TK_SUCCESS == 0, "TK_SUCCESS is 0");

namespace {

//===----------------------------------------------------------------------===//
// Without a backend
//===----------------------------------------------------------------------===//

TEST(CApi, StatusStrings) {
  EXPECT_STREQ(tk_status_string(TK_SUCCESS), "TK_SUCCESS");
  EXPECT_STREQ(tk_status_string(TK_ERROR_ABI_MISMATCH),
               "TK_ERROR_ABI_MISMATCH");
  EXPECT_STREQ(tk_status_string(TK_ERROR_INTERNAL), "TK_ERROR_INTERNAL");
}

TEST(CApi, ArgConstructors) {
  tk_arg a = tk_arg_i64(-5);
  EXPECT_EQ(a.kind, TK_ARG_I64);
  EXPECT_EQ(a.value.i64, -5);
  tk_arg f = tk_arg_f32(1.5f);
  EXPECT_EQ(f.kind, TK_ARG_F32);
  EXPECT_EQ(f.value.f32, 1.5f);
}

/// LLVM's APFloat rounding of `value` into `semantics`, as raw bits.
static uint16_t roundWithAPFloat(float value,
                                 const llvm::fltSemantics &semantics) {
  llvm::APFloat f(value);
  bool losesInfo = false;
  f.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return uint16_t(f.bitcastToAPInt().getZExtValue());
}

TEST(CApi, HostConversionsMatchAPFloat) {
  // Every half and bfloat value widens exactly and narrows back to itself.
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float h = tk_f16_to_f32(uint16_t(bits));
    float b = tk_bf16_to_f32(uint16_t(bits));
    llvm::APFloat wantH(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
    llvm::APFloat wantB(llvm::APFloat::BFloat(), llvm::APInt(16, bits));
    bool losesInfo = false;
    wantH.convert(llvm::APFloat::IEEEsingle(),
                  llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    wantB.convert(llvm::APFloat::IEEEsingle(),
                  llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    if (std::isnan(h)) {
      EXPECT_TRUE(wantH.isNaN()) << bits;
      EXPECT_TRUE(std::isnan(tk_f16_to_f32(tk_f32_to_f16(h)))) << bits;
    } else {
      ASSERT_EQ(h, wantH.convertToFloat()) << bits;
      ASSERT_EQ(tk_f32_to_f16(h), bits) << bits;
    }
    if (std::isnan(b)) {
      EXPECT_TRUE(wantB.isNaN()) << bits;
    } else {
      ASSERT_EQ(b, wantB.convertToFloat()) << bits;
      ASSERT_EQ(tk_f32_to_bf16(b), bits) << bits;
    }
  }
  // Narrowing rounds to nearest even like APFloat: random bit patterns over
  // the whole float range (subnormal results, ties, overflow to infinity).
  uint32_t state = 12345;
  for (int i = 0; i < 1000000; ++i) {
    state = state * 1664525u + 1013904223u;
    float value;
    std::memcpy(&value, &state, sizeof(value));
    if (std::isnan(value))
      continue;
    ASSERT_EQ(tk_f32_to_f16(value),
              roundWithAPFloat(value, llvm::APFloat::IEEEhalf()))
        << value;
    ASSERT_EQ(tk_f32_to_bf16(value),
              roundWithAPFloat(value, llvm::APFloat::BFloat()))
        << value;
  }
}

TEST(CApi, NullHandlesAndOutputs) {
  EXPECT_EQ(tk_buffer_release(nullptr), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(), HasSubstr("buffer is NULL"));
  EXPECT_EQ(tk_kernel_release(nullptr), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tk_stream_synchronize(nullptr), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tk_device_query(nullptr, nullptr), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tk_device_count(nullptr), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(), HasSubstr("out_count"));
  tk_grid grid = {1, 1, 1};
  EXPECT_EQ(tk_launch(nullptr, grid, nullptr), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(), HasSubstr("kernel is NULL"));
}

//===----------------------------------------------------------------------===//
// On the CPU backend
//===----------------------------------------------------------------------===//

/// Elements the vector_add tests add; not a multiple of BLOCK (1024).
constexpr int kN = 5000;
constexpr int kBlock = 1024;

class CApiCpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(tk_device_get(0, &device), TK_SUCCESS) << tk_last_error();
    text = tk::test::readKernel("vector_add.tk");
    ASSERT_FALSE(text.empty());
  }

  void TearDown() override {
    for (tk_buffer buffer : buffers)
      tk_buffer_release(buffer);
    if (kernel)
      tk_kernel_release(kernel);
  }

  tk_kernel_source source(const char *entry = "vector_add") const {
    return tk_kernel_source{TK_SOURCE_TEXT, text.data(), text.size(), entry};
  }

  tk_kernel createVectorAdd(const tk_compile_options *options = nullptr) {
    tk_kernel_source src = source();
    tk_kernel created = nullptr;
    EXPECT_EQ(tk_kernel_create(device, &src, options, &created), TK_SUCCESS)
        << tk_last_error();
    return created;
  }

  tk_buffer makeBuffer(size_t bytes) {
    tk_buffer buffer = nullptr;
    EXPECT_EQ(tk_buffer_create(device, bytes, &buffer), TK_SUCCESS)
        << tk_last_error();
    buffers.push_back(buffer);
    return buffer;
  }

  /// x = i, y = 2i, out = -1, as buffers.
  void makeInputs() {
    std::vector<float> x(kN), y(kN), out(kN, -1.0f);
    for (int i = 0; i < kN; ++i) {
      x[i] = float(i);
      y[i] = 2.0f * float(i);
    }
    bx = makeBuffer(kN * sizeof(float));
    by = makeBuffer(kN * sizeof(float));
    bout = makeBuffer(kN * sizeof(float));
    ASSERT_EQ(tk_buffer_write(bx, 0, x.data(), kN * sizeof(float)), TK_SUCCESS);
    ASSERT_EQ(tk_buffer_write(by, 0, y.data(), kN * sizeof(float)), TK_SUCCESS);
    ASSERT_EQ(tk_buffer_write(bout, 0, out.data(), kN * sizeof(float)),
              TK_SUCCESS);
  }

  /// Number of wrong elements of out (expects out = 3i).
  int countWrong(tk_buffer out) {
    std::vector<float> result(kN);
    EXPECT_EQ(tk_buffer_read(out, 0, result.data(), kN * sizeof(float)),
              TK_SUCCESS);
    int wrong = 0;
    for (int i = 0; i < kN; ++i)
      wrong += std::fabs(result[i] - 3.0f * float(i)) > 1e-3f;
    return wrong;
  }

  /// Launches vector_add with `args`; returns the status.
  tk_status launch(std::vector<tk_arg> args,
                   tk_grid grid = {(kN + kBlock - 1) / kBlock, 1, 1}) {
    tk_args list = {args.data(), args.size()};
    return tk_launch(kernel, grid, &list);
  }

  std::vector<tk_arg> goodArgs() {
    return {tk_arg_buffer(bx), tk_arg_buffer(by), tk_arg_buffer(bout),
            tk_arg_i32(kN)};
  }

  tk_device device = nullptr;
  std::string text;
  tk_kernel kernel = nullptr;
  tk_buffer bx = nullptr, by = nullptr, bout = nullptr;
  std::vector<tk_buffer> buffers;
};

TEST_F(CApiCpuTest, DeviceQuery) {
  int count = 0;
  ASSERT_EQ(tk_device_count(&count), TK_SUCCESS);
  EXPECT_GE(count, 1);
  const char *backend = nullptr;
  ASSERT_EQ(tk_backend_name(&backend), TK_SUCCESS);
  EXPECT_STREQ(backend, "cpu");
  tk_device_props props;
  std::memset(&props, 0, sizeof(props));
  props.struct_size = sizeof(props);
  ASSERT_EQ(tk_device_query(device, &props), TK_SUCCESS) << tk_last_error();
  EXPECT_STREQ(props.backend, "cpu");
  EXPECT_GT(props.compute_units, 0);
  tk_device missing = nullptr;
  EXPECT_EQ(tk_device_get(count, &missing), TK_ERROR_NOT_FOUND);
  EXPECT_THAT(tk_last_error(), HasSubstr("device(s)"));
  props.struct_size = 0;
  EXPECT_EQ(tk_device_query(device, &props), TK_ERROR_INVALID_ARGUMENT);
}

TEST_F(CApiCpuTest, DeviceCapabilities) {
  tk_capabilities caps;
  std::memset(&caps, 0, sizeof(caps));
  caps.struct_size = sizeof(caps);
  ASSERT_EQ(tk_device_capabilities(device, &caps), TK_SUCCESS)
      << tk_last_error();
  EXPECT_EQ(caps.known, 1);
  EXPECT_TRUE(caps.dtypes & TK_DTYPE_BIT_F32);
  EXPECT_TRUE(caps.dtypes & TK_DTYPE_BIT_F8E4M3);
  EXPECT_EQ(caps.fp8, 1);
  // An older caller's smaller struct gets the fields it has.
  tk_capabilities small;
  std::memset(&small, 0, sizeof(small));
  small.struct_size = offsetof(tk_capabilities, atomics);
  ASSERT_EQ(tk_device_capabilities(device, &small), TK_SUCCESS);
  EXPECT_EQ(small.known, 1);
  EXPECT_EQ(small.atomics, 0u);
  caps.struct_size = 0;
  EXPECT_EQ(tk_device_capabilities(device, &caps), TK_ERROR_INVALID_ARGUMENT);
}

TEST_F(CApiCpuTest, BufferReadWriteCopyAndBounds) {
  tk_buffer a = makeBuffer(64), b = makeBuffer(64);
  std::vector<uint8_t> data(64), back(64, 0);
  for (int i = 0; i < 64; ++i)
    data[i] = uint8_t(i);
  ASSERT_EQ(tk_buffer_write(a, 0, data.data(), 64), TK_SUCCESS);
  ASSERT_EQ(tk_buffer_copy(b, 16, a, 0, 48), TK_SUCCESS) << tk_last_error();
  ASSERT_EQ(tk_buffer_read(b, 16, back.data(), 48), TK_SUCCESS);
  EXPECT_EQ(std::memcmp(back.data(), data.data(), 48), 0);
  size_t size = 0;
  ASSERT_EQ(tk_buffer_size(a, &size), TK_SUCCESS);
  EXPECT_EQ(size, 64u);

  EXPECT_EQ(tk_buffer_write(a, 60, data.data(), 8), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(), HasSubstr("outside the buffer of 64 bytes"));
  EXPECT_EQ(tk_buffer_read(a, SIZE_MAX, back.data(), 2),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tk_buffer_copy(b, 0, a, 32, 33), TK_ERROR_INVALID_ARGUMENT);
  tk_buffer empty = nullptr;
  EXPECT_EQ(tk_buffer_create(device, 0, &empty), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(empty, nullptr);
  // A size whose rounding to the allocator's 64 bytes would wrap to 0 is
  // refused, not handed out as 64 bytes the bounds checks believe huge.
  tk_buffer huge = nullptr;
  EXPECT_EQ(tk_buffer_create(device, SIZE_MAX - 62, &huge),
            TK_ERROR_OUT_OF_MEMORY);
  EXPECT_THAT(tk_last_error(), HasSubstr("more than the address space holds"));
  EXPECT_EQ(huge, nullptr);
}

TEST_F(CApiCpuTest, VectorAdd) {
  kernel = createVectorAdd();
  ASSERT_NE(kernel, nullptr);
  int numArgs = 0;
  ASSERT_EQ(tk_kernel_num_args(kernel, &numArgs), TK_SUCCESS);
  EXPECT_EQ(numArgs, 4);
  makeInputs();
  ASSERT_EQ(launch(goodArgs()), TK_SUCCESS) << tk_last_error();
  EXPECT_EQ(countWrong(bout), 0);
}

TEST_F(CApiCpuTest, VectorAddWithConstexprAndStream) {
  tk_constexpr_value n = {"n", kN};
  tk_compile_options options = {sizeof(options), 0, 0,       &n, 1,
                                nullptr,         0, nullptr, 0};
  kernel = createVectorAdd(&options);
  ASSERT_NE(kernel, nullptr);
  int numArgs = 0;
  ASSERT_EQ(tk_kernel_num_args(kernel, &numArgs), TK_SUCCESS);
  EXPECT_EQ(numArgs, 3);
  makeInputs();
  tk_stream stream = nullptr;
  ASSERT_EQ(tk_stream_create(device, &stream), TK_SUCCESS) << tk_last_error();
  tk_arg args[] = {tk_arg_buffer(bx), tk_arg_buffer(by), tk_arg_buffer(bout)};
  tk_args list = {args, 3};
  ASSERT_EQ(tk_launch_async(kernel, {(kN + kBlock - 1) / kBlock, 1, 1}, &list,
                            stream),
            TK_SUCCESS)
      << tk_last_error();
  ASSERT_EQ(tk_stream_synchronize(stream), TK_SUCCESS) << tk_last_error();
  EXPECT_EQ(countWrong(bout), 0);
  ASSERT_EQ(tk_stream_release(stream), TK_SUCCESS);
  // Released handle used again.
  EXPECT_EQ(tk_stream_synchronize(stream), TK_ERROR_INVALID_HANDLE);
  EXPECT_EQ(tk_launch_async(kernel, {1, 1, 1}, &list, stream),
            TK_ERROR_INVALID_HANDLE);
}

TEST_F(CApiCpuTest, OccupancyHint) {
  // The CPU has no occupancy to hint at: a hint is accepted and changes
  // nothing; a negative one is refused with a reason; a caller built before
  // the field (its struct_size ends earlier) gets no hint, whatever follows.
  tk_compile_options options = {};
  options.struct_size = sizeof(options);
  options.min_programs_per_cu = 2;
  kernel = createVectorAdd(&options);
  ASSERT_NE(kernel, nullptr) << tk_last_error();
  makeInputs();
  ASSERT_EQ(launch(goodArgs()), TK_SUCCESS) << tk_last_error();
  EXPECT_EQ(countWrong(bout), 0);

  options.min_programs_per_cu = -1;
  tk_kernel_source src = source();
  tk_kernel refused = nullptr;
  EXPECT_EQ(tk_kernel_create(device, &src, &options, &refused),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(refused, nullptr);
  EXPECT_THAT(tk_last_error(), HasSubstr("min_programs_per_cu (-1)"));
  options.struct_size = offsetof(tk_compile_options, min_programs_per_cu);
  tk_kernel older = createVectorAdd(&options);
  EXPECT_NE(older, nullptr) << tk_last_error();
  tk_kernel_release(older);
}

TEST_F(CApiCpuTest, EventsTimeALaunch) {
  kernel = createVectorAdd(nullptr);
  ASSERT_NE(kernel, nullptr);
  makeInputs();
  tk_event start = nullptr, end = nullptr;
  ASSERT_EQ(tk_event_create(device, &start), TK_SUCCESS) << tk_last_error();
  ASSERT_EQ(tk_event_create(device, &end), TK_SUCCESS) << tk_last_error();
  // Timing an event that was never recorded is refused with a reason.
  float ms = -1;
  EXPECT_EQ(tk_event_elapsed_ms(start, end, &ms), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(), HasSubstr("never recorded"));
  EXPECT_EQ(tk_event_synchronize(end), TK_ERROR_INVALID_ARGUMENT);
  tk_stream stream = nullptr;
  ASSERT_EQ(tk_stream_create(device, &stream), TK_SUCCESS) << tk_last_error();
  ASSERT_EQ(tk_event_record(start, stream), TK_SUCCESS) << tk_last_error();
  std::vector<tk_arg> args = goodArgs();
  tk_args list = {args.data(), args.size()};
  ASSERT_EQ(tk_launch_async(kernel, {(kN + kBlock - 1) / kBlock, 1, 1}, &list,
                            stream),
            TK_SUCCESS)
      << tk_last_error();
  ASSERT_EQ(tk_event_record(end, stream), TK_SUCCESS) << tk_last_error();
  ASSERT_EQ(tk_event_synchronize(end), TK_SUCCESS) << tk_last_error();
  ASSERT_EQ(tk_event_elapsed_ms(start, end, &ms), TK_SUCCESS)
      << tk_last_error();
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(countWrong(bout), 0);
  EXPECT_EQ(tk_event_elapsed_ms(start, end, nullptr),
            TK_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(tk_stream_release(stream), TK_SUCCESS);
  ASSERT_EQ(tk_event_release(start), TK_SUCCESS);
  ASSERT_EQ(tk_event_release(end), TK_SUCCESS);
  // Released handles are refused.
  EXPECT_EQ(tk_event_record(start, nullptr), TK_ERROR_INVALID_HANDLE);
  EXPECT_EQ(tk_event_elapsed_ms(start, end, &ms), TK_ERROR_INVALID_HANDLE);
}

TEST_F(CApiCpuTest, StreamWrapIsUnsupportedOnTheCpu) {
  // The cpu has no vendor streams to adopt: a clear refusal, not a crash,
  // and no handle handed out.
  int host = 0;
  tk_stream stream = reinterpret_cast<tk_stream>(&host);
  EXPECT_EQ(tk_stream_wrap(device, &host, &stream), TK_ERROR_UNSUPPORTED);
  EXPECT_THAT(tk_last_error(), HasSubstr("no native streams"));
  EXPECT_EQ(stream, nullptr);
  EXPECT_EQ(tk_stream_wrap(device, &host, nullptr), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tk_stream_wrap(nullptr, &host, &stream),
            TK_ERROR_INVALID_ARGUMENT); // a NULL device, as elsewhere
}

TEST_F(CApiCpuTest, NativeDeviceIsUnsupportedOnTheCpu) {
  // The cpu backend exports no vendor objects: a refusal naming it, and the
  // caller's struct left alone.
  tk_device_native native;
  std::memset(&native, 0x5a, sizeof(native));
  native.struct_size = sizeof(native);
  EXPECT_EQ(tk_device_get_native(device, &native), TK_ERROR_UNSUPPORTED);
  EXPECT_THAT(tk_last_error(),
              HasSubstr("the cpu backend does not export its native device"));
  EXPECT_EQ(native.api[0], 0x5a);
  EXPECT_EQ(tk_device_get_native(device, nullptr), TK_ERROR_INVALID_ARGUMENT);
  native.struct_size = 0;
  EXPECT_EQ(tk_device_get_native(device, &native), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(), HasSubstr("sizeof(tk_device_native)"));
  native.struct_size = sizeof(native);
  EXPECT_EQ(tk_device_get_native(nullptr, &native), TK_ERROR_INVALID_ARGUMENT);
}

TEST_F(CApiCpuTest, MalformedIR) {
  std::string bad = "tk.func @bad(%x: i32) {\n  %y = tk.bogus %x\n}\n";
  tk_kernel_source src = {TK_SOURCE_TEXT, bad.data(), bad.size(), nullptr};
  EXPECT_EQ(tk_kernel_create(device, &src, nullptr, &kernel),
            TK_ERROR_INVALID_IR);
  EXPECT_EQ(kernel, nullptr);
  EXPECT_THAT(tk_last_error(),
              AllOf(HasSubstr("<source>:2:"), HasSubstr("tk.bogus")));
}

TEST_F(CApiCpuTest, MalformedIRNamesTheSourceFile) {
  // source_name is what the diagnostics call the source: its line, quoted
  // with a caret under the column.
  std::string bad = "tk.func @bad(%x: i32) {\n  %y = tk.bogus %x\n}\n";
  tk_kernel_source src = {TK_SOURCE_TEXT, bad.data(), bad.size(), nullptr};
  tk_compile_options options = {};
  options.struct_size = sizeof(options);
  options.source_name = "kernels/bad.tk";
  EXPECT_EQ(tk_kernel_create(device, &src, &options, &kernel),
            TK_ERROR_INVALID_IR);
  EXPECT_EQ(kernel, nullptr);
  EXPECT_THAT(tk_last_error(), AllOf(HasSubstr("kernels/bad.tk:2:8: error:"),
                                     HasSubstr("  %y = tk.bogus %x\n       ^"),
                                     Not(HasSubstr("<source>"))));

  // A caller built before source_name (a struct_size without it) gets
  // <source>, whatever lies past its struct.
  options.struct_size = offsetof(tk_compile_options, source_name);
  EXPECT_EQ(tk_kernel_create(device, &src, &options, &kernel),
            TK_ERROR_INVALID_IR);
  EXPECT_THAT(tk_last_error(), HasSubstr("<source>:2:8: error:"));
}

TEST_F(CApiCpuTest, TileSizesAreParametersOfTheText) {
  // vector_add.tk with its 1024 a tile parameter of default 256.
  std::string parameterised = text;
  size_t header = parameterised.find("tk.func @vector_add(");
  ASSERT_NE(header, std::string::npos);
  parameterised.insert(header + std::strlen("tk.func @vector_add"),
                       "<BLOCK: i32 = 256>");
  for (size_t at = parameterised.find("1024"); at != std::string::npos;
       at = parameterised.find("1024", at))
    parameterised.replace(at, 4, "${BLOCK}");
  tk_kernel_source src{TK_SOURCE_TEXT, parameterised.data(),
                       parameterised.size(), "vector_add"};
  makeInputs();
  // The default, then 2048 from a constexpr beside the scalar `n` folded
  // in too: each covers the input with its own grid.
  for (int block : {256, 2048}) {
    tk_constexpr_value values[] = {{"BLOCK", block}, {"n", kN}};
    tk_compile_options options{};
    options.struct_size = sizeof(options);
    if (block != 256) {
      options.constexprs = values;
      options.num_constexprs = 2;
    }
    tk_kernel created = nullptr;
    ASSERT_EQ(tk_kernel_create(device, &src, &options, &created), TK_SUCCESS)
        << tk_last_error();
    std::vector<tk_arg> args = {tk_arg_buffer(bx), tk_arg_buffer(by),
                                tk_arg_buffer(bout)};
    if (block == 256)
      args.push_back(tk_arg_i32(kN));
    tk_args list = {args.data(), args.size()};
    ASSERT_EQ(tk_launch(created, {(kN + block - 1) / block, 1, 1}, &list),
              TK_SUCCESS)
        << tk_last_error();
    EXPECT_EQ(countWrong(bout), 0) << "BLOCK " << block;
    tk_kernel_release(created);
    std::vector<float> reset(kN, -1.0f);
    ASSERT_EQ(tk_buffer_write(bout, 0, reset.data(), kN * sizeof(float)),
              TK_SUCCESS);
  }
  // A ${NAME} the kernel does not declare is an error at its line.
  std::string undeclared = parameterised;
  undeclared.replace(undeclared.find("${BLOCK}"), 8, "${BLOCKS}");
  tk_kernel_source bad{TK_SOURCE_TEXT, undeclared.data(), undeclared.size(),
                       "vector_add"};
  tk_compile_options named{};
  named.struct_size = sizeof(named);
  named.source_name = "vector_add.tk";
  tk_kernel created = nullptr;
  EXPECT_EQ(tk_kernel_create(device, &bad, &named, &created),
            TK_ERROR_INVALID_IR);
  EXPECT_THAT(tk_last_error(),
              AllOf(HasSubstr("vector_add.tk:"),
                    HasSubstr("'${BLOCKS}' is not a tile parameter of "
                              "tk.func @vector_add (it declares BLOCK)")));
}

TEST_F(CApiCpuTest, UnknownEntry) {
  tk_kernel_source src = source("vector_sub");
  EXPECT_EQ(tk_kernel_create(device, &src, nullptr, &kernel),
            TK_ERROR_NOT_FOUND);
  EXPECT_THAT(tk_last_error(),
              AllOf(HasSubstr("vector_sub"), HasSubstr("vector_add")));
}

TEST_F(CApiCpuTest, WrongArgCount) {
  kernel = createVectorAdd();
  makeInputs();
  std::vector<tk_arg> args = goodArgs();
  args.pop_back();
  EXPECT_EQ(launch(args), TK_ERROR_ARGUMENT_MISMATCH);
  EXPECT_THAT(tk_last_error(),
              AllOf(HasSubstr("takes 4 arguments (x, y, out, n), got 3")));
}

TEST_F(CApiCpuTest, WrongArgKind) {
  kernel = createVectorAdd();
  makeInputs();
  std::vector<tk_arg> args = goodArgs();
  args[2] = tk_arg_i32(7);
  EXPECT_EQ(launch(args), TK_ERROR_ARGUMENT_MISMATCH);
  EXPECT_THAT(tk_last_error(),
              HasSubstr("argument 2 ('out'): expected a buffer for "
                        "!tk.ptr<f32>, got i32"));
  args = goodArgs();
  args[3] = tk_arg_i64(kN);
  EXPECT_EQ(launch(args), TK_ERROR_ARGUMENT_MISMATCH);
  EXPECT_THAT(tk_last_error(),
              HasSubstr("argument 3 ('n'): expected i32, got i64"));
}

TEST_F(CApiCpuTest, NullBuffer) {
  kernel = createVectorAdd();
  makeInputs();
  std::vector<tk_arg> args = goodArgs();
  args[1] = tk_arg_buffer(nullptr);
  EXPECT_EQ(launch(args), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(),
              HasSubstr("argument 1 ('y'): the buffer is NULL"));
}

TEST_F(CApiCpuTest, GridDimensionBelowOne) {
  kernel = createVectorAdd();
  makeInputs();
  EXPECT_EQ(launch(goodArgs(), {1, 0, 1}), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(), HasSubstr("grid.y is 0"));
  EXPECT_EQ(launch(goodArgs(), {1, 1, -3}), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(tk_last_error(), HasSubstr("grid.z is -3"));
}

TEST_F(CApiCpuTest, GridOverLimit) {
  kernel = createVectorAdd();
  makeInputs();
  tk_device_props props;
  props.struct_size = sizeof(props);
  ASSERT_EQ(tk_device_query(device, &props), TK_SUCCESS);
  if (props.max_grid[1] <= 0 || props.max_grid[1] == INT32_MAX)
    GTEST_SKIP() << "the device reports no grid limit below INT32_MAX on y ("
                 << props.max_grid[1] << ")";
  EXPECT_EQ(launch(goodArgs(), {1, props.max_grid[1] + 1, 1}),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(
      tk_last_error(),
      AllOf(HasSubstr("grid.y"),
            HasSubstr("max_grid[1] = " + std::to_string(props.max_grid[1]))));
}

TEST_F(CApiCpuTest, BufferTooSmallOrMisaligned) {
  kernel = createVectorAdd();
  makeInputs();
  std::vector<tk_arg> args = goodArgs();
  args[0] = tk_arg_buffer(makeBuffer(2));
  EXPECT_EQ(launch(args), TK_ERROR_ARGUMENT_MISMATCH);
  EXPECT_THAT(tk_last_error(),
              AllOf(HasSubstr("argument 0 ('x')"), HasSubstr("too small")));

  // tk.divisibility = 16 on a !tk.ptr<f32>: the byte address must be a
  // multiple of 16 (Triton's meaning); 4 bytes into a buffer breaks that
  // whatever the allocator gives.
  void *base = nullptr;
  ASSERT_EQ(tk_buffer_device_pointer(bx, &base), TK_SUCCESS);
  char *address = static_cast<char *>(base);
  if (reinterpret_cast<uintptr_t>(address) % 16 == 0)
    address += 4;
  tk_buffer shifted = nullptr;
  ASSERT_EQ(tk_buffer_wrap(device, address, 1024, &shifted), TK_SUCCESS);
  buffers.push_back(shifted);
  args = goodArgs();
  args[1] = tk_arg_buffer(shifted);
  EXPECT_EQ(launch(args), TK_ERROR_ARGUMENT_MISMATCH);
  EXPECT_THAT(tk_last_error(), AllOf(HasSubstr("argument 1 ('y')"),
                                     HasSubstr("not a multiple of 16 bytes"),
                                     HasSubstr("tk.divisibility = 16")));
}

TEST_F(CApiCpuTest, ReleasedHandlesAreRefused) {
  kernel = createVectorAdd();
  makeInputs();
  tk_buffer gone = makeBuffer(kN * sizeof(float));
  buffers.pop_back();
  ASSERT_EQ(tk_buffer_release(gone), TK_SUCCESS);
  std::vector<tk_arg> args = goodArgs();
  args[2] = tk_arg_buffer(gone);
  EXPECT_EQ(launch(args), TK_ERROR_INVALID_HANDLE);
  EXPECT_THAT(tk_last_error(), HasSubstr("argument 2 ('out')"));
  EXPECT_EQ(tk_buffer_release(gone), TK_ERROR_INVALID_HANDLE);
  float value = 0;
  EXPECT_EQ(tk_buffer_read(gone, 0, &value, sizeof(value)),
            TK_ERROR_INVALID_HANDLE);

  ASSERT_EQ(tk_kernel_release(kernel), TK_SUCCESS);
  EXPECT_EQ(launch(goodArgs()), TK_ERROR_INVALID_HANDLE);
  EXPECT_THAT(tk_last_error(), HasSubstr("kernel handle is not live"));
  EXPECT_EQ(tk_kernel_release(kernel), TK_ERROR_INVALID_HANDLE);
  kernel = nullptr;
}

TEST_F(CApiCpuTest, TilesTooBigForTheCallersStackRunOnWorkers) {
  // 2M f32 (8 MiB) kept across a reduction: on the launching thread (8 MiB
  // of stack here) it segfaulted. It runs where the stack has room for it:
  // the workers' 64 MiB. 16M is refused at compile (tests/bad_inputs).
  constexpr int64_t kTile = 2 << 20;
  std::string n = std::to_string(kTile);
  std::string tile = "tensor<" + n + "x";
  std::string text =
      "tk.func @big(%out: !tk.ptr<f32> {tk.divisibility = 16 : i32}) {\n"
      "  %r = tk.make_range {end = " +
      n + " : i32, start = 0 : i32} : " + tile +
      "i32>\n"
      "  %v = arith.sitofp %r : " +
      tile + "i32> to " + tile +
      "f32>\n"
      "  %m = tk.reduce(%v : " +
      tile +
      "f32>) {axis = 0 : i32} -> f32 {\n"
      "  ^bb0(%acc: f32, %next: f32):\n"
      "    %t = arith.maxnumf %acc, %next : f32\n"
      "    tk.reduce.return %t : f32\n"
      "  }\n"
      "  %ms = tk.splat %m : f32 -> " +
      tile +
      "f32>\n"
      "  %d = arith.subf %v, %ms : " +
      tile +
      "f32>\n"
      "  %o = tk.splat %out : !tk.ptr<f32> -> " +
      tile +
      "!tk.ptr<f32>>\n"
      "  %a = tk.addptr %o, %r : " +
      tile + "!tk.ptr<f32>>, " + tile +
      "i32>\n"
      "  tk.store %a, %d : " +
      tile +
      "!tk.ptr<f32>>\n"
      "  tk.return\n"
      "}\n";
  tk_kernel_source src = {TK_SOURCE_TEXT, text.data(), text.size(), nullptr};
  tk_kernel big = nullptr;
  ASSERT_EQ(tk_kernel_create(device, &src, nullptr, &big), TK_SUCCESS)
      << tk_last_error();
  tk_buffer out = makeBuffer(kTile * sizeof(float));
  tk_arg arg = tk_arg_buffer(out);
  tk_args args = {&arg, 1};
  // One program (the caller would take it alone) and three at once.
  for (int programs : {1, 3}) {
    ASSERT_EQ(tk_launch(big, {programs, 1, 1}, &args), TK_SUCCESS)
        << tk_last_error();
    std::vector<float> host(kTile);
    ASSERT_EQ(tk_buffer_read(out, 0, host.data(), kTile * sizeof(float)),
              TK_SUCCESS);
    for (int64_t i : {int64_t(0), kTile / 2, kTile - 1})
      EXPECT_EQ(host[i], float(i) - float(kTile - 1)) << "element " << i;
  }
  tk_kernel_release(big);
}

TEST_F(CApiCpuTest, EachCompileDumpsIntoItsOwnFolder) {
  // Two compiles of one kernel with other options: two folders named by the
  // entry, each with every stage from 0-tk.mlir on; neither overwrites the
  // other.
  std::string root = tk::test::makeTempDir("tk-dump");
  setenv("TK_DUMP_IR", root.c_str(), 1);
  tk_compile_options twoWarps = {};
  twoWarps.struct_size = sizeof(twoWarps);
  twoWarps.num_warps = 2;
  tk_kernel first = createVectorAdd();
  tk_kernel second = createVectorAdd(&twoWarps);
  unsetenv("TK_DUMP_IR");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  tk_kernel_release(first);
  tk_kernel_release(second);
  std::vector<std::string> folders;
  for (const auto &entry : std::filesystem::directory_iterator(root)) {
    folders.push_back(entry.path().filename().string());
    EXPECT_TRUE(std::filesystem::exists(entry.path() / "0-tk.mlir"))
        << entry.path();
  }
  ASSERT_EQ(folders.size(), 2u);
  for (const std::string &folder : folders)
    EXPECT_THAT(folder, testing::StartsWith("vector_add-"));
  EXPECT_NE(folders[0], folders[1]);
}

TEST_F(CApiCpuTest, DumpFolderThatCannotBeMadeIsAnError) {
  // TK_DUMP_IR naming a file: no dumps can be written, and the caller asked
  // for them. It was a log line at a level nobody sees.
  std::string file = tk::test::makeTempDir("tk-dump-file") + "/a-file";
  std::ofstream(file) << "x";
  setenv("TK_DUMP_IR", file.c_str(), 1);
  tk_kernel_source src = source();
  tk_kernel dumped = nullptr;
  EXPECT_EQ(tk_kernel_create(device, &src, nullptr, &dumped),
            TK_ERROR_INVALID_ARGUMENT);
  unsetenv("TK_DUMP_IR");
  EXPECT_EQ(dumped, nullptr);
  EXPECT_THAT(tk_last_error(), AllOf(HasSubstr("TK_DUMP_IR='" + file + "'"),
                                     HasSubstr("not a folder tk can create")));
  if (dumped)
    tk_kernel_release(dumped);
}

TEST_F(CApiCpuTest, ConcurrentReleasesOfOneHandleFreeItOnce) {
  // tk.h promises that a released handle is detected: that holds when two
  // threads release it at the same moment too (it was a double free). Of
  // eight threads racing on one buffer, exactly one releases it.
  constexpr int kThreads = 8;
  for (int round = 0; round < 200; ++round) {
    tk_buffer shared = makeBuffer(256);
    buffers.pop_back();
    std::atomic<int> ready{0};
    std::atomic<int> succeeded{0}, refused{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&] {
        ready.fetch_add(1);
        while (ready.load() < kThreads) {
        }
        tk_status status = tk_buffer_release(shared);
        if (status == TK_SUCCESS)
          succeeded.fetch_add(1);
        else if (status == TK_ERROR_INVALID_HANDLE)
          refused.fetch_add(1);
      });
    for (std::thread &thread : threads)
      thread.join();
    ASSERT_EQ(succeeded.load(), 1) << "round " << round;
    ASSERT_EQ(refused.load(), kThreads - 1) << "round " << round;
  }
}

TEST_F(CApiCpuTest, CorruptCacheEntryIsRecompiled) {
  tk::test::ScopedCacheDir dir;
  tk::runtime::Runtime *runtime = nullptr;
  ASSERT_TRUE(tk::runtime::Runtime::get(&runtime).isOk());
  runtime->getKernelCache().clearMemory();
  kernel = createVectorAdd();
  ASSERT_NE(kernel, nullptr);
  ASSERT_EQ(tk_kernel_release(kernel), TK_SUCCESS);
  kernel = nullptr;

  // Exactly one entry in the fresh folder: overwrite its tail with garbage.
  std::error_code error;
  std::string entry;
  for (llvm::sys::fs::directory_iterator it(dir.getPath(), error), end;
       !error && it != end; it.increment(error))
    entry = it->path();
  ASSERT_FALSE(entry.empty());
  {
    std::FILE *file = std::fopen(entry.c_str(), "r+b");
    ASSERT_NE(file, nullptr);
    std::fseek(file, -16, SEEK_END);
    std::fwrite("garbage-garbage!", 1, 16, file);
    std::fclose(file);
  }
  uint64_t corrupt = runtime->getKernelCache().getStatistics().corruptEntries;
  runtime->getKernelCache().clearMemory();
  kernel = createVectorAdd();
  ASSERT_NE(kernel, nullptr);
  tk::runtime::Kernel *object = nullptr;
  ASSERT_TRUE(tk::runtime::Kernel::fromHandle(kernel, &object).isOk());
  EXPECT_EQ(object->getOrigin(), tk::runtime::KernelCache::Origin::Compiler);
  EXPECT_EQ(runtime->getKernelCache().getStatistics().corruptEntries,
            corrupt + 1);
  makeInputs();
  ASSERT_EQ(launch(goodArgs()), TK_SUCCESS) << tk_last_error();
  EXPECT_EQ(countWrong(bout), 0);

  // And the rewritten entry is served from disk next time.
  runtime->getKernelCache().clearMemory();
  tk_kernel again = createVectorAdd();
  ASSERT_NE(again, nullptr);
  ASSERT_TRUE(tk::runtime::Kernel::fromHandle(again, &object).isOk());
  EXPECT_EQ(object->getOrigin(), tk::runtime::KernelCache::Origin::Disk);
  tk_kernel_release(again);
}

TEST_F(CApiCpuTest, Occupancy) {
  kernel = createVectorAdd();
  int programs = 0;
  ASSERT_EQ(tk_kernel_occupancy(kernel, &programs), TK_SUCCESS)
      << tk_last_error();
  EXPECT_GE(programs, 1);
}

TEST_F(CApiCpuTest, SixteenThreadsCreateLaunchTuneAndReleaseAtOnce) {
  // Everything a server's threads do to one device at once: create kernels
  // (the same one, and another specialisation of it), launch them sync and
  // on their own streams, autotune under one shared key, release. Every
  // output must be right; TSan (make test-tsan) must see no race.
  makeInputs();
  constexpr int kThreads = 16, kLaunches = 5;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto failed = [&](const char *what) {
        errors[t] = std::string(what) + ": " + tk_last_error();
      };
      tk_buffer out = nullptr;
      if (tk_buffer_create(device, kN * sizeof(float), &out) != TK_SUCCESS)
        return failed("buffer");
      tk_arg args[] = {tk_arg_buffer(bx), tk_arg_buffer(by), tk_arg_buffer(out),
                       tk_arg_i32(kN)};
      tk_args list = {args, 4};
      // Odd threads compile it for 2 warps (another cache entry), even ones
      // for the default.
      tk_compile_options options = {};
      options.struct_size = sizeof(options);
      options.num_warps = t % 2 ? 2 : 0;
      const tk_grid grid = {(kN + kBlock - 1) / kBlock, 1, 1};
      tk_kernel_source src = source();
      tk_kernel mine = nullptr;
      tk_stream stream = nullptr;
      if (t % 4 == 3) {
        // Autotune between both, all such threads under one key.
        tk_autotune_candidate candidates[2] = {};
        for (int c = 0; c < 2; ++c) {
          candidates[c].source = src;
          candidates[c].options = options;
          candidates[c].options.num_warps = c ? 2 : 4;
          candidates[c].grid = grid;
        }
        tk_autotune_request request = {};
        request.struct_size = sizeof(request);
        request.candidates = candidates;
        request.num_candidates = 2;
        request.args = &list;
        request.key = "sixteen-threads";
        request.repetitions = 3;
        tk_autotune_result result = {};
        result.struct_size = sizeof(result);
        if (tk_autotune(device, &request, &mine, &result) != TK_SUCCESS)
          return failed("autotune");
      } else if (tk_kernel_create(device, &src, &options, &mine) !=
                 TK_SUCCESS) {
        return failed("create");
      }
      for (int i = 0; i < kLaunches && errors[t].empty(); ++i)
        if (tk_launch(mine, grid, &list) != TK_SUCCESS)
          failed("launch");
      if (errors[t].empty() && tk_stream_create(device, &stream) != TK_SUCCESS)
        failed("stream");
      for (int i = 0; i < kLaunches && errors[t].empty(); ++i)
        if (tk_launch_async(mine, grid, &list, stream) != TK_SUCCESS)
          failed("launch_async");
      if (stream && tk_stream_synchronize(stream) != TK_SUCCESS)
        failed("synchronize");
      if (errors[t].empty() && countWrong(out) != 0)
        errors[t] = "wrong output";
      if (stream)
        tk_stream_release(stream);
      tk_kernel_release(mine);
      tk_buffer_release(out);
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(errors[t], "") << "thread " << t;
}

} // namespace
