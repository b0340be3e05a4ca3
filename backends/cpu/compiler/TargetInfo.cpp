//===- TargetInfo.cpp - the host as a TargetInfo --------------------------===//
//
// A program instance runs on one host thread and its tiles are host vectors:
// a "warp" of one lane, the host's vector width, no matrix intrinsics.
//
//===----------------------------------------------------------------------===//

#include "compiler/TargetInfo.h"

#include "tk/core/TargetInfo.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

namespace {

/// The vector width of the host, from the features LLVM detects.
int64_t hostVectorBytes() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto has = [&](llvm::StringRef name) { return features.lookup(name); };
  if (has("avx512f"))
    return 64;
  if (has("avx") || has("sve"))
    return 32;
  return 16;
}

tk::TargetInfo host() {
  tk::TargetInfo info;
  info.name = "cpu";
  // The CPU backend may run a program's one-lane "warps" in turn, so the
  // workgroup limit is a sanity bound, not hardware.
  info.warpSize = 1;
  info.maxThreadsPerBlock = 1024;
  info.maxVectorLoadBytes = hostVectorBytes();
  return info;
}

} // namespace

void tk::cpu::registerTargetPresets() {
  registerTargetPreset("cpu", {"host"}, host);
}
