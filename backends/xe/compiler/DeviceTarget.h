//===- DeviceTarget.h - the GPU Intel code is made for ---------*- C++ -*-===//
//
// The targets tk compiles for and their names: what the compiler compiles
// for, and what the plugin's compile_target answers, which the driver-only
// plugin has too (no MLIR here).
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_XE_COMPILER_DEVICETARGET_H_
#define TK_BACKENDS_XE_COMPILER_DEVICETARGET_H_

#include "tk/tk.h"

#include <string>
#include <string_view>
#include <vector>

namespace tk::xe {

/// The Intel GPU a kernel is compiled for.
struct Target {
  /// tk's name of it, the one TK_XE_ARCH and tk-compile --arch take: "pvc".
  std::string name;
  /// The TargetInfo preset of its family (compiler/TargetInfo.cpp).
  std::string preset;
  /// The work-items of a subgroup the kernel is compiled for: 16 on pvc
  /// (DPAS's width there), 8 on dg2.
  int subgroupSize = 16;
  /// ocloc's -device name of it: "pvc", "dg2-g10".
  std::string oclocDevice;
  /// iga64's -p platform of it: "12p72" (Xe-HPC), "12p71" (Xe-HPG).
  std::string igaPlatform;
  /// Whether a thread may take 256 GRFs instead of 128 (Xe-HPC's large
  /// register file mode, at half the threads an EU).
  bool largeRegisterFile = false;
  /// Whether it computes in f64 (Xe-HPG has no double-precision unit, and
  /// IGC refuses f64 code for it).
  bool fp64 = true;
};

/// The targets tk compiles for: pvc (Data Center GPU Max) and dg2 (Arc
/// A-series). TK_ERROR_UNSUPPORTED names them for any other name.
tk_status parseTarget(std::string_view name, Target &out, std::string &error);

/// Every target parseTarget knows, in order.
const std::vector<Target> &knownTargets();

} // namespace tk::xe

#endif // TK_BACKENDS_XE_COMPILER_DEVICETARGET_H_
