//===- TkOps.cpp - tk operations: verifiers, builders, formats ------------===//
//
// Each verifier says what it expected, so a malformed kernel is rejected with
// a located diagnostic before any pass or backend sees it.
//
//===----------------------------------------------------------------------===//

#include "tk/ir/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tk;

#define GET_OP_CLASSES
#include "tk/ir/TkOps.cpp.inc"

namespace {

/// A shape as `[64, 128]`, for diagnostics.
std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

/// True when `order` is a permutation of [0, rank).
bool isPermutation(ArrayRef<int32_t> order, int64_t rank) {
  if (static_cast<int64_t>(order.size()) != rank)
    return false;
  llvm::SmallSet<int32_t, 4> seen;
  for (int32_t d : order)
    if (d < 0 || d >= rank || !seen.insert(d).second)
      return false;
  return true;
}

/// Checks that `value` has the same shape as the pointer operand (a scalar for
/// a scalar pointer). `what` names the operand in the message.
LogicalResult verifySameShapeAsPtr(Operation *op, Type ptrType, Value value,
                                   StringRef what) {
  if (!value)
    return success();
  bool ptrIsTile = isa<RankedTensorType>(ptrType);
  bool valueIsTile = isa<RankedTensorType>(value.getType());
  ArrayRef<int64_t> valueShape = getShapeOrEmpty(value.getType());
  if (!ptrIsTile && valueIsTile)
    return op->emitOpError() << "expected a scalar " << what
                             << " like the pointer, not a tile of shape "
                             << formatShape(valueShape);
  if (ptrIsTile && (!valueIsTile || getShapeOrEmpty(ptrType) != valueShape))
    return op->emitOpError()
           << "expected " << what << " of shape "
           << formatShape(getShapeOrEmpty(ptrType)) << " like the pointer, not "
           << (valueIsTile ? "shape " + formatShape(valueShape) : "a scalar");
  return success();
}

/// Checks that `value` (if any) has the type `expected`, which the pointer
/// operand determines. `what` names the operand, `why` the rule.
LogicalResult verifyTypeFromPtr(Operation *op, Value value, Type expected,
                                StringRef what, StringRef why) {
  if (!value || value.getType() == expected)
    return success();
  return op->emitOpError() << what << " must be " << expected << " (" << why
                           << "), not " << value.getType();
}

/// Shared checks of tk.load and tk.store: a block pointer takes a
/// boundary_check and no mask; a pointer tile takes a mask and no
/// boundary_check.
LogicalResult verifyMemoryAccess(Operation *op, Type ptrType, Value mask,
                                 ArrayRef<int32_t> boundaryCheck) {
  auto ptr = dyn_cast<PtrType>(ptrType);
  if (ptr && ptr.isBlockPointer()) {
    if (mask)
      return op->emitOpError()
             << "a block-pointer access takes boundary_check, not a mask";
    int64_t rank = cast<RankedTensorType>(ptr.getPointeeType()).getRank();
    llvm::SmallSet<int32_t, 4> seen;
    for (int32_t dim : boundaryCheck) {
      if (dim < 0 || dim >= rank)
        return op->emitOpError()
               << "boundary_check dimension " << dim
               << " is out of range for a block of rank " << rank;
      if (!seen.insert(dim).second)
        return op->emitOpError()
               << "boundary_check lists dimension " << dim << " twice";
    }
    return success();
  }
  if (!boundaryCheck.empty())
    return op->emitOpError() << "boundary_check applies to block pointers only";
  if (mask) {
    if (!getElementTypeOrSelf(mask.getType()).isInteger(1))
      return op->emitOpError() << "mask must hold i1, not "
                               << getElementTypeOrSelf(mask.getType());
    return verifySameShapeAsPtr(op, ptrType, mask, "mask");
  }
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// FuncOp
//===----------------------------------------------------------------------===//

void FuncOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                   FunctionType type) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  state.addRegion();
}

ParseResult FuncOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void FuncOp::print(OpAsmPrinter &printer) {
  function_interface_impl::printFunctionOp(
      printer, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

DictionaryAttr FuncOp::getConstexprs() {
  return (*this)->getAttrOfType<DictionaryAttr>(TkDialect::kConstexprsAttrName);
}

LogicalResult FuncOp::verify() {
  if (!getFunctionType().getResults().empty())
    return emitOpError() << "a kernel returns nothing; write results through "
                            "pointers (found "
                         << getFunctionType().getNumResults() << " results)";
  for (auto [index, type] : llvm::enumerate(getArgumentTypes())) {
    bool isScalar = isa<IntegerType, FloatType>(type);
    auto ptr = dyn_cast<PtrType>(type);
    if (!isScalar && !(ptr && !ptr.isBlockPointer()))
      return emitOpError() << "argument " << index
                           << " must be a scalar or a !tk.ptr to scalars, not "
                           << type;
  }
  if (getBody().empty())
    return emitOpError() << "a kernel needs a body";
  return success();
}

LogicalResult ReturnOp::verify() {
  auto func = (*this)->getParentOfType<FuncOp>();
  if (getSrcs().size() != func.getFunctionType().getNumResults())
    return emitOpError() << "returns " << getSrcs().size()
                         << " values but the kernel returns "
                         << func.getFunctionType().getNumResults();
  return success();
}

//===----------------------------------------------------------------------===//
// Program position
//===----------------------------------------------------------------------===//

static LogicalResult verifyGridAxis(Operation *op, int32_t axis) {
  if (axis > 2)
    return op->emitOpError() << "axis must be 0, 1 or 2, not " << axis;
  return success();
}

LogicalResult ProgramIdOp::verify() { return verifyGridAxis(*this, getAxis()); }
LogicalResult NumProgramsOp::verify() {
  return verifyGridAxis(*this, getAxis());
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult MakeRangeOp::verify() {
  // The accessors return the bounds as unsigned; read them as the signed i32
  // they are, so a negative start is not taken for a huge one.
  int64_t start = getStartAttr().getInt(), end = getEndAttr().getInt();
  if (end <= start)
    return emitOpError() << "end (" << end << ") must be greater than start ("
                         << start << ")";
  int64_t size = end - start;
  if (!llvm::isPowerOf2_64(size))
    return emitOpError() << "range size " << size << " must be a power of two";
  auto type = getType();
  if (type.getRank() != 1 || type.getDimSize(0) != size) {
    auto expected = RankedTensorType::get({size}, type.getElementType(),
                                          type.getEncoding());
    return emitOpError() << "result must be " << expected << ", not " << type;
  }
  return success();
}

LogicalResult SplatOp::verify() {
  if (getType().getElementType() != getSrc().getType())
    return emitOpError() << "result element type " << getType().getElementType()
                         << " differs from the scalar's type "
                         << getSrc().getType();
  return success();
}

OpFoldResult SplatOp::fold(FoldAdaptor adaptor) {
  if (auto value = dyn_cast_if_present<TypedAttr>(adaptor.getSrc()))
    if (isa<IntegerAttr, FloatAttr>(value))
      return SplatElementsAttr::get(getType(), value);
  return {};
}

LogicalResult BroadcastOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto dst = getType();
  if (src.getElementType() != dst.getElementType())
    return emitOpError() << "element type changes from " << src.getElementType()
                         << " to " << dst.getElementType();
  if (src.getRank() != dst.getRank())
    return emitOpError() << "rank changes from " << src.getRank() << " to "
                         << dst.getRank() << "; use tk.expand_dims first";
  for (int64_t d = 0; d < src.getRank(); ++d)
    if (src.getDimSize(d) != 1 && src.getDimSize(d) != dst.getDimSize(d))
      return emitOpError() << "dimension " << d << " of size "
                           << src.getDimSize(d) << " cannot broadcast to "
                           << dst.getDimSize(d);
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getSrc()))
    return SplatElementsAttr::get(getType(), splat.getSplatValue<Attribute>());
  return {};
}

LogicalResult ExpandDimsOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  int64_t axis = getAxis();
  if (axis > src.getRank())
    return emitOpError() << "axis " << axis << " is out of range for rank "
                         << src.getRank();
  SmallVector<int64_t> shape(src.getShape());
  shape.insert(shape.begin() + axis, 1);
  auto expected = RankedTensorType::get(shape, src.getElementType(),
                                        getType().getEncoding());
  if (getType() != expected)
    return emitOpError() << "result must be " << expected << ", not "
                         << getType();
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  if (src.getElementType() != getType().getElementType())
    return emitOpError() << "element type changes from " << src.getElementType()
                         << " to " << getType().getElementType();
  if (src.getNumElements() != getType().getNumElements())
    return emitOpError() << "result must have the " << src.getNumElements()
                         << " elements of the source, not "
                         << getType().getNumElements();
  return success();
}

LogicalResult TransOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  ArrayRef<int32_t> order = getOrder();
  if (!isPermutation(order, src.getRank()))
    return emitOpError() << "order must be a permutation of the "
                         << src.getRank() << " dimensions";
  SmallVector<int64_t> shape;
  for (int32_t d : order)
    shape.push_back(src.getDimSize(d));
  auto expected = RankedTensorType::get(shape, src.getElementType(),
                                        getType().getEncoding());
  if (getType() != expected)
    return emitOpError() << "result must be " << expected << ", not "
                         << getType();
  return success();
}

LogicalResult CatOp::verify() {
  auto src = cast<RankedTensorType>(getLhs().getType());
  if (src.getRank() == 0)
    return emitOpError() << "concatenates along dimension 0, so the operands "
                            "must have rank 1 or more, not "
                         << src;
  SmallVector<int64_t> shape(src.getShape());
  shape[0] *= 2;
  auto expected = RankedTensorType::get(shape, src.getElementType(),
                                        getType().getEncoding());
  if (getType() != expected)
    return emitOpError() << "result must be " << expected << ", not "
                         << getType();
  return success();
}

LogicalResult JoinOp::verify() {
  auto src = cast<RankedTensorType>(getLhs().getType());
  SmallVector<int64_t> shape(src.getShape());
  shape.push_back(2);
  auto expected = RankedTensorType::get(shape, src.getElementType(),
                                        getType().getEncoding());
  if (getType() != expected)
    return emitOpError() << "result must be " << expected << ", not "
                         << getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Pointers and memory
//===----------------------------------------------------------------------===//

LogicalResult AddPtrOp::verify() {
  return verifySameShapeAsPtr(*this, getPtr().getType(), getOffset(), "offset");
}

OpFoldResult AddPtrOp::fold(FoldAdaptor adaptor) {
  if (matchPattern(getOffset(), m_Zero()))
    return getPtr();
  return {};
}

void LoadOp::build(OpBuilder &builder, OperationState &state, Value ptr,
                   Value mask, Value other) {
  build(builder, state, getLoadedType(ptr.getType()), ptr, mask, other,
        /*boundary_check=*/builder.getDenseI32ArrayAttr({}),
        /*padding=*/nullptr, /*is_volatile=*/builder.getBoolAttr(false));
}

void LoadOp::build(OpBuilder &builder, OperationState &state, Value blockPtr,
                   ArrayRef<int32_t> boundaryCheck,
                   std::optional<PaddingOption> padding) {
  PaddingOptionAttr paddingAttr;
  if (padding)
    paddingAttr = PaddingOptionAttr::get(builder.getContext(), *padding);
  build(builder, state, getLoadedType(blockPtr.getType()), blockPtr,
        /*mask=*/Value(), /*other=*/Value(),
        builder.getDenseI32ArrayAttr(boundaryCheck), paddingAttr,
        builder.getBoolAttr(false));
}

LogicalResult LoadOp::verify() {
  Type loaded = getLoadedType(getPtr().getType());
  if (getType() != loaded)
    return emitOpError() << "result must be " << loaded
                         << " (the pointee type), not " << getType();
  if (getOther() && !getMask())
    return emitOpError() << "'other' needs a mask: it fills the lanes the "
                            "mask turns off";
  if (getPadding() && getBoundaryCheck().empty())
    return emitOpError() << "padding needs a boundary_check";
  if (failed(verifyMemoryAccess(*this, getPtr().getType(), getMask(),
                                getBoundaryCheck())))
    return failure();
  return verifyTypeFromPtr(*this, getOther(), loaded, "other",
                           "the type of the loaded value");
}

void LoadOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getPtrMutable(),
                       SideEffects::DefaultResource::get());
  if (getIsVolatile())
    effects.emplace_back(MemoryEffects::Write::get(),
                         SideEffects::DefaultResource::get());
}

LogicalResult StoreOp::verify() {
  if (failed(verifyTypeFromPtr(*this, getValue(),
                               getLoadedType(getPtr().getType()), "value",
                               "the pointee type")))
    return failure();
  return verifyMemoryAccess(*this, getPtr().getType(), getMask(),
                            getBoundaryCheck());
}

void StoreOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(), &getPtrMutable(),
                       SideEffects::DefaultResource::get());
}

LogicalResult MakeBlockPtrOp::verify() {
  auto block = cast<RankedTensorType>(getType().getPointeeType());
  int64_t rank = block.getRank();
  auto expectRank = [&](size_t count, StringRef what) -> LogicalResult {
    if (static_cast<int64_t>(count) == rank)
      return success();
    return emitOpError() << "has " << count << " " << what
                         << " but the block has rank " << rank;
  };
  if (failed(expectRank(getShape().size(), "shape values")) ||
      failed(expectRank(getStrides().size(), "strides")) ||
      failed(expectRank(getOffsets().size(), "offsets")))
    return failure();
  if (!isPermutation(getOrder(), rank))
    return emitOpError() << "order must be a permutation of the " << rank
                         << " dimensions";
  Type baseElem = getBase().getType().getPointeeType();
  if (baseElem != block.getElementType())
    return emitOpError() << "base points to " << baseElem
                         << " but the block holds " << block.getElementType();
  return success();
}

LogicalResult AdvanceOp::verify() {
  int64_t rank =
      cast<RankedTensorType>(getPtr().getType().getPointeeType()).getRank();
  if (static_cast<int64_t>(getOffsets().size()) != rank)
    return emitOpError() << "has " << getOffsets().size()
                         << " offsets but the block has rank " << rank;
  return success();
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

/// The accumulator types a dot of `in` inputs may produce.
static bool isAllowedDotPair(Type in, Type acc) {
  if (in.isF16() || isa<Float8E4M3FNType, Float8E5M2Type>(in))
    return acc.isF16() || acc.isF32();
  if (in.isBF16() || in.isF32())
    return acc.isF32();
  if (in.isF64())
    return acc.isF64();
  if (in.isInteger(8))
    return acc.isInteger(32);
  return false;
}

LogicalResult DotOp::verify() {
  auto a = cast<RankedTensorType>(getA().getType());
  auto b = cast<RankedTensorType>(getB().getType());
  auto c = cast<RankedTensorType>(getAcc().getType());
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError() << "operands must be 2-D tiles (got ranks "
                         << a.getRank() << ", " << b.getRank() << ", "
                         << c.getRank() << ")";
  int64_t m = a.getDimSize(0), k = a.getDimSize(1), n = b.getDimSize(1);
  if (b.getDimSize(0) != k)
    return emitOpError() << "expected b to have " << k
                         << " rows (the columns of a), not " << b.getDimSize(0);
  if (c.getDimSize(0) != m || c.getDimSize(1) != n)
    return emitOpError() << "expected the accumulator to be " << m << "x" << n
                         << ", not " << c.getDimSize(0) << "x"
                         << c.getDimSize(1);
  Type aElem = a.getElementType(), bElem = b.getElementType();
  bool bothFp8 = isa<Float8E4M3FNType, Float8E5M2Type>(aElem) &&
                 isa<Float8E4M3FNType, Float8E5M2Type>(bElem);
  if (aElem != bElem && !bothFp8)
    return emitOpError() << "operand element types differ: " << aElem << " and "
                         << bElem;
  if (!isAllowedDotPair(aElem, c.getElementType()))
    return emitOpError() << "cannot multiply " << aElem << " inputs into a "
                         << c.getElementType() << " accumulator";
  if (getInputPrecision() != InputPrecision::IEEE && !aElem.isF32())
    return emitOpError() << "input_precision "
                         << stringifyInputPrecision(getInputPrecision())
                         << " applies to f32 inputs only";
  return success();
}

SmallVector<int64_t> ReduceOp::reducedShape(ArrayRef<int64_t> shape, int axis) {
  SmallVector<int64_t> result(shape);
  result.erase(result.begin() + axis);
  return result;
}

/// Adds the combiner block: (acc..., next...) with the sources' element
/// types.
static void addCombinerBlock(OpBuilder &builder, OperationState &state,
                             ValueRange srcs) {
  Region *region = state.addRegion();
  Block *block = new Block();
  region->push_back(block);
  for (int copy = 0; copy < 2; ++copy)
    for (Value src : srcs)
      block->addArgument(getElementTypeOrSelf(src.getType()), state.location);
}

void ReduceOp::build(OpBuilder &builder, OperationState &state, ValueRange srcs,
                     int axis) {
  SmallVector<Type> resultTypes;
  for (Value src : srcs) {
    auto tile = cast<RankedTensorType>(src.getType());
    SmallVector<int64_t> shape = reducedShape(tile.getShape(), axis);
    resultTypes.push_back(
        shape.empty() ? tile.getElementType()
                      : RankedTensorType::get(shape, tile.getElementType()));
  }
  state.addOperands(srcs);
  state.addTypes(resultTypes);
  state.getOrAddProperties<Properties>().axis = builder.getI32IntegerAttr(axis);
  addCombinerBlock(builder, state, srcs);
}

void ScanOp::build(OpBuilder &builder, OperationState &state, ValueRange srcs,
                   int axis, bool reverse) {
  state.addOperands(srcs);
  for (Value src : srcs)
    state.addTypes(src.getType());
  auto &props = state.getOrAddProperties<Properties>();
  props.axis = builder.getI32IntegerAttr(axis);
  props.reverse = builder.getBoolAttr(reverse);
  addCombinerBlock(builder, state, srcs);
}

/// Shared operand/result checks of tk.reduce and tk.scan.
static LogicalResult verifyCombineOperands(Operation *op, ValueRange srcs,
                                           TypeRange results, int64_t axis,
                                           bool keepsAxis) {
  if (srcs.empty())
    return op->emitOpError() << "needs at least one source tile";
  auto first = cast<RankedTensorType>(srcs.front().getType());
  if (axis >= first.getRank())
    return op->emitOpError() << "axis " << axis << " is out of range for rank "
                             << first.getRank();
  for (Value src : srcs.drop_front())
    if (cast<RankedTensorType>(src.getType()).getShape() != first.getShape())
      return op->emitOpError() << "all sources must have the same shape";
  if (results.size() != srcs.size())
    return op->emitOpError() << "has " << srcs.size() << " sources but "
                             << results.size() << " results";
  for (auto [index, pair] : llvm::enumerate(llvm::zip(srcs, results))) {
    auto [src, result] = pair;
    auto tile = cast<RankedTensorType>(src.getType());
    Type expected = tile;
    if (!keepsAxis) {
      SmallVector<int64_t> shape =
          ReduceOp::reducedShape(tile.getShape(), axis);
      expected = shape.empty()
                     ? tile.getElementType()
                     : Type(RankedTensorType::get(
                           shape, tile.getElementType(),
                           isa<RankedTensorType>(result)
                               ? cast<RankedTensorType>(result).getEncoding()
                               : Attribute()));
    }
    if (result != expected)
      return op->emitOpError() << "result " << index << " must be " << expected
                               << ", not " << result;
  }
  return success();
}

/// The combiner takes (acc..., next...) of the sources' element types and
/// returns one value per source of the same types.
static LogicalResult verifyCombinerRegion(Operation *op, Region &region,
                                          ValueRange srcs) {
  Block &block = region.front();
  SmallVector<Type> elems;
  for (Value src : srcs)
    elems.push_back(getElementTypeOrSelf(src.getType()));
  if (block.getNumArguments() != 2 * elems.size())
    return op->emitOpError() << "combiner must take " << 2 * elems.size()
                             << " arguments (accumulated, then new values), "
                                "not "
                             << block.getNumArguments();
  for (unsigned i = 0; i < block.getNumArguments(); ++i)
    if (block.getArgument(i).getType() != elems[i % elems.size()])
      return op->emitOpError() << "combiner argument " << i << " must be "
                               << elems[i % elems.size()] << ", not "
                               << block.getArgument(i).getType();
  Operation *terminator = block.getTerminator();
  if (terminator->getNumOperands() != elems.size())
    return op->emitOpError() << "combiner must return " << elems.size()
                             << " values, not " << terminator->getNumOperands();
  for (auto [index, value] : llvm::enumerate(terminator->getOperands()))
    if (value.getType() != elems[index])
      return op->emitOpError() << "combiner result " << index << " must be "
                               << elems[index] << ", not " << value.getType();
  return success();
}

LogicalResult ReduceOp::verify() {
  return verifyCombineOperands(*this, getSrcs(), getResultTypes(), getAxis(),
                               /*keepsAxis=*/false);
}
LogicalResult ReduceOp::verifyRegions() {
  return verifyCombinerRegion(*this, getCombineOp(), getSrcs());
}
LogicalResult ScanOp::verify() {
  return verifyCombineOperands(*this, getSrcs(), getResultTypes(), getAxis(),
                               /*keepsAxis=*/true);
}
LogicalResult ScanOp::verifyRegions() {
  return verifyCombinerRegion(*this, getCombineOp(), getSrcs());
}

LogicalResult FpToFpOp::verify() {
  Type src = getElementTypeOrSelf(getSrc().getType());
  Type dst = getElementTypeOrSelf(getType());
  if (src == dst)
    return emitOpError() << "converts " << src << " to itself";
  unsigned srcWidth = src.getIntOrFloatBitWidth();
  unsigned dstWidth = dst.getIntOrFloatBitWidth();
  bool narrows = dstWidth < srcWidth ||
                 (dstWidth == srcWidth && !dst.isF32() && !dst.isF64());
  if (narrows && !getRounding())
    return emitOpError() << "narrowing " << src << " to " << dst
                         << " needs a rounding mode";
  if (!narrows && getRounding())
    return emitOpError() << "widening " << src << " to " << dst
                         << " is exact and takes no rounding mode";
  return success();
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

/// The operand `value` of an atomic has the pointee type of `ptr`.
static LogicalResult verifyAtomicValue(Operation *op, Value ptr, Value value,
                                       StringRef what) {
  Type expected = getLoadedType(ptr.getType());
  if (value.getType() != expected)
    return op->emitOpError()
           << what << " must be " << expected << ", not " << value.getType();
  return success();
}

LogicalResult AtomicRMWOp::verify() {
  if (failed(verifyAtomicValue(*this, getPtr(), getVal(), "value")))
    return failure();
  if (getResult().getType() != getVal().getType())
    return emitOpError() << "result must have the value's type "
                         << getVal().getType() << ", not "
                         << getResult().getType();
  if (getMask()) {
    if (!getElementTypeOrSelf(getMask().getType()).isInteger(1))
      return emitOpError() << "mask must hold i1, not "
                           << getElementTypeOrSelf(getMask().getType());
    if (failed(
            verifySameShapeAsPtr(*this, getPtr().getType(), getMask(), "mask")))
      return failure();
  }
  Type elem = getElementTypeOrSelf(getVal().getType());
  bool isFloat = isa<FloatType>(elem);
  switch (getKind()) {
  case AtomicRMWKind::FAdd:
    if (!isFloat)
      return emitOpError() << "fadd needs a float value, not " << elem;
    break;
  case AtomicRMWKind::Add:
  case AtomicRMWKind::UMax:
  case AtomicRMWKind::UMin:
  case AtomicRMWKind::And:
  case AtomicRMWKind::Or:
  case AtomicRMWKind::Xor:
    if (isFloat)
      return emitOpError() << stringifyAtomicRMWKind(getKind())
                           << " needs an integer value, not " << elem
                           << (getKind() == AtomicRMWKind::Add
                                   ? " (use fadd for floats)"
                                   : "");
    break;
  case AtomicRMWKind::Max:
  case AtomicRMWKind::Min:
  case AtomicRMWKind::Xchg:
    break;
  }
  return success();
}

void AtomicRMWOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getPtrMutable(),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), &getPtrMutable(),
                       SideEffects::DefaultResource::get());
}

LogicalResult AtomicCASOp::verify() {
  if (failed(verifyAtomicValue(*this, getPtr(), getCmp(), "compare value")) ||
      failed(verifyAtomicValue(*this, getPtr(), getVal(), "new value")))
    return failure();
  if (getResult().getType() != getVal().getType())
    return emitOpError() << "result must have the value's type "
                         << getVal().getType() << ", not "
                         << getResult().getType();
  unsigned width =
      getElementTypeOrSelf(getVal().getType()).getIntOrFloatBitWidth();
  if (width != 16 && width != 32 && width != 64)
    return emitOpError() << "compare-and-swap works on 16-, 32- or 64-bit "
                            "values, not "
                         << width << "-bit";
  return success();
}

void AtomicCASOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getPtrMutable(),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), &getPtrMutable(),
                       SideEffects::DefaultResource::get());
}
