//===- LinearLayoutRules.cpp - what a #tkw.linear becomes across ops ------===//

#include "LinearLayoutRules.h"

#include "tk/core/Layout/LayoutPresets.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tk-linear-layout-rules"

using namespace mlir;
using namespace tk;
using namespace tk::warp;

LinearLayoutAttr
tk::warp::toLinearLayoutAttr(MLIRContext *context,
                             llvm::Expected<LinearLayout> layout) {
  if (!layout) {
    // The rules only build layouts of the tiles they are given, whose sizes
    // are powers of two. Where one still fails, the value gets a layout of
    // its own later (a blocked one) and the failure shows in the debug log.
    llvm::Error error = layout.takeError();
    LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE << ": " << error << "\n");
    llvm::consumeError(std::move(error));
    return {};
  }
  return LinearLayoutAttr::get(context, std::move(*layout));
}

const LinearLayout *tk::warp::getLinearLayoutOf(Attribute attr) {
  auto linear = dyn_cast_or_null<LinearLayoutAttr>(attr);
  return linear ? &linear.getLinearLayout() : nullptr;
}

bool LinearLayoutRules::fits(Attribute layout, ArrayRef<int64_t> shape) const {
  auto linear = dyn_cast<LinearLayoutAttr>(layout);
  return linear && llvm::equal(linear.getShape(), shape);
}

Attribute LinearLayoutRules::reduceResult(Attribute source,
                                          int64_t axis) const {
  const LinearLayout *layout = getLinearLayoutOf(source);
  if (!layout || layout->getNumOutDims() < 2)
    return {};
  return toLinearLayoutAttr(context, sliceLayout(*layout, axis));
}

Attribute LinearLayoutRules::expandDimsResult(Attribute source,
                                              int64_t axis) const {
  const LinearLayout *layout = getLinearLayoutOf(source);
  if (!layout)
    return {};
  return toLinearLayoutAttr(context, expandDimsLayout(*layout, axis));
}

Attribute LinearLayoutRules::expandDimsSource(Attribute result,
                                              int64_t axis) const {
  const LinearLayout *layout = getLinearLayoutOf(result);
  if (!layout || layout->getNumOutDims() < 2)
    return {};
  return toLinearLayoutAttr(context, sliceLayout(*layout, axis));
}

Attribute LinearLayoutRules::transResult(Attribute source,
                                         ArrayRef<int32_t> order) const {
  const LinearLayout *layout = getLinearLayoutOf(source);
  if (!layout)
    return {};
  return toLinearLayoutAttr(context, transLayout(*layout, order));
}

Attribute LinearLayoutRules::transSource(Attribute result,
                                         ArrayRef<int32_t> order) const {
  const LinearLayout *layout = getLinearLayoutOf(result);
  if (!layout)
    return {};
  // The inverse permutation: source dimension order[i] is result i.
  SmallVector<int32_t> inverse(order.size());
  for (auto [i, d] : llvm::enumerate(order))
    inverse[d] = int32_t(i);
  return toLinearLayoutAttr(context, transLayout(*layout, inverse));
}

Attribute LinearLayoutRules::joinResult(Attribute source) const {
  const LinearLayout *layout = getLinearLayoutOf(source);
  if (!layout)
    return {};
  return toLinearLayoutAttr(context, joinLayout(*layout));
}

Attribute LinearLayoutRules::joinSource(Attribute result) const {
  const LinearLayout *layout = getLinearLayoutOf(result);
  if (!layout)
    return {};
  return toLinearLayoutAttr(context, joinSourceLayout(*layout));
}

Attribute LinearLayoutRules::reshapeResult(Attribute source,
                                           ArrayRef<int64_t> shape) const {
  const LinearLayout *layout = getLinearLayoutOf(source);
  if (!layout)
    return {};
  return toLinearLayoutAttr(context, reshapeLayout(*layout, shape));
}

Attribute
LinearLayoutRules::reshapeSource(Attribute result,
                                 ArrayRef<int64_t> sourceShape) const {
  const LinearLayout *layout = getLinearLayoutOf(result);
  if (!layout)
    return {};
  return toLinearLayoutAttr(context, reshapeLayout(*layout, sourceShape));
}

Attribute
LinearLayoutRules::broadcastSource(Attribute result,
                                   ArrayRef<int64_t> sourceShape) const {
  const LinearLayout *layout = getLinearLayoutOf(result);
  if (!layout)
    return {};
  LinearLayout source = *layout;
  for (auto [dim, size] : llvm::enumerate(sourceShape)) {
    if (size != 1 || source.getOutDimSize(standardOutDimName(dim)) == 1)
      continue;
    llvm::Expected<LinearLayout> sliced = sliceLayout(source, dim);
    if (!sliced)
      return toLinearLayoutAttr(context, sliced.takeError());
    llvm::Expected<LinearLayout> expanded = expandDimsLayout(*sliced, dim);
    if (!expanded)
      return toLinearLayoutAttr(context, expanded.takeError());
    source = std::move(*expanded);
  }
  return LinearLayoutAttr::get(context, source);
}

Attribute
LinearLayoutRules::broadcastFromSource(Attribute source,
                                       ArrayRef<int64_t> shape) const {
  const LinearLayout *layout = getLinearLayoutOf(source);
  if (!layout)
    return {};
  LinearLayout::BasesT bases = layout->getBases();
  LinearLayout::DimSizes outDims = layout->getOutDims();
  auto basesOf = [&](StringRef inDim) -> std::vector<std::vector<int32_t>> & {
    return llvm::find_if(
               bases, [&](const auto &entry) { return entry.first == inDim; })
        ->second;
  };
  for (auto [dim, size] : llvm::enumerate(shape)) {
    if (outDims[dim].second == size)
      continue;
    int32_t next = 1;
    for (StringRef inDim : {kLaneDim, kWarpDim})
      for (std::vector<int32_t> &basis : basesOf(inDim))
        if (next < size &&
            llvm::all_of(basis, [](int32_t v) { return v == 0; })) {
          basis[dim] = next;
          next *= 2;
        }
    for (; next < size; next *= 2) {
      std::vector<int32_t> basis(shape.size(), 0);
      basis[dim] = next;
      basesOf(kRegisterDim).push_back(std::move(basis));
    }
    outDims[dim].second = static_cast<int32_t>(size);
  }
  return toLinearLayoutAttr(
      context, LinearLayout::create(std::move(bases), std::move(outDims)));
}
