//===- DeviceProbe.h - cheap answers before a driver is started -*- C++ -*-===//
//
// When TK_BACKEND is unset, libtk asks every plugin for devices, and
// starting a driver to hear "no device" costs: hipInit 16 ms, a Vulkan
// instance on Mesa 30 ms. A GPU driver needs its device node, so a plugin
// whose user did not name it first looks for the node, and only starts the
// driver where one exists. A plugin TK_BACKEND names always starts its
// driver, so its own errors stay what they are. libtk asks the same table
// (getDeviceNodes) before it loads such a plugin at all: loading one costs
// 2-4 ms of relocations.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_COMMON_DEVICEPROBE_H_
#define TK_BACKENDS_COMMON_DEVICEPROBE_H_

#include <glob.h>

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>

namespace tk::plugin {

/// Whether TK_BACKEND, a comma list, names `backend`.
inline bool backendNamedByUser(std::string_view backend) {
  const char *value = std::getenv("TK_BACKEND");
  if (!value)
    return false;
  std::string_view rest(value);
  auto trim = [](std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
      text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t'))
      text.remove_suffix(1);
    return text;
  };
  while (true) {
    size_t comma = rest.find(',');
    if (trim(rest.substr(0, comma)) == backend)
      return true;
    if (comma == std::string_view::npos)
      return false;
    rest.remove_prefix(comma + 1);
  }
}

/// The first path that matches one of `patterns` (shell globs, as
/// "/dev/dri/renderD*"), or "" where none does.
inline std::string
findDeviceNode(std::initializer_list<const char *> patterns) {
  for (const char *pattern : patterns) {
    glob_t found = {};
    bool matched = glob(pattern, 0, nullptr, &found) == 0 && found.gl_pathc > 0;
    std::string first = matched ? found.gl_pathv[0] : "";
    globfree(&found);
    if (matched)
      return first;
  }
  return "";
}

/// The device nodes, as globs, without which a GPU backend's driver has no
/// device: the DRM render nodes and NVIDIA's or WSL's nodes for vulkan, the
/// KFD node for rocm, render nodes for xe. Empty for a backend whose driver
/// is cheap to ask (cuda: libcuda says "no device" at once) or that needs
/// none (cpu, a plugin tk does not know).
inline std::initializer_list<const char *>
getDeviceNodes(std::string_view backend) {
  static constexpr std::initializer_list<const char *> vulkan = {
      "/dev/dri/renderD*", "/dev/nvidia[0-9]*", "/dev/dxg"};
  static constexpr std::initializer_list<const char *> rocm = {"/dev/kfd"};
  static constexpr std::initializer_list<const char *> xe = {
      "/dev/dri/renderD*"};
  if (backend == "vulkan")
    return vulkan;
  if (backend == "rocm")
    return rocm;
  if (backend == "xe")
    return xe;
  return {};
}

/// Whether `backend` may skip starting its driver: TK_BACKEND does not name
/// it, and `nodes` is not empty and none of them exists. Then `error` says so,
/// naming the nodes.
inline bool noDeviceNode(std::string_view backend,
                         std::initializer_list<const char *> nodes,
                         std::string &error) {
  if (nodes.size() == 0 || backendNamedByUser(backend) ||
      !findDeviceNode(nodes).empty())
    return false;
  error = "tk-" + std::string(backend) + ": no ";
  const char *separator = "";
  for (const char *node : nodes) {
    error += separator;
    error += node;
    separator = " nor ";
  }
  error += " here, so no GPU for the driver; it is started only where one "
           "exists or TK_BACKEND names " +
           std::string(backend);
  return true;
}

} // namespace tk::plugin

#endif // TK_BACKENDS_COMMON_DEVICEPROBE_H_
