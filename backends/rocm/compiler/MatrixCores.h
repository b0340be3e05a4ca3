//===- MatrixCores.h - tk.dot on AMD's MFMA and WMMA ------------*- C++ -*-===//
//
// The matrix unit of CDNA (MFMA, wave64) and RDNA3 (WMMA, wave32): core's
// LayoutMatrixUnit, which takes each instruction's shape and lane mapping
// from the TargetInfo preset, with AMD's operand packing and the call of
// `llvm.amdgcn.<preset name>`.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_ROCM_COMPILER_MATRIXCORES_H_
#define TK_BACKENDS_ROCM_COMPILER_MATRIXCORES_H_

#include "tk/core/Conversion/LayoutMatrixUnit.h"

#include <memory>

namespace tk::rocm {

class MatrixCoreUnit : public tk::LayoutMatrixUnit {
public:
  explicit MatrixCoreUnit(tk::TargetInfo info)
      : LayoutMatrixUnit(std::move(info)) {}

  /// f16 as they are, bf16 as their 16 bits, i8 and fp8 packed into one
  /// integer (MFMA) or into i32s (WMMA), one f64 as a scalar.
  mlir::Type operandType(mlir::OpBuilder &builder,
                         const tk::MatrixIntrinsic &intrinsic, unsigned operand,
                         mlir::Type element, int64_t count) const override;
  mlir::Value multiply(mlir::OpBuilder &builder, mlir::Location loc,
                       const tk::MatrixIntrinsic &intrinsic, mlir::Value a,
                       mlir::Value b, mlir::Value accumulator) const override;
};

/// The unit for `info`, or null when its preset has no matrix instruction.
std::shared_ptr<const tk::MatrixUnit>
makeMatrixUnit(const tk::TargetInfo &info);

} // namespace tk::rocm

#endif // TK_BACKENDS_ROCM_COMPILER_MATRIXCORES_H_
