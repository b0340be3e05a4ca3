//===- BoundsChecks.cpp - kernels that check their own accesses -----------===//
//
// Pointers are followed from the arguments by a shadow: beside each pointer
// value, scalar or tile, the rewrite builds the i64 offsets, in elements,
// of its pointers from the argument they come from (tk.splat splats them,
// tk.addptr adds to them, a shape op or arith.select is cloned on them, a
// loop carries them beside the pointers). Block pointers keep their scalars
// (base offset, shape, strides, window offsets) instead, and their loads
// and stores become gathers and scatters whose masks hold the boundary
// checks. At each access, an element is in bounds when 0 <= offset <
// extent; the access's mask is ANDed with that, and the offsets of the
// elements it masked off are stored to the site's slot of the record (any
// one of them wins, which is all the report needs).
//
// The shadows are plain tk ops, so every backend compiles the checked
// kernel as it compiles any other, and canonicalisation removes what an
// access does not use.
//
//===----------------------------------------------------------------------===//

#include "tk/core/BoundsChecks.h"
#include "tk/core/BlockPointers.h"
#include "tk/core/Specialize.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

bool isScalarPointer(Type type) {
  auto ptr = dyn_cast<tk::PtrType>(type);
  return ptr && !ptr.isBlockPointer();
}

bool isBlockPointer(Type type) {
  auto ptr = dyn_cast<tk::PtrType>(type);
  return ptr && ptr.isBlockPointer();
}

/// A scalar pointer or a tile of them.
bool isPointerLike(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return isScalarPointer(tile.getElementType());
  return isScalarPointer(type);
}

/// The type of the offsets beside a pointer value of `type`.
Type getOffsetType(Type type) {
  Type i64 = IntegerType::get(type.getContext(), 64);
  if (auto tile = dyn_cast<RankedTensorType>(type))
    return RankedTensorType::get(tile.getShape(), i64);
  return i64;
}

/// `file:line:column` of the first file location within `loc`.
std::string describe(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = (file.getFilename().getValue() + ":" + Twine(file.getLine()) +
              ":" + Twine(file.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (text.empty())
    llvm::raw_string_ostream(text) << loc;
  return text;
}

/// The offsets (in elements, from its argument) of a pointer value.
struct PointerShadow {
  unsigned argument;
  Value offsets;
};

/// What a block pointer is made of, as scalars: its base's offset from its
/// argument, the tensor's shape and strides (i64) and the window's offsets
/// (i32).
struct BlockShadow {
  unsigned argument;
  Value baseOffset;
  SmallVector<Value> shape, strides, offsets;

  SmallVector<Value> flatten() const {
    SmallVector<Value> values{baseOffset};
    llvm::append_range(values, shape);
    llvm::append_range(values, strides);
    llvm::append_range(values, offsets);
    return values;
  }
  static BlockShadow unflatten(unsigned argument, ValueRange values) {
    size_t rank = (values.size() - 1) / 3;
    BlockShadow shadow{argument, values[0], {}, {}, {}};
    shadow.shape.assign(values.begin() + 1, values.begin() + 1 + rank);
    shadow.strides.assign(values.begin() + 1 + rank,
                          values.begin() + 1 + 2 * rank);
    shadow.offsets.assign(values.begin() + 1 + 2 * rank, values.end());
    return shadow;
  }
};

class BoundsCheckRewriter {
public:
  BoundsCheckRewriter(tk::FuncOp func, tk::BoundsChecks &out)
      : func(func), out(out), b(func.getContext()) {}

  LogicalResult run();

private:
  LogicalResult visitBlock(Block &block);
  LogicalResult visitOp(Operation *op);
  LogicalResult visitFor(scf::ForOp loop);
  LogicalResult followShapeOp(Operation *op);
  LogicalResult checkAccess(Operation *op, Value ptr);
  LogicalResult checkBlockAccess(Operation *op, Value blockPtr);

  /// The i1 tile (or scalar) of the elements of `offsets` inside argument
  /// `argument`'s buffer.
  Value inBounds(Location loc, unsigned argument, Value offsets);
  /// Stores `offsets` where `outside` holds to the next site's slot, and
  /// records the site.
  void record(Operation *op, unsigned argument, Value offsets, Value outside);
  Value constantLike(Location loc, Type type, int64_t value);
  Value splatLike(Location loc, Value scalar, Type like);
  std::string argumentName(unsigned argument) {
    return tk::getArgumentName(func, argument);
  }

  tk::FuncOp func;
  tk::BoundsChecks &out;
  OpBuilder b;
  llvm::DenseMap<Value, PointerShadow> pointers;
  llvm::DenseMap<Value, BlockShadow> blocks;
  /// The extent argument of each user argument (null for non-pointers).
  SmallVector<Value> extents;
  Value recordArgument;
};

} // namespace

LogicalResult BoundsCheckRewriter::run() {
  Block &entry = func.getBody().front();
  unsigned numUser = func.getNumArguments();
  out.numUserArguments = numUser;
  SmallVector<Attribute> names;
  for (unsigned i = 0; i < numUser; ++i)
    names.push_back(b.getStringAttr(argumentName(i)));
  Type i64 = b.getI64Type();
  Location loc = func.getLoc();
  extents.assign(numUser, Value());
  for (unsigned i = 0; i < numUser; ++i) {
    if (!isScalarPointer(entry.getArgument(i).getType()))
      continue;
    unsigned index = func.getNumArguments();
    if (failed(func.insertArgument(index, i64, DictionaryAttr(), loc)))
      return func.emitError("cannot append the extent argument of '")
             << argumentName(i) << "'";
    extents[i] = entry.getArgument(index);
    out.extentArguments.push_back(i);
    names.push_back(b.getStringAttr(argumentName(i) + ".extent"));
  }
  unsigned recordIndex = func.getNumArguments();
  if (failed(func.insertArgument(recordIndex,
                                 tk::PtrType::get(b.getContext(), i64),
                                 DictionaryAttr(), loc)))
    return func.emitError("cannot append the bounds record argument");
  recordArgument = entry.getArgument(recordIndex);
  names.push_back(b.getStringAttr("bounds.record"));
  func->setAttr(tk::TkDialect::kArgNamesAttrName, b.getArrayAttr(names));

  b.setInsertionPointToStart(&entry);
  Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
  for (unsigned i = 0; i < numUser; ++i)
    if (extents[i])
      pointers[entry.getArgument(i)] = {i, zero};
  return visitBlock(entry);
}

LogicalResult BoundsCheckRewriter::visitBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block))
    if (failed(visitOp(&op)))
      return failure();
  return success();
}

LogicalResult BoundsCheckRewriter::visitOp(Operation *op) {
  b.setInsertionPoint(op);
  Location loc = op->getLoc();
  if (auto splat = dyn_cast<tk::SplatOp>(op)) {
    auto it = pointers.find(splat.getSrc());
    if (it != pointers.end())
      pointers[splat.getResult()] = {
          it->second.argument,
          splatLike(loc, it->second.offsets, splat.getType())};
    return success();
  }
  if (auto add = dyn_cast<tk::AddPtrOp>(op)) {
    auto it = pointers.find(add.getPtr());
    if (it == pointers.end())
      return success();
    Value offset = add.getOffset();
    Type wide = getOffsetType(offset.getType());
    if (offset.getType() != wide)
      offset = arith::ExtSIOp::create(b, loc, wide, offset);
    pointers[add.getResult()] = {
        it->second.argument,
        arith::AddIOp::create(b, loc, it->second.offsets, offset)};
    return success();
  }
  if (isa<tk::BroadcastOp, tk::ExpandDimsOp, tk::ReshapeOp, tk::TransOp,
          tk::CatOp, tk::JoinOp, arith::SelectOp>(op))
    return followShapeOp(op);
  if (auto make = dyn_cast<tk::MakeBlockPtrOp>(op)) {
    auto it = pointers.find(make.getBase());
    if (it == pointers.end())
      return success();
    BlockShadow shadow{it->second.argument, it->second.offsets, {}, {}, {}};
    shadow.shape.assign(make.getShape().begin(), make.getShape().end());
    shadow.strides.assign(make.getStrides().begin(), make.getStrides().end());
    shadow.offsets.assign(make.getOffsets().begin(), make.getOffsets().end());
    blocks[make.getResult()] = std::move(shadow);
    return success();
  }
  if (auto advance = dyn_cast<tk::AdvanceOp>(op)) {
    auto it = blocks.find(advance.getPtr());
    if (it == blocks.end())
      return success();
    BlockShadow shadow = it->second;
    for (auto [offset, delta] :
         llvm::zip_equal(shadow.offsets, advance.getOffsets()))
      offset = arith::AddIOp::create(b, loc, offset, delta);
    blocks[advance.getResult()] = std::move(shadow);
    return success();
  }
  if (auto load = dyn_cast<tk::LoadOp>(op))
    return isBlockPointer(load.getPtr().getType())
               ? checkBlockAccess(op, load.getPtr())
               : checkAccess(op, load.getPtr());
  if (auto store = dyn_cast<tk::StoreOp>(op))
    return isBlockPointer(store.getPtr().getType())
               ? checkBlockAccess(op, store.getPtr())
               : checkAccess(op, store.getPtr());
  if (auto rmw = dyn_cast<tk::AtomicRMWOp>(op))
    return checkAccess(op, rmw.getPtr());
  if (auto cas = dyn_cast<tk::AtomicCASOp>(op))
    return checkAccess(op, cas.getPtr());
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return visitFor(loop);
  // Pointers leaving an scf.if or scf.while are not followed: an access
  // through them is refused at the access.
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (failed(visitBlock(block)))
        return failure();
  return success();
}

LogicalResult BoundsCheckRewriter::followShapeOp(Operation *op) {
  std::optional<unsigned> argument;
  IRMapping mapping;
  for (Value operand : op->getOperands()) {
    if (!isPointerLike(operand.getType()))
      continue;
    auto it = pointers.find(operand);
    if (it == pointers.end())
      return success();
    if (argument && *argument != it->second.argument)
      return op->emitError("bounds checking: this op mixes pointers into '")
             << argumentName(*argument) << "' and '"
             << argumentName(it->second.argument)
             << "'; an access through its result could not name one buffer";
    argument = it->second.argument;
    mapping.map(operand, it->second.offsets);
  }
  if (!argument)
    return success();
  Operation *offsets = b.clone(*op, mapping);
  for (auto [result, shadow] :
       llvm::zip_equal(op->getResults(), offsets->getResults())) {
    shadow.setType(getOffsetType(result.getType()));
    pointers[result] = {*argument, shadow};
  }
  return success();
}

/// The uniform step of a loop's pointer walk: the scalar of
/// `p_next = tk.addptr p, tk.splat(step)` (or of a dense splat constant),
/// where `p` is the iteration argument and `p_next` what the loop yields
/// for it; null for any other update.
static Value getUniformStep(OpBuilder &b, scf::ForOp loop, unsigned index) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  auto add = yield.getOperand(index).getDefiningOp<tk::AddPtrOp>();
  if (!add || add.getPtr() != loop.getRegionIterArgs()[index])
    return {};
  Value offset = add.getOffset();
  if (auto splat = offset.getDefiningOp<tk::SplatOp>())
    return splat.getSrc();
  if (auto constant = offset.getDefiningOp<arith::ConstantOp>())
    if (auto dense = dyn_cast<SplatElementsAttr>(constant.getValue())) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(constant);
      return arith::ConstantOp::create(
          b, constant.getLoc(), cast<TypedAttr>(dense.getSplatValue<Attribute>()));
    }
  return {};
}

LogicalResult BoundsCheckRewriter::visitFor(scf::ForOp loop) {
  // The shadows of the carried pointers ride along as iteration arguments
  // of their own. A walk by a uniform step carries one i64 scalar, the
  // distance walked, beside the offsets it started from: the offsets of a
  // tile carried whole would be a tile of i64 that a lowering keeping loop
  // values in workgroup memory pays for in bytes. Any other update carries
  // the offsets; a block pointer carries its scalars.
  enum class Kind { Walk, Offsets, Block };
  struct Carried {
    unsigned index;    // the pointer's iteration argument
    unsigned argument; // the user argument it points into
    unsigned first;    // its shadow's first added iteration argument
    unsigned count;
    Kind kind;
    Value start; // Walk: the offsets the walk starts from
    Value step;  // Walk: the scalar step
  };
  SmallVector<Carried> carried;
  SmallVector<Value> inits;
  for (auto [index, init] : llvm::enumerate(loop.getInitArgs())) {
    unsigned first = loop.getNumRegionIterArgs() + inits.size();
    if (auto it = pointers.find(init); it != pointers.end()) {
      Value step = isa<RankedTensorType>(init.getType())
                       ? getUniformStep(b, loop, index)
                       : Value();
      if (step) {
        carried.push_back({unsigned(index), it->second.argument, first, 1,
                           Kind::Walk, it->second.offsets, step});
        b.setInsertionPoint(loop);
        inits.push_back(
            arith::ConstantIntOp::create(b, loop.getLoc(), b.getI64Type(), 0));
      } else {
        carried.push_back({unsigned(index), it->second.argument, first, 1,
                           Kind::Offsets, {}, {}});
        inits.push_back(it->second.offsets);
      }
    } else if (auto it = blocks.find(init); it != blocks.end()) {
      SmallVector<Value> values = it->second.flatten();
      carried.push_back({unsigned(index), it->second.argument, first,
                         unsigned(values.size()), Kind::Block, {}, {}});
      llvm::append_range(inits, values);
    }
  }
  // The offsets of a walk `walked` along from where it started.
  auto walkOffsets = [&](const Carried &c, Location loc, Value walked) {
    return arith::AddIOp::create(b, loc, c.start,
                                 splatLike(loc, walked, c.start.getType()));
  };
  if (!carried.empty()) {
    IRRewriter rewriter(b);
    rewriter.setInsertionPoint(loop);
    // Yielded as they came in for now; the body's shadows replace them
    // once the body is visited.
    FailureOr<LoopLikeOpInterface> grown = loop.replaceWithAdditionalYields(
        rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
        [](OpBuilder &, Location, ArrayRef<BlockArgument> added) {
          return SmallVector<Value>(added.begin(), added.end());
        });
    if (failed(grown))
      return loop.emitError("bounds checking: cannot carry the pointers' "
                            "offsets through this loop");
    loop = cast<scf::ForOp>(grown->getOperation());
    b.setInsertionPointToStart(loop.getBody());
    for (const Carried &c : carried) {
      ValueRange shadow = loop.getRegionIterArgs().slice(c.first, c.count);
      Value pointer = loop.getRegionIterArgs()[c.index];
      if (c.kind == Kind::Block)
        blocks[pointer] = BlockShadow::unflatten(c.argument, shadow);
      else if (c.kind == Kind::Walk)
        pointers[pointer] = {c.argument,
                             walkOffsets(c, loop.getLoc(), shadow.front())};
      else
        pointers[pointer] = {c.argument, shadow.front()};
    }
  }
  if (failed(visitBlock(*loop.getBody())))
    return failure();
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (const Carried &c : carried) {
    Value yielded = yield.getOperand(c.index);
    SmallVector<Value> values;
    std::optional<unsigned> argument;
    if (c.kind == Kind::Walk) {
      b.setInsertionPoint(yield);
      Value step = c.step;
      if (step.getType() != b.getI64Type())
        step = arith::ExtSIOp::create(b, yield.getLoc(), b.getI64Type(), step);
      argument = c.argument;
      values.push_back(arith::AddIOp::create(
          b, yield.getLoc(), loop.getRegionIterArgs()[c.first], step));
    } else if (c.kind == Kind::Block) {
      if (auto it = blocks.find(yielded); it != blocks.end()) {
        argument = it->second.argument;
        values = it->second.flatten();
      }
    } else if (auto it = pointers.find(yielded); it != pointers.end()) {
      argument = it->second.argument;
      values.push_back(it->second.offsets);
    }
    if (argument != c.argument)
      return yield.emitError("bounds checking: loop-carried value ")
             << c.index << " enters the loop pointing into '"
             << argumentName(c.argument)
             << "' but is yielded from pointers that do not";
    for (auto [k, value] : llvm::enumerate(values))
      yield->setOperand(c.first + k, value);
    ValueRange results = loop.getResults().slice(c.first, c.count);
    Value pointer = loop.getResult(c.index);
    if (c.kind == Kind::Block) {
      blocks[pointer] = BlockShadow::unflatten(c.argument, results);
    } else if (c.kind == Kind::Walk) {
      b.setInsertionPointAfter(loop);
      pointers[pointer] = {c.argument,
                           walkOffsets(c, loop.getLoc(), results.front())};
    } else {
      pointers[pointer] = {c.argument, results.front()};
    }
  }
  return success();
}

Value BoundsCheckRewriter::constantLike(Location loc, Type type,
                                        int64_t value) {
  auto tile = dyn_cast<RankedTensorType>(type);
  Type element = tile ? tile.getElementType() : type;
  auto scalar = IntegerAttr::get(element, value);
  if (!tile)
    return arith::ConstantOp::create(b, loc, scalar);
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(tile, scalar));
}

Value BoundsCheckRewriter::splatLike(Location loc, Value scalar, Type like) {
  auto tile = dyn_cast<RankedTensorType>(like);
  if (!tile)
    return scalar;
  return tk::SplatOp::create(
      b, loc, RankedTensorType::get(tile.getShape(), scalar.getType()), scalar);
}

Value BoundsCheckRewriter::inBounds(Location loc, unsigned argument,
                                    Value offsets) {
  Type type = offsets.getType();
  Value extent = splatLike(loc, extents[argument], type);
  Value aboveZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                          offsets, constantLike(loc, type, 0));
  Value belowEnd =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, offsets, extent);
  return arith::AndIOp::create(b, loc, aboveZero, belowEnd);
}

void BoundsCheckRewriter::record(Operation *op, unsigned argument,
                                 Value offsets, Value outside) {
  Location loc = op->getLoc();
  int64_t slot = int64_t(out.sites.size());
  out.sites.push_back(
      {op->getName().stripDialect().str(), describe(op->getLoc()), argument});
  Value slotPointer = tk::AddPtrOp::create(
      b, loc, recordArgument.getType(), recordArgument,
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), slot));
  Value slots = slotPointer;
  if (auto tile = dyn_cast<RankedTensorType>(offsets.getType()))
    slots = splatLike(
        loc, slotPointer,
        RankedTensorType::get(tile.getShape(), recordArgument.getType()));
  tk::StoreOp::create(b, loc, slots, offsets, outside);
}

LogicalResult BoundsCheckRewriter::checkAccess(Operation *op, Value ptr) {
  auto it = pointers.find(ptr);
  if (it == pointers.end())
    return op->emitError("bounds checking: the pointers of this ")
           << op->getName().stripDialect()
           << " do not come from one argument through tk.splat, "
              "tk.addptr, shape ops, arith.select and loops; its bounds "
              "cannot be checked";
  auto [argument, offsets] = it->second;
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  Value inside = inBounds(loc, argument, offsets);
  Value outside = arith::XOrIOp::create(b, loc, inside,
                                        constantLike(loc, inside.getType(), 1));
  auto withMask = [&](Value mask, Value bounds) {
    return mask ? Value(arith::AndIOp::create(b, loc, mask, bounds)) : bounds;
  };
  if (auto cas = dyn_cast<tk::AtomicCASOp>(op)) {
    // A compare-and-swap has no mask: it runs only when every element is
    // inside, and otherwise gives back `cmp`, so that a lock's spin ends.
    Value all = inside;
    while (auto tile = dyn_cast<RankedTensorType>(all.getType())) {
      Value wide = arith::ExtUIOp::create(
          b, loc, RankedTensorType::get(tile.getShape(), b.getI32Type()), all);
      auto reduce = tk::ReduceOp::create(b, loc, ValueRange{wide}, 0);
      Block &body = reduce.getCombineOp().front();
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&body);
      Value both = arith::AndIOp::create(b, loc, body.getArgument(0),
                                         body.getArgument(1));
      tk::ReduceReturnOp::create(b, loc, ValueRange{both});
      b.setInsertionPointAfter(reduce);
      Value reduced = reduce.getResult(0);
      all = arith::TruncIOp::create(
          b, loc,
          isa<RankedTensorType>(reduced.getType())
              ? Type(RankedTensorType::get(
                    cast<RankedTensorType>(reduced.getType()).getShape(),
                    b.getI1Type()))
              : Type(b.getI1Type()),
          reduced);
    }
    record(op, argument, offsets, outside);
    auto branch = scf::IfOp::create(b, loc, cas.getType(), all,
                                    /*withElseRegion=*/true);
    b.setInsertionPointToStart(&branch.getElseRegion().front());
    scf::YieldOp::create(b, loc, cas.getCmp());
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    Operation *moved = b.clone(*op);
    scf::YieldOp::create(b, loc, moved->getResult(0));
    cas.getResult().replaceAllUsesWith(branch.getResult(0));
    op->erase();
    return success();
  }
  if (auto load = dyn_cast<tk::LoadOp>(op)) {
    Value mask = load.getMask();
    load.getMaskMutable().assign(withMask(mask, inside));
    record(op, argument, offsets, withMask(mask, outside));
  } else if (auto store = dyn_cast<tk::StoreOp>(op)) {
    Value mask = store.getMask();
    store.getMaskMutable().assign(withMask(mask, inside));
    record(op, argument, offsets, withMask(mask, outside));
  } else if (auto rmw = dyn_cast<tk::AtomicRMWOp>(op)) {
    Value mask = rmw.getMask();
    rmw.getMaskMutable().assign(withMask(mask, inside));
    record(op, argument, offsets, withMask(mask, outside));
  }
  return success();
}

LogicalResult BoundsCheckRewriter::checkBlockAccess(Operation *op,
                                                    Value blockPtr) {
  auto it = blocks.find(blockPtr);
  if (it == blocks.end())
    return op->emitError("bounds checking: the block pointer of this ")
           << op->getName().stripDialect()
           << " does not come from tk.make_block_ptr of an argument through "
              "tk.advance and loops; its bounds cannot be checked";
  const BlockShadow &shadow = it->second;
  Location loc = op->getLoc();
  auto tile = cast<RankedTensorType>(
      cast<tk::PtrType>(blockPtr.getType()).getPointeeType());
  ArrayRef<int64_t> shape = tile.getShape();
  auto i64Tile = RankedTensorType::get(shape, b.getI64Type());
  auto i1Tile = RankedTensorType::get(shape, b.getI1Type());
  ArrayRef<int32_t> checked = isa<tk::LoadOp>(op)
                                  ? cast<tk::LoadOp>(op).getBoundaryCheck()
                                  : cast<tk::StoreOp>(op).getBoundaryCheck();
  // Each element's offset from the argument, and whether the boundary
  // checks keep it.
  Value offsets =
      arith::AddIOp::create(b, loc, splatLike(loc, shadow.baseOffset, i64Tile),
                            tk::buildBlockElementOffsets(
                                b, loc, shape, shadow.offsets, shadow.strides));
  Value inShape = tk::buildBlockInBounds(b, loc, shape, shadow.offsets,
                                         shadow.shape, checked);
  Value inside = inBounds(loc, shadow.argument, offsets);
  Value outside =
      arith::XOrIOp::create(b, loc, inside, constantLike(loc, i1Tile, 1));
  Value mask = inside;
  if (inShape) {
    mask = arith::AndIOp::create(b, loc, inShape, inside);
    outside = arith::AndIOp::create(b, loc, inShape, outside);
  }
  // The gather or scatter of the same elements, from the argument itself.
  Value base = func.getBody().front().getArgument(shadow.argument);
  auto pointerTile = RankedTensorType::get(shape, base.getType());
  Value pointers = tk::AddPtrOp::create(
      b, loc, pointerTile, splatLike(loc, base, pointerTile), offsets);
  if (auto load = dyn_cast<tk::LoadOp>(op)) {
    Value other = tk::buildBlockPadding(b, loc, tile, load.getPadding());
    auto gather = tk::LoadOp::create(b, loc, pointers, mask, other);
    load.getResult().replaceAllUsesWith(gather.getResult());
  } else {
    auto store = cast<tk::StoreOp>(op);
    tk::StoreOp::create(b, loc, pointers, store.getValue(), mask);
  }
  record(op, shadow.argument, offsets, outside);
  op->erase();
  return success();
}

LogicalResult tk::addBoundsChecks(FuncOp func, BoundsChecks &out) {
  out = BoundsChecks();
  if (func.getBody().empty())
    return func.emitError("bounds checking: the kernel has no body");
  return BoundsCheckRewriter(func, out).run();
}
