//===- MmaSync.h - tk.dot on NVIDIA mma.sync --------------------*- C++ -*-===//
//
// The CUDA backend's tk::MatrixUnit: warp-level mma.sync.m16n8k16 (fp16 and
// bf16 into fp32), available from sm_80.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CUDA_COMPILER_MMASYNC_H_
#define TK_BACKENDS_CUDA_COMPILER_MMASYNC_H_

#include "tk/core/Conversion/Passes.h"

namespace tk::cuda {

class MmaSyncUnit : public tk::MatrixUnit {
public:
  bool supports(mlir::Type a, mlir::Type b, mlir::Type accumulator, int64_t m,
                int64_t n, int64_t k) const override;
  mlir::LogicalResult emit(mlir::OpBuilder &builder, mlir::Location loc,
                           const Product &product) const override;
  /// m16n8 tiles dealt to the warps in turn.
  std::optional<HeldLayout>
  emittedLayout(const HeldProduct &product) const override;

  std::optional<SharedLayout> operandLayout(const HeldProduct &product,
                                            unsigned operand) const override;
  std::optional<HeldLayout>
  heldLayout(const HeldProduct &product) const override;
  /// False: each row of the held accumulator lies in one quad of lanes
  /// where the warps are stacked by rows, but shuffling rows over those
  /// quads has not yet run on a GPU: sm_80 rows go through workgroup memory.
  bool keepsRowsInRegisters(const HeldProduct &product) const override {
    return false;
  }
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  accumulate(mlir::OpBuilder &builder, mlir::Location loc,
             const HeldProduct &product, mlir::Value a, mlir::Value b,
             mlir::ValueRange registers) const override;
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
