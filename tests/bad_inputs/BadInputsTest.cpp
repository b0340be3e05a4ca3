//===- BadInputsTest.cpp - the catalogue of bad inputs --------------------===//
//
// What users, broken plugins and full disks hand tk, each with the status
// and the words its message must carry: no crash, no abort, no partial
// file. IR cases are the files of ir/ (their first lines say what they
// expect); every other case is one line of kApiCases below. Run on the cpu
// backend (and under ASan in test-asan).
//
//===----------------------------------------------------------------------===//

#include "tk/tk.h"

#include "tk/ir/Dialect.h"
#include "tk/runtime/PluginLoader.h"
#include "tk/runtime/Status.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The status and words a case expects.
struct Expected {
  std::string status;
  std::vector<std::string> words;
};

void expectFailure(tk_status status, const Expected &expected) {
  EXPECT_EQ(tk_status_string(status), expected.status) << tk_last_error();
  for (const std::string &word : expected.words)
    EXPECT_THAT(tk_last_error(), ::testing::HasSubstr(word));
}

tk_device firstDevice() {
  tk_device device = nullptr;
  EXPECT_EQ(tk_device_get(0, &device), TK_SUCCESS) << tk_last_error();
  return device;
}

//===----------------------------------------------------------------------===//
// IR: tests/bad_inputs/ir/*.tk, each headed by `// status: NAME` and any
// number of `// message: words`.
//===----------------------------------------------------------------------===//

std::vector<std::string> irCases() {
  std::vector<std::string> names;
  for (const auto &entry :
       std::filesystem::directory_iterator(TK_BAD_INPUTS_DIR "/ir"))
    if (entry.path().extension() == ".tk")
      names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Expected readExpectation(const std::string &text) {
  Expected expected;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("// status: ", 0) == 0)
      expected.status = line.substr(11);
    else if (line.rfind("// message: ", 0) == 0)
      expected.words.push_back(line.substr(12));
  }
  return expected;
}

class BadIR : public ::testing::TestWithParam<std::string> {};

TEST_P(BadIR, IsRefusedAsItsHeaderSays) {
  std::string text =
      readFile(std::string(TK_BAD_INPUTS_DIR "/ir/") + GetParam() + ".tk");
  ASSERT_FALSE(text.empty());
  Expected expected = readExpectation(text);
  ASSERT_FALSE(expected.status.empty()) << "no `// status:` line";
  tk_kernel_source source = {TK_SOURCE_TEXT, text.data(), text.size(), nullptr};
  tk_kernel kernel = nullptr;
  expectFailure(tk_kernel_create(firstDevice(), &source, nullptr, &kernel),
                expected);
  EXPECT_EQ(kernel, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadIR, ::testing::ValuesIn(irCases()),
                         [](const auto &info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

//===----------------------------------------------------------------------===//
// Everything else: one line per case.
//===----------------------------------------------------------------------===//

/// `text` as MLIR bytecode, written as a C++ program using the builder would
/// (empty when it does not parse).
static std::string toBytecode(const std::string &text) {
  mlir::DialectRegistry registry;
  tk::registerTkDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (!module || mlir::failed(mlir::writeBytecodeToFile(*module, os)))
    return "";
  return bytes;
}

/// What a case may use: the device, vector_add made from the examples, its
/// three buffers of kElements floats, and a released buffer.
struct World {
  static constexpr int kElements = 4096;
  tk_device device = nullptr;
  tk_kernel kernel = nullptr;
  tk_buffer x = nullptr, y = nullptr, out = nullptr, released = nullptr;
  std::string text, bytecode;

  World() {
    device = firstDevice();
    text = readFile(TK_EXAMPLES_KERNELS_DIR "/vector_add.tk");
    bytecode = toBytecode(text);
    EXPECT_GT(bytecode.size(), 16u);
    tk_kernel_source source = {TK_SOURCE_TEXT, text.data(), text.size(),
                               nullptr};
    EXPECT_EQ(tk_kernel_create(device, &source, nullptr, &kernel), TK_SUCCESS)
        << tk_last_error();
    for (tk_buffer *buffer : {&x, &y, &out, &released})
      EXPECT_EQ(tk_buffer_create(device, kElements * 4, buffer), TK_SUCCESS);
    EXPECT_EQ(tk_buffer_release(released), TK_SUCCESS);
  }
  ~World() {
    for (tk_buffer buffer : {x, y, out})
      tk_buffer_release(buffer);
    tk_kernel_release(kernel);
  }

  tk_status launch(tk_grid grid, std::vector<tk_arg> args) {
    tk_args list = {args.data(), args.size()};
    return tk_launch(kernel, grid, &list);
  }
  std::vector<tk_arg> goodArgs() {
    return {tk_arg_buffer(x), tk_arg_buffer(y), tk_arg_buffer(out),
            tk_arg_i32(kElements)};
  }
  tk_status create(tk_source_kind kind, const std::string &data,
                   const tk_compile_options *options = nullptr) {
    tk_kernel_source source = {kind, data.data(), data.size(), nullptr};
    tk_kernel made = nullptr;
    tk_status status = tk_kernel_create(device, &source, options, &made);
    if (made)
      tk_kernel_release(made);
    return status;
  }
};

/// A plugin fixture (tests/unit/plugins) or backend name, selected by the
/// runtime's loader as TK_BACKEND would be; its status as a tk_status.
tk_status selectBackend(const char *spec) {
  tk::runtime::Plugin *plugin = nullptr;
  tk::runtime::Status status =
      tk::runtime::PluginLoader({TK_TEST_PLUGIN_DIR, TK_TEST_LIB_DIR})
          .select(spec, &plugin);
  return status.report();
}

struct ApiCase {
  const char *name;
  Expected expected;
  std::function<tk_status(World &)> run;
};

tk_compile_options optionsWithWarps(int warps) {
  tk_compile_options options = {};
  options.struct_size = sizeof(options);
  options.num_warps = warps;
  return options;
}

const std::vector<ApiCase> &apiCases() {
  using W = World;
  static const std::vector<ApiCase> cases = {
      // Devices and backends.
      {"device_index_negative",
       {"TK_ERROR_NOT_FOUND", {"device -1"}},
       [](W &) {
         tk_device d;
         return tk_device_get(-1, &d);
       }},
      {"device_index_beyond",
       {"TK_ERROR_NOT_FOUND", {"device 7"}},
       [](W &) {
         tk_device d;
         return tk_device_get(7, &d);
       }},
      {"device_get_null_out",
       {"TK_ERROR_INVALID_ARGUMENT", {"out_device"}},
       [](W &) { return tk_device_get(0, nullptr); }},
      {"device_query_null_props",
       {"TK_ERROR_INVALID_ARGUMENT", {"out"}},
       [](W &w) { return tk_device_query(w.device, nullptr); }},
      {"device_handle_is_a_buffer",
       {"TK_ERROR_INVALID_HANDLE", {"device handle is not live"}},
       [](W &w) {
         tk_device_props p = {};
         p.struct_size = sizeof(p);
         return tk_device_query(reinterpret_cast<tk_device>(w.x), &p);
       }},
      {"backend_unknown",
       {"TK_ERROR_NOT_FOUND", {"TK_BACKEND=nosuch", "plugins found"}},
       [](W &) { return selectBackend("nosuch"); }},
      {"backend_list_of_commas",
       {"TK_ERROR_INVALID_ARGUMENT", {"names no backend"}},
       [](W &) { return selectBackend(",,,"); }},
      {"plugin_of_another_abi",
       {"TK_ERROR_ABI_MISMATCH", {"ABI version 99"}},
       [](W &) { return selectBackend("abi99"); }},
      {"plugin_without_entry_point",
       {"TK_ERROR_PLUGIN", {"tk_backend_get_interface"}},
       [](W &) { return selectBackend("noentry"); }},
      {"plugin_with_2e9_devices",
       {"TK_ERROR_PLUGIN", {"2000000000 devices"}},
       [](W &) { return selectBackend("manydevices"); }},
      // Buffers.
      {"buffer_bigger_than_memory",
       {"TK_ERROR_OUT_OF_MEMORY", {"cannot allocate"}},
       [](W &w) {
         tk_buffer b = nullptr;
         return tk_buffer_create(w.device, SIZE_MAX - 62, &b);
       }},
      {"buffer_create_null_out",
       {"TK_ERROR_INVALID_ARGUMENT", {"out_buffer"}},
       [](W &w) { return tk_buffer_create(w.device, 64, nullptr); }},
      {"buffer_write_past_end",
       {"TK_ERROR_INVALID_ARGUMENT", {"outside the buffer"}},
       [](W &w) {
         float v[2] = {};
         return tk_buffer_write(w.x, W::kElements * 4 - 4, v, sizeof(v));
       }},
      {"buffer_read_offset_wraps",
       {"TK_ERROR_INVALID_ARGUMENT", {"outside the buffer"}},
       [](W &w) {
         float v = 0;
         return tk_buffer_read(w.x, SIZE_MAX, &v, 8);
       }},
      {"buffer_copy_past_end",
       {"TK_ERROR_INVALID_ARGUMENT", {"outside the buffer"}},
       [](W &w) { return tk_buffer_copy(w.x, 8, w.y, 0, W::kElements * 4); }},
      {"buffer_write_null_source",
       {"TK_ERROR_INVALID_ARGUMENT", {"NULL"}},
       [](W &w) { return tk_buffer_write(w.x, 0, nullptr, 4); }},
      {"buffer_release_null",
       {"TK_ERROR_INVALID_ARGUMENT", {"buffer is NULL"}},
       [](W &) { return tk_buffer_release(nullptr); }},
      {"buffer_released_twice",
       {"TK_ERROR_INVALID_HANDLE", {"buffer handle is not live"}},
       [](W &w) { return tk_buffer_release(w.released); }},
      {"buffer_released_then_read",
       {"TK_ERROR_INVALID_HANDLE", {"buffer handle is not live"}},
       [](W &w) {
         float v;
         return tk_buffer_read(w.released, 0, &v, 4);
       }},
      {"buffer_handle_is_a_kernel",
       {"TK_ERROR_INVALID_HANDLE", {"buffer handle"}},
       [](W &w) {
         size_t n;
         return tk_buffer_size(reinterpret_cast<tk_buffer>(w.kernel), &n);
       }},
      // Kernel sources and options.
      {"source_null",
       {"TK_ERROR_INVALID_ARGUMENT", {"source"}},
       [](W &w) {
         tk_kernel k;
         return tk_kernel_create(w.device, nullptr, nullptr, &k);
       }},
      {"source_data_null",
       {"TK_ERROR_INVALID_ARGUMENT", {"source->data is NULL"}},
       [](W &w) {
         tk_kernel_source s = {TK_SOURCE_TEXT, nullptr, 0, nullptr};
         tk_kernel k;
         return tk_kernel_create(w.device, &s, nullptr, &k);
       }},
      {"source_kind_unknown",
       {"TK_ERROR_INVALID_ARGUMENT",
        {"source->kind 7 is not a tk_source_kind"}},
       [](W &w) {
         tk_kernel_source s = {TK_SOURCE_TEXT, w.text.data(), w.text.size(),
                               nullptr};
         int seven = 7; // what a C caller can store in the enum
         std::memcpy(&s.kind, &seven, sizeof(seven));
         tk_kernel k;
         return tk_kernel_create(w.device, &s, nullptr, &k);
       }},
      {"source_entry_unknown",
       {"TK_ERROR_NOT_FOUND", {"nosuch", "vector_add"}},
       [](W &w) {
         tk_kernel_source s = {TK_SOURCE_TEXT, w.text.data(), w.text.size(),
                               "nosuch"};
         tk_kernel k;
         return tk_kernel_create(w.device, &s, nullptr, &k);
       }},
      {"bytecode_of_size_0",
       {"TK_ERROR_INVALID_ARGUMENT", {"size is 0"}},
       [](W &w) { return w.create(TK_SOURCE_BYTECODE, ""); }},
      {"bytecode_that_is_text",
       {"TK_ERROR_INVALID_IR", {"not MLIR bytecode"}},
       [](W &w) { return w.create(TK_SOURCE_BYTECODE, w.text); }},
      {"bytecode_truncated",
       {"TK_ERROR_INVALID_IR", {"bytecode"}},
       [](W &w) {
         return w.create(TK_SOURCE_BYTECODE,
                         w.bytecode.substr(0, w.bytecode.size() / 2));
       }},
      {"bytecode_header_only",
       {"TK_ERROR_INVALID_IR", {"bytecode"}},
       [](W &w) {
         return w.create(TK_SOURCE_BYTECODE, w.bytecode.substr(0, 8));
       }},
      {"bytecode_that_ends_mlirs_reader",
       // A region of 2^62 values: MLIR 22's reader asks for a SmallVector
       // that big and calls report_fatal_error. tk-bytecode-check meets it
       // first (a reader that learns to refuse it gives INVALID_IR too).
       {"TK_ERROR_INVALID_IR", {"bytecode"}},
       [](W &w) {
         return w.create(TK_SOURCE_BYTECODE,
                         readFile(TK_FUZZ_REGRESSIONS_DIR
                                  "/tk-fuzz-ir-bytecode/"
                                  "region-of-2e18-values-smallvector-cannot-"
                                  "grow"));
       }},
      {"bytecode_checker_crashes",
       // What a crash of the reader in tk-bytecode-check comes to, with a
       // checker that dies of SIGSEGV: refused, the caller alive.
       {"TK_ERROR_INVALID_IR",
        {"tk-bytecode-check", "did not finish", "Segmentation fault"}},
       [](W &w) {
         std::string checker =
             (std::filesystem::temp_directory_path() /
              ("tk-crashing-check-" + std::to_string(getpid())))
                 .string();
         {
           std::ofstream script(checker);
           script << "#!/bin/sh\nkill -SEGV $$\n";
         }
         std::filesystem::permissions(checker,
                                      std::filesystem::perms::owner_all);
         setenv("TK_BYTECODE_CHECK", checker.c_str(), 1);
         // Bytecode no other case read, so none is remembered as checked.
         tk_status status = w.create(
             TK_SOURCE_BYTECODE, w.bytecode.substr(0, w.bytecode.size() - 2));
         unsetenv("TK_BYTECODE_CHECK");
         std::filesystem::remove(checker);
         return status;
       }},
      {"bytecode_checker_missing",
       {"TK_ERROR_NOT_FOUND", {"tk-bytecode-check", "TK_BYTECODE_CHECK="}},
       [](W &w) {
         setenv("TK_BYTECODE_CHECK", "/nonexistent/tk-bytecode-check", 1);
         // Bytecode no other case read, so none is remembered as checked.
         tk_status status = w.create(
             TK_SOURCE_BYTECODE, w.bytecode.substr(0, w.bytecode.size() - 1));
         unsetenv("TK_BYTECODE_CHECK");
         return status;
       }},
      {"text_of_nul_bytes",
       {"TK_ERROR_INVALID_IR", {"<source>"}},
       [](W &w) {
         return w.create(TK_SOURCE_TEXT, std::string(64, '\0') + "x");
       }},
      {"num_warps_negative",
       {"TK_ERROR_INVALID_ARGUMENT", {"num_warps"}},
       [](W &w) {
         tk_compile_options o = optionsWithWarps(-1);
         return w.create(TK_SOURCE_TEXT, w.text, &o);
       }},
      {"num_stages_negative",
       {"TK_ERROR_INVALID_ARGUMENT", {"num_stages (-2)"}},
       [](W &w) {
         tk_compile_options o = optionsWithWarps(0);
         o.num_stages = -2;
         return w.create(TK_SOURCE_TEXT, w.text, &o);
       }},
      {"min_programs_negative",
       {"TK_ERROR_INVALID_ARGUMENT", {"min_programs_per_cu (-1)"}},
       [](W &w) {
         tk_compile_options o = optionsWithWarps(0);
         o.min_programs_per_cu = -1;
         return w.create(TK_SOURCE_TEXT, w.text, &o);
       }},
      {"constexpr_unknown",
       {"TK_ERROR_NOT_FOUND", {"NOSUCH"}},
       [](W &w) {
         tk_constexpr_value c = {"NOSUCH", 1};
         tk_compile_options o = optionsWithWarps(0);
         o.constexprs = &c;
         o.num_constexprs = 1;
         return w.create(TK_SOURCE_TEXT, w.text, &o);
       }},
      {"constexpr_list_null",
       {"TK_ERROR_INVALID_ARGUMENT", {"constexprs"}},
       [](W &w) {
         tk_compile_options o = optionsWithWarps(0);
         o.num_constexprs = 2;
         return w.create(TK_SOURCE_TEXT, w.text, &o);
       }},
      // Launches.
      {"launch_too_few_arguments",
       {"TK_ERROR_ARGUMENT_MISMATCH", {"4"}},
       [](W &w) {
         std::vector<tk_arg> a = w.goodArgs();
         a.pop_back();
         return w.launch({4, 1, 1}, a);
       }},
      {"launch_scalar_for_pointer",
       {"TK_ERROR_ARGUMENT_MISMATCH", {"argument 0 ('x')"}},
       [](W &w) {
         std::vector<tk_arg> a = w.goodArgs();
         a[0] = tk_arg_i32(3);
         return w.launch({4, 1, 1}, a);
       }},
      {"launch_kind_unknown",
       {"TK_ERROR_ARGUMENT_MISMATCH", {"kind 9, which is no tk_arg_kind"}},
       [](W &w) {
         std::vector<tk_arg> a = w.goodArgs();
         int nine = 9; // what a C caller can store in the enum
         std::memcpy(&a[3].kind, &nine, sizeof(nine));
         return w.launch({4, 1, 1}, a);
       }},
      {"launch_f32_for_i32",
       {"TK_ERROR_ARGUMENT_MISMATCH", {"argument 3 ('n')"}},
       [](W &w) {
         std::vector<tk_arg> a = w.goodArgs();
         a[3] = tk_arg_f32(1.0f);
         return w.launch({4, 1, 1}, a);
       }},
      {"launch_misaligned_pointer",
       {"TK_ERROR_ARGUMENT_MISMATCH", {"argument 1 ('y')", "16"}},
       [](W &w) {
         void *p = nullptr;
         tk_buffer_device_pointer(w.y, &p);
         tk_buffer shifted = nullptr;
         tk_buffer_wrap(w.device, static_cast<char *>(p) + 4, 64, &shifted);
         std::vector<tk_arg> a = w.goodArgs();
         a[1] = tk_arg_buffer(shifted);
         tk_status s = w.launch({4, 1, 1}, a);
         tk_buffer_release(shifted);
         return s;
       }},
      {"launch_released_buffer",
       {"TK_ERROR_INVALID_HANDLE", {"argument 2 ('out')"}},
       [](W &w) {
         std::vector<tk_arg> a = w.goodArgs();
         a[2] = tk_arg_buffer(w.released);
         return w.launch({4, 1, 1}, a);
       }},
      {"launch_null_argument_list",
       {"TK_ERROR_ARGUMENT_MISMATCH",
        {"takes 4 arguments (x, y, out, n), got 0"}},
       [](W &w) {
         return tk_launch(w.kernel, {4, 1, 1}, nullptr);
       }},
      {"launch_grid_of_zero",
       {"TK_ERROR_INVALID_ARGUMENT", {"grid"}},
       [](W &w) {
         return w.launch({0, 1, 1}, w.goodArgs());
       }},
      {"launch_grid_negative",
       {"TK_ERROR_INVALID_ARGUMENT", {"grid"}},
       [](W &w) {
         return w.launch({4, -1, 1}, w.goodArgs());
       }},
      {"launch_grid_beyond_device",
       {"TK_ERROR_INVALID_ARGUMENT", {"grid", "65535"}},
       [](W &w) {
         return w.launch({1, 70000, 1}, w.goodArgs());
       }},
      {"launch_released_kernel",
       {"TK_ERROR_INVALID_HANDLE", {"kernel handle is not live"}},
       [](W &w) {
         tk_kernel_source s = {TK_SOURCE_TEXT, w.text.data(), w.text.size(),
                               nullptr};
         tk_kernel k = nullptr;
         tk_kernel_create(w.device, &s, nullptr, &k);
         tk_kernel_release(k);
         std::vector<tk_arg> a = w.goodArgs();
         tk_args l = {a.data(), a.size()};
         return tk_launch(k, {4, 1, 1}, &l);
       }},
      // Files: the cache folder and dumps.
      {"dump_folder_is_a_file",
       {"TK_ERROR_INVALID_ARGUMENT", {"TK_DUMP_IR", "not a folder"}},
       [](W &w) {
         setenv("TK_DUMP_IR", TK_BAD_INPUTS_DIR "/BadInputsTest.cpp", 1);
         tk_status s = w.create(TK_SOURCE_TEXT, w.text);
         unsetenv("TK_DUMP_IR");
         return s;
       }},
      {"autotune_without_candidates",
       {"TK_ERROR_INVALID_ARGUMENT", {"candidates"}},
       [](W &w) {
         tk_autotune_request r = {};
         r.struct_size = sizeof(r);
         r.key = "none";
         tk_kernel k = nullptr;
         tk_autotune_result res = {};
         res.struct_size = sizeof(res);
         return tk_autotune(w.device, &r, &k, &res);
       }},
  };
  return cases;
}

class BadCall : public ::testing::TestWithParam<size_t> {};

TEST_P(BadCall, IsRefusedWithItsStatusAndWords) {
  const ApiCase &c = apiCases()[GetParam()];
  World world;
  ASSERT_NE(world.kernel, nullptr);
  expectFailure(c.run(world), c.expected);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadCall,
                         ::testing::Range<size_t>(0, apiCases().size()),
                         [](const auto &info) {
                           return std::string(apiCases()[info.param].name);
                         });

TEST(Catalogue, HasAtLeastFortyCases) {
  EXPECT_GE(irCases().size() + apiCases().size(), 40u);
}

} // namespace
