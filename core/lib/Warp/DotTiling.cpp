//===- DotTiling.cpp - how the warps of a program share a dot
//--------------===//
//
// How tk-assign-linear-layouts spreads a dot's result over the warps: rows
// across warps where the result's rows are reduced or feed another dot (so
// that attention's softmax stays in a warp), a square partition otherwise.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace tk;

namespace {

/// True when `value` flows (through anything but another dot's
/// accumulator) into a reduction or into an operand of another dot: the
/// attention pattern, where rows across warps keep the softmax inside a
/// warp (FlashAttention-2's partition).
bool feedsReductionOrDot(Value value) {
  SmallVector<Value> worklist = {value};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (!seen.insert(current).second)
      continue;
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      if (isa<tk::ReduceOp>(user))
        return true;
      if (auto dot = dyn_cast<tk::DotOp>(user)) {
        if (use.getOperandNumber() < 2)
          return true;
        continue;
      }
      if (auto yield = dyn_cast<scf::YieldOp>(user)) {
        Operation *parent = yield->getParentOp();
        if (use.getOperandNumber() < parent->getNumResults())
          worklist.push_back(parent->getResult(use.getOperandNumber()));
        continue;
      }
      for (Value result : user->getResults())
        worklist.push_back(result);
    }
  }
  return false;
}

/// True when operand `a` of `dot` is computed from another dot's result
/// (the second product of attention).
bool isFedByDot(tk::DotOp dot) {
  SmallVector<Value> worklist = {dot.getA()};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (!seen.insert(current).second)
      continue;
    Operation *def = current.getDefiningOp();
    if (!def)
      continue;
    if (isa<tk::DotOp>(def))
      return true;
    for (Value operand : def->getOperands())
      if (tk::warp::isTileLike(operand.getType()))
        worklist.push_back(operand);
  }
  return false;
}

} // namespace

tk::DotTiling tk::warp::chooseDotTiling(tk::DotOp dot) {
  if (std::optional<tk::DotTiling> hint = dot.getTiling())
    return *hint;
  if (feedsReductionOrDot(dot.getResult()) || isFedByDot(dot))
    return tk::DotTiling::Horizontal;
  return tk::DotTiling::Square;
}
