//===- TargetInfo.h - what the layout passes know of a target ---*- C++ -*-===//
//
// The device facts the backend-neutral passes are parameterised by: warp
// size, limits of a workgroup, memory features and the matrix intrinsics.
// Backends fill one from a device query; presets describe the architectures
// tk targets so that the passes can be run and tested without hardware.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_TARGETINFO_H_
#define TK_CORE_TARGETINFO_H_

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
class Type;
} // namespace mlir

namespace tk {

/// An element type as the matrix intrinsics name them. `TF32` is f32 data
/// that the intrinsic reads with a 10-bit mantissa (`input_precision = tf32`).
enum class MatrixElementType {
  F16,
  BF16,
  TF32,
  F32,
  F64,
  I8,
  I32,
  F8E4M3,
  F8E5M2
};

/// Who executes a matrix intrinsic together.
enum class MatrixScope {
  /// One warp (mma.sync, mfma, wmma, dpas).
  Warp,
  /// A warpgroup of four consecutive warps (wgmma, sm90a).
  Warpgroup,
};

/// One matrix multiply-accumulate instruction: acc(m x n) += a(m x k) * b(k x
/// n).
struct MatrixIntrinsic {
  int64_t m = 0, n = 0, k = 0;
  MatrixElementType aType = MatrixElementType::F16;
  MatrixElementType bType = MatrixElementType::F16;
  MatrixElementType accType = MatrixElementType::F32;
  MatrixScope scope = MatrixScope::Warp;
  /// The name backends select on, e.g. "mma.m16n8k16".
  std::string name;

  /// True when a dot of `a` and `b` elements into `acc` elements, with tf32
  /// allowed for f32 inputs when `allowTF32`, can use this intrinsic.
  bool takes(mlir::Type a, mlir::Type b, mlir::Type acc, bool allowTF32) const;
};

/// What the layout passes know of a target device.
struct TargetInfo {
  /// The spec this was made from ("cuda-sm80"); recorded on functions.
  std::string name;
  /// Lanes of a warp (wave, subgroup).
  int64_t warpSize = 1;
  /// Threads a workgroup may have.
  int64_t maxThreadsPerBlock = 1;
  /// 32-bit registers of a compute unit (SM, CU, Xe-core).
  int64_t registersPerCU = 0;
  /// Bytes of shared (local) memory a workgroup may use.
  int64_t sharedMemoryPerBlock = 0;
  /// Bytes one lane moves with its widest vector load.
  int64_t maxVectorLoadBytes = 16;
  /// 2-D block loads and stores (Intel Xe): their largest block.
  bool has2DBlockIO = false;
  int64_t max2DBlockRows = 0;
  int64_t max2DBlockRowBytes = 0;
  /// Asynchronous global-to-shared copies (cp.async, sm80+).
  bool hasAsyncCopy = false;
  /// The Tensor Memory Accelerator (sm90+).
  bool hasTMA = false;
  /// The matrix intrinsics in order of preference.
  llvm::SmallVector<MatrixIntrinsic, 8> intrinsics;

  /// The host CPU: warps of one lane, the host's vector width (from its
  /// features: 64 bytes with AVX-512, 32 with AVX, else 16), no intrinsics.
  static TargetInfo cpu();
  /// NVIDIA Ampere: warp 32, mma.sync m16n8k16 (f16, bf16), m16n8k8 (tf32).
  static TargetInfo cudaSm80();
  /// NVIDIA Hopper with the `a` features: sm80's intrinsics, wgmma
  /// m64nNk16 for a warpgroup of 4 warps, TMA.
  static TargetInfo cudaSm90a();
  /// AMD CDNA3 (gfx942): wave 64, mfma 32x32x8 and 16x16x16.
  static TargetInfo amdCdna3();
  /// AMD RDNA3 (gfx11): wave 32, wmma 16x16x16.
  static TargetInfo amdRdna3();
  /// Intel Data Center GPU Max (PVC): subgroup 16, dpas 8x16x16, 2-D block
  /// loads up to 32 rows of 64 bytes (32x32xf16).
  static TargetInfo intelPvc();

  /// Parses `name[:key=value]...`: a preset name (cpu, cuda-sm80,
  /// cuda-sm90a, amd-cdna3, amd-rdna3, intel-pvc) and overrides of
  /// warp-size, max-threads, registers, shared-memory, vector-bytes. On
  /// failure returns nothing and says why in `error`.
  static std::optional<TargetInfo> parse(llvm::StringRef spec,
                                         std::string &error);

  /// The intrinsics of `scope` that take these element types, in order of
  /// preference.
  llvm::SmallVector<const MatrixIntrinsic *>
  findIntrinsics(mlir::Type a, mlir::Type b, mlir::Type acc, bool allowTF32,
                 MatrixScope scope = MatrixScope::Warp) const;
};

/// The name of an element type as intrinsics spell it ("f16", "tf32").
llvm::StringRef stringifyMatrixElementType(MatrixElementType type);

} // namespace tk

#endif // TK_CORE_TARGETINFO_H_
