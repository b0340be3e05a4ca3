//===- tk-compile.cpp - compile a .tk file with any backend -----*- C++ -*-===//
//
// Runs a backend's compile pipeline on a tk file without a GPU or the
// runtime, for any target the backend knows:
//
//   tk-compile FILE.tk --backend B [--arch A] [--entry NAME]
//              [--num-warps N] [--num-stages S] [--min-programs-per-cu N]
//              [--emit binary|asm|llvm|spirv|package] [--dump-dir DIR] [-o OUT]
//              [--from tk|ttir] [--triton-metadata FILE.json]
//              [--constexpr NAME=VALUE]...
//
// --arch defaults to each backend's stated target (the help lists them),
// --entry to the file's kernel when it holds one; an entry the file does not
// hold is refused with the kernels it does hold.
//
// `--constexpr` folds a scalar argument into the kernel as a constant, as
// tk_compile_options.constexprs does at tk_kernel_create (the benchmark's
// strides of 1, say), so that the code shown is the code a launch runs.
//
// `--from ttir` reads Triton's TTIR (a `.ttir` file) through tk's importer;
// the entry is then optional (the kernel in the file), and num_warps and
// num_stages default to Triton's, from the JSON Triton wrote beside the file
// (`X.json` for `X.ttir`) or --triton-metadata.
//
// Text (asm, llvm) goes to stdout without -o; a binary needs -o. A line on
// the kernel's resources goes to stderr. The backends are those built with
// tk_add_compile_tool (CompileTools.def, generated).
//
//===----------------------------------------------------------------------===//

#include "Files.h"
#include "PackageMode.h"
#include "common/CompileTool.h"

#include "tk/core/Specialize.h"
#include "tk/core/TileParameters.h"
#include "tk/ir/Dialect.h"
#include "tk/ttir/Import.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#define TK_COMPILE_TOOL(backend)                                               \
  namespace tk::backend {                                                      \
  extern const char *const kCompileToolArchs;                                  \
  extern const char *const kCompileToolDefaultArch;                            \
  tk_status runCompileTool(const tk::tool::CompileRequest &,                   \
                           tk::tool::CompileResult &, std::string &);          \
  }
#include "CompileTools.def"
#undef TK_COMPILE_TOOL

namespace {

const tk::tool::BackendCompileTool kBackends[] = {
#define TK_COMPILE_TOOL(backend)                                               \
  {#backend, tk::backend::kCompileToolArchs,                                   \
   tk::backend::kCompileToolDefaultArch, &tk::backend::runCompileTool},
#include "CompileTools.def"
#undef TK_COMPILE_TOOL
};

std::string usage() {
  std::string text =
      "usage: tk-compile FILE.tk --backend B [--arch A] [--entry NAME]\n"
      "                  [--num-warps N] [--num-stages S] "
      "[--min-programs-per-cu N]\n"
      "                  [--emit binary|asm|llvm|spirv|package] [--dump-dir "
      "DIR] [-o OUT]\n"
      "                  [--from tk|ttir] [--triton-metadata FILE.json]\n"
      "                  [--constexpr NAME=VALUE]...\n"
      "--entry defaults to the file's kernel when it holds one.\n"
      "tk-compile --package OUT.tkpkg --target B[:ARCH]... FILE[:ENTRY]... "
      "builds a package\n(tk-compile --package --help).\n"
      "backends and their targets (--arch; the default first):\n";
  for (const tk::tool::BackendCompileTool &backend : kBackends)
    text += std::string("  ") + backend.name + ": " + backend.defaultArch +
            "; " + backend.archs + "\n";
  return text;
}

int usageError(const std::string &message) {
  std::cerr << "tk-compile: " << message << "\n" << usage();
  return 2;
}

bool parseCount(const std::string &text, int &out) {
  char *end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 1 || value > 1024)
    return false;
  out = static_cast<int>(value);
  return true;
}

/// A `--constexpr` value: the argument's name and its whole-number value.
struct Constexpr {
  std::string name;
  int64_t value = 0;
};

bool parseConstexpr(const std::string &text, Constexpr &out) {
  size_t equals = text.find('=');
  if (equals == 0 || equals == std::string::npos)
    return false;
  out.name = text.substr(0, equals);
  std::string number = text.substr(equals + 1);
  errno = 0;
  char *end = nullptr;
  long long value = std::strtoll(number.c_str(), &end, 0);
  if (number.empty() || *end != '\0' || errno == ERANGE)
    return false;
  out.value = value;
  return true;
}

/// A context with the dialects of `registry` and the request's source as
/// its one buffer, whose diagnostics quote the offending line.
struct SourceContext {
  SourceContext(const mlir::DialectRegistry &registry,
                const std::string &source, const std::string &name)
      : context(registry), handler(sourceMgr, &context) {
    context.loadAllAvailableDialects();
    context.printOpOnDiagnostic(false);
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(source, name), llvm::SMLoc());
  }
  /// The buffer's module: text with its arguments named as it wrote them
  /// (`%stride`), as tk_kernel_create names them; bytecode (an imported
  /// TTIR) carries its own. Null after the diagnostics on failure. `text`
  /// says which it was.
  mlir::OwningOpRef<mlir::ModuleOp> parseKernel(const std::string &name,
                                                bool &text) {
    mlir::ParserConfig config(&context);
    mlir::Block block;
    mlir::AsmParserState state;
    text = !mlir::isBytecode(
        *sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID()));
    if (mlir::failed(
            text ? mlir::parseAsmSourceFile(sourceMgr, &block, config, &state)
                 : mlir::parseSourceFile(sourceMgr, &block, config)))
      return {};
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::detail::constructContainerOpForParserIfNecessary<mlir::ModuleOp>(
            &block, &context, mlir::FileLineColLoc::get(&context, name, 1, 1));
    if (module && text)
      tk::recoverArgumentNames(*module, state);
    return module;
  }

  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler;
};

/// Replaces the request's source by `module` as bytecode (which keeps the
/// ops' locations for the backend's messages); `what` names the kernel in
/// the error.
int replaceSource(tk::tool::CompileRequest &request, mlir::ModuleOp module,
                  const char *what) {
  std::string bytecode;
  llvm::raw_string_ostream stream(bytecode);
  if (mlir::failed(mlir::writeBytecodeToFile(module.getOperation(), stream))) {
    std::cerr << "tk-compile: cannot serialise the " << what << " kernel\n";
    return 1;
  }
  request.source = std::move(bytecode);
  return 0;
}

/// Folds `constexprs` into the entry of the tk kernel (text or bytecode) in
/// `request.source`, which becomes the specialised kernel's bytecode.
int specialize(tk::tool::CompileRequest &request, const std::string &input,
               const std::vector<Constexpr> &constexprs) {
  mlir::DialectRegistry registry;
  tk::registerTkDialects(registry);
  SourceContext source(registry, request.source, input);
  bool text = false;
  mlir::OwningOpRef<mlir::ModuleOp> module = source.parseKernel(input, text);
  if (!module)
    return 1;
  auto entry = module->lookupSymbol<tk::FuncOp>(request.entry);
  if (!entry) {
    std::cerr << "tk-compile: " << input << " has no tk.func '" << request.entry
              << "'\n";
    return 1;
  }
  llvm::SmallVector<std::pair<unsigned, int64_t>> values;
  for (const Constexpr &constexprValue : constexprs) {
    std::optional<unsigned> index;
    for (unsigned i = 0; i < entry.getNumArguments(); ++i)
      if (tk::getArgumentName(entry, i) == constexprValue.name)
        index = i;
    if (!index) {
      std::cerr << "tk-compile: --constexpr " << constexprValue.name
                << ": kernel '" << request.entry
                << "' has no argument of that name\n";
      return 2;
    }
    values.push_back({*index, constexprValue.value});
  }
  if (mlir::failed(tk::specializeArguments(entry, values)))
    return 2;
  return replaceSource(request, *module, "specialised");
}

/// Checks `request.entry` against the tk.func kernels of the module in
/// `request.source` (text or bytecode), or sets it to the only one. Text
/// becomes bytecode: its locations then name `input`, so the backend's
/// messages say `input:line:column`, and its arguments keep the names the
/// text wrote.
int resolveEntry(tk::tool::CompileRequest &request, const std::string &input) {
  mlir::DialectRegistry registry;
  tk::registerTkDialects(registry);
  SourceContext source(registry, request.source, input);
  bool text = false;
  mlir::OwningOpRef<mlir::ModuleOp> module = source.parseKernel(input, text);
  if (!module)
    return 1;
  std::vector<std::string> kernels;
  for (tk::FuncOp func : module->getOps<tk::FuncOp>())
    kernels.push_back(func.getSymName().str());
  std::string list;
  for (const std::string &kernel : kernels)
    list += (list.empty() ? "" : ", ") + kernel;
  if (request.entry.empty()) {
    if (kernels.size() == 1) {
      request.entry = kernels.front();
      return text ? replaceSource(request, *module, "parsed") : 0;
    }
    std::cerr << "tk-compile: " << input << " holds " << kernels.size()
              << " kernels" << (kernels.empty() ? "" : " (" + list + ")")
              << "; pick one with --entry\n";
    return 2;
  }
  for (const std::string &kernel : kernels)
    if (kernel == request.entry)
      return text ? replaceSource(request, *module, "parsed") : 0;
  std::cerr << "tk-compile: " << input << " has no tk.func '" << request.entry
            << "'; its kernels: " << (list.empty() ? "none" : list) << "\n";
  return 2;
}

/// Replaces the TTIR in `request.source` by the tk bytecode it imports to
/// (bytecode keeps the ops' locations, the Python lines, for the backend's
/// messages), and fills in the entry when the request has none.
int importTtir(tk::tool::CompileRequest &request, const std::string &input) {
  mlir::DialectRegistry registry;
  tk::ttir::registerTtirImport(registry);
  SourceContext source(registry, request.source, input);
  tk::ttir::ImportFailure failure;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      tk::ttir::importTtir(source.sourceMgr, source.context, failure);
  if (!module)
    return failure == tk::ttir::ImportFailure::Unsupported ? 3 : 1;
  if (request.entry.empty()) {
    auto funcs = module->getBody()->getOperations().size();
    if (funcs != 1) {
      std::cerr << "tk-compile: " << input << " holds " << funcs
                << " kernels; pick one with --entry\n";
      return 2;
    }
    request.entry =
        mlir::SymbolTable::getSymbolName(&module->getBody()->front()).str();
  }
  return replaceSource(request, *module, "imported");
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const std::string &arg : args)
    if (arg == "--package" || arg == "--package-info" ||
        arg == "--package-check")
      return tk::tool::runPackageMode(args);
  tk::tool::CompileRequest request;
  std::string input, backendName, emit = "binary", output, text;
  std::string from = "tk", metadataPath;
  bool numWarpsGiven = false, numStagesGiven = false;
  std::vector<Constexpr> constexprs;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    if (arg == "-h" || arg == "--help") {
      std::cout << usage();
      return 0;
    } else if (arg == "--backend") {
      if (!value(backendName))
        return usageError("--backend needs a name");
    } else if (arg == "--arch") {
      if (!value(request.arch))
        return usageError("--arch needs a target");
    } else if (arg == "--entry") {
      if (!value(request.entry))
        return usageError("--entry needs a kernel name");
    } else if (arg == "--emit") {
      if (!value(emit))
        return usageError("--emit needs binary, asm, llvm, spirv or package");
    } else if (arg == "-o") {
      if (!value(output))
        return usageError("-o needs a file name");
    } else if (arg == "--dump-dir") {
      if (!value(request.dumpDir))
        return usageError("--dump-dir needs a folder");
    } else if (arg == "--num-warps") {
      if (!value(text) || !parseCount(text, request.numWarps))
        return usageError("--num-warps needs a number from 1 to 1024");
      numWarpsGiven = true;
    } else if (arg == "--num-stages") {
      if (!value(text) || !parseCount(text, request.numStages))
        return usageError("--num-stages needs a number from 1 to 1024");
      numStagesGiven = true;
    } else if (arg == "--from") {
      if (!value(from) || (from != "tk" && from != "ttir"))
        return usageError("--from needs tk or ttir");
    } else if (arg == "--triton-metadata") {
      if (!value(metadataPath))
        return usageError("--triton-metadata needs a file name");
    } else if (arg == "--constexpr") {
      Constexpr constexprValue;
      if (!value(text) || !parseConstexpr(text, constexprValue))
        return usageError("--constexpr needs NAME=VALUE, VALUE a whole number");
      constexprs.push_back(constexprValue);
    } else if (arg == "--min-programs-per-cu") {
      if (!value(text) || !parseCount(text, request.minProgramsPerCu))
        return usageError(
            "--min-programs-per-cu needs a number from 1 to 1024");
    } else if (!arg.empty() && arg[0] == '-' && arg != "-") {
      return usageError("unknown option '" + arg + "'");
    } else if (input.empty()) {
      input = arg;
    } else {
      return usageError("more than one input file ('" + input + "', '" + arg +
                        "')");
    }
  }
  if (input.empty())
    return usageError("no input file");
  if (backendName.empty())
    return usageError("--backend is required");
  if (!metadataPath.empty() && from != "ttir")
    return usageError("--triton-metadata goes with --from ttir");
  const tk::tool::BackendCompileTool *backend = nullptr;
  for (const tk::tool::BackendCompileTool &candidate : kBackends)
    if (backendName == candidate.name)
      backend = &candidate;
  if (!backend) {
    std::string names;
    for (const tk::tool::BackendCompileTool &candidate : kBackends)
      names += (names.empty() ? "" : ", ") + std::string(candidate.name);
    return usageError("no backend '" + backendName + "' in this build (" +
                      names + ")");
  }
  if (request.arch.empty())
    request.arch = backend->defaultArch;
  if (emit == "binary")
    request.emit = tk::tool::Emit::Binary;
  else if (emit == "asm")
    request.emit = tk::tool::Emit::Assembly;
  else if (emit == "llvm")
    request.emit = tk::tool::Emit::LLVM;
  else if (emit == "spirv")
    request.emit = tk::tool::Emit::SPIRV;
  else if (emit == "package")
    request.emit = tk::tool::Emit::Package;
  else
    return usageError("--emit " + emit +
                      ": expected binary, asm, llvm, spirv or package");
  if ((request.emit == tk::tool::Emit::Binary ||
       request.emit == tk::tool::Emit::SPIRV ||
       request.emit == tk::tool::Emit::Package) &&
      (output.empty() || output == "-"))
    return usageError("--emit " + emit + " writes a binary: give -o OUT");

  {
    std::ifstream file;
    std::istream *in = &std::cin;
    if (input != "-") {
      file.open(input, std::ios::binary);
      if (!file) {
        std::cerr << "tk-compile: cannot read '" << input << "'\n";
        return 1;
      }
      in = &file;
    }
    std::ostringstream buffer;
    buffer << in->rdbuf();
    request.source = buffer.str();
  }

  // A text kernel's tile parameters take their values (--constexpr, else
  // their defaults) before it is parsed; the constexprs that named them are
  // spent.
  if (from == "tk" && !llvm::StringRef(request.source).starts_with("ML\xefR")) {
    std::vector<std::pair<std::string, int64_t>> values;
    for (const Constexpr &constexprValue : constexprs)
      values.push_back({constexprValue.name, constexprValue.value});
    std::string expanded, error;
    std::vector<tk::TileParameter> parameters;
    if (mlir::failed(tk::expandTileParameters(request.source, values, expanded,
                                              parameters, error))) {
      std::cerr << "tk-compile: " << input << ":" << error << "\n";
      return 1;
    }
    request.source = std::move(expanded);
    llvm::erase_if(constexprs, [&](const Constexpr &constexprValue) {
      return llvm::any_of(parameters, [&](const tk::TileParameter &parameter) {
        return parameter.name == constexprValue.name;
      });
    });
  }

  if (from == "ttir") {
    // Triton's own choices, unless the command line made its own.
    std::string path = metadataPath;
    if (path.empty() && input != "-" &&
        llvm::StringRef(input).ends_with(".ttir"))
      path = input.substr(0, input.size() - 5) + ".json";
    std::string json;
    bool found = !path.empty() && tk::tool::readFile(path, json);
    if (!metadataPath.empty() && !found) {
      std::cerr << "tk-compile: cannot read '" << metadataPath << "'\n";
      return 1;
    }
    if (found) {
      std::string error;
      auto metadata = tk::ttir::parseTritonMetadata(json, error);
      if (mlir::failed(metadata)) {
        std::cerr << "tk-compile: " << path << ": " << error << "\n";
        return 1;
      }
      if (metadata->numWarps && !numWarpsGiven)
        request.numWarps = *metadata->numWarps;
      if (metadata->numStages && !numStagesGiven)
        request.numStages = *metadata->numStages;
    }
    if (int status = importTtir(request, input))
      return status;
  } else if (int status = resolveEntry(request, input)) {
    return status;
  }
  if (!constexprs.empty())
    if (int status = specialize(request, input, constexprs))
      return status;

  tk::tool::CompileResult result;
  std::string error;
  if (tk_status status = backend->run(request, result, error)) {
    std::cerr << error << "\n";
    return status == TK_ERROR_UNSUPPORTED ? 3 : 1;
  }
  if (!result.summary.empty())
    std::cerr << result.summary << "\n";
  if (output.empty() || output == "-") {
    std::cout << result.bytes;
    return std::cout.good() ? 0 : 1;
  }
  if (!tk::tool::writeFileAtomically(output, result.bytes)) {
    std::cerr << "tk-compile: cannot write '" << output << "'\n";
    return 1;
  }
  return 0;
}
