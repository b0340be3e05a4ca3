//===- Dialect.h - Triton's tt dialect as tk reads it -----------*- C++ -*-===//
//
// The parse-only definitions of Triton's TTIR ops (TtOps.td). Code outside
// the reader uses tk::ttir::importTtir (Import.h) rather than these.
//
//===----------------------------------------------------------------------===//

#ifndef TK_TTIR_DIALECT_H_
#define TK_TTIR_DIALECT_H_

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tk/ttir/TtEnums.h.inc"
#include "tk/ttir/TtOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tk/ttir/TtTypes.h.inc"

#define GET_OP_CLASSES
#include "tk/ttir/TtOps.h.inc"

namespace tk::ttir {

/// What a load through `ptrType` yields and a store writes: the pointee of a
/// pointer, of each pointer of a tensor of pointers, or of a block pointer.
/// Types that are not pointers come back unchanged (the conversion's
/// verifiers then report them).
mlir::Type getPointeeType(mlir::Type ptrType);

/// The i1 type of a load's or store's mask: the pointee's shape.
mlir::Type getMaskType(mlir::Type ptrType);

/// The base of a `make_tensor_ptr` giving `blockPtrType`: a pointer to the
/// block's element type, in the same address space.
mlir::Type getBlockBaseType(mlir::Type blockPtrType);

/// Registers tt and the dialects TTIR uses beside it (arith, math, scf, cf,
/// ub, and llvm for tl.assume's llvm.intr.assume).
void registerTtDialects(mlir::DialectRegistry &registry);

} // namespace tk::ttir

#endif // TK_TTIR_DIALECT_H_
