//===- AccurateTrig.h - f32 sin and cos to a few ulp ------------*- C++ -*-===//
//
// GLSL.std.450's Sin and Cos carry no accuracy requirement, and drivers use
// approximations (NVIDIA's miss 1e-6 absolute near the functions' zeros);
// tk computes f32 sin and cos itself on every Vulkan device.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_VULKAN_COMPILER_ACCURATETRIG_H_
#define TK_BACKENDS_VULKAN_COMPILER_ACCURATETRIG_H_

#include "mlir/IR/Operation.h"

namespace tk::vulkan {

/// Replaces every f32 math.sin and math.cos under `root` (scalars or
/// vectors) by arith and math.fma: a three-constant Cody-Waite reduction by
/// pi/2 with fused multiply-adds, then the minimax polynomials of Cephes'
/// sinf/cosf on [-pi/4, pi/4], where |x| < 105615 (the conformance column's
/// f32 sin and cos cells, |x| < 10, use under 5% of their tolerance on
/// lavapipe). Beyond that bound the reduction loses bits, so larger
/// arguments keep the device's Sin/Cos, as before.
void expandAccurateSinCos(mlir::Operation *root);

} // namespace tk::vulkan

#endif // TK_BACKENDS_VULKAN_COMPILER_ACCURATETRIG_H_
