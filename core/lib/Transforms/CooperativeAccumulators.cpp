//===- CooperativeAccumulators.cpp - opaque accumulators across loops -----===//
//
// A dot whose intrinsic places its own elements (MatrixIntrinsic::opaque,
// Vulkan's cooperative matrix) computes into a #tkw.cooperative_matrix
// tile, which reaches registers only through workgroup memory. So that it
// does so once, not on every trip, the accumulator stays opaque along the
// loops that carry it: each dot's result becomes opaque and converts to its
// placement for other users; an iteration argument whose trip yields such
// a conversion carries the opaque tile instead, converting where the loop
// body, the loop's users or its initial value need registers; a splat
// constant is made opaque as it is. Conversions that undo each other fold.
// A float conversion (truncf, extf) that is all a leaving tile meets
// happens before it leaves, on the matrices: an f16 result leaves in f16,
// half the workgroup memory and traffic of f32.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout.h"
#include "tk/core/Passes.h"
#include "tk/core/TargetInfo.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace tk {
#define GEN_PASS_DEF_TKCOOPERATIVEACCUMULATORS
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;
using namespace tk;
using namespace tk::warp;

namespace {

constexpr llvm::StringLiteral kPassName = "tk-cooperative-accumulators";

bool isOpaque(Type type) {
  return isa_and_nonnull<CooperativeMatrixAttr>(getLayout(type));
}

/// `value`'s uses other than `except` go to `replacement`.
void replaceUsesExcept(Value value, Value replacement, Operation *except) {
  value.replaceUsesWithIf(
      replacement, [&](OpOperand &use) { return use.getOwner() != except; });
}

/// A conversion of `value` to `type` after its definition, which takes
/// over its other uses.
void convertUses(OpBuilder &builder, Value value, Type type) {
  builder.setInsertionPointAfterValue(value);
  auto convert = ConvertLayoutOp::create(builder, value.getLoc(), type, value);
  replaceUsesExcept(value, convert.getResult(), convert);
}

/// `value` as a tile of `type` (opaque) before `user`: a splat constant
/// retyped, else a conversion.
Value makeOpaque(OpBuilder &builder, Value value, Type type, Operation *user) {
  DenseElementsAttr splat;
  if (auto constant = value.getDefiningOp<arith::ConstantOp>())
    if ((splat = dyn_cast<DenseElementsAttr>(constant.getValue())) &&
        splat.isSplat()) {
      builder.setInsertionPointAfter(constant);
      return arith::ConstantOp::create(
          builder, constant.getLoc(),
          DenseElementsAttr::get(cast<ShapedType>(type),
                                 splat.getSplatValue<Attribute>()));
    }
  builder.setInsertionPoint(user);
  return ConvertLayoutOp::create(builder, value.getLoc(), type, value);
}

/// Carries iteration argument `index` of `loop` opaque where its trip
/// yields the placement of an opaque tile; true when it did.
bool carryOpaque(scf::ForOp loop, unsigned index) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  auto leaving = yield.getOperand(index).getDefiningOp<ConvertLayoutOp>();
  if (!leaving || !isOpaque(leaving.getSrc().getType()))
    return false;
  Type opaque = leaving.getSrc().getType();
  Type placement = leaving.getType();
  BlockArgument argument = loop.getRegionIterArg(index);
  OpResult result = loop->getResult(index);
  OpBuilder builder(loop);
  Value initial = makeOpaque(builder, loop.getInitArgs()[index], opaque, loop);
  loop.getInitArgsMutable()[index].set(initial);
  yield->setOperand(index, leaving.getSrc());
  argument.setType(opaque);
  result.setType(opaque);
  // The body's and the loop's users see the placement, through one
  // conversion each, at the top of the body and after the loop.
  builder.setInsertionPointToStart(loop.getBody());
  auto inBody =
      ConvertLayoutOp::create(builder, loop.getLoc(), placement, argument);
  replaceUsesExcept(argument, inBody.getResult(), inBody);
  convertUses(builder, result, placement);
  return true;
}

/// convert(convert(x)) back to x's type is x; conversions nobody reads go.
void foldConversions(FuncOp func) {
  bool changed = true;
  while (changed) {
    changed = false;
    func.walk([&](ConvertLayoutOp convert) {
      auto inner = convert.getSrc().getDefiningOp<ConvertLayoutOp>();
      if (inner && inner.getSrc().getType() == convert.getType()) {
        convert.getResult().replaceAllUsesWith(inner.getSrc());
        changed = true;
      }
    });
    func.walk([&](ConvertLayoutOp convert) {
      if (convert->use_empty()) {
        convert->erase();
        changed = true;
      }
    });
  }
}

/// truncf/extf(convert(opaque)) as convert(truncf/extf(opaque)) where the
/// conversion has no other user.
void convertInPlace(FuncOp func) {
  SmallVector<Operation *> conversions;
  func.walk([&](Operation *op) {
    if (isa<arith::TruncFOp, arith::ExtFOp>(op))
      conversions.push_back(op);
  });
  for (Operation *conversion : conversions) {
    auto leaving = conversion->getOperand(0).getDefiningOp<ConvertLayoutOp>();
    if (!leaving || !isOpaque(leaving.getSrc().getType()) ||
        !leaving->hasOneUse())
      continue;
    auto placed = cast<RankedTensorType>(conversion->getResult(0).getType());
    auto opaque = cast<RankedTensorType>(leaving.getSrc().getType());
    OpBuilder builder(conversion);
    Operation *inPlace = builder.clone(*conversion);
    inPlace->setOperand(0, leaving.getSrc());
    inPlace->getResult(0).setType(opaque.clone(placed.getElementType()));
    auto leave = ConvertLayoutOp::create(builder, conversion->getLoc(), placed,
                                         inPlace->getResult(0));
    conversion->getResult(0).replaceAllUsesWith(leave.getResult());
    conversion->erase();
    leaving->erase();
  }
}

struct CooperativeAccumulatorsPass
    : public tk::impl::TkCooperativeAccumulatorsBase<
          CooperativeAccumulatorsPass> {
  void runOnOperation() override {
    FuncOp func = getOperation();
    auto spec = func->getAttrOfType<StringAttr>(TkwDialect::kTargetAttrName);
    if (!spec)
      return;
    std::string error;
    std::optional<TargetInfo> target =
        TargetInfo::parse(spec.getValue(), error);
    if (!target) {
      func.emitError() << kPassName << ": " << error;
      return signalPassFailure();
    }
    bool any = false;
    WalkResult walked = func.walk([&](DotOp dot) -> WalkResult {
      auto name =
          dot->getAttrOfType<StringAttr>(TkwDialect::kIntrinsicAttrName);
      const MatrixIntrinsic *intrinsic =
          name ? target->findIntrinsic(name) : nullptr;
      if (!intrinsic || !intrinsic->opaque)
        return WalkResult::advance();
      auto placement =
          dyn_cast_or_null<LinearLayoutAttr>(getLayout(dot.getType()));
      if (!placement) {
        dot.emitError() << kPassName << ": the accumulator of " << name
                        << " has no #tkw.linear layout";
        return WalkResult::interrupt();
      }
      auto opaque = CooperativeMatrixAttr::getChecked(
          [&] { return dot.emitError() << kPassName << ": "; }, &getContext(),
          intrinsic->m, intrinsic->n, placement);
      if (!opaque)
        return WalkResult::interrupt();
      Type opaqueType = withLayout(dot.getType(), opaque);
      Type placementType = dot.getType();
      OpBuilder builder(dot);
      dot.getAccMutable().set(
          makeOpaque(builder, dot.getAcc(), opaqueType, dot));
      dot.getResult().setType(cast<RankedTensorType>(opaqueType));
      convertUses(builder, dot.getResult(), placementType);
      any = true;
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return signalPassFailure();
    if (!any)
      return;
    // Inner loops first; an outer loop then finds the inner one's
    // conversion in its yield.
    bool changed = true;
    while (changed) {
      changed = false;
      func.walk([&](scf::ForOp loop) {
        for (unsigned index = 0; index < loop.getNumRegionIterArgs(); ++index)
          changed |= carryOpaque(loop, index);
      });
      foldConversions(func);
    }
    convertInPlace(func);
  }
};

} // namespace
