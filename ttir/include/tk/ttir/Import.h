//===- Import.h - read Triton's TTIR as a tk module -------------*- C++ -*-===//
//
// The TTIR reader (DESIGN.md §2): Triton 3.x's tile IR, as
// `kernel.asm["ttir"]` or TRITON_KERNEL_DUMP writes it, parsed without Triton
// and converted into tk, each op keeping its location (the Python line).
//
//===----------------------------------------------------------------------===//

#ifndef TK_TTIR_IMPORT_H_
#define TK_TTIR_IMPORT_H_

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "tk/ttir/TritonMetadata.h"

#include <optional>
#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tk::ttir {

/// Why an import failed: the text is not TTIR that parses, or it is, but uses
/// something tk cannot run (the diagnostics name the op and its location).
enum class ImportFailure { None, InvalidIR, Unsupported };

/// Registers what reading TTIR needs in a context: tt and the upstream
/// dialects beside it, and tk, which the conversion produces.
void registerTtirImport(mlir::DialectRegistry &registry);

/// Converts every tt op of `module` into tk in place (tk-convert-tt-to-tk).
/// Failure is reported as diagnostics; it is always Unsupported (a module
/// that parsed is TTIR, so what the conversion refuses is what tk lacks).
mlir::LogicalResult convertTtToTk(mlir::ModuleOp module);

/// Parses the TTIR in `sourceMgr`'s main buffer into `context` (which must
/// have registerTtirImport's dialects) and converts it into a verified tk
/// module. Diagnostics go to the context's handlers; `failure` says which
/// kind of error they describe.
mlir::OwningOpRef<mlir::ModuleOp> importTtir(llvm::SourceMgr &sourceMgr,
                                             mlir::MLIRContext &context,
                                             ImportFailure &failure);

} // namespace tk::ttir

#endif // TK_TTIR_IMPORT_H_
