//===- Wgmma.cpp - tk.dot on NVIDIA warpgroup MMA (sm_90a) ----------------===//
//
// wgmma.mma_async reads A and B from shared memory through 64-bit matrix
// descriptors, and only in the canonical layouts those describe (PTX ISA,
// "Asynchronous Warpgroup Level Matrix Shared Memory Layout"), so each
// product first copies its operands from core's row-major tiles into
// staging buffers of its own:
//
//   No swizzling, in core matrices of 8 x 16 contiguous bytes (8 x 8
//   16-bit elements, 128 bytes). A is K-major (imm-trans-a = 0, the NVVM
//   op's layout row): a core matrix is 8 rows of 8 consecutive k, at
//     offset(r, k) = ((r/8) * (K/8) + k/8) * 64 + (r%8) * 8 + k%8
//   (CUTLASS's ((8,m),(T,2)):((1T,SBO),(1,LBO))). B is MN-major
//   (imm-trans-b = 1, 16-bit inputs only; layout row for B): a core matrix
//   is 8 k-rows of 8 consecutive n, at
//     offset(k, n) = ((n/8) * (K/8) + k/8) * 64 + (k%8) * 8 + n%8
//   (CUTLASS's ((T,1,n),(8,k)):((1,T,SBO),(1T,LBO))). In both the next core
//   matrix along K lies 128 bytes on (the leading byte offset, LBO) and the
//   next one along M or N K/8 * 128 bytes on (the stride byte offset, SBO),
//   so A and B share one descriptor form, and each 16 bytes of a core matrix
//   are 8 elements that are consecutive in core's row-major tile too: the
//   staging copies move 16 bytes at a time.
//
//   Descriptor ("Matrix Descriptor Format"): bits 0-13 the start address in
//   the shared window >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4, 49-51 the base
//   offset (0 without swizzling), 62-63 the swizzle mode (0: none).
//
// Held products (core writes their operands in these layouts itself) take
// the 128-byte swizzled forms where the contiguous dimension spans whole
// 128-byte rows; a B that is the transpose of a row-major tile comes
// K-major (imm-trans-b = 0) in A's form, n in the role of m; and an A
// computed from another held product in the same rows comes in registers
// (the accumulator fragment of m64nKk16 is A's register fragment of each
// k step), issued as inline assembly since NVVM's op takes descriptors
// only.
//
// The staging writes go through the generic proxy and wgmma reads through
// the async proxy: every thread fences (fence.proxy.async.shared::cta) after
// its writes, before the barrier that publishes the buffers.
//
// Each warpgroup (128 threads, 4 warps) takes 64 x N' tiles of the result in
// turn, N' a multiple of 8 up to 128 that divides N (narrower where that
// gives idle warpgroups work). It holds the tile's N'/2 fp32 accumulators
// per thread in registers, issues the K/16 wgmma of the tile back to back,
// commits them as one group and waits for it. Accumulator i of a thread
// (warp w of the warpgroup, lane = 4g + q; PTX ISA figure "WGMMA .m64nNk16
// register fragment layout for accumulator matrix D", CUTLASS's
// CLayout_64xN):
//   row = 16w + g + 8 * ((i/2) % 2),   col = 8 * (i/4) + 2q + i%2
//
//===----------------------------------------------------------------------===//

#include "compiler/Wgmma.h"
#include "compiler/SharedMemory.h"
#include "compiler/TargetInfo.h"
#include "tk/core/Conversion/Fragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace tk::cuda {

namespace {

constexpr int64_t kWarpgroupSize = 128, kWarpSize = 32;
constexpr int64_t kTileM = 64, kTileK = 16;
/// N' at most 256, the widest wgmma: one instruction per k step reads A
/// once for all of N' (kMaxHeldRegisters still bounds the accumulators a
/// thread holds, and tileWidth narrows tiles to spread them over the
/// warpgroups).
constexpr int64_t kMaxTileN = 256;
/// A core matrix: 8 rows of 8 16-bit elements.
constexpr int64_t kElementBytes = 2, kCoreRows = 8, kCoreBytes = 128;
/// LBO and SBO are 14-bit fields counting 16 bytes.
constexpr int64_t kMaxByteOffset = ((int64_t{1} << 14) - 1) << 4;
/// At most this many fp32 accumulators per thread held across a loop.
constexpr int64_t kMaxHeldRegisters = 128;
/// The 128-byte swizzle: atoms of 8 rows of 128 bytes (64 16-bit elements),
/// 1024-byte aligned; descriptor layout type 1 in bits 62-63.
constexpr int64_t kSwizzleElements = 64, kAtomBytes = 1024;
constexpr int64_t kSwizzle128Mode = int64_t{1} << 62;

/// The products wgmma takes itself (the thread count is checked in emit).
bool takes(Type a, Type b, Type accumulator, int64_t m, int64_t n, int64_t k) {
  bool halfInputs = (a.isF16() && b.isF16()) || (a.isBF16() && b.isBF16());
  return halfInputs && accumulator.isF32() && m % kTileM == 0 && n % 8 == 0 &&
         k % kTileK == 0 && (k / kCoreRows) * kCoreBytes <= kMaxByteOffset;
}

/// Whether a held product's operand (0: A, 1: B) is laid out with the
/// 128-byte swizzle: its contiguous dimension (A and K-major B: k,
/// MN-major B: n) spans whole 128-byte rows, and for MN-major B each
/// wgmma's N' covers whole atoms.
bool swizzled(unsigned operand, int64_t n, int64_t k, int64_t width,
              bool kMajorB) {
  return operand == 0 || kMajorB
             ? k % kSwizzleElements == 0
             : n % kSwizzleElements == 0 && width % kSwizzleElements == 0;
}

/// N': the widest multiple of 8 up to kMaxTileN that divides n (itself a
/// multiple of 8), narrowed while there are fewer 64 x N' tiles than
/// warpgroups, so that every warpgroup gets one where the shape allows.
int64_t tileWidth(int64_t m, int64_t n, int64_t numWarpgroups) {
  auto narrower = [&](int64_t below) -> int64_t {
    for (int64_t width = std::min(below - 8, kMaxTileN); width >= 8; width -= 8)
      if (n % width == 0)
        return width;
    return 0;
  };
  int64_t width = narrower(n + 8);
  while ((m / kTileM) * (n / width) < numWarpgroups) {
    int64_t next = narrower(width);
    if (next == 0)
      break;
    width = next;
  }
  return width;
}

/// A fresh workgroup-memory buffer of `size` elements, declared at module
/// level next to the kernel (named after it, as core names its tiles) and
/// read at the builder's insertion point.
FailureOr<Value> createStagingBuffer(OpBuilder &b, Location loc,
                                     Type elementType, int64_t size,
                                     StringRef role) {
  Operation *parent = b.getInsertionBlock()->getParentOp();
  auto module = parent->getParentOfType<ModuleOp>();
  Operation *kernel =
      module ? module.getBody()->findAncestorOpInBlock(*parent) : nullptr;
  if (!kernel)
    return emitError(loc, "tk-cuda: wgmma staging buffers need an enclosing "
                          "module");
  std::string prefix = "tk";
  if (auto symbol = dyn_cast<SymbolOpInterface>(kernel))
    prefix = symbol.getName().str();
  std::string name;
  for (int i = 0;; ++i) {
    name = prefix + "_wgmma_" + role.str() + std::to_string(i);
    if (!SymbolTable::lookupSymbolIn(module, name))
      break;
  }
  auto space =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto type =
      MemRefType::get({size}, elementType, MemRefLayoutAttrInterface(), space);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(kernel);
    // 128-byte aligned: every core matrix on a line of its own (16 bytes
    // are what the descriptor needs without swizzling).
    memref::GlobalOp::create(b, loc, name, b.getStringAttr("private"), type,
                             Attribute(), /*constant=*/false,
                             b.getI64IntegerAttr(kCoreBytes));
  }
  return memref::GetGlobalOp::create(b, loc, type, name).getResult();
}

} // namespace

namespace {

/// Tiles of 64 x width in row-major order, dealt to the warpgroups in turn;
/// each as wgmma's accumulator fragment over the warpgroup's 4 warps: the
/// held layout of a product wgmma takes, and where its unheld tiles go.
HeldLayout warpgroupTiles(int64_t m, int64_t n, int64_t numThreads) {
  HeldLayout layout;
  layout.fragment = wgmmaAccumulatorLayout();
  layout.tile = {kTileM, tileWidth(m, n, numThreads / kWarpgroupSize)};
  layout.groupThreads = kWarpgroupSize;
  layout.cyclic = true;
  return layout;
}

void unpackFragment(OpBuilder &b, Location loc, Value fragment,
                    SmallVectorImpl<Value> &values);

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

/// The shape of a product wgmma takes, and the helpers that emit it; every
/// thread of the program runs them.
class WarpgroupProduct {
public:
  WarpgroupProduct(OpBuilder &b, Location loc, Type elementType, int64_t m,
                   int64_t n, int64_t k, Value threadId, int64_t numThreads,
                   bool kMajorB = false)
      : b(b), loc(loc), elementType(elementType), m(m), n(n), k(k),
        threadId(threadId), numThreads(numThreads), kMajorB(kMajorB),
        numWarpgroups(numThreads / kWarpgroupSize),
        width(tileWidth(m, n, numWarpgroups)), tilesN(n / width),
        tiles((m / kTileM) * tilesN), layout(warpgroupTiles(m, n, numThreads)) {
  }

  /// True when every warpgroup gets the same number of 64 x N' tiles, so
  /// that their accumulators can be held in registers.
  static bool holdable(int64_t m, int64_t n, int64_t numThreads) {
    int64_t numWarpgroups = numThreads / kWarpgroupSize;
    int64_t width = tileWidth(m, n, numWarpgroups);
    int64_t tiles = (m / kTileM) * (n / width);
    return tiles % numWarpgroups == 0 &&
           (tiles / numWarpgroups) * (width / 2) <= kMaxHeldRegisters;
  }

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, int64_t c) {
    return c == 0 ? x : arith::AddIOp::create(b, loc, x, index(c));
  }
  Value mul(Value x, int64_t c) {
    return arith::MulIOp::create(b, loc, x, index(c));
  }
  Value div(Value x, int64_t c) {
    return arith::DivUIOp::create(b, loc, x, index(c));
  }
  Value rem(Value x, int64_t c) {
    return arith::RemUIOp::create(b, loc, x, index(c));
  }
  Value constI64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  Value constI32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }

  /// Copies the operands into the staging buffers, fences and waits for
  /// every thread.
  LogicalResult stage(Value a, Value bOperand) {
    FailureOr<Value> bufferA =
        createStagingBuffer(b, loc, elementType, m * k, "a");
    FailureOr<Value> bufferB =
        createStagingBuffer(b, loc, elementType, n * k, "b");
    if (failed(bufferA) || failed(bufferB))
      return failure();
    stagedA = *bufferA;
    stagedB = *bufferB;
    stageOne(a, stagedA, m, /*mnMajor=*/false);
    stageOne(bOperand, stagedB, n, /*mnMajor=*/true);
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    gpu::BarrierOp::create(b, loc);
    return success();
  }

  /// Reads operands already in the held layouts (operandLayout): fences
  /// their writes against wgmma's async proxy and waits for every thread,
  /// unless that was done (`published`).
  void useStaged(Value a, Value bOperand, bool published) {
    stagedA = a;
    stagedB = bOperand;
    swizzledA = swizzled(0, n, k, width, kMajorB);
    swizzledB = swizzled(1, n, k, width, kMajorB);
    if (published)
      return;
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    gpu::BarrierOp::create(b, loc);
  }

  /// The first row and column of tile `tile` (index), as the layout
  /// places it.
  std::pair<Value, Value> tileOrigin(Value tile) {
    return layout.tileOrigin(b, loc, tile, n);
  }

  /// (row, col) of each accumulator register of this thread in the tile at
  /// `origin`, in the order of the fragment the preset states.
  SmallVector<std::pair<Value, Value>>
  positions(std::pair<Value, Value> origin) {
    FailureOr<FragmentPlacement> placed =
        layout.placeInTile(b, loc, threadId, origin);
    assert(succeeded(placed) && "wgmma's accumulator covers its tile");
    return placed->positions(b, loc);
  }

  LLVM::LLVMStructType fragmentType() {
    return LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(width / 2, b.getF32Type()));
  }

  /// The K/16 wgmma of the tile at `origin` on `fragment`, not yet
  /// committed.
  /// `zeroInit`: the tile starts at zero; its first step ignores the
  /// fragment (scale-d 0).
  Value issue(Value fragment, std::pair<Value, Value> origin,
              bool zeroInit = false) {
    MLIRContext *ctx = b.getContext();
    Value descA = descriptor(stagedA, 0, origin.first);
    Value descB = descriptor(stagedB, 1, origin.second);
    NVVM::WGMMATypes inputType =
        elementType.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
    for (int64_t step = 0; step < k / kTileK; ++step) {
      fragment = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, fragment.getType(), fragment,
          arith::AddIOp::create(b, loc, descA,
                                constI64(stepBytes(0, step) >> 4)),
          arith::AddIOp::create(b, loc, descB,
                                constI64(stepBytes(1, step) >> 4)),
          NVVM::MMAShapeAttr::get(ctx, kTileM, width, kTileK), inputType,
          inputType, NVVM::WGMMATypes::f32,
          zeroInit && step == 0 ? NVVM::WGMMAScaleOut::zero
                                : NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          NVVM::MMALayout::row,
          kMajorB ? NVVM::MMALayout::col : NVVM::MMALayout::row,
          NVVM::MMAIntOverflowAttr());
    }
    return fragment;
  }

  /// The K/16 wgmma of the tile at `origin` on `fragment`, A from
  /// `packedA` (packHalves), 4 registers a step; not yet committed.
  Value issueRegisterA(Value fragment, std::pair<Value, Value> origin,
                       ValueRange packedA, bool zeroInit = false) {
    Value descB = descriptor(stagedB, 1, origin.second);
    for (int64_t step = 0; step < k / kTileK; ++step)
      fragment = issueWgmmaRegisterA(
          b, loc, fragment, packedA.slice(4 * step, 4),
          arith::AddIOp::create(b, loc, descB,
                                constI64(stepBytes(1, step) >> 4)),
          width, elementType.isBF16(), kMajorB, !(zeroInit && step == 0));
    return fragment;
  }

  OpBuilder &b;
  Location loc;
  Type elementType;
  int64_t m, n, k;
  Value threadId;
  int64_t numThreads;
  /// B comes K-major (imm-trans-b = 0), laid out as A is with n in the
  /// role of m; MN-major otherwise.
  bool kMajorB;
  int64_t numWarpgroups, width, tilesN, tiles;
  /// Where the tiles and their registers are (WgmmaUnit::heldLayout).
  HeldLayout layout;

private:
  /// Spread over the threads 16 bytes (one row of a core matrix) at a
  /// time: unit u is staged at element 8u, so with g the 8-row group along
  /// M (A) or N (B) and kk the k of the row, u = (g * K/8 + kk/8) * 8 +
  /// kk%8 for B and u = (g * K/8 + kk/8) * 8 + r%8 with kk a multiple of 8
  /// for A. The source elements are consecutive in core's row-major tile.
  void stageOne(Value source, Value staging, int64_t rows, bool mnMajor) {
    int64_t kBlocks = k / kCoreRows;
    auto loop = scf::ForOp::create(b, loc, threadId, index(rows * kBlocks),
                                   index(numThreads));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value unit = loop.getInductionVar();
    Value group = div(unit, kCoreRows * kBlocks);
    Value kBlock = mul(rem(div(unit, kCoreRows), kBlocks), kCoreRows);
    Value inCore = rem(unit, kCoreRows);
    int64_t width = cast<MemRefType>(source.getType()).getDimSize(1);
    // A: row 8g + r, columns kk..kk+7; B: row kk + r, columns 8g..8g+7.
    Value row =
        mnMajor ? arith::AddIOp::create(b, loc, kBlock, inCore)
                : arith::AddIOp::create(b, loc, mul(group, kCoreRows), inCore);
    Value col = mnMajor ? mul(group, kCoreRows) : kBlock;
    Value from = arith::AddIOp::create(b, loc, mul(row, width), col);
    auto vectorType = VectorType::get({4}, b.getI32Type());
    Value chunk = LLVM::LoadOp::create(
        b, loc, vectorType, sharedElementAddress(b, loc, source, from), 16);
    LLVM::StoreOp::create(
        b, loc, chunk,
        sharedElementAddress(b, loc, staging, mul(unit, kCoreRows)), 16);
  }

  /// The byte offset of k step `step` (k0 = 16 step) from k = 0. Without
  /// swizzling that is two core matrices along K; swizzled A moves 32 bytes
  /// along its 128-byte rows, then to the next column of atoms, and
  /// swizzled B moves down two 8-row groups of atoms (the hardware applies
  /// the swizzle to the address it computes).
  int64_t stepBytes(unsigned operand, int64_t step) const {
    int64_t k0 = step * kTileK;
    if (operand == 0 && swizzledA)
      return (k0 / kSwizzleElements) * (m / kCoreRows) * kAtomBytes +
             (k0 % kSwizzleElements) * kElementBytes;
    if (operand == 1 && swizzledB && kMajorB)
      return (k0 / kSwizzleElements) * (n / kCoreRows) * kAtomBytes +
             (k0 % kSwizzleElements) * kElementBytes;
    if (operand == 1 && swizzledB)
      return (k0 / kCoreRows) * kAtomBytes;
    return (k0 / kCoreRows) * kCoreBytes;
  }

  /// The descriptor of operand `operand` from row (A) or column (B)
  /// `first` on, at k = 0. A shared-window address is below 2^18 (228 KB
  /// of shared memory), so its start field never carries into bit 14, and
  /// the descriptors of later k steps add to it directly.
  ///   Interleaved: LBO = the next core matrix along K (128 bytes), SBO =
  ///   the next 8 rows along M or N (K/8 core matrices on).
  ///   Swizzled A and K-major B: SBO = the next 8 rows (one atom, 1024
  ///   bytes); LBO is unused (1 by convention).
  ///   Swizzled B (MN-major): LBO = the next 64 columns (K/8 atoms on),
  ///   SBO = the next 8 k rows (one atom).
  Value descriptor(Value staging, unsigned operand, Value first) {
    Type i64 = b.getI64Type();
    bool swizzle = operand == 0 ? swizzledA : swizzledB;
    int64_t leadingBytes = kCoreBytes,
            strideBytes = (k / kCoreRows) * kCoreBytes, mode = 0;
    Value offset;
    if (!swizzle) {
      offset = mul(first, k * kElementBytes);
    } else if (operand == 0 || kMajorB) {
      leadingBytes = 16;
      strideBytes = kAtomBytes;
      mode = kSwizzle128Mode;
      offset = mul(div(first, kCoreRows), kAtomBytes);
    } else {
      leadingBytes = (k / kCoreRows) * kAtomBytes;
      strideBytes = kAtomBytes;
      mode = kSwizzle128Mode;
      offset = mul(div(first, kSwizzleElements), leadingBytes);
    }
    int64_t fixedFields =
        ((leadingBytes >> 4) << 16) | ((strideBytes >> 4) << 32) | mode;
    Value address = arith::IndexCastOp::create(
        b, loc, i64,
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, staging));
    address = arith::AddIOp::create(
        b, loc, address, arith::IndexCastOp::create(b, loc, i64, offset));
    Value start = arith::ShRUIOp::create(
        b, loc, arith::AndIOp::create(b, loc, address, constI64(0x3ffff)),
        constI64(4));
    return arith::OrIOp::create(b, loc, start, constI64(fixedFields));
  }

  Value stagedA, stagedB;
  /// The operands' layouts: 128-byte swizzled (held products whose shape
  /// allows it) or interleaved core matrices (the staging copies of emit).
  bool swizzledA = false, swizzledB = false;
};

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

/// A held product's tiles of this thread's warpgroup: `registers` packed
/// into fragments, `issue` giving tile j's wgmma from its fragment and
/// origin, all between one wgmma.fence (the registers were last written by
/// ordinary instructions; it orders those writes before the wgmma reads)
/// and one commit; then a wait until at most `inFlight` groups run (none
/// for a negative `inFlight`: the caller finishes the product). The
/// registers after.
SmallVector<Value> issueHeldTiles(
    OpBuilder &b, Location loc, WarpgroupProduct &wg,
    const MatrixUnit::HeldProduct &product, ValueRange registers,
    int64_t inFlight,
    function_ref<Value(int64_t, Value, std::pair<Value, Value>, bool)> issue) {
  LLVM::LLVMStructType type = wg.fragmentType();
  size_t perTile = type.getBody().size();
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  SmallVector<Value> fragments;
  for (int64_t j = 0; j < wg.tiles / wg.numWarpgroups; ++j) {
    Value tile =
        wg.layout.dealtTile(b, loc, product.threadId, j, product.numThreads);
    // A tile that starts at zero (a product without an accumulator: the
    // scores) ignores its registers on its first step: nothing is written
    // to them between the fence and the wgmmas (ptxas would serialise the
    // wgmmas around such writes, its C7519/C7520).
    ValueRange initial = registers.slice(j * perTile, perTile);
    bool zeroInit = llvm::all_of(initial, [](Value value) {
      return matchPattern(value, m_AnyZeroFloat()) ||
             matchPattern(value, m_Zero());
    });
    Value fragment = zeroInit ? Value(LLVM::PoisonOp::create(b, loc, type))
                              : packFragment(b, loc, type, initial);
    fragments.push_back(issue(j, fragment, wg.tileOrigin(tile), zeroInit));
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  if (inFlight >= 0)
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, inFlight);
  SmallVector<Value> result;
  for (Value fragment : fragments)
    unpackFragment(b, loc, fragment, result);
  return result;
}

} // namespace

bool WgmmaUnit::supports(Type a, Type b, Type accumulator, int64_t m, int64_t n,
                         int64_t k) const {
  // mma.sync takes every product wgmma takes and more (m % 64 != 0); emit
  // hands it what wgmma cannot take.
  return takes(a, b, accumulator, m, n, k) ||
         fallback.supports(a, b, accumulator, m, n, k);
}

/// True when wgmma holds the product (else mma.sync may).
static bool wgmmaHolds(const MatrixUnit::HeldProduct &p) {
  return takes(p.a, p.b, p.accumulator, p.m, p.n, p.k) &&
         p.numThreads % kWarpgroupSize == 0 &&
         WarpgroupProduct::holdable(p.m, p.n, p.numThreads);
}

// The layouts of the file comment: A K-major, B MN-major (or K-major for
// kMajorB). Where the contiguous dimension allows, 128-byte swizzled atoms:
// tiles of 8 lines of 64 elements (128 bytes), stored down the other
// dimension first, 8 chunks of 16 bytes per line, chunk j of line i at
// j ^ (i % 8), from 1024-byte boundaries (the hardware swizzles address
// bits 4-6 with bits 7-9). Otherwise interleaved core matrices: tiles of
// 8x8, along k first.
std::optional<SharedLayout> WgmmaUnit::operandLayout(const HeldProduct &product,
                                                     unsigned operand) const {
  if (!wgmmaHolds(product))
    return fallback.operandLayout(product, operand);
  SharedLayout layout;
  layout.alignment = kAtomBytes;
  // A: (m, k), contiguous along k; B: (k, n), along k where K-major.
  layout.contiguous = operand == 0 || !product.kMajorB ? 1 : 0;
  int64_t width =
      tileWidth(product.m, product.n, product.numThreads / kWarpgroupSize);
  if (swizzled(operand, product.n, product.k, width, product.kMajorB)) {
    layout.tile[layout.contiguous] = kSwizzleElements;
    layout.tile[1 - layout.contiguous] = kCoreRows;
    layout.tilesAlong = 1 - layout.contiguous;
    layout.vec = kCoreBytes / kCoreRows / kElementBytes;
    layout.maxPhase = kCoreRows;
    return layout;
  }
  // Core matrices of 8 rows of 16 bytes, along k first: A's along its rows,
  // B's down its columns.
  layout.tile = {kCoreRows, kCoreRows};
  layout.tilesAlong = operand == 0 ? 1 : 0;
  return layout;
}

// warpgroupTiles, named for the instruction.
std::optional<HeldLayout>
WgmmaUnit::heldLayout(const HeldProduct &product) const {
  if (!wgmmaHolds(product))
    return fallback.heldLayout(product);
  HeldLayout layout = warpgroupTiles(product.m, product.n, product.numThreads);
  layout.intrinsic = product.tf32         ? "wgmma.m64nNk8.f32.tf32"
                     : product.a.isBF16() ? "wgmma.m64nNk16.f32.bf16"
                                          : "wgmma.m64nNk16.f32.f16";
  return layout;
}

std::optional<HeldLayout>
WgmmaUnit::emittedLayout(const HeldProduct &product) const {
  // What emit issues as wgmma: whole warpgroups, a product it takes.
  if (!takes(product.a, product.b, product.accumulator, product.m, product.n,
             product.k) ||
      product.numThreads % kWarpgroupSize != 0)
    return fallback.emittedLayout(product);
  HeldLayout layout = warpgroupTiles(product.m, product.n, product.numThreads);
  layout.intrinsic =
      product.a.isBF16() ? "wgmma.m64nNk16.f32.bf16" : "wgmma.m64nNk16.f32.f16";
  return layout;
}

// Products wgmma holds keep their rows in registers (each row of a tile in
// one quad of lanes); mma.sync's, as mma.sync decides.
bool WgmmaUnit::keepsRowsInRegisters(const HeldProduct &product) const {
  return wgmmaHolds(product) || fallback.keepsRowsInRegisters(product);
}

FailureOr<SmallVector<Value>>
WgmmaUnit::accumulate(OpBuilder &b, Location loc, const HeldProduct &product,
                      Value a, Value bOperand, ValueRange registers) const {
  if (!wgmmaHolds(product))
    return fallback.accumulate(b, loc, product, a, bOperand, registers);
  WarpgroupProduct wg(b, loc, product.a, product.m, product.n, product.k,
                      product.threadId, product.numThreads, product.kMajorB);
  // Held products come in the staging layouts (laysOutOperands).
  wg.useStaged(a, bOperand, product.operandsPublished);
  // In a pipelined loop this group may run on while the loop issues its
  // next copies; the previous trip's group must be done (its operand slot
  // is written next).
  int64_t inFlight = product.deferWait ? -1 : product.mayStayInFlight ? 1 : 0;
  return issueHeldTiles(
      b, loc, wg, product, registers, inFlight,
      [&](int64_t, Value fragment, std::pair<Value, Value> origin,
          bool zeroInit) { return wg.issue(fragment, origin, zeroInit); });
}

namespace {

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
  switch (intrinsic.aType) {
  case MatrixElementType::F16:
    input = NVVM::WGMMATypes::f16;
    break;
  case MatrixElementType::BF16:
    input = NVVM::WGMMATypes::bf16;
    break;
  default:
    return failure();
  }
  if (intrinsic.m != kTileM || intrinsic.k != kTileK || n % 8 != 0 ||
      n > kMaxTileN || intrinsic.accType != MatrixElementType::F32)
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
          NVVM::MMAShapeAttr::get(ctx, kTileM, n, kTileK), input, input,
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

// As finish: the wait reads and writes every accumulator register, so that
// nothing reads one before it; without registers, the plain wait.
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

// The scores' accumulator layout is A's register fragment when both
// products split their rows alike: the same rows and warpgroups, one tile
// of each across N, A's k the scores' n.
bool WgmmaUnit::takesRegisterA(const HeldProduct &product,
                               const HeldProduct &from) const {
  if (!wgmmaHolds(product) || !wgmmaHolds(from) ||
      product.numThreads != from.numThreads || product.m != from.m ||
      product.k != from.n || product.a != product.b)
    return false;
  int64_t numWarpgroups = product.numThreads / kWarpgroupSize;
  return tileWidth(product.m, product.n, numWarpgroups) == product.n &&
         tileWidth(from.m, from.n, numWarpgroups) == from.n;
}

FailureOr<SmallVector<Value>>
WgmmaUnit::accumulateRegisterA(OpBuilder &b, Location loc,
                               const HeldProduct &product,
                               const HeldProduct &from, ValueRange aElements,
                               Value bOperand, ValueRange registers) const {
  WarpgroupProduct wg(b, loc, product.a, product.m, product.n, product.k,
                      product.threadId, product.numThreads, product.kMajorB);
  // A is not read from memory: only B's buffer is published.
  wg.useStaged(Value(), bOperand, product.operandsPublished);
  size_t aPerTile = from.n / 2;
  int64_t tilesHere = wg.tiles / wg.numWarpgroups;
  if (aElements.size() != aPerTile * tilesHere)
    return emitError(loc, "tk-cuda: wgmma got ")
           << aElements.size() << " register elements of A";
  // A's register fragments, 4 registers a k step: `aElements` holds each
  // tile's A in the accumulator layout of a product K wide (per 8 columns
  // c, rows g and g + 8 at columns 8c + 2q and 8c + 2q + 1), which is A's
  // fragment of each k step ({(g, 2q), (g + 8, 2q), (g, 8 + 2q),
  // (g + 8, 8 + 2q)}, two halves each, the lower column in the low half).
  // They are packed before the fence like every register (packed between
  // two wgmma, ptxas would add a fence there: C7519).
  SmallVector<SmallVector<Value>> packedA;
  for (int64_t j = 0; j < tilesHere; ++j)
    packedA.push_back(
        packHalves(b, loc, aElements.slice(j * aPerTile, aPerTile)));
  // A's registers may be written right after: the product must be done,
  // unless core finishes it first (deferWait; ptxas keeps the registers of
  // a running wgmma until its wait).
  return issueHeldTiles(
      b, loc, wg, product, registers, product.deferWait ? -1 : 0,
      [&](int64_t j, Value fragment, std::pair<Value, Value> origin,
          bool zeroInit) {
        return wg.issueRegisterA(fragment, origin, packedA[j], zeroInit);
      });
}

// The wait through the accumulators (waitThroughRegisters).
SmallVector<Value> WgmmaUnit::finish(OpBuilder &b, Location loc,
                                     const HeldProduct &product,
                                     ValueRange registers,
                                     int64_t stillRunning) const {
  if (!wgmmaHolds(product))
    return fallback.finish(b, loc, product, registers, stillRunning);
  return waitThroughRegisters(b, loc, registers, stillRunning);
}

// finish ties f32 registers.
bool WgmmaUnit::defersWaits(const HeldProduct &product) const {
  return wgmmaHolds(product) && product.accumulator.isF32();
}

LogicalResult WgmmaUnit::emit(OpBuilder &b, Location loc,
                              const Product &product) const {
  auto aType = cast<MemRefType>(product.a.getType());
  auto bType = cast<MemRefType>(product.b.getType());
  auto resultType = cast<MemRefType>(product.result.getType());
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1),
          n = bType.getDimSize(1);
  Type elementType = aType.getElementType();
  // wgmma is issued by whole warpgroups: a program of 2 warps runs mma.sync.
  if (!takes(elementType, bType.getElementType(), resultType.getElementType(),
             m, n, k) ||
      product.numThreads % kWarpgroupSize != 0)
    return fallback.emit(b, loc, product);

  WarpgroupProduct wg(b, loc, elementType, m, n, k, product.threadId,
                      product.numThreads);
  if (failed(wg.stage(product.a, product.b)))
    return failure();
  // Each warpgroup takes tiles in turn, as emittedLayout states.
  Value warpgroup = wg.div(product.threadId, wg.layout.groupThreads);
  auto tileLoop =
      scf::ForOp::create(b, loc, warpgroup, wg.index(wg.tiles),
                         wg.index(product.numThreads / wg.layout.groupThreads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(tileLoop.getBody());
  std::pair<Value, Value> origin = wg.tileOrigin(tileLoop.getInductionVar());
  SmallVector<std::pair<Value, Value>> positions = wg.positions(origin);
  SmallVector<Value> initial;
  for (auto [row, col] : positions)
    initial.push_back(product.accumulator(b, loc, row, col));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value fragment =
      wg.issue(packFragment(b, loc, wg.fragmentType(), initial), origin);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  SmallVector<Value> values;
  unpackFragment(b, loc, fragment, values);
  for (auto [value, position] : llvm::zip_equal(values, positions))
    memref::StoreOp::create(b, loc, value, product.result,
                            ValueRange{position.first, position.second});
  return success();
}

} // namespace tk::cuda
