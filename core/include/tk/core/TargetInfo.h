//===- TargetInfo.h - what the layout passes know of a target ---*- C++ -*-===//
//
// The device facts the backend-neutral passes are parameterised by: warp
// size, limits of a workgroup, memory features and the matrix intrinsics.
// Backends fill one from a device query. Presets describe the architectures
// tk targets so that the passes can be run and tested without hardware:
// core keeps the registry, each backend registers its own presets from its
// own folder (backends/<name>/compiler/TargetInfo.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_TARGETINFO_H_
#define TK_CORE_TARGETINFO_H_

#include "tk/core/Layout/LinearLayout.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

/// Which lane of which warp holds which elements of one operand of a matrix
/// intrinsic (its "fragment"), as Triton's MMA encodings state it. The
/// fragment is split into a `warpsPerFragment` grid of blocks, one a warp
/// (one block for a warp-scope intrinsic). In its block, each lane of the
/// warp holds `sizePerLane` elements and the lanes form a `lanesPerWarp`
/// grid; both grids are walked with `order[0]` the fastest dimension
/// (`[1, 0]`: lane 1 is right of lane 0). Where the lanes cover less than
/// the warp's block their tile repeats over it and a lane holds several
/// blocks, in the registers after its first, repeats along rows first;
/// where they cover more the tile wraps and lanes hold copies (wmma's a
/// and b on RDNA3).
struct FragmentLayout {
  std::array<int64_t, 2> sizePerLane = {1, 1};
  std::array<int64_t, 2> lanesPerWarp = {1, 1};
  std::array<int64_t, 2> warpsPerFragment = {1, 1};
  std::array<int64_t, 2> order = {1, 0};

  /// Lanes of a warp (the product of lanesPerWarp).
  int64_t numLanes() const { return lanesPerWarp[0] * lanesPerWarp[1]; }
  /// Warps of the scope (the product of warpsPerFragment).
  int64_t numWarps() const { return warpsPerFragment[0] * warpsPerFragment[1]; }
  /// The (row, column) of every element lane `lane` of warp `warp` holds in
  /// a fragment of `rows` x `cols`, in register order.
  llvm::SmallVector<std::array<int64_t, 2>>
  elementsOf(int64_t warp, int64_t lane, int64_t rows, int64_t cols) const;
  /// The elements each lane holds of a `rows` x `cols` fragment.
  int64_t elementsPerLane(int64_t rows, int64_t cols) const;
  /// The same placement as a linear layout (register, lane, warp -> dim0,
  /// dim1; DESIGN.md §3): built from the elements of one-bit indices and
  /// checked against elementsOf for every register, lane and warp. An error
  /// where the placement is not linear over GF(2) (a size that is not a
  /// power of two).
  llvm::Expected<LinearLayout> toLinearLayout(int64_t rows, int64_t cols) const;
  /// Rows and columns exchanged: a lane holds (c, r) in the register where
  /// this layout has it hold (r, c). Exact where the lanes' tile repeats
  /// along one dimension at most (repeats go rows first);
  /// MatrixIntrinsic::transposedForm checks it.
  FragmentLayout transposed() const;

  /// A fragment layout in one line, as presets write them.
  static FragmentLayout of(std::array<int64_t, 2> sizePerLane,
                           std::array<int64_t, 2> lanesPerWarp,
                           std::array<int64_t, 2> order,
                           std::array<int64_t, 2> warpsPerFragment = {1, 1}) {
    FragmentLayout layout;
    layout.sizePerLane = sizePerLane;
    layout.lanesPerWarp = lanesPerWarp;
    layout.order = order;
    layout.warpsPerFragment = warpsPerFragment;
    return layout;
  }
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
  /// Where the lanes hold a, b and the accumulator. An operand the
  /// instruction reads from shared memory itself (wgmma's b) has none.
  std::optional<FragmentLayout> aLayout, bLayout;
  FragmentLayout accLayout;
  /// The instruction computes the transposed product, acc^T += b^T a^T:
  /// the unit hands it b's fragment as its first operand and a's as its
  /// second, and the layouts above are the instruction's own, transposed
  /// (transposedForm). On AMD's MFMA a lane then holds four consecutive
  /// columns of the accumulator instead of four rows: a row reduces in the
  /// lane's registers, and the rounded accumulator is already the next
  /// dot's operand a (attention's p), as in Triton's `isTransposed` MFMA
  /// layout.
  bool transposed = false;
  /// The implementation places the elements among the lanes, and tk does
  /// not know where (Vulkan's cooperative matrix, DESIGN.md §3): a and b are
  /// read from workgroup memory by the instruction (no aLayout, bLayout),
  /// and the accumulator is a #tkw.cooperative_matrix tile that reaches
  /// registers only through workgroup memory. `accLayout` is where its
  /// elements are once they have: getOpaquePlacement for the target's warp.
  bool opaque = false;

  /// What a dot records of its intrinsic (tkw.intrinsic): the name, and
  /// ".transposed" for the transposed form.
  std::string key() const { return transposed ? name + ".transposed" : name; }

  /// True when a dot of `a` and `b` elements into `acc` elements, with tf32
  /// allowed for f32 inputs when `allowTF32`, can use this intrinsic.
  bool takes(mlir::Type a, mlir::Type b, mlir::Type acc, bool allowTF32) const;

  /// An intrinsic in one line, as presets write them: a and b of one element
  /// type `in`, and where each lane holds them.
  static MatrixIntrinsic of(int64_t m, int64_t n, int64_t k,
                            MatrixElementType in, MatrixElementType acc,
                            MatrixScope scope, llvm::StringRef name,
                            std::optional<FragmentLayout> aLayout,
                            std::optional<FragmentLayout> bLayout,
                            FragmentLayout accLayout) {
    MatrixIntrinsic intrinsic;
    intrinsic.m = m;
    intrinsic.n = n;
    intrinsic.k = k;
    intrinsic.aType = intrinsic.bType = in;
    intrinsic.accType = acc;
    intrinsic.scope = scope;
    intrinsic.name = name.str();
    intrinsic.aLayout = aLayout;
    intrinsic.bLayout = bLayout;
    intrinsic.accLayout = accLayout;
    return intrinsic;
  }

  /// The transposed form (`transposed`) of a square warp intrinsic whose
  /// b fragment is the transpose of its a fragment (AMD's MFMA and WMMA):
  /// the operands' fragments are then unchanged, the accumulator's is
  /// transposed. An error naming what does not hold otherwise.
  llvm::Expected<MatrixIntrinsic> transposedForm() const;
};

/// What the layout passes know of a target device.
struct TargetInfo {
  /// The spec this was made from ("cuda-sm80"); recorded on functions.
  std::string name;
  /// The registered preset it names, aliases resolved ("amd-cdna3" for
  /// "gfx942:warp-size=32").
  std::string preset;
  /// Lanes of a warp (wave, subgroup).
  int64_t warpSize = 1;
  /// Threads a workgroup may have.
  int64_t maxThreadsPerBlock = 1;
  /// 32-bit registers of a compute unit (SM, CU, Xe-core).
  int64_t registersPerCU = 0;
  /// The most 32-bit registers one thread may hold (0: not known). Where a
  /// loop's tiles would take more, tk-dot-operand-layouts keeps an operand
  /// the loop does not change in workgroup memory instead of in registers.
  int64_t registersPerThread = 0;
  /// Bytes of shared (local) memory a workgroup may use.
  int64_t sharedMemoryPerBlock = 0;
  /// The LLVM address space of kernel pointers to global memory: 0 where
  /// the generic space reaches it (NVPTX, AMDGPU), 1 on SPIR-V, whose space
  /// 0 is a work-item's private memory.
  unsigned globalAddressSpace = 0;
  /// Banks of shared memory and the bytes of one bank: accesses of one
  /// warp to different addresses in one bank are serialised.
  int64_t sharedMemoryBanks = 0;
  int64_t sharedMemoryBankBytes = 4;
  /// Bytes one lane moves with its widest vector load.
  int64_t maxVectorLoadBytes = 16;
  /// Bytes one lane moves with one vector access of workgroup memory
  /// (vector.load and vector.store on a workgroup memref); 0 where the
  /// backend's lowering takes workgroup memory an element at a time.
  int64_t workgroupVectorBytes = 0;
  /// The register pipeline broadcasts the warp index from lane 0
  /// (gpu.subgroup_broadcast, which the backend lowers) so that the
  /// backend's compiler keeps what derives from it in uniform (scalar)
  /// registers: NVIDIA's and AMD's compilers do not infer that
  /// thread_id / warp_size is the same on every lane.
  bool broadcastWarpIndex = false;
  /// The backend reads a 16-bit matrix operand's fragments transposed from
  /// workgroup memory in one instruction (ldmatrix.trans): an operand there
  /// may keep its writers' order whatever order its readers take. Elsewhere
  /// it keeps the readers' (their runs along k), so that a lane's fragment
  /// is one vector read, and the transposition is paid once per element
  /// written, not once per element read (by every warp that reads it).
  bool transposingMatrixLoads = false;
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

  /// Parses `name[:key=value]...`: a registered preset's name or alias
  /// (registerTargetPreset) and overrides of warp-size, max-threads,
  /// registers, thread-registers, shared-memory, shared-memory-banks,
  /// vector-bytes, workgroup-vector-bytes, and `intrinsics=KEY[,KEY...]` (or
  /// `none`), which keeps of the preset's intrinsics those named, in the
  /// preset's order (a device lists the ones it has). On failure returns
  /// nothing and says why in `error` (naming the known presets).
  static std::optional<TargetInfo> parse(llvm::StringRef spec,
                                         std::string &error);

  /// Why a workgroup of `numWarps` warps cannot run on this target (not a
  /// positive power of two, or more threads than a workgroup may have), or
  /// nothing when it can.
  std::optional<std::string> workgroupProblem(int64_t numWarps) const;

  /// The intrinsics of `scope` that take these element types, in order of
  /// preference.
  llvm::SmallVector<const MatrixIntrinsic *>
  findIntrinsics(mlir::Type a, mlir::Type b, mlir::Type acc, bool allowTF32,
                 MatrixScope scope = MatrixScope::Warp) const;

  /// The intrinsic whose key() a dot recorded (tkw.intrinsic), or null.
  const MatrixIntrinsic *findIntrinsic(llvm::StringRef key) const;
};

/// Makes a TargetInfo preset.
using TargetPresetFn = TargetInfo (*)();

/// Registers a preset under `name` and `aliases` (thread-safe; registering a
/// name again replaces it). Backends call this from their own folder
/// (tk::<backend>::registerTargetPresets) before they run the layout passes;
/// tk-opt registers every backend's.
void registerTargetPreset(llvm::StringRef name,
                          llvm::ArrayRef<llvm::StringRef> aliases,
                          TargetPresetFn make);

/// The registered presets' names (not aliases), sorted.
std::vector<std::string> registeredTargetPresets();

/// Checks that every intrinsic's fragments fit the target's warp (lanes per
/// warp = warpSize, warps = 1, 4 for a warpgroup) and that each accumulator
/// element is held by exactly one lane. Returns the first problem.
std::optional<std::string> verifyFragments(const TargetInfo &target);

/// The subgroups a kernel of `numWarps` warps runs as, on subgroups of
/// `subgroupSize` lanes. num_warps counts warps of 32 lanes, the width
/// kernels are tuned for (Triton's on NVIDIA): a narrower subgroup runs
/// 32 / width of them for each warp, so that a lane holds the share of each
/// tile the kernel's author planned (not 4 times it at 8 lanes), within
/// `maxThreadsPerBlock`. Subgroups of 32 lanes or more run `numWarps`.
int64_t getSubgroupsForWarps(int64_t numWarps, int64_t subgroupSize,
                             int64_t maxThreadsPerBlock);

/// Where an opaque intrinsic's m x n accumulator lies once it has left
/// through workgroup memory (MatrixIntrinsic::opaque): each lane a run of
/// consecutive elements of one row, lanes along the row and then down the
/// rows, so that the run is one vector read.
FragmentLayout getOpaquePlacement(int64_t m, int64_t n, int64_t warpSize);

/// The name of an element type as intrinsics spell it ("f16", "tf32").
llvm::StringRef stringifyMatrixElementType(MatrixElementType type);

} // namespace tk

#endif // TK_CORE_TARGETINFO_H_
