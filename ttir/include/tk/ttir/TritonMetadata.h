//===- TritonMetadata.h - the options Triton compiled a kernel with -*- C++
//-*-===//
//
// Triton's JSON beside a kernel, read with LLVM's Support library alone: the
// runner without a compiler (tk-conformance-run) reads the corpus' metadata
// too.
//
//===----------------------------------------------------------------------===//

#ifndef TK_TTIR_TRITONMETADATA_H_
#define TK_TTIR_TRITONMETADATA_H_

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <optional>
#include <string>

namespace tk::ttir {

/// The compile options Triton used, read from the JSON it writes beside a
/// kernel (its cache's `<name>.json`; the corpus' `meta.json`): `num_warps`
/// and `num_stages`, each absent when the file does not say.
struct TritonMetadata {
  std::optional<int> numWarps;
  std::optional<int> numStages;
};

/// Reads `num_warps` and `num_stages` from Triton's metadata JSON. An error
/// names what is wrong (not JSON, not an object, a count that is not a
/// positive integer).
llvm::FailureOr<TritonMetadata> parseTritonMetadata(llvm::StringRef json,
                                                    std::string &error);

} // namespace tk::ttir

#endif // TK_TTIR_TRITONMETADATA_H_
