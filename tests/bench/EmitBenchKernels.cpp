//===- EmitBenchKernels.cpp - the bench's kernels as files for Python -----===//
//
// `tk-bench-kernels --emit DIR` writes every candidate of every figure of
// BenchKernels.h as `.tk` text into DIR, with DIR/manifest.json naming each
// file, its entry and compile options, so that
// backends/cuda/test/bench/cuda_bench.py (which drives tk through
// capi/python/tk.py) times exactly the kernels the conformance suite checks.
// Each candidate's `package_entry` is its name in the package
// `--package FILE --target T[,T...]` writes (tk-compile's targets): every
// candidate compiled ahead of time, which cuda_bench.py --package times
// through libtk_runtime.so on a machine without the compiler. `--list`
// prints the figures and candidates. `--matmul f16 "128x128x32 w8 s1"
// FILE` writes the seed matmul at a configuration no figure lists, and
// prints the tk-compile flags it takes.
//
//===----------------------------------------------------------------------===//

#include "BenchKernels.h"

#include "tk/ir/Dialect.h"
#include "tk/runtime/PackageBuilder.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <memory>
#include <string>

using namespace tk::bench;

namespace {

/// Writes `text` to `path` through a temporary file renamed into place, so
/// that a failed write leaves nothing half-written.
bool writeFile(const std::string &path, const std::string &text) {
  std::string temporary = path + ".tmp";
  {
    std::error_code error;
    llvm::raw_fd_ostream out(temporary, error);
    if (!error) {
      out << text;
      out.close();
      if (out.has_error())
        error = out.error();
    }
    if (error) {
      std::fprintf(stderr, "tk-bench-kernels: cannot write %s: %s\n",
                   temporary.c_str(), error.message().c_str());
      out.clear_error();
      llvm::sys::fs::remove(temporary);
      return false;
    }
  }
  if (std::error_code error = llvm::sys::fs::rename(temporary, path)) {
    std::fprintf(stderr, "tk-bench-kernels: cannot write %s: %s\n",
                 path.c_str(), error.message().c_str());
    return false;
  }
  return true;
}

/// A context with tk's dialects loaded, for the candidates' builders.
std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  tk::registerTkDialects(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

/// The candidate's kernel in a package of the bench's kernels.
std::string packageEntry(size_t figure, size_t candidate) {
  return "figure" + std::to_string(figure) + "_candidate" +
         std::to_string(candidate);
}

/// Every candidate compiled for `targets` into the package `path`.
int writePackage(const std::string &path, const std::string &targetList) {
  std::vector<tk::runtime::PackageTarget> targets;
  llvm::SmallVector<llvm::StringRef> specs;
  llvm::StringRef(targetList).split(specs, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef spec : specs) {
    tk::runtime::PackageTarget target;
    tk::runtime::Status status =
        tk::runtime::PackageTarget::parse(spec.str(), target);
    if (!status.isOk()) {
      std::fprintf(stderr, "tk-bench-kernels: --target '%s': %s\n",
                   spec.str().c_str(), status.message().c_str());
      return 2;
    }
    targets.push_back(target);
  }
  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  mlir::MLIRContext &ctx = *context;
  tk::runtime::PackageBuilder builder;
  std::vector<BenchFigure> all = getBenchFigures();
  for (size_t f = 0; f < all.size(); ++f) {
    const BenchFigure &figure = all[f];
    for (size_t c = 0; c < figure.candidates.size(); ++c) {
      const BenchCandidate &candidate = figure.candidates[c];
      std::fprintf(stderr, "%s [%s] ...", figure.name.c_str(),
                   candidate.label.c_str());
      tk::seeds::KernelModule module = candidate.build(&ctx);
      if (mlir::failed(module)) {
        std::fprintf(stderr, " the builder refused it\n");
        return 1;
      }
      mlir::ModuleOp op = module->get();
      tk_kernel_source source = {TK_SOURCE_MODULE, &op, 0, nullptr};
      std::vector<tk_constexpr_value> constexprs;
      for (const auto &[name, value] : candidate.constexprs)
        constexprs.push_back({name.c_str(), value});
      tk_compile_options options = {};
      options.struct_size = sizeof(options);
      options.num_warps = candidate.numWarps;
      options.num_stages = candidate.numStages;
      options.min_programs_per_cu = candidate.minProgramsPerCu;
      options.constexprs = constexprs.data();
      options.num_constexprs = constexprs.size();
      tk::runtime::Status added =
          builder.add(targets, source, &options, nullptr, packageEntry(f, c));
      if (!added.isOk()) {
        std::fprintf(stderr, " %s\n", added.message().c_str());
        return 1;
      }
      std::fprintf(stderr, " ok\n");
    }
  }
  std::string bytes, error;
  if (!tk::package::write(builder.getPackage(), bytes, error)) {
    std::fprintf(stderr, "tk-bench-kernels: %s\n", error.c_str());
    return 1;
  }
  return writeFile(path, bytes) ? 0 : 1;
}

int emit(const std::string &dir) {
  if (std::error_code error = llvm::sys::fs::create_directories(dir)) {
    std::fprintf(stderr, "tk-bench-kernels: cannot create %s: %s\n",
                 dir.c_str(), error.message().c_str());
    return 1;
  }
  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  mlir::MLIRContext &ctx = *context;
  llvm::json::Array figures;
  std::vector<BenchFigure> all = getBenchFigures();
  for (size_t f = 0; f < all.size(); ++f) {
    const BenchFigure &figure = all[f];
    llvm::json::Array candidates;
    for (size_t c = 0; c < figure.candidates.size(); ++c) {
      const BenchCandidate &candidate = figure.candidates[c];
      tk::seeds::KernelModule module = candidate.build(&ctx);
      if (mlir::failed(module)) {
        std::fprintf(stderr, "tk-bench-kernels: the builder refused %s %s\n",
                     figure.name.c_str(), candidate.label.c_str());
        return 1;
      }
      std::string text, entry;
      llvm::raw_string_ostream os(text);
      (*module)->print(os);
      (*module)->walk(
          [&](tk::FuncOp func) { entry = func.getSymName().str(); });
      std::string file = "figure" + std::to_string(f) + "-candidate" +
                         std::to_string(c) + ".tk";
      if (!writeFile(dir + "/" + file, text))
        return 1;
      llvm::json::Object constexprs;
      for (const auto &[name, value] : candidate.constexprs)
        constexprs[name] = value;
      candidates.push_back(llvm::json::Object{
          {"label", candidate.label},
          {"file", file},
          {"entry", entry},
          {"package_entry", packageEntry(f, c)},
          {"num_warps", candidate.numWarps},
          {"num_stages", candidate.numStages},
          {"min_programs_per_cu", candidate.minProgramsPerCu},
          {"constexprs", std::move(constexprs)},
          {"block", llvm::json::Array{candidate.blockM, candidate.blockN}}});
    }
    llvm::json::Array shape;
    for (int64_t d : figure.shape)
      shape.push_back(d);
    figures.push_back(
        llvm::json::Object{{"name", figure.name},
                           {"kind", kindName(figure.kind)},
                           {"dtype", figure.dtype},
                           {"shape", std::move(shape)},
                           {"candidates", std::move(candidates)}});
  }
  std::string manifest;
  llvm::raw_string_ostream os(manifest);
  os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                   {"figures", std::move(figures)}}));
  return writeFile(dir + "/manifest.json", manifest + "\n") ? 0 : 1;
}

/// The seed matmul of `label` on `dtype` operands (getMatmulCandidate) as
/// `.tk` text in `path`, its constexprs on stdout as tk-compile's flags.
int emitMatmul(const std::string &dtype, const std::string &label,
               const std::string &path) {
  BenchCandidate candidate = getMatmulCandidate(dtype, label);
  if (!candidate.build) {
    std::fprintf(
        stderr,
        "tk-bench-kernels: --matmul: '%s' on '%s' is no matmul "
        "configuration (\"BMxBNxBK wW sS[ peel][ div16]\", powers of two, "
        "on f16 or bf16)\n",
        label.c_str(), dtype.c_str());
    return 2;
  }
  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  mlir::MLIRContext &ctx = *context;
  tk::seeds::KernelModule module = candidate.build(&ctx);
  if (mlir::failed(module)) {
    std::fprintf(stderr, "tk-bench-kernels: the builder refused %s\n",
                 label.c_str());
    return 1;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  (*module)->print(os);
  if (!writeFile(path, text))
    return 1;
  for (const auto &[name, value] : candidate.constexprs)
    std::printf("--constexpr %s=%lld ", name.c_str(), (long long)value);
  std::printf("--num-warps %d --num-stages %d\n", candidate.numWarps,
              candidate.numStages);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string arg = argc > 1 ? argv[1] : "";
  if (arg == "--emit" && argc == 3)
    return emit(argv[2]);
  if (arg == "--package" && argc == 5 && llvm::StringRef(argv[3]) == "--target")
    return writePackage(argv[2], argv[4]);
  if (arg == "--matmul" && argc == 5)
    return emitMatmul(argv[2], argv[3], argv[4]);
  if (arg == "--list" && argc == 2) {
    for (const BenchFigure &figure : getBenchFigures()) {
      std::printf("%s (%s):", figure.name.c_str(), kindName(figure.kind));
      for (const BenchCandidate &candidate : figure.candidates)
        std::printf(" [%s]", candidate.label.c_str());
      std::printf("\n");
    }
    return 0;
  }
  std::fprintf(arg == "-h" || arg == "--help" ? stdout : stderr,
               "usage: tk-bench-kernels --emit DIR | --list |\n"
               "                        --package FILE --target T[,T...] |\n"
               "                        --matmul DTYPE LABEL FILE\n");
  return arg == "-h" || arg == "--help" ? 0 : 2;
}
