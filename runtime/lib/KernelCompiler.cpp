//===- KernelCompiler.cpp - the compiler libtk registers ------------------===//

#include "tk/runtime/KernelCompiler.h"

#include <atomic>
#include <string>

using namespace tk::runtime;

/// Set by a static initializer of libtk.so, before any tk.h call can run.
static std::atomic<KernelCompiler *> theCompiler{nullptr};

KernelCompiler *tk::runtime::getKernelCompiler() {
  return theCompiler.load(std::memory_order_acquire);
}

void tk::runtime::registerKernelCompiler(KernelCompiler &compiler) {
  theCompiler.store(&compiler, std::memory_order_release);
}

Status tk::runtime::compilerMissing(std::string_view what) {
  return Status(TK_ERROR_UNSUPPORTED,
                std::string(what) +
                    " needs a compiler, and this is tk's runtime without one "
                    "(libtk_runtime.so): load a package (TK_SOURCE_PACKAGE, "
                    "made by tk-compile --package) or link libtk.so");
}
