//===- tk-bytecode-check.cpp - read untrusted bytecode apart --------------===//
//
// MLIR's bytecode reader trusts the counts it reads: a mutated file can make
// it ask for a vector of 2^60 elements, which ends the process through
// report_fatal_error ("SmallVector unable to grow"), or allocate without
// bound. tk lives in its callers' processes, so the runtime reads bytecode
// a user hands it (TK_SOURCE_BYTECODE) here first, in a process of its own
// with a time and memory limit (runtime/lib/BytecodeCheck.cpp), and only
// bytecode this program read and verified is read in the caller's process.
//
//   tk-bytecode-check < FILE    exit 0: it reads and verifies;
//                               exit 1: it does not, the diagnostics on
//                               stderr; anything else: it crashed.
//
//===----------------------------------------------------------------------===//

#include "tk/ir/Dialect.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

int main() {
  auto input = llvm::MemoryBuffer::getSTDIN();
  if (!input) {
    llvm::errs() << "cannot read standard input: " << input.getError().message()
                 << "\n";
    return 1;
  }
  mlir::DialectRegistry registry;
  tk::registerTkDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  mlir::ScopedDiagnosticHandler handler(
      &context, [](mlir::Diagnostic &diagnostic) {
        llvm::errs() << diagnostic.getLocation() << ": " << diagnostic << "\n";
        return mlir::success();
      });
  mlir::Block block;
  mlir::ParserConfig config(&context, /*verifyAfterParse=*/true);
  if (!mlir::isBytecode((*input)->getMemBufferRef())) {
    llvm::errs() << "not MLIR bytecode\n";
    return 1;
  }
  return mlir::failed(mlir::readBytecodeFile((*input)->getMemBufferRef(),
                                             &block, config))
             ? 1
             : 0;
}
