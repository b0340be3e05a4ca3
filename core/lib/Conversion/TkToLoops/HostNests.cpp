//===- HostNests.cpp - reductions, scans and dots on the CPU ----*- C++ -*-===//
//
// The ops that are not element-wise (reductions, scans, dots): serial loop
// nests that one host thread runs and LLVM vectorises, in loop orders
// chosen so that it need not reassociate floats.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

using namespace mlir;

namespace mlir::tk_to_loops {

LogicalResult KernelLowering::lowerReduce(tk::ReduceOp reduce) {
  auto srcType = cast<RankedTensorType>(reduce.getSrcs()[0].getType());
  int64_t rank = srcType.getRank();
  int64_t axis = reduce.getAxis();
  int64_t size = srcType.getDimSize(axis);
  SmallVector<int64_t> outer(srcType.getShape().take_front(axis));
  SmallVector<int64_t> inner(srcType.getShape().drop_front(axis + 1));
  unsigned numSrcs = reduce.getSrcs().size();
  // The sources' element types (tk.ptr where a buffer holds i64), and none
  // for the partial buffers, which loadBuffer leaves as stored.
  SmallVector<Type> srcTypes, noTypes(numSrcs);
  for (Value src : reduce.getSrcs())
    srcTypes.push_back(getElementTypeOrSelf(src.getType()));
  SmallVector<Type> elemTypes;
  for (Value src : reduce.getSrcs())
    elemTypes.push_back(
        scalarType(cast<RankedTensorType>(src.getType()).getElementType()));
  Region &combiner = reduce.getCombineOp();

  SmallVector<Value> resultBuffers;
  if (rank > 1)
    for (Value result : reduce.getResults())
      resultBuffers.push_back(
          allocBuffer(cast<RankedTensorType>(result.getType())));

  auto sourceIndex = [&](ArrayRef<Value> outerIndex, Value k,
                         ArrayRef<Value> innerIndex) {
    SmallVector<Value> index(outerIndex);
    index.push_back(k);
    llvm::append_range(index, innerIndex);
    return index;
  };
  auto elementsAt = [&](ArrayRef<Value> index) {
    return elements(reduce.getSrcs(), index);
  };

  if (axis == rank - 1) {
    // Innermost axis: kReductionLanes independent partial accumulators over
    // strided chunks, then a tree. Each lane's loop carries no dependence on
    // its neighbours, so the chunk loop vectorises as is.
    int64_t lanes = std::min(size, kReductionLanes);
    SmallVector<Value> partial;
    for (Type type : elemTypes)
      partial.push_back(allocBuffer({lanes}, type));
    SmallVector<Value> scalarsOut;
    LogicalResult status =
        forEachIndex(outer, [&](ArrayRef<Value> outerIndex) -> LogicalResult {
          // partial[w] = x[w]
          if (failed(forEachIndex({lanes}, [&](ArrayRef<Value> w) {
                auto values = elementsAt(sourceIndex(outerIndex, w[0], {}));
                if (failed(values))
                  return failure();
                storeBuffers(*values, partial, w);
                return success();
              })))
            return failure();
          if (size > lanes) {
            OpBuilder::InsertionGuard guard(b);
            auto chunks = scf::ForOp::create(
                b, loc, constIndex(lanes), constIndex(size), constIndex(lanes));
            b.setInsertionPointToStart(chunks.getBody());
            Value base = chunks.getInductionVar();
            if (failed(forEachIndex({lanes}, [&](ArrayRef<Value> w) {
                  Value k = arith::AddIOp::create(b, loc, base, w[0]);
                  auto values = elementsAt(sourceIndex(outerIndex, k, {}));
                  if (failed(values))
                    return failure();
                  return combineInto(combiner, partial, noTypes, w, *values, w);
                })))
              return failure();
          }
          for (int64_t half = lanes / 2; half >= 1; half /= 2) {
            if (failed(forEachIndex({half}, [&](ArrayRef<Value> w) {
                  Value other =
                      arith::AddIOp::create(b, loc, w[0], constIndex(half));
                  SmallVector<Value> acc = loadBuffers(partial, w, noTypes);
                  auto combined = combine(
                      combiner, acc, loadBuffers(partial, {other}, noTypes));
                  if (failed(combined))
                    return failure();
                  storeBuffers(*combined, partial, w);
                  return success();
                })))
              return failure();
          }
          Value zero = constIndex(0);
          for (unsigned s = 0; s < numSrcs; ++s) {
            Value stored = memref::LoadOp::create(b, loc, partial[s], zero);
            if (isa<LLVM::LLVMPointerType>(elemTypes[s]))
              stored = LLVM::IntToPtrOp::create(b, loc, ptrType, stored);
            if (rank > 1)
              storeBuffer(stored, resultBuffers[s], outerIndex);
            else
              scalarsOut.push_back(stored);
          }
          return success();
        });
    if (failed(status))
      return failure();
    for (unsigned s = 0; s < numSrcs; ++s) {
      if (rank > 1)
        buffers[reduce.getResult(s)] = resultBuffers[s];
      else
        scalars.map(reduce.getResult(s), scalarsOut[s]);
    }
    return success();
  }

  // Outer axis: the result buffers are the accumulators; the innermost loop
  // runs along contiguous elements of the remaining dimensions.
  LogicalResult status =
      forEachIndex(outer, [&](ArrayRef<Value> outerIndex) -> LogicalResult {
        if (failed(forEachIndex(inner, [&](ArrayRef<Value> innerIndex) {
              auto values = elementsAt(
                  sourceIndex(outerIndex, constIndex(0), innerIndex));
              if (failed(values))
                return failure();
              SmallVector<Value> out(outerIndex);
              llvm::append_range(out, innerIndex);
              storeBuffers(*values, resultBuffers, out);
              return success();
            })))
          return failure();
        OpBuilder::InsertionGuard guard(b);
        auto steps = scf::ForOp::create(b, loc, constIndex(1), constIndex(size),
                                        constIndex(1));
        b.setInsertionPointToStart(steps.getBody());
        Value k = steps.getInductionVar();
        return forEachIndex(inner, [&](ArrayRef<Value> innerIndex) {
          auto values = elementsAt(sourceIndex(outerIndex, k, innerIndex));
          if (failed(values))
            return failure();
          SmallVector<Value> out(outerIndex);
          llvm::append_range(out, innerIndex);
          return combineInto(combiner, resultBuffers, srcTypes, out, *values,
                             out);
        });
      });
  if (failed(status))
    return failure();
  for (unsigned s = 0; s < numSrcs; ++s)
    buffers[reduce.getResult(s)] = resultBuffers[s];
  return success();
}

LogicalResult KernelLowering::lowerScan(tk::ScanOp scan) {
  auto srcType = cast<RankedTensorType>(scan.getSrcs()[0].getType());
  int64_t axis = scan.getAxis();
  int64_t size = srcType.getDimSize(axis);
  bool reverse = scan.getReverse();
  SmallVector<int64_t> outer(srcType.getShape().take_front(axis));
  SmallVector<int64_t> inner(srcType.getShape().drop_front(axis + 1));
  unsigned numSrcs = scan.getSrcs().size();
  SmallVector<Type> srcTypes;
  for (Value src : scan.getSrcs())
    srcTypes.push_back(getElementTypeOrSelf(src.getType()));
  SmallVector<Value> out;
  for (Value result : scan.getResults())
    out.push_back(allocBuffer(cast<RankedTensorType>(result.getType())));

  auto at = [&](ArrayRef<Value> outerIndex, Value k,
                ArrayRef<Value> innerIndex) {
    SmallVector<Value> index(outerIndex);
    index.push_back(k);
    llvm::append_range(index, innerIndex);
    return index;
  };
  LogicalResult status =
      forEachIndex(outer, [&](ArrayRef<Value> outerIndex) -> LogicalResult {
        Value first = constIndex(reverse ? size - 1 : 0);
        if (failed(forEachIndex(inner, [&](ArrayRef<Value> innerIndex) {
              SmallVector<Value> index = at(outerIndex, first, innerIndex);
              FailureOr<SmallVector<Value>> values =
                  elements(scan.getSrcs(), index);
              if (failed(values))
                return failure();
              storeBuffers(*values, out, index);
              return success();
            })))
          return failure();
        if (size == 1)
          return success();
        OpBuilder::InsertionGuard guard(b);
        auto steps = scf::ForOp::create(b, loc, constIndex(1), constIndex(size),
                                        constIndex(1));
        b.setInsertionPointToStart(steps.getBody());
        Value k = steps.getInductionVar(), previous;
        if (reverse) {
          previous = arith::SubIOp::create(b, loc, constIndex(size), k);
          k = arith::SubIOp::create(b, loc, constIndex(size - 1), k);
        } else {
          previous = arith::SubIOp::create(b, loc, k, constIndex(1));
        }
        return forEachIndex(inner, [&](ArrayRef<Value> innerIndex) {
          SmallVector<Value> index = at(outerIndex, k, innerIndex);
          FailureOr<SmallVector<Value>> next = elements(scan.getSrcs(), index);
          if (failed(next))
            return failure();
          return combineInto(scan.getCombineOp(), out, srcTypes,
                             at(outerIndex, previous, innerIndex), *next,
                             index);
        });
      });
  if (failed(status))
    return failure();
  for (unsigned s = 0; s < numSrcs; ++s)
    buffers[scan.getResult(s)] = out[s];
  return success();
}

LogicalResult KernelLowering::lowerDot(tk::DotOp dot) {
  FailureOr<DotPlan> plan = planDot(dot);
  if (failed(plan))
    return failure();
  int64_t m = plan->m, n = plan->n, k = plan->k;
  Type accElem = plan->accElem, computeElem = plan->computeElem;
  bool isFloat = plan->isFloat;
  Value aBuf = plan->a, bBuf = plan->b;
  auto widen = [&](Value v) { return widenForDot(*plan, v); };
  Value acc = allocBuffer({m, n}, computeElem);
  if (failed(forEachIndex({m, n}, [&](ArrayRef<Value> index) {
        FailureOr<Value> c = element(dot.getAcc(), index);
        if (failed(c))
          return failure();
        storeBuffer(widen(*c), acc, index);
        return success();
      })))
    return failure();
  // i-k-j: the innermost loop streams a row of B and a row of the
  // accumulator, contiguous in memory, with A[i,k] held in a register.
  if (failed(forEachIndex({m, k}, [&](ArrayRef<Value> ik) {
        Value aik = widen(memref::LoadOp::create(b, loc, aBuf, ik));
        return forEachIndex({n}, [&](ArrayRef<Value> j) {
          Value bkj = widen(
              memref::LoadOp::create(b, loc, bBuf, ValueRange{ik[1], j[0]}));
          SmallVector<Value> ij{ik[0], j[0]};
          Value cij = memref::LoadOp::create(b, loc, acc, ij);
          Value sum;
          if (isFloat)
            sum = math::FmaOp::create(b, loc, aik, bkj, cij);
          else
            sum = arith::AddIOp::create(
                b, loc, cij, arith::MulIOp::create(b, loc, aik, bkj));
          memref::StoreOp::create(b, loc, sum, acc, ij);
          return success();
        });
      })))
    return failure();
  if (computeElem == accElem) {
    buffers[dot.getResult()] = acc;
    return success();
  }
  Value result = allocBuffer({m, n}, accElem);
  if (failed(forEachIndex({m, n}, [&](ArrayRef<Value> index) {
        Value wide = memref::LoadOp::create(b, loc, acc, index);
        storeBuffer(arith::TruncFOp::create(b, loc, accElem, wide), result,
                    index);
        return success();
      })))
    return failure();
  buffers[dot.getResult()] = result;
  return success();
}

} // namespace mlir::tk_to_loops
