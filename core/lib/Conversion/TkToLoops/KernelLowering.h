//===- KernelLowering.h - one kernel to loop nests --------------*- C++ -*-===//
//
// What the CPU and GPU lowerings of one tk.func share (TkToLoops.cpp
// describes the approach): the walk over its ops, the element-wise chains
// recomputed in their consumers' nests, buffers, stores and loop-carried
// values, following the thread layouts of its tiles (TilePlacement.h). Each
// form is a class of its own: HostKernelLowering (tk-convert-to-loops:
// serial loop nests) and SIMTKernelLowering (tk-convert-to-simt: the code of
// one GPU thread, with tiles in registers and operand rings); this class
// names what they do differently, as pure virtual methods. Implemented in
// Ops.cpp, Elements.cpp, Storage.cpp and Loops.cpp. Private to this folder.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_TKTOLOOPS_KERNELLOWERING_H_
#define TK_CORE_CONVERSION_TKTOLOOPS_KERNELLOWERING_H_

#include "TilePlacement.h"
#include "tk/core/Analysis/AxisFacts.h"
#include "tk/core/Conversion/Atomics.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/WarpDialect.h"
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

namespace mlir::tk_to_loops {

//===----------------------------------------------------------------------===//
// Classification of tk ops
//===----------------------------------------------------------------------===//

/// Partial accumulators of a reduction along the innermost axis: one
/// AVX-512 register of f32. Lanes combine independently, then as a tree.
constexpr int64_t kReductionLanes = 16;

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

inline int64_t blockRank(Type type) {
  return cast<RankedTensorType>(cast<tk::PtrType>(type).getPointeeType())
      .getRank();
}

/// The most async copies of a trip a thread issues as straight-line code.
constexpr int64_t kMaxUnrolledRuns = 16;

//===----------------------------------------------------------------------===//
// KernelLowering
//===----------------------------------------------------------------------===//

/// A tile kept in registers: this thread's elements, and how elements fall
/// on threads (runs of the flat tile, or a held product's accumulator).
struct OwnedTile {
  SmallVector<Value> registers;
  std::optional<tk::MatrixUnit::HeldProduct> fragment;
  /// Without a fragment: the run width of the #tkw.runs layout.
  int64_t run = 0;
};

/// Lowers one tk.func into an empty func.func, following the thread layouts
/// of its tiles (TilePlacement). Holds the value maps of the walk: scalars
/// (IRMapping), tiles kept in buffers, pointer walks, block pointers.
class KernelLowering : public TilePlacement {
public:
  virtual ~KernelLowering() = default;

  LogicalResult run();

protected:
  KernelLowering(tk::FuncOp source, func::FuncOp target, const Config &config)
      : TilePlacement(source, config), target(target), b(target.getContext()),
        ptrType(LLVM::LLVMPointerType::get(target.getContext(),
                                           config.globalAddressSpace)) {}

  //===--------------------------------------------------------------------===//
  // What the two forms do differently
  //===--------------------------------------------------------------------===//

  /// Binds `grid` (program ids, then program counts) at the entry, after the
  /// kernel's `numArgs` arguments.
  virtual void bindGridPosition(unsigned numArgs) = 0;
  virtual LogicalResult lowerReduce(tk::ReduceOp op) = 0;
  virtual LogicalResult lowerScan(tk::ScanOp op) = 0;
  virtual LogicalResult lowerDot(tk::DotOp op) = 0;
  /// A tkw.convert_layout (placed by tk-assign-thread-layouts).
  virtual LogicalResult
  lowerConvertLayout(tk::warp::ConvertLayoutOp convert) = 0;
  /// How the tile of a store or an atomic is spread over the threads (its
  /// thread layout), or nullopt where one thread visits all of it.
  virtual FailureOr<std::optional<StoreLayout>>
  threadLayoutOfAccess(Operation *access) = 0;
  /// Whether a store whose mask is no bounds range is versioned on all of
  /// the mask being on, found by walking the whole mask first.
  virtual bool walksMasksToVersion() const = 0;
  /// A buffer for a tile that every thread of the program sees, aligned to
  /// `alignment` bytes.
  virtual Value newBuffer(ArrayRef<int64_t> shape, Type elementType,
                          int64_t alignment) = 0;
  /// The nest of forEachIndex (which documents the arguments).
  virtual LogicalResult
  visitIndices(ArrayRef<int64_t> shape,
               function_ref<LogicalResult(ArrayRef<Value>)> body,
               bool contiguous, function_ref<void()> afterRun, int64_t maxRun,
               bool publish) = 0;
  /// Copies every element of buffer `from` into buffer `to`, the threads
  /// taking runs of up to `maxRun` elements; `publish`: the copy is seen by
  /// every thread once it returns.
  virtual LogicalResult copyBuffer(Value from, Value to,
                                   ArrayRef<int64_t> shape, Type elementType,
                                   int64_t maxRun, bool publish) = 0;
  /// Runs `body` on one thread of the program; nests inside are serial. The
  /// caller adds the barrier that publishes its writes.
  virtual LogicalResult onFirstThread(function_ref<LogicalResult()> body) = 0;
  /// The scalar `compute` returns, computed once per program and read by
  /// every thread.
  virtual FailureOr<Value> once(Type type,
                                function_ref<FailureOr<Value>()> compute) = 0;
  /// Waits until every thread of the program got here.
  virtual void barrier() = 0;
  /// printf(format, args...).
  virtual void emitPrintf(StringRef format, ValueRange args) = 0;

  /// Pointer tiles a loop advances by a scalar each trip (`p = addptr(p,
  /// splat(step))` at the yield, the K walk of a matmul): `start`, a tile
  /// with no buffer changing under the loop, plus `offset` elements (i64),
  /// so the loop carries one scalar instead of a tile.
  struct PointerWalk {
    Value start, offset;
  };

  /// How lowerFor carries an iteration argument: as SSA values (a scalar,
  /// a block pointer's components, a pointer walk's offset, a held
  /// accumulator's or a row tile's registers) or in a buffer (a tile).
  enum class Carried { Scalar, BlockPtr, Tile, Walk, Held, Rows };
  /// One scf.for as lowerFor carries it.
  struct LoopCarry {
    scf::ForOp source;
    SmallVector<Carried> kinds;
    /// The scalar step of each pointer walk (Carried::Walk).
    SmallVector<Value> walkSteps;
    /// The dot whose accumulator each held argument is (Carried::Held).
    SmallVector<tk::DotOp> heldDots;
    /// Iteration argument i is the numValues[i] lowered values from
    /// firstValue[i] on.
    SmallVector<unsigned> firstValue, numValues;
    /// The lowered bounds and step.
    Value lb, ub, step;
  };
  /// The step of walk `i` of `loop` in elements, as the i64 its offset
  /// counts in.
  FailureOr<Value> walkStepOf(const LoopCarry &loop, unsigned i);

  /// Software pipelining of one loop's operand loads over num_stages
  /// (#tkw.ring), driven by lowerFor.
  class OperandPipeline {
  public:
    virtual ~OperandPipeline() = default;
    /// Before the loop, whose initial lowered values are `inits`.
    virtual LogicalResult issuePrologue(ValueRange inits) = 0;
    /// At the top of a trip of the lowered loop, before the body.
    virtual LogicalResult beginTrip(scf::ForOp lowered) = 0;
    /// After the trip's body, before the yield.
    virtual LogicalResult endTrip(scf::ForOp lowered) = 0;
    /// Whether the loop runs behind a check that it runs at all, and
    /// finishes the products it carries inside it (finishProducts): the path
    /// that skips the loop then joins only after the products are done.
    virtual bool finishesInside() const = 0;
    /// Finishes the products whose registers are among the loop's lowered
    /// results `values`, in place.
    virtual void finishProducts(MutableArrayRef<Value> values) = 0;
    /// After the loop, its held products finished.
    virtual void finish() = 0;
  };
  /// The pipeline of `loop`'s operand loads, or null where none is
  /// pipelined.
  virtual FailureOr<std::unique_ptr<OperandPipeline>>
  pipelineOperands(const LoopCarry &loop) = 0;

  // --- tiles in registers (the GPU form keeps them: SIMTKernelLowering) --
  /// A register-resident tile evaluating `value` reads, or null.
  virtual const OwnedTile *ownedRead(Value value) = 0;
  /// Waits for the running product `result` (null: for all) and the ones
  /// issued before it, and rebinds their registers to the values after the
  /// wait; the products issued after it run on. Nothing for a product that
  /// is not running.
  virtual void settleProducts(Value result = {}) = 0;
  /// The register holding element `index` of `value` in this thread, or
  /// null where `value` is not in registers; fails where this thread does
  /// not hold that element.
  virtual FailureOr<Value> elementInRegisters(Value value,
                                              ArrayRef<Value> index) = 0;
  /// Whether `value` is a held product's result, readable only from its
  /// registers.
  virtual bool isHeldResult(Value value) const = 0;
  /// Computes the register-resident tile `value` into its owners'
  /// registers.
  virtual LogicalResult keepInRegisters(Value value) = 0;
  /// Computes the row-resident tile `value` into the registers of its rows.
  virtual LogicalResult keepInRows(Value value) = 0;
  /// Runs `body` (nests over a tile computed from `owned`) with its
  /// contiguous nests visiting what each thread owns; just `body` where
  /// `owned` is null.
  virtual LogicalResult visitAsOwners(const OwnedTile *owned,
                                      function_ref<LogicalResult()> body) = 0;
  /// Stores `store`'s value from the registers of the held accumulator it
  /// is computed from, by `storeOne` at each register's position and
  /// `emitPending` after each; false where it is computed from none.
  virtual FailureOr<bool>
  storeFromHeldRegisters(tk::StoreOp store,
                         const std::optional<StoreLayout> &layout,
                         function_ref<LogicalResult(ArrayRef<Value>)> storeOne,
                         function_ref<void()> emitPending) = 0;
  /// The registers iteration argument `i` of `loop` is carried in from
  /// `init` (setting its kind, Held or Rows), or nullopt where it is not.
  virtual FailureOr<std::optional<SmallVector<Value>>>
  carryInRegisters(LoopCarry &loop, unsigned i, Value init) = 0;
  /// Binds `value`, iteration argument `i` of `loop` or its result, to the
  /// registers it is carried in.
  virtual LogicalResult bindCarriedRegisters(const LoopCarry &loop, unsigned i,
                                             Value value, ValueRange registers,
                                             bool isResult) = 0;
  /// The registers the yield of `value` carries as iteration argument `i`.
  virtual FailureOr<SmallVector<Value>>
  yieldCarriedRegisters(const LoopCarry &loop, unsigned i, Value value) = 0;

  // --- ops ---------------------------------------------------------------
  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerScalarOp(Operation *op);
  LogicalResult lowerFor(scf::ForOp op);
  LogicalResult lowerIf(scf::IfOp op);
  LogicalResult lowerStore(tk::StoreOp op);
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
  /// `v` (an operand or accumulator element) in the plan's compute type.
  Value widenForDot(const DotPlan &plan, Value v);
  LogicalResult lowerAtomicRMW(tk::AtomicRMWOp op);
  LogicalResult lowerAtomicCAS(tk::AtomicCASOp op);
  LogicalResult lowerPrint(tk::PrintOp op);
  /// The line `op` prints, with every element of its tiles.
  LogicalResult printLine(tk::PrintOp op);
  LogicalResult lowerAssert(tk::AssertOp op);

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
  /// A value a combiner's op uses: its mapped block argument or result, or
  /// the kernel's scalar for a value defined outside the combiner.
  FailureOr<Value> combinerValue(const IRMapping &mapping, Value value);
  /// `region`'s combiner applied to (accumulated..., next...).
  FailureOr<SmallVector<Value>> combine(Region &region, ValueRange acc,
                                        ValueRange next);

  // --- storage -----------------------------------------------------------
  /// A buffer of the tile's shape that every thread sees (newBuffer).
  Value allocBuffer(ArrayRef<int64_t> shape, Type elementType,
                    int64_t alignment = 16) {
    return newBuffer(shape, elementType, alignment);
  }
  Value allocBuffer(RankedTensorType type) {
    return allocBuffer(type.getShape(), type.getElementType());
  }
  /// Writes every element of `value` into `buffer`, at its index, or at
  /// `offsetOf(index)` in a 1-D buffer.
  /// Threads not reading registers write runs of up to `maxRun` elements
  /// (0: runOf the element type).
  using IndexOffsetFn = function_ref<Value(ArrayRef<Value> index)>;
  LogicalResult storeTile(Value value, Value buffer,
                          IndexOffsetFn offsetOf = nullptr, int64_t maxRun = 0);
  /// The buffer holding `value`, materialising it here if it is lazy.
  FailureOr<Value> getBuffer(Value value);
  Value loadBuffer(Value buffer, ArrayRef<Value> index, Type elementType);
  void storeBuffer(Value element, Value buffer, ArrayRef<Value> index);
  /// loadBuffer and storeBuffer of one value per buffer (the sources of a
  /// reduction or scan), at the same index.
  SmallVector<Value> loadBuffers(ArrayRef<Value> buffers, ArrayRef<Value> index,
                                 TypeRange elementTypes);
  void storeBuffers(ValueRange values, ArrayRef<Value> buffers,
                    ArrayRef<Value> index);
  /// Combines the values `buffers` hold at `from` with `next` and stores
  /// the result at `to` (a reduction's accumulators, a scan's running
  /// values).
  LogicalResult combineInto(Region &combiner, ArrayRef<Value> buffers,
                            TypeRange elementTypes, ArrayRef<Value> from,
                            ValueRange next, ArrayRef<Value> to);
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
                             int64_t maxRun = 4, bool publish = true) {
    return visitIndices(shape, body, contiguous, afterRun, maxRun, publish);
  }
  /// The results of an atomic (tk.atomic_rmw or tk.atomic_cas), `one`
  /// emitting it at an index: a scalar atomic once per program, a tile's
  /// elements each by the thread whose runs its thread layout records, the
  /// old values into a buffer.
  LogicalResult
  lowerAtomicElements(Operation *atomic, Type valueType,
                      function_ref<FailureOr<Value>(ArrayRef<Value>)> one);
  /// `body` at the index of the tile `shape` (of `total` elements) whose
  /// row-major position is `linear`.
  LogicalResult forOneIndex(ArrayRef<int64_t> shape, int64_t total,
                            Value linear,
                            function_ref<LogicalResult(ArrayRef<Value>)> body);
  /// The serial loop nest of forEachIndex; `afterRun` (if any) after the
  /// body, at every index.
  LogicalResult
  forEachIndexSerial(ArrayRef<int64_t> shape,
                     function_ref<LogicalResult(ArrayRef<Value>)> body,
                     function_ref<void()> afterRun = nullptr);

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

  func::FuncOp target;
  OpBuilder b;
  Location loc = UnknownLoc::get(source.getContext());
  LLVM::LLVMPointerType ptrType;
  /// Workgroup-memory globals made so far (their names' suffixes).
  int numSharedBuffers = 0;
  Block *entryBlock = nullptr;

  IRMapping scalars;
  DenseMap<Value, Value> buffers;
  DenseMap<Value, PointerWalk> pointerWalks;
  /// The loop whose body is being lowered (source and lowered op, the
  /// outermost op the lowering made for it).
  scf::ForOp sourceLoop;
  Operation *loweredLoop = nullptr;
  DenseMap<Value, BlockPtrValue> blockPtrs;
  Value grid[tk::kNumGridArgs];

  /// Elements already computed in the current loop body, by value and index;
  /// cleared on entering a loop body or a conditional region so that every
  /// reuse is dominated by its definition.
  std::map<std::pair<void *, SmallVector<void *, 4>>, Value> elementCache;
};

/// Makes the lowering of `source` into the empty `target`.
using KernelLoweringFactory = function_ref<std::unique_ptr<KernelLowering>(
    tk::FuncOp source, func::FuncOp target)>;

/// Replaces every tk.func of `module` by its lowered func.func (what both
/// passes run), made by the lowering `make` gives, following the thread
/// layouts tk-assign-thread-layouts recorded, or deciding them first where a
/// kernel carries none.
LogicalResult convertKernels(ModuleOp module,
                             const TilePlacement::Config &config,
                             KernelLoweringFactory make);

} // namespace mlir::tk_to_loops

#endif // TK_CORE_CONVERSION_TKTOLOOPS_KERNELLOWERING_H_
