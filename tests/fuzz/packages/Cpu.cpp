//===- Cpu.cpp - the cpu plugin's object files under the fuzzer -----------===//

#include "PackageCheck.h"

#include "compiler/Compiler.h"

void tk::fuzz::checkCpuObject(const uint8_t *data, size_t size) {
  // validate(): an object file LLVM reads, with a *_tk_launch entry.
  std::string error;
  tk_status status = tk::cpu::validateObject(data, size, error);
  if (status != TK_SUCCESS)
    requireRefusal(status, error, {TK_ERROR_INVALID_ARGUMENT});
}
