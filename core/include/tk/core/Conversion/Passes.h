//===- Passes.h - tk conversion passes --------------------------*- C++ -*-===//
//
// Declares the conversions out of the tk dialect and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_PASSES_H_
#define TK_CORE_CONVERSION_PASSES_H_

#include "tk/core/TargetInfo.h"

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

/// A matrix unit of one GPU (NVIDIA mma.sync and wgmma, AMD MFMA and WMMA,
/// Intel DPAS) that tk-convert-registers-to-simt hands the products of
/// tk.dot to, as the intrinsics tk-dot-operand-layouts chose from the
/// TargetInfo preset (`tkw.intrinsic`). Each backend emits its own
/// instructions; core places the fragments by the preset's layouts.
class MatrixUnit {
public:
  virtual ~MatrixUnit() = default;

  /// Makes operands that ordinary stores wrote to workgroup memory visible
  /// to the unit's reads, for every thread (all reach it): a barrier by
  /// default; wgmma, which reads through the async proxy, also fences.
  virtual void publishOperands(mlir::OpBuilder &builder,
                               mlir::Location loc) const {
    mlir::gpu::BarrierOp::create(builder, loc);
  }

  /// The register pipeline's hook (tk-convert-registers-to-simt): one
  /// `intrinsic` on the fragments this lane holds, each operand's elements
  /// in the register order of its FragmentLayout (a, b and the accumulator
  /// in their element types), returning the new accumulator registers in
  /// the same order. Failure (the default) where the unit does not emit
  /// this intrinsic from registers: the kernel is then unsupported.
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
/// cp.async). With it and num-stages > 1, tk-pipeline-loads gives the
/// operand loads of a loop's dots rings of workgroup slots that
/// tk-convert-registers-to-simt fills trips ahead with these copies, so
/// that loads overlap the products.
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

/// The units a backend's compiler gives tk-convert-registers-to-simt for one
/// of its targets (either may be null).
struct TargetUnits {
  std::shared_ptr<const MatrixUnit> matrixUnit;
  std::shared_ptr<const AsyncCopyUnit> asyncCopy;
  /// Adds the dialects the units emit their instructions in, which
  /// tk-convert-registers-to-simt does not know to load (may be null).
  void (*dialects)(mlir::DialectRegistry &registry) = nullptr;
};

/// Makes a backend's units for `target`, a TargetInfo of one of its presets
/// (overrides applied).
using TargetUnitsFn = TargetUnits (*)(const TargetInfo &target);

/// Registers the units a backend gives targets of its preset `preset` (the
/// preset's name, not an alias), for programs that run the passes without
/// the backend's pipeline: tk-opt registers every built backend's
/// (tk::<backend>::registerTargetUnits), and tk-convert-registers-to-simt
/// takes them with `units=<preset>`. A backend's own pipeline hands its
/// units to the pass in C++ and registers none. Thread-safe; registering a
/// preset again replaces it.
void registerTargetUnits(llvm::StringRef preset, TargetUnitsFn make);

/// The units registered for `target`'s preset, or nothing.
std::optional<TargetUnits> lookupTargetUnits(const TargetInfo &target);

/// tk-expand-fp8's patterns: fp8 conversions and constants as integer
/// arithmetic on their bits.
void populateExpandFp8Patterns(mlir::RewritePatternSet &patterns);

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
  /// Whether tk-dot-operand-layouts may stage in workgroup memory a dot
  /// operand that the loop's registers would not hold. A backend that
  /// compiles a kernel both ways to compare the code turns it off for the
  /// second.
  bool stageOperands = true;
};

/// Runs `lowering` on `module`: the register pipeline's layout passes
/// (dumped as 3-registers.mlir), then tk-convert-registers-to-simt,
/// canonicalize and CSE (dumped as 4-loops.mlir). On failure the module is
/// as it was, `error` says why, and `refused` (where given) is set when the
/// pipeline refused the kernel for the target's limits (more workgroup
/// memory than it has, a dot of multiply-adds over a thread's registers):
/// the kernel is unsupported on the target, not the compiler broken. Any
/// other failure leaves `refused` false. `staged` (where given) says whether
/// the lowering kept staged a dot operand in workgroup memory.
mlir::LogicalResult lowerToSIMT(mlir::ModuleOp module,
                                const SIMTLowering &lowering,
                                const StageDumpFn &dump, std::string &error,
                                bool *refused = nullptr,
                                bool *staged = nullptr);

/// Registers every conversion pass of tk with the global registry (for
/// `tk-opt` and textual pipelines).
inline void registerConversionPasses() { registerTkConversionPasses(); }

} // namespace tk

#endif // TK_CORE_CONVERSION_PASSES_H_
