//===- DeviceTarget.h - the GPU AMD code is made for ---------*- C++ -*-===//
//
// The targets tk compiles for and their names: what the compiler compiles
// for, and what the plugin's compile_target answers, which the driver-only
// plugin has too (no MLIR here).
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_ROCM_COMPILER_DEVICETARGET_H_
#define TK_BACKENDS_ROCM_COMPILER_DEVICETARGET_H_

#include "tk/tk.h"

#include <string>
#include <string_view>
#include <vector>

namespace tk::rocm {

struct Target {
  /// The gfx name LLVM and the HIP runtime use: "gfx942".
  std::string arch;
  /// The TargetInfo preset of its family (compiler/TargetInfo.cpp).
  std::string preset;
  /// Lanes of a wave: 64 on CDNA, 32 on RDNA.
  int waveSize = 64;
};

/// The targets tk compiles for: gfx942 (CDNA3), gfx90a (CDNA2), gfx1100
/// (RDNA3). TK_ERROR_UNSUPPORTED names them for any other name.
tk_status parseTarget(std::string_view arch, Target &out, std::string &error);

} // namespace tk::rocm

#endif // TK_BACKENDS_ROCM_COMPILER_DEVICETARGET_H_
