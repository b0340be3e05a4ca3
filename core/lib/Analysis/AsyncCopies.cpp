//===- AsyncCopies.cpp - how a thread copies a tile into a ring slot ------===//

#include "tk/core/Analysis/AsyncCopies.h"
#include "tk/core/Analysis/AxisFacts.h"
#include "tk/core/WarpDialect.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

using namespace mlir;

int64_t tk::getAsyncCopyRun(Value ptr, Value mask, const LinearLayout &slot) {
  auto tile = dyn_cast<RankedTensorType>(ptr.getType());
  auto layout =
      tile ? dyn_cast_or_null<warp::LinearLayoutAttr>(tile.getEncoding())
           : nullptr;
  auto pointer = tile ? dyn_cast<tk::PtrType>(tile.getElementType()) : nullptr;
  if (!layout || !pointer || !pointer.getPointeeType().isIntOrFloat() ||
      pointer.getPointeeType().getIntOrFloatBitWidth() < 8)
    return 0;
  const LinearLayout &source = layout.getLinearLayout();
  int64_t bytes = pointer.getPointeeType().getIntOrFloatBitWidth() / 8;

  // Consecutive registers along the last dimension, the one memory runs
  // along.
  std::vector<std::string> outs = source.getOutDimNames();
  std::reverse(outs.begin(), outs.end());
  int64_t width = source.transposeOuts(outs).getNumConsecutiveInOut();
  // ... and at consecutive offsets of the slot.
  llvm::Expected<LinearLayout> toOffset = slot.invert();
  if (!toOffset) {
    llvm::consumeError(toOffset.takeError());
    return 0;
  }
  llvm::Expected<LinearLayout> written = source.compose(*toOffset);
  if (!written) {
    llvm::consumeError(written.takeError());
    return 0;
  }
  width = std::min<int64_t>(width, written->getNumConsecutiveInOut());
  width = std::min<int64_t>(width, 16 / bytes);

  AxisFacts facts = getAxisFacts(ptr, getLoopWalkFacts);
  int64_t maskConstancy =
      mask ? getAxisFacts(mask, getLoopWalkFacts).constancy : width;
  while (width * bytes >= 4 &&
         (!runsAreContiguousAndAligned(facts, width, bytes, width * bytes) ||
          maskConstancy % width != 0))
    width /= 2;
  return width * bytes >= 4 ? width : 0;
}
