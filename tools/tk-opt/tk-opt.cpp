//===- tk-opt.cpp - parse, verify, transform and print tk IR --------------===//
//
// The mlir-opt of tk: every tk pass and the upstream passes a pipeline needs
// are registered, so any stage of the lowering can be run and printed alone.
// `--from ttir` reads Triton's TTIR, converted into tk first.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Conversion/Passes.h"
#include "tk/core/Passes.h"
#include "tk/ir/Dialect.h"
#include "tk/ir/NestingLimit.h"
#include "tk/ttir/Dialect.h"
#include "tk/ttir/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>
#include <vector>

#include "RegisterTargetPresets.h"

/// The parser, verifier and passes recurse once per level of nesting: an
/// input file nested deeper than tk_kernel_create accepts is refused here
/// too, naming its line, rather than overflowing the stack. (Running
/// MlirOptMain on a thread of a larger stack breaks under ASan: LLVM's
/// signal handlers give that thread a malloc'ed alternate stack.)
static bool inputNestsWithinLimit(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "-o") {
      ++i;
      continue;
    }
    if (arg.starts_with("-") || !llvm::sys::fs::is_regular_file(arg))
      continue;
    auto file = llvm::MemoryBuffer::getFile(arg);
    if (!file)
      continue; // MlirOptMain reports it
    llvm::StringRef text = (*file)->getBuffer();
    if (std::optional<size_t> at = tk::findNestingBeyond(text)) {
      llvm::errs() << arg << ":" << tk::lineAndColumnAt(text, *at).first
                   << ": error: the IR nests deeper than " << tk::kMaxIRNesting
                   << " brackets; tk refuses it before parsing, which would "
                      "overflow the stack\n";
      return false;
    }
  }
  return true;
}

/// `--from ttir` (or `--from=ttir`): the input is Triton's TTIR, converted
/// into tk before any other pass, as if `--tk-convert-tt-to-tk` came first.
/// `--from tk` is the default. Returns the arguments MlirOptMain reads, or
/// nothing after reporting a bad `--from`.
static std::optional<std::vector<char *>> readFrom(int argc, char **argv) {
  static char convert[] = "--tk-convert-tt-to-tk";
  std::vector<char *> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    std::optional<llvm::StringRef> from;
    if (arg == "--from" || arg == "-from") {
      if (i + 1 >= args.size()) {
        llvm::errs() << "tk-opt: --from needs tk or ttir\n";
        return std::nullopt;
      }
      from = llvm::StringRef(args[i + 1]);
      args.erase(args.begin() + i, args.begin() + i + 2);
    } else if (arg.consume_front("--from=") || arg.consume_front("-from=")) {
      from = arg;
      args.erase(args.begin() + i);
    } else {
      continue;
    }
    if (*from != "tk" && *from != "ttir") {
      llvm::errs() << "tk-opt: --from " << *from << ": expected tk or ttir\n";
      return std::nullopt;
    }
    if (*from == "ttir")
      args.insert(args.begin() + 1, convert);
    --i;
  }
  return args;
}

/// tk's own passes: layouts, the warp and intrinsic levels and the register
/// pipeline (tk-assign-linear-layouts, ...), the conversions out of tk
/// (tk-convert-to-loops, ...) and Triton's TTIR into tk.
static void registerTkPasses() {
  tk::registerTransformsPasses();
  tk::registerConversionPasses();
  tk::ttir::registerTkTtirPasses();
}

/// `tk-opt --help`: the usage and tk's passes, before the hundreds of
/// options mlir-opt has (`--help-all`).
static void printUsage() {
  llvm::outs()
      << "tk-opt: parse, verify, transform and print tk IR (the mlir-opt of "
         "tk)\n\n"
         "usage: tk-opt [--from tk|ttir] [--split-input-file] "
         "[-verify-diagnostics]\n"
         "              [--<pass>[=\"option=value ...\"]]... [file|-] "
         "[-o out]\n\n"
         "  --from ttir         the input is Triton's TTIR, converted into "
         "tk first\n"
         "  --pass-pipeline=... passes as a textual pipeline, e.g. "
         "'builtin.module(tk.func(tk-assign-linear-layouts))'\n"
         "  --help-all          every option of mlir-opt, upstream passes "
         "(canonicalize, cse, ...) included\n\n"
         "tk's passes. A target= option takes a TargetInfo preset, with "
         ":key=value overrides\n(cuda-sm80:shared-memory=49152); the "
         "presets here: "
      << llvm::join(tk::registeredTargetPresets(), ", ") << "\n";
  registerTkPasses();
  mlir::printRegisteredPasses();
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--help" || arg == "-help" || arg == "-h") {
      tk::registerAllTargetPresets();
      printUsage();
      return EXIT_SUCCESS;
    }
    if (arg == "--help-all")
      argv[i] = const_cast<char *>("--help");
  }
  // Every backend's TargetInfo presets, for the passes' target= options.
  tk::registerAllTargetPresets();
  // And their matrix and async copy units, for tk-convert-registers-to-simt
  // units=<preset>.
  tk::registerAllTargetUnits();
  mlir::DialectRegistry registry;
  tk::registerTkDialects(registry);
  // Upstream cleanups (canonicalize, cse, ...) so pipelines can mix them in.
  mlir::registerTransformsPasses();
  tk::registerWarpDialect(registry);
  // The register pipeline, the conversions out of tk and the dialects of
  // their output, which a stage dump holds (4-loops.mlir); TTIR into tk.
  registerTkPasses();
  tk::ttir::registerTtDialects(registry);
  // NVVM: what the CUDA units emit (units=<preset>), read back too.
  registry.insert<mlir::func::FuncDialect, mlir::memref::MemRefDialect,
                  mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect,
                  mlir::NVVM::NVVMDialect, mlir::vector::VectorDialect>();
  if (!inputNestsWithinLimit(argc, argv))
    return EXIT_FAILURE;
  std::optional<std::vector<char *>> args = readFrom(argc, argv);
  if (!args)
    return EXIT_FAILURE;
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(static_cast<int>(args->size()), args->data(),
                        "tk optimizer driver\n", registry));
}
