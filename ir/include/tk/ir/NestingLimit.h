//===- NestingLimit.h - refusing IR text nested beyond what parses --------===//
//
// MLIR's parser, verifier and walks recurse once per level of nested
// regions and brackets: text nested some thousands deep overflows the stack
// of whichever thread parses it (an application's thread, for
// tk_kernel_create). Such text is checked before it is parsed.
//
//===----------------------------------------------------------------------===//

#ifndef TK_IR_NESTINGLIMIT_H_
#define TK_IR_NESTINGLIMIT_H_

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <utility>

namespace tk {

/// Brackets ({ ( [ <) one kernel may nest: far beyond any real kernel (a
/// deep one nests some tens), far below what overflows an 8 MiB stack.
constexpr unsigned kMaxIRNesting = 256;

/// Where `text` first opens a bracket deeper than `limit`, as the offset of
/// that bracket; none if it never does. Brackets inside string literals and
/// `//` comments do not count, nor the `>` of `->`.
std::optional<size_t> findNestingBeyond(llvm::StringRef text,
                                        unsigned limit = kMaxIRNesting);

/// The 1-based line and column of `offset` in `text`, for messages.
std::pair<size_t, size_t> lineAndColumnAt(llvm::StringRef text, size_t offset);

} // namespace tk

#endif // TK_IR_NESTINGLIMIT_H_
