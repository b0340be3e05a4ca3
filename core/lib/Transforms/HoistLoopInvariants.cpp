//===- HoistLoopInvariants.cpp - loop invariants out, pointer steps as splats
//=//
//
// The lowerings recognise a loop's pointer walk (`p = addptr p, splat(step)`
// with `step` defined outside the loop) and pipeline the loads along it only
// in that form. A kernel may write the same walk with the step's tile built
// inside the loop, or as a dense constant tile (Triton's TTIR does both);
// this pass brings such kernels to the recognised form, so that the
// lowering's decisions do not depend on how the source spelled an
// invariant.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace tk {
#define GEN_PASS_DEF_TKHOISTLOOPINVARIANTS
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;

namespace {

/// Rewrites the dense splat constant offset of each tk.addptr as tk.splat
/// of a scalar constant, built beside the constant (so outside every loop
/// the constant is outside of).
void splatConstantOffsets(tk::FuncOp func) {
  SmallVector<tk::AddPtrOp> adds;
  func.walk([&](tk::AddPtrOp add) { adds.push_back(add); });
  OpBuilder b(func.getContext());
  for (tk::AddPtrOp add : adds) {
    auto constant = add.getOffset().getDefiningOp<arith::ConstantOp>();
    auto splat =
        constant ? dyn_cast<SplatElementsAttr>(constant.getValue()) : nullptr;
    if (!splat)
      continue;
    b.setInsertionPointAfter(constant);
    Value scalar = arith::ConstantOp::create(
        b, constant.getLoc(),
        cast<TypedAttr>(splat.getSplatValue<Attribute>()));
    Value tile =
        tk::SplatOp::create(b, constant.getLoc(), constant.getType(), scalar);
    add.getOffsetMutable().assign(tile);
    if (constant->use_empty())
      constant->erase();
  }
}

struct HoistLoopInvariants
    : tk::impl::TkHoistLoopInvariantsBase<HoistLoopInvariants> {
  void runOnOperation() override {
    // Innermost loops first (a post-order walk), so that what leaves one
    // can leave the next.
    getOperation().walk(
        [](LoopLikeOpInterface loop) { moveLoopInvariantCode(loop); });
    splatConstantOffsets(getOperation());
  }
};

} // namespace
