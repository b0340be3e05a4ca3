//===- Wgmma.h - tk.dot on NVIDIA warpgroup MMA (sm_90a) --------*- C++ -*-===//
//
// The CUDA backend's tk::MatrixUnit for sm_90a: warpgroup-level
// wgmma.mma_async m64nNk16 (fp16 and bf16 into fp32) with b read from
// shared memory through a matrix descriptor and a through one or from
// registers; warp-level products on mma.sync.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CUDA_COMPILER_WGMMA_H_
#define TK_BACKENDS_CUDA_COMPILER_WGMMA_H_

#include "compiler/MmaSync.h"

namespace tk::cuda {

class WgmmaUnit : public tk::MatrixUnit {
public:
  /// wgmma reads through the async proxy: every thread fences its ordinary
  /// stores for it (fence.proxy.async.shared::cta), then the barrier.
  void publishOperands(mlir::OpBuilder &builder,
                       mlir::Location loc) const override;
  /// wgmma.mma_async on b read through a matrix descriptor (32, 64 or
  /// 128-byte swizzles) and a through one or from registers, one commit
  /// group for all tiles, then wgmma.wait_group `pending` through the
  /// accumulators (emitWarpgroupWait).
  mlir::FailureOr<llvm::SmallVector<llvm::SmallVector<mlir::Value>>>
  emitWarpgroupProducts(mlir::OpBuilder &builder, mlir::Location loc,
                        const MatrixIntrinsic &intrinsic, int64_t n,
                        const WarpgroupOperand &a, const WarpgroupOperand &b,
                        llvm::ArrayRef<WarpgroupTile> tiles,
                        int64_t pending) const override;
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitWarpgroupWait(mlir::OpBuilder &builder, mlir::Location loc,
                    mlir::ValueRange registers, int64_t pending) const override;
  /// Warp-scope intrinsics on fragments: mma.sync.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitFragmentProduct(mlir::OpBuilder &builder, mlir::Location loc,
                      const MatrixIntrinsic &intrinsic, mlir::ValueRange a,
                      mlir::ValueRange b,
                      mlir::ValueRange accumulator) const override {
    return emitMmaSyncFragments(builder, loc, intrinsic, a, b, accumulator);
  }
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  loadMatrices(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value buffer,
               mlir::Value index, int64_t count, bool transpose,
               mlir::Type element) const override {
    return emitLdMatrix(builder, loc, buffer, index, count, transpose, element);
  }
};

} // namespace tk::cuda

#endif // TK_BACKENDS_CUDA_COMPILER_WGMMA_H_
