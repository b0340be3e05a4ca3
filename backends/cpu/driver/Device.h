//===- Device.h - the host CPU as a tk device -------------------*- C++ -*-===//
//
// Fills tk_device_props for the one CPU device.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CPU_DRIVER_DEVICE_H_
#define TK_BACKENDS_CPU_DRIVER_DEVICE_H_

#include "tk/tk.h"

#include <string>

namespace tk::cpu {

/// Fills the fields of `out` that fit in its struct_size, with `arch` as
/// the plugin names the CPU (LLVM's name of it, or its x86-64 level).
void queryDevice(tk_device_props *out, const std::string &arch);

} // namespace tk::cpu

#endif // TK_BACKENDS_CPU_DRIVER_DEVICE_H_
