//===- CompiledBinary.h - a kernel's binary and launch facts ----*- C++ -*-===//
//
// What a plugin's compile returns, as the kernel cache and packages keep it,
// and where a kernel's binary came from. No LLVM: the runtime that loads
// packages uses it.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_COMPILEDBINARY_H_
#define TK_RUNTIME_COMPILEDBINARY_H_

#include <cstdint>
#include <vector>

namespace tk::runtime {

/// A packaged kernel and what the launch and occupancy need to know of it.
struct CompiledBinary {
  std::vector<uint8_t> data;
  int32_t numWarps = 0;
  int32_t sharedMemoryBytes = 0;
  int32_t registersPerThread = 0;
};

/// Where a kernel's binary came from: the kernel cache's memory or disk, a
/// fresh compile, or a package (TK_SOURCE_PACKAGE).
enum class BinaryOrigin { Memory, Disk, Compiler, Package };

} // namespace tk::runtime

#endif // TK_RUNTIME_COMPILEDBINARY_H_
