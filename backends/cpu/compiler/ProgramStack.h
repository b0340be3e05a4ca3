//===- ProgramStack.h - the stack a CPU program's tiles take ----*- C++ -*-===//
//
// A program's tiles are allocas of its function: they live on the stack of
// the thread that runs it. The compiler measures them and refuses what no
// thread could hold; the driver runs programs whose tiles would not fit the
// launching thread's stack on its own workers only.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CPU_COMPILER_PROGRAMSTACK_H_
#define TK_BACKENDS_CPU_COMPILER_PROGRAMSTACK_H_

#include <cstdint>

namespace tk::cpu {

/// The stack of each worker thread, and the part of it tiles may take (the
/// rest is for frames, spills and libm).
inline constexpr uint64_t kWorkerStackBytes = 64ull << 20;
inline constexpr uint64_t kMaxTileStackBytes = 48ull << 20;

/// Stack a program needs besides its tiles (frames, spills, libm): the
/// launching thread, whose stack is the application's (glibc gives 8 MiB,
/// musl 128 KiB), runs programs too only where it has this much left over
/// the tiles.
inline constexpr uint64_t kStackMarginBytes = 256ull << 10;

} // namespace tk::cpu

#endif // TK_BACKENDS_CPU_COMPILER_PROGRAMSTACK_H_
