//===- AccurateTrig.cpp - f32 sin and cos to a few ulp ----------*- C++ -*-===//
//
// sin and cos of f32 in arith and math.fma, for devices whose GLSL.std.450
// Sin/Cos are approximations (AccurateTrig.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/AccurateTrig.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/SmallVector.h"

using namespace mlir;

namespace tk::vulkan {

namespace {

/// The arithmetic of one expansion, at the scalar or vector shape of `x`.
class TrigBuilder {
public:
  TrigBuilder(OpBuilder &b, Location loc, Type type)
      : b(b), loc(loc), type(type), intType(withElement(b.getI32Type())) {}

  Value f(float value) {
    return arith::ConstantOp::create(b, loc, type,
                                     attr(b.getF32FloatAttr(value)));
  }
  Value i(int32_t value) {
    return arith::ConstantOp::create(b, loc, intType,
                                     attr(b.getI32IntegerAttr(value)));
  }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value neg(Value x) { return arith::NegFOp::create(b, loc, x); }
  Value fma(Value x, Value y, Value z) {
    return math::FmaOp::create(b, loc, x, y, z);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// (q & mask) != 0 for an i32 `q`.
  Value bitSet(Value q, int32_t mask) {
    Value bit = arith::AndIOp::create(b, loc, q, i(mask));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, bit, i(0));
  }
  Value absLess(Value x, float bound) {
    Value magnitude = math::AbsFOp::create(b, loc, x);
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, magnitude,
                                 f(bound));
  }

  /// x - k * pi/2, and k as an i32 (k = x * 2/pi rounded to the nearest).
  std::pair<Value, Value> reduce(Value x) {
    Value k = math::FloorOp::create(b, loc, fma(x, f(kTwoOverPi), f(0.5f)));
    // pi/2 = C1 + C2 + C3, each a float: k*C1 and k*C2 are exact inside the
    // fused multiply-adds, so the remainder keeps its bits while k < 2^16.
    Value r = fma(neg(k), f(kPiOver2Hi), x);
    r = fma(neg(k), f(kPiOver2Mid), r);
    r = fma(neg(k), f(kPiOver2Lo), r);
    return {r, arith::FPToSIOp::create(b, loc, intType, k)};
  }

  /// sin(r) on [-pi/4, pi/4]: r + r^3 (s1 + r^2 (s2 + r^2 s3)).
  Value sinPolynomial(Value r) {
    Value r2 = mul(r, r);
    Value p = fma(r2, f(-1.9515295891e-4f), f(8.3321608736e-3f));
    p = fma(r2, p, f(-1.6666654611e-1f));
    return fma(mul(r2, r), p, r);
  }
  /// cos(r) on [-pi/4, pi/4]: 1 - r^2/2 + r^4 (c1 + r^2 (c2 + r^2 c3)).
  Value cosPolynomial(Value r) {
    Value r2 = mul(r, r);
    Value p = fma(r2, f(2.443315711809948e-5f), f(-1.388731625493765e-3f));
    p = fma(r2, p, f(4.166664568298827e-2f));
    return fma(mul(r2, r2), p, fma(r2, f(-0.5f), f(1.0f)));
  }

  /// sin(x + q pi/2) from the polynomials of the remainder: the quadrant's
  /// bit 0 swaps sin and cos, bit 1 negates.
  Value shifted(Value sinR, Value cosR, Value q) {
    Value value = select(bitSet(q, 1), cosR, sinR);
    return select(bitSet(q, 2), neg(value), value);
  }

private:
  // Cephes' DP1..DP3 scaled to pi/2 (sinf.c), and 2/pi.
  static constexpr float kTwoOverPi = 0.636619772367581343f;
  static constexpr float kPiOver2Hi = 1.5703125f;
  static constexpr float kPiOver2Mid = 4.837512969970703125e-4f;
  static constexpr float kPiOver2Lo = 7.54978995489188216e-8f;

  Type withElement(Type element) {
    if (auto shaped = dyn_cast<ShapedType>(type))
      return shaped.clone(element);
    return element;
  }
  TypedAttr attr(TypedAttr scalar) {
    if (auto shaped = dyn_cast<ShapedType>(type))
      return DenseElementsAttr::get(shaped.clone(scalar.getType()), scalar);
    return scalar;
  }

  OpBuilder &b;
  Location loc;
  Type type, intType;
};

/// The bound under which the reduction keeps the remainder's bits: CUDA's
/// sinf takes its fast path below it too (k < 2^16).
constexpr float kReductionBound = 105615.0f;

bool isF32(Type type) { return getElementTypeOrSelf(type).isF32(); }

} // namespace

void expandAccurateSinCos(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<math::SinOp, math::CosOp>(op) && isF32(op->getResult(0).getType()))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    OpBuilder b(op);
    Value x = op->getOperand(0);
    TrigBuilder t(b, op->getLoc(), x.getType());
    auto [r, q] = t.reduce(x);
    // cos(x) = sin(x + pi/2): one quadrant on.
    if (isa<math::CosOp>(op))
      q = arith::AddIOp::create(b, op->getLoc(), q, t.i(1));
    Value accurate = t.shifted(t.sinPolynomial(r), t.cosPolynomial(r), q);
    // The original op, kept for arguments beyond the bound, is not walked
    // again: the ops to expand were collected first.
    Value builtin = op->getResult(0);
    b.setInsertionPointAfter(op);
    Value result = t.select(t.absLess(x, kReductionBound), accurate, builtin);
    builtin.replaceAllUsesExcept(result, result.getDefiningOp());
  }
}

} // namespace tk::vulkan
