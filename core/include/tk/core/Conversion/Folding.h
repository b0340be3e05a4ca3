//===- Folding.h - index arithmetic evaluated by MLIR's folders -*- C++ -*-===//
//
// What the tests of a matrix unit's layouts need: the constants that index
// arithmetic emitted with constant inputs folds to.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_FOLDING_H_
#define TK_CORE_CONVERSION_FOLDING_H_

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"

#include <string>

namespace tk {

/// Folds `block`'s ops in order with MLIR's own folders and returns the
/// integer each of `values` folds to; fails, saying why in `error`, where
/// an op does not fold or a value is not an integer constant.
mlir::FailureOr<llvm::SmallVector<int64_t>>
foldToIntegers(mlir::Block &block, mlir::ValueRange values, std::string &error);

} // namespace tk

#endif // TK_CORE_CONVERSION_FOLDING_H_
