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
// Float conversions (truncf, extf) and arithmetic (addf, subf, mulf, divf)
// that are all a leaving tile meets happen before it leaves, on the
// matrices, their other operands made opaque where that is cheap: a splat,
// or a broadcast column or row (one vector through memory). An f16 result
// leaves in f16, half the workgroup memory and traffic of f32; attention's
// accumulator, scaled by a column every trip, stays in its matrices.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout.h"
#include "tk/core/Passes.h"
#include "tk/core/TargetInfo.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallPtrSet.h"

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

/// The conversion that takes an opaque tile out to `value`, where `user`
/// is all that reads it; null otherwise.
ConvertLayoutOp getLeaving(Value value, Operation *user) {
  auto leaving = value.getDefiningOp<ConvertLayoutOp>();
  if (!leaving || !isOpaque(leaving.getSrc().getType()) ||
      !llvm::all_of(leaving->getUsers(),
                    [&](Operation *other) { return other == user; }))
    return nullptr;
  return leaving;
}

/// `operand`, a tile every element of which is one value or whose rows (or
/// columns) are one vector, remade as the opaque tile of `type` before
/// `user`: a splat constant retyped, a scalar's splat or a vector's
/// broadcast into the opaque layout; null for any other tile.
Value remakeOpaque(OpBuilder &builder, Value operand, RankedTensorType type,
                   Operation *user) {
  if (auto constant = operand.getDefiningOp<arith::ConstantOp>()) {
    auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
    return splat ? makeOpaque(builder, operand, type, user) : nullptr;
  }
  builder.setInsertionPoint(user);
  if (auto splat = operand.getDefiningOp<SplatOp>())
    return SplatOp::create(builder, splat.getLoc(), type, splat.getSrc());
  auto broadcast = operand.getDefiningOp<BroadcastOp>();
  if (!broadcast)
    return nullptr;
  // A column (m x 1) or a row (1 x n) in registers.
  auto vector = cast<RankedTensorType>(broadcast.getSrc().getType());
  if (vector.getRank() != 2 ||
      (vector.getDimSize(0) != 1) == (vector.getDimSize(1) != 1) ||
      !isa_and_nonnull<LinearLayoutAttr>(getLayout(vector)))
    return nullptr;
  // Any layout in registers will do: the vector passes through memory.
  Value source = broadcast.getSrc();
  if (auto convert = source.getDefiningOp<ConvertLayoutOp>())
    if (isa_and_nonnull<LinearLayoutAttr>(
            getLayout(convert.getSrc().getType())))
      source = convert.getSrc();
  return BroadcastOp::create(builder, broadcast.getLoc(), type, source);
}

/// Moves `op`, a float conversion or arithmetic, before the conversions
/// that take its opaque operands out: it computes on the matrices and its
/// result leaves instead. Each operand must be a leaving tile only `op`
/// reads, or (with at least one leaving operand) one remakeOpaque makes.
bool moveInPlace(Operation *op) {
  auto placed = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!placed)
    return false;
  RankedTensorType opaque;
  SmallVector<ConvertLayoutOp> leaving;
  for (Value operand : op->getOperands()) {
    leaving.push_back(getLeaving(operand, op));
    if (!leaving.back())
      continue;
    auto type = cast<RankedTensorType>(leaving.back().getSrc().getType());
    if (opaque && type.getEncoding() != opaque.getEncoding())
      return false;
    opaque = type;
  }
  if (!opaque)
    return false;
  OpBuilder builder(op);
  SmallVector<Value> operands;
  for (auto [operand, leave] : llvm::zip_equal(op->getOperands(), leaving)) {
    if (leave) {
      operands.push_back(leave.getSrc());
      continue;
    }
    auto type = cast<RankedTensorType>(operand.getType());
    Value remade =
        remakeOpaque(builder, operand, opaque.clone(type.getElementType()), op);
    if (!remade)
      return false;
    operands.push_back(remade);
  }
  builder.setInsertionPoint(op);
  Operation *inPlace = builder.clone(*op);
  inPlace->setOperands(operands);
  inPlace->getResult(0).setType(opaque.clone(placed.getElementType()));
  auto leave = ConvertLayoutOp::create(builder, op->getLoc(), placed,
                                       inPlace->getResult(0));
  op->getResult(0).replaceAllUsesWith(leave.getResult());
  op->erase();
  // x op x leaves through one conversion, read twice: erase it once.
  llvm::SmallPtrSet<Operation *, 2> erased;
  for (ConvertLayoutOp conversion : leaving)
    if (conversion && !erased.contains(conversion) && conversion->use_empty()) {
      erased.insert(conversion);
      conversion->erase();
    }
  return true;
}

/// Float conversions and arithmetic on leaving tiles, moved before they
/// leave (moveInPlace); true when one moved. Operands that remakeOpaque
/// replaced and nothing else reads are erased.
bool computeInPlace(FuncOp func) {
  SmallVector<Operation *> candidates;
  func.walk([&](Operation *op) {
    if (isa<arith::TruncFOp, arith::ExtFOp, arith::AddFOp, arith::SubFOp,
            arith::MulFOp, arith::DivFOp>(op))
      candidates.push_back(op);
  });
  bool moved = false;
  for (Operation *op : candidates) {
    // Not the leaving conversions: moveInPlace erases those itself.
    SmallVector<Operation *> replaced;
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp();
          isa_and_nonnull<arith::ConstantOp, SplatOp, BroadcastOp>(producer))
        replaced.push_back(producer);
    if (!moveInPlace(op))
      continue;
    moved = true;
    for (Operation *producer : replaced)
      if (producer->use_empty())
        producer->erase();
  }
  return moved;
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
    // conversion in its yield. Work moved in place may leave a loop's
    // yield, or the next op, a conversion to carry or move.
    bool changed = true;
    while (changed) {
      changed = false;
      func.walk([&](scf::ForOp loop) {
        for (unsigned index = 0; index < loop.getNumRegionIterArgs(); ++index)
          changed |= carryOpaque(loop, index);
      });
      foldConversions(func);
      changed |= computeInPlace(func);
      foldConversions(func);
    }
  }
};

} // namespace
