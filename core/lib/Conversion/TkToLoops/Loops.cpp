//===- Loops.cpp - loops, held products, prefetch rings ---------*- C++ -*-===//
//
// Loop-carried tiles: pointer walks carried as one offset, dot accumulators
// held in a matrix unit's registers across the trips, operands prefetched
// trips ahead into rings of workgroup slots by async copies; and the
// lowering of scf.for and scf.if around them.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"
#include "tk/core/Layout.h"

using namespace mlir;

namespace mlir::tk_to_loops {

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
    return emitError(loc, passName() + ": the matrix unit gave no "
                                       "accumulator registers");
  return registers;
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
    return emitError(loc, passName() + ": the matrix unit gave ")
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

  // Software pipelining: the operand loads of held dots with a ring
  // (#tkw.ring, placeRings) are issued numStages - 1 trips ahead into a
  // ring of numStages buffers each.
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
        if (!canPrefetch(loop, load, walkSteps, runBytes))
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
        prefetched.push_back(std::move(entry));
      }
    }
  }
  for (Operation &op : loop.getBody()->without_terminator())
    if (rings.count(&op) &&
        llvm::none_of(prefetched, [&](const Prefetched &entry) {
          return entry.load == &op;
        }))
      return op.emitOpError(passName())
             << ": its ring (" << tk::warp::TkwDialect::kRingAttrName
             << ") is in a loop that holds no accumulator of the product, or "
                "on a target without async copies";
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
          return entry.layout->offset(b, loc, row, col, entry.shape);
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
  // Results; held accumulators stay in their registers (a
  // tkw.convert_layout after the loop moves one to workgroup memory).
  for (auto [i, result] : llvm::enumerate(loop.getResults())) {
    bind(result, i, results);
    if (kinds[i] != Carried::Held)
      continue;
    SmallVector<Value> registers = heldAccumulators.lookup(result);
    heldAccumulators.erase(result);
    if (!heldLoopResults.count(result))
      return loop.emitOpError(passName())
             << ": held accumulator " << i
             << " is read after the loop other than from its registers, "
                "without a tkw.convert_layout to workgroup memory";
    heldResults[result] =
        HeldResult{*heldProduct(heldDots[i]), std::move(registers)};
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

} // namespace mlir::tk_to_loops
