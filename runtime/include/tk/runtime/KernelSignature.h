//===- KernelSignature.h - what a launch checks a kernel against -*- C++ -*-===//
//
// A kernel's arguments as the launch checks them, and what the
// bounds-checked mode added; from a source (KernelSource.h) or a package.
// No LLVM: the runtime that loads packages uses it.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_KERNELSIGNATURE_H_
#define TK_RUNTIME_KERNELSIGNATURE_H_

#include "tk/tk_plugin.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tk::runtime {

/// What diagnostics call a text or TTIR source without a name.
inline constexpr const char *kDefaultSourceName = "<source>";

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

/// A kernel ready to compile (from a source) or to load (from a package,
/// without `bytecode`).
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

} // namespace tk::runtime

#endif // TK_RUNTIME_KERNELSIGNATURE_H_
