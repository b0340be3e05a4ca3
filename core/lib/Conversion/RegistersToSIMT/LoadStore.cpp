//===- LoadStore.cpp - the loads, stores and atomics of a thread's registers
//-===//
//
// A tile load or store moves what each thread holds, in runs of registers
// that AxisFacts proves contiguous and aligned in memory (getAccessPlan),
// moved as vectors of up to four elements from the run's first address. A run
// whose mask AxisFacts proves uniform takes one branch; any other tests its
// masks at run time: one branch when the whole run is in, an element at a time
// otherwise (Triton leaves such runs scalar; tk's kernels are not specialised
// on their sizes' divisibility). Copies of a broadcast tile store once: only
// the first thread of each group of copies, and no duplicate register.
// Atomics update each element once, as stores do, one element at a time.
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"
#include "tk/core/Conversion/ScalarOps.h"

#include "tk/core/Analysis/AxisFacts.h"
#include "tk/core/Conversion/Atomics.h"
#include "tk/core/Layout.h"
#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace tk::simt {

AccessPlan getAccessPlan(Operation *op) {
  Value pointer, mask;
  if (auto load = dyn_cast<tk::LoadOp>(op)) {
    pointer = load.getPtr();
    mask = load.getMask();
  } else if (auto store = dyn_cast<tk::StoreOp>(op)) {
    pointer = store.getPtr();
    mask = store.getMask();
  } else {
    return {};
  }
  const LinearLayout *layout = getLinearLayout(pointer.getType());
  if (!layout)
    return {};
  auto tile = cast<RankedTensorType>(pointer.getType());
  Type pointee = cast<tk::PtrType>(tile.getElementType()).getPointeeType();
  if (!pointee.isIntOrFloat() || pointee.getIntOrFloatBitWidth() < 8)
    return {};
  int64_t elementBytes = pointee.getIntOrFloatBitWidth() / 8;
  // Registers consecutive along one dimension (the last, or the first of
  // a tile loaded transposed), where AxisFacts proves memory runs too.
  auto [runDim, memory] = warp::getMemoryRunOrder(*layout);
  if (runDim < 0)
    return {};
  int64_t width = memory.getNumConsecutiveInOut();
  width = std::min<int64_t>(width, std::max<int64_t>(16 / elementBytes, 1));
  AxisFacts pointerFacts = getAxisFactsAlong(pointer, runDim);
  while (width > 1 &&
         !runsAreContiguousAndAligned(pointerFacts, width, elementBytes,
                                      width * elementBytes))
    width /= 2;
  AccessPlan plan;
  plan.width = width;
  if (mask)
    plan.maskUniform = getAxisFactsAlong(mask, runDim).constancy % width == 0;
  return plan;
}

namespace {

/// The address of register `reg` of a run starting at register `first`:
/// a constant step from the run's first address.
Value runAddress(OpBuilder &b, Location loc, ValueRange pointers, int64_t first,
                 int64_t reg, Type pointee) {
  if (reg == first)
    return pointers[first];
  return LLVM::GEPOp::create(b, loc, pointers[first].getType(),
                             getMemoryType(pointee), pointers[first],
                             ArrayRef<LLVM::GEPArg>{int32_t(reg - first)});
}

/// The i1 of `mask` (empty, one value or one per register) for `reg`.
Value maskOf(ValueRange mask, int64_t reg) {
  if (mask.empty())
    return {};
  return mask.size() == 1 ? mask[0] : mask[reg];
}

Value andOf(OpBuilder &b, Location loc, Value a, Value c) {
  if (!a)
    return c;
  if (!c)
    return a;
  return arith::AndIOp::create(b, loc, a, c);
}

/// The most elements one vector access of `element` moves: four (every
/// backend's vectors take four; two 8-byte f16 accesses make LLVM's one
/// 16-byte access), and one for types whose vectors not every backend has.
int64_t vectorElements(Type element) {
  if (element.isF16() || element.isF32() || element.isF64() ||
      element.isInteger(16) || element.isInteger(32) || element.isInteger(64))
    return 4;
  return 1;
}

/// The accesses of a run of `count` `element`s from `address` (aligned to
/// `alignment`): vectors of up to vectorElements each, or single elements.
struct RunChunks {
  RunChunks(Type element, int64_t count, int64_t alignment)
      : element(element), count(count), alignment(alignment),
        chunk(std::min(count, vectorElements(element))),
        elementBytes(
            std::max<int64_t>(element.getIntOrFloatBitWidth() / 8, 1)) {}

  /// Calls `access(first, address, alignment)` for each chunk.
  void forEach(OpBuilder &b, Location loc, Value address,
               function_ref<void(int64_t, Value, int64_t)> access) const {
    for (int64_t first = 0; first < count; first += chunk) {
      Value at = first == 0 ? address
                            : Value(LLVM::GEPOp::create(
                                  b, loc, address.getType(), element, address,
                                  ArrayRef<LLVM::GEPArg>{int32_t(first)}));
      access(first, at,
             first == 0 ? alignment
                        : std::min(alignment, chunk * elementBytes));
    }
  }
  /// The chunk's type: a vector, or the element.
  Type type() const {
    return chunk == 1 ? element : Type(VectorType::get({chunk}, element));
  }

  Type element;
  int64_t count, alignment, chunk, elementBytes;
};

/// The type a run of `element` moves as: bf16 as its bits (i16), whose
/// vectors every backend has (SPIR-V has no bf16), so that a bf16 run is
/// one vector access as an f16 run is; fp8 as its bits (getMemoryType).
Type accessType(Type element) {
  if (element.isBF16())
    return IntegerType::get(element.getContext(), 16);
  return getMemoryType(element);
}

/// Loads `count` `element`s from `address` (aligned to `alignment`).
SmallVector<Value> loadContiguous(OpBuilder &b, Location loc, Type element,
                                  Value address, int64_t count,
                                  int64_t alignment) {
  Type moved = accessType(element);
  RunChunks chunks(moved, count, alignment);
  SmallVector<Value> values;
  chunks.forEach(b, loc, address, [&](int64_t, Value at, int64_t aligned) {
    Value loaded = LLVM::LoadOp::create(b, loc, chunks.type(), at, aligned);
    if (chunks.chunk == 1)
      return values.push_back(loaded);
    for (int64_t i = 0; i < chunks.chunk; ++i)
      values.push_back(LLVM::ExtractElementOp::create(
          b, loc, loaded,
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), i)));
  });
  if (moved != element)
    for (Value &value : values)
      value = arith::BitcastOp::create(b, loc, element, value);
  return values;
}

/// Stores `values` to consecutive elements from `address`, as
/// loadContiguous reads them.
void storeContiguous(OpBuilder &b, Location loc, ValueRange values,
                     Value address, int64_t alignment) {
  Type element = values.front().getType();
  Type moved = accessType(element);
  SmallVector<Value> bits(values);
  if (moved != element)
    for (Value &value : bits)
      value = arith::BitcastOp::create(b, loc, moved, value);
  RunChunks chunks(moved, bits.size(), alignment);
  chunks.forEach(
      b, loc, address, [&](int64_t first, Value at, int64_t aligned) {
        Value stored = bits[first];
        if (chunks.chunk > 1) {
          stored = LLVM::PoisonOp::create(b, loc, chunks.type());
          for (int64_t i = 0; i < chunks.chunk; ++i)
            stored = LLVM::InsertElementOp::create(
                b, loc, stored, bits[first + i],
                arith::ConstantIntOp::create(b, loc, b.getI32Type(), i));
        }
        LLVM::StoreOp::create(b, loc, stored, at, aligned);
      });
}

/// An scf.if on `condition` yielding what `thenValues` and `elseValues`
/// build, of `types`.
SmallVector<Value>
branch(OpBuilder &b, Location loc, TypeRange types, Value condition,
       function_ref<SmallVector<Value>(OpBuilder &)> thenValues,
       function_ref<SmallVector<Value>(OpBuilder &)> elseValues) {
  auto branch = scf::IfOp::create(b, loc, types, condition,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  scf::YieldOp::create(b, loc, thenValues(b));
  b.setInsertionPointToStart(&branch.getElseRegion().front());
  scf::YieldOp::create(b, loc, elseValues(b));
  return branch.getResults();
}

} // namespace

Value combineMasks(OpBuilder &b, Location loc, ValueRange mask, int64_t first,
                   int64_t count, bool all) {
  Value combined;
  for (int64_t reg = first; reg < first + count; ++reg) {
    Value bit = maskOf(mask, reg);
    combined = !combined ? bit
               : all     ? Value(arith::AndIOp::create(b, loc, combined, bit))
                         : Value(arith::OrIOp::create(b, loc, combined, bit));
  }
  return combined;
}

SmallVector<Value>
loadEachUnderMask(OpBuilder &b, Location loc, Type element, ValueRange pointers,
                  ValueRange mask, int64_t first, int64_t count,
                  function_ref<Value(OpBuilder &, int64_t)> otherOf) {
  int64_t elementBytes =
      std::max<int64_t>(element.getIntOrFloatBitWidth() / 8, 1);
  SmallVector<Value> run;
  for (int64_t reg = first; reg < first + count; ++reg)
    llvm::append_range(
        run,
        branch(
            b, loc, element, maskOf(mask, reg),
            [&](OpBuilder &t) {
              return SmallVector<Value>{
                  loadScalar(t, loc, element,
                             runAddress(t, loc, pointers, first, reg, element),
                             elementBytes)};
            },
            [&](OpBuilder &e) { return SmallVector<Value>{otherOf(e, reg)}; }));
  return run;
}

namespace {

struct LoadLowering : OpConversionPattern<tk::LoadOp> {
  LoadLowering(const TypeConverter &converter, MLIRContext *context,
               const AccessPlans &plans)
      : OpConversionPattern(converter, context), plans(plans) {}

  LogicalResult
  matchAndRewrite(tk::LoadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getBoundaryCheck().empty() || op.getIsVolatile())
      return rewriter.notifyMatchFailure(op, "block pointers, volatile");
    Type result = getTypeConverter()->convertType(
        getElementTypeOrSelf(op.getResult().getType()));
    Type pointerType = getElementTypeOrSelf(op.getPtr().getType());
    auto pointer = dyn_cast<tk::PtrType>(pointerType);
    if (!result || !pointer || isa<RankedTensorType>(pointer.getPointeeType()))
      return failure();
    Location loc = op.getLoc();
    ValueRange pointers = adaptor.getPtr();
    ValueRange mask = adaptor.getMask();
    ValueRange other = adaptor.getOther();
    int64_t registers = pointers.size();
    auto found = plans.find(op);
    AccessPlan plan = found == plans.end() ? AccessPlan{} : found->second;
    int64_t elementBytes =
        std::max<int64_t>(result.getIntOrFloatBitWidth() / 8, 1);
    auto otherOf = [&](OpBuilder &b, int64_t reg) -> Value {
      if (other.empty())
        return arith::ConstantOp::create(b, loc, b.getZeroAttr(result));
      return other.size() == 1 ? other[0] : other[reg];
    };
    SmallVector<Value> values;
    for (int64_t first = 0; first < registers; first += plan.width) {
      int64_t count = std::min(plan.width, registers - first);
      SmallVector<Type> types(count, result);
      // The run's loads, unconditional.
      auto loadRun = [&](OpBuilder &b) {
        return loadContiguous(b, loc, result, pointers[first], count,
                              count * elementBytes);
      };
      // The run's value where the mask says it is out.
      auto others = [&](OpBuilder &b) {
        SmallVector<Value> run;
        for (int64_t reg = first; reg < first + count; ++reg)
          run.push_back(otherOf(b, reg));
        return run;
      };
      // Each element under its own mask.
      auto loadEach = [&](OpBuilder &b) {
        return loadEachUnderMask(b, loc, result, pointers, mask, first, count,
                                 otherOf);
      };
      if (mask.empty())
        llvm::append_range(values, loadRun(rewriter));
      else if (plan.maskUniform || count == 1)
        llvm::append_range(
            values,
            branch(rewriter, loc, types, maskOf(mask, first), loadRun, others));
      else
        llvm::append_range(values,
                           branch(rewriter, loc, types,
                                  combineMasks(rewriter, loc, mask, first,
                                               count, /*all=*/true),
                                  loadRun, loadEach));
    }
    if (isa<RankedTensorType>(op.getType()))
      rewriter.replaceOpWithMultiple(op, {values});
    else
      rewriter.replaceOp(op, values.front());
    return success();
  }

  const AccessPlans &plans;
};

struct StoreLowering : OpConversionPattern<tk::StoreOp> {
  StoreLowering(const TypeConverter &converter, MLIRContext *context,
                const AccessPlans &plans)
      : OpConversionPattern(converter, context), plans(plans) {}

  LogicalResult
  matchAndRewrite(tk::StoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getBoundaryCheck().empty())
      return rewriter.notifyMatchFailure(op, "block pointers");
    Type pointerType = getElementTypeOrSelf(op.getPtr().getType());
    auto pointer = dyn_cast<tk::PtrType>(pointerType);
    if (!pointer || isa<RankedTensorType>(pointer.getPointeeType()))
      return failure();
    Type element = getTypeConverter()->convertType(pointer.getPointeeType());
    if (!element)
      return failure();
    auto converter = getTypeConverter<RegisterTypeConverter>();
    Location loc = op.getLoc();
    ValueRange pointers = adaptor.getPtr();
    ValueRange stored = adaptor.getValue();
    ValueRange mask = adaptor.getMask();
    ThreadPosition thread = ThreadPosition::get(rewriter, loc, *converter);
    auto [holder, registerCopies] =
        getWriters(rewriter, loc, op.getPtr().getType(), thread);
    auto found = plans.find(op);
    AccessPlan plan = found == plans.end() ? AccessPlan{} : found->second;
    int64_t elementBytes =
        std::max<int64_t>(element.getIntOrFloatBitWidth() / 8, 1);
    int64_t registers = pointers.size();
    for (int64_t first = 0; first < registers; first += plan.width) {
      if (first & registerCopies)
        continue;
      int64_t count = std::min(plan.width, registers - first);
      auto storeRun = [&](OpBuilder &b) {
        storeContiguous(b, loc, stored.slice(first, count), pointers[first],
                        count * elementBytes);
      };
      if (mask.empty() || plan.maskUniform || count == 1) {
        guarded(rewriter, loc,
                andOf(rewriter, loc, holder, maskOf(mask, first)), storeRun);
        continue;
      }
      // The whole run in one branch, else each element under its mask.
      guarded(rewriter, loc, holder, [&](OpBuilder &b) {
        auto whole = scf::IfOp::create(b, loc,
                                       combineMasks(b, loc, mask, first, count,
                                                    /*all=*/true),
                                       /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(whole.thenBlock()->getTerminator());
        storeRun(b);
        b.setInsertionPoint(whole.elseBlock()->getTerminator());
        for (int64_t reg = first; reg < first + count; ++reg)
          guarded(b, loc, maskOf(mask, reg), [&](OpBuilder &e) {
            storeScalar(e, loc, stored[reg],
                        runAddress(e, loc, pointers, first, reg, element),
                        elementBytes);
          });
      });
    }
    rewriter.eraseOp(op);
    return success();
  }

  const AccessPlans &plans;
};

/// tk.atomic_rmw and tk.atomic_cas: each element is updated once, by the
/// first thread holding it and only its first register holding it, under
/// its mask; that thread's registers (copies included) get the old value,
/// 0 where the mask is off. Where other threads read it too (a scalar's, or
/// a tile's whose lanes or warps hold copies) the updater writes each old
/// value to the op's scratch at its element's place, and after a barrier
/// every thread reads the ones it holds.
template <typename AtomicOp>
struct AtomicLowering : OpConversionPattern<AtomicOp> {
  using Base = OpConversionPattern<AtomicOp>;
  using Base::Base;
  using OneToNOpAdaptor = typename Base::OneToNOpAdaptor;

  LogicalResult
  matchAndRewrite(AtomicOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type element = this->getTypeConverter()->convertType(
        getElementTypeOrSelf(op.getResult().getType()));
    if (!element || !element.isIntOrFloat())
      return rewriter.notifyMatchFailure(op, "an atomic of no scalar type");
    auto converter = this->template getTypeConverter<RegisterTypeConverter>();
    Location loc = op.getLoc();
    bool oldRead = !op->use_empty();
    ThreadPosition thread = ThreadPosition::get(rewriter, loc, *converter);
    auto [holder, registerCopies] =
        getWriters(rewriter, loc, op.getPtr().getType(), thread);
    bool tile = isa<RankedTensorType>(op.getPtr().getType());
    // Whether other threads read the old values the updater gets.
    bool exchange = oldRead && (!tile || holder);
    auto scratch = op->template getAttrOfType<DenseI64ArrayAttr>(
        warp::TkwDialect::kScratchAttrName);
    Value buffer = exchange && scratch
                       ? getScratchBuffer(rewriter, loc, op, element)
                       : Value();
    if (exchange && !buffer)
      return rewriter.notifyMatchFailure(
          op, "old values other threads read, and no tkw.scratch to pass "
              "them through (run tk-allocate-shared-memory)");
    ValueRange pointers = adaptor.getPtr();
    ValueRange mask = getMask(adaptor);
    SmallVector<Value> olds;
    for (int64_t reg = 0; reg < int64_t(pointers.size()); ++reg) {
      if (reg & registerCopies) {
        olds.push_back(olds[reg & ~registerCopies]);
        continue;
      }
      auto update = [&](OpBuilder &b) -> SmallVector<Value> {
        return {emitUpdate(b, loc, op, adaptor, reg, element)};
      };
      Value condition = andOf(rewriter, loc, holder, maskOf(mask, reg));
      if (!condition) {
        olds.push_back(update(rewriter).front());
        continue;
      }
      llvm::append_range(olds, branch(rewriter, loc, element, condition, update,
                                      [&](OpBuilder &b) -> SmallVector<Value> {
                                        return {arith::ConstantOp::create(
                                            b, loc, b.getZeroAttr(element))};
                                      }));
    }
    if (exchange)
      olds = passOldValues(rewriter, loc, op, olds, holder, registerCopies,
                           buffer, scratch[0], element, thread);
    if (isa<RankedTensorType>(op.getType()))
      rewriter.replaceOpWithMultiple(op, {olds});
    else
      rewriter.replaceOp(op, olds.front());
    return success();
  }

private:
  /// The updaters' old values (`olds` of the threads for which `holder`
  /// holds; every thread's first for a scalar) through the scratch at
  /// byte `offset`: each element at its flat coordinate, a barrier, then
  /// each thread's registers read back.
  static SmallVector<Value>
  passOldValues(OpBuilder &b, Location loc, AtomicOp op, ValueRange olds,
                Value holder, int32_t registerCopies, Value buffer,
                int64_t offset, Type element, const ThreadPosition &thread) {
    Type stored = storageType(element);
    int64_t base =
        offset / std::max<int64_t>(stored.getIntOrFloatBitWidth() / 8, 1);
    const LinearLayout *layout = getLinearLayout(op.getType());
    std::optional<ThreadCoordinates> coordinates;
    if (layout)
      coordinates.emplace(b, loc, *layout, thread);
    auto slot = [&](int64_t reg) {
      Value index = arith::ConstantIntOp::create(b, loc, b.getI32Type(), base);
      if (coordinates)
        index = arith::AddIOp::create(b, loc, index,
                                      coordinates->getFlat(b, loc, reg));
      return toIndex(b, loc, index);
    };
    guarded(b, loc, holder, [&](OpBuilder &w) {
      for (int64_t reg = 0; reg < int64_t(olds.size()); ++reg)
        if (!(reg & registerCopies))
          memref::StoreOp::create(w, loc, toStorage(w, loc, olds[reg]), buffer,
                                  ValueRange{slot(reg)});
    });
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> read;
    for (int64_t reg = 0; reg < int64_t(olds.size()); ++reg)
      read.push_back(fromStorage(
          b, loc, memref::LoadOp::create(b, loc, buffer, ValueRange{slot(reg)}),
          element));
    return read;
  }

  static ValueRange getMask(OneToNOpAdaptor adaptor) {
    if constexpr (std::is_same_v<AtomicOp, tk::AtomicRMWOp>)
      return adaptor.getMask();
    else
      return {};
  }

  /// Register `reg` of operand `values`: one value for a scalar or splat.
  static Value at(ValueRange values, int64_t reg) {
    return values.size() == 1 ? values[0] : values[reg];
  }

  /// The update of register `reg`'s element; its old value.
  static Value emitUpdate(OpBuilder &b, Location loc, AtomicOp op,
                          OneToNOpAdaptor adaptor, int64_t reg, Type element) {
    Value pointer = at(adaptor.getPtr(), reg);
    Value value = at(adaptor.getVal(), reg);
    LLVM::AtomicOrdering ordering = tk::toOrdering(op.getSem());
    if constexpr (std::is_same_v<AtomicOp, tk::AtomicRMWOp>) {
      return LLVM::AtomicRMWOp::create(
          b, loc, tk::toAtomicBinOp(op.getKind(), isa<FloatType>(element)),
          pointer, value, ordering);
    } else {
      return tk::emitCompareExchange(b, loc, pointer, at(adaptor.getCmp(), reg),
                                     value, element, ordering);
    }
  }
};

} // namespace

void populateLoadStorePatterns(RegisterTypeConverter &converter,
                               RewritePatternSet &patterns,
                               const AccessPlans &plans) {
  patterns.add<LoadLowering, StoreLowering>(converter, patterns.getContext(),
                                            plans);
  patterns
      .add<AtomicLowering<tk::AtomicRMWOp>, AtomicLowering<tk::AtomicCASOp>>(
          converter, patterns.getContext());
}

} // namespace tk::simt
