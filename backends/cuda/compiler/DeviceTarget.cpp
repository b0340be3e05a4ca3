//===- DeviceTarget.cpp - the GPU CUDA code is made for -------------------===//

#include "compiler/DeviceTarget.h"

#include <cstdlib>
#include <regex>

namespace tk::cuda {

tk_status targetForComputeCapability(int computeCapability, Target &out,
                                     std::string &error) {
  if (computeCapability < 80) {
    error = "tk-cuda: compute capability " +
            std::to_string(computeCapability / 10) + "." +
            std::to_string(computeCapability % 10) +
            " is not supported: tk needs sm_80 (Ampere) or newer";
    return TK_ERROR_UNSUPPORTED;
  }
  if (computeCapability < 90) {
    out = Target{computeCapability, /*archSpecific=*/false};
  } else if (computeCapability == 90) {
    // Hopper: the "a" features (wgmma, setmaxnreg) run only on 9.0 itself.
    out = Target{90, /*archSpecific=*/true};
  } else {
    // Newer GPUs: portable sm_90 code, whose PTX the driver JIT-compiles
    // (sm_90a's instructions do not exist there).
    out = Target{90, /*archSpecific=*/false};
  }
  return TK_SUCCESS;
}

tk_status parseTargetName(const std::string &name, Target &out,
                          std::string &error) {
  static const std::regex pattern("sm_([0-9]{2,3})(a?)");
  std::smatch match;
  if (std::regex_match(name, match, pattern)) {
    int computeCapability = std::atoi(match[1].str().c_str());
    bool archSpecific = match[2].length() == 1;
    bool known = computeCapability == 80 || computeCapability == 86 ||
                 computeCapability == 89 || computeCapability == 90;
    // Only sm_90 has an "a" variant tk uses.
    if (known && (!archSpecific || computeCapability == 90)) {
      out = Target{computeCapability, archSpecific};
      return TK_SUCCESS;
    }
  }
  error = "tk-cuda: unknown CUDA target '" + name +
          "' (expected sm_80, sm_86, sm_89, sm_90 or sm_90a)";
  return TK_ERROR_INVALID_ARGUMENT;
}

bool runsOnComputeCapability(const std::string &name, int computeCapability) {
  // A lowering recorded beside the arch (packages from before 2026-12-05
  // name "sm_90a+simt-dots") does not change where the code runs.
  std::string arch = name.substr(0, name.find('+'));
  Target target;
  std::string ignored;
  if (parseTargetName(arch, target, ignored) != TK_SUCCESS)
    return false;
  if (target.archSpecific)
    return target.computeCapability == computeCapability;
  return target.computeCapability <= computeCapability;
}

} // namespace tk::cuda
