//===- LoopGuard.h - an scf.for under the test of its first trip -*- C++
//-*-===//
//
// Putting a loop under `scf.if lb < ub`, whose other branch yields the
// loop's inits, gives the path that ran a trip a block of its own after the
// loop. tk-pipeline-loads waits there for running wgmma products; the
// Vulkan backend returns a loop's results that way where MLIR 22's SPIR-V
// conversion would leave them undefined after no trip.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_LOOPGUARD_H_
#define TK_CORE_LOOPGUARD_H_

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace tk {

/// Moves `loop` into the then-branch of a new `scf.if lb < ub` (unsigned
/// where the loop compares unsigned) at the loop's place, which yields what
/// `taken` builds after the loop from its results (by default the results)
/// and otherwise the loop's inits; every use of the loop's results outside
/// the new op now uses the op's. `b` is left at the end of the then-branch,
/// before its yield.
mlir::scf::IfOp guardByFirstTrip(
    mlir::OpBuilder &b, mlir::scf::ForOp loop,
    llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::OpBuilder &,
                                                      mlir::ValueRange)>
        taken = nullptr);

} // namespace tk

#endif // TK_CORE_LOOPGUARD_H_
