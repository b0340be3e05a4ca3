//===- CompileSupport.cpp - what every backend's compiler needs -----------===//

#include "tk/core/CompileSupport.h"
#include "tk/ir/Dialect.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace tk {

/// `file:line:column` where the location has one (the kernel's source
/// file, a TTIR kernel's Python line), else the location as MLIR prints it.
static void printLocation(llvm::raw_ostream &os, Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  else
    os << loc;
}

DiagnosticCapture::DiagnosticCapture(MLIRContext *context)
    : handler_(context, [this](Diagnostic &diag) {
        llvm::raw_string_ostream os(text_);
        printLocation(os, diag.getLocation());
        os << ": ";
        switch (diag.getSeverity()) {
        case DiagnosticSeverity::Error:
          os << "error: ";
          break;
        case DiagnosticSeverity::Warning:
          os << "warning: ";
          break;
        default:
          os << "note: ";
          break;
        }
        os << diag << "\n";
        for (Diagnostic &note : diag.getNotes()) {
          os << "  ";
          printLocation(os, note.getLocation());
          os << ": note: " << note << "\n";
        }
        return success();
      }) {
  // The located message says what is wrong; a generic dump of the op after
  // it ("see current operation") only buries it.
  context->printOpOnDiagnostic(false);
}

KernelModuleError readKernelModule(MLIRContext &context, const void *data,
                                   size_t size, llvm::StringRef entry,
                                   llvm::StringRef backend,
                                   const DiagnosticCapture &diagnostics,
                                   OwningOpRef<ModuleOp> &module,
                                   std::string &error) {
  // Verified below, once the ops sit in their module: the bytecode reader
  // would verify the kernel before its parent module exists.
  ParserConfig config(&context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(
      llvm::StringRef(static_cast<const char *>(data), size), config, "kernel");
  if (!parsed || failed(verify(*parsed))) {
    error = backend.str() + ": the kernel module does not parse or verify:\n" +
            diagnostics.text();
    return KernelModuleError::InvalidIR;
  }
  if (!entry.empty() && !parsed->lookupSymbol<tk::FuncOp>(entry)) {
    error = backend.str() + ": no tk.func named '" + entry.str() +
            "' in the module";
    return KernelModuleError::UnknownEntry;
  }
  module = std::move(parsed);
  return KernelModuleError::None;
}

std::unique_ptr<Pass> createCanonicalizer() {
  // The pattern's debug name, as MLIR gives an unnamed pattern its type's.
  static const std::string disabled[] = {
      "(anonymous namespace)::RemoveDuplicateSuccessorInputUses"};
  GreedyRewriteConfig config;
  config.setUseTopDownTraversal(true); // as the canonicalizer's own default
  return createCanonicalizerPass(config, disabled);
}

LogicalResult runPasses(ModuleOp module, std::string &failedPass,
                        llvm::function_ref<void(OpPassManager &)> fill,
                        std::unique_ptr<PassInstrumentation> instrumentation) {
  PassManager pm(module->getContext());
  fill(pm);
  failedPass.clear();
  pm.addInstrumentation(std::make_unique<FailedPassRecorder>(&failedPass));
  if (instrumentation)
    pm.addInstrumentation(std::move(instrumentation));
  return pm.run(module);
}

void FailedPassRecorder::runAfterPassFailed(Pass *pass, Operation *) {
  if (!name->empty())
    return;
  *name = pass->getArgument().str();
  if (name->empty())
    *name = pass->getName().str();
}

void dumpStage(llvm::StringRef dir, llvm::StringRef name,
               llvm::function_ref<void(llvm::raw_ostream &)> print) {
  if (dir.empty())
    return;
  if (llvm::sys::fs::create_directories(dir))
    return;
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  (void)writeWholeFile(path, text);
}

/// Writes and closes `os`, taking its error so that its destructor has none
/// left to report.
static std::error_code writeAndClose(llvm::raw_fd_ostream &os,
                                     llvm::StringRef bytes) {
  os << bytes;
  os.close();
  std::error_code error = os.error();
  os.clear_error();
  return error;
}

std::error_code writeWholeFile(llvm::StringRef path, llvm::StringRef bytes) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error)
    return error;
  return writeAndClose(os, bytes);
}

std::error_code writeWholeFile(int fd, llvm::StringRef bytes) {
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  return writeAndClose(os, bytes);
}

} // namespace tk
