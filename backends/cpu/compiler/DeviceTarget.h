//===- DeviceTarget.h - what CPU code is made for ---------------*- C++ -*-===//
//
// The CPU a kernel's shared object is compiled for. By default the host
// itself, as LLVM describes it (its CPU name and features: Compiler.h's
// compileTargetName), which only a compiler can name. For packages that other
// machines load, a level of the x86-64 psABI (TK_CPU_ARCH=x86-64-v3, or
// tk-compile --target cpu:x86-64-v3): code for every CPU of that level, which
// the driver-only plugin can check without LLVM. No MLIR or LLVM here.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CPU_COMPILER_DEVICETARGET_H_
#define TK_BACKENDS_CPU_COMPILER_DEVICETARGET_H_

#include "tk/tk.h"

#include <string>
#include <string_view>

namespace tk::cpu {

/// The symbols of a kernel's shared object the driver looks up after the
/// entry's name: the launch wrapper, and an i64 constant, the bytes of the
/// kernel's static allocas (its tiles) in one program (ProgramStack.h).
inline constexpr char kLaunchSymbolSuffix[] = "_tk_launch";
inline constexpr char kStackBytesSymbolSuffix[] = "_tk_stack_bytes";

/// The target triple levels are made for ("x86_64-pc-linux-gnu", as LLVM
/// names this host), or "" on a host tk has no levels for.
std::string_view levelTriple();

/// Whether `arch` names a level: "x86-64", "x86-64-v2", "x86-64-v3",
/// "x86-64-v4".
bool isLevel(std::string_view arch);

/// The highest level this CPU runs, or "" where there are none.
std::string hostLevel();

/// TK_CPU_ARCH's level into `level` ("" when unset: the host's own CPU);
/// TK_ERROR_INVALID_ARGUMENT naming the levels for anything else.
tk_status requestedLevel(std::string &level, std::string &error);

/// The compile target of code for `level`: "x86_64-pc-linux-gnu x86-64-v3".
std::string levelTargetName(std::string_view level);

/// Whether code compiled for target `name` runs on this CPU without a
/// compiler to ask: a level's target that this CPU has.
bool levelRunsOnHost(std::string_view name);

} // namespace tk::cpu

#endif // TK_BACKENDS_CPU_COMPILER_DEVICETARGET_H_
