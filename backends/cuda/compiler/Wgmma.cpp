//===- Wgmma.cpp - tk.dot on NVIDIA warpgroup MMA (sm_90a) ----------------===//
//
// The register pipeline's warpgroup products (tk-convert-registers-to-simt,
// WarpgroupDot.cpp): wgmma.mma_async reads b, and a unless it comes in
// registers, from workgroup memory through 64-bit matrix descriptors, in
// the canonical layouts those describe (PTX ISA, "Asynchronous Warpgroup
// Level Matrix Shared Memory Layout"; nvmmaSharedLayout's 32, 64 or
// 128-byte swizzled atoms, which tk-dot-operand-layouts gave the operands).
//
//   Descriptor ("Matrix Descriptor Format"): bits 0-13 the start address in
//   the shared window >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4, 62-63 the
//   swizzle mode.
//
// An a computed from another product in the same rows comes in registers
// (the accumulator fragment of m64nKk16 is a's register fragment of each k
// step), issued as inline assembly since NVVM's op takes descriptors only.
//
// The operands' writes go through the generic proxy and wgmma reads through
// the async proxy: every thread fences (fence.proxy.async.shared::cta) after
// its writes, before the barrier that publishes them (publishOperands).
//
// Accumulator i of a thread (warp w of the warpgroup, lane = 4g + q; PTX
// ISA figure "WGMMA .m64nNk16 register fragment layout for accumulator
// matrix D", CUTLASS's CLayout_64xN):
//   row = 16w + g + 8 * ((i/2) % 2),   col = 8 * (i/4) + 2q + i%2
//
//===----------------------------------------------------------------------===//

#include "compiler/Wgmma.h"
#include "compiler/SharedMemory.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;

namespace tk::cuda {

namespace {

constexpr int64_t kTileM = 64;
/// One instruction's k, in bytes of an operand: k16 of 16-bit elements,
/// k32 of 8-bit ones.
constexpr int64_t kTileKBytes = 32;
/// N' at most 256, the widest wgmma.
constexpr int64_t kMaxTileN = 256;

/// Packs `values` into a fragment struct and back.
Value packFragment(OpBuilder &b, Location loc, LLVM::LLVMStructType type,
                   ValueRange values) {
  Value fragment = LLVM::PoisonOp::create(b, loc, type);
  for (auto [i, value] : llvm::enumerate(values))
    fragment = LLVM::InsertValueOp::create(
        b, loc, fragment, value, ArrayRef<int64_t>{static_cast<int64_t>(i)});
  return fragment;
}

void unpackFragment(OpBuilder &b, Location loc, Value fragment,
                    SmallVectorImpl<Value> &values) {
  auto type = cast<LLVM::LLVMStructType>(fragment.getType());
  for (size_t i = 0; i < type.getBody().size(); ++i)
    values.push_back(LLVM::ExtractValueOp::create(
        b, loc, fragment, ArrayRef<int64_t>{static_cast<int64_t>(i)}));
}

/// 16-bit `elements` (f16 or bf16) in pairs, as the 32-bit registers wgmma
/// reads a from: the first of each pair in the low half.
SmallVector<Value> packHalves(OpBuilder &b, Location loc, ValueRange elements) {
  SmallVector<Value> packed;
  if (elements.empty())
    return packed;
  auto halves = VectorType::get({2}, elements.front().getType());
  auto position = [&](int64_t i) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), i);
  };
  for (size_t i = 0; i + 1 < elements.size(); i += 2) {
    Value vector = LLVM::PoisonOp::create(b, loc, halves);
    vector =
        LLVM::InsertElementOp::create(b, loc, vector, elements[i], position(0));
    vector = LLVM::InsertElementOp::create(b, loc, vector, elements[i + 1],
                                           position(1));
    packed.push_back(LLVM::BitcastOp::create(b, loc, b.getI32Type(), vector));
  }
  return packed;
}

/// One wgmma.mma_async m64`width`k16 with a in registers (`a`: its four
/// packed registers) and b through `descB`, on the accumulators `fragment`
/// (tied in and out); not yet committed. Without `scaleD` the product
/// ignores the accumulators. Inline assembly: NVVM's op takes descriptors
/// only.
Value issueWgmmaRegisterA(OpBuilder &b, Location loc, Value fragment,
                          ValueRange a, Value descB, int64_t width, bool bf16,
                          bool kMajorB, bool scaleD) {
  std::string type = bf16 ? "bf16" : "f16";
  int64_t outs =
      cast<LLVM::LLVMStructType>(fragment.getType()).getBody().size();
  auto operand = [](int64_t i) { return "$" + std::to_string(i); };
  std::string registers;
  for (int64_t i = 0; i < outs; ++i)
    registers += (i ? ", " : "") + operand(i);
  // p is scale-d: 0 makes the product ignore the accumulators.
  std::string asmText =
      "{\n.reg .pred p;\nsetp.ne.b32 p, " + std::string(scaleD ? "1" : "0") +
      ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(width) +
      "k16.f32." + type + "." + type + " {" + registers + "}, {" +
      operand(outs) + ", " + operand(outs + 1) + ", " + operand(outs + 2) +
      ", " + operand(outs + 3) + "}, " + operand(outs + 4) + ", p, 1, 1, " +
      (kMajorB ? "0" : "1") + ";\n}";
  std::string constraints;
  for (int64_t i = 0; i < outs; ++i)
    constraints += (i ? ",=f" : "=f");
  constraints += ",r,r,r,r,l";
  for (int64_t i = 0; i < outs; ++i)
    constraints += "," + std::to_string(i);
  SmallVector<Value> operands(a);
  operands.push_back(descB);
  unpackFragment(b, loc, fragment, operands);
  return LLVM::InlineAsmOp::create(
             b, loc, fragment.getType(), operands, asmText, constraints,
             /*has_side_effects=*/true,
             /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
             LLVM::AsmDialectAttr(), ArrayAttr())
      .getResult(0);
}

/// The descriptor of `operand` from element `start` (i32) of its buffer
/// (PTX ISA, "Matrix Descriptor Format"; nvmmaSharedLayout's tiles):
///   K-major: SBO = the next 8 rows (8 rows of one atom); LBO unused (1);
///   MN-major: LBO = the next column of atoms, SBO = the next 8 k rows.
/// Mode (bits 62-63): 1 for 128-byte atoms, 2 for 64, 3 for 32. The
/// start is the block's first row, where the swizzle is the identity; a
/// shared-window address is below 2^18.
Value matrixDescriptor(OpBuilder &b, Location loc,
                       const MatrixUnit::WarpgroupOperand &operand,
                       Value start) {
  Type i64 = b.getI64Type();
  int64_t eightRows = 8 * operand.swizzleBytes;
  int64_t leadingBytes = operand.kMajor ? 16 : operand.atomColumnBytes;
  int64_t mode = operand.swizzleBytes == 128  ? 1
                 : operand.swizzleBytes == 64 ? 2
                                              : 3;
  int64_t fixedFields =
      ((leadingBytes >> 4) << 16) | ((eightRows >> 4) << 32) | (mode << 62);
  Value address = LLVM::PtrToIntOp::create(
      b, loc, i64,
      sharedElementAddress(
          b, loc, operand.buffer,
          arith::IndexCastOp::create(b, loc, b.getIndexType(), start)));
  Value field = arith::ShRUIOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, address,
                            arith::ConstantIntOp::create(b, loc, i64, 0x3ffff)),
      arith::ConstantIntOp::create(b, loc, i64, 4));
  return arith::OrIOp::create(
      b, loc, field, arith::ConstantIntOp::create(b, loc, i64, fixedFields));
}

/// wgmma.wait_group `pending` as inline assembly that reads and writes
/// every f32 register of `registers` ("=f" tied to its input): NVVM's wait
/// op takes no operands, so LLVM would be free to move conversions of the
/// accumulators above it, and ptxas then serialises every wgmma of the
/// kernel ("non wgmma instructions reading accumulator registers").
SmallVector<Value> waitThroughRegisters(OpBuilder &b, Location loc,
                                        ValueRange registers, int64_t pending) {
  std::string constraints;
  for (size_t i = 0; i < registers.size(); ++i)
    constraints += (i ? ",=f" : "=f");
  for (size_t i = 0; i < registers.size(); ++i)
    constraints += "," + std::to_string(i);
  auto type = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(registers.size(), b.getF32Type()));
  auto wait = LLVM::InlineAsmOp::create(
      b, loc, type, registers,
      "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";",
      constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
      ArrayAttr());
  SmallVector<Value> result;
  unpackFragment(b, loc, wait.getResult(0), result);
  return result;
}

} // namespace

FailureOr<SmallVector<SmallVector<Value>>> WgmmaUnit::emitWarpgroupProducts(
    OpBuilder &b, Location loc, const MatrixIntrinsic &intrinsic, int64_t n,
    const WarpgroupOperand &a, const WarpgroupOperand &bOperand,
    ArrayRef<WarpgroupTile> tiles, int64_t pending) const {
  NVVM::WGMMATypes input;
  int64_t elementBytes = 2;
  switch (intrinsic.aType) {
  case MatrixElementType::F16:
    input = NVVM::WGMMATypes::f16;
    break;
  case MatrixElementType::BF16:
    input = NVVM::WGMMATypes::bf16;
    break;
  case MatrixElementType::F8E4M3:
    input = NVVM::WGMMATypes::e4m3;
    elementBytes = 1;
    break;
  case MatrixElementType::F8E5M2:
    input = NVVM::WGMMATypes::e5m2;
    elementBytes = 1;
    break;
  default:
    return failure();
  }
  if (intrinsic.m != kTileM || intrinsic.k * elementBytes != kTileKBytes ||
      n % 8 != 0 || n > kMaxTileN ||
      intrinsic.accType != MatrixElementType::F32)
    return failure();
  // 8-bit operands: both from workgroup memory, K-major (the only form
  // wgmma reads them in).
  if (elementBytes == 1 && (!a.buffer || !a.kMajor || !bOperand.kMajor))
    return failure();
  MLIRContext *ctx = b.getContext();
  auto type = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(n / 2, b.getF32Type()));
  // a in registers: packed before the fence, as every register its
  // products read (packed between two wgmma, ptxas fences there: C7519).
  bool aInRegisters = !a.buffer;
  SmallVector<SmallVector<SmallVector<Value>>> packedA;
  for (const WarpgroupTile &tile : tiles) {
    if (int64_t(tile.accumulator.size()) != n / 2 ||
        (aInRegisters ? tile.aFragments.size() : tile.aStarts.size()) !=
            tile.bStarts.size())
      return failure();
    packedA.emplace_back();
    for (ValueRange fragment : tile.aFragments) {
      if (fragment.size() != 8)
        return failure();
      packedA.back().push_back(packHalves(b, loc, fragment));
    }
  }
  // The accumulators were last written by ordinary instructions.
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  SmallVector<Value> fragments;
  for (auto [tile, packed] : llvm::zip_equal(tiles, packedA)) {
    Value fragment = packFragment(b, loc, type, tile.accumulator);
    if (aInRegisters) {
      for (auto [registers, bStart] : llvm::zip_equal(packed, tile.bStarts))
        fragment = issueWgmmaRegisterA(
            b, loc, fragment, registers,
            matrixDescriptor(b, loc, bOperand, bStart), n,
            input == NVVM::WGMMATypes::bf16, bOperand.kMajor, true);
      fragments.push_back(fragment);
      continue;
    }
    for (auto [aStart, bStart] : llvm::zip_equal(tile.aStarts, tile.bStarts))
      fragment = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, type, fragment, matrixDescriptor(b, loc, a, aStart),
          matrixDescriptor(b, loc, bOperand, bStart),
          NVVM::MMAShapeAttr::get(ctx, kTileM, n, intrinsic.k), input, input,
          NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          a.kMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col,
          bOperand.kMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
          NVVM::MMAIntOverflowAttr());
    fragments.push_back(fragment);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  SmallVector<Value> registers;
  for (Value fragment : fragments)
    unpackFragment(b, loc, fragment, registers);
  if (pending == 0)
    registers = waitThroughRegisters(b, loc, registers, 0);
  SmallVector<SmallVector<Value>> results;
  for (size_t tile = 0; tile < fragments.size(); ++tile)
    results.emplace_back(
        ArrayRef<Value>(registers).slice(tile * (n / 2), n / 2));
  return results;
}

// The wait reads and writes every accumulator register, so that nothing
// reads one before it; without registers, the plain wait.
FailureOr<SmallVector<Value>>
WgmmaUnit::emitWarpgroupWait(OpBuilder &b, Location loc, ValueRange registers,
                             int64_t pending) const {
  if (llvm::any_of(registers, [](Value v) { return !v.getType().isF32(); }))
    return failure();
  if (registers.empty()) {
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, pending);
    return SmallVector<Value>();
  }
  return waitThroughRegisters(b, loc, registers, pending);
}

// Ordinary stores go through the generic proxy, wgmma reads through the
// async proxy: a proxy fence, then the barrier.
void WgmmaUnit::publishOperands(OpBuilder &b, Location loc) const {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
  gpu::BarrierOp::create(b, loc);
}

} // namespace tk::cuda
