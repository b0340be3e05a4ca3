//===- Layout.cpp - reading and setting the layouts of tiles --------------===//
//
// The layout of a tile or block pointer, the order of a linear layout's
// runs in memory, the ops whose tiles share one layout, and the target a
// function's layouts were chosen for.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>

using namespace mlir;
using namespace tk::warp;

bool tk::warp::isTileLike(Type type) {
  if (isa<RankedTensorType>(type))
    return true;
  auto ptr = dyn_cast<tk::PtrType>(type);
  return ptr && ptr.isBlockPointer();
}

ArrayRef<int64_t> tk::warp::getTileShape(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return tile.getShape();
  if (auto ptr = dyn_cast<tk::PtrType>(type))
    if (auto block = dyn_cast<RankedTensorType>(ptr.getPointeeType()))
      return block.getShape();
  return {};
}

std::pair<int32_t, tk::LinearLayout>
tk::warp::getMemoryRunOrder(const tk::LinearLayout &layout) {
  std::vector<std::string> names = layout.getOutDimNames();
  int32_t rank = names.size();
  std::pair<int32_t, tk::LinearLayout> best = {-1, layout};
  int32_t bestRun = 0;
  for (int32_t dim = rank - 1; dim >= 0; --dim) {
    std::vector<std::string> order = {names[dim]};
    for (int32_t other = rank - 1; other >= 0; --other)
      if (other != dim)
        order.push_back(names[other]);
    tk::LinearLayout memory = layout.transposeOuts(order);
    int32_t run = memory.getNumConsecutiveInOut();
    if (run > bestRun) {
      bestRun = run;
      best = {dim, std::move(memory)};
    }
  }
  return best;
}

Attribute tk::warp::getLayout(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return tile.getEncoding();
  if (auto ptr = dyn_cast<tk::PtrType>(type))
    if (auto block = dyn_cast<RankedTensorType>(ptr.getPointeeType()))
      return block.getEncoding();
  return {};
}

Type tk::warp::withLayout(Type type, Attribute layout) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return RankedTensorType::get(tile.getShape(), tile.getElementType(),
                                 layout);
  if (auto ptr = dyn_cast<tk::PtrType>(type))
    if (auto block = dyn_cast<RankedTensorType>(ptr.getPointeeType()))
      return tk::PtrType::get(type.getContext(), withLayout(block, layout));
  return type;
}

bool tk::warp::isSameLayoutOp(Operation *op) {
  // Ops that change shape or layout have rules of their own, terminators
  // (scf.yield) tie values to their parent, not to each other.
  if (isa<tk::DotOp, tk::ReduceOp, tk::ExpandDimsOp, tk::BroadcastOp,
          tk::TransOp, tk::ReshapeOp, tk::CatOp, tk::JoinOp, tk::FuncOp>(op) ||
      isa_and_present<TkwDialect>(op->getDialect()) ||
      op->hasTrait<OpTrait::IsTerminator>())
    return false;
  if (op->getNumRegions() != 0 && !isa<ScanOp>(op))
    return false;
  std::optional<ArrayRef<int64_t>> shape;
  auto sameShape = [&](Value value) {
    if (!isTileLike(value.getType()))
      return true;
    ArrayRef<int64_t> own = getTileShape(value.getType());
    if (!shape)
      shape = own;
    return *shape == own;
  };
  return llvm::all_of(op->getOperands(), sameShape) &&
         llvm::all_of(op->getResults(), sameShape) && shape.has_value();
}

std::string tk::warp::getTargetSpec(tk::FuncOp func, StringRef option) {
  if (!option.empty())
    return option.str();
  if (auto recorded =
          func->getAttrOfType<StringAttr>(TkwDialect::kTargetAttrName))
    return recorded.getValue().str();
  return "";
}

void tk::warp::recordLayoutTarget(tk::FuncOp func, int64_t numWarps,
                                  int64_t threadsPerWarp, StringRef target) {
  Builder builder(func.getContext());
  func->setAttr(TkwDialect::kNumWarpsAttrName,
                builder.getI32IntegerAttr(numWarps));
  func->setAttr(TkwDialect::kThreadsPerWarpAttrName,
                builder.getI32IntegerAttr(threadsPerWarp));
  func->setAttr(TkwDialect::kTargetAttrName, builder.getStringAttr(target));
}
