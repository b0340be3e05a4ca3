//===- RegisterTargetPresets.h - every backend's TargetInfo presets -*- C++
//-*-//
//
// For the programs that run the layout passes for any target (tk-opt, the
// TargetInfo and fragment tests): TargetPresets.def, which CMake writes with
// a line for every backend that called tk_add_target_presets, names each
// backend's tk::<backend>::registerTargetPresets().
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

namespace tk {

/// Registers the presets of every backend built (idempotent).
inline void registerAllTargetPresets() {
#define TK_TARGET_PRESETS(backend) tk::backend::registerTargetPresets();
#include "TargetPresets.def"
#undef TK_TARGET_PRESETS
}

} // namespace tk

#endif // TK_TOOLS_TK_OPT_REGISTERTARGETPRESETS_H_
