//===- BoundsRecord.h - the bounds-checked mode's record --------*- C++ -*-===//
//
// What a bounds-checked kernel (BoundsChecks.h) and the runtime that launches
// it agree on, without MLIR: the runtime without a compiler reads it too.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_BOUNDSRECORD_H_
#define TK_CORE_BOUNDSRECORD_H_

#include <cstdint>

namespace tk {

/// A record slot no access of its site has written: the caller fills every
/// slot with it before a launch; a slot that differs afterwards holds the
/// element offset of an access of its site that was out of bounds.
constexpr int64_t kBoundsRecordUnset = INT64_MIN;

} // namespace tk

#endif // TK_CORE_BOUNDSRECORD_H_
