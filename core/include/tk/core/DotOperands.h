//===- DotOperands.h - where a dot reads its operands -----------*- C++ -*-===//
//
// One decision that tk-dot-operand-layouts, tk-allocate-shared-memory and
// the dot's lowering all read (DESIGN.md §3, pass 4): in which register
// layout a thread needs each operand of a dot, and whether the operand
// arrives in it (converted once, in registers) or is read from the dot's
// workgroup memory one k step at a time.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_DOTOPERANDS_H
#define TK_CORE_DOTOPERANDS_H

#include "tk/core/Layout/LinearLayout.h"
#include "tk/core/TargetInfo.h"

#include "mlir/IR/Value.h"
#include "llvm/Support/Error.h"

#include <array>
#include <optional>

namespace mlir::scf {
class ForOp;
} // namespace mlir::scf

namespace tk {
class DotOp;
namespace warp {
class LocalLoadOp;
} // namespace warp

/// Operand `opIdx` (0: a, m x k; 1: b, k x n) of a dot whose accumulator
/// layout is `accumulator`, computed by `intrinsic`: the intrinsic's operand
/// fragment, tiled over registers and warps as the accumulator tiles its
/// own fragment, and repeated along k in further registers. A warpgroup
/// intrinsic (wgmma) takes a in registers in its accumulator's fragment of
/// a product k wide. An error where the intrinsic reads the operand from
/// shared memory itself (it has no fragment) or the accumulator's tiling
/// moves along rows and columns at once.
llvm::Expected<LinearLayout>
getMatrixOperandLayout(const LinearLayout &accumulator,
                       const MatrixIntrinsic &intrinsic, unsigned opIdx,
                       int64_t depth);

/// The most 32-bit registers a thread spends on a dot of fused
/// multiply-adds: where its accumulator and both operands in
/// getFmaOperandLayout would take more, tk-dot-operand-layouts leaves the
/// operands as they are and the dot reads them from its workgroup memory
/// one k step at a time (planDotOperands); a dot whose accumulator and
/// remaining operands still take more is refused.
inline constexpr int64_t kFmaDotRegisters = 256;

/// The 32-bit registers a thread holds of a tile of `elementBits`-bit
/// elements in `layout`.
int64_t getThreadRegisters(const LinearLayout &layout, int64_t elementBits);

/// About the most 32-bit registers the float tiles of `loop` take in a
/// thread at one point of its body: a tile it reads from outside on every
/// trip, an iteration argument from the trip's start and a tile the body
/// computes from there, each to its last use in the body. Splats,
/// constants and broadcasts count nothing (the backend keeps one value or
/// the source's), nor do integer, pointer and mask tiles: indices and
/// addresses a backend derives from a base and the lane's position.
int64_t estimateLoopTileRegisters(mlir::scf::ForOp loop);

/// The columns of one block of operand `opIdx` (a: k, b: n) of an opaque
/// intrinsic in the dot's workgroup memory (columnBlockedSharedLayout): a
/// matrix of the operand lies in one block, its rows that many elements
/// apart. Measured on NVIDIA's Vulkan driver (H100), against the tiles
/// row-major: 12-30% faster in five of seven matmul configurations, 9 and
/// 15% slower in two (docs/bench/2026-12-06-789eacc-vulkan-h100).
inline int64_t getOpaqueOperandBlock(const MatrixIntrinsic &intrinsic,
                                     unsigned opIdx) {
  return opIdx == 0 ? intrinsic.k : intrinsic.n;
}

/// Operand `opIdx` of a dot each thread computes on its own with fused
/// multiply-adds: every index that holds an element of the product holds
/// that element's row of a (column of b) whole along k.
llvm::Expected<LinearLayout>
getFmaOperandLayout(const LinearLayout &accumulator, unsigned opIdx,
                    int64_t depth);

/// An operand a warpgroup intrinsic (wgmma) reads from workgroup memory
/// through a matrix descriptor: the tile in #tkw.nvmma<swizzleBytes,
/// order> (nvmmaSharedLayout).
struct DescriptorOperand {
  int64_t swizzleBytes = 128;
  /// The dimensions fastest first: [1, 0] is A K-major, B MN-major.
  std::array<int32_t, 2> order = {1, 0};
};

/// How operand `opIdx` (0: a, m x k; 1: b, k x n) of `shape` lies for a
/// warpgroup intrinsic whose instructions are `width` columns wide: a
/// K-major; b along the dimension its writers (`source`) hold consecutive
/// elements in, MN-major only for 16-bit elements; the widest swizzle that
/// an instruction's k (K-major) or n (MN-major) fills.
llvm::Expected<DescriptorOperand>
getDescriptorOperand(llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
                     unsigned opIdx, const LinearLayout &source, int64_t width);

/// The columns one warpgroup instruction computes in the accumulator
/// layout `accumulator` (its n, at most 256): the fragment's registers hold
/// columns 2q, 2q + 1 and rows g, g + 8, then further columns 8 apart.
llvm::Expected<int64_t> getWarpgroupWidth(const LinearLayout &accumulator);

/// How a dot in linear layouts reads its operands.
struct DotOperandPlan {
  /// The intrinsic the dot records (`tkw.intrinsic`); none for a dot of
  /// fused multiply-adds.
  std::optional<MatrixIntrinsic> intrinsic;
  /// Per operand: the register layout the product reads it in.
  std::array<LinearLayout, 2> fragments;
  /// Per operand: where it waits in the dot's workgroup memory, as offset
  /// -> coordinates (a swizzled layout; row-major for a dot of multiply-adds,
  /// which reads it in a loop over k), when the operand's own layout is
  /// not `fragments[i]`. Each thread then writes the elements it holds,
  /// and reads the fragments of each k step just before their product.
  std::array<std::optional<LinearLayout>, 2> shared;
  /// Where each shared operand starts in the dot's scratch (bytes), and the
  /// scratch's size.
  std::array<int64_t, 2> sharedOffset = {0, 0};
  int64_t sharedBytes = 0;
  /// For a warpgroup intrinsic: b, and a unless it arrives in its register
  /// fragments (getMatrixOperandLayout; then it has no descriptor), are
  /// read from workgroup memory through descriptors (`shared` is their
  /// nvmma layout, the offsets 1024-byte aligned), and `width` is the
  /// columns of one instruction.
  std::array<std::optional<DescriptorOperand>, 2> descriptors;
  int64_t width = 0;
  /// Per operand of a warpgroup intrinsic: a whole slot of a ring already
  /// in the descriptor's layout (a tkw.local_load of it), which the dot
  /// reads where it lies; it takes no scratch. Per operand of a warp
  /// intrinsic: the slot of a ring of one slot read in the operand's
  /// fragments, which the dot reads one k step at a time.
  std::array<bool, 2> inPlace = {false, false};
};

/// The alignment in bytes of the workgroup memory that holds a tile read
/// through matrix descriptors: the 128-byte swizzle repeats every 1024.
inline constexpr int64_t kDescriptorAlignment = 1024;

/// The order (#tkw.nvmma's, dimensions fastest first) of a ring slot that
/// `descriptor` reads in place, in the slot's own dimensions: the
/// descriptor's order, carried back through a transpose of the slot
/// (`transposed`, tk.trans' order; empty for none).
llvm::SmallVector<int64_t, 2>
getDescriptorSlotOrder(const DescriptorOperand &descriptor,
                       llvm::ArrayRef<int32_t> transposed);

/// The ring slot read that a dot operand is, directly or through one
/// tk.trans (whose order goes to `transposed`); null for any other value.
warp::LocalLoadOp getSlotRead(mlir::Value operand,
                              llvm::ArrayRef<int32_t> *transposed = nullptr);

/// The plan of `dot`, whose tiles have #tkw.linear layouts and whose
/// function records `tkw.target` (`target` is that target, parsed, or
/// null to parse it here).
llvm::Expected<DotOperandPlan> planDotOperands(DotOp dot,
                                               const TargetInfo *target);

/// Triton's swizzle of a matrix operand in workgroup memory
/// (`swizzledSharedLayout`'s parameters): `order` lists the two dimensions,
/// the one rows run along first.
struct OperandSwizzle {
  int64_t vec = 1, perPhase = 1, maxPhase = 1;
  std::array<int32_t, 2> order = {1, 0};
};

/// The swizzle of getOperandSharedLayout.
llvm::Expected<OperandSwizzle> getOperandSwizzle(llvm::ArrayRef<int64_t> shape,
                                                 int64_t elementBytes,
                                                 const LinearLayout &source,
                                                 const LinearLayout &fragments,
                                                 bool readersFirst = false);

/// The layout an operand of `shape` (two dimensions, powers of two) whose
/// elements are `elementBytes` wide is kept in while a dot reads it, input
/// `offset`: row-major along the dimension in which the writers (`source`)
/// hold consecutive elements in consecutive registers, or else the readers
/// (`fragments`) do, so that one side moves vectors (the readers first
/// where `readersFirst`: a target without transposing matrix loads,
/// TargetInfo::transposingMatrixLoads); its 16-byte vectors XOR-swizzled by
/// row as Triton swizzles matrix operands, so that both sides spread over
/// the banks.
llvm::Expected<LinearLayout>
getOperandSharedLayout(llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
                       const LinearLayout &source,
                       const LinearLayout &fragments,
                       bool readersFirst = false);

} // namespace tk

#endif // TK_CORE_DOTOPERANDS_H
