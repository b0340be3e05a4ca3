//===- Executable.h - a loaded CPU kernel -----------------------*- C++ -*-===//
//
// An object file linked into its own ORC LLJIT instance, and the address of
// its launch entry point.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CPU_DRIVER_EXECUTABLE_H_
#define TK_BACKENDS_CPU_DRIVER_EXECUTABLE_H_

#include "driver/ThreadPool.h"
#include "tk/tk_plugin.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace tk::cpu {

struct Executable {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  LaunchFn launch = nullptr;
  /// Stack bytes one program's tiles take (`<entry>_tk_stack_bytes`).
  uint64_t tileStackBytes = 0;
  std::string entry;
  std::vector<tk_plugin_arg_type> argTypes;
  ~Executable();
};

/// Links `object` into a fresh JIT (libm and the process's symbols
/// resolvable) and finds `<entry>_tk_launch`.
tk_status loadExecutable(const void *object, size_t size,
                         const std::string &entry,
                         std::unique_ptr<Executable> &out, std::string &error);

} // namespace tk::cpu

#endif // TK_BACKENDS_CPU_DRIVER_EXECUTABLE_H_
