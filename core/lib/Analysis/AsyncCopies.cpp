//===- AsyncCopies.cpp - how a thread copies a tile into a ring slot ------===//

#include "tk/core/Analysis/AsyncCopies.h"
#include "tk/core/Analysis/AxisFacts.h"
#include "tk/core/Layout.h"
#include "tk/core/WarpDialect.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

using namespace mlir;

tk::AsyncCopyRun tk::getAsyncCopyRun(Value ptr, Value mask,
                                     const LinearLayout &slot) {
  auto tile = dyn_cast<RankedTensorType>(ptr.getType());
  auto layout =
      tile ? dyn_cast_or_null<warp::LinearLayoutAttr>(tile.getEncoding())
           : nullptr;
  auto pointer = tile ? dyn_cast<tk::PtrType>(tile.getElementType()) : nullptr;
  if (!layout || !pointer || !pointer.getPointeeType().isIntOrFloat() ||
      pointer.getPointeeType().getIntOrFloatBitWidth() < 8)
    return {};
  const LinearLayout &source = layout.getLinearLayout();
  int64_t bytes = pointer.getPointeeType().getIntOrFloatBitWidth() / 8;

  // Consecutive registers along one dimension (the last, or the first of a
  // tile loaded transposed), where memory runs too.
  auto [runDim, memory] = warp::getMemoryRunOrder(source);
  if (runDim < 0)
    return {};
  int64_t width = memory.getNumConsecutiveInOut();
  // ... and at consecutive offsets of the slot.
  llvm::Expected<LinearLayout> toOffset = slot.invert();
  if (!toOffset) {
    llvm::consumeError(toOffset.takeError());
    return {};
  }
  llvm::Expected<LinearLayout> written = source.compose(*toOffset);
  if (!written) {
    llvm::consumeError(written.takeError());
    return {};
  }
  width = std::min<int64_t>(width, written->getNumConsecutiveInOut());
  width = std::min<int64_t>(width, 16 / bytes);

  AxisFacts facts = getAxisFactsAlong(ptr, runDim);
  while (width * bytes >= 4 &&
         !runsAreContiguousAndAligned(facts, width, bytes, width * bytes))
    width /= 2;
  if (width * bytes < 4)
    return {};
  AsyncCopyRun run;
  run.width = width;
  if (mask)
    run.maskUniform = getAxisFactsAlong(mask, runDim).constancy % width == 0;
  return run;
}
