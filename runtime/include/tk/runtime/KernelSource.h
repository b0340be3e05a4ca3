//===- KernelSource.h - from kernel source to compiler input ----*- C++ -*-===//
//
// Turns a tk_kernel_source (text, bytecode or a builder module) into what the
// compiler and the launch need: the verified, specialised entry kernel alone
// in a module, as MLIR bytecode, and its argument signature.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_KERNELSOURCE_H_
#define TK_RUNTIME_KERNELSOURCE_H_

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

/// The most arguments a kernel may take: the launch packs them into a
/// fixed-size array on the stack, so that it never allocates.
constexpr size_t kMaxKernelArguments = 64;

/// One argument of a kernel's signature, with what the launch checks.
struct KernelArgument {
  /// The source name ("out"), or "arg<i>" when the source has none.
  std::string name;
  /// The IR type, for messages ("!tk.ptr<f32>", "i32").
  std::string typeName;
  tk_plugin_arg_type type = TK_PLUGIN_ARG_I32;
  /// `tk.divisibility` (1 when absent): the kernel was specialised for
  /// pointers / integer values that are multiples of it.
  int64_t divisibility = 1;
  /// Pointers: bytes the device address must be a multiple of, the
  /// divisibility counted in elements (divisibility x elementBytes).
  int64_t alignment = 1;
  /// Pointers: bytes of one pointee element.
  int64_t elementBytes = 0;
};

/// The name of a source that was given none.
inline constexpr llvm::StringLiteral kDefaultSourceName = "<source>";

/// One access a bounds-checked kernel checks (tk/core/BoundsChecks.h).
struct BoundsCheckSite {
  std::string op;       // "load", "store", "atomic_rmw", "atomic_cas"
  std::string location; // file:line:column
  unsigned argument = 0;
};

/// What the bounds-checked mode added to a kernel: after the caller's
/// `numUserArguments`, one i64 extent per pointer argument
/// (`extentArguments` names which), then the record of `sites.size()` i64
/// slots.
struct BoundsCheckTable {
  size_t numUserArguments = 0;
  std::vector<unsigned> extentArguments;
  std::vector<BoundsCheckSite> sites;
};

/// A kernel ready to compile.
struct PreparedKernel {
  /// The name of the entry tk.func.
  std::string entry;
  /// A builtin.module holding the entry alone, verified and specialised.
  std::string bytecode;
  /// Every argument of the compiled kernel: the caller's, then, in the
  /// bounds-checked mode, those `boundsChecks` describes.
  std::vector<KernelArgument> arguments;
  std::optional<BoundsCheckTable> boundsChecks;
};

/// Whether TK_CHECK_BOUNDS asks for the bounds-checked mode (set, and
/// neither "" nor "0").
bool isBoundsCheckingRequested();

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

} // namespace tk::runtime

#endif // TK_RUNTIME_KERNELSOURCE_H_
