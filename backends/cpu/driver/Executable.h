//===- Executable.h - a loaded CPU kernel -----------------------*- C++ -*-===//
//
// A kernel's shared object, opened by the dynamic loader, and the address of
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

namespace tk::cpu {

struct Executable {
  /// dlopen's handle, closed with the executable.
  void *library = nullptr;
  /// The descriptor number of its /proc/self/fd name, held for the
  /// library's life (Executable.cpp), or -1.
  int nameNumber = -1;
  LaunchFn launch = nullptr;
  /// Stack bytes one program's tiles take (`<entry>_tk_stack_bytes`).
  uint64_t tileStackBytes = 0;
  std::string entry;
  std::vector<tk_plugin_arg_type> argTypes;
  ~Executable();
};

/// Opens the shared object `object` (Compiler.h's compileToSharedObject)
/// and finds `<entry>_tk_launch` and `<entry>_tk_stack_bytes`.
tk_status loadExecutable(const void *object, size_t size,
                         const std::string &entry,
                         std::unique_ptr<Executable> &out, std::string &error);

} // namespace tk::cpu

#endif // TK_BACKENDS_CPU_DRIVER_EXECUTABLE_H_
