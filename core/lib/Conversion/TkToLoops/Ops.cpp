//===- Ops.cpp - the walk over a kernel and its ops -------------*- C++ -*-===//
//
// KernelLowering::run and the dispatch over ops; stores (with all-on mask
// versioning), the plan of a dot, atomics, prints and asserts. Reductions,
// scans and dots are the loop nests of HostNests.cpp.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "tk/core/Analysis/MaskBounds.h"

using namespace mlir;

namespace mlir::tk_to_loops {

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult KernelLowering::run() {
  // Which tiles get a buffer, before any op is lowered.
  analyze();
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
  bindGridPosition(numArgs);
  if (!llvm::hasSingleElement(source.getBody()))
    return source.emitOpError(passName() +
                              ": a kernel body must be a "
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
  // Element-wise tiles: computed where they are consumed, unless the
  // analysis gave them a buffer.
  if (isElementwiseLike(op)) {
    if (!materialized.count(op))
      return success();
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
        for (auto [linear, attr] : llvm::enumerate(values)) {
          SmallVector<Value> index;
          for (int64_t d = 0; d < type.getRank(); ++d)
            index.push_back(
                constIndex((linear / strides[d]) % type.getDimSize(d)));
          storeBuffer(arith::ConstantOp::create(b, loc, cast<TypedAttr>(attr)),
                      buffer, index);
        }
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
          return advance.emitOpError(passName() + ": unknown block "
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
      .Case([&](tk::warp::ConvertLayoutOp convert) {
        return convert.emitOpError(passName())
               << ": the CPU form has no layouts to convert between (one "
                  "thread holds every tile)";
      })
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
                LLVM::GEPOp::create(b, loc, ptrType, tk::getMemoryType(pointee),
                                    *base, ValueRange{*offset}));
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
      !isa_and_present<arith::ArithDialect, math::MathDialect>(
          op->getDialect()))
    return op->emitOpError(passName() + ": the lowering supports tk, arith, "
                                        "math and scf ops here, not this one");
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
  // One element: its value (and any load fused into it), then its store,
  // under its mask where the mask is not known to be on.
  auto storeOne = [&](ArrayRef<Value> index) -> LogicalResult {
    Value address, guard;
    if (isBlockPtr(ptr.getType())) {
      auto it = blockPtrs.find(ptr);
      if (it == blockPtrs.end())
        return store.emitOpError(passName() + ": unknown block pointer");
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
    if (!guard || matchPattern(guard, m_One())) {
      tk::storeScalar(b, loc, *value, address, align);
      return success();
    }
    auto branch = scf::IfOp::create(b, loc, guard, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard insertion(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    tk::storeScalar(b, loc, *value, address, align);
    return success();
  };
  if (!isTile(store.getValue().getType()))
    return storeOne({});
  auto shape = cast<RankedTensorType>(store.getValue().getType()).getShape();
  Value mask = store.getMask();
  if (!mask || isBlockPtr(ptr.getType()) || !isTile(mask.getType()) ||
      !isCheap(mask))
    return forEachIndex(shape, storeOne);

  // Version the store on its mask. A branch per lane keeps LLVM to masked
  // vector loads and stores, which cost bandwidth on streaming kernels; most
  // programs of a grid have every lane on, so those run a loop nest without
  // the guard (and without the guards of loads fused into it that share the
  // mask). The mask is cheap by construction (integer arithmetic on scalars,
  // no memory), so evaluating it once more up front costs a few vector
  // instructions per tile: in O(1) for a bounds range, else one loop nest
  // that and-reduces it, which LLVM vectorises.
  Value full = rangeMaskAllTrue(mask);
  if (!full) {
    FailureOr<Value> reduced = allTrue(mask);
    if (failed(reduced))
      return failure();
    full = *reduced;
  }
  return versionOnMask(full, [&](Value on) {
    return forEachIndex(shape, [&](ArrayRef<Value> index) {
      if (on)
        assumeElement(mask, index, on);
      return storeOne(index);
    });
  });
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
  std::optional<tk::BoundCompare> compare =
      tk::getBoundCompare(mask.getDefiningOp());
  if (!compare)
    return nullptr;
  Value lhs = compare->offsets, rhs = compare->bound;
  bool isSigned = compare->isSigned, inclusive = compare->inclusive;
  // The offsets and bound of an expanded or broadcast compare are those of
  // the 1-D one.
  while (Value source = reshaped(lhs))
    lhs = source;
  while (Value source = reshaped(rhs))
    rhs = source;

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

FailureOr<KernelLowering::DotPlan> KernelLowering::planDot(tk::DotOp dot) {
  auto aType = cast<RankedTensorType>(dot.getA().getType());
  auto bType = cast<RankedTensorType>(dot.getB().getType());
  Type accElem = cast<RankedTensorType>(dot.getType()).getElementType();
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

LogicalResult KernelLowering::lowerAtomicRMW(tk::AtomicRMWOp rmw) {
  Type elem = getElementTypeOrSelf(rmw.getVal().getType());
  bool isFloat = isa<FloatType>(elem);
  LLVM::AtomicBinOp binOp = tk::toAtomicBinOp(rmw.getKind(), isFloat);
  LLVM::AtomicOrdering ordering = tk::toOrdering(rmw.getSem());
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
  return lowerAtomicElements(rmw, valueType, one);
}

LogicalResult KernelLowering::lowerAtomicElements(
    Operation *atomic, Type valueType,
    function_ref<FailureOr<Value>(ArrayRef<Value>)> one) {
  Value result = atomic->getResult(0);
  if (!isTile(result.getType())) {
    FailureOr<Value> old = one({});
    if (failed(old))
      return failure();
    scalars.map(result, *old);
    return success();
  }
  auto type = cast<RankedTensorType>(result.getType());
  Value buffer = allocBuffer(type);
  if (failed(forEachIndex(type.getShape(), [&](ArrayRef<Value> index) {
        FailureOr<Value> old = one(index);
        if (failed(old))
          return failure();
        storeBuffer(*old, buffer, index);
        return success();
      })))
    return failure();
  buffers[result] = buffer;
  return success();
}

LogicalResult KernelLowering::lowerAtomicCAS(tk::AtomicCASOp cas) {
  Type elem = getElementTypeOrSelf(cas.getVal().getType());
  LLVM::AtomicOrdering ordering = tk::toOrdering(cas.getSem());
  auto one = [&](ArrayRef<Value> index) -> FailureOr<Value> {
    FailureOr<Value> ptr = element(cas.getPtr(), index);
    FailureOr<Value> cmp = element(cas.getCmp(), index);
    FailureOr<Value> val = element(cas.getVal(), index);
    if (failed(ptr) || failed(cmp) || failed(val))
      return failure();
    return tk::emitCompareExchange(b, loc, *ptr, *cmp, *val, elem, ordering);
  };
  return lowerAtomicElements(cas, scalarType(elem), one);
}

LogicalResult KernelLowering::lowerPrint(tk::PrintOp print) {
  auto call = [&](StringRef format, ValueRange args) {
    emitPrintf(format, args);
  };
  call("pid (%d, %d, %d) " + print.getPrefix().str(),
       ValueRange{grid[0], grid[1], grid[2]});
  for (Value arg : print.getArgs()) {
    if (!isTile(arg.getType())) {
      FailureOr<Value> v = scalar(arg);
      if (failed(v))
        return failure();
      std::string spec;
      Value p = tk::promoteForPrintf(b, loc, *v, spec);
      call(" " + spec, p);
      continue;
    }
    auto shape = cast<RankedTensorType>(arg.getType()).getShape();
    if (failed(forEachIndex(shape, [&](ArrayRef<Value> index) {
          FailureOr<Value> v = element(arg, index);
          if (failed(v))
            return failure();
          std::string spec;
          Value p = tk::promoteForPrintf(b, loc, *v, spec);
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

} // namespace mlir::tk_to_loops
