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

/// The registers of `ptr` (a tile of pointers in a #tkw.linear layout) a
/// thread moves with one asynchronous copy into a slot laid out by `slot`
/// (offset -> coordinates): runs that the layout keeps consecutive along
/// the last dimension, that AxisFacts proves contiguous and aligned in
/// memory, that land on consecutive, aligned offsets of the slot, and over
/// which `mask` (may be null) is proven constant; of 4, 8 or 16 bytes, the
/// widest. 0 where no run of at least 4 bytes qualifies.
int64_t getAsyncCopyRun(mlir::Value ptr, mlir::Value mask,
                        const LinearLayout &slot);

} // namespace tk

#endif // TK_CORE_ANALYSIS_ASYNCCOPIES_H
