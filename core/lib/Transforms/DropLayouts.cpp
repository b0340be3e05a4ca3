//===- DropLayouts.cpp - leave the layout framework on one warp ----------===//
//
// On a target that runs a workgroup as one warp (the CPU), the layouts that
// tk-assign-layouts chose give that warp every tile whole: after
// tk-distribute-to-warps and tk-match-target-size the kernel is the
// workgroup-level kernel with annotations. This pass removes them, so that
// lowerings written for plain tk (tk-convert-to-loops) need not know the
// warp level at all, while the kernel has still gone through the framework
// and its checks.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout.h"
#include "tk/core/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tk-drop-layouts"

namespace tk {
#define GEN_PASS_DEF_TKDROPLAYOUTS
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;
using namespace tk;
using namespace tk::warp;

namespace {

/// `type` without layouts: tiles, block pointers and tiles of block
/// pointers.
Type stripLayout(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return RankedTensorType::get(tile.getShape(),
                                 stripLayout(tile.getElementType()));
  if (auto ptr = dyn_cast<tk::PtrType>(type))
    if (isa<RankedTensorType>(ptr.getPointeeType()))
      return tk::PtrType::get(type.getContext(),
                              stripLayout(ptr.getPointeeType()));
  return type;
}

/// Removes the `tkw.*` discardable attributes of `op`.
void stripWarpAttrs(Operation *op) {
  SmallVector<StringAttr> names;
  for (NamedAttribute attr : op->getDiscardableAttrs())
    if (attr.getName().getValue().starts_with("tkw."))
      names.push_back(attr.getName());
  for (StringAttr name : names)
    op->removeDiscardableAttr(name);
}

struct DropLayoutsPass : public tk::impl::TkDropLayoutsBase<DropLayoutsPass> {
  using TkDropLayoutsBase::TkDropLayoutsBase;

  void runOnOperation() override {
    FuncOp func = getOperation();
    if (auto warps =
            func->getAttrOfType<IntegerAttr>(TkwDialect::kNumWarpsAttrName))
      if (warps.getInt() != 1) {
        func.emitError() << "tk-drop-layouts: the kernel runs on "
                         << warps.getInt()
                         << " warps; layouts can be dropped only where one "
                            "warp holds every tile whole";
        return signalPassFailure();
      }

    // Check first, change nothing on failure.
    WalkResult checked = func.walk([&](Operation *op) -> WalkResult {
      if (isa<ExtractOp, GlueOp>(op)) {
        op->emitOpError() << "tk-drop-layouts: sub-tiles of matrix "
                             "intrinsics cannot be lowered without layouts; "
                             "the target should keep its dots whole";
        return WalkResult::interrupt();
      }
      if (auto convert = dyn_cast<ConvertLayoutOp>(op))
        if (getTileShape(convert.getSrc().getType()) !=
            getTileShape(convert.getType())) {
          convert.emitOpError() << "tk-drop-layouts: a layout change "
                                   "between warps cannot be dropped";
          return WalkResult::interrupt();
        }
      auto check = [&](Value value) {
        Attribute layout = getLayout(value.getType());
        return !layout || !isLayout(layout) || getNumWarps(layout) == 1;
      };
      if (!llvm::all_of(op->getResults(), check)) {
        op->emitOpError() << "tk-drop-layouts: a result's layout spreads it "
                             "over more than one warp";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (checked.wasInterrupted())
      return signalPassFailure();

    // Types: every value, then the values constants carry.
    func.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            arg.setType(stripLayout(arg.getType()));
      for (Value result : op->getResults())
        result.setType(stripLayout(result.getType()));
      if (auto constant = dyn_cast<arith::ConstantOp>(op))
        if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
          if (dense.getType() != constant.getType())
            constant.setValueAttr(
                dense.reshape(cast<ShapedType>(constant.getType())));
      stripWarpAttrs(op);
    });
    if (!func.getBody().empty()) {
      SmallVector<Type> results;
      for (Type type : func.getFunctionType().getResults())
        results.push_back(stripLayout(type));
      func.setFunctionTypeAttr(TypeAttr::get(FunctionType::get(
          &getContext(), func.getBody().front().getArgumentTypes(), results)));
    }

    // The warp-level ops: an identity and 0 on one warp (tk-distribute-to-
    // warps builds the warp id even where no offset uses it).
    SmallVector<Operation *> warpOps;
    func.walk([&](Operation *op) {
      if (isa<ConvertLayoutOp, WarpIdOp>(op))
        warpOps.push_back(op);
    });
    for (Operation *op : warpOps) {
      if (auto convert = dyn_cast<ConvertLayoutOp>(op)) {
        convert.getResult().replaceAllUsesWith(convert.getSrc());
      } else if (!op->use_empty()) {
        OpBuilder builder(op);
        Value zero = arith::ConstantOp::create(builder, op->getLoc(),
                                               builder.getI32IntegerAttr(0));
        op->getResult(0).replaceAllUsesWith(zero);
      }
      op->erase();
    }
    LLVM_DEBUG(llvm::dbgs() << "dropped layouts of " << func.getName() << ", "
                            << warpOps.size() << " warp-level ops\n");
  }
};

} // namespace
