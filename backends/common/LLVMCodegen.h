//===- LLVMCodegen.h - what backends that end in LLVM share ------*- C++ -*-===//
//
// Header-only helpers for the backends whose compilers finish in LLVM's
// code generator and hand its output to a vendor tool (CUDA: ptxas; ROCm:
// ld.lld): the O3 pipeline of the target, and temporary files for the tool.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_COMMON_LLVMCODEGEN_H_
#define TK_BACKENDS_COMMON_LLVMCODEGEN_H_

#include "llvm/ADT/SmallString.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Target/TargetMachine.h"

#include <optional>
#include <string>
#include <system_error>

namespace tk::plugin {

/// LLVM's O3 module pipeline for `machine`'s target, which brings the
/// target's own passes (NVVMReflect and address spaces on NVPTX, kernel
/// argument promotion on AMDGPU).
inline void optimizeForTarget(llvm::Module &module,
                              llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

/// A temporary file, named `<prefix>-*.<suffix>`, removed when this goes out
/// of scope: what a vendor tool reads and writes.
struct TemporaryFile {
  llvm::SmallString<128> path;
  std::optional<llvm::FileRemover> remover;

  std::error_code create(llvm::StringRef prefix, llvm::StringRef suffix) {
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile(prefix, suffix, path))
      return ec;
    remover.emplace(path);
    return {};
  }
};

/// Collects the error diagnostics of an LLVMContext, which LLVM's default
/// handler would answer by exiting the process (a backend reports a
/// resource over the target's limit that way): a library may not exit its
/// caller's process.
struct CodegenErrors {
  std::string text;

  void install(llvm::LLVMContext &context) {
    context.setDiagnosticHandlerCallBack(
        [](const llvm::DiagnosticInfo *info, void *into) {
          if (info->getSeverity() != llvm::DS_Error)
            return;
          llvm::raw_string_ostream os(*static_cast<std::string *>(into));
          llvm::DiagnosticPrinterRawOStream printer(os);
          info->print(printer);
          os << "\n";
        },
        &text);
  }
  bool empty() const { return text.empty(); }
};

} // namespace tk::plugin

#endif // TK_BACKENDS_COMMON_LLVMCODEGEN_H_
