//===- WarpDialect.h - the warp-level dialect tkw ---------------*- C++ -*-===//
//
// Include this header to use the layout attributes and warp-level ops.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_WARPDIALECT_H_
#define TK_CORE_WARPDIALECT_H_

#include "tk/core/Layout/LinearLayout.h"
#include "tk/ir/Dialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tk/core/WarpDialect.h.inc"

#include "tk/core/WarpEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tk/core/LayoutAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tk/core/WarpTypes.h.inc"

#define GET_OP_CLASSES
#include "tk/core/WarpOps.h.inc"

#endif // TK_CORE_WARPDIALECT_H_
