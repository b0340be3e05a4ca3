//===- TargetInfo.cpp - target presets and their parsing ------------------===//
//
// The presets of the targets tk knows, from the vendors' manuals, and the
// `name[:key=value]...` spec that pass options use to pick one.
//
//===----------------------------------------------------------------------===//

#include "tk/core/TargetInfo.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/TargetParser/Host.h"

using namespace tk;

namespace {

using ET = MatrixElementType;

MatrixIntrinsic warpMma(int64_t m, int64_t n, int64_t k, ET in, ET acc,
                        llvm::StringRef name) {
  return MatrixIntrinsic{m, n, k, in, in, acc, MatrixScope::Warp, name.str()};
}

MatrixIntrinsic warpgroupMma(int64_t m, int64_t n, int64_t k, ET in, ET acc,
                             llvm::StringRef name) {
  return MatrixIntrinsic{m,         n, k, in, in, acc, MatrixScope::Warpgroup,
                         name.str()};
}

bool isElementType(mlir::Type type, ET expected, bool allowTF32) {
  switch (expected) {
  case ET::F16:
    return type.isF16();
  case ET::BF16:
    return type.isBF16();
  case ET::TF32:
    return allowTF32 && type.isF32();
  case ET::F32:
    return type.isF32();
  case ET::F64:
    return type.isF64();
  case ET::I8:
    return type.isInteger(8);
  case ET::I32:
    return type.isInteger(32);
  case ET::F8E4M3:
    return llvm::isa<mlir::Float8E4M3FNType>(type);
  case ET::F8E5M2:
    return llvm::isa<mlir::Float8E5M2Type>(type);
  }
  return false;
}

/// The vector width of the host, from the features LLVM detects.
int64_t hostVectorBytes() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto has = [&](llvm::StringRef name) { return features.lookup(name); };
  if (has("avx512f"))
    return 64;
  if (has("avx") || has("sve"))
    return 32;
  return 16;
}

} // namespace

llvm::StringRef tk::stringifyMatrixElementType(MatrixElementType type) {
  switch (type) {
  case ET::F16:
    return "f16";
  case ET::BF16:
    return "bf16";
  case ET::TF32:
    return "tf32";
  case ET::F32:
    return "f32";
  case ET::F64:
    return "f64";
  case ET::I8:
    return "i8";
  case ET::I32:
    return "i32";
  case ET::F8E4M3:
    return "f8E4M3FN";
  case ET::F8E5M2:
    return "f8E5M2";
  }
  return "?";
}

bool MatrixIntrinsic::takes(mlir::Type a, mlir::Type b, mlir::Type acc,
                            bool allowTF32) const {
  return isElementType(a, aType, allowTF32) &&
         isElementType(b, bType, allowTF32) &&
         isElementType(acc, accType, /*allowTF32=*/false);
}

llvm::SmallVector<const MatrixIntrinsic *>
TargetInfo::findIntrinsics(mlir::Type a, mlir::Type b, mlir::Type acc,
                           bool allowTF32, MatrixScope scope) const {
  llvm::SmallVector<const MatrixIntrinsic *> found;
  for (const MatrixIntrinsic &intrinsic : intrinsics)
    if (intrinsic.scope == scope && intrinsic.takes(a, b, acc, allowTF32))
      found.push_back(&intrinsic);
  return found;
}

//===----------------------------------------------------------------------===//
// Presets
//===----------------------------------------------------------------------===//

TargetInfo TargetInfo::cpu() {
  TargetInfo info;
  info.name = "cpu";
  // A program instance runs on one host thread and its tiles are host
  // vectors; its "warps" are one-lane slices that the CPU backend may run in
  // turn, so the workgroup limit is a sanity bound, not hardware.
  info.warpSize = 1;
  info.maxThreadsPerBlock = 1024;
  info.maxVectorLoadBytes = hostVectorBytes();
  return info;
}

TargetInfo TargetInfo::cudaSm80() {
  TargetInfo info;
  info.name = "cuda-sm80";
  info.warpSize = 32;
  info.maxThreadsPerBlock = 1024;
  info.registersPerCU = 65536;
  // 163 KiB of the SM's 164 KiB with the opt-in attribute (CUDA C
  // Programming Guide, "Compute Capability 8.x").
  info.sharedMemoryPerBlock = 166912;
  info.maxVectorLoadBytes = 16;
  info.hasAsyncCopy = true;
  // PTX ISA, "Matrix Fragments for mma.m16n8k16" and friends.
  info.intrinsics = {
      warpMma(16, 8, 16, ET::F16, ET::F32, "mma.m16n8k16.f32.f16"),
      warpMma(16, 8, 16, ET::F16, ET::F16, "mma.m16n8k16.f16.f16"),
      warpMma(16, 8, 16, ET::BF16, ET::F32, "mma.m16n8k16.f32.bf16"),
      warpMma(16, 8, 8, ET::TF32, ET::F32, "mma.m16n8k8.f32.tf32"),
      warpMma(16, 8, 32, ET::I8, ET::I32, "mma.m16n8k32.s32.s8"),
      warpMma(8, 8, 4, ET::F64, ET::F64, "mma.m8n8k4.f64.f64"),
  };
  return info;
}

TargetInfo TargetInfo::cudaSm90a() {
  TargetInfo info = cudaSm80();
  info.name = "cuda-sm90a";
  // 227 KiB per block with the opt-in attribute on Hopper.
  info.sharedMemoryPerBlock = 232448;
  info.hasTMA = true;
  // wgmma.mma_async m64nNk*: N is any multiple of 8 up to 256; the entries
  // record the largest. A warpgroup is four consecutive warps.
  llvm::SmallVector<MatrixIntrinsic, 8> wgmma = {
      warpgroupMma(64, 256, 16, ET::F16, ET::F32, "wgmma.m64nNk16.f32.f16"),
      warpgroupMma(64, 256, 16, ET::BF16, ET::F32, "wgmma.m64nNk16.f32.bf16"),
      warpgroupMma(64, 256, 8, ET::TF32, ET::F32, "wgmma.m64nNk8.f32.tf32"),
      warpgroupMma(64, 256, 32, ET::F8E4M3, ET::F32, "wgmma.m64nNk32.f32.e4m3"),
      warpgroupMma(64, 256, 32, ET::I8, ET::I32, "wgmma.m64nNk32.s32.s8"),
  };
  info.intrinsics.insert(info.intrinsics.begin(), wgmma.begin(), wgmma.end());
  return info;
}

TargetInfo TargetInfo::amdCdna3() {
  TargetInfo info;
  info.name = "amd-cdna3";
  info.warpSize = 64;
  info.maxThreadsPerBlock = 1024;
  // 4 SIMDs x 512 VGPRs x 64 lanes (AGPRs not counted).
  info.registersPerCU = 131072;
  info.sharedMemoryPerBlock = 65536;
  info.maxVectorLoadBytes = 16;
  // AMD Instinct MI300 ISA, "Matrix Arithmetic Instructions"; the larger
  // block first: fewer instructions, more reuse per operand load.
  info.intrinsics = {
      warpMma(32, 32, 8, ET::F16, ET::F32, "mfma.f32.32x32x8f16"),
      warpMma(16, 16, 16, ET::F16, ET::F32, "mfma.f32.16x16x16f16"),
      warpMma(32, 32, 8, ET::BF16, ET::F32, "mfma.f32.32x32x8bf16.1k"),
      warpMma(16, 16, 16, ET::BF16, ET::F32, "mfma.f32.16x16x16bf16.1k"),
      warpMma(32, 32, 16, ET::I8, ET::I32, "mfma.i32.32x32x16i8"),
      warpMma(16, 16, 32, ET::I8, ET::I32, "mfma.i32.16x16x32i8"),
      warpMma(16, 16, 32, ET::F8E4M3, ET::F32, "mfma.f32.16x16x32.fp8.fp8"),
      warpMma(16, 16, 4, ET::F64, ET::F64, "mfma.f64.16x16x4f64"),
  };
  return info;
}

TargetInfo TargetInfo::amdRdna3() {
  TargetInfo info;
  info.name = "amd-rdna3";
  info.warpSize = 32;
  info.maxThreadsPerBlock = 1024;
  // 2 SIMDs x 1536 VGPRs x 32 lanes in wave32.
  info.registersPerCU = 98304;
  info.sharedMemoryPerBlock = 65536;
  info.maxVectorLoadBytes = 16;
  // RDNA3 ISA, "Wave Matrix Multiply Accumulate (WMMA)".
  info.intrinsics = {
      warpMma(16, 16, 16, ET::F16, ET::F32, "wmma.f32.16x16x16.f16"),
      warpMma(16, 16, 16, ET::F16, ET::F16, "wmma.f16.16x16x16.f16"),
      warpMma(16, 16, 16, ET::BF16, ET::F32, "wmma.f32.16x16x16.bf16"),
      warpMma(16, 16, 16, ET::I8, ET::I32, "wmma.i32.16x16x16.iu8"),
  };
  return info;
}

TargetInfo TargetInfo::intelPvc() {
  TargetInfo info;
  info.name = "intel-pvc";
  // SIMD16 is PVC's native width for DPAS.
  info.warpSize = 16;
  info.maxThreadsPerBlock = 1024;
  // 8 EUs x 8 threads x 128 GRFs of 64 bytes (small-GRF mode).
  info.registersPerCU = 131072;
  info.sharedMemoryPerBlock = 131072;
  info.maxVectorLoadBytes = 16;
  // 2-D block loads take up to 32 rows of 64 bytes (32x32xf16).
  info.has2DBlockIO = true;
  info.max2DBlockRows = 32;
  info.max2DBlockRowBytes = 64;
  // Xe-HPC ISA, DPAS with systolic depth 8 and execution size 16.
  info.intrinsics = {
      warpMma(8, 16, 16, ET::F16, ET::F32, "dpas.8x16x16.f32.f16"),
      warpMma(8, 16, 16, ET::BF16, ET::F32, "dpas.8x16x16.f32.bf16"),
      warpMma(8, 16, 8, ET::TF32, ET::F32, "dpas.8x16x8.f32.tf32"),
      warpMma(8, 16, 32, ET::I8, ET::I32, "dpas.8x16x32.s32.s8"),
  };
  return info;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

std::optional<TargetInfo> TargetInfo::parse(llvm::StringRef spec,
                                            std::string &error) {
  auto [presetName, rest] = spec.trim().split(':');
  std::optional<TargetInfo> info =
      llvm::StringSwitch<std::optional<TargetInfo>>(presetName)
          .Case("cpu", cpu())
          .Cases({"cuda-sm80", "sm80"}, cudaSm80())
          .Cases({"cuda-sm90a", "sm90a"}, cudaSm90a())
          .Cases({"amd-cdna3", "gfx942"}, amdCdna3())
          .Cases({"amd-rdna3", "gfx1100"}, amdRdna3())
          .Cases({"intel-pvc", "pvc"}, intelPvc())
          .Default(std::nullopt);
  if (!info) {
    error = "unknown target '" + presetName.str() +
            "'; known: cpu, cuda-sm80, cuda-sm90a, amd-cdna3, amd-rdna3, "
            "intel-pvc";
    return std::nullopt;
  }
  while (!rest.empty()) {
    llvm::StringRef item;
    std::tie(item, rest) = rest.split(':');
    auto [key, valueText] = item.split('=');
    int64_t value = 0;
    if (valueText.getAsInteger(10, value) || value <= 0) {
      error =
          "target override '" + item.str() + "' must be key=<positive integer>";
      return std::nullopt;
    }
    int64_t *field = llvm::StringSwitch<int64_t *>(key)
                         .Case("warp-size", &info->warpSize)
                         .Case("max-threads", &info->maxThreadsPerBlock)
                         .Case("registers", &info->registersPerCU)
                         .Case("shared-memory", &info->sharedMemoryPerBlock)
                         .Case("vector-bytes", &info->maxVectorLoadBytes)
                         .Default(nullptr);
    if (!field) {
      error = "unknown target override '" + key.str() +
              "'; known: warp-size, max-threads, registers, shared-memory, "
              "vector-bytes";
      return std::nullopt;
    }
    *field = value;
  }
  info->name = spec.trim().str();
  return info;
}
