//===- MatchTargetSize.cpp - split warp-level ops to intrinsic sizes ------===//
//
// Splits each warp-level dot into the shape of the target's matrix
// intrinsic (ML-Triton §3.3): sub-tiles of the operands are extracted once
// and reused along the grid of small dots, and the accumulators are glued
// back into the warp's tile for the ops around.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout.h"
#include "tk/core/Passes.h"
#include "tk/core/TargetInfo.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tk-match-target-size"

namespace tk {
#define GEN_PASS_DEF_TKMATCHTARGETSIZE
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;
using namespace tk;
using namespace tk::warp;

namespace {

/// The first warp-scope intrinsic of `target` that takes the element types
/// of `dot` and whose shape divides the dot's.
const MatrixIntrinsic *selectIntrinsic(const TargetInfo &target, DotOp dot) {
  auto a = cast<RankedTensorType>(dot.getA().getType());
  auto b = cast<RankedTensorType>(dot.getB().getType());
  auto c = cast<RankedTensorType>(dot.getType());
  int64_t m = c.getDimSize(0), n = c.getDimSize(1), k = a.getDimSize(1);
  for (const MatrixIntrinsic *intrinsic : target.findIntrinsics(
           a.getElementType(), b.getElementType(), c.getElementType(),
           dot.getInputPrecision() != InputPrecision::IEEE))
    if (m % intrinsic->m == 0 && n % intrinsic->n == 0 && k % intrinsic->k == 0)
      return intrinsic;
  return nullptr;
}

/// Replaces `dot` by a grid of dots of `intrinsic`'s shape.
void splitDot(DotOp dot, const MatrixIntrinsic &intrinsic) {
  OpBuilder builder(dot);
  Location loc = dot.getLoc();
  auto aType = cast<RankedTensorType>(dot.getA().getType());
  auto bType = cast<RankedTensorType>(dot.getB().getType());
  auto cType = cast<RankedTensorType>(dot.getType());
  int64_t tilesM = cType.getDimSize(0) / intrinsic.m;
  int64_t tilesN = cType.getDimSize(1) / intrinsic.n;
  int64_t tilesK = aType.getDimSize(1) / intrinsic.k;
  auto nameAttr = builder.getStringAttr(intrinsic.name);

  // A piece is held as the intrinsic's fragment of its operand where the
  // target states one (an operand the instruction reads from shared memory
  // keeps the warp-level layout).
  auto pieceType = [&](RankedTensorType type, int64_t rows, int64_t cols,
                       unsigned opIdx,
                       const std::optional<FragmentLayout> &fragment) {
    Attribute encoding = type.getEncoding();
    if (fragment)
      encoding = FragmentLayoutAttr::get(
          builder.getContext(), intrinsic.name, opIdx, fragment->sizePerLane,
          fragment->lanesPerWarp, fragment->warpsPerFragment, fragment->order);
    return RankedTensorType::get({rows, cols}, type.getElementType(), encoding);
  };
  auto extract = [&](Value tile, RankedTensorType type, int64_t row,
                     int64_t col) -> Value {
    if (tile.getType() == type)
      return tile;
    // The whole tile is one piece: only its layout changes, to the lanes'.
    if (cast<RankedTensorType>(tile.getType()).getShape() == type.getShape())
      return ConvertLayoutOp::create(builder, loc, type, tile);
    return ExtractOp::create(builder, loc, type, tile,
                             builder.getDenseI64ArrayAttr({row, col}));
  };
  // Each sub-tile of a and b feeds a row (column) of small dots: extract
  // it once.
  SmallVector<Value> aPieces, bPieces;
  RankedTensorType aPiece =
      pieceType(aType, intrinsic.m, intrinsic.k, 0, intrinsic.aLayout);
  RankedTensorType bPiece =
      pieceType(bType, intrinsic.k, intrinsic.n, 1, intrinsic.bLayout);
  RankedTensorType cPiece =
      pieceType(cType, intrinsic.m, intrinsic.n, 2, intrinsic.accLayout);
  for (int64_t i = 0; i < tilesM; ++i)
    for (int64_t kk = 0; kk < tilesK; ++kk)
      aPieces.push_back(
          extract(dot.getA(), aPiece, i * intrinsic.m, kk * intrinsic.k));
  for (int64_t kk = 0; kk < tilesK; ++kk)
    for (int64_t j = 0; j < tilesN; ++j)
      bPieces.push_back(
          extract(dot.getB(), bPiece, kk * intrinsic.k, j * intrinsic.n));

  SmallVector<Value> accumulators;
  for (int64_t i = 0; i < tilesM; ++i)
    for (int64_t j = 0; j < tilesN; ++j) {
      Value acc =
          extract(dot.getAcc(), cPiece, i * intrinsic.m, j * intrinsic.n);
      for (int64_t kk = 0; kk < tilesK; ++kk) {
        auto small = DotOp::create(
            builder, loc, cPiece, aPieces[i * tilesK + kk],
            bPieces[kk * tilesN + j], acc, dot.getInputPrecisionAttr(),
            /*tiling=*/nullptr);
        small->setAttr(TkwDialect::kIntrinsicAttrName, nameAttr);
        acc = small.getResult();
      }
      accumulators.push_back(acc);
    }
  if (accumulators.size() == 1 && accumulators.front().getType() == cType)
    dot.getResult().replaceAllUsesWith(accumulators.front());
  else if (accumulators.size() == 1)
    dot.getResult().replaceAllUsesWith(
        ConvertLayoutOp::create(builder, loc, cType, accumulators.front())
            .getResult());
  else
    dot.getResult().replaceAllUsesWith(
        GlueOp::create(builder, loc, cType, accumulators).getResult());
  dot.erase();
}

struct MatchTargetSizePass
    : public tk::impl::TkMatchTargetSizeBase<MatchTargetSizePass> {
  using TkMatchTargetSizeBase::TkMatchTargetSizeBase;

  void runOnOperation() override {
    FuncOp func = getOperation();
    auto level = func->getAttrOfType<StringAttr>(TkwDialect::kLevelAttrName);
    if (!level || level.getValue() != "warp") {
      func.emitError() << "tk-match-target-size: expected a kernel at the "
                          "warp level; run tk-distribute-to-warps first";
      return signalPassFailure();
    }
    std::string spec = getTargetSpec(func, target);
    if (spec.empty()) {
      func.emitError() << "tk-match-target-size: no target; pass target= or "
                          "run tk-assign-layouts, which records one";
      return signalPassFailure();
    }
    std::string error;
    std::optional<TargetInfo> info = TargetInfo::parse(spec, error);
    if (!info) {
      func.emitError() << "tk-match-target-size: " << error;
      return signalPassFailure();
    }

    SmallVector<DotOp> dots;
    func.walk([&](DotOp dot) { dots.push_back(dot); });
    for (DotOp dot : dots) {
      // Without a fitting intrinsic (the CPU, f64 on most GPUs, shapes the
      // intrinsic does not divide) the dot stays whole for the backend's
      // fallback.
      const MatrixIntrinsic *intrinsic = selectIntrinsic(*info, dot);
      LLVM_DEBUG(llvm::dbgs()
                 << "dot " << dot.getType() << " -> "
                 << (intrinsic ? intrinsic->name : "none") << "\n");
      if (intrinsic)
        splitDot(dot, *intrinsic);
    }
    func->setAttr(TkwDialect::kLevelAttrName,
                  StringAttr::get(&getContext(), "intrinsic"));
  }
};

} // namespace
