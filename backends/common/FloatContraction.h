//===- FloatContraction.h - a multiply-add rounded once ---------*- C++ -*-===//
//
// What the backends ending in LLVM for a GPU do to a kernel's float
// arithmetic before converting it: a multiplication and the addition it
// feeds may round once.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_COMMON_FLOATCONTRACTION_H_
#define TK_BACKENDS_COMMON_FLOATCONTRACTION_H_

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"

namespace tk::plugin {

/// Gives the kernel's float additions, subtractions and multiplications
/// `contract`, which the LLVM dialect carries to the target: a product and
/// the sum it feeds become one fused multiply-add (NVIDIA's fma.rn.f32,
/// AMD's v_fma_f32), as nvcc (--fmad=true), hipcc and Triton
/// (enable_fp_fusion) compile them. FlashAttention's `qk * scale - m` is
/// then one instruction an element, not two. Only these ops: the vendor
/// libraries (libdevice, ocml) keep their own rounding, where a contraction
/// allowed for the whole module (TargetOptions::AllowFPOpFusion) changed
/// libdevice's exp and ptxas then spilled a 32-register softmax.
inline void allowFloatContraction(mlir::ModuleOp module) {
  auto contract = [](auto op) {
    op.setFastmath(op.getFastmath() | mlir::arith::FastMathFlags::contract);
  };
  module.walk([&](mlir::Operation *op) {
    if (auto add = mlir::dyn_cast<mlir::arith::AddFOp>(op))
      contract(add);
    else if (auto sub = mlir::dyn_cast<mlir::arith::SubFOp>(op))
      contract(sub);
    else if (auto mul = mlir::dyn_cast<mlir::arith::MulFOp>(op))
      contract(mul);
  });
}

} // namespace tk::plugin

#endif // TK_BACKENDS_COMMON_FLOATCONTRACTION_H_
