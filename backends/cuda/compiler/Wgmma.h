//===- Wgmma.h - tk.dot on NVIDIA warpgroup MMA (sm_90a) --------*- C++ -*-===//
//
// The CUDA backend's tk::MatrixUnit for sm_90a: warpgroup-level
// wgmma.mma_async m64nNk16 (fp16 and bf16 into fp32) with b read from
// shared memory through a matrix descriptor and a through one or from
// registers. Products it cannot take go to mma.sync.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CUDA_COMPILER_WGMMA_H_
#define TK_BACKENDS_CUDA_COMPILER_WGMMA_H_

#include "compiler/MmaSync.h"

namespace tk::cuda {

class WgmmaUnit : public tk::MatrixUnit {
public:
  bool supports(mlir::Type a, mlir::Type b, mlir::Type accumulator, int64_t m,
                int64_t n, int64_t k) const override;
  mlir::LogicalResult emit(mlir::OpBuilder &builder, mlir::Location loc,
                           const Product &product) const override;
  /// 64-row tiles dealt to the warpgroups in turn (warpgroupTiles); a
  /// product wgmma does not take, as mma.sync deals it.
  std::optional<HeldLayout>
  emittedLayout(const HeldProduct &product) const override;

  llvm::SmallVector<mlir::Value> finish(mlir::OpBuilder &builder,
                                        mlir::Location loc,
                                        const HeldProduct &product,
                                        mlir::ValueRange registers,
                                        int64_t stillRunning) const override;
  bool defersWaits(const HeldProduct &product) const override;
  std::optional<SharedLayout> operandLayout(const HeldProduct &product,
                                            unsigned operand) const override;
  std::optional<HeldLayout>
  heldLayout(const HeldProduct &product) const override;
  bool keepsRowsInRegisters(const HeldProduct &product) const override;
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  accumulate(mlir::OpBuilder &builder, mlir::Location loc,
             const HeldProduct &product, mlir::Value a, mlir::Value b,
             mlir::ValueRange registers) const override;
  void publishOperands(mlir::OpBuilder &builder,
                       mlir::Location loc) const override;
  bool takesRegisterA(const HeldProduct &product,
                      const HeldProduct &from) const override;
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  accumulateRegisterA(mlir::OpBuilder &builder, mlir::Location loc,
                      const HeldProduct &product, const HeldProduct &from,
                      mlir::ValueRange aElements, mlir::Value b,
                      mlir::ValueRange registers) const override;
  /// The register pipeline's warpgroup products: wgmma.mma_async on b
  /// read through a matrix descriptor (32, 64 or 128-byte swizzles) and a
  /// through one or from registers, one commit group for all tiles, then
  /// wgmma.wait_group `pending` through the accumulators
  /// (emitWarpgroupWait).
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

private:
  /// Takes the products whose shape or thread count wgmma cannot (m not a
  /// multiple of 64, a program that is not whole warpgroups).
  MmaSyncUnit fallback;
};

} // namespace tk::cuda

#endif // TK_BACKENDS_CUDA_COMPILER_WGMMA_H_
