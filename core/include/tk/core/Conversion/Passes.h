//===- Passes.h - tk conversion passes --------------------------*- C++ -*-===//
//
// Declares the conversions out of the tk dialect and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_PASSES_H_
#define TK_CORE_CONVERSION_PASSES_H_

#include "tk/core/Conversion/Fragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace tk {

/// Name of the unit attribute that marks a `func.func` lowered from a
/// `tk.func`; its last six arguments are the grid position (i32 program ids
/// x, y, z, then i32 numbers of programs x, y, z).
inline constexpr llvm::StringLiteral kLoweredKernelAttrName = "tk_kernel";

/// Number of trailing grid arguments of a lowered kernel.
inline constexpr unsigned kNumGridArgs = 6;

#define GEN_PASS_DECL
#include "tk/core/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tk/core/Conversion/Passes.h.inc"

/// A matrix unit of one GPU (NVIDIA mma.sync, AMD MFMA, Intel DPAS) that the
/// GPU form, tk-convert-to-simt, hands `tk.dot` to. Each backend selects
/// and emits its own instructions; core only describes the product.
class MatrixUnit {
public:
  virtual ~MatrixUnit() = default;

  /// True when the unit computes an (m x k) . (k x n) product of these
  /// element types into `accumulator` (the wide type the product is kept in).
  virtual bool supports(mlir::Type a, mlir::Type b, mlir::Type accumulator,
                        int64_t m, int64_t n, int64_t k) const = 0;

  /// One product to emit at the builder's insertion point, run by every
  /// thread of the program.
  struct Product {
    /// Operands in workgroup memory: memref<m x k>, memref<k x n>.
    mlir::Value a, b;
    /// Where the result goes: memref<m x n x accumulator> in workgroup
    /// memory; every element must be written.
    mlir::Value result;
    /// The initial accumulator at (row, col), widened to the result's type;
    /// may be called anywhere below the insertion point.
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::Value row, mlir::Value col)>
        accumulator;
    /// This thread's index in the program (index) and the thread count.
    mlir::Value threadId;
    int64_t numThreads = 0;
  };

  virtual mlir::LogicalResult emit(mlir::OpBuilder &builder, mlir::Location loc,
                                   const Product &product) const = 0;

  /// A product whose accumulator the unit keeps in registers: each thread
  /// holds a fixed list of accumulator elements, so a loop that carries the
  /// accumulator (the K loop of a matmul) carries those values instead of a
  /// tile in workgroup memory.
  struct HeldProduct {
    mlir::Type a, b, accumulator;
    int64_t m = 0, n = 0, k = 0;
    /// f32 operands may be rounded to tf32 (input_precision tf32).
    bool tf32 = false;
    /// Set for accumulate: both operands came through the AsyncCopyUnit,
    /// whose wait and the barrier after it already published them to every
    /// reader (so the unit needs no barrier of its own).
    bool operandsPublished = false;
    /// Set for accumulate: the unit may return before the product is done
    /// (the registers are only read by the next accumulate or after
    /// `finish`, and the operands are not written before a barrier that
    /// follows the next accumulate's return).
    bool mayStayInFlight = false;
    /// Set for accumulate when the unit defersWaits: it returns with the
    /// product running, and core calls `finish` before any read of the
    /// registers and before the operands are written again. Products
    /// issued in between may run on (FlashAttention-3's overlap: one row
    /// group's softmax while the unit multiplies another's).
    bool deferWait = false;
    /// B is the transpose of a row-major tile (attention's k^T): a unit
    /// that lays out operands may take it K-major, so that its rows copy
    /// as they are.
    bool kMajorB = false;
    /// The layout passes' choice for this dot (tk::warp::chooseDotTiling):
    /// rows across warps (attention, whose softmax then stays in a warp)
    /// rather than a square partition of the warps. A unit may follow it
    /// when it spreads the product over warps, and describe its rows
    /// (registerRows) where each warp holds whole rows.
    bool rowsAcrossWarps = false;
    /// This thread's index in the program (index) and the thread count.
    mlir::Value threadId;
    int64_t numThreads = 0;
  };
  /// True when the unit holds this product's accumulator in registers:
  /// when it states how (heldLayout; `threadId` is not read). The other
  /// calls are made only then.
  bool holds(const HeldProduct &product) const {
    return heldLayout(product).has_value();
  }

  /// The shape of operand `operand` (0: A, 1: B) of `product`: m x k, k x n.
  static std::array<int64_t, 2> operandShape(const HeldProduct &product,
                                             unsigned operand) {
    return operand == 0 ? std::array<int64_t, 2>{product.m, product.k}
                        : std::array<int64_t, 2>{product.k, product.n};
  }

  /// The layout the unit reads operand `operand` (0: A, 1: B) of a held
  /// product in from workgroup memory, stated as a layout (SharedLayout,
  /// Fragments.h: mma.sync's swizzled chunks, wgmma's core matrices, a
  /// preset's fragment order): nothing (the default) for row-major
  /// memref<m x k> and memref<k x n>. tk-assign-thread-layouts records it
  /// on the conversion that moves the operand there (`#tkw.operand`), and
  /// core writes the operand, or copies runs of global memory into it, at
  /// the offsets it gives. A unit states both operands' layouts or neither.
  virtual std::optional<SharedLayout> operandLayout(const HeldProduct &product,
                                                    unsigned operand) const {
    return std::nullopt;
  }
  /// True when the unit reads `product`'s operands in its operandLayout.
  bool laysOutOperands(const HeldProduct &product) const {
    return operandLayout(product, 0).has_value();
  }

  /// Makes operands that ordinary stores wrote in the operandLayout
  /// visible to the unit's reads, for every thread (all reach it): what
  /// accumulate does for operands that are not `operandsPublished`. Core
  /// calls it once for an operand it lays out before a loop.
  virtual void publishOperands(mlir::OpBuilder &builder,
                               mlir::Location loc) const {
    mlir::gpu::BarrierOp::create(builder, loc);
  }

  /// Waits for the products accumulate left in flight (mayStayInFlight,
  /// deferWait) up to `product`, leaving the `stillRunning` issued after it
  /// running, and returns `registers` (of `product` and of products issued
  /// before it) as they are after the wait: code reading them must use
  /// these, which the compiler cannot move above the wait.
  virtual llvm::SmallVector<mlir::Value>
  finish(mlir::OpBuilder &builder, mlir::Location loc,
         const HeldProduct &product, mlir::ValueRange registers,
         int64_t stillRunning = 0) const {
    return llvm::SmallVector<mlir::Value>(registers);
  }
  /// True when accumulate may return with `product` still running
  /// (deferWait).
  virtual bool defersWaits(const HeldProduct &product) const { return false; }

  /// How the unit holds `product`'s accumulator in registers, stated as a
  /// layout (Fragments.h), as Triton's MMA encodings are: the instruction's
  /// accumulator fragment (its TargetInfo preset's), the group of threads
  /// that holds a tile, and how tiles go to groups. Core places the
  /// registers from it (registerPositions), and tk-assign-thread-layouts
  /// records it on the held dot (`tkw.held`). Set whenever holds() is.
  virtual std::optional<HeldLayout>
  heldLayout(const HeldProduct &product) const {
    return std::nullopt;
  }

  /// How emit spreads a product it computes without holding it over the
  /// threads, stated as a layout: the instruction's tiles of the result
  /// dealt to groups of threads in turn (`cyclic`), each group holding a
  /// tile's accumulator fragment while it computes it. Described as a
  /// HeldProduct whose `threadId` and flags are not read.
  /// tk-assign-thread-layouts records it on the dot (`tkw.held` without a
  /// `tkw.product`), tk-convert-to-simt refuses a dot that records another,
  /// and emit writes each result element from the thread it states
  /// (emittedLayoutMismatch checks that). Nothing (the default) where the
  /// unit states none.
  virtual std::optional<HeldLayout>
  emittedLayout(const HeldProduct &product) const {
    return std::nullopt;
  }

  /// The (row, col) of each accumulator register of this thread, in
  /// register order, as heldLayout places them: core initialises the
  /// registers there, and writes them back from there (to workgroup memory,
  /// or straight to a tk.store). Empty when the unit states no layout.
  llvm::SmallVector<std::pair<mlir::Value, mlir::Value>>
  registerPositions(mlir::OpBuilder &builder, mlir::Location loc,
                    const HeldProduct &product) const;

  /// How the rows of `product`'s registers fall on registers and lanes
  /// (RegisterRows, Fragments.h), as its held layout places them
  /// (HeldLayout::rowsOf). Empty where the layout splits a row over warps,
  /// or the unit keeps its rows in workgroup memory (keepsRowsInRegisters);
  /// row reductions of the product then go through workgroup memory.
  /// Every unit places a thread's register 0 in the same row for each of
  /// its products of one row count and thread count, so a row's value
  /// computed from one product's registers can be read at another's.
  using RegisterRows = tk::RegisterRows;
  std::optional<RegisterRows> registerRows(const HeldProduct &product) const;
  /// False where a unit has not yet been checked on its hardware with row
  /// values kept in registers (see MmaSyncUnit).
  virtual bool keepsRowsInRegisters(const HeldProduct &product) const {
    return true;
  }

  /// True when `product` can read its A operand from registers that hold
  /// it in the accumulator layout of `from` (register i of a thread holds
  /// A's element at from's position i): FlashAttention's probabilities,
  /// computed from the scores' registers, feeding the next product without
  /// workgroup memory. accumulateRegisterA is called only then.
  virtual bool takesRegisterA(const HeldProduct &product,
                              const HeldProduct &from) const {
    return false;
  }
  /// accumulate with A given as `aElements` (of product.a's type, in
  /// `from`'s register order) instead of a buffer.
  virtual mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  accumulateRegisterA(mlir::OpBuilder &builder, mlir::Location loc,
                      const HeldProduct &product, const HeldProduct &from,
                      mlir::ValueRange aElements, mlir::Value b,
                      mlir::ValueRange registers) const {
    return mlir::failure();
  }

  /// `registers` + a . b, for operands in workgroup memory (memref<m x k>,
  /// memref<k x n>, or 1-D in the unit's layout where laysOutOperands)
  /// that every thread of the program reaches here with.
  virtual mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  accumulate(mlir::OpBuilder &builder, mlir::Location loc,
             const HeldProduct &product, mlir::Value a, mlir::Value b,
             mlir::ValueRange registers) const;

  /// The register pipeline's hook (tk-convert-registers-to-simt): one
  /// `intrinsic` on the fragments this lane holds, each operand's elements
  /// in the register order of its FragmentLayout (a, b and the accumulator
  /// in their element types), returning the new accumulator registers in
  /// the same order. Failure (the default) where the unit does not emit
  /// this intrinsic from registers: the kernel then takes
  /// tk-convert-to-simt.
  virtual mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitFragmentProduct(mlir::OpBuilder &builder, mlir::Location loc,
                      const MatrixIntrinsic &intrinsic, mlir::ValueRange a,
                      mlir::ValueRange b, mlir::ValueRange accumulator) const {
    return mlir::failure();
  }

  /// An operand of a warpgroup product (emitWarpgroupProducts) in
  /// workgroup memory: a tile of `buffer` (a 1-D memref) laid out by
  /// nvmmaSharedLayout with `swizzleBytes`, contiguous along k
  /// (`kMajor`) or along m or n, whose columns of atoms lie
  /// `atomColumnBytes` apart. Without a buffer, operand a is in registers
  /// (WarpgroupTile::aFragments).
  struct WarpgroupOperand {
    mlir::Value buffer;
    int64_t swizzleBytes = 128;
    bool kMajor = true;
    int64_t atomColumnBytes = 0;
  };
  /// One instruction tile of a warpgroup product: for each k step of the
  /// intrinsic, the element of each operand's buffer (i32) where the
  /// instruction's block of it starts (a: its 64 rows, b: its `n`
  /// columns); and this thread's accumulator registers of the tile in the
  /// intrinsic's fragment order. Where a is in registers, `aFragments`
  /// replaces `aStarts`: for each k step, this thread's elements of a's
  /// block in the order of the intrinsic's accumulator fragment of a
  /// product k wide.
  struct WarpgroupTile {
    llvm::SmallVector<mlir::Value> aStarts, bStarts;
    std::vector<llvm::SmallVector<mlir::Value, 8>> aFragments;
    llvm::SmallVector<mlir::Value> accumulator;
  };
  /// The register pipeline's hook for warpgroup intrinsics (wgmma): every
  /// thread of a warpgroup reaches it with the same tiles, whose operands
  /// every thread's writes have reached (published to the unit's reads);
  /// returns each tile's accumulator registers after its k steps, once the
  /// products are complete; with `pending` > 0 they are left running (no
  /// wait: the caller waits with emitWarpgroupWait), and the registers may
  /// only feed the next products of the same tiles. Failure (the default)
  /// where the unit has no warpgroup intrinsic.
  virtual mlir::FailureOr<llvm::SmallVector<llvm::SmallVector<mlir::Value>>>
  emitWarpgroupProducts(mlir::OpBuilder &builder, mlir::Location loc,
                        const MatrixIntrinsic &intrinsic, int64_t n,
                        const WarpgroupOperand &a, const WarpgroupOperand &b,
                        llvm::ArrayRef<WarpgroupTile> tiles,
                        int64_t pending) const {
    return mlir::failure();
  }
  /// Waits until at most `pending` groups of warpgroup products run, and
  /// returns `registers` (f32 accumulators of emitWarpgroupProducts, may be
  /// empty) as they are then. Failure (the default) where the unit has
  /// none.
  virtual mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitWarpgroupWait(mlir::OpBuilder &builder, mlir::Location loc,
                    mlir::ValueRange registers, int64_t pending) const {
    return mlir::failure();
  }

  /// The register pipeline's hook for reading fragments from workgroup
  /// memory: `count` (1, 2 or 4) 8x8 matrices of 16-bit `element`s, read
  /// by the whole warp in one instruction (NVIDIA's ldmatrix). Lane L gives
  /// in `index` the element of `buffer` (a 1-D memref of workgroup memory)
  /// that starts row L % 8 of matrix L / 8, each row 16 contiguous bytes;
  /// lane 4r + c receives, of each matrix, its elements (r, 2c) and
  /// (r, 2c + 1), or with `transpose` (2c, r) and (2c + 1, r). Returns the
  /// 2 * count elements, matrix by matrix. Failure (the default) where the
  /// unit has no such instruction: core then loads the elements itself.
  virtual mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  loadMatrices(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value buffer,
               mlir::Value index, int64_t count, bool transpose,
               mlir::Type element) const {
    return mlir::failure();
  }
};

/// A GPU's asynchronous copy from global to workgroup memory (NVIDIA
/// cp.async). With it and num-stages > 1, tk-convert-to-simt loads the
/// operand tiles of a loop's dot num-stages - 1
/// trips ahead into a ring of buffers, so that loads overlap the products.
class AsyncCopyUnit {
public:
  virtual ~AsyncCopyUnit() = default;

  /// True when one copy may move `bytes` bytes (aligned to `bytes`).
  virtual bool supportsBytes(int64_t bytes) const = 0;

  /// Starts copying `bytes` bytes from `source` (an !llvm.ptr into global
  /// memory) to element `offset` (index) of `destination`, a row-major
  /// memref in workgroup memory. Where `sourceBytes` (an i32, may be null)
  /// is given, only that many bytes are read (0 or `bytes`) and the rest
  /// written as zeros: a masked-off copy reads nothing.
  virtual void copy(mlir::OpBuilder &builder, mlir::Location loc,
                    mlir::Value destination, mlir::Value offset,
                    mlir::Value source, int64_t bytes,
                    mlir::Value sourceBytes) const = 0;

  /// Closes the group of copies this thread started since the last commit.
  virtual void commit(mlir::OpBuilder &builder, mlir::Location loc) const = 0;

  /// Waits until at most `pending` of this thread's groups are in flight;
  /// after it and a barrier every thread's completed copies are visible to
  /// every reader, the matrix unit's included.
  virtual void wait(mlir::OpBuilder &builder, mlir::Location loc,
                    int64_t pending) const = 0;
};

/// The units a backend's compiler gives the thread-level passes and
/// tk-convert-to-simt for one of its targets (either may be null).
struct TargetUnits {
  std::shared_ptr<const MatrixUnit> matrixUnit;
  std::shared_ptr<const AsyncCopyUnit> asyncCopy;
  /// Adds the dialects the units emit their instructions in, which
  /// tk-convert-to-simt does not know to load (may be null).
  void (*dialects)(mlir::DialectRegistry &registry) = nullptr;
};

/// Makes a backend's units for `target`, a TargetInfo of one of its presets
/// (overrides applied).
using TargetUnitsFn = TargetUnits (*)(const TargetInfo &target);

/// Registers the units a backend gives targets of its preset `preset` (the
/// preset's name, not an alias), for programs that run the passes without
/// the backend's pipeline: tk-opt registers every built backend's
/// (tk::<backend>::registerTargetUnits), and the passes take them with
/// `target-units=true`. A backend's own pipeline hands its units to the
/// passes in C++ and registers none. Thread-safe; registering a preset again
/// replaces it.
void registerTargetUnits(llvm::StringRef preset, TargetUnitsFn make);

/// The units registered for `target`'s preset, or nothing.
std::optional<TargetUnits> lookupTargetUnits(const TargetInfo &target);

/// Where `unit`'s registerPositions for `product` and `layout` disagree:
/// the first thread and register whose (row, col) differ, or a count that
/// differs, in words; nothing when they agree for every thread. The
/// positions are emitted with constant thread ids and folded with MLIR's
/// own folders. With the unit's own heldLayout this checks the IR that
/// places registers against the layout's arithmetic; with another layout,
/// that the unit does not hold the product that way.
std::optional<std::string> heldLayoutMismatch(mlir::MLIRContext &context,
                                              const MatrixUnit &unit,
                                              MatrixUnit::HeldProduct product,
                                              const HeldLayout &layout);

/// Where `unit`'s emit of `product` (unheld) and `layout` disagree: the
/// first thread whose writes of the result differ from the elements the
/// layout gives it (elementsOf), in words; nothing when they agree for every
/// thread. emit runs with constant thread ids and operands in scratch
/// buffers, its loops are unrolled and its index arithmetic folded by
/// MLIR's canonicalizer. The dialects the unit emits must be loaded.
std::optional<std::string>
emittedLayoutMismatch(mlir::MLIRContext &context, const MatrixUnit &unit,
                      MatrixUnit::HeldProduct product,
                      const HeldLayout &layout);

/// tk-convert-registers-to-simt with a backend's matrix unit, which emits
/// the intrinsics dots record (may be null: then only dots without one
/// convert), and its async copy unit, which fills rings (may be null: then
/// a kernel with rings does not convert).
std::unique_ptr<mlir::Pass> createConvertRegistersToSIMTPass(
    std::shared_ptr<const MatrixUnit> matrixUnit,
    std::shared_ptr<const AsyncCopyUnit> asyncCopy);

/// A backend's TK_DUMP_IR hook: writes `module` as the stage file `file`.
using StageDumpFn =
    std::function<void(llvm::StringRef file, mlir::ModuleOp module)>;

/// The GPU lowering every backend runs from a verified tk module to the code
/// of one thread, before its own dialect: the register pipeline of
/// DESIGN.md §3, for the backend's target and units.
struct SIMTLowering {
  /// The TargetInfo preset (its warp size, workgroup memory, matrix
  /// intrinsics), and the program's warps of that size.
  std::string target;
  int64_t numWarps = 4;
  /// The most trips a loop's loads may run ahead (tk-pipeline-loads); more
  /// than 1 only with an async copy unit.
  int64_t numStages = 1;
  std::shared_ptr<const MatrixUnit> matrixUnit;
  std::shared_ptr<const AsyncCopyUnit> asyncCopy;
  /// The most 32-bit registers a thread may hold for a dot without a
  /// matrix intrinsic: its accumulator and its operands as they arrive
  /// (tk::kFmaDotRegisters decides whether those are whole rows and columns
  /// or tiles the dot writes to its workgroup memory). A kernel with more
  /// is refused.
  int64_t maxFmaDotRegisters = 256;
};

/// Runs `lowering` on `module`: the register pipeline's layout passes
/// (dumped as 3-registers.mlir), then tk-convert-registers-to-simt,
/// canonicalize and CSE (dumped as 4-loops.mlir). On failure the module is
/// as it was, `error` says why, and `refused` (where given) is set when the
/// pipeline refused the kernel (more workgroup memory than the target has,
/// an op it has no pattern for): the kernel is unsupported on the target,
/// not the compiler broken.
mlir::LogicalResult lowerToSIMT(mlir::ModuleOp module,
                                const SIMTLowering &lowering,
                                const StageDumpFn &dump, std::string &error,
                                bool *refused = nullptr);

/// Registers every conversion pass of tk with the global registry (for
/// `tk-opt` and textual pipelines).
inline void registerConversionPasses() { registerTkConversionPasses(); }

} // namespace tk

#endif // TK_CORE_CONVERSION_PASSES_H_
