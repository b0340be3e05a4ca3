//===- DeviceTarget.cpp - the GPU Intel code is made for -----------------===//

#include "compiler/DeviceTarget.h"

namespace tk::xe {

const std::vector<Target> &knownTargets() {
  static const std::vector<Target> targets = {
      {"pvc", "intel-pvc", 16, "pvc", "12p72", /*largeRegisterFile=*/true,
       /*fp64=*/true},
      {"dg2", "intel-dg2", 8, "dg2-g10", "12p71", /*largeRegisterFile=*/false,
       /*fp64=*/false},
  };
  return targets;
}

tk_status parseTarget(std::string_view name, Target &out, std::string &error) {
  for (const Target &target : knownTargets())
    if (name == target.name) {
      out = target;
      return TK_SUCCESS;
    }
  error = "tk-xe: unknown Intel GPU target '" + std::string(name) +
          "' (tk compiles for pvc and dg2)";
  return TK_ERROR_UNSUPPORTED;
}

} // namespace tk::xe
