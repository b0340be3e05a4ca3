//===- AsyncCopies.h - how a thread copies a tile into a ring slot -*- C++
//-*-===//
//
// One decision that tk-pipeline-loads (whether a load can fill a ring) and
// the lowering of tkw.async_copy (how it does) both read.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_ANALYSIS_ASYNCCOPIES_H
#define TK_CORE_ANALYSIS_ASYNCCOPIES_H

#include "tk/core/Layout/LinearLayout.h"

#include "mlir/IR/Value.h"

#include <cstdint>

namespace tk {

/// How a thread copies its registers of a pointer tile into a ring slot.
struct AsyncCopyRun {
  /// Registers one copy moves; 0 where no copy of at least 4 bytes can.
  int64_t width = 0;
  /// Whether the load's mask is proven constant over each run. Where it is
  /// not, the copy tests the run's masks at run time: a run wholly in or
  /// out is one copy (out reads nothing and writes zeros), a run partly in
  /// is loaded element by element.
  bool maskUniform = true;
};

/// The registers of `ptr` (a tile of pointers in a #tkw.linear layout) a
/// thread moves with one asynchronous copy into a slot laid out by `slot`
/// (offset -> coordinates): runs that the layout keeps consecutive along
/// the last dimension, that AxisFacts proves contiguous and aligned in
/// memory and that land on consecutive, aligned offsets of the slot; of 4,
/// 8 or 16 bytes, the widest. `mask` (may be null) only decides
/// maskUniform: tk's own kernels take sizes of any divisibility, so their
/// masks are rarely proven constant over 16 bytes.
AsyncCopyRun getAsyncCopyRun(mlir::Value ptr, mlir::Value mask,
                             const LinearLayout &slot);

} // namespace tk

#endif // TK_CORE_ANALYSIS_ASYNCCOPIES_H
