//===- tk-conformance.cpp - run the conformance matrix --------------------===//
//
// Runs the suite of tests/conformance on one backend, a list, or every plugin
// found (`--backend all`), prints a progress line per cell on stderr and the
// matrix on stdout, and writes conformance.{json,md,html} into --out. Exits
// 1 when any cell FAILs (or, with --expect, when a column misses what it
// expects), 2 on a usage error.
//
// `--write-package FILE --target T...` compiles the selection's kernels into
// one package instead; `--package FILE` runs the cells with the kernels of
// such a package. Built as tk-conformance-run (TK_CONFORMANCE_RUN_ONLY), the
// tool has no compiler and links libtk_runtime.so: it runs from a package
// only, on a machine that carries no LLVM.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace tk::conformance;

#ifdef TK_CONFORMANCE_RUN_ONLY
static const char *const kTool = "tk-conformance-run";
#else
static const char *const kTool = "tk-conformance";
#endif

static void usage(std::FILE *out) {
  std::fprintf(
      out,
      "usage: %s [--backend NAMES|all] [--kernel NAMES] [--dtype NAMES]\n"
      "         [--out DIR] [--include-fixtures] [--list] [--guard-pages]\n"
      "         [--shard I/N [--shard-only NAMES]] [--num-stages N]\n"
      "         [--package FILE]\n"
#ifndef TK_CONFORMANCE_RUN_ONLY
      "         [--write-package FILE --target T[,T...]]\n"
#endif
      "  --package  take every kernel from FILE, as --write-package wrote\n"
      "             it%s\n"
#ifndef TK_CONFORMANCE_RUN_ONLY
      "  --write-package  compile the selected kernels into one package\n"
      "             (FILE, and its refusals in FILE.refused) and run none\n"
      "  --target   the package's targets, as tk-compile takes them\n"
      "             (cuda:sm_90a, vulkan:32, cpu:x86-64-v2, ...)\n"
#endif
      "  --backend  comma list of backend plugins, or 'all' (default: all)\n"
      "  --kernel   comma list of kernels to run (default: every kernel)\n"
      "  --dtype    comma list of dtypes (f32,f16,bf16,i8,i32,...)\n"
      "  --out      where conformance.{json,md,html} go (default: .)\n"
      "  --include-fixtures  also run the deliberately wrong kernels\n"
      "  --list     print the kernels and their dtypes, then exit\n"
      "  --guard-pages  (cpu only) every buffer ends against an inaccessible\n"
      "             page: a masked-off access outside a buffer faults\n"
      "  --num-stages N  compile the cells whose kernel sets no num_stages\n"
      "             with N (default: the backend's): their loops pipelined\n"
      "  --shard I/N  only every N-th cell of the selection, from cell I\n"
      "             (0-based): a stated part of a slow column\n"
      "  --shard-only  comma list of kernels (NAME* for a prefix) whose\n"
      "             cells --shard divides; every other cell runs\n"
      "  --expect   what every cell a column does not declare UNSUPPORTED\n"
      "             (nor lists as XFAIL) must be: 'pass' (a device runs\n"
      "             them), 'checked' (PASS, or NO_DEVICE: compiled and\n"
      "             validated), 'fail' (a corrupting fixture backend)\n"
      "Exit status: 0 when no cell FAILs (with --expect: when every column\n"
      "meets it), 1 otherwise, 2 on a usage error.\n",
      kTool,
#ifdef TK_CONFORMANCE_RUN_ONLY
      " (required: this build has no compiler)"
#else
      ""
#endif
  );
}

static std::vector<std::string> splitList(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',', -1, /*KeepEmpty=*/false);
  std::vector<std::string> out;
  for (llvm::StringRef part : parts)
    if (!part.trim().empty())
      out.push_back(part.trim().str());
  return out;
}

enum class Expectation { None, Pass, Checked, Fail };

/// Checks each backend's column against `expect`: the floor is derived from
/// the cells, never typed in (cells minus those the backend declares
/// UNSUPPORTED and the listed XFAILs), and the count of cells with the
/// expected status must reach it. Prints one line per column.
static bool meetsExpectation(const std::vector<CellResult> &results,
                             Expectation expect) {
  std::vector<std::string> backends;
  for (const CellResult &r : results)
    if (std::find(backends.begin(), backends.end(), r.backend) ==
        backends.end())
      backends.push_back(r.backend);
  bool met = true;
  for (const std::string &backend : backends) {
    size_t cells = 0, counts[5] = {0, 0, 0, 0, 0};
    for (const CellResult &r : results)
      if (r.backend == backend) {
        ++cells;
        ++counts[int(r.status)];
      }
    size_t unsupported = counts[int(CellStatus::Unsupported)];
    size_t xfail = counts[int(CellStatus::XFail)];
    size_t pass = counts[int(CellStatus::Pass)];
    size_t noDevice = counts[int(CellStatus::NoDevice)];
    size_t failed = counts[int(CellStatus::Fail)];
    size_t floor = cells - unsupported - xfail;
    size_t reached = expect == Expectation::Pass      ? pass
                     : expect == Expectation::Checked ? pass + noDevice
                                                      : failed;
    const char *what = expect == Expectation::Pass      ? "PASS"
                       : expect == Expectation::Checked ? "PASS or NO_DEVICE"
                                                        : "FAIL";
    bool ok = reached == floor && (expect != Expectation::Fail || pass == 0);
    std::printf("%s: %zu of %zu cells %s; floor %zu (%zu cells, %zu "
                "UNSUPPORTED by declaration, %zu XFAIL): %s\n",
                backend.c_str(), reached, cells, what, floor, cells,
                unsupported, xfail, ok ? "met" : "NOT MET");
    met &= ok;
  }
  return met;
}

static bool writeFile(const std::string &dir, const char *name,
                      const std::string &text) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  std::error_code error;
  llvm::raw_fd_ostream out(path, error);
  if (error) {
    std::fprintf(stderr, "%s: cannot write %s: %s\n", kTool, path.c_str(),
                 error.message().c_str());
    return false;
  }
  out << text;
  return true;
}

int main(int argc, char **argv) {
  RunOptions options;
  std::string outDir = ".";
  bool list = false;
  Expectation expect = Expectation::None;
  std::string package, writePackage;
  std::vector<std::string> targets;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (arg == flag && i + 1 < argc)
        return argv[++i];
      if (arg.starts_with(std::string(flag) + "="))
        return argv[i] + std::strlen(flag) + 1;
      return nullptr;
    };
    if (const char *v = value("--backend"))
      options.backends = splitList(v);
    else if (const char *v = value("--kernel"))
      options.kernels = splitList(v);
    else if (const char *v = value("--dtype"))
      options.dtypes = splitList(v);
    else if (const char *v = value("--shard-only"))
      options.shardOnly = splitList(v);
    else if (const char *v = value("--out"))
      outDir = v;
    else if (const char *v = value("--package"))
      package = v;
#ifndef TK_CONFORMANCE_RUN_ONLY
    else if (const char *v = value("--write-package"))
      writePackage = v;
    else if (const char *v = value("--target"))
      for (std::string &target : splitList(v))
        targets.push_back(std::move(target));
#endif
    else if (const char *v = value("--expect")) {
      llvm::StringRef name = v;
      expect = name == "pass"      ? Expectation::Pass
               : name == "checked" ? Expectation::Checked
               : name == "fail"    ? Expectation::Fail
                                   : Expectation::None;
      if (expect == Expectation::None) {
        std::fprintf(stderr,
                     "%s: --expect takes pass, checked or fail, "
                     "not '%s'\n",
                     kTool, v);
        return 2;
      }
    } else if (const char *v = value("--shard")) {
      auto [index, count] = llvm::StringRef(v).split('/');
      if (index.getAsInteger(10, options.shardIndex) ||
          count.getAsInteger(10, options.shardCount) ||
          options.shardCount == 0 || options.shardIndex >= options.shardCount) {
        std::fprintf(stderr,
                     "%s: --shard takes I/N with 0 <= I < N, "
                     "not '%s'\n",
                     kTool, v);
        return 2;
      }
    } else if (const char *v = value("--num-stages")) {
      if (llvm::StringRef(v).getAsInteger(10, options.numStages) ||
          options.numStages < 1) {
        std::fprintf(stderr,
                     "%s: --num-stages takes a positive "
                     "integer, not '%s'\n",
                     kTool, v);
        return 2;
      }
    } else if (arg == "--include-fixtures")
      options.includeFixtures = true;
    else if (arg == "--list")
      list = true;
    else if (arg == "--guard-pages")
      options.guardPages = true;
    else if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "%s: unknown argument '%s'\n", kTool, argv[i]);
      usage(stderr);
      return 2;
    }
  }

  // Guard pages wrap host memory, which only a host-memory backend runs on.
  if (options.guardPages &&
      (options.backends.size() != 1 || options.backends[0] != "cpu")) {
    std::fprintf(stderr,
                 "%s: --guard-pages needs --backend cpu "
                 "(the buffers are host memory)\n",
                 kTool);
    return 2;
  }
  std::vector<ConformanceCase> cases = getCases(options.includeFixtures);
  if (list) {
    for (const ConformanceCase &c : cases) {
      std::printf("%-20s", c.name.c_str());
      for (DType d : c.dtypes)
        std::printf(" %s", dtypeName(d).str().c_str());
      std::printf("  (%zu shapes) %s\n", c.shapes.size(), c.summary.c_str());
    }
    return 0;
  }
  // A filter naming nothing known is a typo, not an empty success.
  for (const std::string &name : options.kernels) {
    bool known = false;
    for (const ConformanceCase &c : cases)
      known |= c.name == name;
    if (!known) {
      std::fprintf(stderr,
                   "%s: no kernel named '%s' (--list shows them;"
                   " fixtures need --include-fixtures)\n",
                   kTool, name.c_str());
      return 2;
    }
  }
  // --shard-only names kernels as --kernel does; a pattern must match one.
  if (!options.shardOnly.empty() && options.shardCount <= 1) {
    std::fprintf(stderr, "%s: --shard-only goes with --shard I/N\n", kTool);
    return 2;
  }
  for (const std::string &pattern : options.shardOnly)
    if (llvm::none_of(cases, [&](const ConformanceCase &c) {
          return matchesKernelPattern(pattern, c.name);
        })) {
      std::fprintf(stderr, "%s: --shard-only: no kernel named '%s'\n", kTool,
                   pattern.c_str());
      return 2;
    }
  for (const std::string &name : options.dtypes)
    if (!parseDType(name)) {
      std::fprintf(stderr, "%s: unknown dtype '%s'\n", kTool, name.c_str());
      return 2;
    }
#ifndef TK_CONFORMANCE_RUN_ONLY
  if (!writePackage.empty()) {
    if (!package.empty()) {
      std::fprintf(stderr,
                   "%s: --write-package and --package exclude each "
                   "other\n",
                   kTool);
      return 2;
    }
    std::string error;
    if (!writeCellPackage(options, targets, writePackage, error)) {
      std::fprintf(stderr, "%s: %s\n", kTool, error.c_str());
      return 1;
    }
    return 0;
  }
  if (!targets.empty()) {
    std::fprintf(stderr, "%s: --target goes with --write-package\n", kTool);
    return 2;
  }
#endif
  if (!package.empty()) {
    std::string error;
    if (!makePackageSupplier(package, options.supplier, error)) {
      std::fprintf(stderr, "%s: %s\n", kTool, error.c_str());
      return 2;
    }
  } else {
#ifdef TK_CONFORMANCE_RUN_ONLY
    std::fprintf(stderr,
                 "%s: --package is required: this build has no compiler "
                 "(tk-conformance --write-package makes one)\n",
                 kTool);
    return 2;
#else
    options.supplier = makeCompilingSupplier();
#endif
  }
  if (options.backends.empty() ||
      options.backends == std::vector<std::string>{"all"}) {
    options.backends = findBackends();
    if (options.backends.empty()) {
      std::fprintf(stderr,
                   "%s: no backend plugin found "
                   "(set TK_BACKEND_PATH)\n",
                   kTool);
      return 2;
    }
  }

  options.progress = [](size_t index, size_t total, const CellResult &r) {
    int width = int(std::to_string(total).size());
    std::fprintf(stderr, "[%*zu/%zu] %s %s %s %s ... %s", width, index, total,
                 r.kernel.c_str(), r.dtype.c_str(), r.shape.c_str(),
                 r.backend.c_str(), statusName(r.status));
    if (r.status == CellStatus::Fail)
      std::fprintf(stderr, "\n    %s", r.message.c_str());
    std::fprintf(stderr, "\n");
  };
  std::vector<CellResult> results = runSuite(options);

  std::printf("%s", formatTable(results).c_str());
  size_t failures = 0;
  for (const CellResult &r : results)
    failures += r.status == CellStatus::Fail;
  std::printf("\n%zu cells, %zu FAIL\n", results.size(), failures);
  if (options.shardCount > 1)
    std::printf("shard %zu/%zu: every %zu-th cell of the selection, from "
                "cell %zu\n",
                options.shardIndex, options.shardCount, options.shardCount,
                options.shardIndex);
  // How close the passing cells came to their tolerances: a check that
  // cannot fail would use none of it, one set too tight nearly all.
  const CellResult *tightest = nullptr;
  for (const CellResult &r : results)
    if (r.status == CellStatus::Pass &&
        (!tightest || r.toleranceUsed > tightest->toleranceUsed))
      tightest = &r;
  if (tightest && tightest->toleranceUsed > 0)
    std::printf("largest share of its tolerance a passing cell used: %.2f "
                "(%s %s %s %s)\n",
                tightest->toleranceUsed, tightest->kernel.c_str(),
                tightest->dtype.c_str(), tightest->shape.c_str(),
                tightest->backend.c_str());

  if (std::error_code error = llvm::sys::fs::create_directories(outDir)) {
    std::fprintf(stderr, "%s: cannot create %s: %s\n", kTool, outDir.c_str(),
                 error.message().c_str());
    return 1;
  }
  bool written = writeFile(outDir, "conformance.json", formatJson(results)) &&
                 writeFile(outDir, "conformance.md", formatMarkdown(results)) &&
                 writeFile(outDir, "conformance.html", formatHtml(results));
  if (!written)
    return 1;
  if (expect != Expectation::None)
    return meetsExpectation(results, expect) ? 0 : 1;
  return failures ? 1 : 0;
}
