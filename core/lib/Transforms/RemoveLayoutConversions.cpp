//===- RemoveLayoutConversions.cpp - compute values where they are needed -===//
//
// Pass 3 of the register pipeline (DESIGN.md §3): a tkw.convert_layout
// goes away when what it converts can be computed again, cheaply, in the
// layout its users want (Triton's backward rematerialisation). A tile of
// pointers, which no thread can hand another, is computed again from its
// offsets, and what cannot be is converted there instead. A value a loop
// carries and converts on every trip (a walk of pointers continued from an
// earlier loop whose loads took another layout) is carried in the layout
// the trip wants instead: converted once before the loop, and once after it
// where its result is used.
//
//===----------------------------------------------------------------------===//

#include "LinearLayoutRules.h"

#include "tk/core/Analysis/AxisFacts.h"
#include "tk/core/Layout.h"
#include "tk/core/Layout/LayoutPresets.h"
#include "tk/core/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"

#include <algorithm>

#define DEBUG_TYPE "tk-remove-layout-conversions"

namespace tk {
#define GEN_PASS_DEF_TKREMOVELAYOUTCONVERSIONS
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;
using namespace tk;
using namespace tk::warp;

namespace {

/// Past this many ops a conversion is cheaper than computing again.
constexpr size_t kMaxRematerializedOps = 32;

/// How many consecutive elements (along the dimension its registers run)
/// one warp instruction of a load in `layout` covers, each lane moving at
/// most `vector`
/// consecutive elements: the lane's run (its first registers, as far as
/// they are consecutive and `vector` allows), then as many lanes as
/// continue it.
/// `memory` has its outputs in memory order, the run's dimension first
/// (getMemoryRunOrder), so that a flat output is the offset along it;
/// register and lane are the first two inputs, so register bit b is flat
/// input 1 << b and lane bit b follows them.
int64_t warpContiguity(const LinearLayout &memory, int64_t vector) {
  int32_t registerBits = memory.getInDimSizeLog2(kRegisterDim);
  int64_t covered = 1;
  for (int32_t bit = 0; bit < registerBits; ++bit) {
    if (covered >= vector ||
        memory.applyFlat(uint64_t(1) << bit) != uint64_t(covered))
      break;
    covered *= 2;
  }
  for (int32_t bit = 0; bit < memory.getInDimSizeLog2(kLaneDim); ++bit) {
    if (memory.applyFlat(uint64_t(1) << (registerBits + bit)) !=
        uint64_t(covered))
      break;
    covered *= 2;
  }
  return covered;
}

/// The bytes of one warp's access that fill a line of memory whole: an
/// access coalesced this far is as good as any wider one for memory, and
/// issuing it again is cheaper than a round trip through workgroup memory.
constexpr int64_t kCoalescedBytes = 128;

/// Whether `load` (in its layout) may be issued in `layout` instead. As
/// Triton judges (isExpensiveLoadOrStore): a tile of no more elements than
/// the workgroup has threads is cheap, its copies hit the cache; a larger
/// one only where `layout` coalesces it no worse, each along the dimension
/// its registers run (AxisFacts along it), counting up to kCoalescedBytes
/// a warp instruction. Past Triton: a layernorm whose rows are at a stride
/// known only at run time loads x an element a lane, and its weights and
/// bias, whose alignment is known, 16 bytes a lane; both fill 128-byte
/// lines, so the weights load in x's layout instead of converting x there
/// and back.
bool mayLoadIn(LoadOp load, const LinearLayout &layout) {
  auto type = dyn_cast<RankedTensorType>(load.getType());
  auto current = dyn_cast_or_null<LinearLayoutAttr>(getLayout(type));
  if (!type || !current || load.getIsVolatile() ||
      !isa<RankedTensorType>(load.getPtr().getType()))
    return false;
  if (type.getNumElements() <= current.getNumLanes() * current.getNumWarps())
    return true;
  int64_t bytes =
      std::max<int64_t>(type.getElementType().getIntOrFloatBitWidth() / 8, 1);
  auto coalesced = [&](const LinearLayout &candidate) {
    auto [dim, memory] = getMemoryRunOrder(candidate);
    if (dim < 0)
      return bytes;
    AxisFacts facts = getAxisFactsAlong(load.getPtr(), dim);
    int64_t vector = std::min<int64_t>(
        facts.contiguity, std::max<int64_t>(facts.divisibility / bytes, 1));
    // Lanes continue a run only as far as memory is contiguous.
    return std::min(std::min(warpContiguity(memory, vector), facts.contiguity) *
                        bytes,
                    kCoalescedBytes);
  };
  return coalesced(layout) >= coalesced(current.getLinearLayout());
}

/// How deep a cheap expression may be. A mask such as `(rows[:, None] < M)
/// & (cols[None, :] < N)` is seven ops from its ranges (and, broadcast,
/// compare, expand, add, range); converting it instead costs a round trip
/// through workgroup memory and a barrier.
constexpr int kMaxCheapDepth = 8;

/// Ranges, splats, dense constants, and element-wise work on them: cheap
/// enough to compute twice.
bool isCheap(Operation *op, int depth = 0) {
  if (!op || depth > kMaxCheapDepth || op->getNumRegions() != 0)
    return false;
  if (isa<MakeRangeOp, SplatOp, arith::ConstantOp>(op))
    return true;
  if (auto load = dyn_cast<LoadOp>(op)) {
    auto type = dyn_cast<RankedTensorType>(load.getType());
    auto layout = dyn_cast_or_null<LinearLayoutAttr>(getLayout(type));
    if (!layout ||
        type.getNumElements() > layout.getNumLanes() * layout.getNumWarps())
      return false;
  } else if (!isMemoryEffectFree(op) ||
             !(isSameLayoutOp(op) || isa<ExpandDimsOp, BroadcastOp>(op))) {
    return false;
  }
  return llvm::all_of(op->getOperands(), [&](Value operand) {
    return !isTileLike(operand.getType()) ||
           isCheap(operand.getDefiningOp(), depth + 1);
  });
}

/// What computing one conversion's source again in the wanted layout
/// takes: the ops, in an order that defines before it uses, and the
/// layout each value is wanted in.
struct Rematerialization {
  SmallVector<Operation *> ops;
  DenseMap<Value, Attribute> wanted;
  /// Values converted where they are defined, to the layout `wanted` says.
  SmallVector<Value> converted;
};

/// A tile of pointers: the register pipeline moves none between threads.
bool isPointerTile(Value value) {
  auto tile = dyn_cast<RankedTensorType>(value.getType());
  return tile && isa<PtrType>(tile.getElementType());
}

class Rematerializer {
public:
  explicit Rematerializer(const LinearLayoutRules &rules) : rules(rules) {}

  /// Plans `value` in `layout`; false where some op on the way cannot be
  /// computed in it. With `convertOperands`, an operand (not of pointers)
  /// that cannot be computed in its layout is converted where it is.
  bool plan(Value value, Attribute layout, Rematerialization &result,
            bool convertOperands = false) {
    if (!isTileLike(value.getType()) || getLayout(value.getType()) == layout)
      return true;
    if (auto it = result.wanted.find(value); it != result.wanted.end())
      return it->second == layout;
    Operation *op = value.getDefiningOp();
    if (!op || op->getNumRegions() != 0 || op->getNumResults() != 1 ||
        result.ops.size() >= kMaxRematerializedOps)
      return false;
    // Through a conversion: its source is wanted in the layout directly.
    if (auto convert = dyn_cast<ConvertLayoutOp>(op)) {
      result.wanted[value] = layout;
      return plan(convert.getSrc(), layout, result);
    }
    auto linear = dyn_cast<LinearLayoutAttr>(layout);
    if (auto load = dyn_cast<LoadOp>(op)) {
      if (!linear || !mayLoadIn(load, linear.getLinearLayout()))
        return false;
    } else if (!isMemoryEffectFree(op)) {
      return false;
    }
    SmallVector<std::pair<Value, Attribute>> operands;
    if (isSameLayoutOp(op)) {
      for (Value operand : op->getOperands())
        operands.push_back({operand, layout});
    } else if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
      operands.push_back(
          {expand.getSrc(), rules.expandDimsSource(layout, expand.getAxis())});
    } else if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      operands.push_back(
          {broadcast.getSrc(),
           rules.broadcastSource(layout,
                                 getTileShape(broadcast.getSrc().getType()))});
    } else {
      return false;
    }
    result.wanted[value] = layout;
    for (auto [operand, operandLayout] : operands) {
      if (!operandLayout)
        return false;
      if (!convertOperands || isPointerTile(operand)) {
        if (!plan(operand, operandLayout, result, convertOperands))
          return false;
        continue;
      }
      Rematerialization attempt = result;
      if (plan(operand, operandLayout, attempt, convertOperands)) {
        result = std::move(attempt);
      } else if (!result.wanted.count(operand)) {
        result.wanted[operand] = operandLayout;
        result.converted.push_back(operand);
      } else if (result.wanted.lookup(operand) != operandLayout) {
        return false;
      }
    }
    result.ops.push_back(op);
    return true;
  }

private:
  const LinearLayoutRules &rules;
};

struct RemoveLayoutConversionsPass
    : public tk::impl::TkRemoveLayoutConversionsBase<
          RemoveLayoutConversionsPass> {
  void runOnOperation() override {
    FuncOp func = getOperation();
    LinearLayoutRules rules(&getContext());
    Rematerializer rematerializer(rules);
    func.walk([&](scf::ForOp loop) {
      for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i)
        carryInConvertedLayout(loop, i, rematerializer);
    });
    SmallVector<ConvertLayoutOp> converts;
    func.walk([&](ConvertLayoutOp convert) { converts.push_back(convert); });
    SmallPtrSet<Operation *, 16> erased;
    for (ConvertLayoutOp convert : converts) {
      if (erased.contains(convert))
        continue;
      Value source = convert.getSrc();
      // Between equal layouts there is nothing to move.
      if (source.getType() == convert.getType()) {
        convert.replaceAllUsesWith(source);
        erased.insert(convert);
        convert.erase();
        continue;
      }
      Attribute layout = getLayout(convert.getType());
      if (!isa_and_present<LinearLayoutAttr>(layout) ||
          !isa_and_present<LinearLayoutAttr>(getLayout(source.getType())))
        continue;
      Rematerialization plan;
      if (!rematerializer.plan(source, layout, plan,
                               /*convertOperands=*/isPointerTile(source)) ||
          !computesNothingTwice(plan, convert)) {
        LLVM_DEBUG(llvm::dbgs() << "kept " << convert << "\n");
        continue;
      }
      // The conversions planned through, taken before anything is erased.
      SmallVector<Operation *> inner;
      for (auto &[value, wanted] : plan.wanted)
        if (auto through = value.getDefiningOp<ConvertLayoutOp>())
          inner.push_back(through);
      Value remade = apply(plan, source);
      convert.replaceAllUsesWith(remade);
      erased.insert(convert);
      convert.erase();
      // The originals and the conversions planned through that nothing
      // uses any more; erasing one may free another, so until none is.
      SmallVector<Operation *> candidates(plan.ops);
      candidates.append(inner.begin(), inner.end());
      for (bool changed = true; changed;) {
        changed = false;
        for (Operation *op : candidates)
          if (!erased.contains(op) && op->use_empty()) {
            erased.insert(op);
            op->erase();
            changed = true;
          }
      }
    }
  }

  /// Where iteration argument `index` of `loop` is used only by conversions
  /// to one layout and by the one same-layout op that makes its next value
  /// (`p + step`), the loop carries it in that layout: its initial value is
  /// converted before the loop, the op computes in it (its other operands
  /// computed again in it, cheaply, or not at all), and the result is
  /// converted back after the loop where something uses it. A conversion
  /// of pointers, through workgroup memory, then runs once, not every trip.
  static void carryInConvertedLayout(scf::ForOp loop, unsigned index,
                                     Rematerializer &rematerializer) {
    BlockArgument carried = loop.getRegionIterArgs()[index];
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    Operation *next = yield.getOperand(index).getDefiningOp();
    Type carriedType = carried.getType();
    if (!isa_and_present<LinearLayoutAttr>(getLayout(carriedType)) || !next ||
        next->getBlock() != loop.getBody() || next->getNumResults() != 1 ||
        !isSameLayoutOp(next) || !isMemoryEffectFree(next) ||
        !next->getResult(0).hasOneUse())
      return;
    SmallVector<ConvertLayoutOp> converts;
    for (Operation *user : carried.getUsers()) {
      if (auto convert = dyn_cast<ConvertLayoutOp>(user)) {
        converts.push_back(convert);
        continue;
      }
      if (user != next)
        return;
    }
    if (converts.empty() ||
        llvm::any_of(converts, [&](ConvertLayoutOp convert) {
          return convert.getType() != converts.front().getType();
        }))
      return;
    Type wantedType = converts.front().getType();
    Attribute wanted = getLayout(wantedType);
    if (!isa_and_present<LinearLayoutAttr>(wanted))
      return;
    // The step and anything else the op reads, in the wanted layout.
    SmallVector<std::pair<unsigned, Rematerialization>> operands;
    for (OpOperand &operand : next->getOpOperands()) {
      if (operand.get() == carried || !isTileLike(operand.get().getType()))
        continue;
      Rematerialization plan;
      if (!rematerializer.plan(operand.get(), wanted, plan,
                               /*convertOperands=*/true) ||
          !llvm::all_of(plan.ops, [](Operation *op) { return isCheap(op); }))
        return;
      operands.push_back({operand.getOperandNumber(), std::move(plan)});
    }

    for (auto &[number, plan] : operands)
      next->setOperand(number, apply(plan, next->getOperand(number)));
    OpBuilder builder(loop);
    OpOperand &init = loop.getInitsMutable()[index];
    init.set(ConvertLayoutOp::create(builder, loop.getLoc(), wantedType,
                                     init.get()));
    carried.setType(wantedType);
    for (ConvertLayoutOp convert : converts) {
      convert.replaceAllUsesWith(carried);
      convert.erase();
    }
    next->getResult(0).setType(wantedType);
    OpResult result = loop->getResult(index);
    result.setType(wantedType);
    if (!result.use_empty()) {
      builder.setInsertionPointAfter(loop);
      auto back =
          ConvertLayoutOp::create(builder, loop.getLoc(), carriedType, result);
      result.replaceAllUsesExcept(back, back);
    }
  }

  /// True unless an op of `plan` that is not cheap also feeds something
  /// outside the plan (it would then run in both layouts).
  static bool computesNothingTwice(const Rematerialization &plan,
                                   ConvertLayoutOp convert) {
    SmallPtrSet<Operation *, 16> inPlan(plan.ops.begin(), plan.ops.end());
    for (Operation *op : plan.ops) {
      if (isCheap(op))
        continue;
      for (Operation *user : op->getUsers())
        if (user != convert.getOperation() && !inPlan.contains(user))
          return false;
    }
    return true;
  }

  /// Computes `plan`'s ops again in their wanted layouts, each right after
  /// its original; returns `source` so computed.
  static Value apply(const Rematerialization &plan, Value source) {
    IRMapping mapping;
    auto lookup = [&](Value value) {
      // A conversion planned through stands for its source.
      while (!mapping.contains(value))
        if (auto convert = value.getDefiningOp<ConvertLayoutOp>();
            convert && plan.wanted.count(value))
          value = convert.getSrc();
        else
          break;
      return mapping.lookupOrDefault(value);
    };
    for (Value value : plan.converted) {
      OpBuilder builder(value.getContext());
      builder.setInsertionPointAfterValue(value);
      Value converted = ConvertLayoutOp::create(
          builder, value.getLoc(),
          withLayout(value.getType(), plan.wanted.lookup(value)), value);
      mapping.map(value, converted);
    }
    for (Operation *op : plan.ops) {
      OpBuilder builder(op->getContext());
      builder.setInsertionPointAfter(op);
      IRMapping operands;
      for (Value operand : op->getOperands())
        operands.map(operand, lookup(operand));
      Operation *clone = builder.clone(*op, operands);
      Value result = clone->getResult(0);
      result.setType(
          withLayout(result.getType(), plan.wanted.lookup(op->getResult(0))));
      if (auto constant = dyn_cast<arith::ConstantOp>(clone))
        constant.setValueAttr(
            cast<DenseElementsAttr>(constant.getValue())
                .reshape(cast<ShapedType>(constant.getType())));
      mapping.map(op->getResult(0), result);
    }
    return lookup(source);
  }
};

} // namespace
