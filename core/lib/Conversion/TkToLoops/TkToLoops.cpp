//===- TkToLoops.cpp - tile ops to scalar loop nests -----------*- C++ -*-===//
//
// Lowers each tk.func to a func.func whose tiles are computed element by
// element in scf.for loop nests, with pointers as !llvm.ptr and memory
// accesses as LLVM dialect loads, stores and atomics guarded by their masks.
//
// The lowering is sink-driven: an element-wise tile (arith/math, splat,
// make_range, shape ops, addptr, loads) gets no storage of its own; the op
// that consumes it (a store, a reduction, a dot operand, a loop-carried
// value) runs one loop nest and recomputes the element-wise chain inside it.
// This is what linalg's element-wise fusion would give, but it keeps memory
// effects in program order (a load never moves past a write, and never fuses
// into a store) and lets reductions and dots pick loop orders that LLVM
// vectorises without reassociating floats.
//
//===----------------------------------------------------------------------===//

#include "AxisFacts.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/SaveAndRestore.h"

#include <map>
#include <optional>

namespace tk {
#define GEN_PASS_DEF_TKCONVERTTOLOOPS
#include "tk/core/Conversion/Passes.h.inc"
} // namespace tk

using namespace mlir;

namespace {

//===----------------------------------------------------------------------===//
// Classification of tk ops
//===----------------------------------------------------------------------===//

/// Partial accumulators of a reduction along the innermost axis: one
/// AVX-512 register of f32. Lanes combine independently, then as a tree.
constexpr int64_t kReductionLanes = 16;

bool isTile(Type type) { return isa<RankedTensorType>(type); }

bool isBlockPtr(Type type) {
  auto ptr = dyn_cast<tk::PtrType>(type);
  return ptr && ptr.isBlockPointer();
}

bool isNarrowFloat(Type type) { return type.isF16() || type.isBF16(); }

/// True for ops computed element by element without storage: their element
/// at index I is a function of their operands' elements at an index derived
/// from I.
bool isElementwiseLike(Operation *op) {
  if (op->getNumResults() != 1 || !isTile(op->getResult(0).getType()))
    return false;
  if (isa<tk::SplatOp, tk::MakeRangeOp, tk::BroadcastOp, tk::ExpandDimsOp,
          tk::ReshapeOp, tk::TransOp, tk::CatOp, tk::JoinOp, tk::AddPtrOp,
          tk::LoadOp, tk::FpToFpOp>(op))
    return true;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return isa<SplatElementsAttr>(constant.getValue());
  if (isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return OpTrait::hasElementwiseMappableTraits(op);
  return false;
}

/// Element-wise ops that keep the index of their tile operands (no
/// broadcast, reshape or transpose in between).
bool keepsIndex(Operation *op) {
  return op->getNumResults() == 1 && op->getNumRegions() == 0 &&
         (isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
          isa<tk::FpToFpOp>(op)) &&
         isTile(op->getResult(0).getType()) &&
         llvm::all_of(op->getOperands(), [&](Value operand) {
           return !isTile(operand.getType()) ||
                  cast<RankedTensorType>(operand.getType()).getShape() ==
                      cast<RankedTensorType>(op->getResult(0).getType())
                          .getShape();
         });
}

/// True when `op` may run more than once in a program: it is in a loop.
bool insideLoop(Operation *op) {
  return op->getParentOfType<scf::ForOp>() ||
         op->getParentOfType<scf::WhileOp>();
}

/// True when an op may write memory a load could read (tk stores, atomics,
/// prints), looking inside nested regions.
bool mayWriteMemory(Operation *op) {
  bool writes = false;
  op->walk([&](Operation *nested) {
    if (isa<tk::StoreOp, tk::AtomicRMWOp, tk::AtomicCASOp>(nested))
      writes = true;
  });
  return writes;
}

/// LLVM's atomic ordering of a tk memory semantic.
LLVM::AtomicOrdering toOrdering(tk::MemSemantic sem) {
  switch (sem) {
  case tk::MemSemantic::Relaxed:
    return LLVM::AtomicOrdering::monotonic;
  case tk::MemSemantic::Acquire:
    return LLVM::AtomicOrdering::acquire;
  case tk::MemSemantic::Release:
    return LLVM::AtomicOrdering::release;
  case tk::MemSemantic::AcqRel:
    return LLVM::AtomicOrdering::acq_rel;
  }
  return LLVM::AtomicOrdering::seq_cst;
}

/// The strongest ordering allowed for the failure case of a cmpxchg (LLVM IR
/// forbids release orderings there).
LLVM::AtomicOrdering failureOrdering(LLVM::AtomicOrdering success) {
  switch (success) {
  case LLVM::AtomicOrdering::acq_rel:
  case LLVM::AtomicOrdering::acquire:
    return LLVM::AtomicOrdering::acquire;
  case LLVM::AtomicOrdering::seq_cst:
    return LLVM::AtomicOrdering::seq_cst;
  default:
    return LLVM::AtomicOrdering::monotonic;
  }
}

/// A block pointer after lowering: its base and per-dimension scalars.
struct BlockPtrValue {
  Value base;                 // !llvm.ptr
  SmallVector<Value> shape;   // i64, elements
  SmallVector<Value> strides; // i64, elements
  SmallVector<Value> offsets; // i32, elements
  SmallVector<Value> flatten() const {
    SmallVector<Value> all{base};
    llvm::append_range(all, shape);
    llvm::append_range(all, strides);
    llvm::append_range(all, offsets);
    return all;
  }
  static BlockPtrValue unflatten(ValueRange values, int64_t rank) {
    BlockPtrValue result;
    result.base = values[0];
    for (int64_t d = 0; d < rank; ++d) {
      result.shape.push_back(values[1 + d]);
      result.strides.push_back(values[1 + rank + d]);
      result.offsets.push_back(values[1 + 2 * rank + d]);
    }
    return result;
  }
};

int64_t blockRank(Type type) {
  return cast<RankedTensorType>(cast<tk::PtrType>(type).getPointeeType())
      .getRank();
}

/// The most async copies of a trip a thread issues as straight-line code.
constexpr int64_t kMaxUnrolledRuns = 16;

/// The threads of a GPU warp (shuffles span them).
constexpr int64_t kWarpSize = 32;

/// The most elements of one register-resident tile a GPU thread holds.
constexpr int64_t kMaxOwnedElements = 64;

/// The run of innermost elements each thread takes when `numThreads` threads
/// spread a tile of `shape` (`total` elements) a run at a time: the widest
/// power of two up to `maxRun` that divides the rows and gives every thread
/// the same number of runs.
int64_t runWidth(ArrayRef<int64_t> shape, int64_t total, int64_t numThreads,
                 int64_t maxRun) {
  int64_t width = 1;
  if (shape.empty())
    return width;
  while (width < maxRun && shape.back() % (width * 2) == 0 &&
         total % (width * 2 * numThreads) == 0)
    width *= 2;
  return width;
}

//===----------------------------------------------------------------------===//
// KernelLowering
//===----------------------------------------------------------------------===//

/// True when two held products lay out their accumulator registers and
/// operands alike (their element types and shapes match).
bool sameLayout(const tk::MatrixUnit::HeldProduct &x,
                const tk::MatrixUnit::HeldProduct &y) {
  return x.a == y.a && x.b == y.b && x.accumulator == y.accumulator &&
         x.m == y.m && x.n == y.n && x.k == y.k && x.tf32 == y.tf32 &&
         x.kMajorB == y.kMajorB && x.numThreads == y.numThreads;
}

/// A tile kept in registers: this thread's elements, and how elements fall
/// on threads (runs of the flat tile, or a held product's accumulator).
struct OwnedTile {
  SmallVector<Value> registers;
  std::optional<tk::MatrixUnit::HeldProduct> fragment;
};

/// Lowers one tk.func into an empty func.func. Holds the value maps of the
/// walk: scalars (IRMapping), tiles kept in buffers, block pointers.
class KernelLowering {
public:
  KernelLowering(tk::FuncOp source, func::FuncOp target,
                 bool fuseLoadsIntoStores, int64_t threadsPerProgram,
                 const tk::MatrixUnit *matrixUnit,
                 const tk::AsyncCopyUnit *asyncCopy, int64_t numStages)
      : source(source), target(target), b(target.getContext()),
        ptrType(LLVM::LLVMPointerType::get(target.getContext())),
        fuseLoadsIntoStores(fuseLoadsIntoStores), numThreads(threadsPerProgram),
        matrixUnit(matrixUnit), asyncCopy(asyncCopy), numStages(numStages) {}

  LogicalResult run();

private:
  /// Pointer tiles a loop advances by a scalar each trip (`p = addptr(p,
  /// splat(step))` at the yield, the K walk of a matmul): `start`, a tile
  /// with no buffer changing under the loop, plus `offset` elements (i64),
  /// so the loop carries one scalar instead of a tile.
  struct PointerWalk {
    Value start, offset;
  };

  // --- analysis ----------------------------------------------------------
  void analyzeRegion(Region &region);
  void analyzeOp(Operation *op);
  /// True for a load whose only readers are held products in the loop
  /// right after it, as operands the unit lays out (FlashAttention's q):
  /// the lowering writes it into that layout once before the loop, straight
  /// from memory, so a stored copy would only take workgroup memory.
  bool laidOutBeforeLoop(Operation *op);
  /// GPU only: un-stores arithmetic tiles that every user can recompute
  /// from stored or cheap tiles (see the definition).
  void preferRecomputing(Region &region);
  bool isCheap(Value value);
  /// GPU only: the tiles kept in their threads' registers instead of
  /// workgroup memory, and their layouts (see the definition).
  void chooseRegisterResident(Region &region);
  /// GPU only: the 1-D tiles of one value per row of a held product kept
  /// in the registers of the threads holding the row, and the dots whose
  /// rows they follow (see the definition).
  void chooseRowResident(Region &region);
  /// The dot whose held registers `reduce` combines along rows
  /// (lowerRowReduceOfHeld), or null.
  tk::DotOp heldRowsOf(tk::ReduceOp reduce);
  /// The sorted distinct row offsets (RegisterRows) of `product`'s
  /// registers; empty when the unit does not describe its rows.
  SmallVector<int64_t> rowOffsets(const tk::MatrixUnit::HeldProduct &product);
  /// True when `tile` (1-D) can be evaluated at rows only: it is row
  /// resident or cheap, or an element-wise function of such tiles; the
  /// layouts of the row-resident tiles it reads go to `layouts`.
  bool readableByRows(Value tile, SmallVectorImpl<tk::DotOp> &layouts);
  /// True when every read of `tile` (1-D, row-resident or computed from
  /// such tiles) happens at a row of registers holding `offsets`: another
  /// row-resident tile, a loop's next value of one, or `tile[:, None]`
  /// read where a product's registers are visited (readInFragments).
  bool readAtRows(Value tile, ArrayRef<int64_t> offsets);
  /// True when every read of the 2-D `tile` happens while the registers of
  /// a held product whose rows are among `offsets` are visited: a resident
  /// tile in such a product's layout, a row reduction of one, the rescale
  /// of a loop's held accumulator, a store of a held loop result.
  bool readInFragments(Value tile, ArrayRef<int64_t> offsets);
  /// The held accumulator's dot a store of `value` writes from registers
  /// (what heldRoot finds at the store), or null.
  tk::DotOp heldStoreDot(Value value);
  /// True when the matrix unit can keep `dot`'s product in registers for
  /// its readers and describes their rows (readByOwners then decides
  /// whether the readers allow it; a loop's yield does not).
  bool holdsForReaders(tk::DotOp dot);
  /// The layouts (residentLayout values) of the resident tiles evaluating
  /// `value` reads, through element-wise ops that are not stored.
  void collectLayouts(Value value, llvm::SmallPtrSetImpl<Operation *> &out);
  /// True when every use of `tile` reads it, directly or through
  /// index-preserving element-wise ops in `block`, at the indices the
  /// reading thread holds in `layout` (null: runs; else a dot's
  /// accumulator): a store, a dot operand, a reduction (of the whole tile
  /// for runs, along rows for an accumulator) of 32-bit values, or a
  /// resident tile of the same layout.
  bool readByOwners(Value tile, Block *block, Operation *layout);
  /// The run width of a register-resident tile of `shape`; 0 when the
  /// threads cannot hold it (uneven, or more than kMaxOwnedElements each).
  int64_t ownedRun(ArrayRef<int64_t> shape) const;
  /// A register-resident tile evaluating `value` reads, or null.
  const OwnedTile *ownedRead(Value value);
  /// Waits for the running product `result` (null: for all) and the ones
  /// issued before it, and rebinds their registers to the values after the
  /// wait; the products issued after it run on. Nothing for a product that
  /// is not running.
  void settleProducts(Value result = {});

  // --- ops ---------------------------------------------------------------
  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerScalarOp(Operation *op);
  LogicalResult lowerFor(scf::ForOp op);
  LogicalResult lowerIf(scf::IfOp op);
  LogicalResult lowerStore(tk::StoreOp op);
  LogicalResult lowerReduce(tk::ReduceOp op);
  LogicalResult lowerScan(tk::ScanOp op);
  LogicalResult lowerDot(tk::DotOp op);
  /// What both forms of the dot lowering start from.
  struct DotPlan {
    int64_t m, n, k;
    /// The result's element type, and the one products accumulate in (f32
    /// for f16/bf16: a narrow accumulator is rounded once, at the end).
    Type accElem, computeElem;
    bool isFloat;
    /// The operands, stored.
    Value a, b;
  };
  /// Shapes, types and stored operands of `dot`; fails (naming `target`)
  /// for fp8 operands.
  FailureOr<DotPlan> planDot(tk::DotOp dot, StringRef target);
  /// The product of `dot` as the matrix unit would hold it, when it does.
  std::optional<tk::MatrixUnit::HeldProduct> heldProduct(tk::DotOp dot);
  /// The step of iteration argument `i` when `loop` walks it as a
  /// PointerWalk, null otherwise.
  Value pointerWalkStep(scf::ForOp loop, unsigned i);
  /// The dot that updates iteration argument `i` of `loop` in registers
  /// (its only use, yielded as is), null otherwise.
  tk::DotOp heldAccumulatorDot(scf::ForOp loop, unsigned i);
  /// A load of a dot operand that `loop` can issue trips ahead: its
  /// address and mask depend only on the induction variable, pointer walks
  /// with steps fixed outside the loop, pure scalar ops and values from
  /// outside, and nothing in the loop writes memory.
  bool canPrefetch(scf::ForOp loop, tk::LoadOp load, ArrayRef<Value> walkSteps,
                   int64_t &runBytes);
  /// When every use of `tile` is operand `operand` of a product the unit
  /// holds, all alike (attention's k^T and v, shared by the products of
  /// several row groups), that product: one copy in its layout serves them
  /// all.
  std::optional<tk::MatrixUnit::HeldProduct>
  heldOperandLayout(Value tile, unsigned operand);
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
  /// The registers of `product`'s accumulator, from the tile `init`.
  FailureOr<SmallVector<Value>>
  initHeldAccumulator(const tk::MatrixUnit::HeldProduct &product, Value init);
  /// True when every use of the held loop result `tile` (in `product`'s
  /// registers) is, through element-wise ops of its own shape that are not
  /// stored themselves, the value of a tk.store, or is the first value of
  /// an accumulator a later loop holds alike (a main loop's product handed
  /// to its tail): those read the held registers directly.
  bool onlyStoredFromRegisters(Value tile,
                               const tk::MatrixUnit::HeldProduct &product);
  /// The first value `isRoot` accepts among `value` and, through
  /// index-keeping element-wise ops that are not stored, the tiles it is
  /// computed from; null if none.
  Value findThroughIndexKeeping(Value value, function_ref<bool(Value)> isRoot);
  /// The held loop result `value` is computed from that way, if any.
  Value heldRoot(Value value);
  /// Writes held registers into `buffer` (memref<m x n>), each at its
  /// register's position.
  LogicalResult storeHeld(const tk::MatrixUnit::HeldProduct &product,
                          ValueRange registers, Value buffer);
  /// Maps `tile` to its value in `wide`, a buffer of the accumulator type of
  /// a dot, rounding it to the tile's element type where that is narrower.
  LogicalResult narrowAccumulator(Value tile, Value wide);
  /// `v` (an operand or accumulator element) in the plan's compute type.
  Value widenForDot(const DotPlan &plan, Value v);
  // The GPU forms (threads-per-program > 0).
  LogicalResult lowerReduceOnThreads(tk::ReduceOp op);
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
  /// `laneMask` (all lanes by default) combined by `combiner`, with
  /// butterfly shuffles of 32-bit values.
  FailureOr<SmallVector<Value>> combineLanes(Region &combiner,
                                             SmallVector<Value> acc,
                                             int64_t laneMask = kWarpSize - 1);
  /// The values of `perWarp` (a buffer of one value per warp for each
  /// result, published by a barrier) combined, read by every thread.
  /// `again`: the buffers are written again later (the reduction is in a
  /// loop), so a barrier follows the reads.
  FailureOr<SmallVector<Value>>
  combineWarpValues(Region &combiner, ArrayRef<Value> perWarp, bool again);
  LogicalResult lowerScanOnThreads(tk::ScanOp op);
  LogicalResult lowerDotOnThreads(tk::DotOp op);
  /// A dot the matrix unit holds in registers (see heldProduct).
  /// The held accumulator (a loop's iteration argument) that `acc` is an
  /// element-wise function of, or null.
  Value rescaledHeldAccumulator(Value acc);
  LogicalResult lowerHeldDot(tk::DotOp dot,
                             const tk::MatrixUnit::HeldProduct &held);
  /// The buffer the unit reads operand `operand` (0: A, 1: B) of `dot`
  /// from: row-major, or in the unit's own layout where it has one.
  FailureOr<Value> heldOperand(tk::DotOp dot,
                               const tk::MatrixUnit::HeldProduct &product,
                               unsigned operand);
  LogicalResult lowerAtomicRMW(tk::AtomicRMWOp op);
  LogicalResult lowerAtomicCAS(tk::AtomicCASOp op);
  LogicalResult lowerPrint(tk::PrintOp op);
  LogicalResult lowerAssert(tk::AssertOp op);
  /// printf(format, args...) on the host or the GPU.
  void emitPrintf(StringRef format, ValueRange args);

  // --- elements ----------------------------------------------------------
  /// The element of tile `value` at `index` (one index per dimension).
  FailureOr<Value> element(Value value, ArrayRef<Value> index);
  /// The elements of `values` (tiles of one shape) at `index`.
  FailureOr<SmallVector<Value>> elements(ValueRange values,
                                         ArrayRef<Value> index);
  FailureOr<Value> computeElement(Operation *op, ArrayRef<Value> index);
  FailureOr<Value> loadElement(tk::LoadOp op, ArrayRef<Value> index);
  FailureOr<Value> blockAddress(const BlockPtrValue &bp, Type elementType,
                                ArrayRef<Value> index, ArrayRef<int32_t> check,
                                Value &inBounds);
  /// A scalar operand after lowering.
  FailureOr<Value> scalar(Value value);
  /// Scalar version of an element-wise arith/math op on `operands`; f16 and
  /// bf16 arithmetic runs in f32 and rounds once per op.
  FailureOr<Value> emitScalarOp(Operation *op, ArrayRef<Value> operands);
  Value convertFloat(Value value, FloatType to,
                     std::optional<tk::RoundingMode> rounding);
  /// `region`'s combiner applied to (accumulated..., next...).
  FailureOr<SmallVector<Value>> combine(Region &region, ValueRange acc,
                                        ValueRange next);

  // --- storage -----------------------------------------------------------
  /// A buffer of workgroup memory (on threads; `alignment` bytes) or of
  /// the stack.
  Value allocBuffer(ArrayRef<int64_t> shape, Type elementType,
                    int64_t alignment = 16);
  Value allocBuffer(RankedTensorType type) {
    return allocBuffer(type.getShape(), type.getElementType());
  }
  /// A buffer for a slot of a prefetch ring: one an earlier loop's ring
  /// left free (freeRingSlots) where one fits, else a new one.
  Value ringSlot(ArrayRef<int64_t> shape, Type elementType, int64_t alignment);
  /// Writes every element of `value` into `buffer`, at its index, or at
  /// `offsetOf(index)` in a 1-D buffer.
  using IndexOffsetFn = function_ref<Value(ArrayRef<Value> index)>;
  LogicalResult storeTile(Value value, Value buffer,
                          IndexOffsetFn offsetOf = nullptr);
  /// Computes the register-resident tile `value` into its owners'
  /// registers (ownedTiles).
  LogicalResult keepInRegisters(Value value);
  /// Computes the row-resident tile `value` into the registers of its rows
  /// (rowTiles).
  LogicalResult keepInRows(Value value);
  /// The registers of `value` (1-D) at each row of `layout`'s product that
  /// this thread holds.
  FailureOr<SmallVector<Value>> computeRows(Value value, tk::DotOp layout);
  /// The buffer holding `value`, materialising it here if it is lazy.
  FailureOr<Value> getBuffer(Value value);
  Value loadBuffer(Value buffer, ArrayRef<Value> index, Type elementType);
  void storeBuffer(Value element, Value buffer, ArrayRef<Value> index);
  /// Runs `body` at every index of `shape` inside a fresh loop nest. On a
  /// GPU a nest outside any other is spread over the program's threads and
  /// ends with a barrier.
  /// With `contiguous`, a GPU thread takes runs of up to 4 consecutive
  /// innermost elements (so that LLVM can merge them into 128-bit accesses)
  /// instead of every N-th element; only for bodies that do not care which
  /// thread runs which index. Under an OwnerIteration scope such a nest is
  /// straight-line code over the indices each thread owns (ownedRun), with
  /// no barrier: register-resident tiles can be read there.
  /// `afterRun` (if any) is emitted after the body of each run of indices
  /// (after every index where runs are single).
  /// `maxRun` bounds the run (16 bytes of 32-bit elements by default).
  /// `publish`: the GPU nest ends with its barrier (off for nests whose
  /// caller publishes several at once).
  LogicalResult forEachIndex(ArrayRef<int64_t> shape,
                             function_ref<LogicalResult(ArrayRef<Value>)> body,
                             bool contiguous = false,
                             function_ref<void()> afterRun = nullptr,
                             int64_t maxRun = 4, bool publish = true);
  /// The run that fills 16 bytes with elements of `type` (4 to 8).
  static int64_t runOf(Type type) {
    if (!type.isIntOrFloat())
      return 4;
    return std::clamp<int64_t>(128 / std::max(8u, type.getIntOrFloatBitWidth()),
                               4, 8);
  }
  /// `body` at the index of the tile `shape` (of `total` elements) whose
  /// row-major position is `linear`.
  LogicalResult forOneIndex(ArrayRef<int64_t> shape, int64_t total,
                            Value linear,
                            function_ref<LogicalResult(ArrayRef<Value>)> body);
  /// The serial loop nest of forEachIndex.
  LogicalResult
  forEachIndexSerial(ArrayRef<int64_t> shape,
                     function_ref<LogicalResult(ArrayRef<Value>)> body);
  /// Copies every element of buffer `from` into buffer `to`.
  LogicalResult copyBuffer(Value from, Value to, ArrayRef<int64_t> shape,
                           Type elementType, bool publish = true);

  // --- GPU programs --------------------------------------------------------
  bool onThreads() const { return numThreads > 0; }
  /// While alive, contiguous top-level forEachIndex nests iterate over the
  /// indices each thread owns (where register-resident tiles are read):
  /// runs, or the positions of `fragment`'s accumulator registers.
  struct OwnerIteration {
    OwnerIteration(
        KernelLowering &lowering, bool enabled,
        std::optional<tk::MatrixUnit::HeldProduct> fragment = std::nullopt)
        : lowering(lowering), saved(lowering.iterateAsOwner),
          savedFragment(lowering.ownerFragment) {
      lowering.iterateAsOwner = enabled;
      lowering.ownerFragment = fragment;
    }
    /// Iterates in the layout of `owned` (disabled when null).
    OwnerIteration(KernelLowering &lowering, const OwnedTile *owned)
        : OwnerIteration(lowering, owned != nullptr,
                         owned ? owned->fragment : std::nullopt) {}
    ~OwnerIteration() {
      lowering.iterateAsOwner = saved;
      lowering.ownerFragment = savedFragment;
    }
    KernelLowering &lowering;
    bool saved;
    std::optional<tk::MatrixUnit::HeldProduct> savedFragment;
  };
  /// Waits until every thread of the program got here (GPU only).
  void barrier() {
    if (!onThreads())
      return;
    // A barrier right after another one waits for nothing.
    Block *block = b.getInsertionBlock();
    auto point = b.getInsertionPoint();
    if (point != block->begin() && isa<gpu::BarrierOp>(*std::prev(point)))
      return;
    gpu::BarrierOp::create(b, loc);
  }
  /// Runs `body` on thread 0 only (everything on the CPU); nests inside are
  /// serial. The caller adds the barrier that publishes its writes.
  LogicalResult onFirstThread(function_ref<LogicalResult()> body);
  /// The scalar `compute` returns, computed once per program (by thread 0
  /// on a GPU, then read by every thread from workgroup memory).
  FailureOr<Value> once(Type type, function_ref<FailureOr<Value>()> compute);
  /// An i1 that is true when every element of the i1 tile `mask` is; one
  /// loop nest that and-reduces the mask (LLVM vectorises it).
  FailureOr<Value> allTrue(Value mask);
  /// The same in O(1) for the usual bounds mask, `splat(a) + make_range(lo,
  /// hi) < splat(n)` (or <=, signed or unsigned, either side); null for any
  /// other mask.
  Value rangeMaskAllTrue(Value mask);
  /// `body(on)` under `scf.if full`: with `on` an i1 true (every lane of
  /// the mask `full` was computed from is on) in the then branch, null in
  /// the else branch.
  LogicalResult versionOnMask(Value full,
                              function_ref<LogicalResult(Value on)> body);
  /// Makes `element(value, index)` return `known` in the current loop body.
  void assumeElement(Value value, ArrayRef<Value> index, Value known);

  Value constIndex(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value constInt(Type type, int64_t value) {
    return arith::ConstantOp::create(b, loc, type,
                                     b.getIntegerAttr(type, value));
  }
  Value zeroOf(Type type);
  Type scalarType(Type type) {
    return isa<tk::PtrType>(type) ? Type(ptrType) : type;
  }
  Type storageType(Type type) {
    return isa<tk::PtrType>(type) ? Type(b.getI64Type()) : type;
  }

  tk::FuncOp source;
  func::FuncOp target;
  OpBuilder b;
  Location loc = UnknownLoc::get(source.getContext());
  LLVM::LLVMPointerType ptrType;
  bool fuseLoadsIntoStores;
  /// 0 on the CPU; the threads of a GPU program otherwise.
  int64_t numThreads;
  const tk::MatrixUnit *matrixUnit;
  const tk::AsyncCopyUnit *asyncCopy;
  int64_t numStages;
  /// gpu.thread_id x (GPU only).
  Value threadId;
  /// Nesting of distributed loops and thread-0 regions: only nests at depth
  /// 0 are spread over threads.
  int parallelDepth = 0;
  /// Workgroup-memory globals made so far (their names' suffixes).
  int numSharedBuffers = 0;
  Block *entryBlock = nullptr;

  IRMapping scalars;
  DenseMap<Value, Value> buffers;
  DenseMap<Value, PointerWalk> pointerWalks;
  /// Dot accumulators the matrix unit holds in registers, by tile: a
  /// loop-carried accumulator and the dot results that update it.
  DenseMap<Value, SmallVector<Value>> heldAccumulators;
  /// While one register of a held accumulator is rescaled: the accumulator
  /// tile and that register, which `element` returns for the tile.
  DenseMap<Value, Value> heldElementOverride;
  /// Loop results held in registers past their loop, for tk.stores to
  /// write from there (onlyStoredFromRegisters).
  struct HeldResult {
    tk::MatrixUnit::HeldProduct product;
    SmallVector<Value> registers;
  };
  DenseMap<Value, HeldResult> heldResults;
  /// Dot operands whose buffer (in `buffers`) is already in the matrix
  /// unit's layout: the prefetched ones.
  llvm::DenseSet<Value> laidOutOperands;
  /// The loop whose body is being lowered (source and lowered op, the
  /// outermost op the lowering made for it), and the operands defined
  /// outside it that were laid out once before it.
  scf::ForOp sourceLoop;
  Operation *loweredLoop = nullptr;
  DenseMap<Value, Value> hoistedOperands;
  /// In the body of a pipelined loop that issues its copies at the top of
  /// each trip (after the barrier that follows the wait).
  bool ringsWrittenAtTop = false;
  /// That loop's lowered body, where products may be issued without a wait
  /// (not in a region nested in it).
  Block *ringsWrittenAtTopBody = nullptr;
  /// Held products issued without a wait (deferWait), oldest first. Their
  /// registers (ownedTiles, heldAccumulators) are read only after
  /// settleProducts; a pipelined loop's trip settles them all before its
  /// end, so their operand slots are free at the next trip's top.
  struct RunningProduct {
    Value result;
    tk::MatrixUnit::HeldProduct product;
  };
  SmallVector<RunningProduct> runningProducts;
  /// Workgroup buffers of the prefetch rings of loops already lowered:
  /// nothing reads them after their loop, so a later loop's ring reuses them
  /// (a main loop and its tail share one ring).
  SmallVector<Value> freeRingSlots;
  DenseMap<Value, BlockPtrValue> blockPtrs;
  Value grid[tk::kNumGridArgs];

  /// Tiles kept in registers (chooseRegisterResident), by defining op, with
  /// their layout: null for runs (thread t owns the runs t, t + N, ... of
  /// ownedRun(shape) elements; register j * run + l holds element
  /// (t + N * j) * run + l), else the dot whose accumulator layout they
  /// share (register i holds the element at the unit's position i).
  DenseMap<Operation *, Operation *> residentLayout;
  DenseMap<Value, OwnedTile> ownedTiles;
  /// Inside an owner iteration's body: the index it visits and the
  /// register that holds it.
  bool iterateAsOwner = false;
  std::optional<tk::MatrixUnit::HeldProduct> ownerFragment;
  int64_t ownedSlot = -1;
  SmallVector<Value, 4> ownedIndex;

  /// Row-resident tiles (chooseRowResident): 1-D tiles with one value per
  /// row of a held product (FlashAttention's running max and sum), by
  /// value, with the dot whose product's rows they follow. Each thread
  /// keeps the values of the rows it holds, one register per row offset
  /// (MatrixUnit::RegisterRows), like the lanes sharing the row.
  DenseMap<Value, tk::DotOp> rowLayout;
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
    RowVisit(KernelLowering &lowering, Value row, int64_t offset)
        : lowering(lowering), savedRow(lowering.visitedRow),
          savedOffset(lowering.visitedRowOffset) {
      lowering.visitedRow = row;
      lowering.visitedRowOffset = offset;
    }
    /// Visits register `i` of a product with `rows` at row index `row`
    /// (no row when the unit does not describe its rows).
    RowVisit(KernelLowering &lowering,
             const std::optional<tk::MatrixUnit::RegisterRows> &rows, size_t i,
             Value row)
        : RowVisit(lowering, rows ? row : Value(),
                   rows ? rows->rowOfRegister[i] : 0) {}
    ~RowVisit() {
      lowering.visitedRow = savedRow;
      lowering.visitedRowOffset = savedOffset;
    }
    KernelLowering &lowering;
    Value savedRow;
    int64_t savedOffset;
  };

  /// Tiles that get a buffer at their definition.
  llvm::DenseSet<Operation *> materialized;
  DenseMap<Value, bool> cheap;

  /// Elements already computed in the current loop body, by value and index;
  /// cleared on entering a loop body or a conditional region so that every
  /// reuse is dominated by its definition.
  std::map<std::pair<void *, SmallVector<void *, 4>>, Value> elementCache;
};

//===----------------------------------------------------------------------===//
// Analysis: which tiles get a buffer
//===----------------------------------------------------------------------===//

/// A tile is cheap when it is computed from scalars with integer arithmetic
/// and shape ops only: recomputing it anywhere costs a few instructions and
/// reads no memory, so it is never stored.
bool KernelLowering::isCheap(Value value) {
  auto it = cheap.find(value);
  if (it != cheap.end())
    return it->second;
  bool result = false;
  Operation *op = value.getDefiningOp();
  if (op && isElementwiseLike(op) && !isa<tk::LoadOp, tk::FpToFpOp>(op) &&
      !isa<math::MathDialect>(op->getDialect())) {
    if (isa<tk::SplatOp, tk::MakeRangeOp, arith::ConstantOp>(op)) {
      result = true;
    } else {
      Type elem = getElementTypeOrSelf(value.getType());
      bool integerLike = isa<IntegerType, tk::PtrType>(elem);
      result =
          integerLike ||
          isa<tk::BroadcastOp, tk::ExpandDimsOp, tk::ReshapeOp, tk::TransOp>(
              op);
      for (Value operand : op->getOperands())
        if (isTile(operand.getType()))
          result = result && isCheap(operand);
    }
  }
  cheap[value] = result;
  return result;
}

void KernelLowering::analyzeRegion(Region &region) {
  for (Block &block : region)
    for (Operation &op : llvm::reverse(block.getOperations()))
      analyzeOp(&op);
}

void KernelLowering::analyzeOp(Operation *op) {
  for (Region &region : op->getRegions())
    analyzeRegion(region);
  if (!isElementwiseLike(op))
    return;
  Value value = op->getResult(0);
  if (isCheap(value))
    return;
  llvm::SmallPtrSet<Operation *, 4> users;
  for (Operation *user : value.getUsers())
    users.insert(user);
  if (users.empty())
    return;
  bool store = users.size() > 1;
  for (Operation *user : users) {
    // Recomputing inside a loop body or branch would repeat the work (and
    // any load) on every trip; replicating through a broadcast would too.
    if (user->getBlock() != op->getBlock() || isa<tk::BroadcastOp>(user))
      store = true;
  }
  bool readBeforeLoop = store && laidOutBeforeLoop(op);
  if (readBeforeLoop)
    store = false;
  // An operand several held products of this block read alike (attention's
  // k^T and v in a trip over several row groups) goes to the unit's layout
  // (or its prefetch ring) instead of a row-major buffer.
  if (store &&
      llvm::all_of(users,
                   [&](Operation *user) {
                     return user->getBlock() == op->getBlock();
                   }) &&
      (heldOperandLayout(value, 0) || heldOperandLayout(value, 1)))
    store = false;
  if (!store && !readBeforeLoop && isa<tk::LoadOp>(op)) {
    // Follow the single-user chain to the op that will evaluate the load.
    // A write on the way would observe memory in another order than the
    // program's, so the load is done here instead. The evaluator itself may
    // be a store when fusing is allowed: every lane still loads before it
    // stores.
    Operation *evaluator = *users.begin();
    while (isElementwiseLike(evaluator) && !materialized.count(evaluator) &&
           !evaluator->getResult(0).use_empty())
      evaluator = *evaluator->getResult(0).getUsers().begin();
    bool fusesIntoStore = isa<tk::StoreOp>(evaluator) && fuseLoadsIntoStores;
    for (Operation *it = op->getNextNode(); it; it = it->getNextNode()) {
      if (it == evaluator && fusesIntoStore)
        break;
      if (mayWriteMemory(it)) {
        store = true;
        break;
      }
      if (it == evaluator)
        break;
    }
  }
  if (store)
    materialized.insert(op);
}

bool KernelLowering::laidOutBeforeLoop(Operation *op) {
  auto load = dyn_cast<tk::LoadOp>(op);
  if (!load || !matrixUnit || !onThreads())
    return false;
  // Read by held products of loops of this block (a main loop and its
  // tail), all as the same operand of products laid out alike: the first
  // loop lays it out, the others read that buffer.
  Value tile = load.getResult();
  std::optional<tk::MatrixUnit::HeldProduct> layout =
      heldOperandLayout(tile, 0);
  if (!layout)
    layout = heldOperandLayout(tile, 1);
  if (!layout || !matrixUnit->laysOutOperands(*layout))
    return false;
  scf::ForOp loop;
  for (Operation *user : tile.getUsers()) {
    auto parent = dyn_cast<scf::ForOp>(user->getParentOp());
    if (!parent || parent->getBlock() != op->getBlock())
      return false;
    if (!loop || parent->isBeforeInBlock(loop))
      loop = parent;
  }
  if (!loop)
    return false;
  // It is read where the first loop starts: nothing on the way may write
  // memory.
  for (Operation *it = op->getNextNode(); it && it != loop.getOperation();
       it = it->getNextNode())
    if (mayWriteMemory(it))
      return false;
  return true;
}

/// On a GPU a stored tile costs workgroup memory, which bounds how many
/// programs share a multiprocessor, and a pass through it with barriers;
/// arithmetic is cheap. So an arithmetic tile (no load, no fp8 conversion)
/// stored only because it has several users in its own block is recomputed
/// by each user instead, provided every tile it reads is itself stored,
/// cheap, or recomputable the same way: recomputing then reads no global
/// memory and cannot observe a write out of order. (softmax: exp(x - max)
/// is read by the sum and by the division; x stays stored.)
void KernelLowering::preferRecomputing(Region &region) {
  // A tile with storage of its own in this block: a stored element-wise
  // tile, or a dot's, reduction's or scan's result (always stored).
  auto hasStorage = [&](Value tile) {
    // Row-resident tiles and element-wise tiles of them are read from
    // registers at their rows.
    SmallVector<tk::DotOp> rowLayouts;
    if (readableByRows(tile, rowLayouts) && !rowLayouts.empty())
      return true;
    Operation *def = tile.getDefiningOp();
    if (!def)
      return false; // a loop-carried tile: its buffer changes at yields
    return materialized.count(def) ||
           isa<tk::DotOp, tk::ReduceOp, tk::ScanOp>(def);
  };
  auto readyToRead = [&](Value tile) {
    return !isTile(tile.getType()) || isCheap(tile) || hasStorage(tile);
  };
  for (Block &block : region) {
    for (Operation &op : block) {
      for (Region &nested : op.getRegions())
        preferRecomputing(nested);
      if (!materialized.count(&op) || !isElementwiseLike(&op) ||
          isa<tk::LoadOp, tk::FpToFpOp>(&op) || residentLayout.count(&op) ||
          rowLayout.count(op.getResult(0)))
        continue;
      Value value = op.getResult(0);
      // Recomputing through a broadcast repeats the op's work for every
      // copy, unless the op only moves the index over stored elements
      // (FlashAttention's m[:, None]).
      bool movesIndexOnly =
          isa<tk::ExpandDimsOp, tk::ReshapeOp, tk::TransOp, tk::BroadcastOp>(
              op) &&
          llvm::all_of(op.getOperands(), readyToRead);
      bool sameBlockUsers = llvm::all_of(value.getUsers(), [&](Operation *u) {
        return u->getBlock() == op.getBlock() &&
               (movesIndexOnly || !isa<tk::BroadcastOp>(u));
      });
      bool operandsReady = llvm::all_of(op.getOperands(), [&](Value operand) {
        if (readyToRead(operand))
          return true;
        Operation *def = operand.getDefiningOp();
        return def && isElementwiseLike(def) &&
               !isa<tk::LoadOp, tk::FpToFpOp>(def) &&
               llvm::all_of(def->getOperands(), readyToRead);
      });
      if (sameBlockUsers && operandsReady)
        materialized.erase(&op);
    }
  }
}

/// A stored tile whose every reader visits it at the indices its own thread
/// owns (element-wise chains into stores, whole-tile reductions, other such
/// tiles: softmax's row and its exponentials) needs no workgroup memory:
/// each thread keeps its elements in registers, as Triton's blocked layouts
/// do. That saves the pass through memory, its barriers and the shared
/// memory that limits occupancy. The same holds for a product the matrix
/// unit computes in registers when its readers visit it at the registers'
/// positions (FlashAttention's scores: row maxima and sums, exponentials,
/// the next product's operand), and for stored tiles computed from it,
/// which share its layout. Decided as a fixpoint: a candidate stays while
/// every resident tile reading it stays, in the same layout.
void KernelLowering::chooseRegisterResident(Region &region) {
  region.walk([&](Operation *op) {
    if (auto dot = dyn_cast<tk::DotOp>(op)) {
      if (holdsForReaders(dot))
        residentLayout[op] = op;
      return;
    }
    if (!materialized.count(op) || !isElementwiseLike(op))
      return;
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    if (!type.getElementType().isIntOrFloat())
      return;
    llvm::SmallPtrSet<Operation *, 2> layouts;
    for (Value operand : op->getOperands())
      collectLayouts(operand, layouts);
    layouts.erase(nullptr);
    if (layouts.size() == 1)
      residentLayout[op] = *layouts.begin();
    else if (layouts.empty() && ownedRun(type.getShape()))
      residentLayout[op] = nullptr;
  });
  for (bool changed = true; changed;) {
    changed = false;
    for (auto [op, layout] : llvm::to_vector(residentLayout)) {
      if ((!layout || residentLayout.count(layout)) &&
          readByOwners(op->getResult(0), op->getBlock(), layout))
        continue;
      residentLayout.erase(op);
      changed = true;
    }
  }
}

bool KernelLowering::holdsForReaders(tk::DotOp dot) {
  if (!matrixUnit || !onThreads())
    return false;
  std::optional<tk::MatrixUnit::HeldProduct> product = heldProduct(dot);
  return product && matrixUnit->registerRows(*product) &&
         cast<RankedTensorType>(dot.getType()).getElementType() ==
             product->accumulator;
}

void KernelLowering::collectLayouts(Value value,
                                    llvm::SmallPtrSetImpl<Operation *> &out) {
  Operation *def = value.getDefiningOp();
  if (!def || !isTile(value.getType()))
    return;
  if (auto it = residentLayout.find(def); it != residentLayout.end()) {
    out.insert(it->second);
    return;
  }
  if (isElementwiseLike(def) && !materialized.count(def))
    for (Value operand : def->getOperands())
      collectLayouts(operand, out);
}

bool KernelLowering::readByOwners(Value tile, Block *block, Operation *layout) {
  for (OpOperand &use : tile.getUses()) {
    Operation *user = use.getOwner();
    if (user->getBlock() != block)
      return false;
    if (isa<tk::StoreOp>(user))
      continue;
    if (auto dot = dyn_cast<tk::DotOp>(user)) {
      // Laid out for the unit (or stored) by its owners; an accumulator is
      // read at the unit's positions instead.
      if (use.get() == dot.getAcc())
        return false;
      continue;
    }
    if (auto reduce = dyn_cast<tk::ReduceOp>(user)) {
      bool words = llvm::all_of(reduce.getSrcs(), [](Value src) {
        Type type = cast<RankedTensorType>(src.getType()).getElementType();
        return type.isIntOrFloat() && type.getIntOrFloatBitWidth() == 32;
      });
      int64_t rank = cast<RankedTensorType>(tile.getType()).getRank();
      bool shapeFits = layout ? rank == 2 && reduce.getAxis() == 1 : rank == 1;
      if (reduce.getSrcs()[0].getType() != tile.getType() || !shapeFits ||
          !words || numThreads % kWarpSize != 0)
        return false;
      continue;
    }
    if (!keepsIndex(user))
      return false;
    if (materialized.count(user)) {
      auto it = residentLayout.find(user);
      if (it == residentLayout.end() || it->second != layout)
        return false;
      continue;
    }
    if (!readByOwners(user->getResult(0), block, layout))
      return false;
  }
  return true;
}

int64_t KernelLowering::ownedRun(ArrayRef<int64_t> shape) const {
  int64_t total = 1;
  for (int64_t size : shape)
    total *= size;
  if (!onThreads() || shape.empty() || total % numThreads != 0 ||
      total / numThreads > kMaxOwnedElements)
    return 0;
  return runWidth(shape, total, numThreads, /*maxRun=*/4);
}

const OwnedTile *KernelLowering::ownedRead(Value value) {
  if (ownedTiles.empty() || !isTile(value.getType()))
    return nullptr;
  if (auto it = ownedTiles.find(value); it != ownedTiles.end())
    return &it->second;
  if (buffers.count(value) || pointerWalks.count(value))
    return nullptr;
  Operation *op = value.getDefiningOp();
  if (!op || !isElementwiseLike(op))
    return nullptr;
  for (Value operand : op->getOperands())
    if (const OwnedTile *owned = ownedRead(operand))
      return owned;
  return nullptr;
}

void KernelLowering::settleProducts(Value result) {
  if (runningProducts.empty())
    return;
  auto last = result ? llvm::find_if(runningProducts,
                                     [&](const RunningProduct &running) {
                                       return running.result == result;
                                     })
                     : std::prev(runningProducts.end());
  if (last == runningProducts.end())
    return;
  auto registersOf = [&](Value value) -> SmallVector<Value> & {
    auto owned = ownedTiles.find(value);
    return owned != ownedTiles.end() ? owned->second.registers
                                     : heldAccumulators[value];
  };
  // One wait for all of them: the older products are done when it is.
  SmallVector<Value> registers;
  for (auto it = runningProducts.begin(); it != std::next(last); ++it)
    llvm::append_range(registers, registersOf(it->result));
  int64_t stillRunning = std::distance(last, runningProducts.end()) - 1;
  SmallVector<Value> done =
      matrixUnit->finish(b, loc, last->product, registers, stillRunning);
  ArrayRef<Value> rest = done;
  for (auto it = runningProducts.begin(); it != std::next(last); ++it) {
    SmallVector<Value> &own = registersOf(it->result);
    llvm::copy(rest.take_front(own.size()), own.begin());
    rest = rest.drop_front(own.size());
  }
  runningProducts.erase(runningProducts.begin(), std::next(last));
}

/// FlashAttention's running max m and sum l are 1-D tiles of one value per
/// row of the scores, which the matrix unit holds in registers: the row
/// maxima and sums are combined there (lowerRowReduceOfHeld), and m and l
/// are read back at the scores' and the output's registers (`m[:, None]`,
/// `l[:, None]`). Such a tile stays in the registers of the threads that
/// hold its rows, one register per row a thread holds, instead of workgroup
/// memory with a barrier on every write: the row reductions of a held
/// product, loop-carried tiles updated from them, and element-wise tiles of
/// those, provided every read is at a row of the same offsets (readAtRows).
/// Decided optimistically, then pruned to a fixpoint.
void KernelLowering::chooseRowResident(Region &region) {
  if (!matrixUnit || !onThreads())
    return;
  auto rowShaped = [](Type type) {
    auto tile = dyn_cast<RankedTensorType>(type);
    return tile && tile.getRank() == 1 && tile.getElementType().isIntOrFloat();
  };
  // Every lane holding a row keeps its own copy of the row's value: they
  // must agree bit for bit. The butterflies of a row reduction combine the
  // lanes' parts in a different order in each lane, which a commutative
  // combiner (max, sum) makes the same.
  auto commutes = [](tk::ReduceOp reduce) {
    Block &block = reduce.getCombineOp().front();
    if (!llvm::hasSingleElement(block.without_terminator()))
      return false;
    Operation &op = block.front();
    return op.hasTrait<OpTrait::IsCommutative>() && op.getNumOperands() == 2 &&
           llvm::is_contained(op.getOperands(), block.getArgument(0)) &&
           llvm::is_contained(op.getOperands(), block.getArgument(1)) &&
           block.getTerminator()->getOperands() == ValueRange(op.getResults());
  };
  // Candidates: row reductions (their layout known), loop-carried 1-D
  // tiles and stored element-wise 1-D tiles (layouts from what they read).
  region.walk([&](Operation *op) {
    if (auto reduce = dyn_cast<tk::ReduceOp>(op)) {
      tk::DotOp dot = heldRowsOf(reduce);
      if (dot && commutes(reduce))
        rowLayout[reduce.getResult(0)] = dot;
    } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
      for (auto [arg, result] :
           llvm::zip_equal(loop.getRegionIterArgs(), loop.getResults()))
        if (rowShaped(arg.getType()))
          rowLayout[arg] = rowLayout[result] = tk::DotOp();
    } else if (materialized.count(op) && keepsIndex(op) &&
               !residentLayout.count(op) &&
               rowShaped(op->getResult(0).getType())) {
      rowLayout[op->getResult(0)] = tk::DotOp();
    }
  });
  // What a candidate reads: a loop-carried tile its first and next value.
  auto sources = [&](Value tile) -> SmallVector<Value> {
    if (auto arg = dyn_cast<BlockArgument>(tile)) {
      auto loop = cast<scf::ForOp>(arg.getOwner()->getParentOp());
      return {loop.getTiedLoopInit(arg)->get(),
              loop.getTiedLoopYieldedValue(arg)->get()};
    }
    if (auto result = dyn_cast<OpResult>(tile))
      if (auto loop = dyn_cast<scf::ForOp>(result.getOwner()))
        return {loop.getTiedLoopRegionIterArg(result)};
    SmallVector<Value> operands;
    if (!isa<tk::ReduceOp>(tile.getDefiningOp()))
      for (Value operand : tile.getDefiningOp()->getOperands())
        if (isTile(operand.getType()))
          operands.push_back(operand);
    return operands;
  };
  // Layouts flow from the reductions to what reads them.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto [tile, dot] : llvm::to_vector(rowLayout)) {
      if (dot)
        continue;
      SmallVector<tk::DotOp> layouts;
      for (Value source : sources(tile))
        (void)readableByRows(source, layouts);
      if (!layouts.empty()) {
        rowLayout[tile] = layouts.front();
        changed = true;
      }
    }
  }
  // A candidate stays while what it reads is readable at its rows, in
  // layouts of its own offsets, and every read of it is at such a row.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto [tile, dot] : llvm::to_vector(rowLayout)) {
      bool keep = static_cast<bool>(dot);
      SmallVector<int64_t> offsets;
      if (keep) {
        offsets = rowOffsets(*heldProduct(dot));
        SmallVector<tk::DotOp> layouts;
        for (Value source : sources(tile))
          keep = keep && readableByRows(source, layouts);
        for (tk::DotOp layout : layouts)
          keep = keep && rowOffsets(*heldProduct(layout)) == offsets;
        keep = keep && readAtRows(tile, offsets);
      }
      if (keep)
        continue;
      rowLayout.erase(tile);
      changed = true;
    }
    // A loop-carried tile and the loop's result go together.
    for (auto [tile, dot] : llvm::to_vector(rowLayout)) {
      auto partner = [&]() -> Value {
        if (auto arg = dyn_cast<BlockArgument>(tile))
          if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
            return loop.getTiedLoopResult(arg);
        if (auto result = dyn_cast<OpResult>(tile))
          if (auto loop = dyn_cast<scf::ForOp>(result.getOwner()))
            return loop.getTiedLoopRegionIterArg(result);
        return {};
      }();
      if (partner && !rowLayout.count(partner)) {
        rowLayout.erase(tile);
        changed = true;
      }
    }
  }
}

tk::DotOp KernelLowering::heldRowsOf(tk::ReduceOp reduce) {
  auto srcType = cast<RankedTensorType>(reduce.getSrcs()[0].getType());
  if (srcType.getRank() != 2 || reduce.getAxis() != 1 ||
      reduce.getNumResults() != 1)
    return {};
  llvm::SmallPtrSet<Operation *, 2> layouts;
  for (Value src : reduce.getSrcs())
    collectLayouts(src, layouts);
  layouts.erase(nullptr);
  auto dot =
      layouts.size() == 1 ? dyn_cast<tk::DotOp>(*layouts.begin()) : tk::DotOp();
  std::optional<tk::MatrixUnit::HeldProduct> product =
      dot ? heldProduct(dot) : std::nullopt;
  return product && matrixUnit->registerRows(*product) ? dot : tk::DotOp();
}

SmallVector<int64_t>
KernelLowering::rowOffsets(const tk::MatrixUnit::HeldProduct &product) {
  std::optional<tk::MatrixUnit::RegisterRows> rows =
      matrixUnit->registerRows(product);
  if (!rows)
    return {};
  SmallVector<int64_t> offsets(rows->rowOfRegister);
  llvm::sort(offsets);
  offsets.erase(llvm::unique(offsets), offsets.end());
  return offsets;
}

bool KernelLowering::readableByRows(Value tile,
                                    SmallVectorImpl<tk::DotOp> &layouts) {
  if (auto it = rowLayout.find(tile); it != rowLayout.end()) {
    if (it->second)
      layouts.push_back(it->second);
    return true;
  }
  if (isCheap(tile))
    return true;
  Operation *def = tile.getDefiningOp();
  if (!def || materialized.count(def) || !keepsIndex(def))
    return false;
  for (Value operand : def->getOperands())
    if (isTile(operand.getType()) && !readableByRows(operand, layouts))
      return false;
  return true;
}

bool KernelLowering::readAtRows(Value tile, ArrayRef<int64_t> offsets) {
  for (OpOperand &use : tile.getUses()) {
    Operation *user = use.getOwner();
    if (auto yield = dyn_cast<scf::YieldOp>(user)) {
      auto loop = dyn_cast<scf::ForOp>(yield->getParentOp());
      if (!loop ||
          !rowLayout.count(loop.getRegionIterArgs()[use.getOperandNumber()]))
        return false;
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(user)) {
      // The first value of a later loop's row-resident tile.
      BlockArgument arg = loop.getTiedLoopRegionIterArg(&use);
      if (!arg || !rowLayout.count(arg))
        return false;
      continue;
    }
    if (auto expand = dyn_cast<tk::ExpandDimsOp>(user)) {
      // tile[:, None], recomputed where it is read (preferRecomputing):
      // every reader in its block.
      bool sameBlock = llvm::all_of(expand->getUsers(), [&](Operation *u) {
        return u->getBlock() == expand->getBlock();
      });
      if (expand.getAxis() != 1 || !sameBlock ||
          !readInFragments(expand.getResult(), offsets))
        return false;
      continue;
    }
    if (!keepsIndex(user))
      return false;
    if (rowLayout.count(user->getResult(0)))
      continue;
    if (materialized.count(user) || !readAtRows(user->getResult(0), offsets))
      return false;
  }
  return true;
}

bool KernelLowering::readInFragments(Value tile, ArrayRef<int64_t> offsets) {
  for (OpOperand &use : tile.getUses()) {
    Operation *user = use.getOwner();
    // The product whose registers are visited where `user` reads `tile`.
    std::optional<tk::MatrixUnit::HeldProduct> visited;
    if (auto dot = dyn_cast<tk::DotOp>(user)) {
      // The rescale of an accumulator the loop holds (acc * alpha[:, None])
      // runs register by register.
      auto loop = dyn_cast<scf::ForOp>(dot->getParentOp());
      bool rescaled =
          loop && use.get() == dot.getAcc() &&
          llvm::any_of(llvm::seq(loop.getNumRegionIterArgs()), [&](unsigned i) {
            return heldAccumulatorDot(loop, i) == dot;
          });
      if (rescaled)
        visited = heldProduct(dot);
    } else if (auto reduce = dyn_cast<tk::ReduceOp>(user)) {
      if (tk::DotOp dot = heldRowsOf(reduce))
        visited = heldProduct(dot);
    } else if (auto store = dyn_cast<tk::StoreOp>(user)) {
      // Stored from a held loop result's registers, or by the owners of
      // the one resident product it is computed from (lowerStore).
      llvm::SmallPtrSet<Operation *, 2> layouts;
      collectLayouts(store.getValue(), layouts);
      layouts.erase(nullptr);
      tk::DotOp dot = heldStoreDot(store.getValue());
      if (!dot && layouts.size() == 1)
        dot = dyn_cast<tk::DotOp>(*layouts.begin());
      if (use.get() == store.getValue() && dot)
        visited = heldProduct(dot);
    } else if (auto it = residentLayout.find(user);
               it != residentLayout.end()) {
      if (auto dot = dyn_cast_if_present<tk::DotOp>(it->second))
        visited = heldProduct(dot);
    } else if (isElementwiseLike(user) && !materialized.count(user)) {
      if (!readInFragments(user->getResult(0), offsets))
        return false;
      continue;
    }
    if (!visited)
      return false;
    std::optional<tk::MatrixUnit::RegisterRows> rows =
        matrixUnit->registerRows(*visited);
    if (!rows || !llvm::all_of(rows->rowOfRegister, [&](int64_t offset) {
          return llvm::is_contained(offsets, offset);
        }))
      return false;
  }
  return true;
}

tk::DotOp KernelLowering::heldStoreDot(Value value) {
  // The loop result lowerFor will keep in registers for stores (heldResults).
  auto heldDotOf = [&](Value v) -> tk::DotOp {
    auto result = dyn_cast<OpResult>(v);
    auto loop = result ? dyn_cast<scf::ForOp>(result.getOwner()) : nullptr;
    tk::DotOp dot =
        loop ? heldAccumulatorDot(loop, result.getResultNumber()) : nullptr;
    return dot && onlyStoredFromRegisters(v, *heldProduct(dot)) ? dot
                                                                : tk::DotOp();
  };
  Value root = findThroughIndexKeeping(
      value, [&](Value v) { return static_cast<bool>(heldDotOf(v)); });
  return root ? heldDotOf(root) : tk::DotOp();
}

//===----------------------------------------------------------------------===//
// Storage
//===----------------------------------------------------------------------===//

Value KernelLowering::allocBuffer(ArrayRef<int64_t> shape, Type elementType,
                                  int64_t alignment) {
  if (onThreads()) {
    // Every thread of the program sees the same tile: a workgroup-memory
    // global per buffer. (No reuse between buffers whose lifetimes do not
    // overlap yet.)
    MLIRContext *ctx = b.getContext();
    auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    auto type = MemRefType::get(shape, storageType(elementType),
                                MemRefLayoutAttrInterface(), space);
    std::string name =
        (target.getSymName() + "_tile" + std::to_string(numSharedBuffers++))
            .str();
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(target);
      memref::GlobalOp::create(b, loc, name, b.getStringAttr("private"), type,
                               Attribute(), /*constant=*/false,
                               b.getI64IntegerAttr(alignment));
    }
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(entryBlock);
    return memref::GetGlobalOp::create(b, loc, type, name);
  }
  // Allocas live at function entry so that loops do not grow the stack.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entryBlock);
  auto type = MemRefType::get(shape, storageType(elementType));
  return memref::AllocaOp::create(b, loc, type, b.getI64IntegerAttr(64));
}

Value KernelLowering::ringSlot(ArrayRef<int64_t> shape, Type elementType,
                               int64_t alignment) {
  auto type = MemRefType::get(
      shape, storageType(elementType), MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup));
  for (auto *it = freeRingSlots.begin(); it != freeRingSlots.end(); ++it) {
    auto global = it->getDefiningOp<memref::GetGlobalOp>();
    auto symbol = global
                      ? SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
                            target, global.getNameAttr())
                      : memref::GlobalOp();
    if (it->getType() != type || !symbol || !symbol.getAlignment() ||
        *symbol.getAlignment() < uint64_t(alignment))
      continue;
    Value slot = *it;
    freeRingSlots.erase(it);
    return slot;
  }
  return allocBuffer(shape, elementType, alignment);
}

Value KernelLowering::loadBuffer(Value buffer, ArrayRef<Value> index,
                                 Type elementType) {
  Value stored = memref::LoadOp::create(b, loc, buffer, index);
  if (elementType && isa<tk::PtrType>(elementType))
    return LLVM::IntToPtrOp::create(b, loc, ptrType, stored);
  return stored;
}

void KernelLowering::storeBuffer(Value element, Value buffer,
                                 ArrayRef<Value> index) {
  if (isa<LLVM::LLVMPointerType>(element.getType()))
    element = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), element);
  memref::StoreOp::create(b, loc, element, buffer, index);
}

LogicalResult
KernelLowering::forEachIndex(ArrayRef<int64_t> shape,
                             function_ref<LogicalResult(ArrayRef<Value>)> body,
                             bool contiguous, function_ref<void()> afterRun,
                             int64_t maxRun, bool publish) {
  if (!onThreads() || parallelDepth > 0)
    return forEachIndexSerial(shape, [&](ArrayRef<Value> index) {
      LogicalResult result = body(index);
      if (afterRun)
        afterRun();
      return result;
    });
  // One flat loop over the tile, thread t taking elements t, t + N, ...:
  // consecutive threads touch consecutive innermost elements. With a run
  // of `width` elements per thread, thread t takes runs t, t + N, ...
  int64_t total = 1;
  for (int64_t size : shape)
    total *= size;
  // The body at `index`, which register `slot` of a resident tile holds.
  auto visitOwned = [&](int64_t slot, ArrayRef<Value> index) {
    ownedSlot = slot;
    ownedIndex.assign(index.begin(), index.end());
    LogicalResult visited = body(index);
    ownedSlot = -1;
    ownedIndex.clear();
    return visited;
  };
  if (contiguous && iterateAsOwner && ownerFragment) {
    // At the positions of the accumulator registers, in register order.
    if (shape != ArrayRef<int64_t>{ownerFragment->m, ownerFragment->n})
      return emitError(loc, "tk-convert-to-loops: a tile in a product's "
                            "register layout has another shape");
    auto positions = matrixUnit->registerPositions(b, loc, *ownerFragment);
    std::optional<tk::MatrixUnit::RegisterRows> rows =
        matrixUnit->registerRows(*ownerFragment);
    LogicalResult result = success();
    ++parallelDepth;
    for (auto [slot, position] : llvm::enumerate(positions)) {
      auto saved = std::move(elementCache);
      elementCache.clear();
      RowVisit visit(*this, rows, slot, position.first);
      result = visitOwned(slot, {position.first, position.second});
      elementCache = std::move(saved);
      if (failed(result))
        break;
      if (afterRun)
        afterRun();
    }
    --parallelDepth;
    return result;
  }
  if (contiguous && iterateAsOwner) {
    // Straight-line code: the registers of a resident tile are picked by
    // position, which must be a constant.
    int64_t run = ownedRun(shape);
    if (!run)
      return emitError(loc, "tk-convert-to-loops: a register-resident tile "
                            "does not spread evenly over the threads");
    LogicalResult result = success();
    ++parallelDepth;
    for (int64_t j = 0; j < total / (run * numThreads); ++j) {
      Value first = arith::MulIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, threadId, constIndex(j * numThreads)),
          constIndex(run));
      for (int64_t lane = 0; lane < run && succeeded(result); ++lane) {
        Value linear =
            lane == 0 ? first
                      : arith::AddIOp::create(b, loc, first, constIndex(lane));
        result = forOneIndex(shape, total, linear, [&](ArrayRef<Value> index) {
          return visitOwned(j * run + lane, index);
        });
      }
      if (afterRun)
        afterRun();
    }
    --parallelDepth;
    return result;
  }
  int64_t width =
      contiguous ? runWidth(shape, total, numThreads, maxRun) : int64_t(1);
  LogicalResult result = success();
  {
    OpBuilder::InsertionGuard guard(b);
    // The loop counts runs; the run's first index is computed in the body,
    // close to the accesses, so that LLVM sees its alignment.
    auto loop = scf::ForOp::create(b, loc, threadId, constIndex(total / width),
                                   constIndex(numThreads));
    b.setInsertionPointToStart(loop.getBody());
    Value start = width == 1
                      ? Value(loop.getInductionVar())
                      : arith::MulIOp::create(b, loc, loop.getInductionVar(),
                                              constIndex(width));
    ++parallelDepth;
    for (int64_t lane = 0; lane < width && succeeded(result); ++lane) {
      Value linear =
          lane == 0 ? start
                    : arith::AddIOp::create(b, loc, start, constIndex(lane));
      result = forOneIndex(shape, total, linear, body);
    }
    if (afterRun)
      afterRun();
    --parallelDepth;
  }
  if (publish)
    barrier();
  return result;
}

LogicalResult
KernelLowering::forOneIndex(ArrayRef<int64_t> shape, int64_t total,
                            Value linear,
                            function_ref<LogicalResult(ArrayRef<Value>)> body) {
  {
    SmallVector<Value> index(shape.size());
    int64_t stride = 1;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (shape[d] == 1) {
        index[d] = constIndex(0);
        continue;
      }
      Value scaled = stride == 1 ? linear
                                 : arith::DivUIOp::create(b, loc, linear,
                                                          constIndex(stride));
      index[d] =
          stride * shape[d] == total
              ? scaled
              : arith::RemUIOp::create(b, loc, scaled, constIndex(shape[d]));
      stride *= shape[d];
    }
    auto saved = std::move(elementCache);
    elementCache.clear();
    LogicalResult result = body(index);
    elementCache = std::move(saved);
    return result;
  }
}

LogicalResult KernelLowering::forEachIndexSerial(
    ArrayRef<int64_t> shape,
    function_ref<LogicalResult(ArrayRef<Value>)> body) {
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Value> index;
  for (int64_t size : shape) {
    if (size == 1) {
      index.push_back(constIndex(0));
      continue;
    }
    auto loop = scf::ForOp::create(b, loc, constIndex(0), constIndex(size),
                                   constIndex(1));
    b.setInsertionPointToStart(loop.getBody());
    index.push_back(loop.getInductionVar());
  }
  auto saved = std::move(elementCache);
  elementCache.clear();
  LogicalResult result = body(index);
  elementCache = std::move(saved);
  return result;
}

LogicalResult KernelLowering::storeTile(Value value, Value buffer,
                                        IndexOffsetFn offsetOf) {
  // A masked load whose bounds mask is on for every lane of this program
  // (most programs of a grid) loads without the per-lane branches, which
  // keep LLVM from merging a run's loads into vector loads; the others keep
  // them. The bounds check is O(1) (see lowerStore's versioning).
  auto load = value.getDefiningOp<tk::LoadOp>();
  Value mask = load ? load.getMask() : Value();
  Value full = mask && isTile(mask.getType()) &&
                       !isBlockPtr(load.getPtr().getType()) && isCheap(mask)
                   ? rangeMaskAllTrue(mask)
                   : Value();
  // A stored tile computed from register-resident ones is written by their
  // owners (then published with a barrier, which owner nests leave out).
  const OwnedTile *owned = ownedRead(value);
  OwnerIteration owners(*this, owned);
  auto store = [&](Value on) {
    auto type = cast<RankedTensorType>(value.getType());
    return forEachIndex(
        type.getShape(),
        [&](ArrayRef<Value> index) {
          if (on)
            assumeElement(mask, index, on);
          FailureOr<Value> elem = element(value, index);
          if (failed(elem))
            return failure();
          if (offsetOf)
            storeBuffer(*elem, buffer, {offsetOf(index)});
          else
            storeBuffer(*elem, buffer, index);
          return success();
        },
        /*contiguous=*/true, nullptr, runOf(type.getElementType()));
  };
  LogicalResult result = full ? versionOnMask(full, store) : store(Value());
  if (owned)
    barrier();
  return result;
}

LogicalResult KernelLowering::keepInRegisters(Value value) {
  // The layout of the resident tile it is computed from (runs if none).
  const OwnedTile *source = ownedRead(value);
  std::optional<tk::MatrixUnit::HeldProduct> fragment =
      source ? source->fragment : std::nullopt;
  // The mask versioning of storeTile: most programs load every lane
  // unguarded, so runs merge into vector loads.
  auto load = value.getDefiningOp<tk::LoadOp>();
  Value mask = load ? load.getMask() : Value();
  Value full = mask && !fragment && isTile(mask.getType()) &&
                       !isBlockPtr(load.getPtr().getType()) && isCheap(mask)
                   ? rangeMaskAllTrue(mask)
                   : Value();
  auto type = cast<RankedTensorType>(value.getType());
  auto compute = [&](Value on) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> registers;
    OwnerIteration owners(*this, /*enabled=*/true, fragment);
    if (failed(forEachIndex(
            type.getShape(),
            [&](ArrayRef<Value> index) -> LogicalResult {
              if (on)
                assumeElement(mask, index, on);
              FailureOr<Value> elem = element(value, index);
              if (failed(elem))
                return failure();
              registers.push_back(*elem);
              return success();
            },
            /*contiguous=*/true)))
      return failure();
    return registers;
  };
  if (!full) {
    FailureOr<SmallVector<Value>> registers = compute(Value());
    if (failed(registers))
      return failure();
    ownedTiles[value] = {std::move(*registers), fragment};
    return success();
  }
  int64_t count = type.getNumElements() / numThreads;
  SmallVector<Type> types(count, scalarType(type.getElementType()));
  auto branch = scf::IfOp::create(b, loc, types, full, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    for (Block *side : {branch.thenBlock(), branch.elseBlock()}) {
      b.setInsertionPointToEnd(side);
      // Elements computed in one branch do not dominate the other.
      auto saved = elementCache;
      FailureOr<SmallVector<Value>> registers = compute(
          side == branch.thenBlock() ? constInt(b.getI1Type(), 1) : Value());
      elementCache = std::move(saved);
      if (failed(registers))
        return failure();
      scf::YieldOp::create(b, loc, *registers);
    }
  }
  ownedTiles[value] = {SmallVector<Value>(branch.getResults()), fragment};
  return success();
}

LogicalResult KernelLowering::keepInRows(Value value) {
  tk::DotOp layout = rowLayout.lookup(value);
  FailureOr<SmallVector<Value>> registers = computeRows(value, layout);
  if (failed(registers))
    return failure();
  rowTiles[value] = {rowOffsets(*heldProduct(layout)), std::move(*registers)};
  return success();
}

FailureOr<SmallVector<Value>> KernelLowering::computeRows(Value value,
                                                          tk::DotOp layout) {
  std::optional<tk::MatrixUnit::HeldProduct> product =
      layout ? heldProduct(layout) : std::nullopt;
  std::optional<tk::MatrixUnit::RegisterRows> rows =
      product ? matrixUnit->registerRows(*product) : std::nullopt;
  if (!rows)
    return emitError(loc, "tk-convert-to-loops: a row-resident tile outside "
                          "the layout of a held product");
  // Each row at the position of its first register.
  auto positions = matrixUnit->registerPositions(b, loc, *product);
  SmallVector<Value> registers;
  for (int64_t offset : rowOffsets(*product)) {
    size_t first =
        llvm::find(rows->rowOfRegister, offset) - rows->rowOfRegister.begin();
    Value row = positions[first].first;
    RowVisit visit(*this, row, offset);
    auto saved = std::move(elementCache);
    elementCache.clear();
    FailureOr<Value> elem = element(value, {row});
    elementCache = std::move(saved);
    if (failed(elem))
      return failure();
    registers.push_back(*elem);
  }
  return registers;
}

FailureOr<Value> KernelLowering::getBuffer(Value value) {
  auto it = buffers.find(value);
  if (it != buffers.end())
    return it->second;
  Value buffer = allocBuffer(cast<RankedTensorType>(value.getType()));
  if (failed(storeTile(value, buffer)))
    return failure();
  buffers[value] = buffer;
  return buffer;
}

LogicalResult KernelLowering::copyBuffer(Value from, Value to,
                                         ArrayRef<int64_t> shape,
                                         Type elementType, bool publish) {
  if (!onThreads()) {
    memref::CopyOp::create(b, loc, from, to);
    return success();
  }
  return forEachIndex(
      shape,
      [&](ArrayRef<Value> index) {
        storeBuffer(loadBuffer(from, index, elementType), to, index);
        return success();
      },
      /*contiguous=*/true, nullptr, /*maxRun=*/4, publish);
}

LogicalResult
KernelLowering::onFirstThread(function_ref<LogicalResult()> body) {
  if (!onThreads() || parallelDepth > 0)
    return body();
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      threadId, constIndex(0));
  auto branch = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(branch.thenBlock()->getTerminator());
  auto saved = std::move(elementCache);
  elementCache.clear();
  ++parallelDepth;
  LogicalResult result = body();
  --parallelDepth;
  elementCache = std::move(saved);
  return result;
}

FailureOr<Value>
KernelLowering::once(Type type, function_ref<FailureOr<Value>()> compute) {
  if (!onThreads() || parallelDepth > 0)
    return compute();
  Value slot = allocBuffer({1}, type);
  if (failed(onFirstThread([&]() -> LogicalResult {
        FailureOr<Value> value = compute();
        if (failed(value))
          return failure();
        storeBuffer(*value, slot, {constIndex(0)});
        return success();
      })))
    return failure();
  barrier();
  Value value = loadBuffer(slot, {constIndex(0)}, Type());
  if (isa<LLVM::LLVMPointerType>(type))
    value = LLVM::IntToPtrOp::create(b, loc, ptrType, value);
  // The slot may be written again (in a loop) only after everyone read it.
  barrier();
  return value;
}

Value KernelLowering::zeroOf(Type type) {
  if (isa<LLVM::LLVMPointerType>(type))
    return LLVM::ZeroOp::create(b, loc, type);
  return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
}

//===----------------------------------------------------------------------===//
// Elements
//===----------------------------------------------------------------------===//

FailureOr<Value> KernelLowering::scalar(Value value) {
  if (Value mapped = scalars.lookupOrNull(value))
    return mapped;
  if (Operation *def = value.getDefiningOp())
    return def->emitOpError("tk-convert-to-loops: no lowered value for "
                            "this scalar");
  return emitError(value.getLoc(), "tk-convert-to-loops: unmapped argument");
}

FailureOr<SmallVector<Value>> KernelLowering::elements(ValueRange values,
                                                       ArrayRef<Value> index) {
  SmallVector<Value> result;
  for (Value value : values) {
    FailureOr<Value> elem = element(value, index);
    if (failed(elem))
      return failure();
    result.push_back(*elem);
  }
  return result;
}

FailureOr<Value> KernelLowering::element(Value value, ArrayRef<Value> index) {
  if (!isTile(value.getType()))
    return scalar(value);
  if (auto held = heldElementOverride.find(value);
      held != heldElementOverride.end())
    return held->second;
  settleProducts(value);
  if (auto owned = ownedTiles.find(value); owned != ownedTiles.end()) {
    if (ownedSlot < 0 || !llvm::equal(index, ownedIndex))
      return emitError(value.getLoc(),
                       "tk-convert-to-loops: a register-resident tile is read "
                       "at an index its thread does not own");
    return owned->second.registers[ownedSlot];
  }
  if (auto rows = rowTiles.find(value); rows != rowTiles.end()) {
    const RowTile &tile = rows->second;
    const int64_t *offset = llvm::find(tile.offsets, visitedRowOffset);
    if (!visitedRow || index.size() != 1 || index[0] != visitedRow ||
        offset == tile.offsets.end())
      return emitError(value.getLoc(),
                       "tk-convert-to-loops: a row-resident tile is read at "
                       "a row its thread does not hold");
    return tile.registers[offset - tile.offsets.begin()];
  }
  Type elementType = cast<RankedTensorType>(value.getType()).getElementType();
  auto buffer = buffers.find(value);
  if (buffer != buffers.end())
    return loadBuffer(buffer->second, index, elementType);
  auto walk = pointerWalks.find(value);
  if (walk != pointerWalks.end()) {
    PointerWalk at = walk->second;
    FailureOr<Value> start = element(at.start, index);
    if (failed(start))
      return failure();
    Type pointee = cast<tk::PtrType>(elementType).getPointeeType();
    return Value(LLVM::GEPOp::create(b, loc, ptrType, pointee, *start,
                                     ValueRange{at.offset}));
  }

  std::pair<void *, SmallVector<void *, 4>> key;
  key.first = value.getAsOpaquePointer();
  for (Value i : index)
    key.second.push_back(i.getAsOpaquePointer());
  auto cached = elementCache.find(key);
  if (cached != elementCache.end())
    return cached->second;

  if (heldResults.count(value))
    return emitError(value.getLoc(),
                     "tk-convert-to-loops: an accumulator held in registers "
                     "is read where its registers do not reach (two held "
                     "accumulators combined in one store?)");
  Operation *op = value.getDefiningOp();
  if (!op || !isElementwiseLike(op))
    return emitError(value.getLoc(),
                     "tk-convert-to-loops: tile has no lowered storage");
  FailureOr<Value> result = computeElement(op, index);
  if (succeeded(result))
    elementCache[key] = *result;
  return result;
}

FailureOr<Value> KernelLowering::computeElement(Operation *op,
                                                ArrayRef<Value> index) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](arith::ConstantOp constant) -> FailureOr<Value> {
        auto splat = cast<SplatElementsAttr>(constant.getValue());
        auto attr = cast<TypedAttr>(splat.getSplatValue<Attribute>());
        return Value(arith::ConstantOp::create(b, loc, attr));
      })
      .Case([&](tk::SplatOp splat) { return scalar(splat.getSrc()); })
      .Case([&](tk::MakeRangeOp range) -> FailureOr<Value> {
        Value i = arith::IndexCastOp::create(b, loc, b.getI32Type(), index[0]);
        if (range.getStart() == 0)
          return i;
        return Value(arith::AddIOp::create(
            b, loc, i, constInt(b.getI32Type(), range.getStart())));
      })
      .Case([&](tk::BroadcastOp broadcast) {
        auto srcType = cast<RankedTensorType>(broadcast.getSrc().getType());
        SmallVector<Value> srcIndex(index);
        for (int64_t d = 0; d < srcType.getRank(); ++d)
          if (srcType.getDimSize(d) == 1 && resultType.getDimSize(d) != 1)
            srcIndex[d] = constIndex(0);
        return element(broadcast.getSrc(), srcIndex);
      })
      .Case([&](tk::ExpandDimsOp expand) {
        SmallVector<Value> srcIndex(index);
        srcIndex.erase(srcIndex.begin() + expand.getAxis());
        return element(expand.getSrc(), srcIndex);
      })
      .Case([&](tk::TransOp trans) {
        ArrayRef<int32_t> order = trans.getOrder();
        SmallVector<Value> srcIndex(index.size());
        for (auto [i, d] : llvm::enumerate(order))
          srcIndex[d] = index[i];
        return element(trans.getSrc(), srcIndex);
      })
      .Case([&](tk::ReshapeOp reshape) {
        auto srcType = cast<RankedTensorType>(reshape.getSrc().getType());
        if (srcType.getShape() == resultType.getShape())
          return element(reshape.getSrc(), index);
        // Row-major: linearise in the result shape, split in the source's.
        Value linear = constIndex(0);
        for (auto [i, size] : llvm::enumerate(resultType.getShape()))
          linear = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, linear, constIndex(size)),
              index[i]);
        SmallVector<Value> srcIndex(srcType.getRank());
        for (int64_t d = srcType.getRank() - 1; d >= 0; --d) {
          Value size = constIndex(srcType.getDimSize(d));
          srcIndex[d] = arith::RemUIOp::create(b, loc, linear, size);
          linear = arith::DivUIOp::create(b, loc, linear, size);
        }
        return element(reshape.getSrc(), srcIndex);
      })
      .Case([&](tk::CatOp cat) -> FailureOr<Value> {
        int64_t half =
            cast<RankedTensorType>(cat.getLhs().getType()).getDimSize(0);
        Value inLhs = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            index[0], constIndex(half));
        Type elemType = scalarType(resultType.getElementType());
        auto branch = scf::IfOp::create(b, loc, TypeRange{elemType}, inLhs,
                                        /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        for (int side = 0; side < 2; ++side) {
          Block *block = side == 0 ? branch.thenBlock() : branch.elseBlock();
          b.setInsertionPointToEnd(block);
          auto saved = elementCache;
          SmallVector<Value> srcIndex(index);
          if (side == 1)
            srcIndex[0] =
                arith::SubIOp::create(b, loc, index[0], constIndex(half));
          FailureOr<Value> elem =
              element(side == 0 ? cat.getLhs() : cat.getRhs(), srcIndex);
          elementCache = std::move(saved);
          if (failed(elem))
            return failure();
          scf::YieldOp::create(b, loc, *elem);
        }
        return branch.getResult(0);
      })
      .Case([&](tk::JoinOp join) -> FailureOr<Value> {
        SmallVector<Value> srcIndex(index.drop_back());
        Value second = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                             index.back(), constIndex(0));
        Type elemType = scalarType(resultType.getElementType());
        auto branch = scf::IfOp::create(b, loc, TypeRange{elemType}, second,
                                        /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        for (int side = 0; side < 2; ++side) {
          Block *block = side == 0 ? branch.thenBlock() : branch.elseBlock();
          b.setInsertionPointToEnd(block);
          auto saved = elementCache;
          FailureOr<Value> elem =
              element(side == 0 ? join.getRhs() : join.getLhs(), srcIndex);
          elementCache = std::move(saved);
          if (failed(elem))
            return failure();
          scf::YieldOp::create(b, loc, *elem);
        }
        return branch.getResult(0);
      })
      .Case([&](tk::AddPtrOp addptr) -> FailureOr<Value> {
        FailureOr<Value> base = element(addptr.getPtr(), index);
        FailureOr<Value> offset = element(addptr.getOffset(), index);
        if (failed(base) || failed(offset))
          return failure();
        Type pointee =
            cast<tk::PtrType>(getElementTypeOrSelf(addptr.getPtr().getType()))
                .getPointeeType();
        return Value(LLVM::GEPOp::create(b, loc, ptrType, pointee, *base,
                                         ValueRange{*offset}));
      })
      .Case([&](tk::LoadOp load) { return loadElement(load, index); })
      .Case([&](tk::FpToFpOp convert) -> FailureOr<Value> {
        FailureOr<Value> src = element(convert.getSrc(), index);
        if (failed(src))
          return failure();
        return convertFloat(*src, cast<FloatType>(resultType.getElementType()),
                            convert.getRounding());
      })
      .Default([&](Operation *op) -> FailureOr<Value> {
        SmallVector<Value> operands;
        for (Value operand : op->getOperands()) {
          FailureOr<Value> elem = element(operand, index);
          if (failed(elem))
            return failure();
          operands.push_back(*elem);
        }
        return emitScalarOp(op, operands);
      });
}

FailureOr<Value> KernelLowering::blockAddress(const BlockPtrValue &bp,
                                              Type elementType,
                                              ArrayRef<Value> index,
                                              ArrayRef<int32_t> check,
                                              Value &inBounds) {
  Type i64 = b.getI64Type();
  Value linear = constInt(i64, 0);
  inBounds = nullptr;
  for (size_t d = 0; d < index.size(); ++d) {
    Value position = arith::AddIOp::create(
        b, loc, arith::ExtSIOp::create(b, loc, i64, bp.offsets[d]),
        arith::IndexCastOp::create(b, loc, i64, index[d]));
    linear = arith::AddIOp::create(
        b, loc, linear, arith::MulIOp::create(b, loc, position, bp.strides[d]));
    if (!llvm::is_contained(check, static_cast<int32_t>(d)))
      continue;
    // 0 <= position < shape as one unsigned comparison.
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                     position, bp.shape[d]);
    inBounds =
        inBounds ? Value(arith::AndIOp::create(b, loc, inBounds, ok)) : ok;
  }
  return Value(LLVM::GEPOp::create(b, loc, ptrType, elementType, bp.base,
                                   ValueRange{linear}));
}

FailureOr<Value> KernelLowering::loadElement(tk::LoadOp load,
                                             ArrayRef<Value> index) {
  Type resultElem = getElementTypeOrSelf(load.getType());
  Type valueType = scalarType(resultElem);
  Value address, guard, other;
  if (isBlockPtr(load.getPtr().getType())) {
    auto it = blockPtrs.find(load.getPtr());
    if (it == blockPtrs.end())
      return load.emitOpError("tk-convert-to-loops: unknown block pointer");
    FailureOr<Value> addr = blockAddress(it->second, resultElem, index,
                                         load.getBoundaryCheck(), guard);
    if (failed(addr))
      return failure();
    address = *addr;
    if (guard && load.getPadding() == tk::PaddingOption::NaN)
      other = arith::ConstantOp::create(
          b, loc, valueType,
          b.getFloatAttr(
              valueType,
              APFloat::getNaN(cast<FloatType>(valueType).getFloatSemantics())));
  } else {
    FailureOr<Value> addr = element(load.getPtr(), index);
    if (failed(addr))
      return failure();
    address = *addr;
    if (load.getMask()) {
      FailureOr<Value> mask = element(load.getMask(), index);
      if (failed(mask))
        return failure();
      guard = *mask;
      if (load.getOther()) {
        FailureOr<Value> o = element(load.getOther(), index);
        if (failed(o))
          return failure();
        other = *o;
      }
    }
  }
  unsigned align = isa<LLVM::LLVMPointerType>(valueType)
                       ? 8
                       : std::max(1u, valueType.getIntOrFloatBitWidth() / 8);
  bool isVolatile = load.getIsVolatile();
  // A mask known to be on (see lowerStore's versioning) needs no branch.
  if (guard && matchPattern(guard, m_One()))
    guard = nullptr;
  if (!guard)
    return Value(
        LLVM::LoadOp::create(b, loc, valueType, address, align, isVolatile));
  if (!other)
    other = zeroOf(valueType);
  // The load sits in a branch on the mask: a masked-off lane never touches
  // memory (LLVM if-converts this into a masked vector load).
  auto branch = scf::IfOp::create(b, loc, TypeRange{valueType}, guard,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard insertion(b);
  b.setInsertionPointToEnd(branch.thenBlock());
  Value loaded =
      LLVM::LoadOp::create(b, loc, valueType, address, align, isVolatile);
  scf::YieldOp::create(b, loc, loaded);
  b.setInsertionPointToEnd(branch.elseBlock());
  scf::YieldOp::create(b, loc, other);
  return branch.getResult(0);
}

Value KernelLowering::convertFloat(Value value, FloatType to,
                                   std::optional<tk::RoundingMode> rounding) {
  auto from = cast<FloatType>(value.getType());
  if (from == to)
    return value;
  if (from.getWidth() < to.getWidth() ||
      (from.getWidth() == to.getWidth() && to.isF32()))
    return arith::ExtFOp::create(b, loc, to, value);
  if (isNarrowFloat(from) && isNarrowFloat(to)) {
    // f16 <-> bf16 goes through f32 (exact widening, one rounding).
    value = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    from = b.getF32Type();
  }
  if (from.isF64() && isNarrowFloat(to)) {
    // LLVM would call a runtime helper for double -> half; round twice.
    value = arith::TruncFOp::create(b, loc, b.getF32Type(), value);
    from = b.getF32Type();
  }
  Value nearest = arith::TruncFOp::create(b, loc, to, value);
  if (!rounding || *rounding == tk::RoundingMode::RTNE)
    return nearest;
  // Toward zero: take round-to-nearest and step back one ulp towards zero
  // where it rounded away (larger magnitude than the source). This also turns
  // an overflow to infinity into the largest finite value.
  Value back = arith::ExtFOp::create(b, loc, from, nearest);
  Value absBack = math::AbsFOp::create(b, loc, back);
  Value absSrc = math::AbsFOp::create(b, loc, value);
  Value away =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, absBack, absSrc);
  Type bits = b.getIntegerType(to.getWidth());
  Value asInt = arith::BitcastOp::create(b, loc, bits, nearest);
  Value stepped = arith::SubIOp::create(b, loc, asInt, constInt(bits, 1));
  Value chosen = arith::SelectOp::create(b, loc, away, stepped, asInt);
  return arith::BitcastOp::create(b, loc, to, chosen);
}

FailureOr<Value> KernelLowering::emitScalarOp(Operation *op,
                                              ArrayRef<Value> operands) {
  Type f32 = b.getF32Type();
  auto narrowOf = [](Type t) { return isNarrowFloat(t); };
  bool promote = !isa<arith::ExtFOp, arith::TruncFOp, arith::BitcastOp,
                      arith::SelectOp, arith::ConstantOp>(op) &&
                 (llvm::any_of(ValueRange(operands).getTypes(), narrowOf) ||
                  llvm::any_of(op->getResultTypes(), [&](Type t) {
                    return narrowOf(getElementTypeOrSelf(t));
                  }));
  if (auto ext = dyn_cast<arith::ExtFOp>(op))
    return convertFloat(operands[0],
                        cast<FloatType>(getElementTypeOrSelf(ext.getType())),
                        std::nullopt);
  if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
    std::optional<tk::RoundingMode> rounding;
    if (trunc.getRoundingmode() == arith::RoundingMode::toward_zero)
      rounding = tk::RoundingMode::RTZ;
    return convertFloat(operands[0],
                        cast<FloatType>(getElementTypeOrSelf(trunc.getType())),
                        rounding);
  }
  SmallVector<Value> newOperands(operands);
  if (promote)
    for (Value &operand : newOperands)
      if (isNarrowFloat(operand.getType()))
        operand = arith::ExtFOp::create(b, loc, f32, operand);
  Operation *clone = b.clone(*op);
  clone->setOperands(newOperands);
  for (OpResult result : clone->getResults()) {
    Type elem = scalarType(getElementTypeOrSelf(result.getType()));
    result.setType(promote && isNarrowFloat(elem) ? f32 : elem);
  }
  if (clone->getNumResults() != 1)
    return op->emitOpError("tk-convert-to-loops: expected one result");
  Value result = clone->getResult(0);
  Type wanted = scalarType(getElementTypeOrSelf(op->getResult(0).getType()));
  if (result.getType() != wanted)
    result = arith::TruncFOp::create(b, loc, wanted, result);
  return result;
}

FailureOr<SmallVector<Value>>
KernelLowering::combine(Region &region, ValueRange acc, ValueRange next) {
  Block &block = region.front();
  IRMapping mapping;
  for (auto [i, value] : llvm::enumerate(acc))
    mapping.map(block.getArgument(i), value);
  for (auto [i, value] : llvm::enumerate(next))
    mapping.map(block.getArgument(acc.size() + i), value);
  for (Operation &op : block.without_terminator()) {
    if (op.getNumRegions() != 0 ||
        !isa<arith::ArithDialect, math::MathDialect>(op.getDialect()))
      return op.emitOpError("tk-convert-to-loops: a combiner may use only "
                            "arith and math ops");
    SmallVector<Value> operands;
    for (Value operand : op.getOperands())
      operands.push_back(mapping.lookupOrDefault(operand));
    FailureOr<Value> result = emitScalarOp(&op, operands);
    if (failed(result))
      return failure();
    mapping.map(op.getResult(0), *result);
  }
  SmallVector<Value> results;
  for (Value value : block.getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(value));
  return results;
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult KernelLowering::run() {
  analyzeRegion(source.getBody());
  if (onThreads()) {
    chooseRegisterResident(source.getBody());
    chooseRowResident(source.getBody());
    preferRecomputing(source.getBody());
  }
  entryBlock = target.addEntryBlock();
  b.setInsertionPointToStart(entryBlock);
  Block &body = source.getBody().front();
  unsigned numArgs = body.getNumArguments();
  for (unsigned i = 0; i < numArgs; ++i) {
    scalars.map(body.getArgument(i), entryBlock->getArgument(i));
    // An integer's divisibility (checked at launch) tells LLVM the
    // alignment of the addresses computed from it: strides of 16 elements
    // keep rows of a tile 16-byte aligned, so runs load as vectors.
    auto divisibility =
        source.getArgAttrOfType<IntegerAttr>(i, "tk.divisibility");
    Value arg = entryBlock->getArgument(i);
    if (divisibility && divisibility.getInt() > 1 &&
        isa<IntegerType>(arg.getType())) {
      Value low = arith::AndIOp::create(
          b, loc, arg, constInt(arg.getType(), divisibility.getInt() - 1));
      LLVM::AssumeOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, low,
                                constInt(arg.getType(), 0)));
    }
  }
  if (onThreads()) {
    threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    const gpu::Dimension dims[] = {gpu::Dimension::x, gpu::Dimension::y,
                                   gpu::Dimension::z};
    for (unsigned d = 0; d < 3; ++d) {
      grid[d] = arith::IndexCastUIOp::create(
          b, loc, b.getI32Type(), gpu::BlockIdOp::create(b, loc, dims[d]));
      grid[3 + d] = arith::IndexCastUIOp::create(
          b, loc, b.getI32Type(), gpu::GridDimOp::create(b, loc, dims[d]));
    }
  } else {
    for (unsigned i = 0; i < tk::kNumGridArgs; ++i)
      grid[i] = entryBlock->getArgument(numArgs + i);
  }
  if (!llvm::hasSingleElement(source.getBody()))
    return source.emitOpError("tk-convert-to-loops: a kernel body must be a "
                              "single block (use scf for control flow)");
  return lowerBlock(body);
}

LogicalResult KernelLowering::lowerBlock(Block &block) {
  for (Operation &op : block) {
    loc = op.getLoc();
    if (failed(lowerOp(&op)))
      return failure();
  }
  return success();
}

LogicalResult KernelLowering::lowerOp(Operation *op) {
  // What a nested loop or branch reads is done before it (registers bound
  // in there would not dominate the code after it).
  if (isa<scf::ForOp, scf::IfOp>(op))
    settleProducts();
  // Element-wise tiles: computed where they are consumed, unless the
  // analysis gave them a buffer.
  if (isElementwiseLike(op)) {
    if (!materialized.count(op))
      return success();
    if (residentLayout.count(op))
      return keepInRegisters(op->getResult(0));
    if (rowLayout.count(op->getResult(0)))
      return keepInRows(op->getResult(0));
    return failure(failed(getBuffer(op->getResult(0))));
  }
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](tk::ReturnOp) {
        func::ReturnOp::create(b, loc);
        return success();
      })
      .Case([&](tk::ProgramIdOp pid) {
        scalars.map(pid.getResult(), grid[pid.getAxis()]);
        return success();
      })
      .Case([&](tk::NumProgramsOp num) {
        scalars.map(num.getResult(), grid[3 + num.getAxis()]);
        return success();
      })
      .Case([&](arith::ConstantOp constant) -> LogicalResult {
        if (!isTile(constant.getType())) {
          scalars.map(constant.getResult(), b.clone(*op)->getResult(0));
          return success();
        }
        // A dense non-splat tile constant: stored once per program.
        auto dense = cast<DenseElementsAttr>(constant.getValue());
        auto type = cast<RankedTensorType>(constant.getType());
        Value buffer = allocBuffer(type);
        SmallVector<int64_t> strides(type.getRank(), 1);
        for (int64_t d = type.getRank() - 2; d >= 0; --d)
          strides[d] = strides[d + 1] * type.getDimSize(d + 1);
        auto values = llvm::to_vector(dense.getValues<Attribute>());
        (void)onFirstThread([&] {
          for (auto [linear, attr] : llvm::enumerate(values)) {
            SmallVector<Value> index;
            for (int64_t d = 0; d < type.getRank(); ++d)
              index.push_back(
                  constIndex((linear / strides[d]) % type.getDimSize(d)));
            storeBuffer(
                arith::ConstantOp::create(b, loc, cast<TypedAttr>(attr)),
                buffer, index);
          }
          return success();
        });
        barrier();
        buffers[constant.getResult()] = buffer;
        return success();
      })
      .Case([&](tk::MakeBlockPtrOp make) -> LogicalResult {
        BlockPtrValue bp;
        FailureOr<Value> base = scalar(make.getBase());
        if (failed(base))
          return failure();
        bp.base = *base;
        for (Value v : make.getShape())
          bp.shape.push_back(scalars.lookup(v));
        for (Value v : make.getStrides())
          bp.strides.push_back(scalars.lookup(v));
        for (Value v : make.getOffsets())
          bp.offsets.push_back(scalars.lookup(v));
        blockPtrs[make.getResult()] = bp;
        return success();
      })
      .Case([&](tk::AdvanceOp advance) -> LogicalResult {
        auto it = blockPtrs.find(advance.getPtr());
        if (it == blockPtrs.end())
          return advance.emitOpError("tk-convert-to-loops: unknown block "
                                     "pointer");
        BlockPtrValue bp = it->second;
        for (auto [d, delta] : llvm::enumerate(advance.getOffsets()))
          bp.offsets[d] = arith::AddIOp::create(b, loc, bp.offsets[d],
                                                scalars.lookup(delta));
        blockPtrs[advance.getResult()] = bp;
        return success();
      })
      .Case([&](tk::StoreOp store) { return lowerStore(store); })
      .Case([&](tk::ReduceOp reduce) { return lowerReduce(reduce); })
      .Case([&](tk::ScanOp scan) { return lowerScan(scan); })
      .Case([&](tk::DotOp dot) { return lowerDot(dot); })
      .Case([&](tk::AtomicRMWOp rmw) { return lowerAtomicRMW(rmw); })
      .Case([&](tk::AtomicCASOp cas) { return lowerAtomicCAS(cas); })
      .Case([&](tk::PrintOp print) { return lowerPrint(print); })
      .Case([&](tk::AssertOp assertOp) { return lowerAssert(assertOp); })
      .Case([&](scf::ForOp loop) { return lowerFor(loop); })
      .Case([&](scf::IfOp branch) { return lowerIf(branch); })
      .Default([&](Operation *op) { return lowerScalarOp(op); });
}

LogicalResult KernelLowering::lowerScalarOp(Operation *op) {
  if (auto addptr = dyn_cast<tk::AddPtrOp>(op)) {
    FailureOr<Value> base = scalar(addptr.getPtr());
    FailureOr<Value> offset = scalar(addptr.getOffset());
    if (failed(base) || failed(offset))
      return failure();
    Type pointee = cast<tk::PtrType>(addptr.getType()).getPointeeType();
    scalars.map(addptr.getResult(),
                LLVM::GEPOp::create(b, loc, ptrType, pointee, *base,
                                    ValueRange{*offset}));
    return success();
  }
  if (auto load = dyn_cast<tk::LoadOp>(op)) {
    FailureOr<Value> value = loadElement(load, {});
    if (failed(value))
      return failure();
    scalars.map(load.getResult(), *value);
    return success();
  }
  if (auto convert = dyn_cast<tk::FpToFpOp>(op)) {
    FailureOr<Value> src = scalar(convert.getSrc());
    if (failed(src))
      return failure();
    scalars.map(convert.getResult(),
                convertFloat(*src, cast<FloatType>(convert.getType()),
                             convert.getRounding()));
    return success();
  }
  bool touchesTiles = llvm::any_of(op->getOperandTypes(), isTile) ||
                      llvm::any_of(op->getResultTypes(), isTile);
  if (touchesTiles || op->getNumRegions() != 0 ||
      !isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return op->emitOpError("tk-convert-to-loops: the CPU lowering does not "
                           "support this op here");
  SmallVector<Value> operands;
  for (Value operand : op->getOperands()) {
    FailureOr<Value> mapped = scalar(operand);
    if (failed(mapped))
      return failure();
    operands.push_back(*mapped);
  }
  FailureOr<Value> result = emitScalarOp(op, operands);
  if (failed(result))
    return failure();
  scalars.map(op->getResult(0), *result);
  return success();
}

LogicalResult KernelLowering::lowerStore(tk::StoreOp store) {
  Value ptr = store.getPtr();
  Type valueElem = getElementTypeOrSelf(store.getValue().getType());
  Type valueType = scalarType(valueElem);
  unsigned align = isa<LLVM::LLVMPointerType>(valueType)
                       ? 8
                       : std::max(1u, valueType.getIntOrFloatBitWidth() / 8);
  // A run of lanes computes every value (and does every load fused into
  // it) before any store: a store between them would keep LLVM from merging
  // the run's loads, which it cannot prove do not alias the store.
  struct PendingStore {
    Value value, address, guard;
  };
  SmallVector<PendingStore, 4> pending;
  auto emitPending = [&] {
    for (const PendingStore &p : pending) {
      if (!p.guard) {
        LLVM::StoreOp::create(b, loc, p.value, p.address, align);
        continue;
      }
      auto branch =
          scf::IfOp::create(b, loc, p.guard, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard insertion(b);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      LLVM::StoreOp::create(b, loc, p.value, p.address, align);
    }
    pending.clear();
  };
  auto storeOne = [&](ArrayRef<Value> index) -> LogicalResult {
    Value address, guard;
    if (isBlockPtr(ptr.getType())) {
      auto it = blockPtrs.find(ptr);
      if (it == blockPtrs.end())
        return store.emitOpError("tk-convert-to-loops: unknown block pointer");
      FailureOr<Value> addr = blockAddress(it->second, valueElem, index,
                                           store.getBoundaryCheck(), guard);
      if (failed(addr))
        return failure();
      address = *addr;
    } else {
      FailureOr<Value> addr = element(ptr, index);
      if (failed(addr))
        return failure();
      address = *addr;
      if (store.getMask()) {
        FailureOr<Value> mask = element(store.getMask(), index);
        if (failed(mask))
          return failure();
        guard = *mask;
      }
    }
    FailureOr<Value> value = element(store.getValue(), index);
    if (failed(value))
      return failure();
    if (guard && matchPattern(guard, m_One()))
      guard = nullptr;
    pending.push_back({*value, address, guard});
    return success();
  };
  if (!isTile(store.getValue().getType())) {
    LogicalResult result = storeOne({});
    emitPending();
    return result;
  }
  // A value computed from a held accumulator is stored by the threads that
  // hold it, each at its registers' positions, without workgroup memory.
  if (Value held = heldRoot(store.getValue())) {
    HeldResult &result = heldResults[held];
    auto storeRegisters = [&](Value knownMask) -> LogicalResult {
      auto positions = matrixUnit->registerPositions(b, loc, result.product);
      std::optional<tk::MatrixUnit::RegisterRows> rows =
          matrixUnit->registerRows(result.product);
      for (auto [i, value, position] :
           llvm::enumerate(result.registers, positions)) {
        RowVisit visit(*this, rows, i, position.first);
        SmallVector<Value> index{position.first, position.second};
        assumeElement(held, index, value);
        if (knownMask)
          assumeElement(store.getMask(), index, knownMask);
        if (failed(storeOne(index)))
          return failure();
        emitPending();
      }
      return success();
    };
    Value mask = store.getMask();
    Value full = mask && !isBlockPtr(ptr.getType()) && isCheap(mask)
                     ? rangeMaskAllTrue(mask)
                     : Value();
    if (!full)
      return storeRegisters(Value());
    return versionOnMask(full, storeRegisters);
  }
  auto shape = cast<RankedTensorType>(store.getValue().getType()).getShape();
  Value mask = store.getMask();
  auto storeLanes = [&]() -> LogicalResult {
    if (!mask || isBlockPtr(ptr.getType()) || !isTile(mask.getType()) ||
        !isCheap(mask))
      return forEachIndex(shape, storeOne, /*contiguous=*/true, emitPending);

    // Version the store on its mask. A branch per lane keeps LLVM to masked
    // vector loads and stores, which cost bandwidth on streaming kernels; most
    // programs of a grid have every lane on, so those run a loop nest without
    // the guard (and without the guards of loads fused into it that share the
    // mask). The mask is cheap by construction (integer arithmetic on scalars,
    // no memory), so evaluating it once more up front costs a few vector
    // instructions per tile.
    Value full = rangeMaskAllTrue(mask);
    if (!full) {
      // On a GPU every thread would walk the whole mask: only the O(1) check.
      if (onThreads())
        return forEachIndex(shape, storeOne, /*contiguous=*/true, emitPending);
      FailureOr<Value> reduced = allTrue(mask);
      if (failed(reduced))
        return failure();
      full = *reduced;
    }
    return versionOnMask(full, [&](Value on) {
      return forEachIndex(
          shape,
          [&](ArrayRef<Value> index) {
            if (on)
              assumeElement(mask, index, on);
            return storeOne(index);
          },
          /*contiguous=*/true, emitPending);
    });
  };
  // A value computed from register-resident tiles is stored by their
  // owners; their nests leave the barrier to the caller.
  const OwnedTile *owned = ownedRead(store.getValue());
  if (!owned)
    owned = ownedRead(ptr);
  if (!owned && store.getMask())
    owned = ownedRead(store.getMask());
  OwnerIteration owners(*this, owned);
  LogicalResult result = storeLanes();
  // The barrier that orders the store before later reads of other threads;
  // a store that ends the kernel has none.
  if (owned && !isa<tk::ReturnOp>(store->getNextNode()))
    barrier();
  return result;
}

LogicalResult
KernelLowering::versionOnMask(Value full,
                              function_ref<LogicalResult(Value on)> body) {
  auto branch = scf::IfOp::create(b, loc, full, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard insertion(b);
  b.setInsertionPoint(branch.thenBlock()->getTerminator());
  // Elements computed in one branch do not dominate the other.
  auto saved = elementCache;
  if (failed(body(constInt(b.getI1Type(), 1))))
    return failure();
  elementCache = saved;
  b.setInsertionPoint(branch.elseBlock()->getTerminator());
  LogicalResult status = body(Value());
  elementCache = std::move(saved);
  return status;
}

FailureOr<Value> KernelLowering::allTrue(Value mask) {
  OpBuilder::InsertionGuard guard(b);
  Value acc = constInt(b.getI1Type(), 1);
  SmallVector<scf::ForOp> loops;
  SmallVector<Value> index;
  for (int64_t size : cast<RankedTensorType>(mask.getType()).getShape()) {
    if (size == 1) {
      index.push_back(constIndex(0));
      continue;
    }
    auto loop = scf::ForOp::create(b, loc, constIndex(0), constIndex(size),
                                   constIndex(1), ValueRange{acc});
    b.setInsertionPointToStart(loop.getBody());
    index.push_back(loop.getInductionVar());
    acc = loop.getRegionIterArgs().front();
    loops.push_back(loop);
  }
  // Elements computed in the reduction's body do not dominate anything after
  // it.
  auto saved = std::move(elementCache);
  elementCache.clear();
  FailureOr<Value> lane = element(mask, index);
  elementCache = std::move(saved);
  if (failed(lane))
    return failure();
  Value result = arith::AndIOp::create(b, loc, acc, *lane);
  for (scf::ForOp loop : llvm::reverse(loops)) {
    scf::YieldOp::create(b, loc, result);
    b.setInsertionPointAfter(loop);
    result = loop.getResult(0);
  }
  return result;
}

Value KernelLowering::rangeMaskAllTrue(Value mask) {
  // Masks of 2-D tiles: `rows & cols`, each a bounds mask along one axis
  // made 2-D by expand_dims and broadcast (the loads of a matmul).
  if (auto both = mask.getDefiningOp<arith::AndIOp>()) {
    Value lhs = rangeMaskAllTrue(both.getLhs());
    Value rhs = lhs ? rangeMaskAllTrue(both.getRhs()) : Value();
    return rhs ? Value(arith::AndIOp::create(b, loc, lhs, rhs)) : Value();
  }
  // Both keep "every lane on" as it is.
  auto reshaped = [](Value v) -> Value {
    if (auto broadcast = v.getDefiningOp<tk::BroadcastOp>())
      return broadcast.getSrc();
    if (auto expand = v.getDefiningOp<tk::ExpandDimsOp>())
      return expand.getSrc();
    return nullptr;
  };
  if (Value source = reshaped(mask))
    return rangeMaskAllTrue(source);
  auto cmp = mask.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return nullptr;
  Value lhs = cmp.getLhs(), rhs = cmp.getRhs();
  // The offsets and bound of an expanded or broadcast compare are those of
  // the 1-D one.
  while (Value source = reshaped(lhs))
    lhs = source;
  while (Value source = reshaped(rhs))
    rhs = source;
  arith::CmpIPredicate pred = cmp.getPredicate();
  // Bring the bound to the right: `n > offs` is `offs < n`.
  switch (pred) {
  case arith::CmpIPredicate::sgt:
    pred = arith::CmpIPredicate::slt;
    std::swap(lhs, rhs);
    break;
  case arith::CmpIPredicate::sge:
    pred = arith::CmpIPredicate::sle;
    std::swap(lhs, rhs);
    break;
  case arith::CmpIPredicate::ugt:
    pred = arith::CmpIPredicate::ult;
    std::swap(lhs, rhs);
    break;
  case arith::CmpIPredicate::uge:
    pred = arith::CmpIPredicate::ule;
    std::swap(lhs, rhs);
    break;
  default:
    break;
  }
  bool isSigned =
      pred == arith::CmpIPredicate::slt || pred == arith::CmpIPredicate::sle;
  bool inclusive =
      pred == arith::CmpIPredicate::sle || pred == arith::CmpIPredicate::ule;
  if (!isSigned && pred != arith::CmpIPredicate::ult &&
      pred != arith::CmpIPredicate::ule)
    return nullptr;

  // The bound: a splat of a scalar or a splat constant.
  auto bound = [&](Value v) -> Value {
    if (auto splat = v.getDefiningOp<tk::SplatOp>())
      return scalars.lookupOrNull(splat.getSrc());
    SplatElementsAttr attr;
    if (matchPattern(v, m_Constant(&attr)))
      return arith::ConstantOp::create(
          b, loc, cast<TypedAttr>(attr.getSplatValue<Attribute>()));
    return nullptr;
  };
  // The offsets: make_range, plus an optional splat of a scalar.
  auto range = lhs.getDefiningOp<tk::MakeRangeOp>();
  Value start;
  if (!range) {
    auto add = lhs.getDefiningOp<arith::AddIOp>();
    if (!add)
      return nullptr;
    for (auto [r, s] : {std::pair(add.getLhs(), add.getRhs()),
                        std::pair(add.getRhs(), add.getLhs())}) {
      auto splat = s.getDefiningOp<tk::SplatOp>();
      if (r.getDefiningOp<tk::MakeRangeOp>() && splat) {
        range = r.getDefiningOp<tk::MakeRangeOp>();
        start = scalars.lookupOrNull(splat.getSrc());
        break;
      }
    }
    if (!range || !start)
      return nullptr;
  }
  int64_t lo = static_cast<int32_t>(range.getStart());
  int64_t hi = static_cast<int32_t>(range.getEnd());
  if (lo < 0 || hi <= lo)
    return nullptr;
  Value n = bound(rhs);
  if (!n || !n.getType().isInteger(32))
    return nullptr;

  // The lanes are start + i for i in [lo, hi), lo >= 0. Computed in i64,
  // where nothing wraps: when the largest is below the bound (an i32), no
  // lane wraps in i32 either and every lane is on. Otherwise a lane is off
  // or wraps, and the guarded loop nest is the right one anyway.
  Type i64 = b.getI64Type();
  auto widen = [&](Value v) -> Value {
    if (isSigned)
      return arith::ExtSIOp::create(b, loc, i64, v);
    return arith::ExtUIOp::create(b, loc, i64, v);
  };
  Value last = constInt(i64, hi - 1);
  if (start)
    last = arith::AddIOp::create(b, loc, widen(start), last);
  return arith::CmpIOp::create(
      b, loc, inclusive ? arith::CmpIPredicate::sle : arith::CmpIPredicate::slt,
      last, widen(n));
}

void KernelLowering::assumeElement(Value value, ArrayRef<Value> index,
                                   Value known) {
  std::pair<void *, SmallVector<void *, 4>> key;
  key.first = value.getAsOpaquePointer();
  for (Value i : index)
    key.second.push_back(i.getAsOpaquePointer());
  elementCache[key] = known;
}

LogicalResult KernelLowering::lowerReduce(tk::ReduceOp reduce) {
  if (onThreads())
    return lowerReduceOnThreads(reduce);
  auto srcType = cast<RankedTensorType>(reduce.getSrcs()[0].getType());
  int64_t rank = srcType.getRank();
  int64_t axis = reduce.getAxis();
  int64_t size = srcType.getDimSize(axis);
  SmallVector<int64_t> outer(srcType.getShape().take_front(axis));
  SmallVector<int64_t> inner(srcType.getShape().drop_front(axis + 1));
  unsigned numSrcs = reduce.getSrcs().size();
  SmallVector<Type> elemTypes;
  for (Value src : reduce.getSrcs())
    elemTypes.push_back(
        scalarType(cast<RankedTensorType>(src.getType()).getElementType()));
  Region &combiner = reduce.getCombineOp();

  SmallVector<Value> resultBuffers;
  if (rank > 1)
    for (Value result : reduce.getResults())
      resultBuffers.push_back(
          allocBuffer(cast<RankedTensorType>(result.getType())));

  auto sourceIndex = [&](ArrayRef<Value> outerIndex, Value k,
                         ArrayRef<Value> innerIndex) {
    SmallVector<Value> index(outerIndex);
    index.push_back(k);
    llvm::append_range(index, innerIndex);
    return index;
  };
  auto elementsAt = [&](ArrayRef<Value> index) {
    return elements(reduce.getSrcs(), index);
  };

  if (axis == rank - 1) {
    // Innermost axis: kReductionLanes independent partial accumulators over
    // strided chunks, then a tree. Each lane's loop carries no dependence on
    // its neighbours, so the chunk loop vectorises as is.
    int64_t lanes = std::min(size, kReductionLanes);
    SmallVector<Value> partial;
    for (Type type : elemTypes)
      partial.push_back(allocBuffer({lanes}, type));
    SmallVector<Value> scalarsOut;
    LogicalResult status =
        forEachIndex(outer, [&](ArrayRef<Value> outerIndex) -> LogicalResult {
          // partial[w] = x[w]
          if (failed(forEachIndex({lanes}, [&](ArrayRef<Value> w) {
                auto values = elementsAt(sourceIndex(outerIndex, w[0], {}));
                if (failed(values))
                  return failure();
                for (unsigned s = 0; s < numSrcs; ++s)
                  storeBuffer((*values)[s], partial[s], w);
                return success();
              })))
            return failure();
          if (size > lanes) {
            OpBuilder::InsertionGuard guard(b);
            auto chunks = scf::ForOp::create(
                b, loc, constIndex(lanes), constIndex(size), constIndex(lanes));
            b.setInsertionPointToStart(chunks.getBody());
            Value base = chunks.getInductionVar();
            if (failed(forEachIndex({lanes}, [&](ArrayRef<Value> w) {
                  Value k = arith::AddIOp::create(b, loc, base, w[0]);
                  auto values = elementsAt(sourceIndex(outerIndex, k, {}));
                  if (failed(values))
                    return failure();
                  SmallVector<Value> acc;
                  for (unsigned s = 0; s < numSrcs; ++s)
                    acc.push_back(loadBuffer(partial[s], w, Type()));
                  auto combined = combine(combiner, acc, *values);
                  if (failed(combined))
                    return failure();
                  for (unsigned s = 0; s < numSrcs; ++s)
                    storeBuffer((*combined)[s], partial[s], w);
                  return success();
                })))
              return failure();
          }
          for (int64_t half = lanes / 2; half >= 1; half /= 2) {
            if (failed(forEachIndex({half}, [&](ArrayRef<Value> w) {
                  Value other =
                      arith::AddIOp::create(b, loc, w[0], constIndex(half));
                  SmallVector<Value> acc, next;
                  for (unsigned s = 0; s < numSrcs; ++s) {
                    acc.push_back(loadBuffer(partial[s], w, Type()));
                    next.push_back(loadBuffer(partial[s], {other}, Type()));
                  }
                  auto combined = combine(combiner, acc, next);
                  if (failed(combined))
                    return failure();
                  for (unsigned s = 0; s < numSrcs; ++s)
                    storeBuffer((*combined)[s], partial[s], w);
                  return success();
                })))
              return failure();
          }
          Value zero = constIndex(0);
          for (unsigned s = 0; s < numSrcs; ++s) {
            Value stored = memref::LoadOp::create(b, loc, partial[s], zero);
            if (isa<LLVM::LLVMPointerType>(elemTypes[s]))
              stored = LLVM::IntToPtrOp::create(b, loc, ptrType, stored);
            if (rank > 1)
              storeBuffer(stored, resultBuffers[s], outerIndex);
            else
              scalarsOut.push_back(stored);
          }
          return success();
        });
    if (failed(status))
      return failure();
    for (unsigned s = 0; s < numSrcs; ++s) {
      if (rank > 1)
        buffers[reduce.getResult(s)] = resultBuffers[s];
      else
        scalars.map(reduce.getResult(s), scalarsOut[s]);
    }
    return success();
  }

  // Outer axis: the result buffers are the accumulators; the innermost loop
  // runs along contiguous elements of the remaining dimensions.
  LogicalResult status =
      forEachIndex(outer, [&](ArrayRef<Value> outerIndex) -> LogicalResult {
        if (failed(forEachIndex(inner, [&](ArrayRef<Value> innerIndex) {
              auto values = elementsAt(
                  sourceIndex(outerIndex, constIndex(0), innerIndex));
              if (failed(values))
                return failure();
              SmallVector<Value> out(outerIndex);
              llvm::append_range(out, innerIndex);
              for (unsigned s = 0; s < numSrcs; ++s)
                storeBuffer((*values)[s], resultBuffers[s], out);
              return success();
            })))
          return failure();
        OpBuilder::InsertionGuard guard(b);
        auto steps = scf::ForOp::create(b, loc, constIndex(1), constIndex(size),
                                        constIndex(1));
        b.setInsertionPointToStart(steps.getBody());
        Value k = steps.getInductionVar();
        return forEachIndex(inner, [&](ArrayRef<Value> innerIndex) {
          auto values = elementsAt(sourceIndex(outerIndex, k, innerIndex));
          if (failed(values))
            return failure();
          SmallVector<Value> out(outerIndex);
          llvm::append_range(out, innerIndex);
          SmallVector<Value> acc;
          for (unsigned s = 0; s < numSrcs; ++s)
            acc.push_back(
                loadBuffer(resultBuffers[s], out,
                           cast<RankedTensorType>(reduce.getSrcs()[s].getType())
                               .getElementType()));
          auto combined = combine(combiner, acc, *values);
          if (failed(combined))
            return failure();
          for (unsigned s = 0; s < numSrcs; ++s)
            storeBuffer((*combined)[s], resultBuffers[s], out);
          return success();
        });
      });
  if (failed(status))
    return failure();
  for (unsigned s = 0; s < numSrcs; ++s)
    buffers[reduce.getResult(s)] = resultBuffers[s];
  return success();
}

LogicalResult KernelLowering::lowerScan(tk::ScanOp scan) {
  if (onThreads())
    return lowerScanOnThreads(scan);
  auto srcType = cast<RankedTensorType>(scan.getSrcs()[0].getType());
  int64_t axis = scan.getAxis();
  int64_t size = srcType.getDimSize(axis);
  bool reverse = scan.getReverse();
  SmallVector<int64_t> outer(srcType.getShape().take_front(axis));
  SmallVector<int64_t> inner(srcType.getShape().drop_front(axis + 1));
  unsigned numSrcs = scan.getSrcs().size();
  SmallVector<Value> out;
  for (Value result : scan.getResults())
    out.push_back(allocBuffer(cast<RankedTensorType>(result.getType())));

  auto at = [&](ArrayRef<Value> outerIndex, Value k,
                ArrayRef<Value> innerIndex) {
    SmallVector<Value> index(outerIndex);
    index.push_back(k);
    llvm::append_range(index, innerIndex);
    return index;
  };
  LogicalResult status =
      forEachIndex(outer, [&](ArrayRef<Value> outerIndex) -> LogicalResult {
        Value first = constIndex(reverse ? size - 1 : 0);
        if (failed(forEachIndex(inner, [&](ArrayRef<Value> innerIndex) {
              SmallVector<Value> index = at(outerIndex, first, innerIndex);
              for (unsigned s = 0; s < numSrcs; ++s) {
                FailureOr<Value> elem = element(scan.getSrcs()[s], index);
                if (failed(elem))
                  return failure();
                storeBuffer(*elem, out[s], index);
              }
              return success();
            })))
          return failure();
        if (size == 1)
          return success();
        OpBuilder::InsertionGuard guard(b);
        auto steps = scf::ForOp::create(b, loc, constIndex(1), constIndex(size),
                                        constIndex(1));
        b.setInsertionPointToStart(steps.getBody());
        Value k = steps.getInductionVar(), previous;
        if (reverse) {
          previous = arith::SubIOp::create(b, loc, constIndex(size), k);
          k = arith::SubIOp::create(b, loc, constIndex(size - 1), k);
        } else {
          previous = arith::SubIOp::create(b, loc, k, constIndex(1));
        }
        return forEachIndex(inner, [&](ArrayRef<Value> innerIndex) {
          SmallVector<Value> index = at(outerIndex, k, innerIndex);
          SmallVector<Value> prevIndex = at(outerIndex, previous, innerIndex);
          SmallVector<Value> acc, next;
          for (unsigned s = 0; s < numSrcs; ++s) {
            Value src = scan.getSrcs()[s];
            FailureOr<Value> elem = element(src, index);
            if (failed(elem))
              return failure();
            next.push_back(*elem);
            acc.push_back(loadBuffer(
                out[s], prevIndex,
                cast<RankedTensorType>(src.getType()).getElementType()));
          }
          auto combined = combine(scan.getCombineOp(), acc, next);
          if (failed(combined))
            return failure();
          for (unsigned s = 0; s < numSrcs; ++s)
            storeBuffer((*combined)[s], out[s], index);
          return success();
        });
      });
  if (failed(status))
    return failure();
  for (unsigned s = 0; s < numSrcs; ++s)
    buffers[scan.getResult(s)] = out[s];
  return success();
}

FailureOr<KernelLowering::DotPlan> KernelLowering::planDot(tk::DotOp dot,
                                                           StringRef target) {
  auto aType = cast<RankedTensorType>(dot.getA().getType());
  auto bType = cast<RankedTensorType>(dot.getB().getType());
  Type accElem = cast<RankedTensorType>(dot.getType()).getElementType();
  if (isa<Float8E4M3FNType, Float8E5M2Type>(aType.getElementType()))
    return dot.emitOpError("tk-convert-to-loops: fp8 dot is not supported on ")
           << target << " yet";
  bool isFloat = isa<FloatType>(accElem);
  Type computeElem =
      isFloat && isNarrowFloat(accElem) ? b.getF32Type() : accElem;
  FailureOr<Value> aBuf = getBuffer(dot.getA());
  FailureOr<Value> bBuf = getBuffer(dot.getB());
  if (failed(aBuf) || failed(bBuf))
    return failure();
  return DotPlan{aType.getDimSize(0),
                 bType.getDimSize(1),
                 aType.getDimSize(1),
                 accElem,
                 computeElem,
                 isFloat,
                 *aBuf,
                 *bBuf};
}

Value KernelLowering::widenForDot(const DotPlan &plan, Value v) {
  if (v.getType() == plan.computeElem)
    return v;
  if (plan.isFloat)
    return arith::ExtFOp::create(b, loc, plan.computeElem, v);
  return arith::ExtSIOp::create(b, loc, plan.computeElem, v);
}

LogicalResult KernelLowering::lowerDot(tk::DotOp dot) {
  if (onThreads())
    return lowerDotOnThreads(dot);
  FailureOr<DotPlan> plan = planDot(dot, "the CPU");
  if (failed(plan))
    return failure();
  int64_t m = plan->m, n = plan->n, k = plan->k;
  Type accElem = plan->accElem, computeElem = plan->computeElem;
  bool isFloat = plan->isFloat;
  Value aBuf = plan->a, bBuf = plan->b;
  auto widen = [&](Value v) { return widenForDot(*plan, v); };
  Value acc = allocBuffer({m, n}, computeElem);
  if (failed(forEachIndex({m, n}, [&](ArrayRef<Value> index) {
        FailureOr<Value> c = element(dot.getAcc(), index);
        if (failed(c))
          return failure();
        storeBuffer(widen(*c), acc, index);
        return success();
      })))
    return failure();
  // i-k-j: the innermost loop streams a row of B and a row of the
  // accumulator, contiguous in memory, with A[i,k] held in a register.
  if (failed(forEachIndex({m, k}, [&](ArrayRef<Value> ik) {
        Value aik = widen(memref::LoadOp::create(b, loc, aBuf, ik));
        return forEachIndex({n}, [&](ArrayRef<Value> j) {
          Value bkj = widen(
              memref::LoadOp::create(b, loc, bBuf, ValueRange{ik[1], j[0]}));
          SmallVector<Value> ij{ik[0], j[0]};
          Value cij = memref::LoadOp::create(b, loc, acc, ij);
          Value sum;
          if (isFloat)
            sum = math::FmaOp::create(b, loc, aik, bkj, cij);
          else
            sum = arith::AddIOp::create(
                b, loc, cij, arith::MulIOp::create(b, loc, aik, bkj));
          memref::StoreOp::create(b, loc, sum, acc, ij);
          return success();
        });
      })))
    return failure();
  if (computeElem == accElem) {
    buffers[dot.getResult()] = acc;
    return success();
  }
  Value result = allocBuffer({m, n}, accElem);
  if (failed(forEachIndex({m, n}, [&](ArrayRef<Value> index) {
        Value wide = memref::LoadOp::create(b, loc, acc, index);
        storeBuffer(arith::TruncFOp::create(b, loc, accElem, wide), result,
                    index);
        return success();
      })))
    return failure();
  buffers[dot.getResult()] = result;
  return success();
}

LogicalResult KernelLowering::lowerAtomicRMW(tk::AtomicRMWOp rmw) {
  Type elem = getElementTypeOrSelf(rmw.getVal().getType());
  bool isFloat = isa<FloatType>(elem);
  LLVM::AtomicBinOp binOp;
  switch (rmw.getKind()) {
  case tk::AtomicRMWKind::Add:
    binOp = LLVM::AtomicBinOp::add;
    break;
  case tk::AtomicRMWKind::FAdd:
    binOp = LLVM::AtomicBinOp::fadd;
    break;
  case tk::AtomicRMWKind::Max:
    binOp = isFloat ? LLVM::AtomicBinOp::fmax : LLVM::AtomicBinOp::max;
    break;
  case tk::AtomicRMWKind::Min:
    binOp = isFloat ? LLVM::AtomicBinOp::fmin : LLVM::AtomicBinOp::min;
    break;
  case tk::AtomicRMWKind::UMax:
    binOp = LLVM::AtomicBinOp::umax;
    break;
  case tk::AtomicRMWKind::UMin:
    binOp = LLVM::AtomicBinOp::umin;
    break;
  case tk::AtomicRMWKind::And:
    binOp = LLVM::AtomicBinOp::_and;
    break;
  case tk::AtomicRMWKind::Or:
    binOp = LLVM::AtomicBinOp::_or;
    break;
  case tk::AtomicRMWKind::Xor:
    binOp = LLVM::AtomicBinOp::_xor;
    break;
  case tk::AtomicRMWKind::Xchg:
    binOp = LLVM::AtomicBinOp::xchg;
    break;
  }
  LLVM::AtomicOrdering ordering = toOrdering(rmw.getSem());
  Type valueType = scalarType(elem);
  auto one = [&](ArrayRef<Value> index) -> FailureOr<Value> {
    FailureOr<Value> ptr = element(rmw.getPtr(), index);
    FailureOr<Value> val = element(rmw.getVal(), index);
    if (failed(ptr) || failed(val))
      return failure();
    auto emit = [&]() -> Value {
      return LLVM::AtomicRMWOp::create(b, loc, binOp, *ptr, *val, ordering);
    };
    if (!rmw.getMask())
      return emit();
    FailureOr<Value> mask = element(rmw.getMask(), index);
    if (failed(mask))
      return failure();
    auto branch = scf::IfOp::create(b, loc, TypeRange{valueType}, *mask,
                                    /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(branch.thenBlock());
    scf::YieldOp::create(b, loc, emit());
    b.setInsertionPointToEnd(branch.elseBlock());
    scf::YieldOp::create(b, loc, zeroOf(valueType));
    return branch.getResult(0);
  };
  if (!isTile(rmw.getType())) {
    FailureOr<Value> old = once(valueType, [&] { return one({}); });
    if (failed(old))
      return failure();
    scalars.map(rmw.getResult(), *old);
    return success();
  }
  Value buffer = allocBuffer(cast<RankedTensorType>(rmw.getType()));
  if (failed(forEachIndex(cast<RankedTensorType>(rmw.getType()).getShape(),
                          [&](ArrayRef<Value> index) {
                            FailureOr<Value> old = one(index);
                            if (failed(old))
                              return failure();
                            storeBuffer(*old, buffer, index);
                            return success();
                          })))
    return failure();
  buffers[rmw.getResult()] = buffer;
  return success();
}

LogicalResult KernelLowering::lowerAtomicCAS(tk::AtomicCASOp cas) {
  Type elem = getElementTypeOrSelf(cas.getVal().getType());
  Type bits = b.getIntegerType(elem.getIntOrFloatBitWidth());
  LLVM::AtomicOrdering ordering = toOrdering(cas.getSem());
  auto one = [&](ArrayRef<Value> index) -> FailureOr<Value> {
    FailureOr<Value> ptr = element(cas.getPtr(), index);
    FailureOr<Value> cmp = element(cas.getCmp(), index);
    FailureOr<Value> val = element(cas.getVal(), index);
    if (failed(ptr) || failed(cmp) || failed(val))
      return failure();
    // cmpxchg takes integers: compare float bit patterns.
    Value c = *cmp, v = *val;
    if (isa<FloatType>(elem)) {
      c = arith::BitcastOp::create(b, loc, bits, c);
      v = arith::BitcastOp::create(b, loc, bits, v);
    }
    Value pair = LLVM::AtomicCmpXchgOp::create(b, loc, *ptr, c, v, ordering,
                                               failureOrdering(ordering));
    Value old =
        LLVM::ExtractValueOp::create(b, loc, pair, ArrayRef<int64_t>{0});
    if (isa<FloatType>(elem))
      old = arith::BitcastOp::create(b, loc, elem, old);
    return old;
  };
  if (!isTile(cas.getType())) {
    FailureOr<Value> old = once(scalarType(elem), [&] { return one({}); });
    if (failed(old))
      return failure();
    scalars.map(cas.getResult(), *old);
    return success();
  }
  auto type = cast<RankedTensorType>(cas.getType());
  Value buffer = allocBuffer(type);
  if (failed(forEachIndex(type.getShape(), [&](ArrayRef<Value> index) {
        FailureOr<Value> old = one(index);
        if (failed(old))
          return failure();
        storeBuffer(*old, buffer, index);
        return success();
      })))
    return failure();
  buffers[cas.getResult()] = buffer;
  return success();
}

/// Declares (once) `int printf(ptr, ...)` in the module of `op`.
static LLVM::LLVMFuncOp getOrDeclarePrintf(OpBuilder &b, Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>("printf"))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  MLIRContext *ctx = b.getContext();
  auto type = LLVM::LLVMFunctionType::get(IntegerType::get(ctx, 32),
                                          {LLVM::LLVMPointerType::get(ctx)},
                                          /*isVarArg=*/true);
  return LLVM::LLVMFuncOp::create(b, op->getLoc(), "printf", type);
}

/// The address of a NUL-terminated private string constant.
static Value getStringPointer(OpBuilder &b, Location loc, Operation *op,
                              StringRef text) {
  auto module = op->getParentOfType<ModuleOp>();
  std::string name =
      "__tk_str_" + std::to_string(llvm::hash_value(text) & 0xffffffffu);
  auto global = module.lookupSymbol<LLVM::GlobalOp>(name);
  if (!global) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    std::string data = text.str();
    data.push_back('\0');
    auto type = LLVM::LLVMArrayType::get(b.getI8Type(), data.size());
    global = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                    LLVM::Linkage::Private, name,
                                    b.getStringAttr(data));
  }
  return LLVM::AddressOfOp::create(b, loc, global);
}

void KernelLowering::emitPrintf(StringRef format, ValueRange args) {
  if (onThreads()) {
    // The GPU's printf (vprintf on NVIDIA) takes its arguments packed.
    gpu::PrintfOp::create(b, loc, format, args);
    return;
  }
  LLVM::LLVMFuncOp printf = getOrDeclarePrintf(b, target);
  SmallVector<Value> operands{getStringPointer(b, loc, target, format)};
  llvm::append_range(operands, args);
  LLVM::CallOp::create(b, loc, printf, operands);
}

LogicalResult KernelLowering::lowerPrint(tk::PrintOp print) {
  // One program prints one line, not one per thread.
  if (onThreads() && parallelDepth == 0)
    return onFirstThread([&] { return lowerPrint(print); });
  auto call = [&](StringRef format, ValueRange args) {
    emitPrintf(format, args);
  };
  // printf promotes floats to double and small integers to int.
  auto promote = [&](Value v, std::string &spec) -> Value {
    Type t = v.getType();
    if (isa<FloatType>(t)) {
      spec = "%g";
      return t.isF64()
                 ? v
                 : Value(arith::ExtFOp::create(
                       b, loc, b.getF64Type(),
                       isNarrowFloat(t)
                           ? arith::ExtFOp::create(b, loc, b.getF32Type(), v)
                           : v));
    }
    if (isa<LLVM::LLVMPointerType>(t)) {
      spec = "%p";
      return v;
    }
    if (t.isInteger(64)) {
      spec = "%lld";
      return v;
    }
    spec = "%d";
    return t.isInteger(32)
               ? v
               : Value(arith::ExtSIOp::create(b, loc, b.getI32Type(), v));
  };
  call("pid (%d, %d, %d) " + print.getPrefix().str(),
       ValueRange{grid[0], grid[1], grid[2]});
  for (Value arg : print.getArgs()) {
    if (!isTile(arg.getType())) {
      FailureOr<Value> v = scalar(arg);
      if (failed(v))
        return failure();
      std::string spec;
      Value p = promote(*v, spec);
      call(" " + spec, p);
      continue;
    }
    auto shape = cast<RankedTensorType>(arg.getType()).getShape();
    if (failed(forEachIndex(shape, [&](ArrayRef<Value> index) {
          FailureOr<Value> v = element(arg, index);
          if (failed(v))
            return failure();
          std::string spec;
          Value p = promote(*v, spec);
          call(" " + spec, p);
          return success();
        })))
      return failure();
  }
  call("\n", {});
  return success();
}

LogicalResult KernelLowering::lowerAssert(tk::AssertOp assertOp) {
  // A failed check prints its message (with the program id) and the kernel
  // goes on, as a device assert without a debugger would report it.
  Value cond = assertOp.getCondition();
  auto checkOne = [&](ArrayRef<Value> index) -> LogicalResult {
    FailureOr<Value> ok = element(cond, index);
    if (failed(ok))
      return failure();
    Value failedCheck =
        arith::XOrIOp::create(b, loc, *ok, constInt(b.getI1Type(), 1));
    auto branch = scf::IfOp::create(b, loc, failedCheck, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    emitPrintf("tk assert failed in program (%d, %d, %d): " +
                   assertOp.getMessage().str() + "\n",
               ValueRange{grid[0], grid[1], grid[2]});
    return success();
  };
  if (!isTile(cond.getType()))
    return checkOne({});
  return forEachIndex(cast<RankedTensorType>(cond.getType()).getShape(),
                      checkOne);
}

Value KernelLowering::pointerWalkStep(scf::ForOp loop, unsigned i) {
  Value arg = loop.getRegionIterArgs()[i];
  Value init = loop.getInitArgs()[i];
  if (!isTile(arg.getType()) ||
      !isa<tk::PtrType>(getElementTypeOrSelf(arg.getType())))
    return {};
  auto advance = loop.getYieldedValues()[i].getDefiningOp<tk::AddPtrOp>();
  if (!advance || advance.getPtr() != arg ||
      advance->getBlock() != loop.getBody())
    return {};
  auto splat = advance.getOffset().getDefiningOp<tk::SplatOp>();
  if (!splat)
    return {};
  // The start is read on every trip: it must not be a load or anything
  // else that would read memory again, nor a buffer the loop rewrites.
  bool steadyStart =
      pointerWalks.count(init) ||
      (buffers.count(init) &&
       !llvm::is_contained(loop.getInitArgs().drop_front(i + 1), init)) ||
      isCheap(init);
  return steadyStart ? splat.getSrc() : Value();
}

tk::DotOp KernelLowering::heldAccumulatorDot(scf::ForOp loop, unsigned i) {
  if (!onThreads() || parallelDepth > 0 || !matrixUnit)
    return {};
  Value arg = loop.getRegionIterArgs()[i];
  if (!isTile(arg.getType()) || !arg.hasOneUse())
    return {};
  // The accumulator may pass through element-wise ops of its own shape and
  // type on its way to the dot (FlashAttention's rescale, acc * alpha):
  // each register is then rescaled in place.
  Value acc = arg;
  while (acc.hasOneUse()) {
    Operation *user = *acc.getUsers().begin();
    if (isa<tk::DotOp>(user) || !isElementwiseLike(user) ||
        user->getBlock() != loop.getBody() ||
        user->getResult(0).getType() != arg.getType() ||
        llvm::count(user->getOperands(), acc) != 1)
      break;
    acc = user->getResult(0);
  }
  if (!acc.hasOneUse())
    return {};
  auto dot = dyn_cast<tk::DotOp>(*acc.getUsers().begin());
  if (!dot || dot.getAcc() != acc || dot->getBlock() != loop.getBody() ||
      !dot.getResult().hasOneUse() ||
      loop.getYieldedValues()[i] != dot.getResult())
    return {};
  // An accumulator narrower than the unit's is rounded after every trip,
  // which registers would skip.
  std::optional<tk::MatrixUnit::HeldProduct> product = heldProduct(dot);
  if (!product || getElementTypeOrSelf(dot.getType()) != product->accumulator)
    return {};
  return dot;
}

Value KernelLowering::rescaledHeldAccumulator(Value acc) {
  // Up the chain heldAccumulatorDot accepted: element-wise ops, one
  // operand each from the chain.
  while (acc && !heldAccumulators.count(acc)) {
    Operation *op = acc.getDefiningOp();
    if (!op || !isElementwiseLike(op))
      return {};
    Value next;
    for (Value operand : op->getOperands())
      if (operand.getType() == acc.getType() &&
          (heldAccumulators.count(operand) || rescaledHeldAccumulator(operand)))
        next = operand;
    acc = next;
  }
  return acc;
}

FailureOr<SmallVector<Value>>
KernelLowering::initHeldAccumulator(const tk::MatrixUnit::HeldProduct &product,
                                    Value init) {
  // A previous loop's product handed over in its registers.
  if (auto held = heldResults.find(init);
      held != heldResults.end() && sameLayout(held->second.product, product))
    return held->second.registers;
  SmallVector<Value> registers;
  for (auto [row, col] : matrixUnit->registerPositions(b, loc, product)) {
    FailureOr<Value> c = element(init, {row, col});
    if (failed(c))
      return failure();
    if (c->getType() == product.accumulator)
      registers.push_back(*c);
    else if (isa<FloatType>(product.accumulator))
      registers.push_back(
          arith::ExtFOp::create(b, loc, product.accumulator, *c));
    else
      registers.push_back(
          arith::ExtSIOp::create(b, loc, product.accumulator, *c));
  }
  if (registers.empty())
    return emitError(loc, "tk-convert-to-loops: the matrix unit gave no "
                          "accumulator registers");
  return registers;
}

bool KernelLowering::onlyStoredFromRegisters(
    Value tile, const tk::MatrixUnit::HeldProduct &product) {
  if (tile.use_empty())
    return false;
  for (OpOperand &use : tile.getUses()) {
    Operation *user = use.getOwner();
    if (auto loop = dyn_cast<scf::ForOp>(user)) {
      BlockArgument arg = loop.getTiedLoopRegionIterArg(&use);
      tk::DotOp dot =
          arg ? heldAccumulatorDot(loop, arg.getArgNumber() -
                                             loop.getNumInductionVars())
              : tk::DotOp();
      std::optional<tk::MatrixUnit::HeldProduct> next =
          dot ? heldProduct(dot) : std::nullopt;
      if (!next || !sameLayout(*next, product) ||
          user->getBlock() != tile.getParentBlock())
        return false;
      continue;
    }
    if (auto store = dyn_cast<tk::StoreOp>(user)) {
      if (store.getValue() != tile || store.getPtr() == tile ||
          store.getMask() == tile)
        return false;
      continue;
    }
    if (!keepsIndex(user) || materialized.count(user) ||
        !onlyStoredFromRegisters(user->getResult(0), product))
      return false;
  }
  return true;
}

Value KernelLowering::findThroughIndexKeeping(
    Value value, function_ref<bool(Value)> isRoot) {
  if (isRoot(value))
    return value;
  Operation *def = value.getDefiningOp();
  if (!def || !keepsIndex(def) || materialized.count(def))
    return {};
  for (Value operand : def->getOperands())
    if (isTile(operand.getType()))
      if (Value root = findThroughIndexKeeping(operand, isRoot))
        return root;
  return {};
}

Value KernelLowering::heldRoot(Value value) {
  return findThroughIndexKeeping(
      value, [&](Value v) { return heldResults.count(v) != 0; });
}

LogicalResult
KernelLowering::storeHeld(const tk::MatrixUnit::HeldProduct &product,
                          ValueRange registers, Value buffer) {
  auto positions = matrixUnit->registerPositions(b, loc, product);
  if (positions.size() != registers.size())
    return emitError(loc, "tk-convert-to-loops: the matrix unit gave ")
           << positions.size() << " register positions for " << registers.size()
           << " registers";
  for (auto [value, position] : llvm::zip_equal(registers, positions))
    memref::StoreOp::create(b, loc, value, buffer,
                            ValueRange{position.first, position.second});
  return success();
}

LogicalResult KernelLowering::narrowAccumulator(Value tile, Value wide) {
  auto type = cast<RankedTensorType>(tile.getType());
  Type elementType = type.getElementType();
  if (cast<MemRefType>(wide.getType()).getElementType() == elementType) {
    buffers[tile] = wide;
    return success();
  }
  Value result = allocBuffer(type);
  if (failed(forEachIndex(type.getShape(), [&](ArrayRef<Value> index) {
        Value value = loadBuffer(wide, index, Type());
        if (isa<FloatType>(elementType))
          value = arith::TruncFOp::create(b, loc, elementType, value);
        else
          value = arith::TruncIOp::create(b, loc, elementType, value);
        storeBuffer(value, result, index);
        return success();
      })))
    return failure();
  buffers[tile] = result;
  return success();
}

std::optional<tk::MatrixUnit::HeldProduct>
KernelLowering::heldProduct(tk::DotOp dot) {
  if (!matrixUnit || !onThreads() || parallelDepth > 0)
    return std::nullopt;
  auto aType = cast<RankedTensorType>(dot.getA().getType());
  auto bType = cast<RankedTensorType>(dot.getB().getType());
  Type accElem = cast<RankedTensorType>(dot.getType()).getElementType();
  tk::MatrixUnit::HeldProduct product;
  product.a = aType.getElementType();
  product.b = bType.getElementType();
  product.accumulator = isa<FloatType>(accElem) && isNarrowFloat(accElem)
                            ? b.getF32Type()
                            : accElem;
  product.m = aType.getDimSize(0);
  product.n = bType.getDimSize(1);
  product.k = aType.getDimSize(1);
  product.tf32 =
      product.a.isF32() && dot.getInputPrecision() == tk::InputPrecision::TF32;
  product.kMajorB = static_cast<bool>(dot.getB().getDefiningOp<tk::TransOp>());
  product.threadId = threadId;
  product.numThreads = numThreads;
  if (!matrixUnit->holds(product))
    return std::nullopt;
  return product;
}

std::optional<tk::MatrixUnit::HeldProduct>
KernelLowering::heldOperandLayout(Value tile, unsigned operand) {
  std::optional<tk::MatrixUnit::HeldProduct> first;
  for (OpOperand &use : tile.getUses()) {
    auto dot = dyn_cast<tk::DotOp>(use.getOwner());
    if (!dot || use.getOperandNumber() != operand)
      return std::nullopt;
    std::optional<tk::MatrixUnit::HeldProduct> product = heldProduct(dot);
    if (!product || (first && !sameLayout(*first, *product)))
      return std::nullopt;
    first = product;
  }
  return first;
}

bool KernelLowering::canPrefetch(scf::ForOp loop, tk::LoadOp load,
                                 ArrayRef<Value> walkSteps, int64_t &runBytes) {
  Value tile = load.getResult();
  auto type = dyn_cast<RankedTensorType>(tile.getType());
  if (!type || load->getBlock() != loop.getBody() ||
      !(tile.hasOneUse() || heldOperandLayout(tile, 1) ||
        heldOperandLayout(tile, 0)) ||
      isBlockPtr(load.getPtr().getType()) || load.getIsVolatile() ||
      !type.getElementType().isIntOrFloat())
    return false;
  // A run: the widest copy the unit takes that divides the inner dimension.
  int64_t elementBytes = type.getElementType().getIntOrFloatBitWidth() / 8;
  if (elementBytes == 0)
    return false;
  runBytes = 0;
  for (int64_t bytes : {16, 8, 4})
    if (asyncCopy->supportsBytes(bytes) && bytes % elementBytes == 0 &&
        type.getShape().back() % (bytes / elementBytes) == 0) {
      runBytes = bytes;
      break;
    }
  if (runBytes == 0)
    return false;
  // Moving a load ahead of trips that write memory could read stale data.
  bool writes = false;
  for (Operation &op : loop.getBody()->without_terminator())
    writes = writes || mayWriteMemory(&op);
  if (writes)
    return false;
  // Everything the address, mask and other value read inside the loop.
  SmallVector<Value> worklist(load->getOperands());
  llvm::DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second || loop.isDefinedOutsideOfLoop(value))
      continue;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() != loop.getBody())
        return false;
      if (arg == loop.getInductionVar())
        continue;
      unsigned i = arg.getArgNumber() - 1;
      if (!walkSteps[i] || !loop.isDefinedOutsideOfLoop(walkSteps[i]))
        return false;
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (def->getBlock() != loop.getBody() || def->getNumRegions() != 0)
      return false;
    bool elementwise = isElementwiseLike(def) && !isa<tk::LoadOp>(def);
    bool pureScalar = !isTile(value.getType()) && isMemoryEffectFree(def) &&
                      isa<arith::ArithDialect>(def->getDialect());
    if (!elementwise && !pureScalar)
      return false;
    llvm::append_range(worklist, def->getOperands());
  }
  return true;
}

LogicalResult
KernelLowering::prefetch(scf::ForOp loop, tk::LoadOp load, Value slot, Value iv,
                         const DenseMap<Value, PointerWalk> &walks,
                         int64_t runBytes, OffsetFn offsetOf, bool runsProven) {
  // Evaluate the trip's scalars and walks, then restore the current ones.
  auto savedCache = std::move(elementCache);
  elementCache.clear();
  DenseMap<Value, PointerWalk> savedWalks;
  for (auto [arg, walk] : walks) {
    savedWalks[arg] = pointerWalks.lookup(arg);
    pointerWalks[arg] = walk;
  }
  Value oldIv = loop.getInductionVar();
  Value currentIv = scalars.lookupOrNull(oldIv);
  scalars.map(oldIv, iv);
  SmallVector<Value> tripScalars;
  LogicalResult status = success();
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (&op == load.getOperation())
      break;
    if (isElementwiseLike(&op) || op.getNumResults() != 1 ||
        isTile(op.getResult(0).getType()) || !isMemoryEffectFree(&op) ||
        !isa<arith::ArithDialect>(op.getDialect()))
      continue;
    if (failed(lowerOp(&op))) {
      status = failure();
      break;
    }
    tripScalars.push_back(op.getResult(0));
  }

  // Runs the static facts prove contiguous and aligned, with every lane of
  // the trip's mask on (an O(1) check), are copied without a check per run.
  if (succeeded(status)) {
    Value allOn = runsProven && load.getMask()
                      ? rangeMaskAllTrue(load.getMask())
                      : Value();
    if (runsProven && !load.getMask())
      status = copyRuns(load, slot, runBytes, offsetOf, true, true);
    else if (allOn)
      status = versionOnMask(allOn, [&](Value on) {
        return copyRuns(load, slot, runBytes, offsetOf, true, bool(on));
      });
    else
      status = copyRuns(load, slot, runBytes, offsetOf, runsProven, false);
  }

  for (Value value : tripScalars)
    scalars.erase(value);
  if (currentIv)
    scalars.map(oldIv, currentIv);
  else
    scalars.erase(oldIv);
  for (auto [arg, walk] : savedWalks) {
    if (walk.start)
      pointerWalks[arg] = walk;
    else
      pointerWalks.erase(arg);
  }
  elementCache = std::move(savedCache);
  return status;
}

LogicalResult KernelLowering::copyRuns(tk::LoadOp load, Value slot,
                                       int64_t runBytes, OffsetFn offsetOf,
                                       bool proven, bool allOn) {
  auto type = cast<RankedTensorType>(load.getType());
  int64_t elementBytes = type.getElementType().getIntOrFloatBitWidth() / 8;
  int64_t width = runBytes / elementBytes;
  int64_t total = type.getNumElements();
  // Copies run `run` (index): its first element is run * width.
  auto copyRun = [&](Value run) -> LogicalResult {
    LogicalResult status = success();
    Value first = arith::MulIOp::create(b, loc, run, constIndex(width));
    SmallVector<SmallVector<Value>> indices;
    SmallVector<Value> addresses;
    Value fast = constInt(b.getI1Type(), 1);
    // With every lane on only the run's first address is needed.
    for (int64_t lane = 0; lane < (allOn ? 1 : width) && succeeded(status);
         ++lane) {
      Value linear =
          lane == 0 ? first
                    : arith::AddIOp::create(b, loc, first, constIndex(lane));
      status = forOneIndex(type.getShape(), total, linear,
                           [&](ArrayRef<Value> index) -> LogicalResult {
                             indices.emplace_back(index);
                             FailureOr<Value> address =
                                 element(load.getPtr(), index);
                             if (failed(address))
                               return failure();
                             addresses.push_back(*address);
                             if (!load.getMask() || allOn)
                               return success();
                             FailureOr<Value> on =
                                 element(load.getMask(), index);
                             if (failed(on))
                               return failure();
                             fast = arith::AndIOp::create(b, loc, fast, *on);
                             return success();
                           });
    }
    if (succeeded(status)) {
      Value at =
          offsetOf ? offsetOf(indices.front()[0], indices.front()[1]) : first;
      if (allOn) {
        asyncCopy->copy(b, loc, slot, at, addresses.front(), runBytes);
        return success();
      }
      // One async copy when the run is on, contiguous and aligned.
      if (!proven) {
        Type i64 = b.getI64Type();
        Value start = LLVM::PtrToIntOp::create(b, loc, i64, addresses.front());
        Value end = LLVM::PtrToIntOp::create(b, loc, i64, addresses.back());
        Value span = arith::SubIOp::create(b, loc, end, start);
        fast = arith::AndIOp::create(
            b, loc, fast,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, span,
                                  constInt(i64, runBytes - elementBytes)));
        fast = arith::AndIOp::create(
            b, loc, fast,
            arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::eq,
                arith::AndIOp::create(b, loc, start,
                                      constInt(i64, runBytes - 1)),
                constInt(i64, 0)));
      }
      auto branch = scf::IfOp::create(b, loc, fast, /*withElseRegion=*/true);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      asyncCopy->copy(b, loc, slot, at, addresses.front(), runBytes);
      // Otherwise element by element, with the load's mask and other.
      b.setInsertionPoint(branch.elseBlock()->getTerminator());
      auto saved = elementCache;
      for (ArrayRef<Value> index : indices) {
        FailureOr<Value> value = loadElement(load, index);
        if (failed(value)) {
          status = failure();
          break;
        }
        if (offsetOf)
          storeBuffer(*value, slot, {offsetOf(index[0], index[1])});
        else
          storeBuffer(*value, slot, index);
      }
      elementCache = std::move(saved);
    }
    return status;
  };
  OpBuilder::InsertionGuard guard(b);
  int64_t numRuns = total / width;
  // With every lane on and the same number of runs on every thread, the
  // copies are straight-line code: their addresses are fixed offsets from
  // the trip's, which LLVM then computes once for all trips.
  if (allOn && numRuns % numThreads == 0 &&
      numRuns / numThreads <= kMaxUnrolledRuns) {
    for (int64_t j = 0; j < numRuns / numThreads; ++j)
      if (failed(copyRun(arith::AddIOp::create(b, loc, threadId,
                                               constIndex(j * numThreads)))))
        return failure();
    return success();
  }
  auto runs = scf::ForOp::create(b, loc, threadId, constIndex(numRuns),
                                 constIndex(numThreads));
  b.setInsertionPointToStart(runs.getBody());
  return copyRun(runs.getInductionVar());
}

LogicalResult KernelLowering::lowerFor(scf::ForOp loop) {
  // Scalars and block-pointer components are loop-carried SSA values; tiles
  // live in one buffer per iteration argument, updated at the yield, except
  // for pointer walks (one scalar offset) and accumulators the matrix unit
  // holds in registers (its registers).
  enum class Carried { Scalar, BlockPtr, Tile, Walk, Held, Rows };
  unsigned numArgs = loop.getNumRegionIterArgs();
  SmallVector<Carried> kinds(numArgs, Carried::Scalar);
  SmallVector<Value> inits;
  SmallVector<Value> iterBuffers(numArgs);
  SmallVector<Value> walkSteps(numArgs);
  SmallVector<tk::DotOp> heldDots(numArgs);
  SmallVector<unsigned> numValues(numArgs, 1);
  for (auto [i, init] : llvm::enumerate(loop.getInitArgs())) {
    Type type = init.getType();
    if (isBlockPtr(type)) {
      kinds[i] = Carried::BlockPtr;
      llvm::append_range(inits, blockPtrs.lookup(init).flatten());
      numValues[i] = 1 + 3 * blockRank(type);
    } else if (!isTile(type)) {
      FailureOr<Value> value = scalar(init);
      if (failed(value))
        return failure();
      inits.push_back(*value);
    } else if ((walkSteps[i] = pointerWalkStep(loop, i))) {
      kinds[i] = Carried::Walk;
      auto outer = pointerWalks.find(init);
      inits.push_back(outer != pointerWalks.end()
                          ? outer->second.offset
                          : constInt(b.getI64Type(), 0));
    } else if (tk::DotOp layout =
                   rowLayout.lookup(loop.getRegionIterArgs()[i])) {
      kinds[i] = Carried::Rows;
      FailureOr<SmallVector<Value>> registers = computeRows(init, layout);
      if (failed(registers))
        return failure();
      numValues[i] = registers->size();
      llvm::append_range(inits, *registers);
    } else if ((heldDots[i] = heldAccumulatorDot(loop, i))) {
      kinds[i] = Carried::Held;
      FailureOr<SmallVector<Value>> registers =
          initHeldAccumulator(*heldProduct(heldDots[i]), init);
      if (failed(registers))
        return failure();
      numValues[i] = registers->size();
      llvm::append_range(inits, *registers);
    } else {
      kinds[i] = Carried::Tile;
      numValues[i] = 0;
      iterBuffers[i] = allocBuffer(cast<RankedTensorType>(type));
      if (failed(storeTile(init, iterBuffers[i])))
        return failure();
    }
  }
  FailureOr<Value> lb = scalar(loop.getLowerBound()),
                   ub = scalar(loop.getUpperBound()),
                   step = scalar(loop.getStep());
  if (failed(lb) || failed(ub) || failed(step))
    return failure();
  // The lowered values of iteration argument or result `i` among `values`.
  SmallVector<unsigned> firstValue(numArgs, 0);
  for (unsigned i = 1; i < numArgs; ++i)
    firstValue[i] = firstValue[i - 1] + numValues[i - 1];

  // Software pipelining: the operand loads of held dots are issued
  // numStages - 1 trips ahead into a ring of numStages buffers each.
  struct Prefetched {
    tk::LoadOp load;
    /// The dot operand the slots hold: the load's tile, or its transpose
    /// (attention's k^T) in the unit's layout.
    Value tile;
    bool transposed = false;
    int64_t runBytes;
    SmallVector<Value> slots;
    /// The product and operand whose layout the slots have, if the unit
    /// lays out its operands.
    std::optional<tk::MatrixUnit::HeldProduct> layout;
    unsigned operand;
    /// The facts of the pointer tile prove every run contiguous and
    /// aligned.
    bool runsProven = false;
  };
  // The facts of the loop's pointer walks: their start advanced by steps.
  auto walkFacts = [&](BlockArgument arg) -> std::optional<tk::AxisFacts> {
    if (arg.getOwner() != loop.getBody() || arg == loop.getInductionVar())
      return std::nullopt;
    unsigned i = arg.getArgNumber() - 1;
    if (kinds[i] != Carried::Walk || !walkSteps[i])
      return std::nullopt;
    auto unknown = [](BlockArgument) -> std::optional<tk::AxisFacts> {
      return std::nullopt;
    };
    return tk::getWalkFacts(tk::getAxisFacts(loop.getInitArgs()[i], unknown),
                            tk::getAxisFacts(walkSteps[i], unknown),
                            arg.getType());
  };
  SmallVector<Prefetched> prefetched;
  if (asyncCopy && numStages > 1 && llvm::is_contained(kinds, Carried::Held)) {
    // The carried products' operands, and those of the other products the
    // unit holds in the body (attention's scores: q k^T).
    SmallVector<tk::DotOp> dots;
    for (Operation &op : loop.getBody()->without_terminator())
      if (auto dot = dyn_cast<tk::DotOp>(op);
          dot && (llvm::is_contained(heldDots, dot) || heldProduct(dot)))
        dots.push_back(dot);
    for (tk::DotOp dot : dots) {
      std::optional<tk::MatrixUnit::HeldProduct> product = heldProduct(dot);
      bool laidOut = matrixUnit->laysOutOperands(*product);
      for (unsigned index : {0u, 1u}) {
        Value operand = index == 0 ? dot.getA() : dot.getB();
        auto load = operand.getDefiningOp<tk::LoadOp>();
        // A transposed load goes into the unit's layout at swapped
        // positions (the unit keeps runs of the source's rows together).
        bool transposed = false;
        if (auto trans = operand.getDefiningOp<tk::TransOp>();
            trans && laidOut &&
            (trans->hasOneUse() ||
             heldOperandLayout(trans.getResult(), index)) &&
            !materialized.count(trans)) {
          load = trans.getSrc().getDefiningOp<tk::LoadOp>();
          transposed = true;
        }
        int64_t runBytes = 0;
        // A load several products read is copied once.
        if (!load || !canPrefetch(loop, load, walkSteps, runBytes) ||
            llvm::any_of(prefetched, [&](const Prefetched &entry) {
              return entry.load == load;
            }))
          continue;
        Prefetched entry{load, operand,      transposed, runBytes,
                         {},   std::nullopt, index};
        int64_t elementBytes = cast<RankedTensorType>(load.getType())
                                   .getElementType()
                                   .getIntOrFloatBitWidth() /
                               8;
        entry.runsProven = tk::runsAreContiguousAndAligned(
            tk::getAxisFacts(load.getPtr(), walkFacts), runBytes / elementBytes,
            elementBytes, runBytes);
        if (laidOut)
          entry.layout = product;
        auto type = cast<RankedTensorType>(operand.getType());
        for (int64_t s = 0; s < numStages; ++s)
          entry.slots.push_back(
              laidOut ? ringSlot({type.getNumElements()}, type.getElementType(),
                                 matrixUnit->operandAlignment(*product))
                      : ringSlot(type.getShape(), type.getElementType(), 16));
        prefetched.push_back(std::move(entry));
      }
    }
  }
  Type ivType = (*lb).getType();
  auto ivConst = [&](int64_t v) -> Value {
    return ivType.isIndex() ? constIndex(v) : constInt(ivType, v);
  };
  // The step of walk `i` in elements, as the i64 its offset counts in.
  auto walkStepOf = [&](unsigned i) -> FailureOr<Value> {
    FailureOr<Value> step = scalar(walkSteps[i]);
    if (failed(step) || step->getType() == b.getI64Type())
      return step;
    return Value(arith::ExtSIOp::create(b, loc, b.getI64Type(), *step));
  };
  // The pointer walks `trips` trips after the ones at `offsets`.
  auto walksAhead =
      [&](ValueRange offsets,
          int64_t trips) -> FailureOr<DenseMap<Value, PointerWalk>> {
    DenseMap<Value, PointerWalk> result;
    for (unsigned i = 0; i < numArgs; ++i) {
      if (kinds[i] != Carried::Walk)
        continue;
      FailureOr<Value> stepBy = walkStepOf(i);
      if (failed(stepBy))
        return failure();
      Value ahead = arith::MulIOp::create(b, loc, *stepBy,
                                          constInt(b.getI64Type(), trips));
      Value init = loop.getInitArgs()[i];
      auto outer = pointerWalks.find(init);
      result[loop.getRegionIterArgs()[i]] = PointerWalk{
          outer != pointerWalks.end() ? outer->second.start : init,
          arith::AddIOp::create(b, loc, offsets[firstValue[i]], ahead)};
    }
    return result;
  };
  // The slot of `entry`'s ring that trip `trip` (counted from 0) uses.
  auto slotOfTrip = [&](const Prefetched &entry, Value trip) -> Value {
    Value index = arith::RemSIOp::create(b, loc, trip, ivConst(numStages));
    Value slot = entry.slots[0];
    for (int64_t s = 1; s < numStages; ++s)
      slot = arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, index,
                                ivConst(s)),
          entry.slots[s], slot);
    return slot;
  };
  // Issues the loads of trip `trip` (counted from 0, at induction value
  // `iv`) into slot `trip % numStages` when `iv` is below the bound, then
  // closes the group either way (every thread counts the same groups).
  auto issueTrip = [&](Value trip, Value iv, ValueRange offsets,
                       int64_t tripsAhead) -> LogicalResult {
    Value active =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv, *ub);
    auto branch = scf::IfOp::create(b, loc, active, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      FailureOr<DenseMap<Value, PointerWalk>> walks =
          walksAhead(offsets, tripsAhead);
      if (failed(walks))
        return failure();
      for (Prefetched &entry : prefetched) {
        Value slot = slotOfTrip(entry, trip);
        auto offsetOf = [&](Value row, Value col) -> Value {
          if (entry.transposed)
            std::swap(row, col);
          return matrixUnit->operandOffset(b, loc, *entry.layout, entry.operand,
                                           row, col);
        };
        if (failed(prefetch(loop, entry.load, slot, iv, *walks, entry.runBytes,
                            entry.layout ? OffsetFn(offsetOf) : nullptr,
                            entry.runsProven)))
          return failure();
      }
    }
    asyncCopy->commit(b, loc);
    return success();
  };
  // Trip t issues the copies of trip t + ahead into the slot of trip
  // t + ahead - numStages, at its top, once the barrier after its wait says
  // every thread is done with that slot. Only a product updating a carried
  // accumulator in place may still run when its trip ends
  // (mayStayInFlight): then the slot of trip t - 1 is still read at the top
  // of trip t, and the copies go one trip less ahead (or, with two stages,
  // at the trip's end, after the barrier that follows its products).
  bool previousMayRun = llvm::any_of(heldDots, [&](tk::DotOp dot) {
    return dot && llvm::is_contained(loop.getRegionIterArgs(), dot.getAcc());
  });
  bool issueAtTop = !previousMayRun || numStages > 2;
  int64_t ahead = previousMayRun && issueAtTop ? numStages - 2 : numStages - 1;
  if (!prefetched.empty()) {
    // Prologue: trips 0 .. ahead - 1.
    for (int64_t s = 0; s < ahead; ++s) {
      Value iv = arith::AddIOp::create(
          b, loc, *lb, arith::MulIOp::create(b, loc, *step, ivConst(s)));
      if (failed(issueTrip(ivConst(s), iv, inits, s)))
        return failure();
    }
  }

  // A pipelined loop with held accumulators runs behind a check that it
  // runs at all, and finishes its products inside it: the path that skips
  // the loop then joins only after the products are done. (Where a product
  // still running at the loop's exit meets the skipping path's copies of
  // the initial registers, ptxas serialises every wgmma: its C7515.)
  bool finishInside =
      !prefetched.empty() && llvm::is_contained(kinds, Carried::Held);
  scf::IfOp runsAtAll;
  if (finishInside) {
    runsAtAll = scf::IfOp::create(
        b, loc, ValueRange(inits).getTypes(),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, *lb, *ub),
        /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(runsAtAll.elseBlock());
    scf::YieldOp::create(b, loc, inits);
    b.setInsertionPointToStart(runsAtAll.thenBlock());
  }
  OpBuilder::InsertionGuard afterLoop(b);
  if (finishInside)
    b.setInsertionPointToStart(runsAtAll.thenBlock());
  auto newLoop = scf::ForOp::create(b, loc, *lb, *ub, *step, inits);
  Block *body = newLoop.getBody();
  llvm::SaveAndRestore<scf::ForOp> savedSourceLoop(sourceLoop, loop);
  llvm::SaveAndRestore<Operation *> savedLoweredLoop(
      loweredLoop,
      finishInside ? runsAtAll.getOperation() : newLoop.getOperation());
  scalars.map(loop.getInductionVar(), newLoop.getInductionVar());
  auto bind = [&](Value value, unsigned i, ValueRange values) {
    ValueRange own = values.drop_front(firstValue[i]).take_front(numValues[i]);
    switch (kinds[i]) {
    case Carried::Scalar:
      scalars.map(value, own[0]);
      break;
    case Carried::BlockPtr:
      blockPtrs[value] =
          BlockPtrValue::unflatten(own, blockRank(value.getType()));
      break;
    case Carried::Tile:
      buffers[value] = iterBuffers[i];
      break;
    case Carried::Walk: {
      Value init = loop.getInitArgs()[i];
      auto outer = pointerWalks.find(init);
      Value start = outer != pointerWalks.end() ? outer->second.start : init;
      pointerWalks[value] = PointerWalk{start, own[0]};
      break;
    }
    case Carried::Held:
      heldAccumulators[value] = SmallVector<Value>(own);
      break;
    case Carried::Rows:
      rowTiles[value] = {rowOffsets(*heldProduct(
                             rowLayout.lookup(loop.getRegionIterArgs()[i]))),
                         SmallVector<Value>(own)};
      break;
    }
  };
  for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs()))
    bind(arg, i, body->getArguments().drop_front(1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(body);
    if (!body->empty() && body->back().hasTrait<OpTrait::IsTerminator>())
      b.setInsertionPoint(&body->back());
    Block &oldBody = *loop.getBody();
    Value trip;
    auto issueAhead = [&]() -> LogicalResult {
      Value iv = newLoop.getInductionVar();
      Value aheadTrip = arith::AddIOp::create(b, loc, trip, ivConst(ahead));
      Value aheadIv = arith::AddIOp::create(
          b, loc, iv, arith::MulIOp::create(b, loc, *step, ivConst(ahead)));
      return issueTrip(aheadTrip, aheadIv, body->getArguments().drop_front(1),
                       ahead);
    };
    // With the copies issued at the top, the products' operands are not
    // written again before the next trip's barrier: they need no barrier
    // of their own (lowerHeldDot).
    llvm::SaveAndRestore<bool> savedRingsAtTop(
        ringsWrittenAtTop, !prefetched.empty() && issueAtTop);
    llvm::SaveAndRestore<Block *> savedRingsAtTopBody(
        ringsWrittenAtTopBody, ringsWrittenAtTop ? body : nullptr);
    if (!prefetched.empty()) {
      // Trip t waits for its own group (the ahead - 1 younger ones may stay
      // in flight) and for every thread's copies.
      Value iv = newLoop.getInductionVar();
      trip = arith::DivSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, iv, *lb), *step);
      asyncCopy->wait(b, loc, ahead - 1);
      barrier();
      for (Prefetched &entry : prefetched) {
        buffers[entry.tile] = slotOfTrip(entry, trip);
        if (entry.layout)
          laidOutOperands.insert(entry.tile);
      }
      if (issueAtTop && failed(issueAhead()))
        return failure();
    }
    for (Operation &op : oldBody.without_terminator()) {
      loc = op.getLoc();
      if (failed(lowerOp(&op)))
        return failure();
    }
    settleProducts();
    if (!prefetched.empty() && !issueAtTop && failed(issueAhead()))
      return failure();
    auto yield = cast<scf::YieldOp>(oldBody.getTerminator());
    loc = yield.getLoc();
    // Tiles first go to temporaries when the new value reads another
    // iteration buffer (or its own at a moved index), then to the buffers.
    SmallVector<Value> yielded;
    SmallVector<std::pair<Value, Value>> copies;
    for (auto [i, value] : llvm::enumerate(yield.getOperands())) {
      switch (kinds[i]) {
      case Carried::Scalar: {
        FailureOr<Value> mapped = scalar(value);
        if (failed(mapped))
          return failure();
        yielded.push_back(*mapped);
        break;
      }
      case Carried::BlockPtr:
        llvm::append_range(yielded, blockPtrs.lookup(value).flatten());
        break;
      case Carried::Walk: {
        FailureOr<Value> stepBy = walkStepOf(i);
        if (failed(stepBy))
          return failure();
        Value offset = body->getArgument(1 + firstValue[i]);
        yielded.push_back(arith::AddIOp::create(b, loc, offset, *stepBy));
        break;
      }
      case Carried::Held:
        llvm::append_range(yielded, heldAccumulators.lookup(value));
        break;
      case Carried::Rows: {
        FailureOr<SmallVector<Value>> registers =
            computeRows(value, rowLayout.lookup(loop.getRegionIterArgs()[i]));
        if (failed(registers))
          return failure();
        llvm::append_range(yielded, *registers);
        break;
      }
      case Carried::Tile: {
        auto existing = buffers.find(value);
        if (existing != buffers.end() && existing->second == iterBuffers[i])
          continue;
        // A tile already in a buffer of its own (a dot, a reduction) is
        // copied from there: no copy below writes that buffer.
        if (existing != buffers.end() &&
            !llvm::is_contained(iterBuffers, existing->second)) {
          copies.push_back({existing->second, iterBuffers[i]});
          continue;
        }
        Value temp = allocBuffer(cast<RankedTensorType>(value.getType()));
        if (failed(storeTile(value, temp)))
          return failure();
        copies.push_back({temp, iterBuffers[i]});
        break;
      }
      }
    }
    // The copies overwrite the carried buffers: every thread must be done
    // reading them (register nests end without a barrier), and one barrier
    // publishes all the copies (no copy reads a buffer another writes).
    if (!copies.empty())
      barrier();
    for (auto [from, to] : copies) {
      auto type = cast<MemRefType>(to.getType());
      if (failed(copyBuffer(from, to, type.getShape(), Type(),
                            /*publish=*/false)))
        return failure();
    }
    if (!copies.empty())
      barrier();
    if (!body->empty() && body->back().hasTrait<OpTrait::IsTerminator>())
      body->back().erase();
    b.setInsertionPointToEnd(body);
    scf::YieldOp::create(b, loc, yielded);
  }
  // No copy outlives the loop (the trips past its end issued none), nor
  // a product left running.
  ValueRange results = newLoop.getResults();
  if (finishInside) {
    SmallVector<Value> finished(newLoop.getResults());
    for (auto [i, result] : llvm::enumerate(loop.getResults())) {
      if (kinds[i] != Carried::Held)
        continue;
      auto held =
          MutableArrayRef<Value>(finished).slice(firstValue[i], numValues[i]);
      SmallVector<Value> registers = matrixUnit->finish(
          b, loc, *heldProduct(heldDots[i]), SmallVector<Value>(held));
      llvm::copy(registers, held.begin());
    }
    scf::YieldOp::create(b, loc, finished);
    b.setInsertionPointAfter(runsAtAll);
    results = runsAtAll.getResults();
  }
  if (!prefetched.empty()) {
    asyncCopy->wait(b, loc, 0);
    // The rings are free for a later loop (its prologue writes them) once
    // every thread's products are done reading them.
    barrier();
    for (Prefetched &entry : prefetched)
      llvm::append_range(freeRingSlots, entry.slots);
  }
  // Results; held accumulators go to workgroup memory for what follows.
  for (auto [i, result] : llvm::enumerate(loop.getResults())) {
    bind(result, i, results);
    if (kinds[i] != Carried::Held)
      continue;
    SmallVector<Value> registers = heldAccumulators.lookup(result);
    heldAccumulators.erase(result);
    auto product = *heldProduct(heldDots[i]);
    if (onlyStoredFromRegisters(result, product)) {
      heldResults[result] = HeldResult{product, registers};
      continue;
    }
    Value buffer = allocBuffer({product.m, product.n}, product.accumulator);
    if (failed(storeHeld(product, registers, buffer)))
      return failure();
    barrier();
    if (failed(narrowAccumulator(result, buffer)))
      return failure();
  }
  return success();
}

LogicalResult KernelLowering::lowerIf(scf::IfOp branch) {
  FailureOr<Value> cond = scalar(branch.getCondition());
  if (failed(cond))
    return failure();
  SmallVector<Type> types;
  SmallVector<Value> resultBuffers(branch.getNumResults());
  for (auto [i, result] : llvm::enumerate(branch.getResults())) {
    Type type = result.getType();
    if (isTile(type))
      resultBuffers[i] = allocBuffer(cast<RankedTensorType>(type));
    else if (isBlockPtr(type))
      types.append(1 + 3 * blockRank(type), Type());
    else
      types.push_back(scalarType(type));
  }
  // Block-pointer component types: ptr, i64 shape, i64 strides, i32 offsets.
  {
    unsigned next = 0;
    for (Value result : branch.getResults()) {
      Type type = result.getType();
      if (isTile(type))
        continue;
      if (!isBlockPtr(type)) {
        ++next;
        continue;
      }
      int64_t rank = blockRank(type);
      types[next] = ptrType;
      for (int64_t d = 0; d < rank; ++d) {
        types[next + 1 + d] = b.getI64Type();
        types[next + 1 + rank + d] = b.getI64Type();
        types[next + 1 + 2 * rank + d] = b.getI32Type();
      }
      next += 1 + 3 * rank;
    }
  }
  bool hasElse = !branch.getElseRegion().empty();
  auto newIf = scf::IfOp::create(b, loc, types, *cond,
                                 /*withElseRegion=*/hasElse || !types.empty());
  for (int side = 0; side < 2; ++side) {
    Region &oldRegion =
        side == 0 ? branch.getThenRegion() : branch.getElseRegion();
    Block *newBlock = side == 0 ? newIf.thenBlock() : newIf.elseBlock();
    if (!newBlock)
      continue;
    OpBuilder::InsertionGuard guard(b);
    if (!newBlock->empty() &&
        newBlock->back().hasTrait<OpTrait::IsTerminator>())
      newBlock->back().erase();
    b.setInsertionPointToEnd(newBlock);
    SmallVector<Value> yielded;
    if (!oldRegion.empty()) {
      Block &oldBlock = oldRegion.front();
      for (Operation &op : oldBlock.without_terminator()) {
        loc = op.getLoc();
        if (failed(lowerOp(&op)))
          return failure();
      }
      auto yield = cast<scf::YieldOp>(oldBlock.getTerminator());
      for (auto [i, value] : llvm::enumerate(yield.getOperands())) {
        Type type = value.getType();
        if (isTile(type)) {
          if (failed(storeTile(value, resultBuffers[i])))
            return failure();
        } else if (isBlockPtr(type)) {
          llvm::append_range(yielded, blockPtrs.lookup(value).flatten());
        } else {
          FailureOr<Value> mapped = scalar(value);
          if (failed(mapped))
            return failure();
          yielded.push_back(*mapped);
        }
      }
    }
    scf::YieldOp::create(b, loc, yielded);
  }
  unsigned next = 0;
  for (auto [i, result] : llvm::enumerate(branch.getResults())) {
    Type type = result.getType();
    if (isTile(type)) {
      buffers[result] = resultBuffers[i];
    } else if (isBlockPtr(type)) {
      int64_t rank = blockRank(type);
      blockPtrs[result] = BlockPtrValue::unflatten(
          newIf.getResults().drop_front(next).take_front(1 + 3 * rank), rank);
      next += 1 + 3 * rank;
    } else {
      scalars.map(result, newIf.getResult(next++));
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// GPU programs: reductions, scans and dots spread over threads
//===----------------------------------------------------------------------===//

LogicalResult KernelLowering::lowerReduceOnThreads(tk::ReduceOp reduce) {
  auto srcType = cast<RankedTensorType>(reduce.getSrcs()[0].getType());
  int64_t axis = reduce.getAxis();
  int64_t size = srcType.getDimSize(axis);
  SmallVector<int64_t> resultShape(srcType.getShape());
  resultShape.erase(resultShape.begin() + axis);
  int64_t results = 1;
  for (int64_t extent : resultShape)
    results *= extent;
  unsigned numSrcs = reduce.getSrcs().size();
  Region &combiner = reduce.getCombineOp();
  SmallVector<Type> elemTypes;
  for (Value src : reduce.getSrcs())
    elemTypes.push_back(cast<RankedTensorType>(src.getType()).getElementType());

  auto elementsAt = [&](ArrayRef<Value> index) {
    return elements(reduce.getSrcs(), index);
  };
  for (Value src : reduce.getSrcs())
    if (const OwnedTile *owned = ownedRead(src))
      return owned->fragment ? lowerRowReduceOfHeld(reduce, *owned->fragment)
                             : lowerReduceOfOwned(reduce, *owned);
  // Shuffles move 32-bit values.
  bool words = llvm::all_of(elemTypes, [](Type type) {
    return type.isIntOrFloat() && type.getIntOrFloatBitWidth() == 32;
  });

  // Along the rows of a 2-D tile (FlashAttention's row max and sum): each
  // warp takes whole rows, its lanes neighbouring columns, and combines
  // them with shuffles. (A thread per row would read down a column of
  // workgroup memory, every lane of a warp in one bank.)
  if (srcType.getRank() == 2 && axis == 1 && size % kWarpSize == 0 &&
      numThreads % kWarpSize == 0 && words) {
    SmallVector<Value> out;
    for (Type type : elemTypes)
      out.push_back(allocBuffer(resultShape, type));
    Value lane =
        arith::RemUIOp::create(b, loc, threadId, constIndex(kWarpSize));
    {
      OpBuilder::InsertionGuard guard(b);
      auto rows = scf::ForOp::create(
          b, loc,
          arith::DivUIOp::create(b, loc, threadId, constIndex(kWarpSize)),
          constIndex(results), constIndex(numThreads / kWarpSize));
      b.setInsertionPointToStart(rows.getBody());
      Value row = rows.getInductionVar();
      auto saved = std::move(elementCache);
      elementCache.clear();
      auto first = elementsAt({row, lane});
      if (failed(first))
        return failure();
      SmallVector<Value> acc = *first;
      if (size > kWarpSize) {
        auto rest = accumulateStrided(
            combiner, acc,
            arith::AddIOp::create(b, loc, lane, constIndex(kWarpSize)), size,
            kWarpSize, [&](Value col) {
              return elementsAt({row, col});
            });
        if (failed(rest))
          return failure();
        acc = *rest;
      }
      auto total = combineLanes(combiner, acc);
      elementCache = std::move(saved);
      if (failed(total))
        return failure();
      auto leader = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                constIndex(0)),
          /*withElseRegion=*/false);
      b.setInsertionPoint(leader.thenBlock()->getTerminator());
      for (unsigned s = 0; s < numSrcs; ++s)
        storeBuffer((*total)[s], out[s], {row});
    }
    barrier();
    for (unsigned s = 0; s < numSrcs; ++s)
      buffers[reduce.getResult(s)] = out[s];
    return success();
  }

  // `parts` interleaved partial results per output (part p combines the
  // elements p, p + parts, ... of its line, so that neighbouring threads
  // read neighbouring elements), then a tree over the parts. Combiners are
  // associative and commutative (as on the CPU's partial lanes).
  int64_t parts = 1;
  while (parts * 2 <= size && parts * 2 * results <= numThreads)
    parts *= 2;
  // One output and a part per thread: each warp combines its parts with
  // butterfly shuffles (no memory, no barrier), and only one value per warp
  // goes through workgroup memory.
  bool shuffle = srcType.getRank() == 1 && parts == numThreads &&
                 numThreads % kWarpSize == 0 && words;
  // Phase 1 runs over (part, output); the buffer holds a value per part, or
  // per warp when warps combine their parts first.
  SmallVector<int64_t> partialShape{parts};
  llvm::append_range(partialShape, resultShape);
  SmallVector<int64_t> bufferShape(partialShape);
  if (shuffle)
    bufferShape[0] = numThreads / kWarpSize;
  SmallVector<Value> partial;
  for (Type type : elemTypes)
    partial.push_back(allocBuffer(bufferShape, type));

  auto sourceIndex = [&](ArrayRef<Value> resultIndex, Value k) {
    SmallVector<Value> index(resultIndex);
    index.insert(index.begin() + axis, k);
    return index;
  };
  auto partialIndex = [&](Value p, ArrayRef<Value> resultIndex) {
    SmallVector<Value> index{p};
    llvm::append_range(index, resultIndex);
    return index;
  };
  auto loadParts = [&](ArrayRef<Value> index) {
    SmallVector<Value> values;
    for (unsigned s = 0; s < numSrcs; ++s)
      values.push_back(loadBuffer(partial[s], index, elemTypes[s]));
    return values;
  };
  auto storeParts = [&](ValueRange values, ArrayRef<Value> index) {
    for (unsigned s = 0; s < numSrcs; ++s)
      storeBuffer(values[s], partial[s], index);
  };

  if (failed(forEachIndex(partialShape, [&](ArrayRef<Value> index) {
        Value p = index[0];
        ArrayRef<Value> resultIndex = index.drop_front();
        auto first = elementsAt(sourceIndex(resultIndex, p));
        if (failed(first))
          return failure();
        SmallVector<Value> acc = *first;
        if (size > parts) {
          auto rest = accumulateStrided(
              combiner, acc,
              arith::AddIOp::create(b, loc, p, constIndex(parts)), size, parts,
              [&](Value k) { return elementsAt(sourceIndex(resultIndex, k)); });
          if (failed(rest))
            return failure();
          acc = *rest;
        }
        if (!shuffle) {
          storeParts(acc, index);
          return success();
        }
        auto total = combineLanes(combiner, acc);
        if (failed(total))
          return failure();
        acc = *total;
        Value lane = arith::RemUIOp::create(b, loc, p, constIndex(kWarpSize));
        Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             lane, constIndex(0));
        auto branch = scf::IfOp::create(b, loc, leader, false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(branch.thenBlock()->getTerminator());
        SmallVector<Value> warpIndex{
            arith::DivUIOp::create(b, loc, p, constIndex(kWarpSize))};
        llvm::append_range(warpIndex, resultIndex);
        storeParts(acc, warpIndex);
        return success();
      })))
    return failure();
  if (shuffle) {
    auto acc = combineWarpValues(combiner, partial, insideLoop(reduce));
    if (failed(acc))
      return failure();
    for (unsigned s = 0; s < numSrcs; ++s)
      scalars.map(reduce.getResult(s), (*acc)[s]);
    return success();
  }
  for (int64_t half = parts / 2; half >= 1; half /= 2) {
    SmallVector<int64_t> shape{half};
    llvm::append_range(shape, resultShape);
    if (failed(forEachIndex(shape, [&](ArrayRef<Value> index) {
          Value other =
              arith::AddIOp::create(b, loc, index[0], constIndex(half));
          auto combined =
              combine(combiner, loadParts(index),
                      loadParts(partialIndex(other, index.drop_front())));
          if (failed(combined))
            return failure();
          storeParts(*combined, index);
          return success();
        })))
      return failure();
  }

  if (srcType.getRank() == 1) {
    // Scalar results: every thread reads part 0, then waits so that a later
    // reduction (in a loop) does not overwrite it under a slow reader.
    SmallVector<Value> values = loadParts({constIndex(0)});
    barrier();
    for (unsigned s = 0; s < numSrcs; ++s)
      scalars.map(reduce.getResult(s), values[s]);
    return success();
  }
  for (unsigned s = 0; s < numSrcs; ++s) {
    Value result = allocBuffer(resultShape, elemTypes[s]);
    if (failed(forEachIndex(resultShape, [&](ArrayRef<Value> index) {
          storeBuffer(loadBuffer(partial[s], partialIndex(constIndex(0), index),
                                 Type()),
                      result, index);
          return success();
        })))
      return failure();
    buffers[reduce.getResult(s)] = result;
  }
  return success();
}

FailureOr<SmallVector<Value>> KernelLowering::accumulateStrided(
    Region &combiner, SmallVector<Value> acc, Value start, int64_t end,
    int64_t step,
    function_ref<FailureOr<SmallVector<Value>>(Value)> elementsAt) {
  OpBuilder::InsertionGuard guard(b);
  auto steps =
      scf::ForOp::create(b, loc, start, constIndex(end), constIndex(step), acc);
  b.setInsertionPointToStart(steps.getBody());
  auto saved = std::move(elementCache);
  elementCache.clear();
  auto next = elementsAt(steps.getInductionVar());
  FailureOr<SmallVector<Value>> combined =
      succeeded(next) ? combine(combiner, steps.getRegionIterArgs(), *next)
                      : FailureOr<SmallVector<Value>>(failure());
  elementCache = std::move(saved);
  if (failed(combined))
    return failure();
  scf::YieldOp::create(b, loc, *combined);
  return SmallVector<Value>(steps.getResults());
}

FailureOr<SmallVector<Value>>
KernelLowering::combineLanes(Region &combiner, SmallVector<Value> acc,
                             int64_t laneMask) {
  for (int64_t offset = kWarpSize / 2; offset >= 1; offset /= 2) {
    if (!(laneMask & offset))
      continue;
    SmallVector<Value> other;
    for (Value value : acc)
      other.push_back(gpu::ShuffleOp::create(b, loc, value, offset, kWarpSize,
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult());
    auto combined = combine(combiner, acc, other);
    if (failed(combined))
      return failure();
    acc = *combined;
  }
  return acc;
}

FailureOr<SmallVector<Value>>
KernelLowering::combineWarpValues(Region &combiner, ArrayRef<Value> perWarp,
                                  bool again) {
  // Every thread combines the warps' values in order: a handful of reads
  // of workgroup memory instead of a tree of barriers.
  auto valuesOf = [&](int64_t warp) {
    SmallVector<Value> values;
    for (Value buffer : perWarp)
      values.push_back(loadBuffer(buffer, {constIndex(warp)}, Type()));
    return values;
  };
  SmallVector<Value> acc = valuesOf(0);
  for (int64_t w = 1; w < numThreads / kWarpSize; ++w) {
    auto combined = combine(combiner, acc, valuesOf(w));
    if (failed(combined))
      return failure();
    acc = *combined;
  }
  // The buffers may be written again (in a loop) only after everyone read.
  if (again)
    barrier();
  return acc;
}

LogicalResult KernelLowering::lowerReduceOfOwned(tk::ReduceOp reduce,
                                                 const OwnedTile &owned) {
  auto srcType = cast<RankedTensorType>(reduce.getSrcs()[0].getType());
  Region &combiner = reduce.getCombineOp();
  // Each thread's own elements, in registers, combined in order.
  SmallVector<Value> acc;
  {
    OwnerIteration owners(*this, &owned);
    if (failed(forEachIndex(
            srcType.getShape(),
            [&](ArrayRef<Value> index) -> LogicalResult {
              auto next = elements(reduce.getSrcs(), index);
              if (failed(next))
                return failure();
              if (acc.empty()) {
                acc = *next;
                return success();
              }
              auto combined = combine(combiner, acc, *next);
              if (failed(combined))
                return failure();
              acc = *combined;
              return success();
            },
            /*contiguous=*/true)))
      return failure();
  }
  auto warpTotal = combineLanes(combiner, acc);
  if (failed(warpTotal))
    return failure();
  // Lane 0 of each warp publishes the warp's value.
  SmallVector<Value> perWarp;
  for (Value src : reduce.getSrcs())
    perWarp.push_back(
        allocBuffer({numThreads / kWarpSize},
                    cast<RankedTensorType>(src.getType()).getElementType()));
  {
    Value lane =
        arith::RemUIOp::create(b, loc, threadId, constIndex(kWarpSize));
    auto leader = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                              constIndex(0)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(leader.thenBlock()->getTerminator());
    Value warp =
        arith::DivUIOp::create(b, loc, threadId, constIndex(kWarpSize));
    for (auto [value, buffer] : llvm::zip_equal(*warpTotal, perWarp))
      storeBuffer(value, buffer, {warp});
  }
  barrier();
  auto total = combineWarpValues(combiner, perWarp, insideLoop(reduce));
  if (failed(total))
    return failure();
  for (auto [result, value] : llvm::zip_equal(reduce.getResults(), *total))
    scalars.map(result, value);
  return success();
}

LogicalResult
KernelLowering::lowerRowReduceOfHeld(tk::ReduceOp reduce,
                                     const tk::MatrixUnit::HeldProduct &held) {
  std::optional<tk::MatrixUnit::RegisterRows> rows =
      matrixUnit->registerRows(held);
  if (!rows ||
      int64_t(rows->rowOfRegister.size()) * numThreads != held.m * held.n)
    return reduce.emitOpError("tk-convert-to-loops: the matrix unit does not "
                              "describe the rows of its registers");
  Region &combiner = reduce.getCombineOp();
  // Each row's registers combined in register order (the row's index is
  // its first register's).
  struct RowPart {
    Value row;
    SmallVector<Value> acc;
  };
  llvm::MapVector<int64_t, RowPart> parts;
  {
    OwnerIteration owners(*this, /*enabled=*/true, held);
    if (failed(forEachIndex(
            cast<RankedTensorType>(reduce.getSrcs()[0].getType()).getShape(),
            [&](ArrayRef<Value> index) -> LogicalResult {
              auto next = elements(reduce.getSrcs(), index);
              if (failed(next))
                return failure();
              RowPart &part = parts[rows->rowOfRegister[ownedSlot]];
              if (part.acc.empty()) {
                part = {index[0], *next};
                return success();
              }
              auto combined = combine(combiner, part.acc, *next);
              if (failed(combined))
                return failure();
              part.acc = *combined;
              return success();
            },
            /*contiguous=*/true)))
      return failure();
  }
  // The lanes that hold a row meet in butterflies over the bits of the
  // lane mask. A row-resident result stays in their registers (every lane
  // ends with the row's value); otherwise the lowest of them writes it.
  if (rowLayout.count(reduce.getResult(0))) {
    RowTile tile{rowOffsets(held), {}};
    tile.registers.resize(tile.offsets.size());
    for (auto &[offset, part] : parts) {
      auto acc = combineLanes(combiner, part.acc, rows->laneMask);
      const int64_t *at = llvm::find(tile.offsets, offset);
      if (failed(acc) || at == tile.offsets.end())
        return failure();
      tile.registers[at - tile.offsets.begin()] = acc->front();
    }
    rowTiles[reduce.getResult(0)] = std::move(tile);
    return success();
  }
  SmallVector<Value> out;
  for (Value result : reduce.getResults())
    out.push_back(allocBuffer(cast<RankedTensorType>(result.getType())));
  Value lane = arith::RemUIOp::create(b, loc, threadId, constIndex(kWarpSize));
  Value writer = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::AndIOp::create(b, loc, lane, constIndex(rows->laneMask)),
      constIndex(0));
  for (auto &[id, part] : parts) {
    auto acc = combineLanes(combiner, part.acc, rows->laneMask);
    if (failed(acc))
      return failure();
    auto branch = scf::IfOp::create(b, loc, writer, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    for (auto [value, buffer] : llvm::zip_equal(*acc, out))
      storeBuffer(value, buffer, {part.row});
  }
  barrier();
  for (auto [result, buffer] : llvm::zip_equal(reduce.getResults(), out))
    buffers[result] = buffer;
  return success();
}

LogicalResult KernelLowering::lowerScanOnThreads(tk::ScanOp scan) {
  // One thread per scanned line, serially along the axis.
  auto srcType = cast<RankedTensorType>(scan.getSrcs()[0].getType());
  int64_t axis = scan.getAxis();
  int64_t size = srcType.getDimSize(axis);
  bool reverse = scan.getReverse();
  SmallVector<int64_t> lines(srcType.getShape());
  lines.erase(lines.begin() + axis);
  unsigned numSrcs = scan.getSrcs().size();
  SmallVector<Value> out;
  for (Value result : scan.getResults())
    out.push_back(allocBuffer(cast<RankedTensorType>(result.getType())));
  auto at = [&](ArrayRef<Value> line, Value k) {
    SmallVector<Value> index(line);
    index.insert(index.begin() + axis, k);
    return index;
  };
  LogicalResult status = forEachIndex(lines, [&](ArrayRef<Value> line) {
    SmallVector<Value> acc;
    SmallVector<Value> first = at(line, constIndex(reverse ? size - 1 : 0));
    for (unsigned s = 0; s < numSrcs; ++s) {
      FailureOr<Value> elem = element(scan.getSrcs()[s], first);
      if (failed(elem))
        return failure();
      storeBuffer(*elem, out[s], first);
      acc.push_back(*elem);
    }
    if (size == 1)
      return success();
    OpBuilder::InsertionGuard guard(b);
    auto steps = scf::ForOp::create(b, loc, constIndex(1), constIndex(size),
                                    constIndex(1), acc);
    b.setInsertionPointToStart(steps.getBody());
    Value k = steps.getInductionVar();
    if (reverse)
      k = arith::SubIOp::create(b, loc, constIndex(size - 1), k);
    auto saved = std::move(elementCache);
    elementCache.clear();
    SmallVector<Value> index = at(line, k), next;
    for (Value src : scan.getSrcs()) {
      FailureOr<Value> elem = element(src, index);
      if (failed(elem))
        return failure();
      next.push_back(*elem);
    }
    auto combined =
        combine(scan.getCombineOp(), steps.getRegionIterArgs(), next);
    elementCache = std::move(saved);
    if (failed(combined))
      return failure();
    for (unsigned s = 0; s < numSrcs; ++s)
      storeBuffer((*combined)[s], out[s], index);
    scf::YieldOp::create(b, loc, *combined);
    return success();
  });
  if (failed(status))
    return failure();
  for (unsigned s = 0; s < numSrcs; ++s)
    buffers[scan.getResult(s)] = out[s];
  return success();
}

FailureOr<Value>
KernelLowering::heldOperand(tk::DotOp dot,
                            const tk::MatrixUnit::HeldProduct &product,
                            unsigned operand) {
  Value tile = operand == 0 ? dot.getA() : dot.getB();
  if (!matrixUnit->laysOutOperands(product))
    return getBuffer(tile);
  if (laidOutOperands.count(tile))
    return buffers.lookup(tile);
  if (Value hoisted = hoistedOperands.lookup(tile))
    return hoisted;
  // Written into the unit's layout here (a tile stored row-major for other
  // users is copied), or once before the loop for a tile the loop does not
  // compute (FlashAttention's q).
  OpBuilder::InsertionGuard guard(b);
  bool invariant = loweredLoop && sourceLoop.isDefinedOutsideOfLoop(tile);
  // Elements computed inside the loop do not dominate code before it.
  std::optional<decltype(elementCache)> loopCache;
  if (invariant) {
    b.setInsertionPoint(loweredLoop);
    loopCache = std::move(elementCache);
    elementCache.clear();
  }
  auto type = cast<RankedTensorType>(tile.getType());
  Value buffer = allocBuffer({type.getNumElements()}, type.getElementType(),
                             matrixUnit->operandAlignment(product));
  // A transposed tile that is not stored (attention's k^T) is copied in its
  // source's order, so that the reads run along the source's rows (vectors
  // of a masked load versioned on its mask) rather than down its columns.
  Value source = tile;
  bool transposed = false;
  if (auto trans = tile.getDefiningOp<tk::TransOp>();
      trans && !buffers.count(tile) && !ownedRead(tile) &&
      !materialized.count(trans)) {
    source = trans.getSrc();
    transposed = true;
  }
  if (failed(storeTile(source, buffer, [&](ArrayRef<Value> index) {
        return transposed ? matrixUnit->operandOffset(b, loc, product, operand,
                                                      index[1], index[0])
                          : matrixUnit->operandOffset(b, loc, product, operand,
                                                      index[0], index[1]);
      })))
    return failure();
  if (invariant) {
    // Written once: published to the unit's reads here, not per product.
    matrixUnit->publishOperands(b, loc);
    elementCache = std::move(*loopCache);
    hoistedOperands[tile] = buffer;
  }
  return buffer;
}

LogicalResult
KernelLowering::lowerHeldDot(tk::DotOp dot,
                             const tk::MatrixUnit::HeldProduct &held) {
  if (isa<Float8E4M3FNType, Float8E5M2Type>(held.a))
    return dot.emitOpError("tk-convert-to-loops: fp8 dot is not supported on "
                           "this target yet");
  // A computed from a product the unit holds, in its register layout
  // (FlashAttention's probabilities), goes to the unit in registers.
  const OwnedTile *ownedA = ownedRead(dot.getA());
  std::optional<tk::MatrixUnit::HeldProduct> registerA;
  if (ownedA && ownedA->fragment &&
      matrixUnit->takesRegisterA(held, *ownedA->fragment))
    registerA = ownedA->fragment;
  SmallVector<Value> aElements;
  if (registerA) {
    OwnerIteration owners(*this, ownedA);
    auto aType = cast<RankedTensorType>(dot.getA().getType());
    if (failed(forEachIndex(
            aType.getShape(),
            [&](ArrayRef<Value> index) -> LogicalResult {
              FailureOr<Value> elem = element(dot.getA(), index);
              if (failed(elem))
                return failure();
              aElements.push_back(*elem);
              return success();
            },
            /*contiguous=*/true)))
      return failure();
  }
  FailureOr<Value> aBuf =
      registerA ? FailureOr<Value>(Value()) : heldOperand(dot, held, 0);
  FailureOr<Value> bBuf = heldOperand(dot, held, 1);
  if (failed(aBuf) || failed(bBuf))
    return failure();
  Value rescaled = rescaledHeldAccumulator(dot.getAcc());
  tk::MatrixUnit::HeldProduct product = held;
  // Prefetched operands were published by their wait, operands laid out
  // before the loop there.
  auto published = [&](Value operand) {
    return laidOutOperands.count(operand) || hoistedOperands.count(operand);
  };
  product.operandsPublished =
      (registerA || published(dot.getA())) && published(dot.getB());
  // In a pipelined loop the next write of these operands' slots comes after
  // the barrier below and a wait of the unit, so the product may still run
  // when the unit returns (finish waits for it after the loop).
  product.mayStayInFlight =
      product.operandsPublished && heldAccumulators.count(dot.getAcc());
  // A product whose result stays in registers (the scores) or rescales an
  // accumulator (p v) may run on past the unit's return in the body of a
  // loop whose copies go out at the top: its operands' slots are written
  // again only after the next trip's barrier, and the trip settles its
  // running products before it ends.
  product.deferWait = b.getInsertionBlock() == ringsWrittenAtTopBody &&
                      product.operandsPublished && !product.mayStayInFlight &&
                      (rescaled || residentLayout.count(dot)) &&
                      matrixUnit->defersWaits(held);
  // A product issued before this one and not read yet runs on only when
  // this one may run too; its accumulator must be done.
  if (!product.deferWait)
    settleProducts();
  settleProducts(dot.getAcc());
  if (rescaled)
    settleProducts(rescaled);
  // In a loop that carries the accumulator, the registers are updated in
  // place; otherwise they start from the accumulator tile and end in a
  // buffer.
  auto carried = heldAccumulators.find(dot.getAcc());
  SmallVector<Value> registers;
  if (carried != heldAccumulators.end()) {
    registers = carried->second;
  } else if (rescaled) {
    // Each register through the element-wise ops at its own position (the
    // positions differ, so cached elements never mix registers; what was
    // cached with a register in place is dropped afterwards).
    SmallVector<Value> old = heldAccumulators.lookup(rescaled);
    auto savedCache = elementCache;
    std::optional<tk::MatrixUnit::RegisterRows> rows =
        matrixUnit->registerRows(held);
    for (auto [i, position] :
         llvm::enumerate(matrixUnit->registerPositions(b, loc, held))) {
      RowVisit visit(*this, rows, i, position.first);
      heldElementOverride[rescaled] = old[i];
      FailureOr<Value> value =
          element(dot.getAcc(), {position.first, position.second});
      if (failed(value))
        return failure();
      registers.push_back(*value);
    }
    heldElementOverride.erase(rescaled);
    elementCache = std::move(savedCache);
  } else {
    FailureOr<SmallVector<Value>> init =
        initHeldAccumulator(held, dot.getAcc());
    if (failed(init))
      return failure();
    registers = std::move(*init);
  }
  // (A rescaled accumulator is read by ordinary instructions at the start
  // of the next trip: its product is done when the trip ends.)
  FailureOr<SmallVector<Value>> next =
      registerA
          ? matrixUnit->accumulateRegisterA(b, loc, product, *registerA,
                                            aElements, *bBuf, registers)
          : matrixUnit->accumulate(b, loc, product, *aBuf, *bBuf, registers);
  if (failed(next))
    return failure();
  // The operands' buffers may be written next (the next trip's tiles),
  // unless they are prefetch slots (or laid out before the loop) that are
  // only written after the next trip's barrier.
  if (!(ringsWrittenAtTop && product.operandsPublished))
    barrier();
  if (product.deferWait)
    runningProducts.push_back({dot.getResult(), product});
  if (carried != heldAccumulators.end() || rescaled) {
    heldAccumulators[dot.getResult()] = std::move(*next);
    return success();
  }
  if (residentLayout.count(dot)) {
    ownedTiles[dot.getResult()] = {std::move(*next), product};
    return success();
  }
  Value wide = allocBuffer({held.m, held.n}, held.accumulator);
  if (failed(storeHeld(held, *next, wide)))
    return failure();
  barrier();
  return narrowAccumulator(dot.getResult(), wide);
}

LogicalResult KernelLowering::lowerDotOnThreads(tk::DotOp dot) {
  if (std::optional<tk::MatrixUnit::HeldProduct> held = heldProduct(dot))
    return lowerHeldDot(dot, *held);
  FailureOr<DotPlan> plan = planDot(dot, "this target");
  if (failed(plan))
    return failure();
  int64_t m = plan->m, n = plan->n, k = plan->k;
  Type accElem = plan->accElem, computeElem = plan->computeElem;
  bool isFloat = plan->isFloat;
  Value aBuf = plan->a, bBuf = plan->b;
  auto widen = [&](Value v) { return widenForDot(*plan, v); };
  auto aType = cast<RankedTensorType>(dot.getA().getType());
  auto bType = cast<RankedTensorType>(dot.getB().getType());
  auto cType = cast<RankedTensorType>(dot.getType());
  auto narrow = [&](Value v) -> Value {
    if (computeElem == accElem)
      return v;
    return arith::TruncFOp::create(b, loc, accElem, v);
  };

  if (matrixUnit &&
      matrixUnit->supports(aType.getElementType(), bType.getElementType(),
                           computeElem, m, n, k)) {
    Value wide = allocBuffer({m, n}, computeElem);
    LogicalResult status = success();
    auto accumulator = [&](OpBuilder &, Location, Value row,
                           Value col) -> Value {
      FailureOr<Value> c = element(dot.getAcc(), {row, col});
      if (failed(c)) {
        status = failure();
        return zeroOf(computeElem);
      }
      return widen(*c);
    };
    tk::MatrixUnit::Product product{aBuf,        bBuf,     wide,
                                    accumulator, threadId, numThreads};
    auto saved = std::move(elementCache);
    elementCache.clear();
    ++parallelDepth;
    if (failed(matrixUnit->emit(b, loc, product)))
      status = failure();
    --parallelDepth;
    elementCache = std::move(saved);
    if (failed(status))
      return failure();
    barrier();
    return narrowAccumulator(dot.getResult(), wide);
  }

  // One thread per output element, the k loop in registers.
  Value result = allocBuffer(cType);
  if (failed(forEachIndex({m, n}, [&](ArrayRef<Value> index) {
        FailureOr<Value> c = element(dot.getAcc(), index);
        if (failed(c))
          return failure();
        OpBuilder::InsertionGuard guard(b);
        auto steps = scf::ForOp::create(b, loc, constIndex(0), constIndex(k),
                                        constIndex(1), ValueRange{widen(*c)});
        b.setInsertionPointToStart(steps.getBody());
        Value kk = steps.getInductionVar();
        Value aik = widen(
            memref::LoadOp::create(b, loc, aBuf, ValueRange{index[0], kk}));
        Value bkj = widen(
            memref::LoadOp::create(b, loc, bBuf, ValueRange{kk, index[1]}));
        Value acc = steps.getRegionIterArgs()[0];
        Value sum =
            isFloat
                ? Value(math::FmaOp::create(b, loc, aik, bkj, acc))
                : Value(arith::AddIOp::create(
                      b, loc, acc, arith::MulIOp::create(b, loc, aik, bkj)));
        scf::YieldOp::create(b, loc, sum);
        b.setInsertionPointAfter(steps);
        storeBuffer(narrow(steps.getResult(0)), result, index);
        return success();
      })))
    return failure();
  buffers[dot.getResult()] = result;
  return success();
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

struct ConvertTkToLoops
    : public tk::impl::TkConvertToLoopsBase<ConvertTkToLoops> {
  using TkConvertToLoopsBase::TkConvertToLoopsBase;
  ConvertTkToLoops(const tk::TkConvertToLoopsOptions &options,
                   std::shared_ptr<const tk::MatrixUnit> matrixUnit,
                   std::shared_ptr<const tk::AsyncCopyUnit> asyncCopy)
      : TkConvertToLoopsBase(options), matrixUnit(std::move(matrixUnit)),
        asyncCopy(std::move(asyncCopy)) {}

  std::shared_ptr<const tk::MatrixUnit> matrixUnit;
  std::shared_ptr<const tk::AsyncCopyUnit> asyncCopy;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<tk::FuncOp> kernels(module.getOps<tk::FuncOp>());
    for (tk::FuncOp kernel : kernels) {
      MLIRContext *ctx = &getContext();
      auto ptr = LLVM::LLVMPointerType::get(ctx);
      SmallVector<Type> inputs;
      for (Type type : kernel.getArgumentTypes())
        inputs.push_back(isa<tk::PtrType>(type) ? Type(ptr) : type);
      // A GPU program reads its grid position from the hardware.
      if (threadsPerProgram == 0)
        inputs.append(tk::kNumGridArgs, IntegerType::get(ctx, 32));
      OpBuilder builder(kernel);
      auto func =
          func::FuncOp::create(builder, kernel.getLoc(), kernel.getSymName(),
                               builder.getFunctionType(inputs, {}));
      func->setAttr(tk::kLoweredKernelAttrName, builder.getUnitAttr());
      // A pointer's divisibility is its alignment: LLVM may then merge
      // neighbouring accesses into vector ones.
      for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
        if (auto divisibility =
                kernel.getArgAttrOfType<IntegerAttr>(i, "tk.divisibility"))
          if (isa<tk::PtrType>(kernel.getArgumentTypes()[i]))
            func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                            builder.getI64IntegerAttr(divisibility.getInt()));
      if (threadsPerProgram < 0) {
        kernel.emitError("tk-convert-to-loops: threads-per-program must be "
                         "0 (CPU) or positive, not ")
            << threadsPerProgram;
        return signalPassFailure();
      }
      KernelLowering lowering(kernel, func, fuseLoadsIntoStores,
                              threadsPerProgram, matrixUnit.get(),
                              asyncCopy.get(), std::max<int64_t>(1, numStages));
      if (failed(lowering.run())) {
        func.erase();
        return signalPassFailure();
      }
      kernel.erase();
    }
  }
};

} // namespace

std::unique_ptr<Pass>
tk::createConvertToLoopsPass(const TkConvertToLoopsOptions &options,
                             std::shared_ptr<const MatrixUnit> matrixUnit,
                             std::shared_ptr<const AsyncCopyUnit> asyncCopy) {
  return std::make_unique<ConvertTkToLoops>(options, std::move(matrixUnit),
                                            std::move(asyncCopy));
}

//===----------------------------------------------------------------------===//
// MatrixUnit defaults: a unit that holds nothing is never asked to.
//===----------------------------------------------------------------------===//

SmallVector<std::pair<Value, Value>>
tk::MatrixUnit::registerPositions(OpBuilder &, Location,
                                  const HeldProduct &) const {
  return {};
}

FailureOr<SmallVector<Value>>
tk::MatrixUnit::accumulate(OpBuilder &, Location loc, const HeldProduct &,
                           Value, Value, ValueRange) const {
  return emitError(loc, "tk-convert-to-loops: this matrix unit holds no "
                        "accumulators in registers");
}
