//===- TkDialect.cpp - the tk dialect, types and attributes ---------------===//
//
// Registers the dialect, verifies the pointer type and the dialect attributes
// (`tk.divisibility` on arguments, `tk.constexprs` on kernels).
//
//===----------------------------------------------------------------------===//

#include "tk/ir/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tk;

#include "tk/ir/TkEnums.cpp.inc"
#include "tk/ir/TkOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tk/ir/TkTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tk/ir/TkAttrs.cpp.inc"

void TkDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tk/ir/TkOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tk/ir/TkTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tk/ir/TkAttrs.cpp.inc"
      >();
}

void tk::registerTkDialects(DialectRegistry &registry) {
  registry.insert<TkDialect, arith::ArithDialect, math::MathDialect,
                  scf::SCFDialect>();
}

Operation *TkDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

//===----------------------------------------------------------------------===//
// Helpers on types
//===----------------------------------------------------------------------===//

ArrayRef<int64_t> tk::getShapeOrEmpty(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return tile.getShape();
  return {};
}

Type tk::withElementType(Type type, Type elementType) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return RankedTensorType::get(tile.getShape(), elementType,
                                 tile.getEncoding());
  return elementType;
}

Type tk::getLoadedType(Type ptrType) {
  if (auto ptr = dyn_cast<PtrType>(ptrType))
    return ptr.getPointeeType();
  if (auto tile = dyn_cast<RankedTensorType>(ptrType))
    if (auto ptr = dyn_cast<PtrType>(tile.getElementType()))
      return RankedTensorType::get(tile.getShape(), ptr.getPointeeType(),
                                   tile.getEncoding());
  return ptrType;
}

static bool isScalarElementType(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.isSignless() &&
           llvm::is_contained({1u, 8u, 16u, 32u, 64u}, integer.getWidth());
  return isa<Float8E4M3FNType, Float8E5M2Type, Float16Type, BFloat16Type,
             Float32Type, Float64Type>(type);
}

LogicalResult PtrType::verify(function_ref<InFlightDiagnostic()> emitError,
                              Type pointee) {
  if (isScalarElementType(pointee))
    return success();
  if (auto tile = dyn_cast<RankedTensorType>(pointee)) {
    if (!tile.hasStaticShape() || !isScalarElementType(tile.getElementType()))
      return emitError() << "a block pointer points to a statically shaped "
                            "tile of scalars, not "
                         << pointee;
    return success();
  }
  return emitError() << "!tk.ptr points to i1, i8, i16, i32, i64, f8E4M3FN, "
                        "f8E5M2, f16, bf16, f32, f64 or a tile of them, not "
                     << pointee;
}

//===----------------------------------------------------------------------===//
// Dialect attributes
//===----------------------------------------------------------------------===//

LogicalResult TkDialect::verifyRegionArgAttribute(Operation *op,
                                                  unsigned regionIndex,
                                                  unsigned argIndex,
                                                  NamedAttribute attr) {
  if (attr.getName() != kDivisibilityAttrName)
    return op->emitError() << "unknown argument attribute '"
                           << attr.getName().getValue() << "'";
  auto value = dyn_cast<IntegerAttr>(attr.getValue());
  if (!value || value.getInt() <= 0 || !llvm::isPowerOf2_64(value.getInt()))
    return op->emitError() << "'" << kDivisibilityAttrName << "' of argument "
                           << argIndex
                           << " must be a positive power-of-two integer, not "
                           << attr.getValue();
  // From the signature: a function without a body (a declaration, or text
  // cut short) has no block to hold the argument.
  Type argType;
  if (auto function = dyn_cast<FunctionOpInterface>(op))
    argType = function.getArgumentTypes()[argIndex];
  else if (Region &region = op->getRegion(regionIndex);
           !region.empty() && argIndex < region.getNumArguments())
    argType = region.getArgument(argIndex).getType();
  if (!argType)
    return op->emitError() << "'" << kDivisibilityAttrName
                           << "' is given for argument " << argIndex
                           << ", which the region does not have";
  if (!isa<PtrType, IntegerType>(argType))
    return op->emitError() << "'" << kDivisibilityAttrName << "' of argument "
                           << argIndex
                           << " applies to pointers and integers, not "
                           << argType;
  return success();
}

LogicalResult TkDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  if (attr.getName() == kArgNamesAttrName) {
    auto func = dyn_cast<FuncOp>(op);
    if (!func)
      return op->emitError()
             << "'" << kArgNamesAttrName << "' belongs on a tk.func";
    auto names = dyn_cast<ArrayAttr>(attr.getValue());
    if (!names || !llvm::all_of(names, llvm::IsaPred<StringAttr>))
      return op->emitError()
             << "'" << kArgNamesAttrName << "' must be an array of strings";
    if (names.size() != func.getArgumentTypes().size())
      return op->emitError() << "'" << kArgNamesAttrName << "' names "
                             << names.size() << " arguments but the kernel has "
                             << func.getArgumentTypes().size();
    return success();
  }
  if (attr.getName() != kConstexprsAttrName)
    return op->emitError() << "unknown tk attribute '"
                           << attr.getName().getValue() << "'";
  if (!isa<FuncOp>(op))
    return op->emitError() << "'" << kConstexprsAttrName
                           << "' belongs on a tk.func";
  auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
  if (!dict)
    return op->emitError() << "'" << kConstexprsAttrName
                           << "' must be a dictionary from name to value";
  for (NamedAttribute entry : dict)
    if (!isa<IntegerAttr, FloatAttr, BoolAttr>(entry.getValue()))
      return op->emitError()
             << "constexpr '" << entry.getName().getValue()
             << "' must be an integer, float or bool, not " << entry.getValue();
  return success();
}
