//===- MaskBounds.cpp - whole-tile tests of bounds checks -----------------===//

#include "tk/core/Analysis/MaskBounds.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace {

/// The tile `v` is reshaped from (expand_dims, broadcast keep every value
/// and add only copies), or null.
Value getReshapeSource(Value v) {
  if (auto broadcast = v.getDefiningOp<tk::BroadcastOp>())
    return broadcast.getSrc();
  if (auto expand = v.getDefiningOp<tk::ExpandDimsOp>())
    return expand.getSrc();
  return nullptr;
}

Value stripReshapes(Value v) {
  while (Value source = getReshapeSource(v))
    v = source;
  return v;
}

/// The scalar every element of `v` is: a splat's source, or a splat
/// constant built at `b`. Null otherwise.
Value getUniformScalar(OpBuilder &b, Location loc, Value v) {
  v = stripReshapes(v);
  if (auto splat = v.getDefiningOp<tk::SplatOp>())
    return splat.getSrc();
  SplatElementsAttr attr;
  if (matchPattern(v, m_Constant(&attr)))
    return arith::ConstantOp::create(
        b, loc, cast<TypedAttr>(attr.getSplatValue<Attribute>()));
  return nullptr;
}

/// `offsets` as start + [lo, hi) with lo >= 0: a make_range, or one plus a
/// uniform scalar (`start`, null for none).
bool matchRange(OpBuilder &b, Location loc, Value offsets, Value &start,
                int64_t &lo, int64_t &hi) {
  offsets = stripReshapes(offsets);
  auto range = offsets.getDefiningOp<tk::MakeRangeOp>();
  start = nullptr;
  if (!range) {
    auto add = offsets.getDefiningOp<arith::AddIOp>();
    if (!add)
      return false;
    for (auto [r, s] : {std::pair(add.getLhs(), add.getRhs()),
                        std::pair(add.getRhs(), add.getLhs())}) {
      range = stripReshapes(r).getDefiningOp<tk::MakeRangeOp>();
      start = range ? getUniformScalar(b, loc, s) : Value();
      if (range && start)
        break;
    }
    if (!range || !start)
      return false;
  }
  lo = static_cast<int32_t>(range.getStart());
  hi = static_cast<int32_t>(range.getEnd());
  return lo >= 0 && hi > lo;
}

/// A bounds check of i32 offsets, `start + [lo, hi) < bound` (`inclusive`:
/// <=), signed or not; `start` is null for none.
struct RangeCheck {
  Value start, bound;
  int64_t lo = 0, hi = 0;
  bool isSigned = true, inclusive = false;

  /// `v` in i64, extended as the comparison reads it: in i64 nothing wraps.
  Value widen(OpBuilder &b, Location loc, Value v) const {
    Type i64 = b.getI64Type();
    if (isSigned)
      return arith::ExtSIOp::create(b, loc, i64, v);
    return arith::ExtUIOp::create(b, loc, i64, v);
  }
  /// start + at, in i64.
  Value offset(OpBuilder &b, Location loc, int64_t at) const {
    Value value = arith::ConstantIntOp::create(b, loc, b.getI64Type(), at);
    return start ? arith::AddIOp::create(b, loc, widen(b, loc, start), value)
                 : value;
  }
};

/// `cmp` as a RangeCheck, or nothing where it is not one.
std::optional<RangeCheck> matchRangeCheck(OpBuilder &b, Location loc,
                                          arith::CmpIOp cmp) {
  std::optional<tk::BoundCompare> compare = tk::getBoundCompare(cmp);
  if (!compare)
    return std::nullopt;
  RangeCheck check;
  check.isSigned = compare->isSigned;
  check.inclusive = compare->inclusive;
  if (!matchRange(b, loc, compare->offsets, check.start, check.lo, check.hi))
    return std::nullopt;
  check.bound = getUniformScalar(b, loc, compare->bound);
  if (!check.bound || !check.bound.getType().isInteger(32) ||
      (check.start && !check.start.getType().isInteger(32)))
    return std::nullopt;
  return check;
}

Value buildComparisonTest(OpBuilder &b, Location loc, arith::CmpIOp cmp) {
  std::optional<RangeCheck> check = matchRangeCheck(b, loc, cmp);
  if (!check)
    return nullptr;
  // In i64 nothing wraps: where start + hi - 1 is below the bound (an i32)
  // no offset wraps in i32 either, and every one is in. Otherwise some
  // offset is out or wraps, and the element-wise tests are the right ones.
  Value last = check->offset(b, loc, check->hi - 1);
  return arith::CmpIOp::create(b, loc,
                               check->inclusive ? arith::CmpIPredicate::sle
                                                : arith::CmpIPredicate::slt,
                               last, check->widen(b, loc, check->bound));
}

} // namespace

std::optional<tk::BoundCompare> tk::getBoundCompare(Operation *op) {
  auto cmp = dyn_cast_or_null<arith::CmpIOp>(op);
  if (!cmp)
    return std::nullopt;
  using Pred = arith::CmpIPredicate;
  BoundCompare compare{cmp.getLhs(), cmp.getRhs()};
  Pred pred = cmp.getPredicate();
  // The offsets on the left: `n > offs` is `offs < n`.
  if (pred == Pred::sgt || pred == Pred::sge || pred == Pred::ugt ||
      pred == Pred::uge)
    std::swap(compare.offsets, compare.bound);
  switch (pred) {
  case Pred::slt:
  case Pred::sgt:
    return compare;
  case Pred::sle:
  case Pred::sge:
    compare.inclusive = true;
    return compare;
  case Pred::ult:
  case Pred::ugt:
    compare.isSigned = false;
    return compare;
  case Pred::ule:
  case Pred::uge:
    compare.isSigned = false;
    compare.inclusive = true;
    return compare;
  default:
    return std::nullopt;
  }
}

namespace {

Value buildTest(OpBuilder &b, Location loc, Value mask) {
  mask = stripReshapes(mask);
  if (auto both = mask.getDefiningOp<arith::AndIOp>()) {
    Value lhs = buildTest(b, loc, both.getLhs());
    Value rhs = lhs ? buildTest(b, loc, both.getRhs()) : Value();
    return rhs ? Value(arith::AndIOp::create(b, loc, lhs, rhs)) : Value();
  }
  if (auto splat = mask.getDefiningOp<tk::SplatOp>())
    return splat.getSrc();
  if (auto cmp = mask.getDefiningOp<arith::CmpIOp>())
    return buildComparisonTest(b, loc, cmp);
  return nullptr;
}

/// True where every offset of `cmp` is out: the first offset (the range's
/// low end plus the start, in i64) is not below the bound, and the last
/// does not wrap in i32 (where it would, a wrapped offset could be in).
Value buildComparisonOffTest(OpBuilder &b, Location loc, arith::CmpIOp cmp) {
  std::optional<RangeCheck> check = matchRangeCheck(b, loc, cmp);
  if (!check)
    return nullptr;
  using Pred = arith::CmpIPredicate;
  Value firstOut = arith::CmpIOp::create(
      b, loc, check->inclusive ? Pred::sgt : Pred::sge,
      check->offset(b, loc, check->lo), check->widen(b, loc, check->bound));
  int64_t largest = check->isSigned ? INT32_MAX : UINT32_MAX;
  Value noWrap = arith::CmpIOp::create(
      b, loc, Pred::sle, check->offset(b, loc, check->hi - 1),
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), largest));
  return arith::AndIOp::create(b, loc, firstOut, noWrap);
}

Value buildOffTest(OpBuilder &b, Location loc, Value mask) {
  mask = stripReshapes(mask);
  if (auto both = mask.getDefiningOp<arith::AndIOp>()) {
    Value lhs = buildOffTest(b, loc, both.getLhs());
    Value rhs = buildOffTest(b, loc, both.getRhs());
    if (lhs && rhs)
      return arith::OrIOp::create(b, loc, lhs, rhs);
    return lhs ? lhs : rhs;
  }
  if (auto splat = mask.getDefiningOp<tk::SplatOp>())
    return arith::XOrIOp::create(
        b, loc, splat.getSrc(),
        arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  if (auto cmp = mask.getDefiningOp<arith::CmpIOp>())
    return buildComparisonOffTest(b, loc, cmp);
  return nullptr;
}

/// The ops a builder inserts.
struct InsertedOps : OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
  SmallVector<Operation *> ops;
};

/// `build` at `b`'s insertion point by a builder of its own; where it
/// gives no test, the ops it built are erased.
Value buildOrErase(OpBuilder &b, Location loc, Value mask,
                   Value (*build)(OpBuilder &, Location, Value)) {
  InsertedOps inserted;
  OpBuilder builder(b.getContext(), &inserted);
  builder.restoreInsertionPoint(b.saveInsertionPoint());
  Value test = build(builder, loc, mask);
  if (!test)
    for (Operation *op : llvm::reverse(inserted.ops))
      op->erase();
  return test;
}

} // namespace

Value tk::buildWholeMaskTest(OpBuilder &b, Location loc, Value mask) {
  return buildOrErase(b, loc, mask, buildTest);
}

Value tk::buildWholeMaskOffTest(OpBuilder &b, Location loc, Value mask) {
  return buildOrErase(b, loc, mask, buildOffTest);
}
