//===- SharedMemoryOps.cpp - rings of workgroup memory and their copies ---===//
//
// The verifiers of `#tkw.swizzled`, `!tkw.ring` and the ops that fill and
// read a ring (DESIGN.md §3, pass 5).
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout/LayoutPresets.h"
#include "tk/core/WarpDialect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tk::warp;

LogicalResult
SwizzledSharedAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           int64_t vec, int64_t perPhase, int64_t maxPhase,
                           ArrayRef<int64_t> order) {
  for (auto [name, value] : {std::pair<StringRef, int64_t>{"vec", vec},
                             {"perPhase", perPhase},
                             {"maxPhase", maxPhase}})
    if (value <= 0 || !llvm::isPowerOf2_64(value))
      return emitError() << name << " must be a positive power of two, not "
                         << value;
  SmallVector<int64_t> sorted(order);
  llvm::sort(sorted);
  for (auto [index, dim] : llvm::enumerate(sorted))
    if (dim != int64_t(index))
      return emitError() << "order must be a permutation of the dimensions, "
                            "not ["
                         << order << "]";
  if (order.size() < 2)
    return emitError() << "a swizzled layout has at least two dimensions";
  return success();
}

llvm::Expected<tk::LinearLayout>
SwizzledSharedAttr::getLinearLayout(ArrayRef<int64_t> shape) const {
  SmallVector<int32_t> sizes(shape.begin(), shape.end());
  SmallVector<int32_t> order(getOrder().begin(), getOrder().end());
  return tk::swizzledSharedLayout(sizes, int32_t(getVec()),
                                  int32_t(getPerPhase()),
                                  int32_t(getMaxPhase()), order);
}

LogicalResult RingType::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t slots, ArrayRef<int64_t> shape,
                               Type elementType, Attribute layout) {
  if (slots < 1)
    return emitError() << "a ring has at least one slot, not " << slots;
  if (!elementType.isIntOrFloat())
    return emitError() << "a ring holds integers or floats, not "
                       << elementType;
  auto swizzled = dyn_cast<SwizzledSharedAttr>(layout);
  if (!swizzled)
    return emitError() << "a ring's slots are laid out by #tkw.swizzled, not "
                       << layout;
  if (swizzled.getOrder().size() != shape.size())
    return emitError() << "the layout orders " << swizzled.getOrder().size()
                       << " dimensions; the slot has " << shape.size();
  llvm::Expected<tk::LinearLayout> linear = swizzled.getLinearLayout(shape);
  if (!linear)
    return emitError() << llvm::toString(linear.takeError());
  return success();
}

int64_t RingType::getSlotBytes() const {
  int64_t bytes =
      std::max<int64_t>(getElementType().getIntOrFloatBitWidth() / 8, 1);
  for (int64_t size : getShape())
    bytes *= size;
  return bytes;
}

llvm::Expected<tk::LinearLayout> RingType::getSlotLayout() const {
  return cast<SwizzledSharedAttr>(getLayout()).getLinearLayout(getShape());
}

/// That `tile` has the ring's slot shape.
static LogicalResult verifySlotShape(Operation *op, StringRef what,
                                     RankedTensorType tile, RingType ring) {
  if (tile.getShape() != ring.getShape())
    return op->emitOpError()
           << what << " of shape [" << tile.getShape()
           << "] does not match the slots' [" << ring.getShape() << "]";
  return success();
}

LogicalResult AsyncCopyOp::verify() {
  auto ptr = cast<RankedTensorType>(getPtr().getType());
  RingType ring = getRing().getType();
  auto pointer = dyn_cast<tk::PtrType>(ptr.getElementType());
  if (!pointer || pointer.getPointeeType() != ring.getElementType())
    return emitOpError() << "copies pointers to " << ring.getElementType()
                         << ", not " << ptr.getElementType();
  if (failed(verifySlotShape(*this, "a pointer tile", ptr, ring)))
    return failure();
  if (Value mask = getMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    if (maskType.getShape() != ptr.getShape() ||
        !maskType.getElementType().isInteger(1) ||
        maskType.getEncoding() != ptr.getEncoding())
      return emitOpError() << "the mask must be i1 of the pointers' shape "
                              "and layout, not "
                           << maskType;
  }
  return success();
}

LogicalResult LocalLoadOp::verify() {
  auto tile = cast<RankedTensorType>(getType());
  RingType ring = getRing().getType();
  if (tile.getElementType() != ring.getElementType())
    return emitOpError() << "reads " << ring.getElementType() << ", not "
                         << tile.getElementType();
  ArrayRef<int64_t> offsets = getOffsets();
  if (offsets.empty())
    return verifySlotShape(*this, "a tile", tile, ring);
  if (offsets.size() != ring.getShape().size() ||
      tile.getRank() != int64_t(offsets.size()))
    return emitOpError() << "expected one offset per dimension of the slot";
  for (auto [offset, size, slot] :
       llvm::zip_equal(offsets, tile.getShape(), ring.getShape()))
    if (offset < 0 || offset % size || offset + size > slot)
      return emitOpError() << "a block of [" << tile.getShape()
                           << "] at offsets [" << offsets
                           << "] is not an aligned block of the slots' ["
                           << ring.getShape() << "]";
  return success();
}
