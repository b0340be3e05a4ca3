//===- Loops.cpp - loops and what they carry --------------------*- C++ -*-===//
//
// The lowering of scf.for and scf.if: loop-carried scalars, block pointers,
// pointer walks carried as one offset, and tiles in buffers.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

using namespace mlir;

namespace mlir::tk_to_loops {

FailureOr<Value> KernelLowering::walkStepOf(const LoopCarry &loop, unsigned i) {
  FailureOr<Value> step = scalar(loop.walkSteps[i]);
  if (failed(step) || step->getType() == b.getI64Type())
    return step;
  return Value(arith::ExtSIOp::create(b, loc, b.getI64Type(), *step));
}

LogicalResult KernelLowering::lowerFor(scf::ForOp loop) {
  // Scalars and block-pointer components are loop-carried SSA values; tiles
  // live in one buffer per iteration argument, updated at the yield, except
  // for pointer walks (one scalar offset).
  unsigned numArgs = loop.getNumRegionIterArgs();
  LoopCarry carry;
  carry.source = loop;
  carry.kinds.assign(numArgs, Carried::Scalar);
  carry.walkSteps.resize(numArgs);
  carry.numValues.assign(numArgs, 1);
  SmallVector<Carried> &kinds = carry.kinds;
  SmallVector<Value> &walkSteps = carry.walkSteps;
  SmallVector<unsigned> &numValues = carry.numValues;
  SmallVector<Value> inits;
  SmallVector<Value> iterBuffers(numArgs);
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
  SmallVector<unsigned> &firstValue = carry.firstValue;
  firstValue.assign(numArgs, 0);
  for (unsigned i = 1; i < numArgs; ++i)
    firstValue[i] = firstValue[i - 1] + numValues[i - 1];
  carry.lb = *lb;
  carry.ub = *ub;
  carry.step = *step;

  OpBuilder::InsertionGuard afterLoop(b);
  auto newLoop = scf::ForOp::create(b, loc, *lb, *ub, *step, inits);
  Block *body = newLoop.getBody();
  llvm::SaveAndRestore<scf::ForOp> savedSourceLoop(sourceLoop, loop);
  llvm::SaveAndRestore<Operation *> savedLoweredLoop(loweredLoop,
                                                     newLoop.getOperation());
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
    for (Operation &op : oldBody.without_terminator()) {
      loc = op.getLoc();
      if (failed(lowerOp(&op)))
        return failure();
    }
    auto yield = cast<scf::YieldOp>(oldBody.getTerminator());
    loc = yield.getLoc();
    // Tiles first go to temporaries when the new value reads another
    // iteration buffer (or its own at a moved index), then to the buffers.
    SmallVector<Value> yielded;
    struct Copy {
      Value from, to;
    };
    SmallVector<Copy> copies;
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
        FailureOr<Value> stepBy = walkStepOf(carry, i);
        if (failed(stepBy))
          return failure();
        Value offset = body->getArgument(1 + firstValue[i]);
        yielded.push_back(arith::AddIOp::create(b, loc, offset, *stepBy));
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
    for (const Copy &copy : copies)
      memref::CopyOp::create(b, loc, copy.from, copy.to);
    if (!body->empty() && body->back().hasTrait<OpTrait::IsTerminator>())
      body->back().erase();
    b.setInsertionPointToEnd(body);
    scf::YieldOp::create(b, loc, yielded);
  }
  for (auto [i, result] : llvm::enumerate(loop.getResults()))
    bind(result, i, newLoop.getResults());
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
