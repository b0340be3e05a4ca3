//===- CompileSupport.h - what every backend's compiler needs ---*- C++ -*-===//
//
// The steps every plugin's compile entry point takes before and around its
// own lowering: reading the kernel module it is handed (diagnostics kept as
// text for the error message), naming the pass that failed, and writing the
// stages of TK_DUMP_IR.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_COMPILESUPPORT_H_
#define TK_CORE_COMPILESUPPORT_H_

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tk {

/// Collects the diagnostics of `context` as "file:line:column: error:
/// message" lines (the location as MLIR prints it where it names no file),
/// notes indented under them, for as long as it lives; the context stops
/// appending generic dumps of the op to them.
class DiagnosticCapture {
public:
  explicit DiagnosticCapture(mlir::MLIRContext *context);
  const std::string &text() const { return text_; }

private:
  std::string text_;
  mlir::ScopedDiagnosticHandler handler_;
};

/// Why a kernel module could not be read.
enum class KernelModuleError { None, InvalidIR, UnknownEntry };

/// Parses `size` bytes of MLIR text or bytecode into a module and verifies
/// it; with a non-empty `entry`, checks that a tk.func of that name exists.
/// On failure `module` stays null and `error` says why (prefixed with
/// `backend`, e.g. "tk-cuda"), diagnostics included.
KernelModuleError readKernelModule(mlir::MLIRContext &context, const void *data,
                                   size_t size, llvm::StringRef entry,
                                   llvm::StringRef backend,
                                   const DiagnosticCapture &diagnostics,
                                   mlir::OwningOpRef<mlir::ModuleOp> &module,
                                   std::string &error);

/// Records the argument (or name) of the first pass that failed: a nested
/// pass, not the adaptor over functions that fails after it.
class FailedPassRecorder : public mlir::PassInstrumentation {
public:
  explicit FailedPassRecorder(std::string *name) : name(name) {}
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *) override;

private:
  std::string *name;
};

/// Runs the passes `fill` adds to a fresh pass manager on `module`; on
/// failure `failedPass` names the pass. Backends build their pipelines in
/// C++ this way, so no pass needs MLIR's global registry. `instrumentation`,
/// where given, watches the run too (a dump after each pass).
mlir::LogicalResult
runPasses(mlir::ModuleOp module, std::string &failedPass,
          llvm::function_ref<void(mlir::OpPassManager &)> fill,
          std::unique_ptr<mlir::PassInstrumentation> instrumentation = nullptr);

/// MLIR's canonicalizer without RemoveDuplicateSuccessorInputUses. That
/// pattern compares the values every pair of a loop's iter_args receives,
/// quadratic in their number: on a multiply-add dot whose 512 accumulators
/// start from one zero it took 66 of a kernel's 67 seconds of compile, and
/// found nothing (each accumulator is yielded a different sum).
std::unique_ptr<mlir::Pass> createCanonicalizer();

/// Writes `print`'s output to `dir`/`name` when `dir` is not empty (the
/// TK_DUMP_IR folder; created if missing). Best effort: a dump that cannot
/// be written (a full disk) is skipped, and never fails the compile.
void dumpStage(llvm::StringRef dir, llvm::StringRef name,
               llvm::function_ref<void(llvm::raw_ostream &)> print);

/// Writes `bytes` as the whole of `path` (created or truncated) and closes
/// it, returning the first error of the open, the writes or the close.
/// Library code writes files through this: a raw_fd_ostream destroyed with
/// an unchecked error ends the process (report_fatal_error).
std::error_code writeWholeFile(llvm::StringRef path, llvm::StringRef bytes);

/// The same to a descriptor open for writing, which it closes.
std::error_code writeWholeFile(int fd, llvm::StringRef bytes);

} // namespace tk

#endif // TK_CORE_COMPILESUPPORT_H_
