//===- TtDialect.cpp - Triton's tt dialect, parse-only --------------------===//
//
// Registers the tt ops and types (pointers, tensor descriptors) so that TTIR
// parses, and gives the type functions the ops' syntax infers types with.
//
//===----------------------------------------------------------------------===//

#include "tk/ttir/Dialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tk::ttir;

#include "tk/ttir/TtEnums.cpp.inc"
#include "tk/ttir/TtOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tk/ttir/TtTypes.cpp.inc"

#define GET_OP_CLASSES
#include "tk/ttir/TtOps.cpp.inc"

void TtDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tk/ttir/TtOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tk/ttir/TtTypes.cpp.inc"
      >();
}

void tk::ttir::registerTtDialects(DialectRegistry &registry) {
  registry.insert<TtDialect, arith::ArithDialect, math::MathDialect,
                  scf::SCFDialect, cf::ControlFlowDialect, ub::UBDialect,
                  LLVM::LLVMDialect>();
}

//===----------------------------------------------------------------------===//
// !tt.tensordesc: `<tensor<64x64xf16>>` (Triton 3.6) or `<64x64xf16>`
//===----------------------------------------------------------------------===//

Type TensorDescType::parse(AsmParser &parser) {
  if (parser.parseLess())
    return {};
  SMLoc at = parser.getCurrentLocation();
  RankedTensorType block;
  Type type;
  OptionalParseResult parsed = parser.parseOptionalType(type);
  if (parsed.has_value()) {
    if (failed(*parsed))
      return {};
    block = dyn_cast<RankedTensorType>(type);
  } else {
    SmallVector<int64_t> shape;
    Type element;
    if (parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
        parser.parseType(element))
      return {};
    block = RankedTensorType::get(shape, element);
  }
  if (!block || block.getEncoding()) {
    parser.emitError(at, "a tensor descriptor's block is a tensor type "
                         "without an encoding (TTIR, not TTGIR)");
    return {};
  }
  if (parser.parseGreater())
    return {};
  return TensorDescType::get(parser.getContext(), block);
}

void TensorDescType::print(AsmPrinter &printer) const {
  printer << "<" << getBlockType() << ">";
}

Type tk::ttir::getPointeeType(Type ptrType) {
  if (auto tensor = dyn_cast<RankedTensorType>(ptrType)) {
    if (auto ptr = dyn_cast<PtrType>(tensor.getElementType()))
      return tensor.clone(ptr.getPointeeType());
    return ptrType;
  }
  if (auto ptr = dyn_cast<PtrType>(ptrType))
    return ptr.getPointeeType();
  return ptrType;
}

Type tk::ttir::getMaskType(Type ptrType) {
  Type pointee = getPointeeType(ptrType);
  Type i1 = IntegerType::get(ptrType.getContext(), 1);
  if (auto tensor = dyn_cast<RankedTensorType>(pointee))
    return tensor.clone(i1);
  return i1;
}

Type tk::ttir::getBlockBaseType(Type blockPtrType) {
  auto ptr = dyn_cast<PtrType>(blockPtrType);
  if (!ptr)
    return blockPtrType;
  auto block = dyn_cast<RankedTensorType>(ptr.getPointeeType());
  if (!block)
    return blockPtrType;
  return PtrType::get(ptr.getContext(), block.getElementType(),
                      ptr.getAddressSpace());
}

//===----------------------------------------------------------------------===//
// tt.func: the function syntax of upstream func.func, as Triton prints it
//===----------------------------------------------------------------------===//

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
