//===- PluginSupport.h - what every plugin's ABI table needs ----*- C++ -*-===//
//
// Header-only helpers for the exported side of tk_plugin.h, shared by the
// backends so that each keeps only what is its own.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_COMMON_PLUGINSUPPORT_H_
#define TK_BACKENDS_COMMON_PLUGINSUPPORT_H_

#include "tk/core/CompileSupport.h"
#include "tk/tk_plugin.h"

#include <cstring>
#include <string>

namespace tk::plugin {

/// The status a plugin's compile returns for readKernelModule's answer.
inline tk_status statusOf(tk::KernelModuleError error) {
  switch (error) {
  case tk::KernelModuleError::None:
    return TK_SUCCESS;
  case tk::KernelModuleError::InvalidIR:
    return TK_ERROR_INVALID_IR;
  case tk::KernelModuleError::UnknownEntry:
    return TK_ERROR_NOT_FOUND;
  }
  return TK_ERROR_INVALID_IR;
}

/// Copies the fields of `full` that fit in the caller's `out->struct_size`
/// (ABI structs only grow at the end), and records the size copied.
template <typename Versioned>
void copyVersioned(Versioned full, Versioned *out) {
  size_t size =
      out->struct_size < sizeof(full) ? out->struct_size : sizeof(full);
  full.struct_size = size;
  std::memcpy(out, &full, size);
}

/// tk_backend_get_interface's answer: `table` for the major version it was
/// built for; otherwise NULL, with `lastError` naming both versions.
inline const tk_backend_interface *
interfaceForAbi(uint32_t abiMajor, const tk_backend_interface &table,
                std::string &lastError) {
  if (abiMajor == TK_PLUGIN_ABI_MAJOR)
    return &table;
  lastError = std::string("tk-") + table.name + ": built for plugin ABI " +
              std::to_string(TK_PLUGIN_ABI_MAJOR) + ", asked for " +
              std::to_string(abiMajor);
  return nullptr;
}

} // namespace tk::plugin

#endif // TK_BACKENDS_COMMON_PLUGINSUPPORT_H_
