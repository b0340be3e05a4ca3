//===- BoundsChecks.h - kernels that check their own accesses ---*- C++ -*-===//
//
// The bounds-checked launch mode (TK_CHECK_BOUNDS=1): tk::addBoundsChecks
// rewrites a kernel so that each element a load, store or atomic touches is
// checked against the extent of the buffer argument its pointer came from.
// An element outside is masked off (nothing outside a buffer is read or
// written) and its offset is recorded for the runtime to report.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_BOUNDSCHECKS_H_
#define TK_CORE_BOUNDSCHECKS_H_

#include "tk/core/BoundsRecord.h"
#include "tk/ir/Dialect.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace tk {

/// One checked access: which op, where in the source, through which
/// argument. Its index among the kernel's sites is its slot of the record.
struct BoundsCheckSite {
  /// The op's name without the dialect ("load", "store", "atomic_rmw").
  std::string op;
  /// `file:line:column` of the op (a TTIR kernel's Python line), or the
  /// printed location where it has no file.
  std::string location;
  /// The user argument the pointers come from.
  unsigned argument = 0;
};

/// What addBoundsChecks appended to the kernel's signature, after the
/// `numUserArguments` the caller passes: one i64 extent, in elements, per
/// pointer argument (in argument order), then the record (`!tk.ptr<i64>`,
/// one slot per site; BoundsRecord.h).
struct BoundsChecks {
  unsigned numUserArguments = 0;
  llvm::SmallVector<unsigned> extentArguments; // user argument of each extent
  llvm::SmallVector<BoundsCheckSite> sites;
};

/// Rewrites `func` in place (see the file comment). An access whose
/// pointers cannot be traced to one argument through tk.splat, tk.addptr,
/// shape ops, arith.select and loop-carried values is an error at that op,
/// and `func` is then left partly rewritten: the caller discards it.
mlir::LogicalResult addBoundsChecks(FuncOp func, BoundsChecks &out);

} // namespace tk

#endif // TK_CORE_BOUNDSCHECKS_H_
