//===- AutotuneTest.cpp - tk_autotune on the CPU backend ------------------===//
//
// Candidates of the seed vector add (BLOCK 256 and 1024, different warps)
// are compiled, timed and recorded; a second call reads the record; a
// corrupt record is retuned; a record never chooses for candidates of other
// content under the same labels; bad requests are refused with a message.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/Autotune.h"
#include "tk/ir/Dialect.h"
#include "tk/tk.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string replaceAll(std::string text, const std::string &from,
                       const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// A key no earlier run recorded (the tests' cache folder outlives them):
/// the process id and the clock tell runs apart, a counter the keys of one.
std::string uniqueKey(const std::string &prefix) {
  static int counter = 0;
  return prefix + " " + std::to_string(getpid()) + "." +
         std::to_string(
             std::chrono::steady_clock::now().time_since_epoch().count()) +
         "." + std::to_string(counter++);
}

struct Progress {
  std::vector<std::string> stages;
  /// The total each stage reported.
  std::map<std::string, size_t> totals;
};

void recordProgress(const char *stage, size_t, size_t total, void *user) {
  auto *progress = static_cast<Progress *>(user);
  progress->stages.push_back(stage);
  progress->totals[stage] = total;
}

class AutotuneTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(tk_device_get(0, &device), TK_SUCCESS) << tk_last_error();
    block1024 = readFile(std::string(TK_TEST_KERNELS_DIR) + "/vector_add.tk");
    ASSERT_FALSE(block1024.empty());
    // The same kernel with 256-element tiles.
    block256 = replaceAll(block1024, "1024", "256");
    const size_t bytes = n * sizeof(float);
    for (tk_buffer *b : {&x, &y, &out})
      ASSERT_EQ(tk_buffer_create(device, bytes, b), TK_SUCCESS);
    std::vector<float> hx(n), hy(n);
    for (int i = 0; i < n; ++i) {
      hx[i] = float(i);
      hy[i] = 0.5f;
    }
    ASSERT_EQ(tk_buffer_write(x, 0, hx.data(), bytes), TK_SUCCESS);
    ASSERT_EQ(tk_buffer_write(y, 0, hy.data(), bytes), TK_SUCCESS);
    argv = {tk_arg_buffer(x), tk_arg_buffer(y), tk_arg_buffer(out),
            tk_arg_i32(n)};
    args = {argv.data(), argv.size()};
    candidates = {
        candidate(block1024, 1024, 4, "BLOCK=1024 w4"),
        candidate(block256, 256, 4, "BLOCK=256 w4"),
        candidate(block256, 256, 1, "BLOCK=256 w1"),
    };
  }
  void TearDown() override {
    for (tk_buffer b : {x, y, out})
      tk_buffer_release(b);
  }

  tk_autotune_candidate candidate(const std::string &text, int block, int warps,
                                  const char *label) {
    tk_autotune_candidate c = {};
    c.source = {TK_SOURCE_TEXT, text.data(), text.size(), "vector_add"};
    c.options = {sizeof(tk_compile_options),
                 warps,
                 0,
                 nullptr,
                 0,
                 nullptr,
                 0,
                 nullptr,
                 0};
    c.grid = {(n + block - 1) / block, 1, 1};
    c.label = label;
    return c;
  }

  tk_autotune_request request(const std::string &key) {
    tk_autotune_request r = {};
    r.struct_size = sizeof(r);
    r.candidates = candidates.data();
    r.num_candidates = candidates.size();
    r.args = &args;
    keyStorage = key; // the request points at it
    r.key = keyStorage.c_str();
    r.repetitions = 10;
    r.progress = recordProgress;
    r.progress_user = &progress;
    return r;
  }

  /// Autotuning at kernel creation over `count` configurations laid out at
  /// `configs`, for `key`, reporting to `result`; `options` points at it.
  tk_autotune_options tuning(const void *configs, size_t count,
                             const std::string &key, tk_autotune_result &result,
                             tk_compile_options &options) {
    tk_autotune_options t = {};
    t.struct_size = sizeof(t);
    t.configs = static_cast<const tk_autotune_config *>(configs);
    t.num_configs = count;
    t.args = &args;
    keyStorage = key; // the options point at it
    t.key = keyStorage.c_str();
    t.repetitions = 5;
    result = {};
    result.struct_size = sizeof(result);
    t.result = &result;
    options = {};
    options.struct_size = sizeof(options);
    return t;
  }

  /// vector_add.tk (BLOCK 1024) as text.
  tk_kernel_source block1024Source() const {
    return {TK_SOURCE_TEXT, block1024.data(), block1024.size(), "vector_add"};
  }

  void expectCorrectOutput(tk_kernel kernel, tk_grid grid) {
    ASSERT_EQ(tk_launch(kernel, grid, &args), TK_SUCCESS) << tk_last_error();
    std::vector<float> result(n);
    ASSERT_EQ(tk_buffer_read(out, 0, result.data(), n * sizeof(float)),
              TK_SUCCESS);
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(result[i], float(i) + 0.5f) << "at " << i;
  }

  /// The folder of the autotune records, under the TK_CACHE_DIR that ctest
  /// sets for the tests ("" outside ctest).
  std::string recordDirectory() {
    const char *cache = std::getenv("TK_CACHE_DIR");
    return cache && *cache ? std::string(cache) + "/autotune" : "";
  }

  static constexpr int n = 100003;
  tk_device device = nullptr;
  std::string block1024, block256;
  tk_buffer x = nullptr, y = nullptr, out = nullptr;
  std::vector<tk_arg> argv;
  tk_args args = {};
  std::vector<tk_autotune_candidate> candidates;
  Progress progress;
  std::string keyStorage;
};

TEST_F(AutotuneTest, TimesRecordsAndReusesTheWinner) {
  std::string key = uniqueKey("n=100003");
  std::string plot = ::testing::TempDir() + "tk-autotune.svg";
  tk_autotune_request r = request(key);
  r.plot_path = plot.c_str();
  tk_kernel kernel = nullptr;
  tk_autotune_result result = {};
  result.struct_size = sizeof(result);
  ASSERT_EQ(tk_autotune(device, &r, &kernel, &result), TK_SUCCESS)
      << tk_last_error();
  ASSERT_NE(kernel, nullptr);
  EXPECT_LT(result.best, candidates.size());
  EXPECT_GT(result.best_seconds, 0.0);
  EXPECT_EQ(result.from_cache, 0);
  EXPECT_EQ(result.failed, 0);
  expectCorrectOutput(kernel, candidates[result.best].grid);
  tk_kernel_release(kernel);
  // Progress: one compile batch or more, then a timing step per candidate
  // (and, where two or more candidates timed within 5%, a step per round of
  // timing them again).
  EXPECT_EQ(progress.totals["compile"], candidates.size());
  EXPECT_EQ(progress.totals["time"], candidates.size());
  EXPECT_EQ(std::count(progress.stages.begin(), progress.stages.end(),
                       std::string("time")),
            3);
  // The plot has a bar per candidate and names them.
  std::string svg = readFile(plot);
  size_t bars = 0;
  for (size_t at = svg.find("<rect"); at != std::string::npos;
       at = svg.find("<rect", at + 1))
    ++bars;
  EXPECT_EQ(bars, 3u);
  EXPECT_NE(svg.find("BLOCK=256 w1"), std::string::npos);

  // Again: the record chooses, nothing is timed.
  progress = Progress();
  tk_autotune_result again = {};
  again.struct_size = sizeof(again);
  ASSERT_EQ(tk_autotune(device, &r, &kernel, &again), TK_SUCCESS)
      << tk_last_error();
  EXPECT_EQ(again.from_cache, 1);
  EXPECT_EQ(again.best, result.best);
  EXPECT_TRUE(progress.stages.empty());
  expectCorrectOutput(kernel, candidates[again.best].grid);
  tk_kernel_release(kernel);
}

TEST_F(AutotuneTest, CandidatesDifferInTheirTileParametersAlone) {
  // One text, its tile size a parameter: each candidate names its own.
  std::string text =
      replaceAll(replaceAll(block1024, "tk.func @vector_add(",
                            "tk.func @vector_add<BLOCK: i32 = 64>("),
                 "1024", "${BLOCK}");
  ASSERT_NE(text.find("tensor<${BLOCK}xi32>"), std::string::npos);
  static const tk_constexpr_value sizes[] = {
      {"BLOCK", 2048}, {"BLOCK", 512}, {"BLOCK", 128}};
  candidates.clear();
  for (const tk_constexpr_value &size : sizes) {
    tk_autotune_candidate c =
        candidate(text, int(size.value), 4, "BLOCK from a constexpr");
    c.options.constexprs = &size;
    c.options.num_constexprs = 1;
    candidates.push_back(c);
  }
  tk_autotune_request r = request(uniqueKey("tile parameters"));
  tk_kernel kernel = nullptr;
  tk_autotune_result result = {};
  result.struct_size = sizeof(result);
  ASSERT_EQ(tk_autotune(device, &r, &kernel, &result), TK_SUCCESS)
      << tk_last_error();
  EXPECT_EQ(result.failed, 0);
  // Each candidate's grid is right for its own BLOCK only: the output is
  // whole because the winner was compiled with that BLOCK.
  expectCorrectOutput(kernel, candidates[result.best].grid);
  tk_kernel_release(kernel);
}

TEST_F(AutotuneTest, APlotThatCannotBeWrittenIsAnErrorNotAnExit) {
  // /dev/full: the open succeeds and the write fails. Once, the stream's
  // unchecked error ended the caller's process from inside tk.
  if (!llvm::sys::fs::exists("/dev/full"))
    GTEST_SKIP() << "no /dev/full";
  std::string key = uniqueKey("plot-to-dev-full");
  tk_autotune_request r = request(key);
  r.plot_path = "/dev/full";
  tk_kernel kernel = nullptr;
  tk_autotune_result result = {};
  result.struct_size = sizeof(result);
  EXPECT_EQ(tk_autotune(device, &r, &kernel, &result), TK_ERROR_IO);
  EXPECT_THAT(tk_last_error(),
              ::testing::HasSubstr("cannot write the plot /dev/full"));
  EXPECT_EQ(kernel, nullptr);
}

TEST_F(AutotuneTest, BuilderModulesAreRecordedByTheirContent) {
  // Builder modules (TK_SOURCE_MODULE) under the same key and labels, but
  // of different content: the record of the first set must not choose for
  // the second (a label says nothing of what a program built).
  mlir::DialectRegistry registry;
  tk::registerTkDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  auto wide = mlir::parseSourceString<mlir::ModuleOp>(block1024, &ctx);
  auto narrow = mlir::parseSourceString<mlir::ModuleOp>(block256, &ctx);
  ASSERT_TRUE(wide && narrow);
  mlir::ModuleOp wideOp = *wide, narrowOp = *narrow;
  auto moduleCandidate = [&](mlir::ModuleOp *module, int block,
                             const char *label) {
    tk_autotune_candidate c = candidate(block1024, block, 4, label);
    c.source = {TK_SOURCE_MODULE, module, 0, "vector_add"};
    return c;
  };
  std::string key = uniqueKey("builder modules");
  candidates = {moduleCandidate(&wideOp, 1024, "first"),
                moduleCandidate(&wideOp, 1024, "second")};
  tk_autotune_request r = request(key);
  tk_kernel kernel = nullptr;
  tk_autotune_result result = {};
  result.struct_size = sizeof(result);
  ASSERT_EQ(tk_autotune(device, &r, &kernel, &result), TK_SUCCESS)
      << tk_last_error();
  tk_kernel_release(kernel);
  // The same modules again: the record chooses.
  ASSERT_EQ(tk_autotune(device, &r, &kernel, &result), TK_SUCCESS);
  EXPECT_EQ(result.from_cache, 1);
  tk_kernel_release(kernel);
  // Other modules under the same labels: timed afresh.
  candidates = {moduleCandidate(&narrowOp, 256, "first"),
                moduleCandidate(&narrowOp, 256, "second")};
  r = request(key);
  ASSERT_EQ(tk_autotune(device, &r, &kernel, &result), TK_SUCCESS)
      << tk_last_error();
  EXPECT_EQ(result.from_cache, 0);
  expectCorrectOutput(kernel, candidates[result.best].grid);
  tk_kernel_release(kernel);
}

TEST_F(AutotuneTest, CorruptRecordIsRetuned) {
  std::string key = uniqueKey("corrupt");
  tk_autotune_request r = request(key);
  tk_kernel kernel = nullptr;
  tk_autotune_result result = {};
  result.struct_size = sizeof(result);
  ASSERT_EQ(tk_autotune(device, &r, &kernel, &result), TK_SUCCESS);
  tk_kernel_release(kernel);
  // Overwrite every record in the folder with junk.
  std::string dir = recordDirectory();
  if (dir.empty())
    GTEST_SKIP() << "TK_CACHE_DIR is not set (ctest sets it)";
  int corrupted = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    std::ofstream(entry.path()) << "tk-autotune 2\n99\nnot a label\n";
    ++corrupted;
  }
  ASSERT_GT(corrupted, 0);
  tk_autotune_result again = {};
  again.struct_size = sizeof(again);
  ASSERT_EQ(tk_autotune(device, &r, &kernel, &again), TK_SUCCESS)
      << tk_last_error();
  EXPECT_EQ(again.from_cache, 0);
  expectCorrectOutput(kernel, candidates[again.best].grid);
  tk_kernel_release(kernel);
}

TEST_F(AutotuneTest, FailingCandidatesAreSkippedAndAllFailingIsAnError) {
  std::string bad = "this is not a kernel";
  std::vector<tk_autotune_candidate> mixed = {candidate(bad, 1024, 4, "broken"),
                                              candidates[0]};
  tk_autotune_request r = request(uniqueKey("mixed"));
  r.candidates = mixed.data();
  r.num_candidates = mixed.size();
  tk_kernel kernel = nullptr;
  tk_autotune_result result = {};
  result.struct_size = sizeof(result);
  ASSERT_EQ(tk_autotune(device, &r, &kernel, &result), TK_SUCCESS)
      << tk_last_error();
  EXPECT_EQ(result.best, 1u);
  EXPECT_EQ(result.failed, 1);
  tk_kernel_release(kernel);

  r.num_candidates = 1; // only the broken one
  r.key = "all broken";
  EXPECT_EQ(tk_autotune(device, &r, &kernel, &result), TK_ERROR_INVALID_IR);
  EXPECT_NE(std::string(tk_last_error()).find("broken"), std::string::npos)
      << tk_last_error();
  EXPECT_EQ(kernel, nullptr);
}

TEST_F(AutotuneTest, BadRequestsAreRefused) {
  tk_kernel kernel = nullptr;
  tk_autotune_request r = request("bad");
  EXPECT_EQ(tk_autotune(device, nullptr, &kernel, nullptr),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tk_autotune(device, &r, nullptr, nullptr),
            TK_ERROR_INVALID_ARGUMENT);
  r.num_candidates = 0;
  EXPECT_EQ(tk_autotune(device, &r, &kernel, nullptr),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tk_last_error()).find("no candidates"),
            std::string::npos);
  // A count no request means: refused before anything is read or sized
  // from it.
  r = request("bad");
  r.num_candidates = size_t(1) << 60;
  EXPECT_EQ(tk_autotune(device, &r, &kernel, nullptr),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(tk_last_error(), "autotune: 1152921504606846976 candidates are "
                                "more than the 65536 one request may list");
  r = request("bad");
  r.args = nullptr;
  EXPECT_EQ(tk_autotune(device, &r, &kernel, nullptr),
            TK_ERROR_INVALID_ARGUMENT);
  r = request("");
  EXPECT_EQ(tk_autotune(device, &r, &kernel, nullptr),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tk_last_error()).find("key"), std::string::npos);
  r = request("bad");
  r.struct_size = 8;
  EXPECT_EQ(tk_autotune(device, &r, &kernel, nullptr),
            TK_ERROR_INVALID_ARGUMENT);
}

TEST_F(AutotuneTest, AsAnOptionOfKernelCreation) {
  // One source; the configurations vary num_warps and num_stages (all
  // take the same arguments, so none specialises n).
  std::string key = uniqueKey("creation n=100003");
  tk_autotune_config configs[] = {
      {4, 0, nullptr, 0, {(n + 1023) / 1024, 1, 1}, "w4", 0},
      {1, 0, nullptr, 0, {(n + 1023) / 1024, 1, 1}, "w1", 0},
      {8, 2, nullptr, 0, {(n + 1023) / 1024, 1, 1}, nullptr, 0},
  };
  tk_autotune_result result;
  tk_compile_options options;
  tk_autotune_options tuning = this->tuning(configs, 3, key, result, options);
  tuning.progress = recordProgress;
  tuning.progress_user = &progress;
  options.autotune = &tuning;
  tk_kernel_source source = block1024Source();
  tk_kernel kernel = nullptr;
  ASSERT_EQ(tk_kernel_create(device, &source, &options, &kernel), TK_SUCCESS)
      << tk_last_error();
  EXPECT_LT(result.best, 3u);
  EXPECT_EQ(result.from_cache, 0);
  EXPECT_GT(result.best_seconds, 0.0);
  EXPECT_EQ(result.failed, 0);
  EXPECT_EQ(progress.totals["time"], 3u);
  expectCorrectOutput(kernel, configs[result.best].grid);
  ASSERT_EQ(tk_kernel_release(kernel), TK_SUCCESS);

  // The same creation again reads the record.
  tk_autotune_result again = {};
  again.struct_size = sizeof(again);
  tuning.result = &again;
  ASSERT_EQ(tk_kernel_create(device, &source, &options, &kernel), TK_SUCCESS)
      << tk_last_error();
  EXPECT_EQ(again.from_cache, 1);
  EXPECT_EQ(again.best, result.best);
  ASSERT_EQ(tk_kernel_release(kernel), TK_SUCCESS);

  // Bad tuning options are refused with a reason.
  tuning.num_configs = 0;
  EXPECT_EQ(tk_kernel_create(device, &source, &options, &kernel),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tk_last_error()).find("no configurations"),
            std::string::npos)
      << tk_last_error();
  tuning.num_configs = 3;
  tuning.struct_size = 8;
  EXPECT_EQ(tk_kernel_create(device, &source, &options, &kernel),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kernel, nullptr);
}

/// tk_compile_options, tk_autotune_candidate and tk_autotune_config as tk.h
/// declared them before min_programs_per_cu: what a program built against
/// that header passes.
struct CompileOptionsBeforeHint {
  size_t struct_size;
  int32_t num_warps;
  int32_t num_stages;
  const tk_constexpr_value *constexprs;
  size_t num_constexprs;
  const tk_autotune_options *autotune;
};
struct CandidateBeforeHint {
  tk_kernel_source source;
  CompileOptionsBeforeHint options;
  tk_grid grid;
  const char *label;
};
struct ConfigBeforeHint {
  int32_t num_warps;
  int32_t num_stages;
  const tk_constexpr_value *constexprs;
  size_t num_constexprs;
  tk_grid grid;
  const char *label;
};

/// tk_compile_options and tk_autotune_candidate as tk.h declared them
/// before source_name (with candidate_size, which that header had).
struct CompileOptionsBeforeSourceName {
  size_t struct_size;
  int32_t num_warps;
  int32_t num_stages;
  const tk_constexpr_value *constexprs;
  size_t num_constexprs;
  const tk_autotune_options *autotune;
  int32_t min_programs_per_cu;
};
struct CandidateBeforeSourceName {
  tk_kernel_source source;
  CompileOptionsBeforeSourceName options;
  tk_grid grid;
  const char *label;
};

TEST_F(AutotuneTest, OccupancyHintIsAnOptionOfEachCandidate) {
  // The CPU has no occupancy to hint at and ignores the hint; a negative
  // one is refused, which fails that candidate alone.
  std::vector<tk_autotune_candidate> hinted = {candidates[0], candidates[0],
                                               candidates[0]};
  hinted[1].options.min_programs_per_cu = 2;
  hinted[1].label = "BLOCK=1024 w4 o2";
  hinted[2].options.min_programs_per_cu = -1;
  hinted[2].label = "BLOCK=1024 w4 o-1";
  tk_autotune_request r = request(uniqueKey("hinted"));
  r.candidates = hinted.data();
  r.num_candidates = hinted.size();
  tk_kernel kernel = nullptr;
  tk_autotune_result result = {};
  result.struct_size = sizeof(result);
  ASSERT_EQ(tk_autotune(device, &r, &kernel, &result), TK_SUCCESS)
      << tk_last_error();
  EXPECT_LT(result.best, 2u);
  EXPECT_EQ(result.failed, 1);
  expectCorrectOutput(kernel, hinted[result.best].grid);
  tk_kernel_release(kernel);

  r.candidates = &hinted[2];
  r.num_candidates = 1;
  EXPECT_EQ(tk_autotune(device, &r, &kernel, &result),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tk_last_error()).find("min_programs_per_cu (-1)"),
            std::string::npos)
      << tk_last_error();
}

TEST_F(AutotuneTest, ReadsCandidatesLaidOutBeforeTheOccupancyHint) {
  std::vector<CandidateBeforeHint> old;
  for (const tk_autotune_candidate &c : candidates) {
    CandidateBeforeHint o = {};
    o.source = c.source;
    o.options = {sizeof(CompileOptionsBeforeHint),
                 c.options.num_warps,
                 c.options.num_stages,
                 nullptr,
                 0,
                 nullptr};
    o.grid = c.grid;
    o.label = c.label;
    old.push_back(o);
  }
  tk_autotune_request r = request(uniqueKey("old layout"));
  r.candidates = reinterpret_cast<const tk_autotune_candidate *>(old.data());
  r.struct_size = offsetof(tk_autotune_request, candidate_size);
  tk_kernel kernel = nullptr;
  tk_autotune_result result = {};
  result.struct_size = sizeof(result);
  ASSERT_EQ(tk_autotune(device, &r, &kernel, &result), TK_SUCCESS)
      << tk_last_error();
  EXPECT_EQ(result.failed, 0);
  expectCorrectOutput(kernel, candidates[result.best].grid);
  tk_kernel_release(kernel);

  // Candidates laid out before source_name, their candidate_size saying so.
  std::vector<CandidateBeforeSourceName> beforeName;
  for (const tk_autotune_candidate &c : candidates) {
    CandidateBeforeSourceName o = {};
    o.source = c.source;
    o.options = {sizeof(CompileOptionsBeforeSourceName),
                 c.options.num_warps,
                 c.options.num_stages,
                 nullptr,
                 0,
                 nullptr,
                 0};
    o.grid = c.grid;
    o.label = c.label;
    beforeName.push_back(o);
  }
  r = request(uniqueKey("layout before source_name"));
  r.candidates =
      reinterpret_cast<const tk_autotune_candidate *>(beforeName.data());
  r.candidate_size = sizeof(CandidateBeforeSourceName);
  ASSERT_EQ(tk_autotune(device, &r, &kernel, &result), TK_SUCCESS)
      << tk_last_error();
  EXPECT_EQ(result.failed, 0);
  expectCorrectOutput(kernel, candidates[result.best].grid);
  tk_kernel_release(kernel);

  // A size this tk does not know is refused, naming the field.
  r = request("odd size");
  r.candidate_size = 24;
  EXPECT_EQ(tk_autotune(device, &r, &kernel, &result),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tk_last_error()).find("candidate_size is 24"),
            std::string::npos)
      << tk_last_error();
  r.candidate_size = sizeof(tk_autotune_candidate);
  ASSERT_EQ(tk_autotune(device, &r, &kernel, &result), TK_SUCCESS)
      << tk_last_error();
  tk_kernel_release(kernel);
}

TEST_F(AutotuneTest, ReadsConfigsLaidOutBeforeTheOccupancyHint) {
  ConfigBeforeHint configs[] = {
      {4, 0, nullptr, 0, {(n + 1023) / 1024, 1, 1}, "w4"},
      {1, 0, nullptr, 0, {(n + 1023) / 1024, 1, 1}, "w1"},
  };
  tk_autotune_result result;
  tk_compile_options options;
  tk_autotune_options tuning =
      this->tuning(configs, 2, uniqueKey("old configs"), result, options);
  tuning.struct_size = offsetof(tk_autotune_options, config_size);
  options.autotune = &tuning;
  tk_kernel_source source = block1024Source();
  tk_kernel kernel = nullptr;
  ASSERT_EQ(tk_kernel_create(device, &source, &options, &kernel), TK_SUCCESS)
      << tk_last_error();
  EXPECT_LT(result.best, 2u);
  EXPECT_EQ(result.failed, 0);
  expectCorrectOutput(kernel, configs[result.best].grid);
  ASSERT_EQ(tk_kernel_release(kernel), TK_SUCCESS);

  tuning.struct_size = sizeof(tuning);
  tuning.config_size = 40;
  EXPECT_EQ(tk_kernel_create(device, &source, &options, &kernel),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tk_last_error()).find("config_size is 40"),
            std::string::npos)
      << tk_last_error();
}

} // namespace

// Which candidates are timed again, interleaved, before the choice: those
// within 5% of the fastest, fastest first, at most four, never a failed
// one, and none when only one is that close.
TEST(AutotuneFinalists, CloseCandidatesAreTimedAgain) {
  using tk::runtime::autotuneFinalists;
  const std::vector<bool> allTimed(6, true);
  EXPECT_EQ(autotuneFinalists({2.0, 1.0, 1.04, 1.2, 1.049, 3.0}, allTimed),
            (std::vector<size_t>{1, 2, 4}));
  // A failed candidate's time (0) neither joins nor sets the bar.
  EXPECT_EQ(autotuneFinalists({0.0, 1.0, 1.02, 1.5, 1.3, 1.1},
                              {false, true, true, true, true, true}),
            (std::vector<size_t>{1, 2}));
  // Only the four fastest of many close ones.
  EXPECT_EQ(autotuneFinalists({1.01, 1.0, 1.03, 1.02, 1.04, 1.0}, allTimed),
            (std::vector<size_t>{1, 5, 0, 3}));
  // One clear winner, or a single candidate: nothing to time again.
  EXPECT_TRUE(
      autotuneFinalists({1.0, 1.2, 1.3, 1.5, 2.0, 1.06}, allTimed).empty());
  EXPECT_TRUE(autotuneFinalists({1.0}, {true}).empty());
  EXPECT_TRUE(autotuneFinalists({1.0, 1.0}, {true, false}).empty());
}
