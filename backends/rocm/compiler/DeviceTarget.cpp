//===- DeviceTarget.cpp - the GPU AMD code is made for -----------------===//

#include "compiler/DeviceTarget.h"

namespace tk::rocm {

tk_status parseTarget(std::string_view arch, Target &out, std::string &error) {
  struct Known {
    const char *arch, *preset;
    int waveSize;
  };
  static const Known known[] = {
      {"gfx942", "amd-cdna3", 64},
      {"gfx90a", "amd-cdna2", 64},
      {"gfx1100", "amd-rdna3", 32},
  };
  // The runtime names a device "gfx942:sramecc+:xnack-"; the features do
  // not change the code tk emits.
  std::string_view name = arch.substr(0, arch.find(':'));
  for (const Known &k : known)
    if (name == k.arch) {
      out = Target{k.arch, k.preset, k.waveSize};
      return TK_SUCCESS;
    }
  error = "tk-rocm: unknown AMD target '" + std::string(arch) +
          "' (tk compiles for gfx942, gfx90a and gfx1100)";
  return TK_ERROR_UNSUPPORTED;
}

} // namespace tk::rocm
