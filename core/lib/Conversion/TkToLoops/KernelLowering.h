//===- KernelLowering.h - one kernel to loop nests --------------*- C++ -*-===//
//
// The lowering of one tk.func by tk-convert-to-loops (TkToLoops.cpp
// describes the approach): the walk over its ops, the element-wise chains
// recomputed in their consumers' nests, stack buffers for the tiles
// TileBuffers keeps, stores and loop-carried values, and the serial nests
// of reductions, scans and dots that one host thread runs. Implemented in
// Ops.cpp, Elements.cpp, Storage.cpp, Loops.cpp, HostNests.cpp and
// TkToLoops.cpp. Private to this folder.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_TKTOLOOPS_KERNELLOWERING_H_
#define TK_CORE_CONVERSION_TKTOLOOPS_KERNELLOWERING_H_

#include "TileBuffers.h"
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

//===----------------------------------------------------------------------===//
// KernelLowering
//===----------------------------------------------------------------------===//

/// Lowers one tk.func into an empty func.func. Holds the value maps of the
/// walk: scalars (IRMapping), tiles kept in buffers, pointer walks, block
/// pointers.
class KernelLowering : public TileBuffers {
public:
  KernelLowering(tk::FuncOp source, func::FuncOp target, const Config &config)
      : TileBuffers(source, config), target(target), b(target.getContext()),
        ptrType(LLVM::LLVMPointerType::get(target.getContext())) {}

  LogicalResult run();

private:
  /// Binds `grid` (program ids, then program counts) from the six
  /// arguments the launcher appends after the kernel's `numArgs`.
  void bindGridPosition(unsigned numArgs);
  /// Partial accumulators along the innermost axis (kReductionLanes), then
  /// a tree (HostNests.cpp, as are scans and dots).
  LogicalResult lowerReduce(tk::ReduceOp op);
  LogicalResult lowerScan(tk::ScanOp op);
  LogicalResult lowerDot(tk::DotOp op);
  /// A call to the C library's printf.
  void emitPrintf(StringRef format, ValueRange args);

  /// Pointer tiles a loop advances by a scalar each trip (`p = addptr(p,
  /// splat(step))` at the yield, the K walk of a matmul): `start`, a tile
  /// with no buffer changing under the loop, plus `offset` elements (i64),
  /// so the loop carries one scalar instead of a tile.
  struct PointerWalk {
    Value start, offset;
  };

  /// How lowerFor carries an iteration argument: as SSA values (a scalar,
  /// a block pointer's components, a pointer walk's offset) or in a buffer
  /// (a tile).
  enum class Carried { Scalar, BlockPtr, Tile, Walk };
  /// One scf.for as lowerFor carries it.
  struct LoopCarry {
    scf::ForOp source;
    SmallVector<Carried> kinds;
    /// The scalar step of each pointer walk (Carried::Walk).
    SmallVector<Value> walkSteps;
    /// Iteration argument i is the numValues[i] lowered values from
    /// firstValue[i] on.
    SmallVector<unsigned> firstValue, numValues;
    /// The lowered bounds and step.
    Value lb, ub, step;
  };
  /// The step of walk `i` of `loop` in elements, as the i64 its offset
  /// counts in.
  FailureOr<Value> walkStepOf(const LoopCarry &loop, unsigned i);

  // --- ops ---------------------------------------------------------------
  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerScalarOp(Operation *op);
  LogicalResult lowerFor(scf::ForOp op);
  LogicalResult lowerIf(scf::IfOp op);
  LogicalResult lowerStore(tk::StoreOp op);
  /// What the dot lowering starts from.
  struct DotPlan {
    int64_t m, n, k;
    /// The result's element type, and the one products accumulate in (f32
    /// for f16/bf16: a narrow accumulator is rounded once, at the end).
    Type accElem, computeElem;
    bool isFloat;
    /// The operands, stored.
    Value a, b;
  };
  /// Shapes, types and stored operands of `dot` (narrow floats, fp8
  /// included, are widened to f32: their products are exact there).
  FailureOr<DotPlan> planDot(tk::DotOp dot);
  /// `v` (an operand or accumulator element) in the plan's compute type.
  Value widenForDot(const DotPlan &plan, Value v);
  LogicalResult lowerAtomicRMW(tk::AtomicRMWOp op);
  LogicalResult lowerAtomicCAS(tk::AtomicCASOp op);
  /// The line `op` prints, with every element of its tiles.
  LogicalResult lowerPrint(tk::PrintOp op);
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
  /// A buffer of `shape` on the stack: an alloca at function entry, so that
  /// loops do not grow the stack.
  Value allocBuffer(ArrayRef<int64_t> shape, Type elementType);
  Value allocBuffer(RankedTensorType type) {
    return allocBuffer(type.getShape(), type.getElementType());
  }
  /// Writes every element of `value` into `buffer`, at its index, or at
  /// `offsetOf(index)` in a 1-D buffer.
  using IndexOffsetFn = function_ref<Value(ArrayRef<Value> index)>;
  LogicalResult storeTile(Value value, Value buffer,
                          IndexOffsetFn offsetOf = nullptr);
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
  /// Runs `body` at every index of `shape` inside a fresh serial loop nest,
  /// innermost index fastest.
  LogicalResult forEachIndex(ArrayRef<int64_t> shape,
                             function_ref<LogicalResult(ArrayRef<Value>)> body);
  /// The results of an atomic (tk.atomic_rmw or tk.atomic_cas), `one`
  /// emitting it at an index: a scalar atomic once, a tile's elements each,
  /// the old values into a buffer.
  LogicalResult
  lowerAtomicElements(Operation *atomic, Type valueType,
                      function_ref<FailureOr<Value>(ArrayRef<Value>)> one);
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

} // namespace mlir::tk_to_loops

#endif // TK_CORE_CONVERSION_TKTOLOOPS_KERNELLOWERING_H_
