//===- HarnessCompile.cpp - the cells' kernels built and compiled ---------===//
//
// The half of the harness that needs the compiler, which tk-conformance links
// and tk-conformance-run does not: each cell's kernel built by its case (or
// its TTIR read), compiled by the backend's plugin and loaded on the device,
// or, without a device, compiled and checked by the plugin's `validate`
// (NO_DEVICE); and the package of every cell's kernel that the runner without
// a compiler loads.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"
#include "cases/Cases.h"

#include "tk/ir/Dialect.h"
#include "tk/runtime/Device.h"
#include "tk/runtime/Kernel.h"
#include "tk/runtime/KernelCache.h"
#include "tk/runtime/KernelCompile.h"
#include "tk/runtime/KernelSource.h"
#include "tk/runtime/PackageBuilder.h"
#include "tk/runtime/PluginLoader.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

using namespace tk::conformance;
namespace rt = tk::runtime;

mlir::Type tk::conformance::toMLIR(mlir::MLIRContext *ctx, DType dtype) {
  mlir::Builder b(ctx);
  switch (dtype) {
  case DType::I1:
    return b.getI1Type();
  case DType::I8:
    return b.getI8Type();
  case DType::I16:
    return b.getI16Type();
  case DType::I32:
    return b.getI32Type();
  case DType::I64:
    return b.getI64Type();
  case DType::F16:
    return b.getF16Type();
  case DType::BF16:
    return b.getBF16Type();
  case DType::F32:
    return b.getF32Type();
  case DType::F64:
    return b.getF64Type();
  case DType::F8E4M3:
    return b.getType<mlir::Float8E4M3FNType>();
  case DType::F8E5M2:
    return b.getType<mlir::Float8E5M2Type>();
  }
  return {};
}

namespace {

/// The source of one cell's kernel and what it points into: a builder
/// module, or TTIR text.
struct CellSource {
  KernelModule module = mlir::failure();
  mlir::FailureOr<std::string> ttirText = mlir::failure();
  mlir::ModuleOp op;
  tk_kernel_source source = {};
};

/// Builds (or reads) the kernel of a cell into `out`; the error otherwise.
std::string makeSource(mlir::MLIRContext &context, const ConformanceCase &kase,
                       DType dtype, const Shape &shape, CellSource &out) {
  std::string error;
  if (kase.ttir) {
    out.ttirText = kase.ttir(&error);
    if (mlir::failed(out.ttirText))
      return "the TTIR cannot be read: " + error;
    out.source = {TK_SOURCE_TTIR, out.ttirText->data(), out.ttirText->size(),
                  nullptr};
    return "";
  }
  out.module = kase.build(&context, dtype, shape, &error);
  if (mlir::failed(out.module))
    return "the builder refused the kernel: " + error;
  out.op = out.module->get();
  out.source = {TK_SOURCE_MODULE, &out.op, 0, nullptr};
  return "";
}

/// The settings as tk_compile_options, borrowing `constexprs`' storage.
tk_compile_options toOptions(const CompileSettings &settings,
                             std::vector<tk_constexpr_value> &constexprs) {
  constexprs.clear();
  for (const auto &[name, value] : settings.constexprs)
    constexprs.push_back({name.c_str(), value});
  tk_compile_options options = {};
  options.struct_size = sizeof(options);
  options.num_warps = settings.numWarps;
  options.num_stages = settings.numStages;
  options.min_programs_per_cu = settings.minProgramsPerCu;
  options.constexprs = constexprs.data();
  options.num_constexprs = constexprs.size();
  return options;
}

mlir::DialectRegistry makeRegistry() {
  mlir::DialectRegistry registry;
  tk::registerTkDialects(registry);
  return registry;
}

/// The supplier of tk-conformance: kernels compiled through the plugin, as
/// tk_kernel_create does, with a cache of its own.
class CompilingSupplier {
public:
  CompilingSupplier() : context(makeRegistry()) {
    context.loadAllAvailableDialects();
    // Kernels are built and compiled one at a time; MLIR's thread pool only
    // costs start-up time on a shared machine.
    context.disableMultithreading();
  }

  SuppliedKernel supply(const KernelRequest &request) {
    SuppliedKernel out;
    CellSource cell;
    out.error =
        makeSource(context, request.kase, request.dtype, request.shape, cell);
    if (!out.error.empty())
      return out;
    if (!request.device) {
      out.error = compileAndValidate(request, cell.source, out.code);
      out.validated = out.error.empty();
      return out;
    }
    std::vector<tk_constexpr_value> constexprs;
    tk_compile_options options = toOptions(request.settings, constexprs);
    rt::KernelOptions resolved;
    rt::Status status = rt::readKernelOptions(&options, resolved);
    if (status.isOk())
      status = rt::createKernelFromSource(*request.device, cache, cell.source,
                                          resolved, &out.kernel);
    if (!status.isOk()) {
      out.kernel = nullptr;
      out.code = status.code();
      out.error = std::string(rt::getStatusName(status.code())) + ": " +
                  status.message();
    }
    return out;
  }

private:
  /// The NO_DEVICE path: the plugin must still compile the kernel, and its
  /// binary must pass the plugin's own `validate`.
  std::string compileAndValidate(const KernelRequest &request,
                                 const tk_kernel_source &source,
                                 tk_status &code) {
    const CompileSettings &settings = request.settings;
    std::vector<tk_constexpr_value> constexprs;
    (void)toOptions(settings, constexprs);
    rt::PreparedKernel prepared;
    // The bounds-checked mode compiles here as tk_kernel_create would.
    rt::Status status =
        rt::prepareKernel(source, constexprs, prepared, rt::kDefaultSourceName,
                          rt::isBoundsCheckingRequested());
    if (!status.isOk()) {
      code = status.code();
      return status.message();
    }
    rt::CompileSettings compile{settings.numWarps, settings.numStages,
                                settings.minProgramsPerCu, ""};
    // As tk_kernel_create does on a device: TK_DUMP_IR names where the
    // plugin writes each stage, a folder per compile.
    rt::CacheKey key = rt::CacheKeyBuilder()
                           .add(prepared.bytecode)
                           .add(int64_t(settings.numWarps))
                           .add(int64_t(settings.numStages))
                           .finish();
    rt::CompiledBinary binary;
    status = rt::getDumpDir(prepared.entry, key, compile.dumpDir);
    if (status.isOk())
      status =
          rt::compileWithPlugin(request.plugin, 0, prepared, compile, binary);
    if (!status.isOk()) {
      code = status.code();
      return status.message();
    }
    const tk_backend_interface &api = request.plugin.getApi();
    if (!api.validate)
      return request.backend +
             " has no validate entry point: the binary is unchecked";
    if (tk_status checked =
            api.validate(binary.data.data(), binary.data.size()))
      return request.plugin.makeError(checked, "validate").message();
    return "";
  }

  mlir::MLIRContext context;
  rt::KernelCache cache;
};

/// Writes `text` to `path` through a file beside it renamed over it: a
/// reader sees the old file or the new one, never a part.
bool writeWhole(const std::string &path, const std::string &text,
                std::string &error) {
  std::string partial = path + ".partial";
  {
    std::error_code code;
    llvm::raw_fd_ostream out(partial, code);
    if (code) {
      error = "cannot write " + partial + ": " + code.message();
      return false;
    }
    out << text;
    out.close();
    if (out.has_error()) {
      error = "cannot write " + partial + ": " + out.error().message();
      (void)llvm::sys::fs::remove(partial);
      return false;
    }
  }
  if (std::error_code code = llvm::sys::fs::rename(partial, path)) {
    error = "cannot rename " + partial + " to " + path + ": " + code.message();
    (void)llvm::sys::fs::remove(partial);
    return false;
  }
  return true;
}

} // namespace

KernelSupplier tk::conformance::makeCompilingSupplier() {
  auto supplier = std::make_shared<CompilingSupplier>();
  return [supplier](const KernelRequest &request) {
    return supplier->supply(request);
  };
}

bool tk::conformance::writeCellPackage(const RunOptions &options,
                                       const std::vector<std::string> &targets,
                                       const std::string &path,
                                       std::string &error) {
  std::vector<rt::PackageTarget> parsed;
  for (const std::string &spec : targets) {
    rt::PackageTarget target;
    rt::Status status = rt::PackageTarget::parse(spec, target);
    if (!status.isOk()) {
      error = "--target '" + spec + "': " + status.message();
      return false;
    }
    parsed.push_back(target);
  }
  if (parsed.empty()) {
    error = "a package needs at least one --target";
    return false;
  }

  std::vector<ConformanceCase> cases = getCases(options.includeFixtures);
  // One kernel per key, in the suite's order.
  std::vector<PlannedCell> kernels;
  std::set<std::string> seen;
  for (const PlannedCell &cell : planCells(cases, options))
    if (seen.insert(kernelKey(*cell.kase, cell.dtype, *cell.shape)).second)
      kernels.push_back(cell);

  mlir::MLIRContext context(makeRegistry());
  context.loadAllAvailableDialects();
  context.disableMultithreading();
  rt::PackageBuilder builder;
  // entry, status code, message: what the runner reports for the cells of
  // a kernel the package lacks.
  std::string refused;
  std::map<std::string, std::string> entries; // entry -> key
  size_t index = 0, refusals = 0, unsupported = 0;
  for (const PlannedCell &cell : kernels) {
    const ConformanceCase &kase = *cell.kase;
    std::string key = kernelKey(kase, cell.dtype, *cell.shape);
    std::string entry = packageEntry(key);
    std::fprintf(stderr, "[%zu/%zu] %s as %s ...", ++index, kernels.size(),
                 key.c_str(), entry.c_str());
    auto [clash, fresh] = entries.emplace(entry, key);
    if (!fresh) {
      error = "the kernels '" + clash->second + "' and '" + key +
              "' would both be '" + entry + "' in the package";
      std::fprintf(stderr, "\n");
      return false;
    }
    CompileSettings settings =
        cellSettings(kase, cell.dtype, *cell.shape, options.numStages);
    std::vector<tk_constexpr_value> constexprs;
    tk_compile_options compileOptions = toOptions(settings, constexprs);
    CellSource source;
    std::string message =
        makeSource(context, kase, cell.dtype, *cell.shape, source);
    tk_status code = TK_ERROR_INVALID_IR;
    if (message.empty()) {
      rt::Status added =
          builder.add(parsed, source.source, &compileOptions, nullptr, entry);
      code = added.code();
      message = added.message();
    }
    if (code == TK_SUCCESS) {
      std::fprintf(stderr, " ok\n");
      continue;
    }
    std::fprintf(stderr, " %s\n    %s\n", rt::getStatusName(code),
                 message.c_str());
    unsupported += code == TK_ERROR_UNSUPPORTED;
    ++refusals;
    for (char &c : message)
      if (c == '\n' || c == '\t')
        c = ' ';
    refused += entry + "\t" + std::to_string(int(code)) + "\t" + message + "\n";
  }

  std::string bytes;
  if (!tk::package::write(builder.getPackage(), bytes, error))
    return false;
  if (!writeWhole(path + ".refused", refused, error) ||
      !writeWhole(path, bytes, error))
    return false;
  std::fprintf(stderr,
               "wrote %s: %zu kernels for %zu targets (%zu bytes); %zu "
               "refused by a target, %zu of them as unsupported "
               "(%s.refused)\n",
               path.c_str(), builder.getPackage().kernels.size(), parsed.size(),
               bytes.size(), refusals, unsupported, path.c_str());
  return true;
}
