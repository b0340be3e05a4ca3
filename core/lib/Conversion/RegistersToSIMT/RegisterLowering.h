//===- RegisterLowering.h - tiles in registers, per thread -----*- C++ -*-===//
//
// What the patterns of tk-convert-registers-to-simt share (DESIGN.md §3,
// pass 8): a tile of #tkw.linear layout is the values its registers hold in
// one thread, so a tensor of N registers becomes N SSA values (a 1:N type
// conversion). Where a register's element sits in the tile is the layout
// applied to (register, lane, warp): the register part is a constant, the
// lane and warp part is computed once per op from the thread id.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_REGISTERSTOSIMT_REGISTERLOWERING_H
#define TK_CORE_CONVERSION_REGISTERSTOSIMT_REGISTERLOWERING_H

#include "tk/core/Analysis/AsyncCopies.h"
#include "tk/core/DotOperands.h"
#include "tk/core/Layout/LinearLayout.h"
#include "tk/core/WarpDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <map>
#include <memory>
#include <optional>

namespace tk {
class AsyncCopyUnit;
class MatrixUnit;
struct TargetInfo;
} // namespace tk

namespace tk::simt {

/// The types of one thread: a tile becomes one value per register of its
/// #tkw.linear layout, a `!tk.ptr` a global `!llvm.ptr`. Tiles without a
/// linear layout and block pointers have no conversion.
class RegisterTypeConverter : public mlir::TypeConverter {
public:
  RegisterTypeConverter(mlir::MLIRContext *context, unsigned globalAddressSpace,
                        int64_t warpSize, int64_t numWarps,
                        bool broadcastWarpIndex);

  int64_t getWarpSize() const { return warpSize; }
  int64_t getNumWarps() const { return numWarps; }
  unsigned getGlobalAddressSpace() const { return globalAddressSpace; }
  /// TargetInfo::broadcastWarpIndex.
  bool getBroadcastWarpIndex() const { return broadcastWarpIndex; }

private:
  unsigned globalAddressSpace;
  int64_t warpSize;
  int64_t numWarps;
  bool broadcastWarpIndex;
};

/// The layout of a tile type, or null.
const LinearLayout *getLinearLayout(mlir::Type type);

/// This thread's lane and warp (i32), from gpu.thread_id, computed at the
/// start of the function (CSE keeps one), where every lane is active.
struct ThreadPosition {
  mlir::Value lane;
  mlir::Value warp;

  /// Where the converter's target asks for it, the warp index is broadcast
  /// from lane 0 (gpu.subgroup_broadcast) so that the backend's compiler
  /// treats whatever derives from it as uniform: ptxas keeps it in uniform
  /// registers (a wgmma descriptor then needs no R2UR), AMDGPU in scalar
  /// ones.
  static ThreadPosition get(mlir::OpBuilder &b, mlir::Location loc,
                            const RegisterTypeConverter &converter);
};

/// The coordinates of the elements a thread holds in a tile of `layout`:
/// for each output dimension, the lane and warp part (computed once), to
/// which each register XORs its constant part.
class ThreadCoordinates {
public:
  ThreadCoordinates(mlir::OpBuilder &b, mlir::Location loc,
                    const LinearLayout &layout, const ThreadPosition &thread);

  /// Coordinate `dim` (an index into the output dimensions) of register
  /// `reg`, as i32.
  mlir::Value get(mlir::OpBuilder &b, mlir::Location loc, int32_t reg,
                  unsigned dim) const;
  /// The flat coordinate of register `reg` (the first output dimension in
  /// the lowest bits, LinearLayout's convention), XORed with `origin`, as
  /// i32.
  mlir::Value getFlat(mlir::OpBuilder &b, mlir::Location loc, int32_t reg,
                      int32_t origin = 0) const;
  /// getFlat's two parts, which it joins by xorConstant: the thread's flat
  /// coordinate (the same for every register) with the bits it can set,
  /// and register `reg`'s constant flat coordinate XOR `origin`. For a
  /// caller that maps flat coordinates on by a linear function (a
  /// swizzle): it maps the thread's once and each constant at compile time.
  std::pair<mlir::Value, int64_t> getThreadFlat(mlir::OpBuilder &b,
                                                mlir::Location loc) const;
  int64_t getConstantFlat(int32_t reg, int32_t origin = 0) const;

private:
  const LinearLayout &layout;
  llvm::SmallVector<mlir::Value> threadPart;
  /// The bits of each output dimension that lanes and warps can set: a
  /// register's constant outside them is added, not XORed, so that the
  /// backend's compiler can fold it into an address's immediate offset.
  llvm::SmallVector<int32_t> threadBits;
};

/// `thread` (a value whose set bits lie within `threadBits`) XOR
/// `constant`, computed as (thread ^ (constant & threadBits)) +
/// (constant & ~threadBits): the two agree, and the part outside the
/// thread's bits is an addition the backend's compiler folds into an
/// address's immediate offset. The registers then share one XORed base per
/// value of the overlapping bits (a swizzle's phases), not one each.
mlir::Value xorConstant(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value thread, int64_t threadBits,
                        int64_t constant);

/// The register part of register `reg`'s coordinates, one per output
/// dimension.
llvm::SmallVector<int32_t> registerCoordinates(const LinearLayout &layout,
                                               int32_t reg);

/// Which register of `from` holds, in the same thread, the element that
/// register r of `to` holds after `project` maps `to`'s coordinates onto
/// `from`'s; for every r. Nothing when some element is not in the same
/// thread's registers (lanes or warps differ after projection).
std::optional<llvm::SmallVector<int32_t>> mapRegisters(
    const LinearLayout &from, const LinearLayout &to,
    llvm::function_ref<llvm::SmallVector<int32_t>(llvm::ArrayRef<int32_t>)>
        project);

/// The register of a two-dimensional layout that holds each element a
/// thread has, by its register-only coordinates (lane and warp 0): the
/// first where registers hold copies.
class RegisterIndex {
public:
  explicit RegisterIndex(const LinearLayout &layout);
  std::optional<int32_t> lookup(int32_t row, int32_t col) const;

private:
  std::map<llvm::SmallVector<int32_t>, int32_t> holder;
};

/// The registers of a layout (`index`) that hold an intrinsic's fragment
/// (`fragment`, register -> coordinates) at (row, col), in the fragment's
/// register order; nothing where one is not the thread's.
std::optional<llvm::SmallVector<int32_t>>
gatherFragment(const RegisterIndex &index, const LinearLayout &fragment,
               int32_t row, int32_t col);

/// Bits of `dim` (register, lane, warp) whose element some other value of
/// the bit already holds: the copies of a broadcast.
int32_t getFreeMask(const LinearLayout &layout, llvm::StringRef dim);

/// The i1 that is true in one thread of each group holding the same
/// elements of `layout` (lane and warp copies), or null when no thread
/// holds a copy.
mlir::Value isFirstHolder(mlir::OpBuilder &b, mlir::Location loc,
                          const LinearLayout &layout,
                          const ThreadPosition &thread);

/// Who writes, checks or prints the elements of a tile of `type` (stores,
/// atomics, tk.assert, tk.print): the first thread of each group holding
/// the same elements (`holder`, null where no other thread holds a copy),
/// and of its registers those with no bit of `registerCopies` (the others
/// repeat an element). For a scalar, thread 0.
struct Writers {
  mlir::Value holder;
  int32_t registerCopies = 0;
};
Writers getWriters(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                   const ThreadPosition &thread);

/// `body` under `condition`, or unconditionally where it is null.
void guarded(mlir::OpBuilder &b, mlir::Location loc, mlir::Value condition,
             llvm::function_ref<void(mlir::OpBuilder &)> body);

/// `value` of an i1, integer or float type up to 64 bits, exchanged with
/// the lane `offset` away by XOR within `warpSize` lanes.
mlir::Value shuffleXor(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value value, int64_t offset, int64_t warpSize);
/// `value` as above, from the lane `lane` names in `mode` (an index or an
/// XOR mask, i32).
mlir::Value shuffle(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                    mlir::Value lane, int64_t warpSize,
                    mlir::gpu::ShuffleMode mode);

/// The element type a tile of `type` keeps in workgroup memory (i1 as i8,
/// pointers as i64).
mlir::Type storageType(mlir::Type elementType);

/// A value as workgroup memory keeps it (i1 as i8, a pointer as its
/// address), and back to `type` (the converted element type: an LLVM
/// pointer for a tk pointer).
mlir::Value toStorage(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Value value);
mlir::Value fromStorage(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value value, mlir::Type type);
/// An i32 as an index.
mlir::Value toIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value);

/// The workgroup buffer of `elementType` that holds the kernel's scratch
/// (`tkw.shared_memory` bytes) for that type, declared once per kernel.
mlir::Value getScratchBuffer(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Operation *op, mlir::Type elementType);

/// The values of the combine region of a tk.reduce or tk.scan applied to
/// `accumulated` and `next` (one per source), computed at `b` as
/// emitScalarOp computes elements.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
combine(mlir::OpBuilder &b, mlir::Location loc, mlir::Region &region,
        mlir::ValueRange accumulated, mlir::ValueRange next);

/// The scratch through which a tk.reduce or tk.scan whose axis crosses
/// warps exchanges one value per warp, slot (a line, or a line's chunk)
/// and source: the sources one after another from the op's tkw.scratch
/// offset, each slot-major (tk-allocate-shared-memory's sizes).
class WarpExchange {
public:
  /// This warp's place along the axis from `warpBits` (its bits along the
  /// axis, lowest place first), and its writer: the thread whose lane bits
  /// along the axis (`laneAxisMask`) are zero and that is no copy. Fails,
  /// with the op's error, without tkw.scratch or its buffers.
  static mlir::FailureOr<WarpExchange>
  create(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
         mlir::ValueRange srcs, const LinearLayout &layout,
         const ThreadPosition &thread, llvm::ArrayRef<int32_t> warpBits,
         int32_t laneAxisMask, int64_t slots);

  int64_t getNumWarps() const { return warps; }
  mlir::Value getWarpIndex() const { return warpIndex; }
  /// i1: this thread writes its warp's values.
  mlir::Value getWriter() const { return writer; }
  /// Writes `value` of source `source` at `slot` (i32) for this warp.
  void store(mlir::OpBuilder &b, mlir::Location loc, unsigned source,
             mlir::Value value, mlir::Value slot) const;
  /// What warp `warp` wrote of source `source` at `slot`.
  mlir::Value load(mlir::OpBuilder &b, mlir::Location loc, unsigned source,
                   mlir::Value slot, int64_t warp) const;

private:
  mlir::Value index(mlir::OpBuilder &b, mlir::Location loc, unsigned source,
                    mlir::Value slot, mlir::Value warp) const;

  int64_t warps = 1;
  mlir::Value warpIndex, writer;
  llvm::SmallVector<mlir::Value> buffers;
  llvm::SmallVector<mlir::Type> elements;
  llvm::SmallVector<int64_t> bases;
};

/// The flat index (i32) of the line register `reg` lies on: its
/// coordinates without `axis`, the first dimension lowest.
mlir::Value getLineIndex(mlir::OpBuilder &b, mlir::Location loc,
                         const LinearLayout &layout,
                         const ThreadCoordinates &coordinates, int32_t reg,
                         int64_t axis);

/// `values` (of `buffer`'s element type) stored at element `index` of the
/// 1-D workgroup memref `buffer`: one store, or one vector store aligned to
/// its size.
void storeRun(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange values,
              mlir::Value buffer, mlir::Value index);
/// `width` elements loaded from element `index` of `buffer`: one load, or
/// one vector load aligned to its size, taken apart.
llvm::SmallVector<mlir::Value> loadRun(mlir::OpBuilder &b, mlir::Location loc,
                                       mlir::Value buffer, mlir::Value index,
                                       int32_t width);

/// The elements of `element` one element of `buffer` holds: 1, or for a
/// buffer of words (vector<4xi32>: a cooperative-matrix dot's operands on
/// SPIR-V, whose arrays of 16-bit elements allow no wider access) as many
/// as fill one.
int64_t getWordElements(mlir::Value buffer, mlir::Type element);

/// Reads registers of a tile in `layout` (register, lane, warp ->
/// coordinates) from workgroup memory, where the tile lies laid out by
/// `shared` (offset -> coordinates) from element `base` (i32) of `buffer`
/// (a 1-D workgroup memref): a warp's whole 8x8 matrices with the matrix
/// unit's loads (ldmatrix) where both layouts fit them, `fragmentRegisters`
/// registers at a time; otherwise vectors of the registers that lie at
/// consecutive offsets.
class SharedTileReader {
public:
  /// `origin`: where the tile starts in the layout `shared` describes
  /// (coordinates aligned to the tile's own shape, which may be smaller:
  /// a block of it), else the origin.
  /// `vectorBytes`: the widest vector read (TargetInfo::workgroupVectorBytes;
  /// 0 reads element by element).
  static mlir::FailureOr<SharedTileReader>
  create(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
         mlir::Value buffer, mlir::Value base, const LinearLayout &layout,
         const LinearLayout &shared, int32_t fragmentRegisters,
         const MatrixUnit *unit, const ThreadPosition &thread,
         llvm::ArrayRef<int64_t> origin = {}, int64_t vectorBytes = 16);

  /// The values of `registers` of the layout, in order.
  llvm::SmallVector<mlir::Value> read(mlir::OpBuilder &b, mlir::Location loc,
                                      llvm::ArrayRef<int32_t> registers) const;

  /// Whether whole fragments are read with the unit's matrix loads.
  bool readsMatrices() const { return bool(laneRow); }

private:
  mlir::Value address(mlir::OpBuilder &b, mlir::Location loc,
                      int32_t reg) const;
  void planMatrixReads(mlir::OpBuilder &b, mlir::Location loc,
                       const ThreadPosition &thread);
  std::optional<llvm::SmallVector<mlir::Value>>
  readMatrices(mlir::OpBuilder &b, mlir::Location loc,
               llvm::ArrayRef<int32_t> registers) const;

  mlir::Value buffer, base;
  /// The offset of the tile's origin, XORed into every offset (linear
  /// layouts map an aligned block's coordinates c + o to offset(c) ^
  /// offset(o)).
  int32_t originOffset = 0;
  mlir::Type element;
  int64_t bytes = 1;
  int32_t readWidth = 1;
  int32_t fragmentRegisters = 1;
  const MatrixUnit *unit = nullptr;
  /// Set where the unit's matrix loads read the fragments.
  mlir::Value laneRow;
  /// The bits of laneRow that some lane or warp sets.
  int32_t laneRowBits = 0;
  bool transpose = false;
  std::shared_ptr<LinearLayout> readOffsets;
  std::shared_ptr<ThreadCoordinates> readThread;
};

/// Writes `values`, the registers of a tile in `source` (register, lane,
/// warp -> coordinates), to workgroup memory laid out by `shared` (offset
/// -> coordinates) from element `base` (i32) of `buffer`: the first holder
/// of each element writes it, in vectors of up to `vectorBytes` (0: element
/// by element) where both layouts keep registers consecutive. A `buffer` of
/// words (vector<4xi32>, getWordElements) takes each whole, packed from a
/// run of registers; `base` still counts elements.
mlir::LogicalResult
writeTileToWorkgroup(mlir::OpBuilder &b, mlir::Location loc,
                     mlir::Operation *op, mlir::ValueRange values,
                     const LinearLayout &source, const LinearLayout &shared,
                     mlir::Value buffer, mlir::Value base,
                     const ThreadPosition &thread, int64_t vectorBytes = 16);

/// The element (i32) where slot `slot` (i32) of a ring of `type` starting
/// at element `ring` begins.
mlir::Value getSlotBase(mlir::OpBuilder &b, mlir::Location loc,
                        warp::RingType type, mlir::Value ring,
                        mlir::Value slot);

/// How a tk.load or tk.store moves the registers of a thread: in runs of
/// `width` registers that the layout keeps consecutive along the last
/// dimension and AxisFacts proves contiguous and aligned in memory (at most
/// 16 bytes), under one mask value where `maskUniform` (AxisFacts proves
/// the mask constant over each run), else with the run's masks tested at
/// run time. Computed on the tile IR before the conversion.
struct AccessPlan {
  int64_t width = 1;
  bool maskUniform = true;
};
AccessPlan getAccessPlan(mlir::Operation *op);

/// Registers [first, first + count) of a tile of `element`s loaded from
/// `pointers` (a run: contiguous from pointers[first]), each under its own
/// bit of `mask` (one value or one per register), `otherOf(b, reg)` where
/// the bit is off.
llvm::SmallVector<mlir::Value> loadEachUnderMask(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Type element,
    mlir::ValueRange pointers, mlir::ValueRange mask, int64_t first,
    int64_t count,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, int64_t)> otherOf);
/// The bits of `mask` (one value or one per register) for registers
/// [first, first + count), and-ed (`all`) or or-ed.
mlir::Value combineMasks(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::ValueRange mask, int64_t first, int64_t count,
                         bool all);
using AccessPlans = llvm::DenseMap<mlir::Operation *, AccessPlan>;

void populateElementwisePatterns(RegisterTypeConverter &converter,
                                 mlir::RewritePatternSet &patterns);
void populateLoadStorePatterns(RegisterTypeConverter &converter,
                               mlir::RewritePatternSet &patterns,
                               const AccessPlans &plans);
void populateReducePatterns(RegisterTypeConverter &converter,
                            mlir::RewritePatternSet &patterns);
/// Conversions through scratch move vectors of up to `workgroupVectorBytes`
/// (the target's; 0: element by element).
void populateConvertLayoutPatterns(RegisterTypeConverter &converter,
                                   mlir::RewritePatternSet &patterns,
                                   int64_t workgroupVectorBytes);
/// tk.assert and tk.print: each element by its first holder (Debug.cpp).
void populateDebugPatterns(RegisterTypeConverter &converter,
                           mlir::RewritePatternSet &patterns);
void populateScanPatterns(RegisterTypeConverter &converter,
                          mlir::RewritePatternSet &patterns);
/// How a tkw.async_copy moves its runs, computed on the tile IR before the
/// conversion: the runs (getAsyncCopyRun) and, where their masks are not
/// proven uniform, a scalar true when the whole tile is in
/// (buildWholeMaskTest; null where the mask is not bounds checks): those
/// tiles copy every run without a test; and a scalar true when no element
/// is (buildWholeMaskOffTest: a pipelined loop's copies past its last trip,
/// a tile past a size's end): those fill every run with zeros without a
/// test.
struct AsyncCopyPlan {
  AsyncCopyRun run;
  mlir::Value wholeTileIn;
  mlir::Value wholeTileOff;
};
using AsyncCopyRuns = llvm::DenseMap<mlir::Operation *, AsyncCopyPlan>;
AsyncCopyRuns getAsyncCopyRuns(mlir::ModuleOp module);

/// The rings: tkw.local_alloc, the copies and waits through `asyncCopy`
/// (may be null: such ops then fail to convert) and tkw.local_load.
void populateRingPatterns(RegisterTypeConverter &converter,
                          mlir::RewritePatternSet &patterns,
                          std::shared_ptr<const AsyncCopyUnit> asyncCopy,
                          std::shared_ptr<const MatrixUnit> matrixUnit,
                          const AsyncCopyRuns &runs, int64_t vectorBytes);
/// tk.dot: multiply-adds in each thread, or the intrinsic the dot records
/// through `matrixUnit` (may be null: such dots then fail to convert).
/// A tk.dot whose intrinsic is a warpgroup's (wgmma), planned by `plan`:
/// its operands read from workgroup memory by the unit, where they lie
/// (a ring's slot) or after their holders write them to the dot's
/// scratch; returns the accumulator's registers.
mlir::FailureOr<llvm::SmallVector<mlir::Value>> lowerWarpgroupDot(
    tk::DotOp op, const DotOperandPlan &plan, const LinearLayout &acc,
    mlir::ValueRange a, mlir::ValueRange b, mlir::ValueRange accumulator,
    mlir::ConversionPatternRewriter &rewriter, const MatrixUnit &unit,
    const RegisterTypeConverter &converter);

/// Where operand `operand` of `op` waits in the dot's scratch: the buffer
/// of its element type (or of `words`) and the element (i32) at `offset`
/// bytes into the dot's part of it (tkw.scratch, from
/// tk-allocate-shared-memory).
struct OperandScratch {
  mlir::Value buffer, base;
};
mlir::FailureOr<OperandScratch>
getOperandScratch(mlir::OpBuilder &b, mlir::Location loc, tk::DotOp op,
                  mlir::Value operand, int64_t offset, mlir::Type words = {});

/// Both operands of `op` (their registers `values`) written by their first
/// holders to the dot's scratch where `plan` places them
/// (DotOperandPlan::shared), then a barrier: where each one starts. With
/// `words` (getCooperativeOperandWords), into the buffer of those.
mlir::FailureOr<std::array<OperandScratch, 2>> writeOperandsToScratch(
    mlir::OpBuilder &b, mlir::Location loc, tk::DotOp op,
    const DotOperandPlan &plan, std::array<mlir::ValueRange, 2> values,
    const ThreadPosition &thread, int64_t vectorBytes, mlir::Type words = {});

/// A tk.dot whose intrinsic is opaque (Vulkan's cooperative matrix), its
/// accumulator a #tkw.cooperative_matrix tile, and the conversions of such
/// tiles to and from their placement, and their splat constants
/// (CooperativeMatrix.cpp).
void populateCooperativeMatrixPatterns(
    RegisterTypeConverter &converter, mlir::RewritePatternSet &patterns,
    std::shared_ptr<const TargetInfo> target);

/// The words (vector<4xi32>) a cooperative-matrix dot's operands wait in,
/// where each thread writes both in whole ones and every matrix starts on
/// one; null otherwise (they wait as elements). Under SPIR-V's logical
/// addressing a workgroup array of f16 takes an element an access, so a
/// thread's 16 bytes of an operand took eight stores; the unit's loads read
/// words as well (OpCooperativeMatrixLoadKHR's stride counts the array's
/// elements).
mlir::Type getCooperativeOperandWords(tk::DotOp dot,
                                      const DotOperandPlan &plan);

/// True when every user of `load` is a warpgroup dot that reads its slot
/// where it lies (DotOperandPlan::inPlace): the load then has no registers
/// to fill.
bool isReadInPlace(warp::LocalLoadOp load);

void populateDotPatterns(RegisterTypeConverter &converter,
                         mlir::RewritePatternSet &patterns,
                         std::shared_ptr<const MatrixUnit> matrixUnit,
                         std::shared_ptr<const TargetInfo> target);
/// tkw.dot_wait through `matrixUnit`'s emitWarpgroupWait.
void populateDotWaitPatterns(RegisterTypeConverter &converter,
                             mlir::RewritePatternSet &patterns,
                             std::shared_ptr<const MatrixUnit> matrixUnit);

} // namespace tk::simt

#endif // TK_CORE_CONVERSION_REGISTERSTOSIMT_REGISTERLOWERING_H
