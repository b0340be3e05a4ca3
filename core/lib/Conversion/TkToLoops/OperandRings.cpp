//===- OperandRings.cpp - dot operands copied trips ahead -------*- C++ -*-===//
//
// Software pipelining over num_stages, the GPU's OperandPipeline: the
// operand loads of held products that tk-pipeline-operands gave a ring
// (#tkw.ring) are copied by the backend's async copies (cp.async)
// num_stages - 1 trips ahead into a ring of num_stages slots of workgroup
// memory, which the products then read. lowerFor (Loops.cpp) drives it:
// the first trips' copies before the loop, each trip's wait and its copies
// ahead, and the wait for the last ones after it.
//
//===----------------------------------------------------------------------===//

#include "SIMTKernelLowering.h"
#include "tk/core/Layout.h"

using namespace mlir;

namespace mlir::tk_to_loops {

/// One loop's rings and where the trips stand in them.
class SIMTKernelLowering::OperandRings final
    : public KernelLowering::OperandPipeline {
public:
  OperandRings(SIMTKernelLowering &lowering, const LoopCarry &carry)
      : lowering(lowering), carry(carry) {}

  /// A ring: the slots one operand load's copies fill.
  struct Prefetched {
    tk::LoadOp load;
    /// The dot operand the slots hold: the load's tile, or its transpose
    /// (attention's k^T) in the unit's layout.
    Value tile;
    bool transposed = false;
    int64_t runBytes = 0;
    SmallVector<Value> slots;
    /// The unit's layout the slots have (its conversion's), if the unit
    /// lays out its operands, and the operand's shape.
    std::optional<tk::SharedLayout> layout;
    std::array<int64_t, 2> shape = {0, 0};
    /// The facts of the pointer tile prove every run contiguous and
    /// aligned.
    bool runsProven = false;
  };
  SmallVector<Prefetched> prefetched;

  /// Trip t issues the copies of trip t + ahead into the slot of trip
  /// t + ahead - numStages, at its top, once the barrier after its wait
  /// says every thread is done with that slot. Only a product updating a
  /// carried accumulator in place may still run when its trip ends
  /// (mayStayInFlight): then the slot of trip t - 1 is still read at the
  /// top of trip t, and the copies go one trip less ahead (or, with two
  /// stages, at the trip's end, after the barrier that follows its
  /// products).
  void decideWhenToIssue() {
    scf::ForOp loop = carry.source;
    bool previousMayRun = llvm::any_of(carry.heldDots, [&](tk::DotOp dot) {
      return dot && llvm::is_contained(loop.getRegionIterArgs(), dot.getAcc());
    });
    issueAtTop = !previousMayRun || lowering.numStages > 2;
    ahead = previousMayRun && issueAtTop ? lowering.numStages - 2
                                         : lowering.numStages - 1;
  }

  LogicalResult issuePrologue(ValueRange inits) override {
    // Trips 0 .. ahead - 1.
    OpBuilder &b = lowering.b;
    for (int64_t s = 0; s < ahead; ++s) {
      Value iv = arith::AddIOp::create(
          b, lowering.loc, carry.lb,
          arith::MulIOp::create(b, lowering.loc, carry.step, ivConst(s)));
      if (failed(issueTrip(ivConst(s), iv, inits, s)))
        return failure();
    }
    return success();
  }

  LogicalResult beginTrip(scf::ForOp lowered) override {
    OpBuilder &b = lowering.b;
    Location loc = lowering.loc;
    // With the copies issued at the top, the products' operands are not
    // written again before the next trip's barrier: they need no barrier
    // of their own (lowerHeldDot).
    savedAtTop = lowering.ringsWrittenAtTop;
    savedAtTopBody = lowering.ringsWrittenAtTopBody;
    lowering.ringsWrittenAtTop = issueAtTop;
    lowering.ringsWrittenAtTopBody = issueAtTop ? lowered.getBody() : nullptr;
    // Trip t waits for its own group (the ahead - 1 younger ones may stay
    // in flight) and for every thread's copies.
    Value iv = lowered.getInductionVar();
    trip = arith::DivSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, iv, carry.lb), carry.step);
    lowering.asyncCopy->wait(b, loc, ahead - 1);
    lowering.barrier();
    for (Prefetched &entry : prefetched) {
      lowering.buffers[entry.tile] = slotOfTrip(entry, trip);
      if (entry.layout)
        lowering.laidOutOperands.insert(entry.tile);
    }
    if (issueAtTop)
      return issueAhead(lowered);
    return success();
  }

  LogicalResult endTrip(scf::ForOp lowered) override {
    LogicalResult status = issueAtTop ? success() : issueAhead(lowered);
    lowering.ringsWrittenAtTop = savedAtTop;
    lowering.ringsWrittenAtTopBody = savedAtTopBody;
    return status;
  }

  /// With held accumulators (a ring is only for their products): where a
  /// product still running at the loop's exit meets the skipping path's
  /// copies of the initial registers, ptxas serialises every wgmma (its
  /// C7515).
  bool finishesInside() const override {
    return llvm::is_contained(carry.kinds, Carried::Held);
  }

  void finishProducts(MutableArrayRef<Value> values) override {
    for (auto [i, kind] : llvm::enumerate(carry.kinds)) {
      if (kind != Carried::Held)
        continue;
      MutableArrayRef<Value> held =
          values.slice(carry.firstValue[i], carry.numValues[i]);
      SmallVector<Value> registers = lowering.matrixUnit->finish(
          lowering.b, lowering.loc, *lowering.heldProduct(carry.heldDots[i]),
          SmallVector<Value>(held));
      llvm::copy(registers, held.begin());
    }
  }

  void finish() override {
    // No copy outlives the loop (the trips past its end issued none).
    lowering.asyncCopy->wait(lowering.b, lowering.loc, 0);
    // The rings are free for a later loop (its prologue writes them) once
    // every thread's products are done reading them.
    lowering.barrier();
    for (Prefetched &entry : prefetched)
      llvm::append_range(lowering.freeRingSlots, entry.slots);
  }

private:
  Value ivConst(int64_t v) {
    Type ivType = carry.lb.getType();
    return ivType.isIndex() ? lowering.constIndex(v)
                            : lowering.constInt(ivType, v);
  }

  /// The pointer walks `trips` trips after the ones at `offsets`.
  FailureOr<DenseMap<Value, PointerWalk>> walksAhead(ValueRange offsets,
                                                     int64_t trips) {
    OpBuilder &b = lowering.b;
    Location loc = lowering.loc;
    scf::ForOp loop = carry.source;
    DenseMap<Value, PointerWalk> result;
    for (unsigned i = 0; i < carry.kinds.size(); ++i) {
      if (carry.kinds[i] != Carried::Walk)
        continue;
      FailureOr<Value> stepBy = lowering.walkStepOf(carry, i);
      if (failed(stepBy))
        return failure();
      Value ahead = arith::MulIOp::create(
          b, loc, *stepBy, lowering.constInt(b.getI64Type(), trips));
      Value init = loop.getInitArgs()[i];
      auto outer = lowering.pointerWalks.find(init);
      result[loop.getRegionIterArgs()[i]] = PointerWalk{
          outer != lowering.pointerWalks.end() ? outer->second.start : init,
          arith::AddIOp::create(b, loc, offsets[carry.firstValue[i]], ahead)};
    }
    return result;
  }

  /// The slot of `entry`'s ring that trip `trip` (counted from 0) uses.
  Value slotOfTrip(const Prefetched &entry, Value trip) {
    OpBuilder &b = lowering.b;
    Location loc = lowering.loc;
    int64_t numStages = lowering.numStages;
    Value index = arith::RemSIOp::create(b, loc, trip, ivConst(numStages));
    Value slot = entry.slots[0];
    for (int64_t s = 1; s < numStages; ++s)
      slot = arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, index,
                                ivConst(s)),
          entry.slots[s], slot);
    return slot;
  }

  /// Issues the loads of trip `trip` (counted from 0, at induction value
  /// `iv`) into slot `trip % numStages` when `iv` is below the bound, then
  /// closes the group either way (every thread counts the same groups).
  LogicalResult issueTrip(Value trip, Value iv, ValueRange offsets,
                          int64_t tripsAhead) {
    OpBuilder &b = lowering.b;
    Location loc = lowering.loc;
    Value active =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv, carry.ub);
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
          return entry.layout->offset(b, loc, row, col, entry.shape);
        };
        if (failed(lowering.prefetch(
                carry.source, entry.load, slot, iv, *walks, entry.runBytes,
                entry.layout ? OffsetFn(offsetOf) : nullptr, entry.runsProven)))
          return failure();
      }
    }
    lowering.asyncCopy->commit(b, loc);
    return success();
  }

  /// The copies of the trip `ahead` trips after this one.
  LogicalResult issueAhead(scf::ForOp lowered) {
    OpBuilder &b = lowering.b;
    Location loc = lowering.loc;
    Value iv = lowered.getInductionVar();
    Value aheadTrip = arith::AddIOp::create(b, loc, trip, ivConst(ahead));
    Value aheadIv = arith::AddIOp::create(
        b, loc, iv, arith::MulIOp::create(b, loc, carry.step, ivConst(ahead)));
    return issueTrip(aheadTrip, aheadIv,
                     lowered.getBody()->getArguments().drop_front(1), ahead);
  }

  SIMTKernelLowering &lowering;
  const LoopCarry &carry;
  bool issueAtTop = true;
  int64_t ahead = 0;
  /// The trip (counted from 0) whose body is being lowered.
  Value trip;
  bool savedAtTop = false;
  Block *savedAtTopBody = nullptr;
};

FailureOr<std::unique_ptr<KernelLowering::OperandPipeline>>
SIMTKernelLowering::pipelineOperands(const LoopCarry &carry) {
  scf::ForOp loop = carry.source;
  // The facts of the loop's pointer walks: their start advanced by steps.
  auto walkFacts = [&](BlockArgument arg) -> std::optional<tk::AxisFacts> {
    if (arg.getOwner() != loop.getBody() || arg == loop.getInductionVar())
      return std::nullopt;
    unsigned i = arg.getArgNumber() - 1;
    if (carry.kinds[i] != Carried::Walk || !carry.walkSteps[i])
      return std::nullopt;
    auto unknown = [](BlockArgument) -> std::optional<tk::AxisFacts> {
      return std::nullopt;
    };
    return tk::getWalkFacts(tk::getAxisFacts(loop.getInitArgs()[i], unknown),
                            tk::getAxisFacts(carry.walkSteps[i], unknown),
                            arg.getType());
  };
  auto pipeline = std::make_unique<OperandRings>(*this, carry);
  using Prefetched = OperandRings::Prefetched;
  if (asyncCopy && numStages > 1 &&
      llvm::is_contained(carry.kinds, Carried::Held)) {
    // The rings placeRings recorded, in the order it chose them: by
    // product in program order, A before B.
    for (Operation &op : loop.getBody()->without_terminator()) {
      auto dot = dyn_cast<tk::DotOp>(op);
      if (!dot)
        continue;
      for (unsigned index : {0u, 1u}) {
        Value operand = operandTile(dot, index);
        // A transposed load goes into the unit's layout at swapped
        // positions (the unit keeps runs of the source's rows together).
        auto trans = operand.getDefiningOp<tk::TransOp>();
        auto load =
            (trans ? trans.getSrc() : operand).getDefiningOp<tk::LoadOp>();
        auto ring = load ? rings.find(load) : rings.end();
        if (ring == rings.end() || ring->second.dot != dot ||
            ring->second.operand != index)
          continue;
        const OperandConversion *conversion = operandConversion(dot, index);
        bool laidOut = conversion != nullptr;
        bool transposed = static_cast<bool>(trans);
        if (transposed && !laidOut)
          return load.emitOpError(passName())
                 << ": its ring (" << tk::warp::TkwDialect::kRingAttrName
                 << ") is of a transposed operand, which only a unit that "
                    "lays out its operands takes";
        int64_t runBytes = 0;
        if (!canPrefetch(loop, load, carry.walkSteps, runBytes))
          return load.emitOpError(passName())
                 << ": its ring (" << tk::warp::TkwDialect::kRingAttrName
                 << ") cannot be filled trips ahead: its address, mask or "
                    "other value is not a function of the loop's pointer "
                    "walks and induction variable, or the loop writes "
                    "memory";
        int64_t elementBytes = cast<RankedTensorType>(load.getType())
                                   .getElementType()
                                   .getIntOrFloatBitWidth() /
                               8;
        // A copy moves a run of the load's rows: in the unit's layout those
        // must stay consecutive (along its contiguous dimension, within
        // one chunk).
        if (conversion &&
            (conversion->layout.contiguous != (transposed ? 0 : 1) ||
             conversion->layout.consecutiveRun() % (runBytes / elementBytes) !=
                 0))
          return load.emitOpError(passName())
                 << ": its ring (" << tk::warp::TkwDialect::kRingAttrName
                 << ") copies runs of " << runBytes
                 << " bytes, which the matrix unit's operand layout does "
                    "not keep together";
        auto type = cast<RankedTensorType>(operand.getType());
        Prefetched entry;
        entry.load = load;
        entry.tile = operand;
        entry.transposed = transposed;
        entry.runBytes = runBytes;
        if (conversion)
          entry.layout = conversion->layout;
        entry.shape = {type.getDimSize(0), type.getDimSize(1)};
        entry.runsProven = tk::runsAreContiguousAndAligned(
            tk::getAxisFacts(load.getPtr(), walkFacts), runBytes / elementBytes,
            elementBytes, runBytes);
        for (int64_t s = 0; s < numStages; ++s)
          entry.slots.push_back(
              laidOut ? ringSlot({type.getNumElements()}, type.getElementType(),
                                 conversion->layout.alignment)
                      : ringSlot(type.getShape(), type.getElementType(), 16));
        pipeline->prefetched.push_back(std::move(entry));
      }
    }
  }
  for (Operation &op : loop.getBody()->without_terminator())
    if (rings.count(&op) &&
        llvm::none_of(pipeline->prefetched, [&](const Prefetched &entry) {
          return entry.load == &op;
        }))
      return op.emitOpError(passName())
             << ": its ring (" << tk::warp::TkwDialect::kRingAttrName
             << ") is in a loop that holds no accumulator of the product, or "
                "on a target without async copies";
  if (pipeline->prefetched.empty())
    return std::unique_ptr<OperandPipeline>();
  pipeline->decideWhenToIssue();
  return std::unique_ptr<OperandPipeline>(std::move(pipeline));
}

Value SIMTKernelLowering::ringSlot(ArrayRef<int64_t> shape, Type elementType,
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

LogicalResult SIMTKernelLowering::prefetch(
    scf::ForOp loop, tk::LoadOp load, Value slot, Value iv,
    const DenseMap<Value, PointerWalk> &walks, int64_t runBytes,
    OffsetFn offsetOf, bool runsProven) {
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
        !isa_and_present<arith::ArithDialect>(op.getDialect()))
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

LogicalResult SIMTKernelLowering::copyRuns(tk::LoadOp load, Value slot,
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
        asyncCopy->copy(b, loc, slot, at, addresses.front(), runBytes, Value());
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
      asyncCopy->copy(b, loc, slot, at, addresses.front(), runBytes, Value());
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

} // namespace mlir::tk_to_loops
