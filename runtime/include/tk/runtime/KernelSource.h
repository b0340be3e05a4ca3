//===- KernelSource.h - from kernel source to compiler input ----*- C++ -*-===//
//
// Turns a tk_kernel_source (text, bytecode or a builder module) into what the
// compiler and the launch need: the verified, specialised entry kernel alone
// in a module, as MLIR bytecode, and its argument signature.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_KERNELSOURCE_H_
#define TK_RUNTIME_KERNELSOURCE_H_

#include "tk/runtime/KernelSignature.h"
#include "tk/runtime/Status.h"
#include "tk/tk_plugin.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tk::runtime {

/// Parses (text), reads (bytecode) or copies (builder module) the source into
/// a private MLIR context, verifies it, picks the entry, folds `constexprs`
/// into it (tk::specializeArguments) and serialises it. Errors:
/// TK_ERROR_INVALID_IR with the located diagnostics for a source that does
/// not parse or verify; TK_ERROR_NOT_FOUND listing the names for an unknown
/// entry or constexpr; TK_ERROR_UNSUPPORTED naming an argument whose type a
/// launch cannot pass, or a kernel with more than kMaxKernelArguments.
///
/// `sourceName` is what the diagnostics of a text or TTIR source call it
/// (`name:line:column`), and the file of the kernel's locations.
///
/// `checkBounds`: the kernel of the bounds-checked mode (TK_CHECK_BOUNDS,
/// tk/core/BoundsChecks.h); a kernel whose accesses cannot be checked is
/// then TK_ERROR_UNSUPPORTED naming the access.
Status prepareKernel(const tk_kernel_source &source,
                     llvm::ArrayRef<tk_constexpr_value> constexprs,
                     PreparedKernel &out,
                     llvm::StringRef sourceName = kDefaultSourceName,
                     bool checkBounds = false);

/// Renames the entry of `prepared` to `name`, in its bytecode and its
/// `entry`: one source's specialisations (dtypes, constexprs, num_warps)
/// become kernels of one package, each under a name of its own, which is
/// also the symbol of its binaries. TK_ERROR_INVALID_ARGUMENT for a name
/// that is not an identifier ([A-Za-z_][A-Za-z0-9_]*, as PTX, SPIR-V and
/// ELF entry points all accept).
Status renameEntry(PreparedKernel &prepared, llvm::StringRef name);

} // namespace tk::runtime

#endif // TK_RUNTIME_KERNELSOURCE_H_
