//===- Device.h - the host CPU as a tk device -------------------*- C++ -*-===//
//
// Fills tk_device_props for the one CPU device.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CPU_DRIVER_DEVICE_H_
#define TK_BACKENDS_CPU_DRIVER_DEVICE_H_

#include "tk/tk.h"

namespace tk::cpu {

/// Fills the fields of `out` that fit in its struct_size.
void queryDevice(tk_device_props *out);

} // namespace tk::cpu

#endif // TK_BACKENDS_CPU_DRIVER_DEVICE_H_
