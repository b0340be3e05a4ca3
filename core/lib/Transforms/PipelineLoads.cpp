//===- PipelineLoads.cpp - a loop's dot operands loaded one trip ahead ----===//
//
// Pass 5 of the register pipeline (DESIGN.md §3): the loads that feed a
// loop's dots are issued trips early, so that global memory's latency
// overlaps the products. Where the target copies asynchronously (cp.async),
// a load becomes a ring of num_stages slots of workgroup memory, filled
// num_stages - 1 trips ahead, that the dot's operand is read from (Triton's
// pipeliner; one slot more where a warpgroup dot's products run on into
// the next trip); elsewhere it is issued one trip early and carried in
// registers.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Analysis/AsyncCopies.h"
#include "tk/core/DotOperands.h"
#include "tk/core/Layout.h"
#include "tk/core/LoopGuard.h"
#include "tk/core/Passes.h"
#include "tk/core/TargetInfo.h"
#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace tk {
#define GEN_PASS_DEF_TKPIPELINELOADS
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;
namespace tkw = tk::warp;

namespace {

/// What a thread may carry ahead per loop, in 32-bit registers.
constexpr int64_t kAheadRegisters = 64;

/// The 32-bit registers a thread holds of `type` (a tile in a #tkw.linear
/// layout); without a layout, the whole tile.
int64_t registersOf(Type type) {
  auto tile = cast<RankedTensorType>(type);
  int64_t elements = tile.getNumElements();
  if (auto layout =
          dyn_cast_or_null<tk::warp::LinearLayoutAttr>(tile.getEncoding()))
    elements = layout.getNumRegisters();
  int64_t bits = tile.getElementType().isIntOrFloat()
                     ? tile.getElementType().getIntOrFloatBitWidth()
                     : 64;
  return llvm::divideCeil(elements * bits, 32);
}

/// True when `value` reaches operand a or b of a tk.dot in `body`,
/// through ops of `body`.
bool feedsDot(Value value, Block *body) {
  SmallVector<Value> worklist = {value};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (!seen.insert(current).second)
      continue;
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() != body)
        continue;
      if (auto dot = dyn_cast<tk::DotOp>(user))
        if (use.get() == dot.getA() || use.get() == dot.getB())
          return true;
      if (user->getNumRegions() == 0)
        llvm::append_range(worklist, user->getResults());
    }
  }
  return false;
}

/// The ops of `body` that `roots` are computed from, in body order; fails
/// where one has side effects or regions (it cannot run a trip early).
FailureOr<SmallVector<Operation *>> backwardSlice(ValueRange roots,
                                                  Block *body) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist(roots.begin(), roots.end());
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != body || slice.contains(def))
      continue;
    if (def->getNumRegions() != 0 || !isMemoryEffectFree(def))
      return failure();
    slice.insert(def);
    llvm::append_range(worklist, def->getOperands());
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// Clones `load` and the ops it is computed from (`slice`) at `b`, with
/// `mapping` giving the loop's block arguments, and its mask ANDed with
/// `inRange` (an i1: the trip it loads for runs).
Value cloneLoad(OpBuilder &b, tk::LoadOp load, ArrayRef<Operation *> slice,
                IRMapping &mapping, Value inRange) {
  for (Operation *op : slice)
    b.clone(*op, mapping);
  auto tile = cast<RankedTensorType>(load.getType());
  auto maskType =
      RankedTensorType::get(tile.getShape(), b.getI1Type(), tile.getEncoding());
  Value mask = tk::SplatOp::create(b, load.getLoc(), maskType, inRange);
  if (Value old = load.getMask())
    mask = arith::AndIOp::create(b, load.getLoc(), mapping.lookupOrDefault(old),
                                 mask);
  auto clone = cast<tk::LoadOp>(b.clone(*load, mapping));
  clone.getMaskMutable().assign(mask);
  return clone.getResult();
}

/// `a < b` for the loop's induction type.
Value lessThan(OpBuilder &b, Location loc, Value a, Value bound) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, a, bound);
}

/// Whether `op` reads a block argument of `body` that `known` does not map.
bool readsUnknownArgument(Operation *op, Block *body, const IRMapping &known) {
  return llvm::any_of(op->getOperands(), [&](Value operand) {
    auto arg = dyn_cast<BlockArgument>(operand);
    return arg && arg.getOwner() == body && !known.contains(arg);
  });
}

void pipeline(scf::ForOp loop) {
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  Location loc = loop.getLoc();

  // Each iteration argument's value on the next trip, where it can be
  // computed at the start of this one: what the trip yields, if that is
  // defined outside the body, or computed without side effects from this
  // trip's arguments.
  OpBuilder start = OpBuilder::atBlockBegin(body);
  IRMapping next;
  Value nextIv =
      arith::AddIOp::create(start, loc, loop.getInductionVar(), loop.getStep());
  next.map(loop.getInductionVar(), nextIv);
  llvm::DenseMap<Value, SmallVector<Operation *>> yieldSlices;
  for (auto [arg, yielded] :
       llvm::zip_equal(loop.getRegionIterArgs(), yield.getOperands())) {
    Operation *def = yielded.getDefiningOp();
    if (!def || def->getBlock() != body) {
      next.map(arg, yielded);
      continue;
    }
    FailureOr<SmallVector<Operation *>> slice =
        backwardSlice(ValueRange{yielded}, body);
    if (failed(slice))
      continue;
    yieldSlices[arg] = std::move(*slice);
    next.map(arg, yielded); // replaced by the clone below
  }

  struct Candidate {
    tk::LoadOp load;
    SmallVector<Operation *> slice;
  };
  SmallVector<Candidate> candidates;
  int64_t registers = 0;
  for (Operation &op : body->without_terminator()) {
    auto load = dyn_cast<tk::LoadOp>(&op);
    if (!load || !isa<RankedTensorType>(load.getType()) ||
        !isa<RankedTensorType>(load.getPtr().getType()) ||
        load.getIsVolatile() || !feedsDot(load.getResult(), body))
      continue;
    FailureOr<SmallVector<Operation *>> slice =
        backwardSlice(load->getOperands(), body);
    if (failed(slice) || readsUnknownArgument(load, body, next) ||
        llvm::any_of(*slice, [&](Operation *op) {
          return readsUnknownArgument(op, body, next);
        }))
      continue;
    int64_t needed = registersOf(load.getType());
    if (registers + needed > kAheadRegisters)
      continue;
    registers += needed;
    candidates.push_back({load, std::move(*slice)});
  }
  if (candidates.empty()) {
    nextIv.getDefiningOp()->erase();
    return;
  }

  // The first trip's tiles, before the loop.
  OpBuilder before(loop);
  IRMapping first;
  first.map(loop.getInductionVar(), loop.getLowerBound());
  for (auto [arg, init] :
       llvm::zip_equal(loop.getRegionIterArgs(), loop.getInitArgs()))
    first.map(arg, init);
  Value runs =
      lessThan(before, loc, loop.getLowerBound(), loop.getUpperBound());
  SmallVector<Value> inits;
  for (Candidate &candidate : candidates)
    inits.push_back(
        cloneLoad(before, candidate.load, candidate.slice, first, runs));

  // The next trip's tiles, at the start of this one.
  start.setInsertionPointAfter(nextIv.getDefiningOp());
  // Only the arguments the chosen loads read, each computed once.
  llvm::SetVector<Value> read;
  for (Candidate &candidate : candidates) {
    SmallVector<Operation *> ops(candidate.slice);
    ops.push_back(candidate.load);
    for (Operation *op : ops)
      for (Value operand : op->getOperands())
        if (yieldSlices.count(operand))
          read.insert(operand);
  }
  IRMapping here;
  for (Value arg : read) {
    for (Operation *op : yieldSlices[arg])
      if (!here.contains(op->getResult(0)))
        start.clone(*op, here);
    next.map(arg, here.lookupOrDefault(next.lookup(arg)));
  }
  Value more = lessThan(start, loc, nextIv, loop.getUpperBound());
  SmallVector<Value> ahead;
  for (Candidate &candidate : candidates)
    ahead.push_back(
        cloneLoad(start, candidate.load, candidate.slice, next, more));

  IRRewriter rewriter(loop.getContext());
  rewriter.setInsertionPoint(loop);
  FailureOr<LoopLikeOpInterface> replaced = loop.replaceWithAdditionalYields(
      rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) { return ahead; });
  if (failed(replaced))
    return;
  // This trip's tiles are the carried ones.
  auto newLoop = cast<scf::ForOp>(replaced->getOperation());
  ArrayRef<BlockArgument> args = newLoop.getRegionIterArgs();
  for (auto [index, candidate] : llvm::enumerate(candidates))
    rewriter.replaceOp(candidate.load,
                       args[args.size() - candidates.size() + index]);
}

//===----------------------------------------------------------------------===//
// Rings of workgroup memory, filled by asynchronous copies
//===----------------------------------------------------------------------===//

/// A load whose tile fills a ring: it is operand `opIdx` of `dot`, alone or
/// through one tkw.convert_layout (`convert`), or through one tk.trans
/// (`trans`: a warpgroup dot reads the transposed slot in place), and the
/// dot reads it in `fragments` from the ring's slot (the slot's own shape
/// where it is transposed).
struct RingCandidate {
  tk::LoadOp load;
  SmallVector<Operation *> slice;
  tkw::ConvertLayoutOp convert;
  tk::TransOp trans;
  tk::DotOp dot;
  unsigned opIdx = 0;
  tk::MatrixIntrinsic intrinsic;
  RankedTensorType fragments;
  tkw::RingType ring;
};

/// True when `value` is zero: a constant or a splat of one.
bool isZero(Value value) {
  if (auto splat = value.getDefiningOp<tk::SplatOp>())
    value = splat.getSrc();
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return false;
  if (auto dense = dyn_cast<SplatElementsAttr>(attr))
    attr = dense.getSplatValue<Attribute>();
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return integer.getValue().isZero();
  if (auto real = dyn_cast<FloatAttr>(attr))
    return real.getValue().isPosZero();
  return false;
}

/// The dot operand `load` alone feeds, and the conversion or transpose
/// between them.
struct DotOperandUse {
  OpOperand *operand;
  tkw::ConvertLayoutOp convert;
  tk::TransOp trans;
};
std::optional<DotOperandUse> getDotOperand(tk::LoadOp load) {
  Value value = load.getResult();
  DotOperandUse use;
  if (!value.hasOneUse())
    return std::nullopt;
  Operation *user = *value.user_begin();
  if ((use.convert = dyn_cast<tkw::ConvertLayoutOp>(user)))
    value = use.convert.getResult();
  else if ((use.trans = dyn_cast<tk::TransOp>(user)))
    value = use.trans.getResult();
  if (!value.hasOneUse())
    return std::nullopt;
  use.operand = &*value.use_begin();
  auto dot = dyn_cast<tk::DotOp>(use.operand->getOwner());
  if (!dot || use.operand->getOperandNumber() > 1 ||
      dot->getBlock() != load->getBlock() ||
      (use.trans && use.trans->getBlock() != load->getBlock()))
    return std::nullopt;
  return use;
}

/// The ring `load` can fill for `target`, where it can.
std::optional<RingCandidate>
getRingCandidate(tk::LoadOp load, const tk::TargetInfo &target, int64_t slots) {
  auto tile = dyn_cast<RankedTensorType>(load.getType());
  if (!tile || !isa<RankedTensorType>(load.getPtr().getType()) ||
      load.getIsVolatile() || !tile.getElementType().isIntOrFloat() ||
      (load.getOther() && !isZero(load.getOther())))
    return std::nullopt;
  std::optional<DotOperandUse> operand = getDotOperand(load);
  if (!operand)
    return std::nullopt;
  auto dot = cast<tk::DotOp>(operand->operand->getOwner());
  unsigned opIdx = operand->operand->getOperandNumber();
  llvm::Expected<tk::DotOperandPlan> plan = tk::planDotOperands(dot, &target);
  if (!plan) {
    llvm::consumeError(plan.takeError());
    return std::nullopt;
  }
  auto *source = tk::warp::getLayout(load.getPtr().getType())
                     ? &cast<tkw::LinearLayoutAttr>(
                            tk::warp::getLayout(load.getPtr().getType()))
                            .getLinearLayout()
                     : nullptr;
  if (!plan->intrinsic || !source)
    return std::nullopt;
  int64_t bytes = tile.getElementType().getIntOrFloatBitWidth() / 8;
  if (bytes == 0)
    return std::nullopt;
  MLIRContext *ctx = load.getContext();
  Attribute layout;
  if (const std::optional<tk::DescriptorOperand> &descriptor =
          plan->descriptors[opIdx]) {
    // A warpgroup dot reads the slot where it lies, through a descriptor
    // (a transposed slot too, in its own dimensions).
    layout = tkw::NvmmaSharedAttr::get(
        ctx, descriptor->swizzleBytes,
        tk::getDescriptorSlotOrder(*descriptor, operand->trans
                                                    ? operand->trans.getOrder()
                                                    : ArrayRef<int32_t>()));
  } else if (operand->trans) {
    return std::nullopt;
  } else {
    llvm::Expected<tk::OperandSwizzle> swizzle = tk::getOperandSwizzle(
        tile.getShape(), bytes, *source, plan->fragments[opIdx],
        /*readersFirst=*/!target.transposingMatrixLoads);
    if (!swizzle) {
      llvm::consumeError(swizzle.takeError());
      return std::nullopt;
    }
    layout = tkw::SwizzledSharedAttr::get(
        ctx, swizzle->vec, swizzle->perPhase, swizzle->maxPhase,
        {swizzle->order[0], swizzle->order[1]});
  }
  auto ring = tkw::RingType::get(ctx, slots, tile.getShape(),
                                 tile.getElementType(), layout);
  llvm::Expected<tk::LinearLayout> slot = ring.getSlotLayout();
  if (!slot) {
    llvm::consumeError(slot.takeError());
    return std::nullopt;
  }
  if (tk::getAsyncCopyRun(load.getPtr(), load.getMask(), *slot).width == 0)
    return std::nullopt;
  RingCandidate candidate;
  candidate.load = load;
  candidate.convert = operand->convert;
  candidate.trans = operand->trans;
  candidate.dot = dot;
  candidate.opIdx = opIdx;
  candidate.intrinsic = *plan->intrinsic;
  // A transposed slot is read in the load's layout, which the transpose
  // carries to the dot's.
  candidate.fragments =
      operand->trans
          ? tile
          : RankedTensorType::get(
                tile.getShape(), tile.getElementType(),
                tkw::LinearLayoutAttr::get(ctx, plan->fragments[opIdx]));
  candidate.ring = ring;
  return candidate;
}

/// How the loop's iteration arguments that the rings' copies read advance
/// from trip to trip: the ops of the body that compute each one's next
/// value from this trip's (its yield slice), or, where the trip yields a
/// value defined outside the body, that value.
class ArgumentWalk {
public:
  /// Fails where a copy reads an argument whose next value is not
  /// computed that way.
  static FailureOr<ArgumentWalk> get(scf::ForOp loop,
                                     ArrayRef<RingCandidate> candidates) {
    ArgumentWalk walk;
    walk.loop = loop;
    Block *body = loop.getBody();
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    SmallVector<Value> worklist;
    auto readArguments = [&](ArrayRef<Operation *> ops) {
      for (Operation *op : ops)
        for (Value operand : op->getOperands())
          if (auto arg = dyn_cast<BlockArgument>(operand))
            if (arg.getOwner() == body && arg != loop.getInductionVar())
              worklist.push_back(arg);
    };
    for (const RingCandidate &candidate : candidates) {
      readArguments(candidate.slice);
      readArguments({candidate.load});
    }
    while (!worklist.empty()) {
      auto arg = cast<BlockArgument>(worklist.pop_back_val());
      if (!walk.args.insert(arg))
        continue;
      Value yielded = yield.getOperand(arg.getArgNumber() - 1);
      Operation *def = yielded.getDefiningOp();
      if (!def || def->getBlock() != body) {
        if (auto other = dyn_cast<BlockArgument>(yielded);
            other && other.getOwner() == body)
          return failure();
        continue;
      }
      FailureOr<SmallVector<Operation *>> slice =
          backwardSlice(ValueRange{yielded}, body);
      if (failed(slice))
        return failure();
      readArguments(*slice);
      walk.slices[arg] = std::move(*slice);
    }
    return walk;
  }

  /// The arguments' values on the trip after the one where they are
  /// `current` and the induction variable is `iv`, computed at `b`.
  SmallVector<Value> advance(OpBuilder &b, ValueRange current, Value iv) const {
    scf::ForOp loop = this->loop;
    Block *body = loop.getBody();
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    IRMapping mapping;
    mapping.map(loop.getInductionVar(), iv);
    for (auto [arg, value] : llvm::zip_equal(args, current))
      mapping.map(arg, value);
    SmallVector<Value> next;
    for (BlockArgument arg : args) {
      auto slice = slices.find(arg);
      if (slice != slices.end())
        for (Operation *op : slice->second)
          if (!mapping.contains(op->getResult(0)))
            b.clone(*op, mapping);
      next.push_back(
          mapping.lookupOrDefault(yield.getOperand(arg.getArgNumber() - 1)));
    }
    return next;
  }

  scf::ForOp loop;
  llvm::SetVector<BlockArgument> args;
  llvm::DenseMap<BlockArgument, SmallVector<Operation *>> slices;
};

/// `lb + trips * step`, at `b`.
Value tripStart(OpBuilder &b, Location loc, Value lb, Value step,
                int64_t trips) {
  if (trips == 0)
    return lb;
  Value count = arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(step.getType(), trips));
  return arith::AddIOp::create(b, loc, lb,
                               arith::MulIOp::create(b, loc, step, count));
}

/// Starts the copies of one trip, whose induction variable is `iv` and
/// iteration arguments `args` (ArgumentWalk::args's values), into slot
/// `slot`; a copy past the loop's end (`iv >= ub`) writes zeros.
void copyTrip(OpBuilder &b, Location loc, scf::ForOp loop,
              const ArgumentWalk &walk, ArrayRef<RingCandidate> candidates,
              ArrayRef<Value> rings, Value iv, ValueRange args, Value slot) {
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), iv);
  for (auto [arg, value] : llvm::zip_equal(walk.args, args))
    mapping.map(arg, value);
  Value inRange = lessThan(b, loc, iv, loop.getUpperBound());
  for (auto [candidate, ring] : llvm::zip_equal(candidates, rings)) {
    tk::LoadOp load = candidate.load;
    for (Operation *op : candidate.slice)
      if (!mapping.contains(op->getResult(0)))
        b.clone(*op, mapping);
    auto ptrType = cast<RankedTensorType>(load.getPtr().getType());
    auto maskType = RankedTensorType::get(ptrType.getShape(), b.getI1Type(),
                                          ptrType.getEncoding());
    Value mask = tk::SplatOp::create(b, loc, maskType, inRange);
    if (Value old = load.getMask())
      mask = arith::AndIOp::create(b, loc, mapping.lookupOrDefault(old), mask);
    tkw::AsyncCopyOp::create(b, loc, mapping.lookupOrDefault(load.getPtr()),
                             mask, ring, slot);
  }
  tkw::AsyncCommitOp::create(b, loc);
}

/// Reads the ring operands of `dot` (`reads`: by operand number) at `b`
/// (before the dot) from slot `slot`. Where both operands come from rings
/// and the accumulator is not a narrow float (rounded once, after all k),
/// the dot becomes one dot per step of its intrinsic's k, each reading its
/// own block of the slots just before its products, so that a thread holds
/// one step's fragments at a time. Otherwise each operand is read whole
/// (a warpgroup dot reads the whole slot in place).
void readRingOperands(OpBuilder &b, tk::DotOp dot,
                      ArrayRef<const RingCandidate *> reads,
                      ArrayRef<Value> rings, Value slot) {
  Location loc = dot.getLoc();
  auto acc = cast<RankedTensorType>(dot.getType());
  int64_t depth = cast<RankedTensorType>(dot.getA().getType()).getDimSize(1);
  const RingCandidate *a = nullptr, *bCandidate = nullptr;
  Value ringA, ringB;
  for (auto [candidate, ring] : llvm::zip_equal(reads, rings)) {
    (candidate->opIdx == 0 ? a : bCandidate) = candidate;
    (candidate->opIdx == 0 ? ringA : ringB) = ring;
  }
  int64_t step = a ? a->intrinsic.k : 0;
  auto accLayout = dyn_cast_or_null<tkw::LinearLayoutAttr>(acc.getEncoding());
  // A warpgroup intrinsic reads whole slots where they lie.
  bool split = a && bCandidate && accLayout && step > 0 && step < depth &&
               a->intrinsic.scope == tk::MatrixScope::Warp &&
               depth % step == 0 && !acc.getElementType().isF16() &&
               !acc.getElementType().isBF16();
  SmallVector<RankedTensorType> pieces;
  if (split)
    for (unsigned opIdx : {0u, 1u}) {
      llvm::Expected<tk::LinearLayout> layout = tk::getMatrixOperandLayout(
          accLayout.getLinearLayout(), a->intrinsic, opIdx, step);
      if (!layout) {
        llvm::consumeError(layout.takeError());
        split = false;
        break;
      }
      SmallVector<int64_t> shape =
          opIdx == 0 ? SmallVector<int64_t>{acc.getDimSize(0), step}
                     : SmallVector<int64_t>{step, acc.getDimSize(1)};
      pieces.push_back(RankedTensorType::get(
          shape, (opIdx == 0 ? a : bCandidate)->fragments.getElementType(),
          tkw::LinearLayoutAttr::get(b.getContext(), *layout)));
    }
  if (!split) {
    for (auto [candidate, ring] : llvm::zip_equal(reads, rings)) {
      if (tk::TransOp trans = candidate->trans) {
        OpBuilder atTrans(trans);
        trans.getSrcMutable().assign(tkw::LocalLoadOp::create(
            atTrans, loc, candidate->fragments, ring, slot));
        continue;
      }
      dot->setOperand(
          candidate->opIdx,
          tkw::LocalLoadOp::create(b, loc, candidate->fragments, ring, slot));
    }
    return;
  }
  Value sum = dot.getAcc();
  for (int64_t k = 0; k < depth; k += step) {
    auto blockA = tkw::LocalLoadOp::create(b, loc, pieces[0], ringA, slot);
    blockA.setOffsets({0, k});
    auto blockB = tkw::LocalLoadOp::create(b, loc, pieces[1], ringB, slot);
    blockB.setOffsets({k, 0});
    auto piece = cast<tk::DotOp>(b.clone(*dot));
    piece->setOperands({blockA, blockB, sum});
    sum = piece.getResult();
  }
  dot.getResult().replaceAllUsesWith(sum);
}

/// The dots of `loop` whose products may still run when the next trip
/// starts (Triton's asynchronous wgmma): warpgroup dots that read both
/// operands from ring slots where they lie (#tkw.nvmma), whose f32
/// accumulator the loop carries (iteration argument `index`) and nothing
/// else in the loop reads. Each trip then waits only for the previous
/// trip's products, which needs one more slot: the slot a trip fills is
/// then two trips from the one whose products may still read it.
SmallVector<std::pair<tk::DotOp, unsigned>>
getRunningDots(scf::ForOp loop, ArrayRef<RingCandidate> candidates) {
  llvm::MapVector<Operation *, int> inPlaceOperands;
  for (const RingCandidate &candidate : candidates)
    if (candidate.intrinsic.scope == tk::MatrixScope::Warpgroup &&
        isa<tkw::NvmmaSharedAttr>(candidate.ring.getLayout()))
      ++inPlaceOperands[candidate.dot];
  SmallVector<std::pair<tk::DotOp, unsigned>> running;
  for (auto [op, count] : inPlaceOperands) {
    auto dot = cast<tk::DotOp>(op);
    auto acc = dyn_cast<BlockArgument>(dot.getAcc());
    if (count != 2 || !acc || acc.getOwner() != loop.getBody() ||
        acc.getArgNumber() == 0 || !acc.hasOneUse() || !dot->hasOneUse() ||
        !getElementTypeOrSelf(dot.getType()).isF32())
      continue;
    unsigned index = acc.getArgNumber() - 1;
    OpOperand &use = *dot->getUses().begin();
    if (use.getOwner() != loop.getBody()->getTerminator() ||
        use.getOperandNumber() != index)
      continue;
    running.push_back({dot, index});
  }
  return running;
}

/// Marks the `running` dots of `loop` (getRunningDots) tkw.pending = 1 and
/// waits for their last products after the loop (tkw.dot_wait). Only a
/// loop that runs a trip leaves products running, and only that path
/// waits: the loop and the wait go under `lb < ub`. ptxas serialises every
/// wgmma of a kernel where other instructions run between a loop's exit
/// and that wait (C7514), and LLVM sinks the epilogue's compares to the top
/// of the block after the loop; under the branch the wait has a block of
/// its own.
void waitForRunningProducts(scf::ForOp loop,
                            ArrayRef<std::pair<tk::DotOp, unsigned>> running,
                            IRRewriter &rewriter) {
  Location loc = loop.getLoc();
  for (auto [dot, index] : running)
    dot->setAttr(tkw::TkwDialect::kPendingAttrName,
                 rewriter.getI64IntegerAttr(1));
  tk::guardByFirstTrip(rewriter, loop, [&](OpBuilder &b, ValueRange done) {
    SmallVector<Value> results(done);
    for (auto [dot, index] : running)
      results[index] =
          tkw::DotWaitOp::create(b, loc, results[index].getType(),
                                 results[index], b.getI64IntegerAttr(0));
    return results;
  });
}

/// Rewrites the loads of `loop` that can fill rings, `stages` (num_stages;
/// at least 2) trips in flight, Triton's pipeline:
///   before the loop, a ring per load and the copies of trips
///   0 .. stages-2, a group each;
///   each trip waits for its own group, starts the copies of the trip
///   stages-1 ahead into the slot after the ones in flight, and reads its
///   own slot where its dot needs it (tk-insert-barriers orders the copies
///   after the previous trip's reads, and their completion before this
///   trip's reads: one barrier, since the two slots differ);
///   after the loop, a wait for the copies past its end.
/// A ring has `stages` slots, one more where a dot's products run on into
/// the next trip (getRunningDots): such a dot is marked tkw.pending = 1,
/// and its accumulator waited for after the loop (tkw.dot_wait).
void pipelineThroughRings(scf::ForOp loop, const tk::TargetInfo &target,
                          int64_t stages) {
  Block *body = loop.getBody();
  SmallVector<RingCandidate, 2> candidates;
  for (Operation &op : body->without_terminator()) {
    auto load = dyn_cast<tk::LoadOp>(&op);
    if (!load)
      continue;
    std::optional<RingCandidate> candidate =
        getRingCandidate(load, target, stages);
    if (!candidate)
      continue;
    FailureOr<SmallVector<Operation *>> slice =
        backwardSlice(load->getOperands(), body);
    if (failed(slice))
      continue;
    candidate->slice = std::move(*slice);
    candidates.push_back(std::move(*candidate));
  }
  if (candidates.empty())
    return;
  FailureOr<ArgumentWalk> walk = ArgumentWalk::get(loop, candidates);
  if (failed(walk))
    return;
  // num_stages is an upper bound: as many stages as the target's
  // workgroup memory holds slots for, for all the loop's rings, at least
  // two (running products only where they leave two).
  int64_t slotBytes = 0;
  for (RingCandidate &candidate : candidates)
    slotBytes += llvm::alignTo(candidate.ring.getSlotBytes(), 16);
  int64_t fitting = target.sharedMemoryPerBlock / slotBytes;
  SmallVector<std::pair<tk::DotOp, unsigned>> running =
      getRunningDots(loop, candidates);
  if (std::min(stages, fitting - 1) < 2)
    running.clear();
  int64_t extra = running.empty() ? 0 : 1;
  stages = std::min(stages, fitting - extra);
  if (stages < 2)
    return;
  int64_t slots = stages + extra;
  for (RingCandidate &candidate : candidates) {
    tkw::RingType ring = candidate.ring;
    candidate.ring =
        tkw::RingType::get(ring.getContext(), slots, ring.getShape(),
                           ring.getElementType(), ring.getLayout());
  }

  // Before the loop: the rings, and trips 0 .. stages-2 in flight.
  Location loc = loop.getLoc();
  OpBuilder before(loop);
  SmallVector<Value> rings;
  for (RingCandidate &candidate : candidates)
    rings.push_back(tkw::LocalAllocOp::create(before, loc, candidate.ring));
  SmallVector<Value> args;
  for (BlockArgument arg : walk->args)
    args.push_back(loop.getInitArgs()[arg.getArgNumber() - 1]);
  Type i32 = before.getI32Type();
  auto constant = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, value);
  };
  for (int64_t trip = 0; trip + 1 < stages; ++trip) {
    Value iv =
        tripStart(before, loc, loop.getLowerBound(), loop.getStep(), trip);
    copyTrip(before, loc, loop, *walk, candidates, rings, iv, args,
             constant(before, trip));
    args = walk->advance(before, args, iv);
  }
  // The loop carries the iteration arguments of the trip stages-1 ahead
  // and the slot it reads; it fills the one stages-1 after, modulo slots
  // (the form tk-insert-barriers proves distinct from the read slot).
  SmallVector<Value> inits(args);
  inits.push_back(constant(before, 0));

  IRRewriter rewriter(loop.getContext());
  rewriter.setInsertionPoint(loop);
  FailureOr<LoopLikeOpInterface> replaced = loop.replaceWithAdditionalYields(
      rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument> added) {
        // The new loop's block, still empty: the body's ops are appended
        // to it after this, so what is built here runs first.
        Block *block = added.front().getOwner();
        OpBuilder b = OpBuilder::atBlockBegin(block);
        ValueRange ahead = ValueRange(added).drop_back();
        Value readSlot = added.back();
        auto modulo = [&](Value slot, int64_t plus) -> Value {
          return arith::RemUIOp::create(
              b, loc, arith::AddIOp::create(b, loc, slot, constant(b, plus)),
              constant(b, slots));
        };
        // This trip's group done, the trip stages-1 ahead started.
        tkw::AsyncWaitOp::create(b, loc, stages - 2);
        Value fillSlot = modulo(readSlot, stages - 1);
        Value iv = block->getArgument(0);
        Value aheadIv = tripStart(b, loc, iv, loop.getStep(), stages - 1);
        copyTrip(b, loc, loop, *walk, candidates, rings, aheadIv, ahead,
                 fillSlot);
        SmallVector<Value> yielded = walk->advance(b, ahead, aheadIv);
        yielded.push_back(modulo(readSlot, 1));
        // Each dot's operands from this trip's slot, where the dot is.
        llvm::MapVector<Operation *,
                        SmallVector<std::pair<const RingCandidate *, Value>>>
            byDot;
        for (auto [candidate, ring] : llvm::zip_equal(candidates, rings))
          byDot[candidate.dot].push_back({&candidate, ring});
        for (auto &[dot, reads] : byDot) {
          OpBuilder atDot(dot);
          SmallVector<const RingCandidate *> which;
          SmallVector<Value> from;
          for (auto [candidate, ring] : reads) {
            which.push_back(candidate);
            from.push_back(ring);
          }
          readRingOperands(atDot, cast<tk::DotOp>(dot), which, from, readSlot);
        }
        return yielded;
      });
  if (failed(replaced))
    return;
  // A dot split into steps, then what fed the loads.
  llvm::SetVector<Operation *> split;
  for (RingCandidate &candidate : candidates)
    if (candidate.dot->use_empty())
      split.insert(candidate.dot);
  for (Operation *dot : split)
    rewriter.eraseOp(dot);
  for (RingCandidate &candidate : candidates) {
    if (candidate.convert)
      rewriter.eraseOp(candidate.convert);
    rewriter.eraseOp(candidate.load);
  }
  // No copy lands after the loop, where its memory may serve another
  // buffer, nor a product still runs where its accumulator is read.
  auto newLoop = cast<scf::ForOp>(replaced->getOperation());
  if (!running.empty())
    waitForRunningProducts(newLoop, running, rewriter);
  // After the loop, or the branch it went under.
  rewriter.setInsertionPointAfter(running.empty() ? newLoop.getOperation()
                                                  : newLoop->getParentOp());
  tkw::AsyncWaitOp::create(rewriter, loc, 0);
}

struct PipelineLoadsPass
    : public tk::impl::TkPipelineLoadsBase<PipelineLoadsPass> {
  using TkPipelineLoadsBase::TkPipelineLoadsBase;

  void runOnOperation() override {
    if (numStages < 2)
      return;
    // Rings where the target copies asynchronously.
    std::optional<tk::TargetInfo> target;
    std::string spec = tk::warp::getTargetSpec(getOperation(), "");
    if (!spec.empty()) {
      std::string error;
      target = tk::TargetInfo::parse(spec, error);
    }
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    if (target && target->hasAsyncCopy)
      for (scf::ForOp loop : loops)
        pipelineThroughRings(loop, *target, numStages);
    // The loads left, one trip ahead in registers.
    loops.clear();
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      pipeline(loop);
  }
};

} // namespace
