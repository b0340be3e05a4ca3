//===- AssignLinearLayouts.cpp - #tkw.linear layouts for every tile -------===//
//
// Pass 2 of the register pipeline (DESIGN.md §3): dots get their matrix
// unit's accumulator fragment tiled over warps and registers, memory ops a
// coalesced blocked layout from AxisFacts, and the rest follows along
// def-use chains (LayoutPropagation) with the rules of linear layouts.
//
//===----------------------------------------------------------------------===//

#include "LayoutPropagation.h"
#include "LinearLayoutRules.h"

#include "tk/core/Analysis/AxisFacts.h"
#include "tk/core/Layout.h"
#include "tk/core/Layout/LayoutPresets.h"
#include "tk/core/Passes.h"
#include "tk/core/TargetInfo.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

#define DEBUG_TYPE "tk-assign-linear-layouts"

namespace tk {
#define GEN_PASS_DEF_TKASSIGNLINEARLAYOUTS
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;
using namespace tk;
using namespace tk::warp;

namespace {

constexpr llvm::StringLiteral kPassName = "tk-assign-linear-layouts";

//===----------------------------------------------------------------------===//
// The anchors' layouts
//===----------------------------------------------------------------------===//

/// Chooses #tkw.linear layouts for `numWarps` warps on `target`.
class LinearLayoutChooser {
public:
  LinearLayoutChooser(MLIRContext *context, int64_t numWarps,
                      const TargetInfo &target)
      : context(context), numWarps(numWarps), target(target) {}

  /// Triton's default blocked layout for a tile of `shape`: `vector`
  /// consecutive elements a thread along dimension `fastest` (the last by
  /// default; fewer where the tile has too few elements for every thread
  /// to hold that many), the lanes and then the warps laid out from that
  /// dimension, then from the last dimension to the first, each as far as
  /// the tile reaches; lanes or warps left over hold copies.
  LinearLayoutAttr blocked(ArrayRef<int64_t> shape, int64_t vector,
                           int64_t fastest = -1) const {
    int64_t rank = shape.size();
    if (fastest < 0)
      fastest = rank - 1;
    int64_t elements = 1;
    for (int64_t size : shape)
      elements *= size;
    int64_t threads = numWarps * target.warpSize;
    vector = std::min(
        {vector, std::max<int64_t>(elements / threads, 1), shape[fastest]});
    SmallVector<int32_t> sizePerThread(rank, 1), threadsPerWarp(rank, 1),
        warpsPerCTA(rank, 1), order, shape32;
    sizePerThread[fastest] = static_cast<int32_t>(vector);
    order.push_back(static_cast<int32_t>(fastest));
    for (int64_t d = rank - 1; d >= 0; --d)
      if (d != fastest)
        order.push_back(static_cast<int32_t>(d));
    for (int64_t size : shape)
      shape32.push_back(static_cast<int32_t>(size));
    int64_t lanes = target.warpSize, warps = numWarps;
    for (int32_t d : order) {
      int64_t room = std::max<int64_t>(shape[d] / sizePerThread[d], 1);
      threadsPerWarp[d] = static_cast<int32_t>(std::min(lanes, room));
      lanes /= threadsPerWarp[d];
      room = std::max<int64_t>(room / threadsPerWarp[d], 1);
      warpsPerCTA[d] = static_cast<int32_t>(std::min(warps, room));
      warps /= warpsPerCTA[d];
    }
    threadsPerWarp[order.back()] *= static_cast<int32_t>(lanes);
    warpsPerCTA[order.back()] *= static_cast<int32_t>(warps);
    return toLinearLayoutAttr(context, blockedLayout(shape32, sizePerThread,
                                                     threadsPerWarp,
                                                     warpsPerCTA, order));
  }

  /// The blocked layout of a tile of `type` computed, not loaded: a
  /// thread's vector of the target's width.
  LinearLayoutAttr forTile(Type type) const {
    return blocked(getTileShape(type), vectorOf(type, std::nullopt));
  }

  /// The coalesced layout of a load, store or atomic through `ptr`: along
  /// the dimension in which AxisFacts proves the longest vectors, the last
  /// on a tie (Triton's coalescing order; a tile loaded transposed, as
  /// attention's k, runs down its columns).
  LinearLayoutAttr forMemory(Value ptr) const {
    auto tile = dyn_cast<RankedTensorType>(ptr.getType());
    if (!tile)
      return blocked(getTileShape(ptr.getType()),
                     vectorOf(ptr.getType(), std::nullopt));
    int64_t fastest = tile.getRank() - 1;
    int64_t vector = vectorOf(tile, getAxisFacts(ptr, getLoopWalkFacts));
    for (int64_t dim = tile.getRank() - 2; dim >= 0; --dim) {
      int64_t along = vectorOf(tile, getAxisFactsAlong(ptr, dim));
      if (along > vector) {
        vector = along;
        fastest = dim;
      }
    }
    return blocked(tile.getShape(), vector, fastest);
  }

  /// The dimension forMemory coalesces a tile through `ptr` along.
  int64_t fastestDim(Value ptr) const {
    LinearLayoutAttr layout = forMemory(ptr);
    std::optional<int32_t> dim;
    const LinearLayout &linear = layout.getLinearLayout();
    if (linear.getInDimSizeLog2(kRegisterDim) > 0) {
      std::vector<int32_t> first = linear.getBasis(kRegisterDim, 0);
      for (int32_t d = 0; d < int32_t(first.size()); ++d)
        if (first[d] == 1)
          dim = d;
    }
    return dim.value_or(-1);
  }

  /// The accumulator of `dot`: the fragment of the first matrix intrinsic
  /// that takes its element types and divides its shape, over a grid of
  /// warps and then over registers; a blocked layout where none fits. Sets
  /// `intrinsic` to the one chosen (null for none).
  LinearLayoutAttr forDot(DotOp dot, const MatrixIntrinsic *&chosen) const {
    chosen = nullptr;
    auto a = cast<RankedTensorType>(dot.getA().getType());
    auto b = cast<RankedTensorType>(dot.getB().getType());
    auto c = cast<RankedTensorType>(dot.getType());
    int64_t rows = c.getDimSize(0), cols = c.getDimSize(1);
    // A narrow float accumulator is computed in f32 over the dot and
    // rounded once, as every lowering computes narrow floats: the intrinsic
    // that accumulates in f32.
    Type accumulator = c.getElementType();
    if (isa<Float16Type, BFloat16Type>(accumulator))
      accumulator = Float32Type::get(context);
    if (LinearLayoutAttr layout = forWarpgroupDot(dot, accumulator, chosen))
      return layout;
    // Rows across warps (attention) keep each row in one warp where an
    // intrinsic is short enough: the first such one, then the first at all
    // (AMD's presets list 32x32 before 16x16, which 64 rows over 4 waves
    // need).
    DotTiling tiling = chooseDotTiling(dot);
    bool wholeRows = tiling == DotTiling::Horizontal;
    SmallVector<const MatrixIntrinsic *> intrinsics = target.findIntrinsics(
        a.getElementType(), b.getElementType(), accumulator,
        dot.getInputPrecision() != InputPrecision::IEEE);
    for (bool rowsInOneWarp : {true, false}) {
      if (rowsInOneWarp && !wholeRows)
        continue;
      for (const MatrixIntrinsic *intrinsic : intrinsics) {
        // An opaque intrinsic's accumulator stays in its matrices across
        // the dots, so it must be the tile's own type, not a wider one.
        if (intrinsic->opaque && c.getElementType() != accumulator)
          continue;
        if (rows % intrinsic->m != 0 || cols % intrinsic->n != 0 ||
            a.getDimSize(1) % intrinsic->k != 0 ||
            (rowsInOneWarp && rows % (intrinsic->m * numWarps) != 0))
          continue;
        llvm::Expected<LinearLayout> fragment =
            intrinsic->accLayout.toLinearLayout(intrinsic->m, intrinsic->n);
        if (!fragment) {
          llvm::consumeError(fragment.takeError());
          continue;
        }
        chosen = intrinsic;
        return toLinearLayoutAttr(context, tileFragment(*fragment, rows, cols,
                                                        intrinsic->m,
                                                        intrinsic->n, tiling));
      }
    }
    return forFma(c.getShape());
  }

  /// The accumulator of `dot` computed by a warpgroup intrinsic (wgmma),
  /// where the target has one for its types and the warps make whole
  /// warpgroups: 64 rows by `width` columns an instruction, the widest
  /// (up to 256) that still gives every warpgroup a tile, then tiled as
  /// warp fragments are. Only for dots whose b is loaded, possibly
  /// transposed (attention's k): wgmma reads b from workgroup memory, so b
  /// computed in registers would be written there on every trip. a may be
  /// either: wgmma reads it through a descriptor or in registers
  /// (tk-dot-operand-layouts). Elements of 16 bits, or fp8 where both
  /// operands are loaded with k contiguous: wgmma reads 8-bit
  /// operands K-major only, which their copies then are without a
  /// transpose (cuBLASLt's fp8 takes b so too, "TN").
  LinearLayoutAttr forWarpgroupDot(DotOp dot, Type accumulator,
                                   const MatrixIntrinsic *&chosen) const {
    auto a = cast<RankedTensorType>(dot.getA().getType());
    auto b = cast<RankedTensorType>(dot.getB().getType());
    int64_t rows = a.getDimSize(0), cols = b.getDimSize(1);
    Value loaded = dot.getB();
    bool transposed = false;
    if (auto trans = loaded.getDefiningOp<TransOp>()) {
      loaded = trans.getSrc();
      transposed = true;
    }
    auto bLoad = loaded.getDefiningOp<LoadOp>();
    unsigned bits = a.getElementTypeBitWidth();
    bool fp8 = isa<Float8E4M3FNType, Float8E5M2Type>(a.getElementType());
    if (numWarps % 4 != 0 || (bits != 16 && !fp8) || !bLoad)
      return {};
    if (fp8) {
      // k is a's dimension 1 and b's 0 (1 of the tile transposed into b).
      auto aLoad = dot.getA().getDefiningOp<LoadOp>();
      if (!aLoad || fastestDim(aLoad.getPtr()) != 1 ||
          fastestDim(bLoad.getPtr()) != (transposed ? 1 : 0))
        return {};
    }
    int64_t warpgroups = numWarps / 4;
    for (const MatrixIntrinsic *intrinsic : target.findIntrinsics(
             a.getElementType(), b.getElementType(), accumulator,
             dot.getInputPrecision() != InputPrecision::IEEE,
             MatrixScope::Warpgroup)) {
      if (rows % intrinsic->m != 0 || a.getDimSize(1) % intrinsic->k != 0)
        continue;
      int64_t width = std::min(cols, intrinsic->n);
      while (width > 16 && (rows / intrinsic->m) * (cols / width) < warpgroups)
        width /= 2;
      if (width < 16 || cols % width != 0)
        continue;
      llvm::Expected<LinearLayout> fragment =
          intrinsic->accLayout.toLinearLayout(intrinsic->m, width);
      if (!fragment) {
        llvm::consumeError(fragment.takeError());
        continue;
      }
      chosen = intrinsic;
      return toLinearLayoutAttr(context, tileFragment(*fragment, rows, cols,
                                                      intrinsic->m, width,
                                                      chooseDotTiling(dot)));
    }
    return {};
  }

  /// The accumulator of a dot each thread computes on its own: a block of
  /// rows x columns a thread, as square as the threads allow. A thread holds
  /// its rows of a and its columns of b whole along k, so its operand
  /// registers are k (rows + columns): the threads split the product's
  /// row and column bits so that each keeps as many of one as of the other.
  /// The lanes go along the columns first, then the rows; the warps after
  /// them. Triton's blocked layout where the threads outnumber the product.
  LinearLayoutAttr forFma(ArrayRef<int64_t> shape) const {
    int32_t rowBits = llvm::Log2_64(shape[0]),
            colBits = llvm::Log2_64(shape[1]);
    int32_t laneBits = llvm::Log2_64(target.warpSize);
    int32_t warpBits = llvm::Log2_64(numWarps);
    int32_t threadBits = laneBits + warpBits;
    if (threadBits >= rowBits + colBits)
      return blocked(shape, 1);
    int32_t colThreads = std::clamp((colBits - rowBits + threadBits + 1) / 2,
                                    std::max(0, threadBits - rowBits),
                                    std::min(colBits, threadBits));
    int32_t rowThreads = threadBits - colThreads;
    int32_t laneCols = std::min(laneBits, colThreads);
    int32_t laneRows = laneBits - laneCols;
    int32_t warpCols = colThreads - laneCols;
    int32_t warpRows = warpBits - warpCols;
    SmallVector<int32_t> shape32 = {static_cast<int32_t>(shape[0]),
                                    static_cast<int32_t>(shape[1])};
    SmallVector<int32_t> sizePerThread = {shape32[0] >> rowThreads,
                                          shape32[1] >> colThreads};
    SmallVector<int32_t> threadsPerWarp = {1 << laneRows, 1 << laneCols};
    SmallVector<int32_t> warpsPerCTA = {1 << warpRows, 1 << warpCols};
    return toLinearLayoutAttr(
        context, blockedLayout(shape32, sizePerThread, threadsPerWarp,
                               warpsPerCTA, SmallVector<int32_t>{1, 0}));
  }

private:
  /// Elements a thread holds in a row: the target's vector bytes, at most
  /// what `facts` prove contiguous and aligned.
  int64_t vectorOf(Type type, std::optional<AxisFacts> facts) const {
    Type element = type;
    if (auto tile = dyn_cast<RankedTensorType>(type))
      element = tile.getElementType();
    if (auto pointer = dyn_cast<PtrType>(element)) {
      element = pointer.getPointeeType();
      if (auto block = dyn_cast<RankedTensorType>(element))
        element = block.getElementType();
    }
    int64_t bytes =
        element.isIntOrFloat()
            ? std::max<int64_t>(element.getIntOrFloatBitWidth() / 8, 1)
            : 8;
    int64_t vector = std::max<int64_t>(target.maxVectorLoadBytes / bytes, 1);
    if (facts) {
      int64_t aligned = std::max<int64_t>(facts->divisibility / bytes, 1);
      vector = std::min({vector, facts->contiguity, aligned});
    }
    return static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(vector)));
  }

  /// `fragment` (m x n) spread over a grid of warps, each warp's block at
  /// least one fragment, then repeated over registers to cover rows x cols.
  /// Square tiling halves the larger block first (rows on a tie), so that a
  /// warp reuses its operands most; horizontal splits rows first, vertical
  /// columns first. Warps the tile cannot use hold copies.
  llvm::Expected<LinearLayout> tileFragment(const LinearLayout &fragment,
                                            int64_t rows, int64_t cols,
                                            int64_t m, int64_t n,
                                            DotTiling tiling) const {
    int64_t block[2] = {rows, cols}, minBlock[2] = {m, n};
    int64_t warps[2] = {1, 1};
    int64_t remaining = numWarps / fragment.getInDimSize(kWarpDim);
    while (remaining > 1) {
      auto canHalve = [&](int d) { return block[d] / 2 >= minBlock[d]; };
      int chosen = -1;
      if (tiling == DotTiling::Square)
        chosen = canHalve(0) && (!canHalve(1) || block[0] >= block[1]) ? 0
                 : canHalve(1)                                         ? 1
                                                                       : -1;
      else {
        int first = tiling == DotTiling::Vertical ? 1 : 0;
        chosen = canHalve(first) ? first : canHalve(1 - first) ? 1 - first : -1;
      }
      if (chosen < 0)
        break;
      block[chosen] /= 2;
      warps[chosen] *= 2;
      remaining /= 2;
    }
    // Warps along columns vary fastest, as the lanes of the fragments do.
    LinearLayout layout =
        fragment *
        LinearLayout::identity1D(static_cast<int32_t>(warps[1]), kWarpDim,
                                 "dim1") *
        LinearLayout::identity1D(static_cast<int32_t>(warps[0]), kWarpDim,
                                 "dim0") *
        LinearLayout::zeros1D(static_cast<int32_t>(remaining), kWarpDim,
                              "dim0") *
        LinearLayout::identity1D(static_cast<int32_t>(block[1] / n),
                                 kRegisterDim, "dim1") *
        LinearLayout::identity1D(static_cast<int32_t>(block[0] / m),
                                 kRegisterDim, "dim0");
    return layout
        .transposeIns({kRegisterDim.str(), kLaneDim.str(), kWarpDim.str()})
        .transposeOuts({"dim0", "dim1"});
  }

  MLIRContext *context;
  int64_t numWarps;
  const TargetInfo &target;
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct AssignLinearLayoutsPass
    : public tk::impl::TkAssignLinearLayoutsBase<AssignLinearLayoutsPass> {
  using TkAssignLinearLayoutsBase::TkAssignLinearLayoutsBase;

  void runOnOperation() override {
    FuncOp func = getOperation();
    std::string error;
    std::optional<TargetInfo> info = TargetInfo::parse(target, error);
    if (!info) {
      func.emitError() << kPassName << ": " << error;
      return signalPassFailure();
    }
    if (std::optional<std::string> problem = info->workgroupProblem(numWarps)) {
      func.emitError() << kPassName << ": " << *problem;
      return signalPassFailure();
    }
    LinearLayoutChooser chooser(&getContext(), numWarps, *info);
    LinearLayoutRules rules(&getContext());
    LayoutPropagation propagation(rules);

    // Layouts already in the IR are kept if they are linear; another
    // layout system's would be mixed with this one's.
    bool foreign = false;
    auto keep = [&](Value value) {
      Attribute layout = getLayout(value.getType());
      if (!layout)
        return;
      if (isa<LinearLayoutAttr>(layout))
        return propagation.setLayout(value, layout);
      if (!foreign)
        func.emitError() << kPassName << ": a tile already has the layout "
                         << layout << ", which is not #tkw.linear";
      foreign = true;
    };
    func.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            keep(arg);
      for (Value result : op->getResults())
        keep(result);
    });
    if (foreign)
      return signalPassFailure();
    propagation.run();

    // Stores and atomics first: they want their coalesced layout of the
    // values they write, so a dot's result converts before its store
    // rather than the store following the matrix unit's fragment.
    func.walk([&](Operation *op) {
      Value ptr;
      if (auto store = dyn_cast<StoreOp>(op))
        ptr = store.getPtr();
      else if (auto rmw = dyn_cast<AtomicRMWOp>(op))
        ptr = rmw.getPtr();
      else if (auto cas = dyn_cast<AtomicCASOp>(op))
        ptr = cas.getPtr();
      if (!ptr || !isTileLike(ptr.getType()))
        return;
      LinearLayoutAttr layout = chooser.forMemory(ptr);
      for (OpOperand &operand : op->getOpOperands())
        propagation.want(operand, layout);
      for (Value result : op->getResults())
        propagation.setLayout(result, layout);
    });

    // The dots and the loads, all before any propagates, so that each keeps
    // its own choice. Dots propagate first: a value computed from a dot's
    // result and a loaded tile (a bias) stays in the matrix unit's layout,
    // and the loaded tile converts.
    func.walk([&](DotOp dot) {
      const MatrixIntrinsic *intrinsic = nullptr;
      propagation.setLayout(dot.getResult(), chooser.forDot(dot, intrinsic));
      // The dot-operands pass takes the same intrinsic's operand fragments.
      if (intrinsic)
        dot->setAttr(TkwDialect::kIntrinsicAttrName,
                     StringAttr::get(&getContext(), intrinsic->key()));
    });
    func.walk([&](LoadOp load) {
      // A scalar load has no layout; a block pointer's has no pointer tile.
      if (isa<RankedTensorType>(load.getPtr().getType()))
        propagation.setLayout(load.getResult(),
                              chooser.forMemory(load.getPtr()));
    });
    propagation.run();

    // Whatever is left: a broadcast spreads its source's copies, anything
    // else gets a blocked layout.
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (isTileLike(arg.getType()) && !propagation.lookup(arg)) {
              propagation.setLayout(arg, chooser.forTile(arg.getType()));
              propagation.run();
            }
      for (Value result : op->getResults()) {
        if (!isTileLike(result.getType()) || propagation.lookup(result))
          continue;
        Attribute layout;
        if (auto broadcast = dyn_cast<BroadcastOp>(op))
          layout =
              rules.broadcastFromSource(propagation.lookup(broadcast.getSrc()),
                                        broadcast.getType().getShape());
        if (!layout)
          layout = chooser.forTile(result.getType());
        propagation.setLayout(result, layout);
        propagation.run();
      }
    });

    // The sources of a reduction or scan combine element by element: all
    // take the first's layout (argmax's values and indices).
    func.walk([&](Operation *op) {
      if (!isa<ReduceOp, ScanOp>(op) || op->getNumOperands() < 2)
        return;
      Attribute first = propagation.lookup(op->getOperand(0));
      for (OpOperand &operand : llvm::drop_begin(op->getOpOperands()))
        if (propagation.lookup(operand.get()) != first)
          propagation.want(operand, first);
    });

    if (failed(propagation.apply(func, kPassName)))
      return signalPassFailure();

    recordLayoutTarget(func, numWarps, info->warpSize, info->name);
  }
};

} // namespace
