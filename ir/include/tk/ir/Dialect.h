//===- Dialect.h - the tk dialect, its types and ops ------------*- C++ -*-===//
//
// Include this header to use the tk dialect from C++.
//
//===----------------------------------------------------------------------===//

#ifndef TK_IR_DIALECT_H_
#define TK_IR_DIALECT_H_

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tk/ir/TkOpsDialect.h.inc"
#include "tk/ir/TkEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tk/ir/TkTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tk/ir/TkAttrs.h.inc"

#define GET_OP_CLASSES
#include "tk/ir/TkOps.h.inc"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tk {

/// Registers tk and the upstream dialects a tk kernel uses (arith, math, scf).
void registerTkDialects(mlir::DialectRegistry &registry);

/// The shape of a tile, or an empty shape for a scalar.
llvm::ArrayRef<int64_t> getShapeOrEmpty(mlir::Type type);

/// `type` with its element type replaced by `elementType` (tiles stay tiles).
mlir::Type withElementType(mlir::Type type, mlir::Type elementType);

/// The type a load through `ptrType` yields: the pointee of a block pointer,
/// or the pointee element for each pointer of a pointer tile.
mlir::Type getLoadedType(mlir::Type ptrType);

/// Comparator of the ODS `TypesMatchWith` constraints whose types the parser
/// infers but whose check lives in the op's verifier: there the message can
/// name the expected type, where ODS could only say that a constraint failed.
struct CheckedInVerifier {
  bool operator()(mlir::Type, mlir::Type) const { return true; }
};

} // namespace tk

#endif // TK_IR_DIALECT_H_
