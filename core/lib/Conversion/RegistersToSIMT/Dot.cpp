//===- Dot.cpp - tk.dot on the registers of a thread ----------------------===//
//
// A dot's operands arrive in the layouts tk-dot-operand-layouts derived
// from its accumulator's, so a thread already holds what its own part of
// the product needs: for a dot without a matrix intrinsic, the row of a and
// the column of b of every product element it holds (fused multiply-adds
// in the thread); for a dot that records one (`tkw.intrinsic`), the
// intrinsic's fragments of a, b and the accumulator, which the backend's
// MatrixUnit multiplies (emitFragmentProduct). Both are found from the
// register part of the three layouts: their lane and warp parts agree by
// construction, and are checked here before anything is emitted.
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"

#include "tk/core/Conversion/Passes.h"
#include "tk/core/Conversion/ScalarOps.h"
#include "tk/core/DotOperands.h"
#include "tk/core/TargetInfo.h"
#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <map>
#include <set>

using namespace mlir;

namespace tk::simt {

namespace {

using Basis = std::vector<int32_t>;

int32_t bitsOf(const LinearLayout &layout, StringRef dim) {
  return layout.hasInDim(dim) ? layout.getInDimSizeLog2(dim) : 0;
}

/// True when bit `bit` of `dim` moves `layout` by `expected(dim, bit)` for
/// every lane and warp bit, and both have the same bits.
bool threadBasesAre(const LinearLayout &layout, const LinearLayout &reference,
                    function_ref<Basis(StringRef dim, int32_t bit)> expected) {
  for (StringRef dim : {kLaneDim, kWarpDim}) {
    if (bitsOf(layout, dim) != bitsOf(reference, dim))
      return false;
    for (int32_t bit = 0; bit < bitsOf(layout, dim); ++bit)
      if (layout.getBasis(dim, bit) != expected(dim, bit))
        return false;
  }
  return true;
}

/// sum + x * y in the type of the dot's sums: a fused multiply-add for
/// floats.
static Value multiplyAdd(OpBuilder &b, Location loc, Value x, Value y,
                         Value sum) {
  if (isa<FloatType>(sum.getType()))
    return math::FmaOp::create(b, loc, x, y, sum);
  return arith::AddIOp::create(b, loc, sum,
                               arith::MulIOp::create(b, loc, x, y));
}

/// Where a dot finds the registers of an operand's fragment layout
/// (DotOperandPlan::fragments): among the values the operand arrived in,
/// or, for an operand the dot writes to its scratch, at the element of the
/// scratch that register's coordinates map to.
class OperandReader {
public:
  /// `fragmentRegisters`: the registers of one intrinsic fragment, which
  /// are the layout's lowest register bits.
  /// `vectorBytes`: the widest access to workgroup memory
  /// (TargetInfo::workgroupVectorBytes).
  OperandReader(const LinearLayout &fragments, ValueRange values,
                int32_t fragmentRegisters, const MatrixUnit *unit,
                int64_t vectorBytes)
      : index(fragments), fragments(fragments), values(values),
        fragmentRegisters(fragmentRegisters), unit(unit),
        vectorBytes(vectorBytes) {}

  /// Writes the registers the thread holds of `operand` (the first holder
  /// of each element) into the dot's scratch at `offset` bytes, placed by
  /// `shared` (offset -> coordinates); later reads come from there.
  LogicalResult writeToScratch(OpBuilder &b, Location loc, tk::DotOp op,
                               Value operand, const LinearLayout &shared,
                               int64_t offset, const ThreadPosition &thread) {
    FailureOr<OperandScratch> scratch =
        getOperandScratch(b, loc, op, operand, offset);
    if (failed(scratch))
      return failure();
    auto [buffer, base] = *scratch;
    const LinearLayout *source = getLinearLayout(operand.getType());
    if (!source)
      return op.emitOpError("tk-convert-registers-to-simt: an operand without "
                            "a layout");
    // Read back as a slot read in place is.
    if (failed(readInPlace(b, loc, op, buffer, base, shared, thread)))
      return failure();
    return writeTileToWorkgroup(b, loc, op, values, *source, shared, buffer,
                                base, thread, vectorBytes);
  }

  /// Reads the fragments from the slot that starts at element `base` of
  /// `buffer`, laid out by `slot`, where a tkw.local_load the dot reads in
  /// place (DotOperandPlan::inPlace) left them.
  LogicalResult readInPlace(OpBuilder &b, Location loc, tk::DotOp op,
                            Value buffer, Value base, const LinearLayout &slot,
                            const ThreadPosition &thread) {
    FailureOr<SharedTileReader> tileReader =
        SharedTileReader::create(b, loc, op, buffer, base, fragments, slot,
                                 fragmentRegisters, unit, thread,
                                 /*origin=*/{}, vectorBytes);
    if (failed(tileReader))
      return failure();
    reader.emplace(std::move(*tileReader));
    return success();
  }

  /// The values of `registers` of the fragment layout.
  SmallVector<Value> read(OpBuilder &b, Location loc,
                          ArrayRef<int32_t> registers) const {
    if (reader)
      return reader->read(b, loc, registers);
    SmallVector<Value> picked;
    for (int32_t reg : registers)
      picked.push_back(values[reg]);
    return picked;
  }

  RegisterIndex index;

private:
  const LinearLayout &fragments;
  ValueRange values;
  int32_t fragmentRegisters = 1;
  const MatrixUnit *unit = nullptr;
  int64_t vectorBytes = 16;
  std::optional<SharedTileReader> reader;
};

struct DotLowering : OpConversionPattern<tk::DotOp> {
  DotLowering(const TypeConverter &converter, MLIRContext *context,
              std::shared_ptr<const MatrixUnit> matrixUnit,
              std::shared_ptr<const TargetInfo> target)
      : OpConversionPattern(converter, context),
        matrixUnit(std::move(matrixUnit)), target(std::move(target)) {}

  LogicalResult
  matchAndRewrite(tk::DotOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const LinearLayout *a = getLinearLayout(op.getA().getType());
    const LinearLayout *b = getLinearLayout(op.getB().getType());
    const LinearLayout *acc = getLinearLayout(op.getType());
    if (!a || !b || !acc)
      return rewriter.notifyMatchFailure(op, "a tile without a layout");
    FailureOr<SmallVector<Value>> results =
        op->hasAttr(warp::TkwDialect::kIntrinsicAttrName)
            ? lowerWithIntrinsic(op, *acc, adaptor, rewriter)
            : lowerWithFma(op, *a, *b, *acc, adaptor, rewriter);
    if (failed(results))
      return failure();
    rewriter.replaceOpWithMultiple(op, {*results});
    return success();
  }

private:
  /// Each product element the thread holds, as multiply-adds over the
  /// reduction dimension, in f32 for narrow float accumulators: from the
  /// operands' registers, or, where the plan keeps both in the dot's
  /// scratch (DotOperandPlan::shared), in a loop over k reading them there.
  FailureOr<SmallVector<Value>>
  lowerWithFma(tk::DotOp op, const LinearLayout &a, const LinearLayout &b,
               const LinearLayout &acc, OneToNOpAdaptor adaptor,
               ConversionPatternRewriter &rewriter) const {
    Type accElement = getElementTypeOrSelf(op.getType());
    bool isFloat = isa<FloatType>(accElement);
    Type compute =
        isNarrowFloat(accElement) ? rewriter.getF32Type() : accElement;
    Location loc = op.getLoc();
    auto widen = [&](OpBuilder &b, Value value) -> Value {
      if (value.getType() == compute)
        return value;
      if (isFloat)
        return arith::ExtFOp::create(b, loc, compute, value);
      return arith::ExtSIOp::create(b, loc, compute, value);
    };
    llvm::Expected<DotOperandPlan> plan = planDotOperands(op, target.get());
    if (!plan)
      return rewriter.notifyMatchFailure(op, llvm::toString(plan.takeError()));
    if (plan->shared[0] && plan->shared[1])
      return lowerFmaFromScratch(op, acc, *plan, adaptor, rewriter, widen);
    // a holds the accumulator's rows, b its columns, each with the whole
    // reduction dimension in registers.
    auto along = [&](unsigned dim) {
      return [&acc, dim](StringRef in, int32_t bit) {
        Basis basis(2, 0);
        basis[dim] = acc.getBasis(in, bit)[dim];
        return basis;
      };
    };
    if (!threadBasesAre(a, acc, along(0)) || !threadBasesAre(b, acc, along(1)))
      return rewriter.notifyMatchFailure(
          op, "operands not in the accumulator's rows and columns");
    RegisterIndex aIndex(a), bIndex(b);
    int64_t depth = cast<RankedTensorType>(op.getA().getType()).getDimSize(1);
    ValueRange aValues = adaptor.getA(), bValues = adaptor.getB();
    // Each operand register widened once, where it is first used.
    SmallVector<Value> aWide(aValues.size()), bWide(bValues.size());
    auto wide = [&](SmallVector<Value> &cache, ValueRange values, int32_t reg) {
      if (!cache[reg])
        cache[reg] = widen(rewriter, values[reg]);
      return cache[reg];
    };
    SmallVector<Value> results;
    for (auto [reg, initial] : llvm::enumerate(adaptor.getAcc())) {
      SmallVector<int32_t> at = registerCoordinates(acc, reg);
      Value sum = widen(rewriter, initial);
      for (int32_t k = 0; k < depth; ++k) {
        std::optional<int32_t> aReg = aIndex.lookup(at[0], k);
        std::optional<int32_t> bReg = bIndex.lookup(k, at[1]);
        if (!aReg || !bReg)
          return rewriter.notifyMatchFailure(
              op, "an operand element not in the thread's registers");
        Value x = wide(aWide, aValues, *aReg);
        Value y = wide(bWide, bValues, *bReg);
        sum = multiplyAdd(rewriter, loc, x, y, sum);
      }
      if (sum.getType() != accElement)
        sum = arith::TruncFOp::create(rewriter, loc, accElement, sum);
      results.push_back(sum);
    }
    return results;
  }

  /// A dot of multiply-adds whose operands both wait in its scratch,
  /// row-major: their holders write them, and after a barrier a loop over k
  /// reads, each step, the thread's rows of a and columns of b at k and
  /// updates every product element it holds. The code is one step long,
  /// whatever the depth.
  FailureOr<SmallVector<Value>>
  lowerFmaFromScratch(tk::DotOp op, const LinearLayout &acc,
                      const DotOperandPlan &plan, OneToNOpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter,
                      function_ref<Value(OpBuilder &, Value)> widen) const {
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIntOp::create(rewriter, loc, i32, value);
    };
    ThreadPosition thread = ThreadPosition::get(
        rewriter, loc, *getTypeConverter<RegisterTypeConverter>());
    FailureOr<std::array<OperandScratch, 2>> written = writeOperandsToScratch(
        rewriter, loc, op, plan, {adaptor.getA(), adaptor.getB()}, thread,
        vectorBytes());
    if (failed(written))
      return failure();
    std::array<Value, 2> buffers = {(*written)[0].buffer, (*written)[1].buffer};
    std::array<Value, 2> bases = {(*written)[0].base, (*written)[1].base};

    // Where the thread's rows of a and columns of b start, by their
    // register-only coordinate: a is depth elements a row, b n a row.
    auto aType = cast<RankedTensorType>(op.getA().getType());
    auto bType = cast<RankedTensorType>(op.getB().getType());
    int64_t depth = aType.getDimSize(1), width = bType.getDimSize(1);
    ThreadCoordinates coordinates(rewriter, loc, acc, thread);
    std::map<int32_t, Value> rowStarts, colStarts;
    SmallVector<std::pair<int32_t, int32_t>> registerAt;
    SmallVector<Value> initial;
    for (auto [reg, value] : llvm::enumerate(adaptor.getAcc())) {
      SmallVector<int32_t> at = registerCoordinates(acc, reg);
      if (!rowStarts.count(at[0]))
        rowStarts[at[0]] = arith::AddIOp::create(
            rewriter, loc, bases[0],
            arith::MulIOp::create(rewriter, loc,
                                  coordinates.get(rewriter, loc, reg, 0),
                                  constant(depth)));
      if (!colStarts.count(at[1]))
        colStarts[at[1]] = arith::AddIOp::create(
            rewriter, loc, bases[1], coordinates.get(rewriter, loc, reg, 1));
      registerAt.push_back({at[0], at[1]});
      initial.push_back(widen(rewriter, value));
    }
    Value lower = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value upper = arith::ConstantIndexOp::create(rewriter, loc, depth);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(
        rewriter, loc, lower, upper, one, initial,
        [&](OpBuilder &b, Location loc, Value k, ValueRange sums) {
          Value k32 = arith::IndexCastUIOp::create(b, loc, i32, k);
          Value kRow = arith::MulIOp::create(b, loc, k32, constant(width));
          auto load = [&](unsigned opIdx, Value at) {
            return widen(b, memref::LoadOp::create(b, loc, buffers[opIdx],
                                                   toIndex(b, loc, at)));
          };
          std::map<int32_t, Value> rows, cols;
          for (auto [row, start] : rowStarts)
            rows[row] = load(0, arith::AddIOp::create(b, loc, start, k32));
          for (auto [col, start] : colStarts)
            cols[col] = load(1, arith::AddIOp::create(b, loc, start, kRow));
          SmallVector<Value> next;
          for (auto [sum, at] : llvm::zip_equal(sums, registerAt)) {
            next.push_back(
                multiplyAdd(b, loc, rows[at.first], cols[at.second], sum));
          }
          scf::YieldOp::create(b, loc, next);
        });
    Type accElement = getElementTypeOrSelf(op.getType());
    SmallVector<Value> results;
    for (Value sum : loop.getResults())
      results.push_back(
          sum.getType() == accElement
              ? sum
              : Value(arith::TruncFOp::create(rewriter, loc, accElement, sum)));
    return results;
  }

  /// One intrinsic per fragment of the accumulator and step of the
  /// reduction dimension, emitted by the backend's unit, k steps outermost:
  /// a thread holds one step's operand fragments at a time. An operand that
  /// is not in its fragments (DotOperandPlan::shared) is first written to
  /// the dot's scratch by the threads that hold it; after a barrier, each
  /// step reads its fragments from there.
  FailureOr<SmallVector<Value>>
  lowerWithIntrinsic(tk::DotOp op, const LinearLayout &acc,
                     OneToNOpAdaptor adaptor,
                     ConversionPatternRewriter &rewriter) const {
    llvm::Expected<DotOperandPlan> plan = planDotOperands(op, target.get());
    if (!plan)
      return rewriter.notifyMatchFailure(op, llvm::toString(plan.takeError()));
    const MatrixIntrinsic &intrinsic = *plan->intrinsic;
    if (matrixUnit && intrinsic.scope == MatrixScope::Warpgroup)
      return lowerWarpgroupDot(op, *plan, acc, adaptor.getA(), adaptor.getB(),
                               adaptor.getAcc(), rewriter, *matrixUnit,
                               *getTypeConverter<RegisterTypeConverter>());
    if (!matrixUnit || !intrinsic.aLayout || !intrinsic.bLayout)
      return rewriter.notifyMatchFailure(
          op, "no unit emits the dot's intrinsic from registers");
    // A narrow float accumulator is kept in f32 over the dot's k steps and
    // rounded once: tk-assign-linear-layouts chose the intrinsic's f32 form.
    Type accElement = getElementTypeOrSelf(op.getType());
    bool narrow = isNarrowFloat(accElement);
    if (narrow && intrinsic.accType != MatrixElementType::F32)
      return rewriter.notifyMatchFailure(
          op, "a narrow accumulator with an intrinsic that does not "
              "accumulate in f32");
    llvm::Expected<LinearLayout> accFragment =
        intrinsic.accLayout.toLinearLayout(intrinsic.m, intrinsic.n);
    llvm::Expected<LinearLayout> aFragment =
        intrinsic.aLayout->toLinearLayout(intrinsic.m, intrinsic.k);
    llvm::Expected<LinearLayout> bFragment =
        intrinsic.bLayout->toLinearLayout(intrinsic.k, intrinsic.n);
    if (!accFragment || !aFragment || !bFragment) {
      llvm::consumeError(accFragment.takeError());
      llvm::consumeError(aFragment.takeError());
      llvm::consumeError(bFragment.takeError());
      return rewriter.notifyMatchFailure(op, "a fragment that is not linear");
    }
    auto accLanes = [&](StringRef in, int32_t bit) {
      return in == kLaneDim ? accFragment->getBasis(in, bit)
                            : acc.getBasis(in, bit);
    };
    if (!threadBasesAre(acc, acc, accLanes))
      return rewriter.notifyMatchFailure(
          op, "an accumulator that is not the intrinsic's fragments");

    Location loc = op.getLoc();
    auto converter = getTypeConverter<RegisterTypeConverter>();
    ThreadPosition thread = ThreadPosition::get(rewriter, loc, *converter);
    std::array<OperandReader, 2> readers = {
        OperandReader(plan->fragments[0], adaptor.getA(),
                      aFragment->getInDimSize(kRegisterDim), matrixUnit.get(),
                      vectorBytes()),
        OperandReader(plan->fragments[1], adaptor.getB(),
                      bFragment->getInDimSize(kRegisterDim), matrixUnit.get(),
                      vectorBytes())};
    bool throughMemory = false;
    for (unsigned opIdx : {0u, 1u}) {
      if (plan->inPlace[opIdx]) {
        warp::LocalLoadOp load =
            getSlotRead(opIdx == 0 ? op.getA() : op.getB());
        warp::RingType ring = load.getRing().getType();
        Value start = rewriter.getRemappedValue(load.getRing());
        Value slot = rewriter.getRemappedValue(load.getSlot());
        llvm::Expected<LinearLayout> slotLayout = ring.getSlotLayout();
        Value buffer =
            getScratchBuffer(rewriter, loc, op, ring.getElementType());
        if (!slotLayout)
          return op.emitOpError("tk-convert-registers-to-simt: ")
                 << llvm::toString(slotLayout.takeError());
        if (!start || !slot || !buffer)
          return op.emitOpError("tk-convert-registers-to-simt: a ring read "
                                "in place without its converted slot");
        if (failed(readers[opIdx].readInPlace(
                rewriter, loc, op, buffer,
                getSlotBase(rewriter, loc, ring, start, slot), *slotLayout,
                thread)))
          return failure();
        continue;
      }
      if (!plan->shared[opIdx])
        continue;
      Value operand = opIdx == 0 ? op.getA() : op.getB();
      if (failed(readers[opIdx].writeToScratch(
              rewriter, loc, op, operand, *plan->shared[opIdx],
              plan->sharedOffset[opIdx], thread)))
        return failure();
      throughMemory = true;
    }
    if (throughMemory)
      gpu::BarrierOp::create(rewriter, loc);

    RegisterIndex accIndex(acc);
    SmallVector<Value> results(adaptor.getAcc().begin(),
                               adaptor.getAcc().end());
    // The accumulator's fragments, by origin (coordinates aligned to the
    // intrinsic's shape), in register order, and their current values.
    SmallVector<std::pair<int32_t, int32_t>> origins;
    SmallVector<SmallVector<int32_t>> accRegisters;
    SmallVector<SmallVector<Value>> current;
    std::set<std::pair<int32_t, int32_t>> seen;
    for (int32_t reg = 0; reg < int32_t(results.size()); ++reg) {
      SmallVector<int32_t> at = registerCoordinates(acc, reg);
      std::pair<int32_t, int32_t> origin = {at[0] & ~int32_t(intrinsic.m - 1),
                                            at[1] & ~int32_t(intrinsic.n - 1)};
      if (!seen.insert(origin).second)
        continue;
      std::optional<SmallVector<int32_t>> registers =
          gatherFragment(accIndex, *accFragment, origin.first, origin.second);
      if (!registers)
        return rewriter.notifyMatchFailure(op, "an accumulator fragment "
                                               "not in the thread's registers");
      SmallVector<Value> values;
      for (int32_t held : *registers) {
        Value value = results[held];
        if (narrow)
          value = arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(),
                                        value);
        values.push_back(value);
      }
      origins.push_back(origin);
      accRegisters.push_back(std::move(*registers));
      current.push_back(std::move(values));
    }
    int64_t depth = cast<RankedTensorType>(op.getA().getType()).getDimSize(1);
    for (int64_t k = 0; k < depth; k += intrinsic.k) {
      // This step's fragments of a by row and of b by column, each read
      // once.
      std::map<int32_t, SmallVector<Value>> aStep, bStep;
      for (auto [index, origin] : llvm::enumerate(origins)) {
        auto [row, col] = origin;
        if (!aStep.count(row)) {
          std::optional<SmallVector<int32_t>> registers =
              gatherFragment(readers[0].index, *aFragment, row, int32_t(k));
          if (!registers)
            return rewriter.notifyMatchFailure(
                op, "an operand fragment not in the thread's registers");
          aStep[row] = readers[0].read(rewriter, loc, *registers);
        }
        if (!bStep.count(col)) {
          std::optional<SmallVector<int32_t>> registers =
              gatherFragment(readers[1].index, *bFragment, int32_t(k), col);
          if (!registers)
            return rewriter.notifyMatchFailure(
                op, "an operand fragment not in the thread's registers");
          bStep[col] = readers[1].read(rewriter, loc, *registers);
        }
        FailureOr<SmallVector<Value>> next = matrixUnit->emitFragmentProduct(
            rewriter, loc, intrinsic, aStep[row], bStep[col], current[index]);
        if (failed(next))
          return failure();
        current[index] = std::move(*next);
      }
    }
    for (auto [registers, values] : llvm::zip_equal(accRegisters, current))
      for (auto [reg, value] : llvm::zip_equal(registers, values))
        results[reg] =
            narrow ? arith::TruncFOp::create(rewriter, loc, accElement, value)
                   : value;
    return results;
  }

  /// The target's widest access to workgroup memory.
  int64_t vectorBytes() const {
    return target ? target->workgroupVectorBytes : 16;
  }

  std::shared_ptr<const MatrixUnit> matrixUnit;
  std::shared_ptr<const TargetInfo> target;
};

} // namespace

/// Where operand `operand` of `op` waits in the dot's scratch: the buffer
/// of its element type and the element (i32) at `offset` bytes into the
/// dot's part of it (tkw.scratch, from tk-allocate-shared-memory).
FailureOr<OperandScratch> getOperandScratch(OpBuilder &b, Location loc,
                                            tk::DotOp op, Value operand,
                                            int64_t offset, Type words) {
  auto scratch =
      op->getAttrOfType<DenseI64ArrayAttr>(warp::TkwDialect::kScratchAttrName);
  if (!scratch || scratch.size() != 2)
    return op.emitOpError("tk-convert-registers-to-simt: a dot that reads "
                          "an operand through workgroup memory without "
                          "tkw.scratch (run tk-allocate-shared-memory first)");
  Type element = getElementTypeOrSelf(operand.getType());
  int64_t bytes =
      std::max<int64_t>(storageType(element).getIntOrFloatBitWidth() / 8, 1);
  Value buffer = getScratchBuffer(b, loc, op, words ? words : element);
  if (!buffer || (scratch[0] + offset) % bytes)
    return op.emitOpError("tk-convert-registers-to-simt: no aligned scratch "
                          "buffer for ")
           << (words ? words : element);
  Value base = arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                            (scratch[0] + offset) / bytes);
  return OperandScratch{buffer, base};
}

FailureOr<std::array<OperandScratch, 2>> writeOperandsToScratch(
    OpBuilder &b, Location loc, tk::DotOp op, const DotOperandPlan &plan,
    std::array<ValueRange, 2> values, const ThreadPosition &thread,
    int64_t vectorBytes, Type words) {
  std::array<OperandScratch, 2> scratch;
  for (unsigned opIdx : {0u, 1u}) {
    Value operand = opIdx == 0 ? op.getA() : op.getB();
    FailureOr<OperandScratch> placed =
        getOperandScratch(b, loc, op, operand, plan.sharedOffset[opIdx], words);
    if (failed(placed))
      return failure();
    scratch[opIdx] = *placed;
    const LinearLayout *source = getLinearLayout(operand.getType());
    if (!source || !plan.shared[opIdx])
      return op.emitOpError("tk-convert-registers-to-simt: an operand "
                            "without a layout or a place in the dot's "
                            "scratch");
    if (failed(writeTileToWorkgroup(b, loc, op, values[opIdx], *source,
                                    *plan.shared[opIdx], placed->buffer,
                                    placed->base, thread, vectorBytes)))
      return failure();
  }
  gpu::BarrierOp::create(b, loc);
  return scratch;
}

RegisterIndex::RegisterIndex(const LinearLayout &layout) {
  for (int32_t reg = layout.getInDimSize(kRegisterDim) - 1; reg >= 0; --reg)
    holder[registerCoordinates(layout, reg)] = reg;
}

std::optional<int32_t> RegisterIndex::lookup(int32_t row, int32_t col) const {
  auto it = holder.find(SmallVector<int32_t>{row, col});
  if (it == holder.end())
    return std::nullopt;
  return it->second;
}

std::optional<SmallVector<int32_t>> gatherFragment(const RegisterIndex &index,
                                                   const LinearLayout &fragment,
                                                   int32_t row, int32_t col) {
  SmallVector<int32_t> registers;
  for (int32_t reg = 0; reg < fragment.getInDimSize(kRegisterDim); ++reg) {
    SmallVector<int32_t> at = registerCoordinates(fragment, reg);
    std::optional<int32_t> held = index.lookup(row | at[0], col | at[1]);
    if (!held)
      return std::nullopt;
    registers.push_back(*held);
  }
  return registers;
}

void populateDotPatterns(RegisterTypeConverter &converter,
                         RewritePatternSet &patterns,
                         std::shared_ptr<const MatrixUnit> matrixUnit,
                         std::shared_ptr<const TargetInfo> target) {
  populateDotWaitPatterns(converter, patterns, matrixUnit);
  patterns.add<DotLowering>(converter, patterns.getContext(),
                            std::move(matrixUnit), std::move(target));
}

} // namespace tk::simt
