//===- Import.cpp - read Triton's TTIR as a tk module ---------------------===//
//
// Parsing with the parse-only tt dialect, the conversion into tk, the
// verification of the result, and which kind of failure each step's
// diagnostics describe.
//
//===----------------------------------------------------------------------===//

#include "tk/ttir/Import.h"
#include "tk/ttir/Dialect.h"

#include "tk/ir/Dialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

void tk::ttir::registerTtirImport(DialectRegistry &registry) {
  registerTtDialects(registry);
  tk::registerTkDialects(registry);
}

/// Whether a parser diagnostic is about an op or dialect the reader does not
/// define, in text that is otherwise MLIR: an op Triton has and tk does not
/// import ("custom op 'tt.histogram' is unknown", or unregistered in the
/// generic form), one of another dialect (`gpu.barrier` from
/// tl.debug_barrier), or TTGIR's types (`#ttg.blocked`) given as TTIR.
static bool namesUnknownOp(Diagnostic &diagnostic) {
  std::string message = diagnostic.str();
  llvm::StringRef text = message;
  return (text.starts_with("custom op '") && text.contains("is unknown")) ||
         text.contains("unregistered operation '") ||
         (text.starts_with("dialect '") && text.contains("not found")) ||
         (text.starts_with("Dialect `") && text.contains("not found")) ||
         text.contains("created with unregistered dialect");
}

OwningOpRef<ModuleOp> tk::ttir::importTtir(llvm::SourceMgr &sourceMgr,
                                           MLIRContext &context,
                                           ImportFailure &failure) {
  failure = ImportFailure::None;
  bool unknownOp = false;
  OwningOpRef<ModuleOp> module;
  {
    // Looks at each diagnostic and passes it on to the caller's handler.
    ScopedDiagnosticHandler watch(&context, [&](Diagnostic &diagnostic) {
      unknownOp |= namesUnknownOp(diagnostic);
      return mlir::failure();
    });
    module = parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  }
  if (!module) {
    failure = unknownOp ? ImportFailure::Unsupported : ImportFailure::InvalidIR;
    return nullptr;
  }
  // What converts is tk; tk's verifier then checks it as it checks a kernel
  // written in tk. A refusal there is a form of TTIR that tk lacks.
  if (mlir::failed(convertTtToTk(*module)) || mlir::failed(verify(*module))) {
    failure = ImportFailure::Unsupported;
    return nullptr;
  }
  return module;
}
