//===- Specialize.h - fold constexpr arguments into a kernel ----*- C++ -*-===//
//
// Specialisation turns scalar kernel arguments whose values are known at
// compile time into constants, so that later passes can fold them (tile
// sizes, strides, flags) exactly as Triton's `tl.constexpr` parameters.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_SPECIALIZE_H_
#define TK_CORE_SPECIALIZE_H_

#include "tk/ir/Dialect.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <utility>

namespace mlir {
class AsmParserState;
} // namespace mlir

namespace tk {

/// The source name of argument `index` of `func`: its `tk.arg_names` entry
/// when the kernel has one, `arg<index>` otherwise.
std::string getArgumentName(FuncOp func, unsigned index);

/// Gives every tk.func of `module` that lacks `tk.arg_names` the names its
/// arguments have in the text the parser read (`%out` gives "out"), from
/// the parser's record `state`, so that messages and constexprs can name
/// them.
void recoverArgumentNames(mlir::ModuleOp module,
                          const mlir::AsmParserState &state);

/// Replaces each listed scalar argument (index into the current signature,
/// value) by an `arith.constant` of the argument's type, erases it from the
/// signature (with its argument attributes and `tk.arg_names` entry) and
/// records it in the kernel's `tk.constexprs` dictionary under the argument's
/// name. Integer arguments take the value as is (it must fit the width; `i1`
/// takes 0 or 1); floating-point arguments take it converted.
///
/// Fails, with a diagnostic on `func` naming the argument, when an index is
/// out of range or repeated, when an argument is not a scalar, or when a value
/// does not fit; `func` is left unchanged then.
mlir::LogicalResult
specializeArguments(FuncOp func,
                    llvm::ArrayRef<std::pair<unsigned, int64_t>> values);

} // namespace tk

#endif // TK_CORE_SPECIALIZE_H_
