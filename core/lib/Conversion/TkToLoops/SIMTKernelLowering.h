//===- SIMTKernelLowering.h - one kernel to one thread's code ---*- C++ -*-===//
//
// The GPU form of KernelLowering, for tk-convert-to-simt (TkToSIMT.cpp):
// tiles are spread over the threads of a workgroup as their thread layouts
// say, buffers are workgroup memory published by barriers, reductions
// (Reductions.cpp), scans and dots (Threads.cpp) combine what the lanes,
// warps and the matrix unit hold, and dot operands are copied trips ahead
// into rings (OperandRings.cpp). Private to this folder.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_TKTOLOOPS_SIMTKERNELLOWERING_H_
#define TK_CORE_CONVERSION_TKTOLOOPS_SIMTKERNELLOWERING_H_

#include "KernelLowering.h"

namespace mlir::tk_to_loops {

/// Lowers one tk.func to the code each thread of a workgroup runs.
class SIMTKernelLowering final : public KernelLowering {
public:
  SIMTKernelLowering(tk::FuncOp source, func::FuncOp target,
                     const Config &config)
      : KernelLowering(source, target, config) {}

private:
  // --- KernelLowering ----------------------------------------------------
  /// From the hardware's block ids and grid size.
  void bindGridPosition(unsigned numArgs) override;
  LogicalResult lowerReduce(tk::ReduceOp op) override;
  /// One thread per scanned line (#tkw.split<parts = 1>).
  LogicalResult lowerScan(tk::ScanOp op) override;
  /// Issued to the matrix unit (held in its registers or not), or an FMA
  /// loop over the result's elements.
  LogicalResult lowerDot(tk::DotOp op) override;
  /// A dot operand's conversion to the unit's layout, or a held
  /// accumulator's loop result or a held product's result written from the
  /// unit's registers to workgroup memory (placeConversions).
  LogicalResult lowerConvertLayout(tk::warp::ConvertLayoutOp convert) override;
  /// The layout tk-assign-thread-layouts recorded, at the top level; none in
  /// code one thread runs.
  FailureOr<std::optional<StoreLayout>>
  threadLayoutOfAccess(Operation *access) override;
  /// No: every thread would walk the whole mask.
  bool walksMasksToVersion() const override { return false; }
  /// A workgroup-memory global per buffer. (No reuse between buffers whose
  /// lifetimes do not overlap yet.)
  Value newBuffer(ArrayRef<int64_t> shape, Type elementType,
                  int64_t alignment) override;
  /// A nest outside any other is spread over the program's threads (or
  /// visits what each owns) and ends with a barrier.
  LogicalResult visitIndices(ArrayRef<int64_t> shape,
                             function_ref<LogicalResult(ArrayRef<Value>)> body,
                             bool contiguous, function_ref<void()> afterRun,
                             int64_t maxRun, bool publish) override;
  LogicalResult copyBuffer(Value from, Value to, ArrayRef<int64_t> shape,
                           Type elementType, int64_t maxRun,
                           bool publish) override;
  /// Thread 0.
  LogicalResult onFirstThread(function_ref<LogicalResult()> body) override;
  /// Computed by thread 0, then read by every thread from workgroup memory.
  FailureOr<Value> once(Type type,
                        function_ref<FailureOr<Value>()> compute) override;
  void barrier() override;
  /// gpu.printf (vprintf on NVIDIA takes its arguments packed).
  void emitPrintf(StringRef format, ValueRange args) override;
  /// Rings of async copies (OperandRings.cpp), where the backend has an
  /// async copy unit and num_stages > 1.
  FailureOr<std::unique_ptr<OperandPipeline>>
  pipelineOperands(const LoopCarry &loop) override;

  // --- tiles in registers (Registers.cpp) --------------------------------
  const OwnedTile *ownedRead(Value value) override;
  void settleProducts(Value result = {}) override;
  /// A held accumulator's register being rescaled, a register-resident
  /// tile's at the index an owner iteration visits, a row tile's at the
  /// visited row.
  FailureOr<Value> elementInRegisters(Value value,
                                      ArrayRef<Value> index) override;
  bool isHeldResult(Value value) const override {
    return heldResults.count(value) != 0;
  }
  LogicalResult keepInRegisters(Value value) override;
  LogicalResult keepInRows(Value value) override;
  LogicalResult visitAsOwners(const OwnedTile *owned,
                              function_ref<LogicalResult()> body) override;
  FailureOr<bool>
  storeFromHeldRegisters(tk::StoreOp store,
                         const std::optional<StoreLayout> &layout,
                         function_ref<LogicalResult(ArrayRef<Value>)> storeOne,
                         function_ref<void()> emitPending) override;
  /// A row tile (#tkw.rows) in its rows' registers, a held accumulator in
  /// the matrix unit's.
  FailureOr<std::optional<SmallVector<Value>>>
  carryInRegisters(LoopCarry &loop, unsigned i, Value init) override;
  /// A held accumulator's loop result stays in its registers (heldResults)
  /// for stores and conversions to read.
  LogicalResult bindCarriedRegisters(const LoopCarry &loop, unsigned i,
                                     Value value, ValueRange registers,
                                     bool isResult) override;
  FailureOr<SmallVector<Value>> yieldCarriedRegisters(const LoopCarry &loop,
                                                      unsigned i,
                                                      Value value) override;
  /// The registers of `value` (1-D) at each row of `layout`'s product that
  /// this thread holds.
  FailureOr<SmallVector<Value>> computeRows(Value value, tk::DotOp layout);
  /// The registers of `product`'s accumulator, from the tile `init`.
  FailureOr<SmallVector<Value>>
  initHeldAccumulator(const tk::MatrixUnit::HeldProduct &product, Value init);
  /// The held loop result `value` is computed from that way, if any.
  Value heldRoot(Value value);
  /// Writes held registers into `buffer` (memref<m x n>), each at its
  /// register's position.
  LogicalResult storeHeld(const tk::MatrixUnit::HeldProduct &product,
                          ValueRange registers, Value buffer);
  /// Maps `tile` to its value in `wide`, a buffer of the accumulator type of
  /// a dot, rounding it to the tile's element type where that is narrower.
  LogicalResult narrowAccumulator(Value tile, Value wide);
  /// The held accumulator (a loop's iteration argument) that `acc` is an
  /// element-wise function of, or null.
  Value rescaledHeldAccumulator(Value acc);
  /// While alive, contiguous top-level forEachIndex nests iterate over the
  /// indices each thread owns (where register-resident tiles are read):
  /// runs, or the positions of `fragment`'s accumulator registers.
  struct OwnerIteration {
    OwnerIteration(
        SIMTKernelLowering &lowering, bool enabled,
        std::optional<tk::MatrixUnit::HeldProduct> fragment = std::nullopt,
        int64_t run = 0)
        : lowering(lowering), saved(lowering.iterateAsOwner),
          savedFragment(lowering.ownerFragment), savedRun(lowering.ownerRun) {
      lowering.iterateAsOwner = enabled;
      lowering.ownerFragment = fragment;
      lowering.ownerRun = run;
    }
    /// Iterates in the layout of `owned` (disabled when null).
    OwnerIteration(SIMTKernelLowering &lowering, const OwnedTile *owned)
        : OwnerIteration(lowering, owned != nullptr,
                         owned ? owned->fragment : std::nullopt,
                         owned ? owned->run : 0) {}
    ~OwnerIteration() {
      lowering.iterateAsOwner = saved;
      lowering.ownerFragment = savedFragment;
      lowering.ownerRun = savedRun;
    }
    SIMTKernelLowering &lowering;
    bool saved;
    std::optional<tk::MatrixUnit::HeldProduct> savedFragment;
    int64_t savedRun;
  };

  /// Dot accumulators the matrix unit holds in registers, by tile: a
  /// loop-carried accumulator and the dot results that update it.
  DenseMap<Value, SmallVector<Value>> heldAccumulators;
  /// While one register of a held accumulator is rescaled: the accumulator
  /// tile and that register, which `element` returns for the tile.
  DenseMap<Value, Value> heldElementOverride;
  /// Loop results held in registers past their loop, for tk.stores to
  /// write from there (onlyStoredFromRegisters) and conversions to read;
  /// held products' results for their conversions to read.
  struct HeldResult {
    tk::MatrixUnit::HeldProduct product;
    SmallVector<Value> registers;
  };
  DenseMap<Value, HeldResult> heldResults;
  /// Held products issued without a wait (deferWait), oldest first. Their
  /// registers (ownedTiles, heldAccumulators) are read only after
  /// settleProducts; a pipelined loop's trip settles them all before its
  /// end, so their operand slots are free at the next trip's top.
  struct RunningProduct {
    Value result;
    tk::MatrixUnit::HeldProduct product;
  };
  SmallVector<RunningProduct> runningProducts;
  DenseMap<Value, OwnedTile> ownedTiles;
  /// Inside an owner iteration's body: the index it visits and the
  /// register that holds it.
  bool iterateAsOwner = false;
  std::optional<tk::MatrixUnit::HeldProduct> ownerFragment;
  /// The run width of the #tkw.runs layout iterated (no fragment).
  int64_t ownerRun = 0;
  int64_t ownedSlot = -1;
  SmallVector<Value, 4> ownedIndex;

  struct RowTile {
    SmallVector<int64_t> offsets;
    SmallVector<Value> registers;
  };
  DenseMap<Value, RowTile> rowTiles;
  /// While a held product's registers are visited, the row index of the
  /// visited register and its row offset: reads of row-resident tiles at
  /// that index take the register of that offset.
  Value visitedRow;
  int64_t visitedRowOffset = 0;
  struct RowVisit {
    /// Visits row index `row`, at row offset `offset`.
    RowVisit(SIMTKernelLowering &lowering, Value row, int64_t offset)
        : lowering(lowering), savedRow(lowering.visitedRow),
          savedOffset(lowering.visitedRowOffset) {
      lowering.visitedRow = row;
      lowering.visitedRowOffset = offset;
    }
    /// Visits register `i` of a product with `rows` at row index `row`
    /// (no row when the unit does not describe its rows).
    RowVisit(SIMTKernelLowering &lowering,
             const std::optional<tk::MatrixUnit::RegisterRows> &rows, size_t i,
             Value row)
        : RowVisit(lowering, rows ? row : Value(),
                   rows ? rows->rowOfRegister[i] : 0) {}
    ~RowVisit() {
      lowering.visitedRow = savedRow;
      lowering.visitedRowOffset = savedOffset;
    }
    SIMTKernelLowering &lowering;
    Value savedRow;
    int64_t savedOffset;
  };

  // --- operand rings (OperandRings.cpp) ----------------------------------
  class OperandRings;
  /// Copies the tile `load` reads at trip `iv` (the old loop's induction
  /// variable's value) into `slot`, with the loop's pointer walks as in
  /// `walks`: async copies of `runBytes` where a run of elements is
  /// contiguous, aligned and unmasked, plain loads elsewhere.
  /// `offsetOf` (row, col) gives the element offset in a 1-D slot laid out
  /// for a matrix unit; null: the slot is row-major like the tile.
  using OffsetFn = function_ref<Value(Value row, Value col)>;
  LogicalResult prefetch(scf::ForOp loop, tk::LoadOp load, Value slot, Value iv,
                         const DenseMap<Value, PointerWalk> &walks,
                         int64_t runBytes, OffsetFn offsetOf, bool runsProven);
  /// Copies `load`'s tile into `slot` (in the unit's layout where
  /// `offsetOf` is given) a run of `runBytes` at a time, the runs spread
  /// over the threads: an async copy where a run is on, contiguous and
  /// aligned, element by element (with the mask and other) otherwise.
  /// `proven`: the facts show every run contiguous and aligned; `allOn`:
  /// every lane of the mask is on as well, so no run is checked.
  LogicalResult copyRuns(tk::LoadOp load, Value slot, int64_t runBytes,
                         OffsetFn offsetOf, bool proven, bool allOn);
  /// A buffer for a slot of a prefetch ring: one an earlier loop's ring
  /// left free (freeRingSlots) where one fits, else a new one.
  Value ringSlot(ArrayRef<int64_t> shape, Type elementType, int64_t alignment);
  /// Dot operands whose buffer (in `buffers`) is already in the matrix
  /// unit's layout: the prefetched ones.
  llvm::DenseSet<Value> laidOutOperands;
  /// In the body of a pipelined loop that issues its copies at the top of
  /// each trip (after the barrier that follows the wait).
  bool ringsWrittenAtTop = false;
  /// That loop's lowered body, where products may be issued without a wait
  /// (not in a region nested in it).
  Block *ringsWrittenAtTopBody = nullptr;
  /// Workgroup buffers of the prefetch rings of loops already lowered:
  /// nothing reads them after their loop, so a later loop's ring reuses them
  /// (a main loop and its tail share one ring).
  SmallVector<Value> freeRingSlots;

  // --- reductions (Reductions.cpp) ---------------------------------------
  /// A whole-tile reduction of register-resident elements: each thread
  /// combines its own, then the warps with shuffles.
  LogicalResult lowerReduceOfOwned(tk::ReduceOp op, const OwnedTile &owned);
  /// A reduction along the rows of elements held in a product's
  /// accumulator layout: each thread combines its registers of a row, then
  /// the lanes sharing the row with shuffles; one of them writes the row's
  /// value.
  LogicalResult lowerRowReduceOfHeld(tk::ReduceOp op,
                                     const tk::MatrixUnit::HeldProduct &held);
  /// `acc` combined with `elementsAt(i)` for i = start, start + step, ...
  /// below `end`, in a loop that carries it (each trip computes its
  /// elements afresh).
  FailureOr<SmallVector<Value>> accumulateStrided(
      Region &combiner, SmallVector<Value> acc, Value start, int64_t end,
      int64_t step,
      function_ref<FailureOr<SmallVector<Value>>(Value)> elementsAt);
  /// `acc` of the lanes of the warp that differ only in the bits
  /// `laneMask` (-1: all lanes of the warp) combined by `combiner`, with
  /// butterfly shuffles of 32-bit values.
  FailureOr<SmallVector<Value>>
  combineLanes(Region &combiner, SmallVector<Value> acc, int64_t laneMask = -1);
  /// The values of `perWarp` (a buffer of one value per warp for each
  /// result, published by a barrier) combined, read by every thread.
  /// `again`: the buffers are written again later (the reduction is in a
  /// loop), so a barrier follows the reads.
  FailureOr<SmallVector<Value>>
  combineWarpValues(Region &combiner, ArrayRef<Value> perWarp, bool again);

  // --- dots (Threads.cpp) ----------------------------------------------
  /// The buffer of `dot`'s accumulator when the dot may write its result
  /// there: a loop-carried tile that only this dot reads and whose next
  /// value is the dot's result. Null otherwise.
  Value inPlaceAccumulator(tk::DotOp dot);
  /// A dot the matrix unit holds in registers (see heldProduct).
  LogicalResult lowerHeldDot(tk::DotOp dot,
                             const tk::MatrixUnit::HeldProduct &held);
  /// Lowers a dot operand's conversion to the unit's layout (#tkw.operand,
  /// placeOperandConversions): a ring's slot named, or the move left to the
  /// first product reading it (heldOperand writes the tile into a buffer of
  /// workgroup memory in the layout the conversion records).
  LogicalResult lowerOperandConversion(tk::warp::ConvertLayoutOp convert,
                                       const OperandConversion &conversion);
  /// The buffer the unit reads operand `operand` (0: A, 1: B) of `dot`
  /// from: row-major, or in the unit's own layout, written by a ring or by
  /// its conversion's move (done here for the first product reading it).
  FailureOr<Value> heldOperand(tk::DotOp dot,
                               const tk::MatrixUnit::HeldProduct &product,
                               unsigned operand);

  /// Operands whose conversion before a loop laid them out once (by
  /// conversion result).
  DenseMap<Value, Value> hoistedOperands;
  /// Conversions to the unit's operand layout whose move the first product
  /// reading them writes (heldOperand), by conversion result: the tile
  /// converted, the layout it goes to, and whether the conversion is before
  /// the products' loop.
  struct PendingOperand {
    Value source;
    tk::SharedLayout layout;
    bool beforeLoop = false;
    /// The runs its threads write it by (0: the owners of its registers).
    int64_t run = 0;
  };
  DenseMap<Value, PendingOperand> pendingOperands;
};

} // namespace mlir::tk_to_loops

#endif // TK_CORE_CONVERSION_TKTOLOOPS_SIMTKERNELLOWERING_H_
