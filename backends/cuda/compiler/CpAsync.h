//===- CpAsync.h - asynchronous copies on NVIDIA sm_80+ ---------*- C++ -*-===//
//
// The CUDA backend's tk::AsyncCopyUnit: cp.async from global to shared
// memory, committed and waited for in groups.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CUDA_COMPILER_CPASYNC_H_
#define TK_BACKENDS_CUDA_COMPILER_CPASYNC_H_

#include "tk/core/Conversion/Passes.h"

namespace tk::cuda {

class CpAsyncUnit : public tk::AsyncCopyUnit {
public:
  /// `asyncProxyReaders`: the copies are read through the async proxy too
  /// (wgmma, sm_90+), so waits fence them for it.
  explicit CpAsyncUnit(bool asyncProxyReaders)
      : asyncProxyReaders(asyncProxyReaders) {}

  bool supportsBytes(int64_t bytes) const override;
  void copy(mlir::OpBuilder &builder, mlir::Location loc,
            mlir::Value destination, mlir::Value offset, mlir::Value source,
            int64_t bytes, mlir::Value sourceBytes) const override;
  void commit(mlir::OpBuilder &builder, mlir::Location loc) const override;
  void wait(mlir::OpBuilder &builder, mlir::Location loc,
            int64_t pending) const override;

private:
  bool asyncProxyReaders;
};

} // namespace tk::cuda

#endif // TK_BACKENDS_CUDA_COMPILER_CPASYNC_H_
