//===- LoopGuard.cpp - an scf.for under the test of its first trip --------===//

#include "tk/core/LoopGuard.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

scf::IfOp tk::guardByFirstTrip(
    OpBuilder &b, scf::ForOp loop,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> taken) {
  Location loc = loop.getLoc();
  b.setInsertionPoint(loop);
  Value runs =
      arith::CmpIOp::create(b, loc,
                            loop.getUnsignedCmp() ? arith::CmpIPredicate::ult
                                                  : arith::CmpIPredicate::slt,
                            loop.getLowerBound(), loop.getUpperBound());
  auto guard = scf::IfOp::create(b, loc, loop.getResultTypes(), runs,
                                 /*withElseRegion=*/true);
  for (auto [result, replacement] :
       llvm::zip_equal(loop.getResults(), guard.getResults()))
    result.replaceUsesWithIf(replacement, [&](OpOperand &use) {
      return !guard->isAncestor(use.getOwner());
    });
  b.setInsertionPointToEnd(guard.elseBlock());
  scf::YieldOp::create(b, loc, loop.getInitArgs());
  loop->moveBefore(guard.thenBlock(), guard.thenBlock()->end());
  b.setInsertionPointToEnd(guard.thenBlock());
  SmallVector<Value> results = taken ? taken(b, loop.getResults())
                                     : SmallVector<Value>(loop.getResults());
  auto yield = scf::YieldOp::create(b, loc, results);
  b.setInsertionPoint(yield);
  return guard;
}
