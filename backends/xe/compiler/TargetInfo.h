//===- TargetInfo.h - the Xe backend's TargetInfo presets -------*- C++ -*-===//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_XE_COMPILER_TARGETINFO_H_
#define TK_BACKENDS_XE_COMPILER_TARGETINFO_H_

namespace tk::xe {

/// Registers intel-pvc (pvc) and intel-dg2 (dg2) with core's registry.
/// Idempotent.
void registerTargetPresets();

} // namespace tk::xe

#endif // TK_BACKENDS_XE_COMPILER_TARGETINFO_H_
