//===- MatrixOps.cpp - the matrices of a cooperative-matrix unit ---------===//
//
// The verifiers of `!tkw.matrix` and the ops on it: the values that
// `#tkw.cooperative_matrix` tiles lower to, whose elements the
// implementation places among a subgroup's lanes (DESIGN.md §3).
//
//===----------------------------------------------------------------------===//

#include "tk/core/WarpDialect.h"

using namespace mlir;
using namespace tk::warp;

LogicalResult MatrixType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t rows, int64_t cols, Type elementType,
                                 StringRef use) {
  if (rows <= 0 || cols <= 0)
    return emitError() << "a matrix of " << rows << " x " << cols;
  if (!elementType.isIntOrFloat())
    return emitError() << "a matrix of " << elementType
                       << ", not of integers or floats";
  if (use != "a" && use != "b" && use != "acc")
    return emitError() << "a matrix's use is a, b or acc, not '" << use << "'";
  return success();
}

LogicalResult MatrixSplatOp::verify() {
  if (getValue().getType() != getType().getElementType())
    return emitOpError("splats ")
           << getValue().getType() << " into a matrix of "
           << getType().getElementType();
  return success();
}

LogicalResult MatrixMultiplyAddOp::verify() {
  MatrixType a = getA().getType(), b = getB().getType(),
             acc = getAcc().getType();
  if (a.getUse() != "a" || b.getUse() != "b" || acc.getUse() != "acc")
    return emitOpError("takes matrices of uses a, b and acc");
  if (a.getRows() != acc.getRows() || b.getCols() != acc.getCols() ||
      a.getCols() != b.getRows())
    return emitOpError("multiplies ")
           << a.getRows() << "x" << a.getCols() << " by " << b.getRows() << "x"
           << b.getCols() << " into " << acc.getRows() << "x" << acc.getCols();
  if (a.getElementType() != b.getElementType())
    return emitOpError("multiplies ")
           << a.getElementType() << " by " << b.getElementType();
  return success();
}

LogicalResult MatrixElementwiseOp::verify() {
  Type element = getType().getElementType();
  if (!isa<FloatType>(element))
    return emitOpError("applies ") << stringifyMatrixElementwiseKind(getKind())
                                   << " to float matrices, not " << element;
  return success();
}

LogicalResult MatrixConvertOp::verify() {
  MatrixType from = getSource().getType(), to = getType();
  if (from.getRows() != to.getRows() || from.getCols() != to.getCols() ||
      from.getUse() != to.getUse())
    return emitOpError("keeps a matrix's rows, columns and use");
  if (!isa<FloatType>(from.getElementType()) ||
      !isa<FloatType>(to.getElementType()))
    return emitOpError("converts between float types, not ")
           << from.getElementType() << " and " << to.getElementType();
  return success();
}
