//===- RegisterTargetPresets.h - every backend's TargetInfo presets -*- C++
//-*-//
//
// For the programs that run the layout passes for any target (tk-opt, the
// TargetInfo and fragment tests): TargetPresets.def, which CMake writes with
// a line for every backend that called tk_add_target_presets, names each
// backend's tk::<backend>::registerTargetPresets(); TargetUnits.def, a line
// for every backend that called tk_add_target_units, its
// tk::<backend>::registerTargetUnits().
//
//===----------------------------------------------------------------------===//

#ifndef TK_TOOLS_TK_OPT_REGISTERTARGETPRESETS_H_
#define TK_TOOLS_TK_OPT_REGISTERTARGETPRESETS_H_

#define TK_TARGET_PRESETS(backend)                                             \
  namespace tk::backend {                                                      \
  void registerTargetPresets();                                                \
  }
#include "TargetPresets.def"
#undef TK_TARGET_PRESETS

#define TK_TARGET_UNITS(backend)                                               \
  namespace tk::backend {                                                      \
  void registerTargetUnits();                                                  \
  }
#include "TargetUnits.def"
#undef TK_TARGET_UNITS

namespace tk {

/// Registers the presets of every backend built (idempotent).
inline void registerAllTargetPresets() {
#define TK_TARGET_PRESETS(backend) tk::backend::registerTargetPresets();
#include "TargetPresets.def"
#undef TK_TARGET_PRESETS
}

/// Registers the matrix and async copy units of every backend built that has
/// them (TargetUnits.def, from tk_add_target_units), for
/// tk-convert-registers-to-simt units=<preset> (idempotent).
inline void registerAllTargetUnits() {
#define TK_TARGET_UNITS(backend) tk::backend::registerTargetUnits();
#include "TargetUnits.def"
#undef TK_TARGET_UNITS
}

} // namespace tk

#endif // TK_TOOLS_TK_OPT_REGISTERTARGETPRESETS_H_
