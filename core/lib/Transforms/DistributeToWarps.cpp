//===- DistributeToWarps.cpp - rewrite a kernel to one warp's share -------===//
//
// Turns the workgroup-level kernel into what one warp computes (ML-Triton
// §2.2): every tile becomes the block its layout gives a warp, and the
// positions that depended on the program id alone (ranges, block pointer
// offsets) now depend on the warp id too.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout.h"
#include "tk/core/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#include <map>
#include <tuple>

#define DEBUG_TYPE "tk-distribute-to-warps"

namespace tk {
#define GEN_PASS_DEF_TKDISTRIBUTETOWARPS
#include "tk/core/Passes.h.inc"
} // namespace tk

using namespace mlir;
using namespace tk;
using namespace tk::warp;

namespace {

/// The block a warp holds of a tile: (offset, size) per dimension.
using WarpBlock = SmallVector<std::pair<int64_t, int64_t>>;

/// A tile of the workgroup level and how its layout spreads it.
struct DistributedTile {
  SmallVector<int64_t> shape;
  WarpDistribution distribution;

  WarpBlock blockOf(int64_t warp) const {
    WarpBlock block;
    for (size_t d = 0; d < shape.size(); ++d)
      block.push_back({distribution.getWarpOffset(warp, d, shape),
                       distribution.sizePerWarp[d]});
    return block;
  }

  /// True when warps hold copies of the same elements.
  bool isReplicated() const {
    int64_t held = distribution.getNumWarps(), total = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      held *= distribution.sizePerWarp[d];
      total *= shape[d];
    }
    return held > total;
  }

  /// True when every warp holds the whole tile.
  bool isWhole() const {
    return ArrayRef<int64_t>(distribution.sizePerWarp) ==
           ArrayRef<int64_t>(shape);
  }
};

WarpBlock dropDim(WarpBlock block, int64_t dim) {
  block.erase(block.begin() + dim);
  return block;
}

struct DistributeToWarpsPass
    : public tk::impl::TkDistributeToWarpsBase<DistributeToWarpsPass> {
  using TkDistributeToWarpsBase::TkDistributeToWarpsBase;

  void runOnOperation() override {
    FuncOp func = getOperation();
    if (auto level =
            func->getAttrOfType<StringAttr>(TkwDialect::kLevelAttrName)) {
      func.emitError() << "tk-distribute-to-warps: the kernel is already at "
                          "the "
                       << level.getValue() << " level";
      return signalPassFailure();
    }
    auto warpsAttr =
        func->getAttrOfType<IntegerAttr>(TkwDialect::kNumWarpsAttrName);
    if (!warpsAttr) {
      func.emitError() << "tk-distribute-to-warps: the kernel has no '"
                       << TkwDialect::kNumWarpsAttrName
                       << "'; run tk-assign-layouts first";
      return signalPassFailure();
    }
    numWarps = warpsAttr.getInt();
    // The pass object runs on every function of the module in turn: no
    // value of the previous one may stay in its maps.
    tiles.clear();
    constants.clear();
    offsets.clear();
    warpId = {};

    if (failed(analyse(func)) || failed(check(func)))
      return signalPassFailure();
    rewrite(func);
    func->setAttr(TkwDialect::kLevelAttrName,
                  StringAttr::get(&getContext(), "warp"));
  }

private:
  /// Computes the distribution of every tile of the workgroup level.
  LogicalResult analyse(FuncOp func) {
    auto add = [&](Value value) -> LogicalResult {
      if (!isTileLike(value.getType()))
        return success();
      Attribute layout = getLayout(value.getType());
      DistributedTile tile;
      tile.shape.assign(getTileShape(value.getType()).begin(),
                        getTileShape(value.getType()).end());
      std::string error;
      if (!layout)
        error = "has no layout; run tk-assign-layouts first";
      else if (succeeded(getWarpDistribution(layout, tile.shape,
                                             tile.distribution, error)) &&
               tile.distribution.getNumWarps() != numWarps)
        error = "has a layout for " +
                std::to_string(tile.distribution.getNumWarps()) +
                " warps in a kernel of " + std::to_string(numWarps);
      if (!error.empty()) {
        emitError(value.getLoc()) << "tk-distribute-to-warps: tile of type "
                                  << value.getType() << " " << error;
        return failure();
      }
      tiles[value] = std::move(tile);
      return success();
    };
    WalkResult result = func.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (failed(add(arg)))
              return WalkResult::interrupt();
      for (Value value : op->getResults())
        if (failed(add(value)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  /// Checks, warp by warp, that each op's operands and results hold
  /// matching blocks, so that the op computed on the shares is the op on
  /// the tiles; and that nothing needs cross-warp work this pass cannot
  /// express.
  LogicalResult check(FuncOp func) {
    WalkResult result = func.walk([&](Operation *op) {
      if (failed(checkOp(op)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  LogicalResult checkOp(Operation *op) {
    auto tileOf = [&](Value value) -> const DistributedTile * {
      auto it = tiles.find(value);
      return it == tiles.end() ? nullptr : &it->second;
    };
    auto fail = [&](const Twine &why) {
      return op->emitOpError() << "cannot be distributed to warps: " << why;
    };
    // Every warp must hold matching blocks; `expect` says what a warp's
    // block of `value` must be, given the warp.
    auto expectBlocks = [&](Value value,
                            function_ref<WarpBlock(int64_t)> expect,
                            StringRef what) -> LogicalResult {
      const DistributedTile *tile = tileOf(value);
      if (!tile)
        return success();
      for (int64_t warp = 0; warp < numWarps; ++warp)
        if (tile->blockOf(warp) != expect(warp))
          return fail(Twine("warp ") + Twine(warp) + " holds a block of the " +
                      what + " that does not match its other operands");
      return success();
    };

    if (isa<ConvertLayoutOp, scf::YieldOp, scf::ForOp, scf::IfOp,
            ReduceReturnOp, ScanReturnOp>(op))
      return success();

    if (auto dot = dyn_cast<DotOp>(op)) {
      const DistributedTile *c = tileOf(dot.getResult());
      int64_t k = cast<RankedTensorType>(dot.getA().getType()).getDimSize(1);
      if (failed(expectBlocks(
              dot.getAcc(), [&](int64_t w) { return c->blockOf(w); },
              "accumulator")) ||
          failed(expectBlocks(
              dot.getA(),
              [&](int64_t w) {
                return WarpBlock{c->blockOf(w)[0], {0, k}};
              },
              "operand a")) ||
          failed(expectBlocks(
              dot.getB(),
              [&](int64_t w) {
                return WarpBlock{{0, k}, c->blockOf(w)[1]};
              },
              "operand b")))
        return failure();
      return success();
    }

    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      const DistributedTile *src = tileOf(reduce.getSrcs().front());
      int64_t axis = reduce.getAxis();
      // Warps that each hold part of the axis would have to combine their
      // partial results through shared memory.
      if (src->distribution.sizePerWarp[axis] != src->shape[axis])
        return fail(Twine("dimension ") + Twine(axis) +
                    " is split across warps and needs a cross-warp "
                    "reduction (through shared memory), which this pass "
                    "does not produce yet");
      for (Value other : reduce.getSrcs())
        if (failed(expectBlocks(
                other, [&](int64_t w) { return src->blockOf(w); }, "source")))
          return failure();
      for (Value result : reduce.getResults())
        if (failed(expectBlocks(
                result,
                [&](int64_t w) { return dropDim(src->blockOf(w), axis); },
                "result")))
          return failure();
      return success();
    }

    if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
      const DistributedTile *result = tileOf(expand.getResult());
      return expectBlocks(
          expand.getSrc(),
          [&](int64_t w) {
            return dropDim(result->blockOf(w), expand.getAxis());
          },
          "source");
    }

    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      const DistributedTile *result = tileOf(broadcast.getResult());
      auto srcShape = broadcast.getSrc().getType().getShape();
      return expectBlocks(
          broadcast.getSrc(),
          [&](int64_t w) {
            WarpBlock block = result->blockOf(w);
            for (size_t d = 0; d < srcShape.size(); ++d)
              if (srcShape[d] != result->shape[d])
                block[d] = {0, 1};
            return block;
          },
          "source");
    }

    SmallVector<Value> values;
    for (Value value : op->getOperands())
      if (tileOf(value))
        values.push_back(value);
    for (Value value : op->getResults())
      if (tileOf(value))
        values.push_back(value);
    if (values.empty())
      return success();

    if (isSameLayoutOp(op)) {
      if (isa<AtomicRMWOp, AtomicCASOp>(op) &&
          tileOf(values.front())->isReplicated())
        return fail("warps hold copies of the tile and would apply the "
                    "atomic once per copy");
      const DistributedTile *first = tileOf(values.front());
      for (Value value : ArrayRef<Value>(values).drop_front())
        if (failed(expectBlocks(
                value, [&](int64_t w) { return first->blockOf(w); },
                "operands")))
          return failure();
      if (auto constant = dyn_cast<arith::ConstantOp>(op))
        if (!isa<SplatElementsAttr>(constant.getValue()) && !first->isWhole())
          return fail("only splat constants can be split across warps");
      return success();
    }

    // Anything else works on shares only when every warp holds whole tiles.
    for (Value value : values)
      if (!tileOf(value)->isWhole())
        return fail("tk-distribute-to-warps cannot split this op yet; its "
                    "tiles must be held whole by every warp");
    return success();
  }

  /// The offset, along tile dimension `dim`, of this warp's block of
  /// `tile`, built at the function entry from `tkw.warp_id`; null for 0.
  Value warpOffset(OpBuilder &builder, Location loc,
                   const DistributedTile &tile, int64_t dim) {
    const WarpDistribution &dist = tile.distribution;
    int64_t grid = dist.gridDim[dim];
    if (grid < 0 || dist.sizePerWarp[dim] == tile.shape[dim])
      return {};
    auto key = std::make_tuple(grid, dist.blockStride[dim], tile.shape[dim],
                               SmallVector<int64_t>(dist.warpsPerCTA),
                               SmallVector<int64_t>(dist.order));
    if (Value cached = offsets[key])
      return cached;
    auto constant = [&](int64_t value) -> Value {
      Value &slot = constants[value];
      if (!slot)
        slot = arith::ConstantOp::create(builder, loc,
                                         builder.getI32IntegerAttr(value));
      return slot;
    };
    // The grid coordinate: warp ids run through `order` fastest first.
    int64_t divisor = 1;
    bool slowest = false;
    for (size_t i = 0; i < dist.order.size(); ++i) {
      if (dist.order[i] == grid) {
        slowest = i + 1 == dist.order.size();
        break;
      }
      divisor *= dist.warpsPerCTA[dist.order[i]];
    }
    Value coord = warpId;
    if (divisor > 1)
      coord = arith::DivUIOp::create(builder, loc, coord, constant(divisor));
    if (!slowest)
      coord = arith::RemUIOp::create(builder, loc, coord,
                                     constant(dist.warpsPerCTA[grid]));
    Value offset = coord;
    if (dist.blockStride[dim] != 1)
      offset = arith::MulIOp::create(builder, loc, offset,
                                     constant(dist.blockStride[dim]));
    // Blocks wrap around a tile smaller than the warps' blocks.
    if (dist.blockStride[dim] * dist.warpsPerCTA[grid] > tile.shape[dim])
      offset = arith::RemUIOp::create(builder, loc, offset,
                                      constant(tile.shape[dim]));
    offsets[key] = offset;
    return offset;
  }

  void rewrite(FuncOp func) {
    Block &entry = func.getBody().front();
    OpBuilder entryBuilder = OpBuilder::atBlockBegin(&entry);
    Location loc = func.getLoc();
    warpId = WarpIdOp::create(entryBuilder, loc, entryBuilder.getI32Type());

    // Offsets first, while the tiles still have their workgroup types.
    SmallVector<std::tuple<MakeRangeOp, Value>> ranges;
    func.walk([&](Operation *op) {
      if (auto range = dyn_cast<MakeRangeOp>(op)) {
        ranges.push_back({range, warpOffset(entryBuilder, loc,
                                            tiles[range.getResult()], 0)});
        return;
      }
      if (auto blockPtr = dyn_cast<MakeBlockPtrOp>(op)) {
        const DistributedTile &tile = tiles[blockPtr.getResult()];
        OpBuilder builder(op);
        for (size_t d = 0; d < tile.shape.size(); ++d)
          if (Value offset = warpOffset(entryBuilder, loc, tile, d)) {
            OpOperand &operand = blockPtr.getOffsetsMutable()[d];
            operand.set(arith::AddIOp::create(builder, op->getLoc(),
                                              operand.get(), offset));
          }
      }
    });

    // Every tile becomes its warp's share.
    for (auto &[value, tile] : tiles)
      value.setType(
          withTileShape(value.getType(), tile.distribution.sizePerWarp));
    func.walk([&](arith::ConstantOp constant) {
      auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
      if (splat && splat.getType() != constant.getType())
        constant.setValueAttr(
            SplatElementsAttr::get(cast<ShapedType>(constant.getType()),
                                   splat.getSplatValue<Attribute>()));
    });

    // A range becomes the warp's part of it: a smaller range plus the
    // warp's offset.
    for (auto [range, offset] : ranges) {
      auto type = range.getType();
      int64_t start = range.getStartAttr().getInt();
      int64_t size = type.getDimSize(0);
      if (range.getEndAttr().getInt() - start == size)
        continue;
      OpBuilder builder(range);
      auto smaller = MakeRangeOp::create(
          builder, range.getLoc(), type, builder.getI32IntegerAttr(start),
          builder.getI32IntegerAttr(start + size));
      Value result = smaller.getResult();
      if (offset) {
        auto splat = SplatOp::create(builder, range.getLoc(), type, offset);
        result = arith::AddIOp::create(builder, range.getLoc(), result, splat);
      }
      range.getResult().replaceAllUsesWith(result);
      range.erase();
    }
  }

  int64_t numWarps = 0;
  llvm::MapVector<Value, DistributedTile> tiles;
  Value warpId;
  /// The i32 constants of the offset computations, built once.
  DenseMap<int64_t, Value> constants;
  std::map<std::tuple<int64_t, int64_t, int64_t, SmallVector<int64_t>,
                      SmallVector<int64_t>>,
           Value>
      offsets;
};

} // namespace
