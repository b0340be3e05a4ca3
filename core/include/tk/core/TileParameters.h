//===- TileParameters.h - tile sizes given from outside ---------*- C++ -*-===//
//
// A text kernel declares the shape constants it is written over after its
// name, and writes each where a number goes as `${NAME}`:
//
//   tk.func @add<BLOCK: i32 = 1024>(%x: !tk.ptr<f32>, ...) {
//     %r = tk.make_range {start = 0 : i32, end = ${BLOCK} : i32}
//         : tensor<${BLOCK}xi32>
//
// Tile shapes are part of the types, so the values are put into the text
// before it is parsed: a constexpr of the parameter's name (at
// tk_kernel_create, from an autotune candidate, `tk-compile --constexpr`),
// else its default. The declaration is blanked out, so lines and columns
// before the first `${...}` of a line stay where they were.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_TILEPARAMETERS_H_
#define TK_CORE_TILEPARAMETERS_H_

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tk {

/// A parameter of a kernel, with the value the expansion gave it.
struct TileParameter {
  std::string kernel; // the tk.func's name
  std::string name;
  std::string type; // "i32" or "i64"
  int64_t value = 0;
};

/// Expands every kernel's `${NAME}` in `text` into `expanded`: the value of
/// `values` by that name, else the parameter's default. `parameters` gets
/// every kernel's parameters with their values. An undeclared `${NAME}`, a
/// malformed declaration, a parameter without a value or a value its type
/// cannot hold is a failure with `error` as `line:column: message` (1-based,
/// in `text`). Text without declarations or `${` comes back unchanged.
llvm::LogicalResult
expandTileParameters(llvm::StringRef text,
                     llvm::ArrayRef<std::pair<std::string, int64_t>> values,
                     std::string &expanded,
                     std::vector<TileParameter> &parameters,
                     std::string &error);

} // namespace tk

#endif // TK_CORE_TILEPARAMETERS_H_
