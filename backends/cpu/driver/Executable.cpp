//===- Executable.cpp - a loaded CPU kernel ---------------------*- C++ -*-===//
//
// Loads the relocatable object the compiler made with ORC's LLJIT (JITLink),
// resolving libm, libc and the runtime helpers LLVM may call (memcpy,
// __truncsfhf2, ...) from the current process.
//
//===----------------------------------------------------------------------===//

#include "driver/Executable.h"
#include "compiler/Compiler.h"
#include "compiler/Passes.h"
#include "compiler/ProgramStack.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MemoryBuffer.h"

namespace tk::cpu {

Executable::~Executable() = default;

tk_status loadExecutable(const void *object, size_t size,
                         const std::string &entry,
                         std::unique_ptr<Executable> &out, std::string &error) {
  initializeNativeTarget();
  auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!host) {
    error = "tk-cpu: cannot describe the host CPU: " +
            llvm::toString(host.takeError());
    return TK_ERROR_DEVICE;
  }
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(*host))
                 .create();
  if (!jit) {
    error = "tk-cpu: cannot create the JIT: " + llvm::toString(jit.takeError());
    return TK_ERROR_DEVICE;
  }
  char prefix = (*jit)->getDataLayout().getGlobalPrefix();
  auto generator =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!generator) {
    error = "tk-cpu: cannot search the process's symbols: " +
            llvm::toString(generator.takeError());
    return TK_ERROR_DEVICE;
  }
  (*jit)->getMainJITDylib().addGenerator(std::move(*generator));
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(static_cast<const char *>(object), size), entry + ".o");
  if (llvm::Error err = (*jit)->addObjectFile(std::move(buffer))) {
    error = "tk-cpu: cannot load the kernel object: " +
            llvm::toString(std::move(err));
    return TK_ERROR_INVALID_ARGUMENT;
  }
  std::string symbol = entry + kLaunchSuffix.str();
  auto address = (*jit)->lookup(symbol);
  if (!address) {
    error = "tk-cpu: cannot link kernel '" + entry +
            "': " + llvm::toString(address.takeError());
    return TK_ERROR_NOT_FOUND;
  }
  // The size of the program's tiles, which decides the threads it may run
  // on. Every object tk-cpu 3 makes has it.
  auto stackBytes = (*jit)->lookup(entry + kStackBytesSuffix.str());
  if (!stackBytes) {
    error = "tk-cpu: kernel '" + entry +
            "' has no tile size record (an object of an older tk-cpu?): " +
            llvm::toString(stackBytes.takeError());
    return TK_ERROR_INVALID_ARGUMENT;
  }
  out = std::make_unique<Executable>();
  out->tileStackBytes = *stackBytes->toPtr<const uint64_t *>();
  out->launch = address->toPtr<LaunchFn>();
  out->jit = std::move(*jit);
  out->entry = entry;
  return TK_SUCCESS;
}

} // namespace tk::cpu
