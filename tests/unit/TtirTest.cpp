//===- TtirTest.cpp - Triton's TTIR through the C API ---------------------===//
//
// TK_SOURCE_TTIR end to end on the cpu backend: a kernel Triton wrote runs,
// what tk cannot import is TK_ERROR_UNSUPPORTED naming the op and its
// Python line, text that is not TTIR is TK_ERROR_INVALID_IR, Triton's ops
// outside a TTIR source are TK_ERROR_INVALID_IR, and
// tk_ttir_read_metadata reads Triton's num_warps and num_stages.
//
//===----------------------------------------------------------------------===//

#include "tk/tk.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string readCorpus(const std::string &relative) {
  std::ifstream file(std::string(TK_TEST_TTIR_CORPUS) + "/" + relative);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

class TtirTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(tk_device_get(0, &device), TK_SUCCESS) << tk_last_error();
  }
  void TearDown() override {
    if (kernel)
      tk_kernel_release(kernel);
  }
  tk_status create(const std::string &text,
                   const tk_compile_options *options = nullptr) {
    tk_kernel_source source = {TK_SOURCE_TTIR, text.data(), text.size(),
                               nullptr};
    return tk_kernel_create(device, &source, options, &kernel);
  }

  tk_device device = nullptr;
  tk_kernel kernel = nullptr;
};

TEST_F(TtirTest, TritonsVectorAddRuns) {
  std::string text = readCorpus("vector_add/kernel.ttir");
  ASSERT_FALSE(text.empty());
  tk_compile_options options = {};
  options.struct_size = sizeof(options);
  std::string json = readCorpus("vector_add/kernel.json");
  ASSERT_EQ(tk_ttir_read_metadata(json.c_str(), 0, &options), TK_SUCCESS)
      << tk_last_error();
  EXPECT_EQ(options.num_warps, 4);
  EXPECT_EQ(options.num_stages, 3);
  ASSERT_EQ(create(text, &options), TK_SUCCESS) << tk_last_error();
  int count = 0;
  ASSERT_EQ(tk_kernel_num_args(kernel, &count), TK_SUCCESS);
  EXPECT_EQ(count, 4); // x_ptr, y_ptr, out_ptr, n

  const int n = 3000; // not a multiple of the kernel's 1024
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * float(i);
    y[i] = float(n - i);
  }
  tk_buffer bx, by, bout;
  ASSERT_EQ(tk_buffer_create(device, n * 4, &bx), TK_SUCCESS);
  ASSERT_EQ(tk_buffer_create(device, n * 4, &by), TK_SUCCESS);
  ASSERT_EQ(tk_buffer_create(device, n * 4, &bout), TK_SUCCESS);
  ASSERT_EQ(tk_buffer_write(bx, 0, x.data(), n * 4), TK_SUCCESS);
  ASSERT_EQ(tk_buffer_write(by, 0, y.data(), n * 4), TK_SUCCESS);
  ASSERT_EQ(tk_buffer_write(bout, 0, out.data(), n * 4), TK_SUCCESS);
  tk_arg args[] = {tk_arg_buffer(bx), tk_arg_buffer(by), tk_arg_buffer(bout),
                   tk_arg_i32(n)};
  tk_args list = {args, 4};
  ASSERT_EQ(tk_launch(kernel, tk_grid{(n + 1023) / 1024, 1, 1}, &list),
            TK_SUCCESS)
      << tk_last_error();
  ASSERT_EQ(tk_buffer_read(bout, 0, out.data(), n * 4), TK_SUCCESS);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out[i], x[i] + y[i]) << "at " << i;
  for (tk_buffer b : {bx, by, bout})
    tk_buffer_release(b);
}

TEST_F(TtirTest, AnOpTkDoesNotImportIsUnsupportedNamingIt) {
  // tt.histogram is Triton's; tk has no such op.
  std::string text = R"(module {
  tt.func public @k(%p: !tt.ptr<i32>) {
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %h = tt.histogram %r : tensor<16xi32> -> tensor<8xi32>
    tt.return
  }
})";
  EXPECT_EQ(create(text), TK_ERROR_UNSUPPORTED);
  std::string message = tk_last_error();
  EXPECT_NE(message.find("tt.histogram"), std::string::npos) << message;
  EXPECT_NE(message.find("<source>:4:10"), std::string::npos) << message;
  EXPECT_EQ(kernel, nullptr);
}

TEST_F(TtirTest, OtherDialectsAndTtgirAreUnsupported) {
  // tl.debug_barrier's gpu.barrier; TTGIR's layouts given as TTIR.
  for (const char *text :
       {"module {\n  tt.func public @k() {\n    gpu.barrier\n"
        "    tt.return\n  }\n}\n",
        "module {\n  tt.func public @k(%x: !tt.ptr<f32>) {\n"
        "    %0 = tt.splat %x : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>, "
        "#ttg.blocked<{}>>\n    tt.return\n  }\n}\n"}) {
    EXPECT_EQ(create(text), TK_ERROR_UNSUPPORTED) << text;
    EXPECT_NE(std::string(tk_last_error()).find("<source>:3:"),
              std::string::npos)
        << tk_last_error();
  }
}

TEST_F(TtirTest, AnUnsupportedFormNamesThePythonLine) {
  std::string text = R"(#loc = loc("kernel.py":12:9)
module {
  tt.func public @k(%p: !tt.ptr<f32>, %v: f32) {
    %0 = tt.atomic_rmw fadd, relaxed, sys, %p, %v : (!tt.ptr<f32>, f32) -> f32 loc(#loc1)
    tt.return
  }
}
#loc1 = loc("old"(#loc))
)";
  EXPECT_EQ(create(text), TK_ERROR_UNSUPPORTED);
  std::string message = tk_last_error();
  EXPECT_NE(message.find("kernel.py:12:9"), std::string::npos) << message;
  EXPECT_NE(message.find("'tt.atomic_rmw'"), std::string::npos) << message;
  EXPECT_NE(message.find("system scope"), std::string::npos) << message;
}

TEST_F(TtirTest, TextThatIsNotTtirIsInvalidIR) {
  EXPECT_EQ(create("tt.func public @k( {"), TK_ERROR_INVALID_IR);
  EXPECT_NE(std::string(tk_last_error()).find("TTIR does not parse"),
            std::string::npos)
      << tk_last_error();
  // A tk kernel is not TTIR, but it is MLIR: it parses, and the importer
  // leaves tk alone; what the TTIR lacks is then a kernel.
  EXPECT_EQ(create("module {}"), TK_ERROR_NOT_FOUND) << tk_last_error();
}

// Triton's ops are read only from a TTIR source, which turns them into tk.
// Given as tk text (or in tk bytecode) they are unknown, as they are to every
// other reader of tk (the bytecode check, the plugins, the kernel cache).
TEST_F(TtirTest, TtOpsInATkSourceAreInvalidIR) {
  std::string text = "tk.func @k(%x: !tk.ptr<f32>) {\n"
                     "  %p = tt.get_program_id x : i32\n"
                     "  tk.return\n"
                     "}\n";
  tk_kernel_source source = {TK_SOURCE_TEXT, text.data(), text.size(), nullptr};
  EXPECT_EQ(tk_kernel_create(device, &source, nullptr, &kernel),
            TK_ERROR_INVALID_IR);
  std::string message = tk_last_error();
  EXPECT_NE(message.find("<source>:2:"), std::string::npos) << message;
  EXPECT_NE(message.find("tt.get_program_id"), std::string::npos) << message;
  EXPECT_EQ(kernel, nullptr);
}

TEST(TtirMetadata, ReadsTritonsCountsAndRefusesBadOnes) {
  tk_compile_options options = {};
  options.struct_size = sizeof(options);
  options.num_warps = 2;
  ASSERT_EQ(
      tk_ttir_read_metadata(R"({"num_stages": 4, "name": "k"})", 0, &options),
      TK_SUCCESS)
      << tk_last_error();
  EXPECT_EQ(options.num_warps, 2); // absent: left as it was
  EXPECT_EQ(options.num_stages, 4);

  for (const char *bad : {"{", "[1]", R"({"num_warps": 0})",
                          R"({"num_warps": "8"})", R"({"num_stages": 2.5})"}) {
    tk_compile_options before = options;
    EXPECT_EQ(tk_ttir_read_metadata(bad, 0, &options),
              TK_ERROR_INVALID_ARGUMENT)
        << bad;
    EXPECT_EQ(options.num_warps, before.num_warps) << bad;
    EXPECT_EQ(options.num_stages, before.num_stages) << bad;
    EXPECT_NE(std::string(tk_last_error()).find("Triton's metadata"),
              std::string::npos)
        << tk_last_error();
  }
  tk_compile_options unsized = {};
  EXPECT_EQ(tk_ttir_read_metadata("{}", 0, &unsized),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tk_ttir_read_metadata(nullptr, 0, &options),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tk_ttir_read_metadata("{}", 0, nullptr), TK_ERROR_INVALID_ARGUMENT);
}

} // namespace
