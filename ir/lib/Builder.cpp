//===- Builder.cpp - Triton-style C++ builder for tk kernels --------------===//
//
// Implements tk::KernelBuilder: dtype-directed choice of arith ops, numpy
// broadcasting through tk.splat / tk.expand_dims / tk.broadcast, and
// error recording instead of asserts, since a misused operator must not take
// the process down (LLVM is built without exceptions).
//
//===----------------------------------------------------------------------===//

#include "tk/ir/Builder.h"
#include "BuilderSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tk;
using namespace tk::builder_support;

//===----------------------------------------------------------------------===//
// Tile
//===----------------------------------------------------------------------===//

Type Tile::type() const { return value_ ? value_.getType() : Type(); }

Type Tile::dtype() const {
  return value_ ? getElementTypeOrSelf(value_.getType()) : Type();
}

ArrayRef<int64_t> Tile::shape() const {
  return value_ ? getShapeOrEmpty(value_.getType()) : ArrayRef<int64_t>();
}

bool Tile::isTile() const {
  return value_ && isa<RankedTensorType>(value_.getType());
}
bool Tile::isFloat() const { return value_ && isa<FloatType>(dtype()); }
bool Tile::isInt() const { return value_ && isa<IntegerType>(dtype()); }
bool Tile::isBool() const { return value_ && dtype().isInteger(1); }
bool Tile::isPointer() const { return value_ && isPointerElem(dtype()); }
bool Tile::isBlockPointer() const {
  auto ptr = value_ ? dyn_cast<PtrType>(value_.getType()) : PtrType();
  return ptr && ptr.isBlockPointer();
}

Tile Tile::col() const {
  return builder_ ? builder_->expandDims(*this, 1) : Tile();
}
Tile Tile::row() const {
  return builder_ ? builder_->expandDims(*this, 0) : Tile();
}
Tile Tile::to(Type dtype) const {
  return builder_ ? builder_->cast(*this, dtype) : Tile();
}
Tile Tile::trans() const { return builder_ ? builder_->trans(*this) : Tile(); }

Tile Tile::named(StringRef name) const {
  if (!valid())
    return *this;
  Location loc = NameLoc::get(StringAttr::get(value_.getContext(), name));
  if (Operation *op = value_.getDefiningOp())
    op->setLoc(loc);
  else
    cast<BlockArgument>(value_).setLoc(loc);
  return *this;
}

Tile &Tile::operator+=(const Operand &rhs) { return *this = *this + rhs; }
Tile &Tile::operator-=(const Operand &rhs) { return *this = *this - rhs; }
Tile &Tile::operator*=(const Operand &rhs) { return *this = *this * rhs; }
Tile &Tile::operator/=(const Operand &rhs) { return *this = *this / rhs; }
Tile &Tile::operator%=(const Operand &rhs) { return *this = *this % rhs; }
Tile &Tile::operator&=(const Operand &rhs) { return *this = *this & rhs; }
Tile &Tile::operator|=(const Operand &rhs) { return *this = *this | rhs; }
Tile &Tile::operator^=(const Operand &rhs) { return *this = *this ^ rhs; }

//===----------------------------------------------------------------------===//
// Free operators
//===----------------------------------------------------------------------===//

#define TK_BINARY_OPERATOR(OP, METHOD)                                         \
  Tile tk::operator OP(const Operand &lhs, const Operand &rhs) {               \
    KernelBuilder *builder = builderOf(lhs, rhs);                              \
    return builder ? builder->METHOD(lhs, rhs) : Tile();                       \
  }
TK_BINARY_OPERATOR(+, add)
TK_BINARY_OPERATOR(-, sub)
TK_BINARY_OPERATOR(*, mul)
TK_BINARY_OPERATOR(/, div)
TK_BINARY_OPERATOR(%, rem)
TK_BINARY_OPERATOR(&, bitAnd)
TK_BINARY_OPERATOR(|, bitOr)
TK_BINARY_OPERATOR(^, bitXor)
TK_BINARY_OPERATOR(<<, shl)
TK_BINARY_OPERATOR(>>, shr)
TK_BINARY_OPERATOR(<, lt)
TK_BINARY_OPERATOR(<=, le)
TK_BINARY_OPERATOR(>, gt)
TK_BINARY_OPERATOR(>=, ge)
TK_BINARY_OPERATOR(==, eq)
TK_BINARY_OPERATOR(!=, ne)
#undef TK_BINARY_OPERATOR

Tile tk::operator-(const Tile &x) {
  return x.builder() ? x.builder()->neg(x) : Tile();
}
Tile tk::operator!(const Tile &x) {
  return x.builder() ? x.builder()->logicalNot(x) : Tile();
}
Tile tk::operator~(const Tile &x) {
  return x.builder() ? x.builder()->bitNot(x) : Tile();
}

//===----------------------------------------------------------------------===//
// KernelBuilder: setup, types, arguments
//===----------------------------------------------------------------------===//

enum class KernelBuilder::BinaryOp : int {
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  And,
  Or,
  Xor,
  Shl,
  Shr,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  Max,
  Min,
};

/// The name of a binary op in messages: the C++ operator, or the call.
static StringRef binaryName(int op) {
  static const char *const names[] = {
      "operator+",  "operator-",  "operator*", "operator/",  "operator%",
      "operator&",  "operator|",  "operator^", "operator<<", "operator>>",
      "operator<",  "operator<=", "operator>", "operator>=", "operator==",
      "operator!=", "maximum",    "minimum"};
  return names[op];
}

KernelBuilder::KernelBuilder(MLIRContext *ctx, StringRef name)
    : ctx_(ctx), b_(ctx), loc_(UnknownLoc::get(ctx)) {
  ctx->loadDialect<TkDialect, arith::ArithDialect, math::MathDialect,
                   scf::SCFDialect>();
  module_ = ModuleOp::create(loc_);
  b_.setInsertionPointToEnd(module_->getBody());
  // The function type grows with each arg() and is fixed up in finish().
  func_ = FuncOp::create(b_, loc_, name, b_.getFunctionType({}, {}));
  entry_ = &func_.getBody().emplaceBlock();
  b_.setInsertionPointToEnd(entry_);
}

KernelBuilder::~KernelBuilder() = default;

Type KernelBuilder::i1() const { return IntegerType::get(ctx_, 1); }
Type KernelBuilder::i8() const { return IntegerType::get(ctx_, 8); }
Type KernelBuilder::i16() const { return IntegerType::get(ctx_, 16); }
Type KernelBuilder::i32() const { return IntegerType::get(ctx_, 32); }
Type KernelBuilder::i64() const { return IntegerType::get(ctx_, 64); }
Type KernelBuilder::f16() const { return Float16Type::get(ctx_); }
Type KernelBuilder::bf16() const { return BFloat16Type::get(ctx_); }
Type KernelBuilder::f32() const { return Float32Type::get(ctx_); }
Type KernelBuilder::f64() const { return Float64Type::get(ctx_); }
Type KernelBuilder::f8e4m3() const { return Float8E4M3FNType::get(ctx_); }
Type KernelBuilder::f8e5m2() const { return Float8E5M2Type::get(ctx_); }
Type KernelBuilder::ptrTo(Type pointee) const {
  return PtrType::get(ctx_, pointee);
}
RankedTensorType KernelBuilder::tileOf(ArrayRef<int64_t> shape,
                                       Type dtype) const {
  return RankedTensorType::get(shape, dtype);
}

void KernelBuilder::emitError(const Twine &message) {
  if (error_.empty())
    error_ = message.str();
}

bool KernelBuilder::check(const Tile &x, StringRef what) {
  if (!ok())
    return false;
  if (!x.valid()) {
    emitError(what + ": an operand is an empty Tile (the result of a failed "
                     "call, or default-constructed)");
    return false;
  }
  if (x.builder() != this) {
    emitError(what + ": an operand belongs to another KernelBuilder");
    return false;
  }
  return true;
}

Tile KernelBuilder::arg(StringRef name, Type type, unsigned divisibility) {
  if (!ok())
    return Tile();
  if (llvm::is_contained(argNames_, name)) {
    emitError("argument '" + name + "' is declared twice");
    return Tile();
  }
  if (!type || !(isa<IntegerType, FloatType>(type) || isPointerElem(type))) {
    emitError("argument '" + name +
              "' must be a scalar or a pointer to scalars, not " +
              (type ? str(type) : std::string("a null type")));
    return Tile();
  }
  if (divisibility != 0 && !llvm::isPowerOf2_32(divisibility)) {
    emitError("argument '" + name + "': divisibility " + Twine(divisibility) +
              " is not a power of two");
    return Tile();
  }
  // A NameLoc on the argument lets the printer show `%x` on request.
  BlockArgument value =
      entry_->addArgument(type, NameLoc::get(b_.getStringAttr(name)));
  argNames_.push_back(name.str());
  argDivisibility_.push_back(divisibility);
  return Tile(this, value);
}

Tile KernelBuilder::argPtr(StringRef name, Type pointee,
                           unsigned divisibility) {
  if (!ok())
    return Tile();
  if (!pointee || isa<PtrType>(pointee) || isa<ShapedType>(pointee)) {
    emitError("argPtr '" + name + "': the pointee must be a scalar type, not " +
              (pointee ? str(pointee) : std::string("a null type")));
    return Tile();
  }
  return arg(name, ptrTo(pointee), divisibility);
}

Tile KernelBuilder::argI32(StringRef name, unsigned divisibility) {
  return arg(name, i32(), divisibility);
}
Tile KernelBuilder::argI64(StringRef name, unsigned divisibility) {
  return arg(name, i64(), divisibility);
}
Tile KernelBuilder::argF32(StringRef name) { return arg(name, f32()); }

int64_t KernelBuilder::constexpr_(StringRef name, int64_t value) {
  if (!ok())
    return value;
  if (llvm::any_of(constexprs_, [&](NamedAttribute entry) {
        return entry.getName() == name;
      })) {
    emitError("constexpr '" + name + "' is declared twice");
    return value;
  }
  // Triton's integer constexprs are i32 unless they need more bits.
  Attribute attr = llvm::isInt<32>(value)
                       ? b_.getI32IntegerAttr(static_cast<int32_t>(value))
                       : b_.getI64IntegerAttr(value);
  constexprs_.push_back(b_.getNamedAttr(name, attr));
  return value;
}

double KernelBuilder::constexprFloat(StringRef name, double value) {
  if (ok())
    constexprs_.push_back(b_.getNamedAttr(name, b_.getF32FloatAttr(value)));
  return value;
}

bool KernelBuilder::constexprBool(StringRef name, bool value) {
  if (ok())
    constexprs_.push_back(b_.getNamedAttr(name, b_.getBoolAttr(value)));
  return value;
}

//===----------------------------------------------------------------------===//
// Grid, ranges, constants
//===----------------------------------------------------------------------===//

Tile KernelBuilder::programId(int axis) {
  if (!ok())
    return Tile();
  if (axis < 0 || axis > 2) {
    emitError("programId: axis must be 0, 1 or 2, not " + Twine(axis));
    return Tile();
  }
  return wrapResult(ProgramIdOp::create(b_, loc_, axis));
}

Tile KernelBuilder::numPrograms(int axis) {
  if (!ok())
    return Tile();
  if (axis < 0 || axis > 2) {
    emitError("numPrograms: axis must be 0, 1 or 2, not " + Twine(axis));
    return Tile();
  }
  return wrapResult(NumProgramsOp::create(b_, loc_, axis));
}

Tile KernelBuilder::arange(int32_t start, int32_t end) {
  if (!ok())
    return Tile();
  if (end <= start || !llvm::isPowerOf2_64(static_cast<int64_t>(end) - start)) {
    emitError("arange(" + Twine(start) + ", " + Twine(end) +
              "): the size must be a positive power of two");
    return Tile();
  }
  auto type = tileOf({static_cast<int64_t>(end) - start}, i32());
  return wrapResult(MakeRangeOp::create(
      b_, loc_, type, b_.getI32IntegerAttr(start), b_.getI32IntegerAttr(end)));
}

Tile KernelBuilder::literal(const Operand &op, Type type, StringRef what) {
  if (!ok())
    return Tile();
  Type dtype = getElementTypeOrSelf(type);
  TypedAttr scalar;
  if (auto floatType = dyn_cast<FloatType>(dtype)) {
    scalar = FloatAttr::get(floatType, op.floatValue());
  } else if (auto intType = dyn_cast<IntegerType>(dtype)) {
    if (op.isFloatLiteral()) {
      emitError(what + ": the float literal " + formatDouble(op.floatValue()) +
                " cannot meet an integer value of dtype " + str(dtype) +
                "; cast one side first");
      return Tile();
    }
    int64_t value = op.intValue();
    unsigned width = intType.getWidth();
    if (width == 1 && (value == 0 || value == 1)) {
      scalar = IntegerAttr::get(intType, value);
    } else if (width != 1 && width <= 64 &&
               (llvm::isIntN(width, value) || llvm::isUIntN(width, value))) {
      scalar = IntegerAttr::get(intType,
                                APInt(width, static_cast<uint64_t>(value),
                                      /*isSigned=*/llvm::isIntN(width, value),
                                      /*implicitTrunc=*/true));
    } else {
      emitError(what + ": the literal " + Twine(value) + " does not fit in " +
                str(dtype));
      return Tile();
    }
  } else {
    emitError(what + ": a number cannot stand for a value of type " +
              str(dtype));
    return Tile();
  }
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return wrapResult(arith::ConstantOp::create(
        b_, loc_, DenseElementsAttr::get(tile, ArrayRef<Attribute>(scalar))));
  return wrapResult(arith::ConstantOp::create(b_, loc_, scalar));
}

Tile KernelBuilder::resolve(const Operand &op, const Tile &like,
                            StringRef what) {
  if (op.isTile())
    return check(op.tile(), what) ? op.tile() : Tile();
  if (!check(like, what))
    return Tile();
  // A number beside pointers is an element offset, i32 as in Triton.
  Type dtype = like.isPointer() ? i32() : like.dtype();
  return literal(op, withElementType(like.type(), dtype), what);
}

Tile KernelBuilder::constant(const Operand &value, Type dtype) {
  return full({}, value, dtype);
}

Tile KernelBuilder::full(ArrayRef<int64_t> shape, const Operand &value,
                         Type dtype) {
  if (!ok())
    return Tile();
  if (value.isTile()) {
    if (!check(value.tile(), "full"))
      return Tile();
    if (value.tile().isTile()) {
      emitError("full: the fill value must be a scalar, not a tile of shape " +
                str(value.tile().shape()));
      return Tile();
    }
    Tile scalar = cast(value.tile(), dtype);
    return shape.empty() ? scalar : splat(scalar, shape);
  }
  Type type = shape.empty() ? dtype : Type(tileOf(shape, dtype));
  return literal(value, type, "full");
}

Tile KernelBuilder::zeros(ArrayRef<int64_t> shape, Type dtype) {
  return full(shape, 0, dtype);
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

Tile KernelBuilder::splat(const Tile &x, ArrayRef<int64_t> shape) {
  if (!check(x, "splat"))
    return Tile();
  if (x.isTile() || x.isBlockPointer()) {
    emitError("splat: expected a scalar, got " + str(x.type()));
    return Tile();
  }
  return wrapResult(
      SplatOp::create(b_, loc_, tileOf(shape, x.type()), x.value()));
}

Tile KernelBuilder::broadcastImpl(const Tile &x, ArrayRef<int64_t> shape,
                                  StringRef what) {
  if (!check(x, what))
    return Tile();
  if (x.isBlockPointer()) {
    emitError(what + ": a block pointer does not broadcast");
    return Tile();
  }
  if (!x.isTile())
    return shape.empty() ? x : splat(x, shape);
  ArrayRef<int64_t> from = x.shape();
  bool fits = from.size() <= shape.size();
  for (size_t i = 0; fits && i < from.size(); ++i) {
    int64_t dim = from[from.size() - 1 - i];
    fits = dim == 1 || dim == shape[shape.size() - 1 - i];
  }
  if (!fits) {
    emitError(what + ": cannot broadcast shape " + str(from) + " to " +
              str(shape));
    return Tile();
  }
  // numpy aligns trailing dimensions: missing leading ones become size 1.
  Tile result = x;
  while (result.rank() < static_cast<int64_t>(shape.size()))
    result = expandDims(result, 0);
  if (result.valid() && result.shape() != shape)
    result = wrapResult(BroadcastOp::create(
        b_, loc_, tileOf(shape, result.dtype()), result.value()));
  return result;
}

Tile KernelBuilder::broadcastTo(const Tile &x, ArrayRef<int64_t> shape) {
  return broadcastImpl(x, shape, "broadcastTo");
}

bool KernelBuilder::broadcastPair(Tile &a, Tile &b, StringRef what) {
  if (!check(a, what) || !check(b, what))
    return false;
  if (a.isBlockPointer() || b.isBlockPointer()) {
    emitError(what + ": block pointers take no arithmetic; use advance()");
    return false;
  }
  if (!a.isTile() && !b.isTile())
    return true;
  if (!a.isTile()) {
    a = splat(a, b.shape());
    return a.valid();
  }
  if (!b.isTile()) {
    b = splat(b, a.shape());
    return b.valid();
  }
  ArrayRef<int64_t> sa = a.shape(), sb = b.shape();
  size_t rank = std::max(sa.size(), sb.size());
  SmallVector<int64_t> shape(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < sa.size() ? sa[sa.size() - 1 - i] : 1;
    int64_t db = i < sb.size() ? sb[sb.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) {
      emitError(what + ": cannot broadcast shapes " + str(sa) + " and " +
                str(sb));
      return false;
    }
    shape[rank - 1 - i] = da == 1 ? db : da;
  }
  a = broadcastImpl(a, shape, what);
  b = broadcastImpl(b, shape, what);
  return a.valid() && b.valid();
}

Tile KernelBuilder::expandDims(const Tile &x, int axis) {
  if (!check(x, "expandDims"))
    return Tile();
  if (!x.isTile()) {
    emitError("expandDims: expected a tile, got " + str(x.type()));
    return Tile();
  }
  if (axis < 0 || axis > x.rank()) {
    emitError("expandDims: axis " + Twine(axis) +
              " is out of range for a tile of shape " + str(x.shape()));
    return Tile();
  }
  SmallVector<int64_t> shape(x.shape());
  shape.insert(shape.begin() + axis, 1);
  return wrapResult(ExpandDimsOp::create(b_, loc_, tileOf(shape, x.dtype()),
                                         x.value(),
                                         b_.getI32IntegerAttr(axis)));
}

Tile KernelBuilder::reshape(const Tile &x, ArrayRef<int64_t> shape) {
  if (!check(x, "reshape"))
    return Tile();
  if (!x.isTile()) {
    emitError("reshape: expected a tile, got " + str(x.type()));
    return Tile();
  }
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  if (count != llvm::cast<RankedTensorType>(x.type()).getNumElements()) {
    emitError("reshape: cannot reshape " + str(x.shape()) + " to " +
              str(shape) + " (element counts differ)");
    return Tile();
  }
  return wrapResult(
      ReshapeOp::create(b_, loc_, tileOf(shape, x.dtype()), x.value()));
}

Tile KernelBuilder::trans(const Tile &x, ArrayRef<int32_t> order) {
  if (!check(x, "trans"))
    return Tile();
  if (!x.isTile()) {
    emitError("trans: expected a tile, got " + str(x.type()));
    return Tile();
  }
  SmallVector<int32_t> perm(order);
  if (perm.empty())
    for (int64_t d = x.rank() - 1; d >= 0; --d)
      perm.push_back(static_cast<int32_t>(d));
  SmallVector<int32_t> sorted(perm);
  llvm::sort(sorted);
  bool isPermutation = static_cast<int64_t>(perm.size()) == x.rank();
  for (size_t i = 0; isPermutation && i < sorted.size(); ++i)
    isPermutation = sorted[i] == static_cast<int32_t>(i);
  if (!isPermutation) {
    emitError("trans: the order is not a permutation of the " +
              Twine(x.rank()) + " dimensions of " + str(x.shape()));
    return Tile();
  }
  SmallVector<int64_t> shape;
  for (int32_t d : perm)
    shape.push_back(x.shape()[d]);
  return wrapResult(
      TransOp::create(b_, loc_, tileOf(shape, x.dtype()), x.value(), perm));
}

Tile KernelBuilder::cat(const Tile &a, const Tile &b) {
  if (!check(a, "cat") || !check(b, "cat"))
    return Tile();
  if (!a.isTile() || a.type() != b.type()) {
    emitError("cat: expected two tiles of one type, got " + str(a.type()) +
              " and " + str(b.type()));
    return Tile();
  }
  SmallVector<int64_t> shape(a.shape());
  shape[0] *= 2;
  return wrapResult(
      CatOp::create(b_, loc_, tileOf(shape, a.dtype()), a.value(), b.value()));
}

Tile KernelBuilder::join(const Tile &a, const Tile &b) {
  if (!check(a, "join") || !check(b, "join"))
    return Tile();
  if (!a.isTile() || a.type() != b.type()) {
    emitError("join: expected two tiles of one type, got " + str(a.type()) +
              " and " + str(b.type()));
    return Tile();
  }
  SmallVector<int64_t> shape(a.shape());
  shape.push_back(2);
  return wrapResult(
      JoinOp::create(b_, loc_, tileOf(shape, a.dtype()), a.value(), b.value()));
}

//===----------------------------------------------------------------------===//
// Element-wise arithmetic
//===----------------------------------------------------------------------===//

Tile KernelBuilder::binary(BinaryOp op, const Operand &lhsOp,
                           const Operand &rhsOp) {
  StringRef what = binaryName(static_cast<int>(op));
  if (!ok())
    return Tile();
  if (!lhsOp.isTile() && !rhsOp.isTile()) {
    emitError(what + ": needs at least one Tile operand");
    return Tile();
  }
  for (const Operand *side : {&lhsOp, &rhsOp}) {
    if (!side->isTile())
      continue;
    if (!check(side->tile(), what))
      return Tile();
    if (side->tile().isBlockPointer()) {
      emitError(what + " is not defined on block pointers (" +
                str(side->tile().type()) + "); use advance()");
      return Tile();
    }
    if (side->tile().isPointer() &&
        (lhsOp.isFloatLiteral() || rhsOp.isFloatLiteral())) {
      emitError(what +
                ": pointers take integer offsets, not the float "
                "literal " +
                formatDouble(lhsOp.isFloatLiteral() ? lhsOp.floatValue()
                                                    : rhsOp.floatValue()));
      return Tile();
    }
  }
  // A number takes the dtype and the shape of the Tile beside it.
  Tile lhs = lhsOp.isTile() ? resolve(lhsOp, Tile(), what)
                            : resolve(lhsOp, rhsOp.tile(), what);
  if (!lhs.valid())
    return Tile();
  Tile rhs = resolve(rhsOp, lhs, what);
  if (!rhs.valid())
    return Tile();

  Type lt = lhs.dtype(), rt = rhs.dtype();
  bool lptr = isPointerElem(lt), rptr = isPointerElem(rt);
  if (lptr || rptr) {
    // Only pointer ± integer offsets exist: tk.addptr.
    bool offsetIsInt =
        isa<IntegerType>(lptr ? rt : lt) && !(lptr ? rt : lt).isInteger(1);
    bool allowed = offsetIsInt && !(lptr && rptr) &&
                   (op == BinaryOp::Add || (op == BinaryOp::Sub && lptr));
    if (!allowed) {
      emitError(what + " is not defined on " + str(lhs.type()) + " and " +
                str(rhs.type()) +
                "; pointers only take + and - of integer offsets");
      return Tile();
    }
    if (!broadcastPair(lhs, rhs, what))
      return Tile();
    Tile ptr = lptr ? lhs : rhs, offset = lptr ? rhs : lhs;
    if (op == BinaryOp::Sub)
      offset = neg(offset);
    if (!offset.valid())
      return Tile();
    return wrapResult(
        AddPtrOp::create(b_, loc_, ptr.type(), ptr.value(), offset.value()));
  }
  if (lt != rt) {
    emitError(what + ": dtype mismatch: " + str(lt) + " and " + str(rt) +
              "; cast one side first");
    return Tile();
  }
  bool isFloat = isa<FloatType>(lt);
  bool isInt = isa<IntegerType>(lt);
  if (!isFloat && !isInt) {
    emitError(what + " is not defined on " + str(lt));
    return Tile();
  }
  bool intOnly = op == BinaryOp::And || op == BinaryOp::Or ||
                 op == BinaryOp::Xor || op == BinaryOp::Shl ||
                 op == BinaryOp::Shr;
  if (intOnly && isFloat) {
    emitError(what + " needs integer operands, got " + str(lt));
    return Tile();
  }
  if (!broadcastPair(lhs, rhs, what))
    return Tile();
  Value l = lhs.value(), r = rhs.value();
  auto cmp = [&](arith::CmpFPredicate fp, arith::CmpIPredicate ip) {
    if (isFloat)
      return wrapResult(arith::CmpFOp::create(b_, loc_, fp, l, r));
    return wrapResult(arith::CmpIOp::create(b_, loc_, ip, l, r));
  };
  auto fastmath = contractFloats_ ? arith::FastMathFlags::contract
                                  : arith::FastMathFlags::none;
  switch (op) {
  case BinaryOp::Add:
    return isFloat ? wrapResult(arith::AddFOp::create(b_, loc_, l, r, fastmath))
                   : wrapResult(arith::AddIOp::create(b_, loc_, l, r));
  case BinaryOp::Sub:
    return isFloat ? wrapResult(arith::SubFOp::create(b_, loc_, l, r, fastmath))
                   : wrapResult(arith::SubIOp::create(b_, loc_, l, r));
  case BinaryOp::Mul:
    return isFloat ? wrapResult(arith::MulFOp::create(b_, loc_, l, r, fastmath))
                   : wrapResult(arith::MulIOp::create(b_, loc_, l, r));
  case BinaryOp::Div:
    return isFloat ? wrapResult(arith::DivFOp::create(b_, loc_, l, r))
                   : wrapResult(arith::DivSIOp::create(b_, loc_, l, r));
  case BinaryOp::Rem:
    return isFloat ? wrapResult(arith::RemFOp::create(b_, loc_, l, r))
                   : wrapResult(arith::RemSIOp::create(b_, loc_, l, r));
  case BinaryOp::And:
    return wrapResult(arith::AndIOp::create(b_, loc_, l, r));
  case BinaryOp::Or:
    return wrapResult(arith::OrIOp::create(b_, loc_, l, r));
  case BinaryOp::Xor:
    return wrapResult(arith::XOrIOp::create(b_, loc_, l, r));
  case BinaryOp::Shl:
    return wrapResult(arith::ShLIOp::create(b_, loc_, l, r));
  case BinaryOp::Shr:
    return wrapResult(arith::ShRSIOp::create(b_, loc_, l, r));
  case BinaryOp::Lt:
    return cmp(arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt);
  case BinaryOp::Le:
    return cmp(arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle);
  case BinaryOp::Gt:
    return cmp(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt);
  case BinaryOp::Ge:
    return cmp(arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge);
  case BinaryOp::Eq:
    return cmp(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq);
  case BinaryOp::Ne:
    // `x != x` must be true for NaN, hence unordered.
    return cmp(arith::CmpFPredicate::UNE, arith::CmpIPredicate::ne);
  case BinaryOp::Max:
    return isFloat ? wrapResult(arith::MaxNumFOp::create(b_, loc_, l, r))
                   : wrapResult(arith::MaxSIOp::create(b_, loc_, l, r));
  case BinaryOp::Min:
    return isFloat ? wrapResult(arith::MinNumFOp::create(b_, loc_, l, r))
                   : wrapResult(arith::MinSIOp::create(b_, loc_, l, r));
  }
  return Tile();
}

Tile KernelBuilder::add(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Add, l, r);
}
Tile KernelBuilder::sub(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Sub, l, r);
}
Tile KernelBuilder::mul(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Mul, l, r);
}
Tile KernelBuilder::div(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Div, l, r);
}
Tile KernelBuilder::fastDiv(const Operand &l, const Operand &r) {
  Tile quotient = binary(BinaryOp::Div, l, r);
  if (!quotient.valid())
    return Tile();
  auto divf = quotient.value().getDefiningOp<arith::DivFOp>();
  if (!divf) {
    emitError("fastDiv needs float operands, got " + str(quotient.type()));
    return Tile();
  }
  divf.setFastmath(arith::FastMathFlags::afn);
  return quotient;
}
Tile KernelBuilder::rem(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Rem, l, r);
}
Tile KernelBuilder::bitAnd(const Operand &l, const Operand &r) {
  return binary(BinaryOp::And, l, r);
}
Tile KernelBuilder::bitOr(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Or, l, r);
}
Tile KernelBuilder::bitXor(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Xor, l, r);
}
Tile KernelBuilder::shl(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Shl, l, r);
}
Tile KernelBuilder::shr(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Shr, l, r);
}
Tile KernelBuilder::lt(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Lt, l, r);
}
Tile KernelBuilder::le(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Le, l, r);
}
Tile KernelBuilder::gt(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Gt, l, r);
}
Tile KernelBuilder::ge(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Ge, l, r);
}
Tile KernelBuilder::eq(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Eq, l, r);
}
Tile KernelBuilder::ne(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Ne, l, r);
}
Tile KernelBuilder::maximum(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Max, l, r);
}
Tile KernelBuilder::minimum(const Operand &l, const Operand &r) {
  return binary(BinaryOp::Min, l, r);
}

Tile KernelBuilder::neg(const Tile &x) {
  if (!check(x, "operator-"))
    return Tile();
  if (x.isFloat())
    return wrapResult(arith::NegFOp::create(b_, loc_, x.value()));
  if (!x.isInt() || x.isBool()) {
    emitError("operator-: cannot negate " + str(x.type()));
    return Tile();
  }
  // Triton negates integers as `0 - x`.
  return sub(0, x);
}

Tile KernelBuilder::logicalNot(const Tile &x) {
  if (!check(x, "operator!"))
    return Tile();
  if (x.isBool())
    return bitXor(x, 1);
  if (x.isInt())
    return eq(x, 0);
  emitError("operator!: expected an i1 or integer value, got " + str(x.type()));
  return Tile();
}

Tile KernelBuilder::bitNot(const Tile &x) {
  if (!check(x, "operator~"))
    return Tile();
  if (x.isBool())
    return bitXor(x, 1);
  if (!x.isInt()) {
    emitError("operator~: expected an integer value, got " + str(x.type()));
    return Tile();
  }
  return bitXor(x, -1);
}

Tile KernelBuilder::cdiv(const Operand &a, const Operand &b) {
  if (!ok())
    return Tile();
  Tile sum = add(a, b);
  Tile minusOne = sub(sum, 1);
  Tile result = div(minusOne, b);
  if (result.valid() && !result.isInt()) {
    emitError("cdiv: expected integers, got " + str(result.type()));
    return Tile();
  }
  return result;
}

Tile KernelBuilder::where(const Tile &cond, const Operand &aOp,
                          const Operand &bOp) {
  if (!check(cond, "where"))
    return Tile();
  if (!cond.isBool()) {
    emitError("where: the condition must be i1, not " + str(cond.type()));
    return Tile();
  }
  if (!aOp.isTile() && !bOp.isTile()) {
    emitError("where: at least one of the two values must be a Tile");
    return Tile();
  }
  Tile a = aOp.isTile() ? resolve(aOp, Tile(), "where")
                        : resolve(aOp, bOp.tile(), "where");
  if (!a.valid())
    return Tile();
  Tile b = resolve(bOp, a, "where");
  if (!b.valid())
    return Tile();
  if (a.dtype() != b.dtype()) {
    emitError("where: dtype mismatch: " + str(a.dtype()) + " and " +
              str(b.dtype()) + "; cast one side first");
    return Tile();
  }
  Tile c = cond;
  if (!broadcastPair(c, a, "where") || !broadcastPair(c, b, "where") ||
      !broadcastPair(a, b, "where"))
    return Tile();
  if (c.shape() != a.shape() && !broadcastPair(c, a, "where"))
    return Tile();
  return wrapResult(
      arith::SelectOp::create(b_, loc_, c.value(), a.value(), b.value()));
}

Tile KernelBuilder::fma(const Tile &aTile, const Operand &bOp,
                        const Operand &cOp) {
  if (!check(aTile, "fma"))
    return Tile();
  if (!aTile.isFloat()) {
    emitError("fma: expected floating-point values, got " + str(aTile.type()));
    return Tile();
  }
  Tile a = aTile;
  Tile b = resolve(bOp, a, "fma");
  Tile c = resolve(cOp, a, "fma");
  if (!b.valid() || !c.valid())
    return Tile();
  if (b.dtype() != a.dtype() || c.dtype() != a.dtype()) {
    emitError("fma: dtype mismatch: " + str(a.dtype()) + ", " + str(b.dtype()) +
              " and " + str(c.dtype()) + "; cast first");
    return Tile();
  }
  if (!broadcastPair(a, b, "fma") || !broadcastPair(a, c, "fma") ||
      !broadcastPair(b, c, "fma"))
    return Tile();
  return wrapResult(
      math::FmaOp::create(b_, loc_, a.value(), b.value(), c.value()));
}
