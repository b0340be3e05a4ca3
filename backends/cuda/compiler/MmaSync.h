//===- MmaSync.h - tk.dot on NVIDIA mma.sync --------------------*- C++ -*-===//
//
// The CUDA backend's tk::MatrixUnit below sm_90a: warp-level mma.sync
// (m16n8k16 for fp16 and bf16, m16n8k8 for tf32, into fp32) and ldmatrix,
// available from sm_80.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CUDA_COMPILER_MMASYNC_H_
#define TK_BACKENDS_CUDA_COMPILER_MMASYNC_H_

#include "tk/core/Conversion/Passes.h"

namespace tk::cuda {

class MmaSyncUnit : public tk::MatrixUnit {
public:
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitFragmentProduct(mlir::OpBuilder &builder, mlir::Location loc,
                      const MatrixIntrinsic &intrinsic, mlir::ValueRange a,
                      mlir::ValueRange b,
                      mlir::ValueRange accumulator) const override;
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  loadMatrices(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value buffer,
               mlir::Value index, int64_t count, bool transpose,
               mlir::Type element) const override;
};

/// ldmatrix of `count` 8x8 matrices of 16-bit `element`s (f16, bf16),
/// MatrixUnit::loadMatrices; failure for other counts and elements.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
emitLdMatrix(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value buffer,
             mlir::Value index, int64_t count, bool transpose,
             mlir::Type element);

/// One mma.sync of `intrinsic` (m16n8k16 f16 or bf16, m16n8k8 tf32, into
/// f32) on a lane's fragments, elements in the register
/// order of TargetInfo's fragment layouts; failure for the others.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
emitMmaSyncFragments(mlir::OpBuilder &builder, mlir::Location loc,
                     const MatrixIntrinsic &intrinsic, mlir::ValueRange a,
                     mlir::ValueRange b, mlir::ValueRange accumulator);

} // namespace tk::cuda

#endif // TK_BACKENDS_CUDA_COMPILER_MMASYNC_H_
