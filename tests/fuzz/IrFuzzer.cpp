//===- IrFuzzer.cpp - kernel sources as tk_kernel_create reads them -------===//
//
// One input is one kernel source, text (tk-fuzz-ir-text), MLIR bytecode
// (tk-fuzz-ir-bytecode) or Triton's TTIR (tk-fuzz-ir-ttir), given to
// prepareKernel: the parser or bytecode
// reader or the TTIR importer, the nesting guard, the verifier, entry
// selection, specialisation and the signature, everything tk_kernel_create does
// before a backend.
//
// A refusal must be INVALID_IR, NOT_FOUND or UNSUPPORTED with a message. An
// accepted kernel must round-trip: its bytecode, read again, is accepted
// with the same entry and signature.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "tk/runtime/KernelSource.h"

#include <cstddef>
#include <cstdint>

#ifndef TK_FUZZ_SOURCE_KIND
#error                                                                         \
    "TK_FUZZ_SOURCE_KIND: TK_SOURCE_TEXT, TK_SOURCE_BYTECODE or TK_SOURCE_TTIR"
#endif

using tk::fuzz::require;
using tk::fuzz::requireRefusal;
using tk::runtime::PreparedKernel;
using tk::runtime::Status;

static std::string describe(const PreparedKernel &kernel) {
  std::string text = kernel.entry + "(";
  for (const tk::runtime::KernelArgument &argument : kernel.arguments)
    text += argument.name + ": " + argument.typeName + " /" +
            std::to_string(argument.divisibility) + ", ";
  return text + ")";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A zero-size source is refused before it is read; give the reader a
  // pointer that is never NULL.
  static const uint8_t empty = 0;
  tk_kernel_source source = {TK_FUZZ_SOURCE_KIND, size ? data : &empty, size,
                             nullptr};
  PreparedKernel kernel;
  Status status = tk::runtime::prepareKernel(source, {}, kernel);
  if (!status.isOk()) {
    requireRefusal(status.code(), status.message(),
                   {TK_ERROR_INVALID_IR, TK_ERROR_NOT_FOUND,
                    TK_ERROR_UNSUPPORTED, TK_ERROR_INVALID_ARGUMENT});
    return 0;
  }
  require(!kernel.entry.empty(), "an accepted kernel without an entry");
  require(kernel.arguments.size() <= tk::runtime::kMaxKernelArguments,
          "an accepted kernel with too many arguments");
  for (const tk::runtime::KernelArgument &argument : kernel.arguments)
    require(argument.divisibility >= 1 && argument.alignment >= 1,
            "argument '" + argument.name + "' of divisibility " +
                std::to_string(argument.divisibility));

  tk_kernel_source again = {TK_SOURCE_BYTECODE, kernel.bytecode.data(),
                            kernel.bytecode.size(), nullptr};
  PreparedKernel reread;
  Status rereadStatus = tk::runtime::prepareKernel(again, {}, reread);
  require(rereadStatus.isOk(),
          "the bytecode of an accepted kernel is refused: " +
              rereadStatus.message());
  require(describe(reread) == describe(kernel),
          "the signature changed on a round trip: " + describe(kernel) +
              " became " + describe(reread));
  return 0;
}
