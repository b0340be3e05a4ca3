//===- DeviceTarget.cpp - what CPU code is made for -----------------------===//

#include "compiler/DeviceTarget.h"

#include <cstdlib>

namespace tk::cpu {

namespace {
constexpr const char *kLevels[] = {"x86-64", "x86-64-v2", "x86-64-v3",
                                   "x86-64-v4"};

/// Whether this CPU runs `level`'s code.
bool hostHasLevel(std::string_view level) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  // __builtin_cpu_supports takes a literal.
  if (level == "x86-64")
    return __builtin_cpu_supports("x86-64");
  if (level == "x86-64-v2")
    return __builtin_cpu_supports("x86-64-v2");
  if (level == "x86-64-v3")
    return __builtin_cpu_supports("x86-64-v3");
  if (level == "x86-64-v4")
    return __builtin_cpu_supports("x86-64-v4");
#endif
  (void)level;
  return false;
}
} // namespace

std::string_view levelTriple() {
#if defined(__x86_64__) && defined(__linux__)
  return "x86_64-pc-linux-gnu";
#else
  return "";
#endif
}

bool isLevel(std::string_view arch) {
  for (const char *level : kLevels)
    if (arch == level)
      return true;
  return false;
}

std::string hostLevel() {
  if (levelTriple().empty())
    return "";
  std::string best;
  for (const char *level : kLevels)
    if (hostHasLevel(level))
      best = level;
  return best;
}

tk_status requestedLevel(std::string &level, std::string &error) {
  level.clear();
  const char *arch = std::getenv("TK_CPU_ARCH");
  if (!arch || !*arch || std::string_view(arch) == "host")
    return TK_SUCCESS;
  if (!isLevel(arch)) {
    error = "tk-cpu: TK_CPU_ARCH='" + std::string(arch) +
            "' is not host or an x86-64 level (x86-64, x86-64-v2, "
            "x86-64-v3, x86-64-v4)";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  if (levelTriple().empty()) {
    error = "tk-cpu: TK_CPU_ARCH='" + std::string(arch) +
            "': x86-64 levels are for x86-64 Linux hosts";
    return TK_ERROR_UNSUPPORTED;
  }
  level = arch;
  return TK_SUCCESS;
}

std::string levelTargetName(std::string_view level) {
  return std::string(levelTriple()) + " " + std::string(level);
}

bool levelRunsOnHost(std::string_view name) {
  std::string_view triple = levelTriple();
  if (triple.empty() || name.size() <= triple.size() + 1 ||
      name.substr(0, triple.size()) != triple || name[triple.size()] != ' ')
    return false;
  std::string_view level = name.substr(triple.size() + 1);
  return isLevel(level) && hostHasLevel(level);
}

} // namespace tk::cpu
