//===- TargetInfo.h - the CPU backend's TargetInfo presets ------*- C++ -*-===//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CPU_COMPILER_TARGETINFO_H_
#define TK_BACKENDS_CPU_COMPILER_TARGETINFO_H_

namespace tk::cpu {

/// Registers the `cpu` preset (the host) with core's registry. Idempotent.
void registerTargetPresets();

} // namespace tk::cpu

#endif // TK_BACKENDS_CPU_COMPILER_TARGETINFO_H_
