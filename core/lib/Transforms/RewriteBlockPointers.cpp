//===- RewriteBlockPointers.cpp - block pointers as tiles of pointers -----===//
//
// The first pass of the register pipeline (DESIGN.md §3). Its layouts,
// vectorised accesses and pipelined loads work on tiles of pointers; a block
// pointer becomes the tile of its elements' pointers, carried beside its
// scalars (base, shape, strides, window offsets):
//
// - tk.make_block_ptr builds the tile: base + sum of position * stride;
// - tk.advance adds one uniform step to the tile (`addptr p, splat(step)`,
//   the loop walk the pipeliner and AxisFacts recognise) and the deltas to
//   the window offsets;
// - a load or store through it is the gather or scatter of the tile, the
//   boundary checks in its mask (from the window offsets), the padding as
//   `other`;
// - scf.for carries the pieces as iteration arguments of their own.
//
// Triton's RewriteTensorPointer does the same for its non-TMA targets.
//
//===----------------------------------------------------------------------===//

#include "tk/core/BlockPointers.h"
#include "tk/core/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"

namespace tk {
#define GEN_PASS_DEF_TKREWRITEBLOCKPOINTERS
#include "tk/core/Passes.h.inc"
} // namespace tk

#define DEBUG_TYPE "tk-rewrite-block-pointers"

using namespace mlir;

namespace {

bool isBlockPointer(Type type) {
  auto ptr = dyn_cast<tk::PtrType>(type);
  return ptr && ptr.isBlockPointer();
}

RankedTensorType getWindowType(Type blockPointer) {
  return cast<RankedTensorType>(
      cast<tk::PtrType>(blockPointer).getPointeeType());
}

/// A block pointer's pieces: the tensor's base, shape and strides (i64),
/// the window's offsets (i32) and the tile of its elements' pointers.
struct BlockPointer {
  Value base;
  SmallVector<Value> shape, strides, offsets;
  Value pointers;

  SmallVector<Value> flatten() const {
    SmallVector<Value> values{base};
    llvm::append_range(values, shape);
    llvm::append_range(values, strides);
    llvm::append_range(values, offsets);
    values.push_back(pointers);
    return values;
  }
  static size_t flatSize(size_t rank) { return 3 * rank + 2; }
  static BlockPointer unflatten(ValueRange values) {
    size_t rank = (values.size() - 2) / 3;
    BlockPointer bp;
    bp.base = values[0];
    auto slice = [&](size_t first) {
      return SmallVector<Value>(values.begin() + first,
                                values.begin() + first + rank);
    };
    bp.shape = slice(1);
    bp.strides = slice(1 + rank);
    bp.offsets = slice(1 + 2 * rank);
    bp.pointers = values.back();
    return bp;
  }
};

class BlockPointerRewriter {
public:
  explicit BlockPointerRewriter(tk::FuncOp func)
      : func(func), b(func.getContext()) {}

  LogicalResult run();

  /// The loops that now carry block pointers' pieces.
  SmallVector<Operation *> grownLoops;

private:
  LogicalResult visitBlock(Block &block);
  LogicalResult visitOp(Operation *op);
  LogicalResult visitFor(scf::ForOp loop);
  FailureOr<BlockPointer> lookup(Operation *user, Value blockPointer);

  tk::FuncOp func;
  OpBuilder b;
  llvm::DenseMap<Value, BlockPointer> blocks;
  /// Ops whose block-pointer results the rewrite replaced, erased once no
  /// rewritten op refers to them.
  SmallVector<Operation *> replaced;
};

LogicalResult BlockPointerRewriter::run() {
  for (Block &block : func.getBody())
    if (failed(visitBlock(block)))
      return failure();
  for (Operation *op : replaced)
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (!llvm::is_contained(replaced, user))
          return user->emitOpError(
              "takes a block pointer, which tk-rewrite-block-pointers does "
              "not rewrite here");
  for (Operation *op : replaced)
    op->dropAllReferences();
  for (Operation *op : llvm::reverse(replaced))
    op->erase();
  return success();
}

LogicalResult BlockPointerRewriter::visitBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block))
    if (failed(visitOp(&op)))
      return failure();
  return success();
}

FailureOr<BlockPointer> BlockPointerRewriter::lookup(Operation *user,
                                                     Value blockPointer) {
  auto it = blocks.find(blockPointer);
  if (it == blocks.end())
    return user->emitOpError("takes a block pointer that does not come from "
                             "tk.make_block_ptr through tk.advance and "
                             "scf.for");
  return it->second;
}

LogicalResult BlockPointerRewriter::visitOp(Operation *op) {
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  if (auto make = dyn_cast<tk::MakeBlockPtrOp>(op)) {
    BlockPointer bp{make.getBase(),
                    make.getShape(),
                    make.getStrides(),
                    make.getOffsets(),
                    {}};
    auto window = getWindowType(make.getType());
    auto pointerTile =
        RankedTensorType::get(window.getShape(), bp.base.getType());
    bp.pointers = tk::AddPtrOp::create(
        b, loc, pointerTile, tk::SplatOp::create(b, loc, pointerTile, bp.base),
        tk::buildBlockElementOffsets(b, loc, window.getShape(), bp.offsets,
                                     bp.strides));
    blocks[make.getResult()] = std::move(bp);
    replaced.push_back(op);
    return success();
  }
  if (auto advance = dyn_cast<tk::AdvanceOp>(op)) {
    FailureOr<BlockPointer> bp = lookup(op, advance.getPtr());
    if (failed(bp))
      return failure();
    // The window moves by the deltas; every element's pointer by the same
    // number of elements, sum of delta * stride.
    Value step;
    for (auto [d, delta] : llvm::enumerate(advance.getOffsets())) {
      if (matchPattern(delta, m_Zero()))
        continue;
      bp->offsets[d] = arith::AddIOp::create(b, loc, bp->offsets[d], delta);
      Value term = arith::ExtSIOp::create(b, loc, b.getI64Type(), delta);
      if (!matchPattern(bp->strides[d], m_One()))
        term = arith::MulIOp::create(b, loc, term, bp->strides[d]);
      step = step ? Value(arith::AddIOp::create(b, loc, step, term)) : term;
    }
    if (step) {
      auto pointerTile = cast<RankedTensorType>(bp->pointers.getType());
      bp->pointers = tk::AddPtrOp::create(
          b, loc, pointerTile, bp->pointers,
          tk::SplatOp::create(
              b, loc,
              RankedTensorType::get(pointerTile.getShape(), b.getI64Type()),
              step));
    }
    blocks[advance.getResult()] = std::move(*bp);
    replaced.push_back(op);
    return success();
  }
  if (auto load = dyn_cast<tk::LoadOp>(op);
      load && isBlockPointer(load.getPtr().getType())) {
    FailureOr<BlockPointer> bp = lookup(op, load.getPtr());
    if (failed(bp))
      return failure();
    auto window = getWindowType(load.getPtr().getType());
    Value mask = tk::buildBlockInBounds(b, loc, window.getShape(), bp->offsets,
                                        bp->shape, load.getBoundaryCheck());
    Value other = mask
                      ? tk::buildBlockPadding(b, loc, window, load.getPadding())
                      : Value();
    auto gather = tk::LoadOp::create(b, loc, bp->pointers, mask, other);
    gather.setIsVolatile(load.getIsVolatile());
    load.getResult().replaceAllUsesWith(gather.getResult());
    load->erase();
    return success();
  }
  if (auto store = dyn_cast<tk::StoreOp>(op);
      store && isBlockPointer(store.getPtr().getType())) {
    FailureOr<BlockPointer> bp = lookup(op, store.getPtr());
    if (failed(bp))
      return failure();
    auto window = getWindowType(store.getPtr().getType());
    Value mask = tk::buildBlockInBounds(b, loc, window.getShape(), bp->offsets,
                                        bp->shape, store.getBoundaryCheck());
    tk::StoreOp::create(b, loc, bp->pointers, store.getValue(), mask);
    store->erase();
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return visitFor(loop);
  // A loop's yield is rewritten by visitFor.
  if (isa<scf::YieldOp>(op) && isa<scf::ForOp>(op->getParentOp()))
    return success();
  for (Value operand : op->getOperands())
    if (isBlockPointer(operand.getType()))
      return op->emitOpError("takes a block pointer; tk-rewrite-block-pointers "
                             "rewrites them through tk.advance, tk.load, "
                             "tk.store and scf.for only");
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (failed(visitBlock(block)))
        return failure();
  return success();
}

LogicalResult BlockPointerRewriter::visitFor(scf::ForOp loop) {
  if (!llvm::any_of(loop.getInitArgs().getTypes(), isBlockPointer))
    return visitBlock(*loop.getBody());
  // The new loop carries every other value as it was, then each block
  // pointer's pieces.
  SmallVector<Value> inits;
  SmallVector<unsigned> kept;
  for (auto [index, init] : llvm::enumerate(loop.getInitArgs()))
    if (!isBlockPointer(init.getType())) {
      inits.push_back(init);
      kept.push_back(index);
    }
  SmallVector<std::pair<unsigned, unsigned>> carried; // index, first piece
  for (auto [index, init] : llvm::enumerate(loop.getInitArgs())) {
    if (!isBlockPointer(init.getType()))
      continue;
    FailureOr<BlockPointer> bp = lookup(loop, init);
    if (failed(bp))
      return failure();
    carried.push_back({unsigned(index), unsigned(inits.size())});
    llvm::append_range(inits, bp->flatten());
  }
  b.setInsertionPoint(loop);
  auto grown =
      scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound(),
                         loop.getUpperBound(), loop.getStep(), inits,
                         /*bodyBuilder=*/nullptr, loop.getUnsignedCmp());
  grown->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
  Block *body = grown.getBody();
  body->getOperations().splice(body->end(), loop.getBody()->getOperations());
  loop.getInductionVar().replaceAllUsesWith(grown.getInductionVar());
  for (auto [k, index] : llvm::enumerate(kept))
    loop.getRegionIterArgs()[index].replaceAllUsesWith(
        grown.getRegionIterArgs()[k]);
  auto pieces = [&](ValueRange values, unsigned index, unsigned first) {
    size_t rank = getWindowType(loop.getInitArgs()[index].getType()).getRank();
    return BlockPointer::unflatten(
        values.slice(first, BlockPointer::flatSize(rank)));
  };
  for (auto [index, first] : carried)
    blocks[loop.getRegionIterArgs()[index]] =
        pieces(grown.getRegionIterArgs(), index, first);
  if (failed(visitBlock(*body)))
    return failure();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  SmallVector<Value> yielded;
  for (unsigned index : kept)
    yielded.push_back(yield.getOperand(index));
  for (auto [index, first] : carried) {
    FailureOr<BlockPointer> bp = lookup(yield, yield.getOperand(index));
    if (failed(bp))
      return failure();
    llvm::append_range(yielded, bp->flatten());
  }
  b.setInsertionPoint(yield);
  scf::YieldOp::create(b, yield.getLoc(), yielded);
  yield->erase();
  for (auto [k, index] : llvm::enumerate(kept))
    loop.getResult(index).replaceAllUsesWith(grown.getResult(k));
  for (auto [index, first] : carried)
    blocks[loop.getResult(index)] = pieces(grown.getResults(), index, first);
  replaced.push_back(loop);
  grownLoops.push_back(grown);
  return success();
}

struct RewriteBlockPointers
    : tk::impl::TkRewriteBlockPointersBase<RewriteBlockPointers> {
  void runOnOperation() override {
    BlockPointerRewriter rewriter(getOperation());
    if (failed(rewriter.run()))
      return signalPassFailure();
    // The pieces a loop passes on unchanged (base, shape, strides, and the
    // offsets of dimensions it does not advance) leave it, so that what is
    // built from them (a walk's step) is loop-invariant.
    RewritePatternSet patterns(&getContext());
    scf::ForOp::getCanonicalizationPatterns(patterns, &getContext());
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    (void)applyOpPatternsGreedily(rewriter.grownLoops, std::move(patterns),
                                  config);
  }
};

} // namespace
