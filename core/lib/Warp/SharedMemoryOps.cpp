//===- SharedMemoryOps.cpp - rings of workgroup memory and their copies ---===//
//
// The verifiers of `#tkw.swizzled`, `#tkw.nvmma`, `!tkw.ring` and the ops that
// fill and read a ring (DESIGN.md §3, pass 5).
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

LogicalResult
NvmmaSharedAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t swizzle, ArrayRef<int64_t> order) {
  if (swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitError() << "swizzle must be 32, 64 or 128 bytes, not "
                       << swizzle;
  if (order.size() != 2 || !llvm::is_contained(order, 0) ||
      !llvm::is_contained(order, 1))
    return emitError() << "order must be [1, 0] or [0, 1], not [" << order
                       << "]";
  return success();
}

llvm::Expected<tk::LinearLayout>
NvmmaSharedAttr::getLinearLayout(ArrayRef<int64_t> shape,
                                 int64_t elementBytes) const {
  SmallVector<int32_t> sizes(shape.begin(), shape.end());
  SmallVector<int32_t> order(getOrder().begin(), getOrder().end());
  return tk::nvmmaSharedLayout(sizes, int32_t(elementBytes),
                               int32_t(getSwizzle()), order);
}

/// A slot of `shape` and `elementType` laid out by `layout`, a
/// #tkw.swizzled or #tkw.nvmma.
static llvm::Expected<tk::LinearLayout>
getSlotLayoutOf(Attribute layout, ArrayRef<int64_t> shape, Type elementType) {
  if (auto swizzled = dyn_cast<SwizzledSharedAttr>(layout))
    return swizzled.getLinearLayout(shape);
  if (auto nvmma = dyn_cast<NvmmaSharedAttr>(layout))
    return nvmma.getLinearLayout(
        shape, std::max<int64_t>(elementType.getIntOrFloatBitWidth() / 8, 1));
  return llvm::createStringError("a slot layout that is neither "
                                 "#tkw.swizzled nor #tkw.nvmma");
}

LogicalResult RingType::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t slots, ArrayRef<int64_t> shape,
                               Type elementType, Attribute layout) {
  if (slots < 1)
    return emitError() << "a ring has at least one slot, not " << slots;
  if (!elementType.isIntOrFloat())
    return emitError() << "a ring holds integers or floats, not "
                       << elementType;
  ArrayRef<int64_t> order;
  if (auto swizzled = dyn_cast<SwizzledSharedAttr>(layout))
    order = swizzled.getOrder();
  else if (auto nvmma = dyn_cast<NvmmaSharedAttr>(layout))
    order = nvmma.getOrder();
  else
    return emitError() << "a ring's slots are laid out by #tkw.swizzled or "
                          "#tkw.nvmma, not "
                       << layout;
  if (order.size() != shape.size())
    return emitError() << "the layout orders " << order.size()
                       << " dimensions; the slot has " << shape.size();
  llvm::Expected<tk::LinearLayout> linear =
      getSlotLayoutOf(layout, shape, elementType);
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
  return getSlotLayoutOf(getLayout(), getShape(), getElementType());
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

LogicalResult LocalStoreOp::verify() {
  auto tile = cast<RankedTensorType>(getValue().getType());
  RingType ring = getRing().getType();
  if (tile.getElementType() != ring.getElementType())
    return emitOpError() << "writes " << tile.getElementType()
                         << " into slots of " << ring.getElementType();
  return verifySlotShape(*this, "a tile", tile, ring);
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
