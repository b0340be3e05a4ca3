//===- TilePlacement.cpp - where each tile of a kernel lives ----*- C++ -*-===//
//
// The thread layouts of a kernel's tiles (TilePlacement.h): the tiles that
// get storage at their definition, the element-wise chains that are
// recomputed instead, and on a GPU the tiles kept in registers: by runs of
// a flat tile, in a held product's accumulator layout, or one value per
// row; and the attributes that record them.
//
//===----------------------------------------------------------------------===//

#include "TilePlacement.h"
#include "tk/core/Layout.h"
#include "tk/core/WarpDialect.h"

#include "mlir/IR/Dominance.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace mlir::tk_to_loops {

//===----------------------------------------------------------------------===//
// Analysis: which tiles get a buffer
//===----------------------------------------------------------------------===//

/// A tile is cheap when it is computed from scalars with integer arithmetic
/// and shape ops only: recomputing it anywhere costs a few instructions and
/// reads no memory, so it is never stored.
bool TilePlacement::isCheap(Value value) {
  auto it = cheap.find(value);
  if (it != cheap.end())
    return it->second;
  bool result = false;
  Operation *op = value.getDefiningOp();
  if (op && isElementwiseLike(op) && !isa<tk::LoadOp, tk::FpToFpOp>(op) &&
      !isa_and_present<math::MathDialect>(op->getDialect())) {
    if (isa<tk::SplatOp, tk::MakeRangeOp, arith::ConstantOp>(op)) {
      result = true;
    } else {
      Type elem = getElementTypeOrSelf(value.getType());
      bool integerLike = isa<IntegerType, tk::PtrType>(elem);
      result =
          integerLike ||
          isa<tk::BroadcastOp, tk::ExpandDimsOp, tk::ReshapeOp, tk::TransOp>(
              op);
      for (Value operand : op->getOperands())
        if (isTile(operand.getType()))
          result = result && isCheap(operand);
    }
  }
  cheap[value] = result;
  return result;
}

/// True when shuffles can move the values `reduce` combines: 32-bit ones.
static bool shufflesValues(tk::ReduceOp reduce) {
  return llvm::all_of(reduce.getSrcs(), [](Value src) {
    Type type = getElementTypeOrSelf(src.getType());
    return type.isIntOrFloat() && type.getIntOrFloatBitWidth() == 32;
  });
}

void TilePlacement::analyzeRegion(Region &region) {
  for (Block &block : region)
    for (Operation &op : llvm::reverse(block.getOperations()))
      analyzeOp(&op);
}

void TilePlacement::analyzeOp(Operation *op) {
  for (Region &region : op->getRegions())
    analyzeRegion(region);
  if (!isElementwiseLike(op))
    return;
  Value value = op->getResult(0);
  if (isCheap(value))
    return;
  llvm::SmallPtrSet<Operation *, 4> users;
  for (Operation *user : value.getUsers())
    users.insert(user);
  if (users.empty())
    return;
  bool store = users.size() > 1;
  for (Operation *user : users) {
    // Recomputing inside a loop body or branch would repeat the work (and
    // any load) on every trip; replicating through a broadcast would too.
    if (user->getBlock() != op->getBlock() || isa<tk::BroadcastOp>(user))
      store = true;
  }
  bool readBeforeLoop = store && laidOutBeforeLoop(op);
  if (readBeforeLoop)
    store = false;
  // An operand several held products of this block read alike (attention's
  // k^T and v in a trip over several row groups) goes to the unit's layout
  // (or its prefetch ring) instead of a row-major buffer.
  if (store &&
      llvm::all_of(users,
                   [&](Operation *user) {
                     return user->getBlock() == op->getBlock();
                   }) &&
      (heldOperandLayout(value, 0) || heldOperandLayout(value, 1)))
    store = false;
  if (!store && !readBeforeLoop && isa<tk::LoadOp>(op)) {
    // Follow the single-user chain to the op that will evaluate the load.
    // A write on the way would observe memory in another order than the
    // program's, so the load is done here instead. The evaluator itself may
    // be a store when fusing is allowed: every lane still loads before it
    // stores.
    Operation *evaluator = *users.begin();
    while (isElementwiseLike(evaluator) && !materialized.count(evaluator) &&
           !evaluator->getResult(0).use_empty())
      evaluator = *evaluator->getResult(0).getUsers().begin();
    bool fusesIntoStore = isa<tk::StoreOp>(evaluator) && fuseLoadsIntoStores;
    for (Operation *it = op->getNextNode(); it; it = it->getNextNode()) {
      if (it == evaluator && fusesIntoStore)
        break;
      if (mayWriteMemory(it)) {
        store = true;
        break;
      }
      if (it == evaluator)
        break;
    }
  }
  if (store)
    materialized.insert(op);
}

bool TilePlacement::laidOutBeforeLoop(Operation *op) {
  auto load = dyn_cast<tk::LoadOp>(op);
  if (!load || !matrixUnit || !onThreads())
    return false;
  // Read by held products of loops of this block (a main loop and its
  // tail), all as the same operand of products laid out alike: the first
  // loop lays it out, the others read that buffer.
  Value tile = load.getResult();
  std::optional<tk::MatrixUnit::HeldProduct> layout =
      heldOperandLayout(tile, 0);
  if (!layout)
    layout = heldOperandLayout(tile, 1);
  if (!layout || !matrixUnit->laysOutOperands(*layout))
    return false;
  scf::ForOp loop;
  for (Operation *user : tile.getUsers()) {
    auto parent = dyn_cast<scf::ForOp>(user->getParentOp());
    if (!parent || parent->getBlock() != op->getBlock())
      return false;
    if (!loop || parent->isBeforeInBlock(loop))
      loop = parent;
  }
  if (!loop)
    return false;
  // It is read where the first loop starts: nothing on the way may write
  // memory.
  for (Operation *it = op->getNextNode(); it && it != loop.getOperation();
       it = it->getNextNode())
    if (mayWriteMemory(it))
      return false;
  return true;
}

/// On a GPU a stored tile costs workgroup memory, which bounds how many
/// programs share a multiprocessor, and a pass through it with barriers;
/// arithmetic is cheap. So an arithmetic tile (no load, no fp8 conversion)
/// stored only because it has several users in its own block is recomputed
/// by each user instead, provided every tile it reads is itself stored,
/// cheap, or recomputable the same way: recomputing then reads no global
/// memory and cannot observe a write out of order. (softmax: exp(x - max)
/// is read by the sum and by the division; x stays stored.)
void TilePlacement::preferRecomputing(Region &region) {
  // A tile with storage of its own in this block: a stored element-wise
  // tile, or a dot's, reduction's or scan's result (always stored).
  auto hasStorage = [&](Value tile) {
    // Row-resident tiles and element-wise tiles of them are read from
    // registers at their rows.
    SmallVector<tk::DotOp> rowLayouts;
    if (readableByRows(tile, rowLayouts) && !rowLayouts.empty())
      return true;
    Operation *def = tile.getDefiningOp();
    if (!def)
      return false; // a loop-carried tile: its buffer changes at yields
    return materialized.count(def) ||
           isa<tk::DotOp, tk::ReduceOp, tk::ScanOp>(def);
  };
  auto readyToRead = [&](Value tile) {
    return !isTile(tile.getType()) || isCheap(tile) || hasStorage(tile);
  };
  for (Block &block : region) {
    for (Operation &op : block) {
      for (Region &nested : op.getRegions())
        preferRecomputing(nested);
      if (!materialized.count(&op) || !isElementwiseLike(&op) ||
          isa<tk::LoadOp, tk::FpToFpOp>(&op) || residentLayout.count(&op) ||
          rowLayout.count(op.getResult(0)))
        continue;
      Value value = op.getResult(0);
      // Recomputing through a broadcast repeats the op's work for every
      // copy, unless the op only moves the index over stored elements
      // (FlashAttention's m[:, None]).
      bool movesIndexOnly =
          isa<tk::ExpandDimsOp, tk::ReshapeOp, tk::TransOp, tk::BroadcastOp>(
              op) &&
          llvm::all_of(op.getOperands(), readyToRead);
      bool sameBlockUsers = llvm::all_of(value.getUsers(), [&](Operation *u) {
        return u->getBlock() == op.getBlock() &&
               (movesIndexOnly || !isa<tk::BroadcastOp>(u));
      });
      bool operandsReady = llvm::all_of(op.getOperands(), [&](Value operand) {
        if (readyToRead(operand))
          return true;
        Operation *def = operand.getDefiningOp();
        return def && isElementwiseLike(def) &&
               !isa<tk::LoadOp, tk::FpToFpOp>(def) &&
               llvm::all_of(def->getOperands(), readyToRead);
      });
      if (sameBlockUsers && operandsReady)
        materialized.erase(&op);
    }
  }
}

/// A stored tile whose every reader visits it at the indices its own thread
/// owns (element-wise chains into stores, whole-tile reductions, other such
/// tiles: softmax's row and its exponentials) needs no workgroup memory:
/// each thread keeps its elements in registers, as Triton's blocked layouts
/// do. That saves the pass through memory, its barriers and the shared
/// memory that limits occupancy. The same holds for a product the matrix
/// unit computes in registers when its readers visit it at the registers'
/// positions (FlashAttention's scores: row maxima and sums, exponentials,
/// the next product's operand), and for stored tiles computed from it,
/// which share its layout. Decided as a fixpoint: a candidate stays while
/// every resident tile reading it stays, in the same layout.
void TilePlacement::chooseRegisterResident(Region &region) {
  region.walk([&](Operation *op) {
    if (auto dot = dyn_cast<tk::DotOp>(op)) {
      if (holdsForReaders(dot))
        residentLayout[op] = op;
      return;
    }
    if (!materialized.count(op) || !isElementwiseLike(op))
      return;
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    if (!type.getElementType().isIntOrFloat())
      return;
    llvm::SmallPtrSet<Operation *, 2> layouts;
    for (Value operand : op->getOperands())
      collectLayouts(operand, layouts);
    layouts.erase(nullptr);
    if (layouts.size() == 1)
      residentLayout[op] = *layouts.begin();
    else if (layouts.empty() && ownedRun(type.getShape()))
      residentLayout[op] = nullptr;
  });
  for (bool changed = true; changed;) {
    changed = false;
    for (auto [op, layout] : llvm::to_vector(residentLayout)) {
      if ((!layout || residentLayout.count(layout)) &&
          readByOwners(op->getResult(0), op->getBlock(), layout))
        continue;
      residentLayout.erase(op);
      changed = true;
    }
  }
}

bool TilePlacement::holdsForReaders(tk::DotOp dot) {
  if (!matrixUnit || !onThreads())
    return false;
  std::optional<tk::MatrixUnit::HeldProduct> product = heldProduct(dot);
  return product && matrixUnit->registerRows(*product) &&
         cast<RankedTensorType>(dot.getType()).getElementType() ==
             product->accumulator;
}

void TilePlacement::collectLayouts(Value value,
                                   llvm::SmallPtrSetImpl<Operation *> &out) {
  Operation *def = value.getDefiningOp();
  if (!def || !isTile(value.getType()))
    return;
  if (auto it = residentLayout.find(def); it != residentLayout.end()) {
    out.insert(it->second);
    return;
  }
  if (isElementwiseLike(def) && !materialized.count(def))
    for (Value operand : def->getOperands())
      collectLayouts(operand, out);
}

bool TilePlacement::readByOwners(Value tile, Block *block, Operation *layout) {
  for (OpOperand &use : tile.getUses()) {
    Operation *user = use.getOwner();
    if (user->getBlock() != block)
      return false;
    if (isa<tk::StoreOp>(user))
      continue;
    if (auto dot = dyn_cast<tk::DotOp>(user)) {
      // Laid out for the unit (or stored) by its owners; an accumulator is
      // read at the unit's positions instead.
      if (use.get() == dot.getAcc())
        return false;
      continue;
    }
    if (auto reduce = dyn_cast<tk::ReduceOp>(user)) {
      bool words = shufflesValues(reduce);
      int64_t rank = cast<RankedTensorType>(tile.getType()).getRank();
      bool shapeFits = layout ? rank == 2 && reduce.getAxis() == 1 : rank == 1;
      if (reduce.getSrcs()[0].getType() != tile.getType() || !shapeFits ||
          !words || numThreads % warpSize != 0)
        return false;
      continue;
    }
    if (!keepsIndex(user))
      return false;
    if (materialized.count(user)) {
      auto it = residentLayout.find(user);
      if (it == residentLayout.end() || it->second != layout)
        return false;
      continue;
    }
    if (!readByOwners(user->getResult(0), block, layout))
      return false;
  }
  return true;
}

int64_t TilePlacement::ownedRun(ArrayRef<int64_t> shape) const {
  int64_t total = 1;
  for (int64_t size : shape)
    total *= size;
  if (!onThreads() || shape.empty() || total % numThreads != 0 ||
      total / numThreads > kMaxOwnedElements)
    return 0;
  return runWidth(shape, total, numThreads, /*maxRun=*/4);
}

/// FlashAttention's running max m and sum l are 1-D tiles of one value per
/// row of the scores, which the matrix unit holds in registers: the row
/// maxima and sums are combined there (lowerRowReduceOfHeld), and m and l
/// are read back at the scores' and the output's registers (`m[:, None]`,
/// `l[:, None]`). Such a tile stays in the registers of the threads that
/// hold its rows, one register per row a thread holds, instead of workgroup
/// memory with a barrier on every write: the row reductions of a held
/// product, loop-carried tiles updated from them, and element-wise tiles of
/// those, provided every read is at a row of the same offsets (readAtRows).
/// Decided optimistically, then pruned to a fixpoint.
void TilePlacement::chooseRowResident(Region &region) {
  if (!matrixUnit || !onThreads())
    return;
  auto rowShaped = [](Type type) {
    auto tile = dyn_cast<RankedTensorType>(type);
    return tile && tile.getRank() == 1 && tile.getElementType().isIntOrFloat();
  };
  // Every lane holding a row keeps its own copy of the row's value: they
  // must agree bit for bit. The butterflies of a row reduction combine the
  // lanes' parts in a different order in each lane, which a commutative
  // combiner (max, sum) makes the same.
  auto commutes = [](tk::ReduceOp reduce) {
    Block &block = reduce.getCombineOp().front();
    if (!llvm::hasSingleElement(block.without_terminator()))
      return false;
    Operation &op = block.front();
    return op.hasTrait<OpTrait::IsCommutative>() && op.getNumOperands() == 2 &&
           llvm::is_contained(op.getOperands(), block.getArgument(0)) &&
           llvm::is_contained(op.getOperands(), block.getArgument(1)) &&
           block.getTerminator()->getOperands() == ValueRange(op.getResults());
  };
  // Candidates: row reductions (their layout known), loop-carried 1-D
  // tiles and stored element-wise 1-D tiles (layouts from what they read).
  // They are visited in program order below, not rowLayout's hash order,
  // so that a tile reading rows of two products alike takes the same one
  // in every compile.
  SmallVector<Value> candidates;
  auto candidate = [&](Value tile, tk::DotOp dot) {
    rowLayout[tile] = dot;
    candidates.push_back(tile);
  };
  region.walk([&](Operation *op) {
    if (auto reduce = dyn_cast<tk::ReduceOp>(op)) {
      tk::DotOp dot = heldRowsOf(reduce);
      if (dot && commutes(reduce))
        candidate(reduce.getResult(0), dot);
    } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
      for (auto [arg, result] :
           llvm::zip_equal(loop.getRegionIterArgs(), loop.getResults()))
        if (rowShaped(arg.getType())) {
          candidate(arg, tk::DotOp());
          candidate(result, tk::DotOp());
        }
    } else if (materialized.count(op) && keepsIndex(op) &&
               !residentLayout.count(op) &&
               rowShaped(op->getResult(0).getType())) {
      candidate(op->getResult(0), tk::DotOp());
    }
  });
  // The candidates still kept, with their layouts, in program order.
  auto kept = [&] {
    SmallVector<std::pair<Value, tk::DotOp>> tiles;
    for (Value tile : candidates)
      if (auto it = rowLayout.find(tile); it != rowLayout.end())
        tiles.emplace_back(tile, it->second);
    return tiles;
  };
  // What a candidate reads: a loop-carried tile its first and next value.
  auto sources = [&](Value tile) -> SmallVector<Value> {
    if (auto arg = dyn_cast<BlockArgument>(tile)) {
      auto loop = cast<scf::ForOp>(arg.getOwner()->getParentOp());
      return {loop.getTiedLoopInit(arg)->get(),
              loop.getTiedLoopYieldedValue(arg)->get()};
    }
    if (auto result = dyn_cast<OpResult>(tile))
      if (auto loop = dyn_cast<scf::ForOp>(result.getOwner()))
        return {loop.getTiedLoopRegionIterArg(result)};
    SmallVector<Value> operands;
    if (!isa<tk::ReduceOp>(tile.getDefiningOp()))
      for (Value operand : tile.getDefiningOp()->getOperands())
        if (isTile(operand.getType()))
          operands.push_back(operand);
    return operands;
  };
  // Layouts flow from the reductions to what reads them.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto [tile, dot] : kept()) {
      if (dot)
        continue;
      SmallVector<tk::DotOp> layouts;
      for (Value source : sources(tile))
        (void)readableByRows(source, layouts);
      if (!layouts.empty()) {
        rowLayout[tile] = layouts.front();
        changed = true;
      }
    }
  }
  // A candidate stays while what it reads is readable at its rows, in
  // layouts of its own offsets, and every read of it is at such a row.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto [tile, dot] : kept()) {
      bool keep = static_cast<bool>(dot);
      SmallVector<int64_t> offsets;
      if (keep) {
        offsets = rowOffsets(*heldProduct(dot));
        SmallVector<tk::DotOp> layouts;
        for (Value source : sources(tile))
          keep = keep && readableByRows(source, layouts);
        for (tk::DotOp layout : layouts)
          keep = keep && rowOffsets(*heldProduct(layout)) == offsets;
        keep = keep && readAtRows(tile, offsets);
      }
      if (keep)
        continue;
      rowLayout.erase(tile);
      changed = true;
    }
    // A loop-carried tile and the loop's result go together.
    for (auto [tile, dot] : kept()) {
      auto partner = [&]() -> Value {
        if (auto arg = dyn_cast<BlockArgument>(tile))
          if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
            return loop.getTiedLoopResult(arg);
        if (auto result = dyn_cast<OpResult>(tile))
          if (auto loop = dyn_cast<scf::ForOp>(result.getOwner()))
            return loop.getTiedLoopRegionIterArg(result);
        return {};
      }();
      if (partner && !rowLayout.count(partner)) {
        rowLayout.erase(tile);
        changed = true;
      }
    }
  }
}

tk::DotOp TilePlacement::heldRowsOf(tk::ReduceOp reduce) {
  auto srcType = cast<RankedTensorType>(reduce.getSrcs()[0].getType());
  if (srcType.getRank() != 2 || reduce.getAxis() != 1 ||
      reduce.getNumResults() != 1)
    return {};
  llvm::SmallPtrSet<Operation *, 2> layouts;
  for (Value src : reduce.getSrcs())
    collectLayouts(src, layouts);
  layouts.erase(nullptr);
  auto dot =
      layouts.size() == 1 ? dyn_cast<tk::DotOp>(*layouts.begin()) : tk::DotOp();
  std::optional<tk::MatrixUnit::HeldProduct> product =
      dot ? heldProduct(dot) : std::nullopt;
  return product && matrixUnit->registerRows(*product) ? dot : tk::DotOp();
}

SmallVector<int64_t>
TilePlacement::rowOffsets(const tk::MatrixUnit::HeldProduct &product) {
  std::optional<tk::MatrixUnit::RegisterRows> rows =
      matrixUnit->registerRows(product);
  if (!rows)
    return {};
  SmallVector<int64_t> offsets(rows->rowOfRegister);
  llvm::sort(offsets);
  offsets.erase(llvm::unique(offsets), offsets.end());
  return offsets;
}

bool TilePlacement::readableByRows(Value tile,
                                   SmallVectorImpl<tk::DotOp> &layouts) {
  if (auto it = rowLayout.find(tile); it != rowLayout.end()) {
    if (it->second)
      layouts.push_back(it->second);
    return true;
  }
  if (isCheap(tile))
    return true;
  Operation *def = tile.getDefiningOp();
  if (!def || materialized.count(def) || !keepsIndex(def))
    return false;
  for (Value operand : def->getOperands())
    if (isTile(operand.getType()) && !readableByRows(operand, layouts))
      return false;
  return true;
}

bool TilePlacement::readAtRows(Value tile, ArrayRef<int64_t> offsets) {
  for (OpOperand &use : tile.getUses()) {
    Operation *user = use.getOwner();
    if (auto yield = dyn_cast<scf::YieldOp>(user)) {
      auto loop = dyn_cast<scf::ForOp>(yield->getParentOp());
      if (!loop ||
          !rowLayout.count(loop.getRegionIterArgs()[use.getOperandNumber()]))
        return false;
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(user)) {
      // The first value of a later loop's row-resident tile.
      BlockArgument arg = loop.getTiedLoopRegionIterArg(&use);
      if (!arg || !rowLayout.count(arg))
        return false;
      continue;
    }
    if (auto expand = dyn_cast<tk::ExpandDimsOp>(user)) {
      // tile[:, None], recomputed where it is read (preferRecomputing):
      // every reader in its block.
      bool sameBlock = llvm::all_of(expand->getUsers(), [&](Operation *u) {
        return u->getBlock() == expand->getBlock();
      });
      if (expand.getAxis() != 1 || !sameBlock ||
          !readInFragments(expand.getResult(), offsets))
        return false;
      continue;
    }
    if (!keepsIndex(user))
      return false;
    if (rowLayout.count(user->getResult(0)))
      continue;
    if (materialized.count(user) || !readAtRows(user->getResult(0), offsets))
      return false;
  }
  return true;
}

bool TilePlacement::readInFragments(Value tile, ArrayRef<int64_t> offsets) {
  for (OpOperand &use : tile.getUses()) {
    Operation *user = use.getOwner();
    // The product whose registers are visited where `user` reads `tile`.
    std::optional<tk::MatrixUnit::HeldProduct> visited;
    if (auto dot = dyn_cast<tk::DotOp>(user)) {
      // The rescale of an accumulator the loop holds (acc * alpha[:, None])
      // runs register by register.
      auto loop = dyn_cast<scf::ForOp>(dot->getParentOp());
      bool rescaled =
          loop && use.get() == dot.getAcc() &&
          llvm::any_of(llvm::seq(loop.getNumRegionIterArgs()), [&](unsigned i) {
            return heldAccumulatorDot(loop, i) == dot;
          });
      if (rescaled)
        visited = heldProduct(dot);
    } else if (auto reduce = dyn_cast<tk::ReduceOp>(user)) {
      if (tk::DotOp dot = heldRowsOf(reduce))
        visited = heldProduct(dot);
    } else if (auto store = dyn_cast<tk::StoreOp>(user)) {
      // Stored from a held loop result's registers, or by the owners of
      // the one resident product it is computed from (lowerStore).
      llvm::SmallPtrSet<Operation *, 2> layouts;
      collectLayouts(store.getValue(), layouts);
      layouts.erase(nullptr);
      tk::DotOp dot = heldStoreDot(store.getValue());
      if (!dot && layouts.size() == 1)
        dot = dyn_cast<tk::DotOp>(*layouts.begin());
      if (use.get() == store.getValue() && dot)
        visited = heldProduct(dot);
    } else if (auto it = residentLayout.find(user);
               it != residentLayout.end()) {
      if (auto dot = dyn_cast_if_present<tk::DotOp>(it->second))
        visited = heldProduct(dot);
    } else if (isElementwiseLike(user) && !materialized.count(user)) {
      if (!readInFragments(user->getResult(0), offsets))
        return false;
      continue;
    }
    if (!visited)
      return false;
    std::optional<tk::MatrixUnit::RegisterRows> rows =
        matrixUnit->registerRows(*visited);
    if (!rows || !llvm::all_of(rows->rowOfRegister, [&](int64_t offset) {
          return llvm::is_contained(offsets, offset);
        }))
      return false;
  }
  return true;
}

tk::DotOp TilePlacement::heldStoreDot(Value value) {
  // The loop result lowerFor will keep in registers for stores (heldResults).
  auto heldDotOf = [&](Value v) -> tk::DotOp {
    auto result = dyn_cast<OpResult>(v);
    auto loop = result ? dyn_cast<scf::ForOp>(result.getOwner()) : nullptr;
    tk::DotOp dot =
        loop ? heldAccumulatorDot(loop, result.getResultNumber()) : nullptr;
    return dot && onlyStoredFromRegisters(v, *heldProduct(dot)) ? dot
                                                                : tk::DotOp();
  };
  Value root = findThroughIndexKeeping(
      value, [&](Value v) { return static_cast<bool>(heldDotOf(v)); });
  return root ? heldDotOf(root) : tk::DotOp();
}

//===----------------------------------------------------------------------===//
// Queries the lowering shares
//===----------------------------------------------------------------------===//

Value TilePlacement::pointerWalkStep(scf::ForOp loop, unsigned i) {
  Value arg = loop.getRegionIterArgs()[i];
  Value init = loop.getInitArgs()[i];
  if (!isTile(arg.getType()) ||
      !isa<tk::PtrType>(getElementTypeOrSelf(arg.getType())))
    return {};
  auto advance = loop.getYieldedValues()[i].getDefiningOp<tk::AddPtrOp>();
  if (!advance || advance.getPtr() != arg ||
      advance->getBlock() != loop.getBody())
    return {};
  auto splat = advance.getOffset().getDefiningOp<tk::SplatOp>();
  if (!splat)
    return {};
  // The start is read on every trip: it must not be a load or anything
  // else that would read memory again, nor a buffer the loop rewrites. It
  // is another loop's walk (an enclosing loop's argument, an earlier
  // loop's result), a tile with storage (a loop-carried tile, a stored
  // one, a dot's, reduction's or scan's result), or cheap.
  auto walkOfLoop = [&](Operation *owner, unsigned j) {
    auto other = dyn_cast_if_present<scf::ForOp>(owner);
    return other && j < other.getNumRegionIterArgs() &&
           pointerWalkStep(other, j);
  };
  bool walked = false, stored = false;
  if (auto start = dyn_cast<BlockArgument>(init)) {
    Operation *owner = start.getOwner()->getParentOp();
    if (auto outer = dyn_cast_if_present<scf::ForOp>(owner);
        outer && start != outer.getInductionVar()) {
      walked = walkOfLoop(outer, start.getArgNumber() - 1);
      stored = !walked;
    }
  } else if (Operation *def = init.getDefiningOp(); isa<scf::ForOp>(def)) {
    walked = walkOfLoop(def, cast<OpResult>(init).getResultNumber());
    stored = !walked;
  } else {
    auto constant = dyn_cast<arith::ConstantOp>(def);
    stored = materialized.count(def) ||
             isa<tk::DotOp, tk::ReduceOp, tk::ScanOp>(def) ||
             (constant && !isa<SplatElementsAttr>(constant.getValue()));
  }
  bool steadyStart =
      walked ||
      (stored &&
       !llvm::is_contained(loop.getInitArgs().drop_front(i + 1), init)) ||
      isCheap(init);
  return steadyStart ? splat.getSrc() : Value();
}

bool TilePlacement::canPrefetch(scf::ForOp loop, tk::LoadOp load,
                                ArrayRef<Value> walkSteps, int64_t &runBytes) {
  Value tile = load.getResult();
  auto type = dyn_cast<RankedTensorType>(tile.getType());
  if (!type || load->getBlock() != loop.getBody() ||
      !(tile.hasOneUse() || heldOperandLayout(tile, 1) ||
        heldOperandLayout(tile, 0)) ||
      isBlockPtr(load.getPtr().getType()) || load.getIsVolatile() ||
      !type.getElementType().isIntOrFloat())
    return false;
  // A run: the widest copy the unit takes that divides the inner dimension.
  int64_t elementBytes = type.getElementType().getIntOrFloatBitWidth() / 8;
  if (elementBytes == 0)
    return false;
  runBytes = 0;
  for (int64_t bytes : {16, 8, 4})
    if (asyncCopy->supportsBytes(bytes) && bytes % elementBytes == 0 &&
        type.getShape().back() % (bytes / elementBytes) == 0) {
      runBytes = bytes;
      break;
    }
  if (runBytes == 0)
    return false;
  // Moving a load ahead of trips that write memory could read stale data.
  bool writes = false;
  for (Operation &op : loop.getBody()->without_terminator())
    writes = writes || mayWriteMemory(&op);
  if (writes)
    return false;
  // Everything the address, mask and other value read inside the loop.
  SmallVector<Value> worklist(load->getOperands());
  llvm::DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second || loop.isDefinedOutsideOfLoop(value))
      continue;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() != loop.getBody())
        return false;
      if (arg == loop.getInductionVar())
        continue;
      unsigned i = arg.getArgNumber() - 1;
      if (!walkSteps[i] || !loop.isDefinedOutsideOfLoop(walkSteps[i]))
        return false;
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (def->getBlock() != loop.getBody() || def->getNumRegions() != 0)
      return false;
    bool elementwise = isElementwiseLike(def) && !isa<tk::LoadOp>(def);
    bool pureScalar = !isTile(value.getType()) && isMemoryEffectFree(def) &&
                      isa_and_present<arith::ArithDialect>(def->getDialect());
    if (!elementwise && !pureScalar)
      return false;
    llvm::append_range(worklist, def->getOperands());
  }
  return true;
}

void TilePlacement::placeRings() {
  if (!onThreads() || !matrixUnit || !asyncCopy || numStages <= 1)
    return;
  source.walk([&](scf::ForOp loop) {
    unsigned numArgs = loop.getNumRegionIterArgs();
    SmallVector<Value> walkSteps(numArgs);
    SmallVector<tk::DotOp> heldDots(numArgs);
    for (unsigned i = 0; i < numArgs; ++i) {
      if (isBlockPtr(loop.getInitArgs()[i].getType()))
        continue;
      if (!(walkSteps[i] = pointerWalkStep(loop, i)) &&
          !rowLayout.count(loop.getRegionIterArgs()[i]))
        heldDots[i] = heldAccumulatorDot(loop, i);
    }
    if (llvm::all_of(heldDots, [](tk::DotOp dot) { return !dot; }))
      return;
    // The carried products' operands, and those of the other products the
    // unit holds in the body (attention's scores: q k^T).
    for (Operation &op : loop.getBody()->without_terminator()) {
      auto dot = dyn_cast<tk::DotOp>(op);
      if (!dot || !(llvm::is_contained(heldDots, dot) || heldProduct(dot)))
        continue;
      std::optional<tk::MatrixUnit::HeldProduct> product = heldProduct(dot);
      bool laidOut = matrixUnit->laysOutOperands(*product);
      for (unsigned index : {0u, 1u}) {
        Value operand = operandTile(dot, index);
        auto load = operand.getDefiningOp<tk::LoadOp>();
        // A transposed load goes into the unit's layout at swapped
        // positions (the unit keeps runs of the source's rows together).
        if (auto trans = operand.getDefiningOp<tk::TransOp>();
            trans && laidOut &&
            (trans->hasOneUse() ||
             heldOperandLayout(trans.getResult(), index)) &&
            !materialized.count(trans))
          load = trans.getSrc().getDefiningOp<tk::LoadOp>();
        int64_t runBytes = 0;
        // A load several products read is copied once.
        if (load && !rings.count(load) &&
            canPrefetch(loop, load, walkSteps, runBytes))
          rings[load] = Ring{dot, index};
      }
    }
  });
}

tk::DotOp TilePlacement::heldAccumulatorDot(scf::ForOp loop, unsigned i) {
  if (parallelDepth > 0)
    return {};
  return heldIterArgs.lookup(loop.getRegionIterArgs()[i]);
}

tk::DotOp TilePlacement::chooseHeldAccumulator(scf::ForOp loop, unsigned i) {
  if (!onThreads() || !matrixUnit)
    return {};
  Value arg = loop.getRegionIterArgs()[i];
  if (!isTile(arg.getType()) || !arg.hasOneUse())
    return {};
  // The accumulator may pass through element-wise ops of its own shape and
  // type on its way to the dot (FlashAttention's rescale, acc * alpha):
  // each register is then rescaled in place.
  Value acc = arg;
  while (acc.hasOneUse()) {
    Operation *user = *acc.getUsers().begin();
    if (isa<tk::DotOp>(user) || !isElementwiseLike(user) ||
        user->getBlock() != loop.getBody() ||
        user->getResult(0).getType() != arg.getType() ||
        llvm::count(user->getOperands(), acc) != 1)
      break;
    acc = user->getResult(0);
  }
  if (!acc.hasOneUse())
    return {};
  auto dot = dyn_cast<tk::DotOp>(*acc.getUsers().begin());
  if (!dot || dot.getAcc() != acc || dot->getBlock() != loop.getBody() ||
      !dot.getResult().hasOneUse() ||
      loop.getYieldedValues()[i] != dot.getResult())
    return {};
  // An accumulator narrower than the unit's is rounded after every trip,
  // which registers would skip.
  std::optional<tk::MatrixUnit::HeldProduct> product = heldProduct(dot);
  if (!product || getElementTypeOrSelf(dot.getType()) != product->accumulator)
    return {};
  return dot;
}

bool TilePlacement::onlyStoredFromRegisters(
    Value tile, const tk::MatrixUnit::HeldProduct &product) {
  if (tile.use_empty())
    return false;
  for (OpOperand &use : tile.getUses()) {
    Operation *user = use.getOwner();
    if (auto loop = dyn_cast<scf::ForOp>(user)) {
      BlockArgument arg = loop.getTiedLoopRegionIterArg(&use);
      tk::DotOp dot =
          arg ? heldAccumulatorDot(loop, arg.getArgNumber() -
                                             loop.getNumInductionVars())
              : tk::DotOp();
      std::optional<tk::MatrixUnit::HeldProduct> next =
          dot ? heldProduct(dot) : std::nullopt;
      if (!next || !sameLayout(*next, product) ||
          user->getBlock() != tile.getParentBlock())
        return false;
      continue;
    }
    if (auto store = dyn_cast<tk::StoreOp>(user)) {
      if (store.getValue() != tile || store.getPtr() == tile ||
          store.getMask() == tile)
        return false;
      continue;
    }
    if (isa<tk::warp::ConvertLayoutOp>(user)) {
      if (!tile.getDefiningOp<scf::ForOp>())
        return false;
      continue;
    }
    if (!keepsIndex(user) || materialized.count(user) ||
        !onlyStoredFromRegisters(user->getResult(0), product))
      return false;
  }
  return true;
}

Value TilePlacement::findThroughIndexKeeping(Value value,
                                             function_ref<bool(Value)> isRoot) {
  if (isRoot(value))
    return value;
  Operation *def = value.getDefiningOp();
  if (!def || !keepsIndex(def) || materialized.count(def))
    return {};
  for (Value operand : def->getOperands())
    if (isTile(operand.getType()))
      if (Value root = findThroughIndexKeeping(operand, isRoot))
        return root;
  return {};
}

std::optional<tk::MatrixUnit::HeldProduct>
TilePlacement::heldProduct(tk::DotOp dot) {
  if (!matrixUnit || !onThreads() || parallelDepth > 0)
    return std::nullopt;
  tk::MatrixUnit::HeldProduct product = describeProduct(dot);
  if (!matrixUnit->holds(product))
    return std::nullopt;
  return product;
}

std::optional<tk::HeldLayout> TilePlacement::emittedLayoutOf(tk::DotOp dot) {
  if (!matrixUnit || !onThreads() || parallelDepth > 0)
    return std::nullopt;
  tk::MatrixUnit::HeldProduct product = describeProduct(dot);
  if (matrixUnit->holds(product) ||
      !matrixUnit->supports(product.a, product.b, product.accumulator,
                            product.m, product.n, product.k))
    return std::nullopt;
  return matrixUnit->emittedLayout(product);
}

tk::MatrixUnit::HeldProduct TilePlacement::describeProduct(tk::DotOp dot) {
  auto aType = cast<RankedTensorType>(dot.getA().getType());
  auto bType = cast<RankedTensorType>(dot.getB().getType());
  Type accElem = cast<RankedTensorType>(dot.getType()).getElementType();
  tk::MatrixUnit::HeldProduct product;
  product.a = aType.getElementType();
  product.b = bType.getElementType();
  product.accumulator = isa<FloatType>(accElem) && isNarrowFloat(accElem)
                            ? Float32Type::get(dot.getContext())
                            : accElem;
  product.m = aType.getDimSize(0);
  product.n = bType.getDimSize(1);
  product.k = aType.getDimSize(1);
  product.tf32 =
      product.a.isF32() && dot.getInputPrecision() == tk::InputPrecision::TF32;
  product.kMajorB =
      static_cast<bool>(operandTile(dot, 1).getDefiningOp<tk::TransOp>());
  product.rowsAcrossWarps =
      tk::warp::chooseDotTiling(dot) == tk::DotTiling::Horizontal;
  product.threadId = threadId;
  product.numThreads = numThreads;
  return product;
}

std::optional<tk::MatrixUnit::HeldProduct>
TilePlacement::heldOperandLayout(Value tile, unsigned operand) {
  std::optional<tk::MatrixUnit::HeldProduct> first;
  // The products read it directly or through its conversion to their
  // operand layout.
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : tile.getUses())
    uses.push_back(&use);
  for (size_t u = 0; u < uses.size(); ++u) {
    OpOperand &use = *uses[u];
    if (isOperandConversion(use.getOwner())) {
      for (OpOperand &converted : use.getOwner()->getResult(0).getUses())
        uses.push_back(&converted);
      continue;
    }
    auto dot = dyn_cast<tk::DotOp>(use.getOwner());
    if (!dot || use.getOperandNumber() != operand)
      return std::nullopt;
    std::optional<tk::MatrixUnit::HeldProduct> product = heldProduct(dot);
    if (!product || (first && !sameLayout(*first, *product)))
      return std::nullopt;
    first = product;
  }
  return first;
}

//===----------------------------------------------------------------------===//
// Deciding, recording and reading the layouts
//===----------------------------------------------------------------------===//

void TilePlacement::placeHeldLoopResults(bool recorded) {
  source.walk([&](scf::ForOp loop) {
    if (recorded && loop->hasAttr(tk::warp::TkwDialect::kResultLayoutsAttrName))
      return;
    for (auto [i, result] : llvm::enumerate(loop.getResults()))
      if (tk::DotOp dot = heldIterArgs.lookup(loop.getRegionIterArgs()[i]))
        if (std::optional<tk::MatrixUnit::HeldProduct> product =
                heldProduct(dot);
            product &&
            (result.use_empty() || onlyStoredFromRegisters(result, *product)))
          heldLoopResults[result] = dot;
  });
}

void TilePlacement::placeHeldAccumulators() {
  source.walk([&](scf::ForOp loop) {
    for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i)
      if (tk::DotOp dot = chooseHeldAccumulator(loop, i))
        heldIterArgs[loop.getRegionIterArgs()[i]] = dot;
  });
}

void TilePlacement::writeHeldAccumulators() {
  using tk::warp::TkwDialect;
  MLIRContext *ctx = source.getContext();
  Builder builder(ctx);
  // What an earlier run recorded is replaced, not added to.
  DenseMap<Operation *, int64_t> products;
  source.walk([&](tk::DotOp dot) {
    if (llvm::none_of(heldIterArgs,
                      [&](auto held) { return held.second == dot; })) {
      dot->removeAttr(TkwDialect::kProductAttrName);
      dot->removeAttr(TkwDialect::kHeldAttrName);
      return;
    }
    int64_t id = products.size();
    products[dot] = id;
    recordProduct(dot, id);
  });
  source.walk([&](scf::ForOp loop) {
    SmallVector<Attribute> layouts;
    bool any = false;
    for (Value arg : loop.getRegionIterArgs()) {
      tk::DotOp dot = heldIterArgs.lookup(arg);
      any = any || dot;
      layouts.push_back(dot ? Attribute(tk::warp::AccumulatorLayoutAttr::get(
                                  ctx, products.lookup(dot)))
                            : builder.getUnitAttr());
    }
    if (any)
      loop->setAttr(TkwDialect::kIterLayoutsAttrName,
                    builder.getArrayAttr(layouts));
    else
      loop->removeAttr(TkwDialect::kIterLayoutsAttrName);
  });
}

bool TilePlacement::hasHeldAccumulators() {
  bool any = false;
  source.walk([&](scf::ForOp loop) {
    if (auto layouts = loop->getAttrOfType<ArrayAttr>(
            tk::warp::TkwDialect::kIterLayoutsAttrName))
      any = any || llvm::any_of(layouts, [](Attribute layout) {
              return isa<tk::warp::AccumulatorLayoutAttr>(layout);
            });
  });
  return any;
}

tk::DotOp TilePlacement::numberedProduct(int64_t id) {
  if (!numberedProducts) {
    numberedProducts.emplace();
    source.walk([&](tk::DotOp dot) {
      if (auto number = dot->getAttrOfType<IntegerAttr>(
              tk::warp::TkwDialect::kProductAttrName))
        numberedProducts->try_emplace(number.getInt(), dot);
    });
  }
  return numberedProducts->lookup(id);
}

FailureOr<tk::DotOp> TilePlacement::recordedProduct(Operation *op, int64_t id) {
  tk::DotOp found = numberedProduct(id);
  if (!found)
    return op->emitOpError(passName()) << ": no tk.dot is held product " << id;
  if (!heldProduct(found))
    return op->emitOpError(passName())
           << ": the matrix unit does not hold product " << id
           << " in registers";
  return found;
}

LogicalResult TilePlacement::readHeldAccumulators() {
  WalkResult walk = source.walk([&](scf::ForOp loop) -> WalkResult {
    auto layouts = loop->getAttrOfType<ArrayAttr>(
        tk::warp::TkwDialect::kIterLayoutsAttrName);
    if (!layouts)
      return WalkResult::advance();
    if (layouts.size() != loop.getNumRegionIterArgs()) {
      loop.emitOpError(passName()) << ": thread layout " << layouts
                                   << " does not list every iteration argument";
      return WalkResult::interrupt();
    }
    for (auto [i, layout] : llvm::enumerate(layouts)) {
      auto acc = dyn_cast<tk::warp::AccumulatorLayoutAttr>(layout);
      if (!acc)
        continue;
      FailureOr<tk::DotOp> dot = recordedProduct(loop, acc.getProduct());
      if (failed(dot))
        return WalkResult::interrupt();
      if (chooseHeldAccumulator(loop, i) != *dot) {
        loop.emitOpError(passName())
            << ": thread layout " << layout
            << " names a product that does not update this accumulator "
               "alone";
        return WalkResult::interrupt();
      }
      heldIterArgs[loop.getRegionIterArgs()[i]] = *dot;
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

void TilePlacement::placeConversions() {
  // `tile`, defined by `def`, to workgroup memory for every reader: a
  // conversion right after `def` (after the earlier ones of a loop's
  // results, in result order).
  auto toShared = [&](Value tile, Operation *def, OpBuilder &builder) {
    auto convert = tk::warp::ConvertLayoutOp::create(builder, def->getLoc(),
                                                     tile.getType(), tile);
    convert->setAttr(tk::warp::TkwDialect::kLayoutAttrName,
                     tk::warp::SharedLayoutAttr::get(source.getContext()));
    tile.replaceAllUsesExcept(convert.getResult(), convert);
    ++conversions;
  };
  source.walk([&](scf::ForOp loop) {
    OpBuilder builder(loop->getBlock(), std::next(loop->getIterator()));
    for (auto [i, result] : llvm::enumerate(loop.getResults())) {
      tk::DotOp dot = heldIterArgs.lookup(loop.getRegionIterArgs()[i]);
      if (!dot || heldLoopResults.count(result))
        continue;
      toShared(result, loop, builder);
      heldLoopResults[result] = dot;
    }
  });
  source.walk([&](tk::DotOp dot) {
    bool updatesHeld = llvm::any_of(
        heldIterArgs, [&](auto held) { return held.second == dot; });
    if (dot.use_empty() || updatesHeld || residentLayout.count(dot) ||
        convertedDots.count(dot) || !heldProduct(dot))
      return;
    OpBuilder builder(dot->getBlock(), std::next(dot->getIterator()));
    toShared(dot.getResult(), dot, builder);
    convertedDots.insert(dot);
  });
  placeOperandConversions();
}

Value TilePlacement::operandReadThrough(Value tile) {
  auto trans = tile.getDefiningOp<tk::TransOp>();
  if (trans && !materialized.count(trans) && !residentOwner(tile))
    return trans.getSrc();
  return tile;
}

bool TilePlacement::filledByRing(Operation *convert) {
  Value tile = convert->getOperand(0);
  auto trans = tile.getDefiningOp<tk::TransOp>();
  auto load = (trans ? trans.getSrc() : tile).getDefiningOp<tk::LoadOp>();
  auto ring = load ? rings.find(load) : rings.end();
  return ring != rings.end() &&
         operandTile(ring->second.dot, ring->second.operand) == tile;
}

std::optional<StoreLayout> TilePlacement::operandWriters(Operation *convert) {
  if (filledByRing(convert))
    return std::nullopt;
  Value tile = convert->getOperand(0);
  if (std::optional<StoreLayout> owners = layoutOfRegistersRead({tile}))
    return owners;
  return StoreLayout{
      {}, writeRun(cast<RankedTensorType>(operandReadThrough(tile).getType()))};
}

LogicalResult TilePlacement::checkOperandWrites() {
  // In program order, so that the first misfit is the one reported.
  WalkResult walk = source.walk([&](Operation *convert) -> WalkResult {
    auto it = operandConversions.find(convert);
    if (it == operandConversions.end())
      return WalkResult::advance();
    std::optional<StoreLayout> writers = operandWriters(convert);
    const std::optional<StoreLayout> &recorded = it->second.written;
    if (writers && recorded && writers->product == recorded->product &&
        writers->run == recorded->run)
      return WalkResult::advance();
    if (!writers && !recorded)
      return WalkResult::advance();
    InFlightDiagnostic diag = convert->emitOpError(passName())
                              << ": a dot operand's conversion ";
    if (recorded)
      diag << "written by " << storeLayoutAttr(*recorded);
    else
      diag << "with no writers";
    if (writers)
      diag << " is written by " << storeLayoutAttr(*writers)
           << " (the owners of the registers it is computed from, or runs "
              "of the tile it reads)";
    else
      diag << " is a ring's slot, which its async copies fill: it has no "
              "writers";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

bool TilePlacement::takesRegisterA(tk::DotOp dot,
                                   const tk::MatrixUnit::HeldProduct &product) {
  Operation *owner = residentOwner(dot.getA());
  auto from = dyn_cast_if_present<tk::DotOp>(
      owner ? residentLayout.lookup(owner) : nullptr);
  std::optional<tk::MatrixUnit::HeldProduct> fragment =
      from ? heldProduct(from) : std::nullopt;
  return fragment && matrixUnit->takesRegisterA(product, *fragment);
}

void TilePlacement::placeOperandConversions() {
  if (!matrixUnit || !onThreads())
    return;
  MLIRContext *ctx = source.getContext();
  DominanceInfo dominance(source);
  // Conversions before a loop, which later products alike may read too.
  SmallVector<Operation *> hoisted;
  source.walk([&](tk::DotOp dot) {
    std::optional<tk::MatrixUnit::HeldProduct> product = heldProduct(dot);
    if (!product || !matrixUnit->laysOutOperands(*product))
      return;
    for (unsigned index : {0u, 1u}) {
      Value tile = dot->getOperand(index);
      // Converted already (read() of a placed kernel), or read from the
      // registers of another product.
      if (isOperandConversion(tile.getDefiningOp()) ||
          (index == 0 && takesRegisterA(dot, *product)))
        continue;
      auto loop = dot->getParentOfType<scf::ForOp>();
      bool invariant = loop && loop.isDefinedOutsideOfLoop(tile);
      Operation *convert = nullptr;
      if (invariant)
        for (Operation *earlier : hoisted) {
          const OperandConversion &seen = operandConversions.at(earlier);
          if (earlier->getOperand(0) == tile && seen.operand == index &&
              dominance.properlyDominates(earlier, dot) &&
              sameLayout(*heldProduct(seen.product), *product))
            convert = earlier;
        }
      if (!convert) {
        OpBuilder builder(invariant ? loop.getOperation() : dot.getOperation());
        convert = tk::warp::ConvertLayoutOp::create(builder, dot.getLoc(),
                                                    tile.getType(), tile);
        // Numbered by write(); a conversion that has no layout folds away.
        tk::SharedLayout layout = *matrixUnit->operandLayout(*product, index);
        convert->setAttr(tk::warp::TkwDialect::kLayoutAttrName,
                         operandLayoutAttr(ctx, 0, index, layout));
        operandConversions[convert] = {dot, index, layout,
                                       operandWriters(convert)};
        ++conversions;
        if (invariant)
          hoisted.push_back(convert);
      }
      dot->setOperand(index, convert->getResult(0));
    }
  });
}

void TilePlacement::analyze() {
  if (analyzed)
    return;
  analyzed = true;
  analyzeRegion(source.getBody());
  if (onThreads())
    chooseRegisterResident(source.getBody());
}

void TilePlacement::placeRowResident() {
  analyze();
  chooseRowResident(source.getBody());
}

void TilePlacement::writeRowResident() {
  using tk::warp::TkwDialect;
  MLIRContext *ctx = source.getContext();
  Builder builder(ctx);
  // The products numbered already (the held accumulators'); the others
  // whose rows are kept get the next numbers, in program order.
  DenseMap<Operation *, int64_t> products;
  int64_t next = 0;
  source.walk([&](tk::DotOp dot) {
    if (auto id =
            dot->getAttrOfType<IntegerAttr>(TkwDialect::kProductAttrName)) {
      products[dot] = id.getInt();
      next = std::max(next, id.getInt() + 1);
    }
  });
  llvm::DenseSet<Operation *> followed;
  for (auto [tile, dot] : rowLayout)
    followed.insert(dot);
  source.walk([&](tk::DotOp dot) {
    if (followed.count(dot) && !products.count(dot)) {
      products[dot] = next;
      recordProduct(dot, next++);
    }
  });
  auto rowsOf = [&](Value tile) -> Attribute {
    tk::DotOp dot = rowLayout.lookup(tile);
    if (!dot)
      return {};
    return tk::warp::RowsLayoutAttr::get(ctx, products.lookup(dot));
  };
  source.walk([&](Operation *op) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      auto recorded =
          loop->getAttrOfType<ArrayAttr>(TkwDialect::kIterLayoutsAttrName);
      SmallVector<Attribute> layouts;
      bool any = false;
      for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs())) {
        Attribute layout = rowsOf(arg);
        // The held accumulators' entries stay; earlier rows go.
        if (!layout && recorded &&
            isa<tk::warp::AccumulatorLayoutAttr>(recorded[i]))
          layout = recorded[i];
        any = any || layout;
        layouts.push_back(layout ? layout : builder.getUnitAttr());
      }
      if (any)
        loop->setAttr(TkwDialect::kIterLayoutsAttrName,
                      builder.getArrayAttr(layouts));
      else
        loop->removeAttr(TkwDialect::kIterLayoutsAttrName);
      return;
    }
    if (isa_and_nonnull<tk::warp::RowsLayoutAttr>(
            op->getAttr(TkwDialect::kLayoutAttrName)))
      op->removeAttr(TkwDialect::kLayoutAttrName);
    if (op->getNumResults() == 1)
      if (Attribute layout = rowsOf(op->getResult(0)))
        op->setAttr(TkwDialect::kLayoutAttrName, layout);
  });
}

LogicalResult TilePlacement::readRowResident() {
  using tk::warp::TkwDialect;
  WalkResult walk = source.walk([&](Operation *op) -> WalkResult {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      auto layouts =
          loop->getAttrOfType<ArrayAttr>(TkwDialect::kIterLayoutsAttrName);
      if (!layouts)
        return WalkResult::advance();
      if (layouts.size() != loop.getNumRegionIterArgs())
        return refuseLayout(op, layouts,
                            "does not list every iteration argument");
      for (auto [i, layout] : llvm::enumerate(layouts)) {
        auto rows = dyn_cast<tk::warp::RowsLayoutAttr>(layout);
        if (!rows)
          continue;
        FailureOr<tk::DotOp> dot = recordedProduct(op, rows.getProduct());
        if (failed(dot))
          return WalkResult::interrupt();
        Value arg = loop.getRegionIterArgs()[i];
        if (cast<RankedTensorType>(arg.getType()).getRank() != 1)
          return refuseLayout(op, layout, "is for 1-D tiles");
        rowLayout[arg] = rowLayout[loop.getResult(i)] = *dot;
      }
      return WalkResult::advance();
    }
    auto rows = dyn_cast_or_null<tk::warp::RowsLayoutAttr>(
        op->getAttr(TkwDialect::kLayoutAttrName));
    if (!rows)
      return WalkResult::advance();
    if (op->getNumResults() != 1 || !isTile(op->getResult(0).getType()))
      return refuseLayout(op, rows, "is on an op that defines no tile");
    FailureOr<tk::DotOp> dot = recordedProduct(op, rows.getProduct());
    if (failed(dot))
      return WalkResult::interrupt();
    if (cast<RankedTensorType>(op->getResult(0).getType()).getRank() != 1)
      return refuseLayout(op, rows, "is for 1-D tiles");
    if (isElementwiseLike(op))
      materialized.insert(op);
    rowLayout[op->getResult(0)] = *dot;
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

void TilePlacement::place() {
  analyze();
  if (onThreads())
    preferRecomputing(source.getBody());
  for (auto [op, layout] : residentLayout)
    if (!layout)
      residentRun[op] = ownedRun(
          cast<RankedTensorType>(op->getResult(0).getType()).getShape());
  placeHeldLoopResults(/*recorded=*/false);
  placeConversions();
  placeStoreLayouts();
  placeSharedWrites();
  placeCarriedWrites();
  placeNarrowingWrites();
  placeSplits();
}

bool TilePlacement::reducesRegisters(tk::ReduceOp reduce) {
  return llvm::any_of(reduce.getSrcs(),
                      [&](Value src) { return residentOwner(src) != nullptr; });
}

tk::warp::SplitLayoutAttr TilePlacement::chooseSplit(tk::ReduceOp reduce) {
  MLIRContext *ctx = source.getContext();
  auto srcType = cast<RankedTensorType>(reduce.getSrcs()[0].getType());
  int64_t size = srcType.getDimSize(reduce.getAxis());
  int64_t lines = srcType.getNumElements() / std::max<int64_t>(size, 1);
  bool words = shufflesValues(reduce);
  // A warp per row, its lanes neighbouring columns (a thread per row would
  // read down a column of workgroup memory, every lane in one bank).
  if (srcType.getRank() == 2 && reduce.getAxis() == 1 && size % warpSize == 0 &&
      words)
    return tk::warp::SplitLayoutAttr::get(ctx, warpSize, "lanes");
  int64_t parts = 1;
  while (parts * 2 <= size && parts * 2 * lines <= numThreads)
    parts *= 2;
  // One line and a part per thread: only a value per warp goes through
  // memory.
  if (srcType.getRank() == 1 && parts == numThreads && words)
    return tk::warp::SplitLayoutAttr::get(ctx, parts, "warps");
  return tk::warp::SplitLayoutAttr::get(ctx, parts, "memory");
}

StringRef TilePlacement::splitMisfit(Operation *op,
                                     tk::warp::SplitLayoutAttr split) {
  if (isa<tk::ScanOp>(op))
    return split.getParts() == 1 && split.getAcross() == "memory"
               ? StringRef()
               : "is not how a scan is shared: a line per thread, serially "
                 "(#tkw.split<parts = 1, across = \"memory\">)";
  auto reduce = cast<tk::ReduceOp>(op);
  auto srcType = cast<RankedTensorType>(reduce.getSrcs()[0].getType());
  bool words = shufflesValues(reduce);
  int64_t size = srcType.getDimSize(reduce.getAxis());
  if (split.getAcross() == "lanes") {
    if (srcType.getRank() != 2 || reduce.getAxis() != 1)
      return "splits rows, and this is not a row reduction of a 2-D tile";
    if (split.getParts() != warpSize || size % warpSize != 0)
      return "needs a part per lane of a warp, the rows a whole number of "
             "warps long";
  } else if (split.getAcross() == "warps") {
    if (srcType.getRank() != 1 || split.getParts() != numThreads)
      return "needs a whole 1-D tile and a part per thread";
  } else if (split.getParts() > size) {
    return "has more parts than a line has elements";
  }
  if (split.getAcross() != "memory" && !words)
    return "combines by shuffles, which move 32-bit values";
  return {};
}

void TilePlacement::placeSplits() {
  if (!onThreads())
    return;
  source.walk([&](Operation *op) {
    if (auto reduce = dyn_cast<tk::ReduceOp>(op);
        reduce && !reducesRegisters(reduce))
      splits[reduce] = chooseSplit(reduce);
    if (isa<tk::ScanOp>(op))
      splits[op] =
          tk::warp::SplitLayoutAttr::get(op->getContext(), 1, "memory");
  });
}

Operation *TilePlacement::residentOwner(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def || !isTile(value.getType()))
    return nullptr;
  if (residentLayout.count(def))
    return def;
  if (!isElementwiseLike(def) || materialized.count(def))
    return nullptr;
  for (Value operand : def->getOperands())
    if (Operation *owner = residentOwner(operand))
      return owner;
  return nullptr;
}

std::optional<StoreLayout> TilePlacement::ownersStoreLayout(tk::StoreOp store) {
  if (tk::DotOp dot = heldStoreDot(store.getValue()))
    return StoreLayout{dot, 0};
  // In the order lowerStore looks for owners: the value, the pointers, the
  // mask.
  return layoutOfRegistersRead(
      {store.getValue(), store.getPtr(), store.getMask()});
}

std::optional<StoreLayout>
TilePlacement::layoutOfRegistersRead(ArrayRef<Value> reads) {
  for (Value read : reads) {
    Operation *owner = read ? residentOwner(read) : nullptr;
    if (!owner)
      continue;
    if (Operation *layout = residentLayout.lookup(owner))
      return StoreLayout{cast<tk::DotOp>(layout), 0};
    return StoreLayout{{}, residentRun.lookup(owner)};
  }
  return std::nullopt;
}

void TilePlacement::placeStoreLayouts() {
  if (!onThreads())
    return;
  source.walk([&](Operation *op) {
    if (isa<tk::AtomicRMWOp, tk::AtomicCASOp>(op) &&
        isTile(op->getResult(0).getType()))
      storeLayouts[op] = StoreLayout{{}, 1};
    if (auto check = dyn_cast<tk::AssertOp>(op);
        check && isTile(check.getCondition().getType()))
      storeLayouts[op] = StoreLayout{{}, 1};
    auto store = dyn_cast<tk::StoreOp>(op);
    if (!store)
      return;
    auto type = dyn_cast<RankedTensorType>(store.getValue().getType());
    if (!type)
      return;
    if (std::optional<StoreLayout> owners = ownersStoreLayout(store)) {
      storeLayouts[store] = *owners;
      return;
    }
    storeLayouts[store] =
        StoreLayout{{},
                    runWidth(type.getShape(), type.getNumElements(), numThreads,
                             /*maxRun=*/4)};
  });
}

bool TilePlacement::writesShared(Operation *op) {
  if (auto dot = dyn_cast<tk::DotOp>(op))
    return computedByThreads(dot);
  return materialized.count(op) && isElementwiseLike(op) &&
         !residentLayout.count(op) && !rowLayout.count(op->getResult(0));
}

bool TilePlacement::computedByThreads(tk::DotOp dot) {
  if (!onThreads() || heldProduct(dot))
    return false;
  tk::MatrixUnit::HeldProduct product = describeProduct(dot);
  return !matrixUnit ||
         !matrixUnit->supports(product.a, product.b, product.accumulator,
                               product.m, product.n, product.k);
}

std::optional<StoreLayout> TilePlacement::ownersOfWrites(Operation *op) {
  // A dot's threads compute its elements from workgroup memory.
  if (isa<tk::DotOp>(op))
    return std::nullopt;
  // In the order KernelLowering::ownedRead looks for owners: the operands.
  return layoutOfRegistersRead(llvm::to_vector(op->getOperands()));
}

void TilePlacement::placeSharedWrites() {
  if (!onThreads())
    return;
  source.walk([&](Operation *op) {
    if (!writesShared(op))
      return;
    if (std::optional<StoreLayout> owners = ownersOfWrites(op)) {
      sharedWrites[op] = *owners;
      return;
    }
    // A thread per element of a product: runs would not coalesce its
    // reads of the operands any better.
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    sharedWrites[op] = StoreLayout{{}, isa<tk::DotOp>(op) ? 1 : writeRun(type)};
  });
}

bool TilePlacement::carriedInBuffer(scf::ForOp loop, unsigned i) {
  Value arg = loop.getRegionIterArgs()[i];
  return isTile(arg.getType()) && !pointerWalkStep(loop, i) &&
         !heldIterArgs.count(arg) && !rowLayout.count(arg);
}

void TilePlacement::placeCarriedWrites() {
  if (!onThreads())
    return;
  // Nothing written there is computed from registers (a loop's yield and
  // init, an if's yield, read no register-resident tile: readByOwners), so
  // the threads take runs, as for an element-wise tile.
  auto place = [&](Value tile) {
    carriedWrites[tile] = writeRun(cast<RankedTensorType>(tile.getType()));
  };
  source.walk([&](Operation *op) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i)
        if (carriedInBuffer(loop, i))
          place(loop.getRegionIterArgs()[i]);
    } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
      for (Value result : branch.getResults())
        if (isTile(result.getType()))
          place(result);
    }
  });
}

tk::DotOp TilePlacement::narrowedProduct(Operation *op) {
  if (!onThreads() || !matrixUnit || op->getNumResults() != 1)
    return {};
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type)
    return {};
  tk::DotOp dot = dyn_cast<tk::DotOp>(op);
  std::optional<tk::MatrixUnit::HeldProduct> product;
  if (dot) {
    // Computed by the unit without holding it (lowerDot).
    if (heldProduct(dot) || computedByThreads(dot))
      return {};
    product = describeProduct(dot);
  } else if (auto convert = dyn_cast<tk::warp::ConvertLayoutOp>(op);
             convert && isa_and_present<tk::warp::SharedLayoutAttr>(op->getAttr(
                            tk::warp::TkwDialect::kLayoutAttrName))) {
    // A held product, or a held accumulator's loop result (placeConversions
    // records the loop result's dot).
    Value held = convert.getSrc();
    dot = held.getDefiningOp<tk::DotOp>();
    if (!dot)
      dot = heldLoopResults.lookup(held);
    if (!dot || !(product = heldProduct(dot)))
      return {};
  } else {
    return {};
  }
  return product->accumulator != type.getElementType() ? dot : tk::DotOp();
}

void TilePlacement::placeNarrowingWrites() {
  source.walk([&](Operation *op) {
    if (!narrowedProduct(op))
      return;
    narrowingWrites[op] =
        writeRun(cast<RankedTensorType>(op->getResult(0).getType()));
  });
}

LogicalResult TilePlacement::checkNarrowingWrites() {
  WalkResult walk = source.walk([&](Operation *op) -> WalkResult {
    bool narrows = narrowedProduct(op) != nullptr;
    if (narrows == narrowingWrites.count(op))
      return WalkResult::advance();
    op->emitOpError(passName())
        << (narrows
                ? ": rounds a product's wider accumulator into its tile; it "
                  "needs the runs that write it (#tkw.shared<written = "
                  "#tkw.runs<...>>, which tk-assign-thread-layouts records)"
                : ": names the runs that round a product's wider accumulator "
                  "into its tile; this tile is not one (the unit's registers "
                  "write it where they are)");
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

Attribute TilePlacement::storeLayoutAttr(const StoreLayout &layout) {
  MLIRContext *ctx = source.getContext();
  if (!layout.product)
    return tk::warp::RunsLayoutAttr::get(ctx, layout.run, numThreads);
  auto id = layout.product->getAttrOfType<IntegerAttr>(
      tk::warp::TkwDialect::kProductAttrName);
  return tk::warp::AccumulatorLayoutAttr::get(ctx, id ? id.getInt() : -1);
}

bool TilePlacement::isPlaced() const {
  return source->hasAttr(tk::warp::TkwDialect::kThreadsAttrName);
}

WalkResult TilePlacement::refuseLayout(Operation *op, Attribute layout,
                                       StringRef why) {
  op->emitOpError(passName()) << ": thread layout " << layout << " " << why;
  return WalkResult::interrupt();
}

LogicalResult TilePlacement::refuseIfPlaced(StringRef pass) {
  if (!isPlaced())
    return success();
  return source.emitOpError(pass)
         << ": the kernel's thread layouts are already assigned; " << pass
         << " runs before tk-assign-thread-layouts";
}

/// `layout` as the attribute that spells it out (`#tkw.held`).
static Attribute heldLayoutAttr(MLIRContext *ctx,
                                const tk::HeldLayout &layout) {
  const tk::FragmentLayout &f = layout.fragment;
  auto fragment = tk::warp::FragmentLayoutAttr::get(
      ctx, layout.intrinsic, /*opIdx=*/2, f.sizePerLane, f.lanesPerWarp,
      f.warpsPerFragment, f.order);
  return tk::warp::HeldLayoutAttr::get(ctx, fragment, layout.tile,
                                       layout.groupThreads, layout.groups,
                                       layout.tilesPerGroup, layout.cyclic);
}

void TilePlacement::recordProduct(tk::DotOp dot, int64_t id) {
  using tk::warp::TkwDialect;
  MLIRContext *ctx = source.getContext();
  dot->setAttr(TkwDialect::kProductAttrName,
               IntegerAttr::get(IntegerType::get(ctx, 64), id));
  // The unit's own statement of where each thread's registers lie.
  std::optional<tk::MatrixUnit::HeldProduct> product = heldProduct(dot);
  std::optional<tk::HeldLayout> held =
      product ? matrixUnit->heldLayout(*product) : std::nullopt;
  if (held)
    dot->setAttr(TkwDialect::kHeldAttrName, heldLayoutAttr(ctx, *held));
}

void TilePlacement::recordEmittedLayouts() {
  source.walk([&](tk::DotOp dot) {
    if (dot->hasAttr(tk::warp::TkwDialect::kProductAttrName))
      return;
    if (std::optional<tk::HeldLayout> emitted = emittedLayoutOf(dot))
      dot->setAttr(tk::warp::TkwDialect::kHeldAttrName,
                   heldLayoutAttr(dot.getContext(), *emitted));
    else
      dot->removeAttr(tk::warp::TkwDialect::kHeldAttrName);
  });
}

LogicalResult TilePlacement::checkEmittedLayout(tk::DotOp dot) {
  using tk::warp::TkwDialect;
  if (dot->hasAttr(TkwDialect::kProductAttrName))
    return success();
  Attribute recorded = dot->getAttr(TkwDialect::kHeldAttrName);
  std::optional<tk::HeldLayout> emitted = emittedLayoutOf(dot);
  Attribute expected =
      emitted ? heldLayoutAttr(dot.getContext(), *emitted) : Attribute();
  if (recorded == expected)
    return success();
  InFlightDiagnostic diag = dot.emitOpError(passName()) << ": ";
  if (!recorded)
    return diag << "the dot records no tkw.held; the matrix unit spreads it "
                   "over the threads as "
                << expected;
  diag << "thread layout " << recorded
       << " is not how the matrix unit spreads this product over the threads";
  if (expected)
    diag << ": it states " << expected;
  else
    diag << " (it computes it in registers, or not at all)";
  return diag;
}

void TilePlacement::writeRings() {
  using tk::warp::TkwDialect;
  // The products already numbered; a ring's product without a number gets
  // the next.
  DenseMap<Operation *, int64_t> products;
  int64_t next = 0;
  source.walk([&](tk::DotOp dot) {
    if (auto id =
            dot->getAttrOfType<IntegerAttr>(TkwDialect::kProductAttrName)) {
      products[dot] = id.getInt();
      next = std::max(next, id.getInt() + 1);
    }
  });
  source.walk([&](tk::LoadOp load) {
    auto it = rings.find(load);
    if (it == rings.end())
      return;
    auto [product, added] = products.try_emplace(it->second.dot, next);
    if (added)
      recordProduct(it->second.dot, next++);
    load->setAttr(TkwDialect::kRingAttrName,
                  tk::warp::RingLayoutAttr::get(source.getContext(), numStages,
                                                product->second,
                                                it->second.operand));
  });
  // The conversions whose slots the rings fill: their async copies write
  // the tile, not the threads.
  for (auto &[convert, conversion] : operandConversions) {
    if (!conversion.written || !filledByRing(convert))
      continue;
    conversion.written.reset();
    auto layout = cast<tk::warp::OperandLayoutAttr>(
        convert->getAttr(TkwDialect::kLayoutAttrName));
    convert->setAttr(TkwDialect::kLayoutAttrName,
                     operandLayoutAttr(source.getContext(), layout.getProduct(),
                                       layout.getOperand(), conversion.layout));
  }
}

void TilePlacement::write() {
  using tk::warp::TkwDialect;
  MLIRContext *ctx = source.getContext();
  Builder builder(ctx);
  // The held products the layouts refer to, numbered in program order.
  llvm::DenseSet<Operation *> referenced;
  for (auto [op, layout] : residentLayout)
    if (layout)
      referenced.insert(layout);
  for (auto [value, dot] : rowLayout)
    referenced.insert(dot);
  for (auto [arg, dot] : heldIterArgs)
    referenced.insert(dot);
  referenced.insert(convertedDots.begin(), convertedDots.end());
  for (auto [store, layout] : storeLayouts)
    if (layout.product)
      referenced.insert(layout.product);
  for (auto &[convert, read] : operandConversions)
    referenced.insert(read.product);
  DenseMap<Operation *, int64_t> products;
  source.walk([&](tk::DotOp dot) {
    if (!referenced.count(dot)) {
      dot->removeAttr(TkwDialect::kProductAttrName);
      return;
    }
    int64_t id = products.size();
    products[dot] = id;
    recordProduct(dot, id);
  });
  recordEmittedLayouts();
  auto layoutOf = [&](Value value) -> Attribute {
    Operation *op = value.getDefiningOp();
    if (auto it = narrowingWrites.find(op); op && it != narrowingWrites.end())
      return tk::warp::SharedLayoutAttr::get(
          ctx, tk::warp::RunsLayoutAttr::get(ctx, it->second, numThreads));
    if (auto it = operandConversions.find(op);
        op && it != operandConversions.end())
      return operandLayoutAttr(ctx, products.lookup(it->second.product),
                               it->second.operand, it->second.layout,
                               it->second.written
                                   ? storeLayoutAttr(*it->second.written)
                                   : Attribute());
    if (op && convertedDots.count(op))
      return tk::warp::AccumulatorLayoutAttr::get(ctx, products.lookup(op));
    if (auto it = residentLayout.find(op); op && it != residentLayout.end()) {
      if (!it->second)
        return tk::warp::RunsLayoutAttr::get(ctx, residentRun.lookup(op),
                                             numThreads);
      return tk::warp::AccumulatorLayoutAttr::get(ctx,
                                                  products.lookup(it->second));
    }
    if (auto it = rowLayout.find(value); it != rowLayout.end())
      return tk::warp::RowsLayoutAttr::get(ctx, products.lookup(it->second));
    if (auto it = heldIterArgs.find(value); it != heldIterArgs.end())
      return tk::warp::AccumulatorLayoutAttr::get(ctx,
                                                  products.lookup(it->second));
    if (auto written = sharedWrites.find(op);
        op && written != sharedWrites.end())
      return tk::warp::SharedLayoutAttr::get(ctx,
                                             storeLayoutAttr(written->second));
    if (op && materialized.count(op))
      return tk::warp::SharedLayoutAttr::get(ctx);
    return {};
  };
  // A tile a loop or an if carries in a buffer, with its writers.
  auto carriedLayoutOf = [&](Value tile) -> Attribute {
    auto it = carriedWrites.find(tile);
    if (it == carriedWrites.end())
      return {};
    return tk::warp::SharedLayoutAttr::get(
        ctx, tk::warp::RunsLayoutAttr::get(ctx, it->second, numThreads));
  };
  source.walk([&](Operation *op) {
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      SmallVector<Attribute> layouts;
      bool any = false;
      for (Value result : branch.getResults()) {
        Attribute layout = carriedLayoutOf(result);
        any = any || layout;
        layouts.push_back(layout ? layout : builder.getUnitAttr());
      }
      if (any)
        branch->setAttr(TkwDialect::kResultLayoutsAttrName,
                        builder.getArrayAttr(layouts));
      return;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      SmallVector<Attribute> layouts;
      bool any = false;
      for (Value arg : loop.getRegionIterArgs()) {
        Attribute layout = layoutOf(arg);
        if (!layout)
          layout = carriedLayoutOf(arg);
        any = any || layout;
        layouts.push_back(layout ? layout : builder.getUnitAttr());
      }
      if (any)
        loop->setAttr(TkwDialect::kIterLayoutsAttrName,
                      builder.getArrayAttr(layouts));
      SmallVector<Attribute> resultLayouts;
      bool held = false;
      for (auto [i, result] : llvm::enumerate(loop.getResults())) {
        Attribute layout = builder.getUnitAttr();
        if (tk::DotOp dot = heldLoopResults.lookup(result))
          layout =
              tk::warp::AccumulatorLayoutAttr::get(ctx, products.lookup(dot));
        held = held || !isa<UnitAttr>(layout);
        resultLayouts.push_back(layout);
      }
      if (held)
        loop->setAttr(TkwDialect::kResultLayoutsAttrName,
                      builder.getArrayAttr(resultLayouts));
      return;
    }
    if (auto split = splits.lookup(op))
      op->setAttr(TkwDialect::kSplitAttrName, split);
    if (auto it = storeLayouts.find(op); it != storeLayouts.end()) {
      op->setAttr(TkwDialect::kLayoutAttrName, storeLayoutAttr(it->second));
      return;
    }
    if (op->getNumResults() == 1)
      if (Attribute layout = layoutOf(op->getResult(0)))
        op->setAttr(TkwDialect::kLayoutAttrName, layout);
  });
  source->setAttr(TkwDialect::kThreadsAttrName,
                  builder.getI64IntegerAttr(numThreads));
  if (!onThreads())
    return;
  // Thread t is lane t mod threads_per_warp of warp t / threads_per_warp:
  // with the layouts, which warp and lane holds each element.
  source->setAttr(TkwDialect::kThreadsPerWarpAttrName,
                  builder.getI64IntegerAttr(warpSize));
  source->setAttr(TkwDialect::kConversionsAttrName,
                  builder.getI64IntegerAttr(conversions));
}

LogicalResult TilePlacement::read() {
  using tk::warp::TkwDialect;
  auto threads =
      source->getAttrOfType<IntegerAttr>(TkwDialect::kThreadsAttrName);
  if (!threads || threads.getInt() != numThreads)
    return source.emitOpError(passName())
           << ": the thread layouts were assigned for "
           << (threads ? threads.getInt() : 0) << " threads a program, not "
           << numThreads;
  // The runs, the shuffles of a split and the units' fragments are dealt
  // to lanes of warps of this size: recorded for another, they would put
  // elements in other threads than the layouts say.
  auto lanes =
      source->getAttrOfType<IntegerAttr>(TkwDialect::kThreadsPerWarpAttrName);
  if (onThreads() && (!lanes || lanes.getInt() != warpSize))
    return source.emitOpError(passName())
           << ": the thread layouts were assigned for warps of "
           << (lanes ? lanes.getInt() : 0) << " threads, not " << warpSize;
  // Held accumulators first: what reads a held loop result depends on them.
  if (failed(readHeldAccumulators()) || failed(readRowResident()))
    return failure();
  WalkResult walk = source.walk([&](Operation *op) -> WalkResult {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      auto layouts =
          loop->getAttrOfType<ArrayAttr>(TkwDialect::kIterLayoutsAttrName);
      if (!layouts)
        return WalkResult::advance();
      // Their sizes, held accumulators and rows were read first.
      for (auto [arg, layout] :
           llvm::zip_equal(loop.getRegionIterArgs(), layouts)) {
        if (isa<tk::warp::SharedLayoutAttr>(layout)) {
          if (!readCarriedWrites(op, arg, layout))
            return WalkResult::interrupt();
        } else if (!isa<UnitAttr, tk::warp::AccumulatorLayoutAttr,
                        tk::warp::RowsLayoutAttr>(layout)) {
          return refuseLayout(op, layout, "cannot be an iteration argument's");
        }
      }
      return WalkResult::advance();
    }
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      auto layouts =
          branch->getAttrOfType<ArrayAttr>(TkwDialect::kResultLayoutsAttrName);
      if (!layouts)
        return WalkResult::advance();
      if (layouts.size() != branch.getNumResults())
        return refuseLayout(op, layouts, "does not list every result");
      for (auto [result, layout] :
           llvm::zip_equal(branch.getResults(), layouts))
        if (!isa<UnitAttr>(layout) && !readCarriedWrites(op, result, layout))
          return WalkResult::interrupt();
      return WalkResult::advance();
    }
    if (auto ring = op->getAttrOfType<tk::warp::RingLayoutAttr>(
            TkwDialect::kRingAttrName)) {
      if (!onThreads() || !asyncCopy || ring.getStages() != numStages)
        return refuseLayout(
            op, ring,
            "is not a ring this lowering fills: it pipelines over " +
                std::to_string(asyncCopy && onThreads() ? numStages : 1) +
                " stages");
      FailureOr<tk::DotOp> dot = recordedProduct(op, ring.getProduct());
      if (failed(dot))
        return WalkResult::interrupt();
      Value operand = operandTile(*dot, ring.getOperand());
      auto trans = operand.getDefiningOp<tk::TransOp>();
      if (operand.getDefiningOp() != op &&
          !(trans && trans.getSrc().getDefiningOp() == op))
        return refuseLayout(op, ring,
                            "names a product operand this load is not");
      rings[op] = Ring{*dot, static_cast<unsigned>(ring.getOperand())};
    }
    if (auto split = op->getAttrOfType<tk::warp::SplitLayoutAttr>(
            TkwDialect::kSplitAttrName)) {
      if (!onThreads())
        return refuseLayout(op, split,
                            "needs a GPU program (the CPU form reduces "
                            "in loop nests)");
      StringRef misfit = splitMisfit(op, split);
      if (!misfit.empty())
        return refuseLayout(op, split, misfit);
      splits[op] = split;
    }
    if (auto dot = dyn_cast<tk::DotOp>(op))
      if (failed(checkEmittedLayout(dot)))
        return WalkResult::interrupt();
    Attribute layout = op->getAttr(TkwDialect::kLayoutAttrName);
    if (!layout)
      return WalkResult::advance();
    if (isa<tk::StoreOp, tk::AtomicRMWOp, tk::AtomicCASOp, tk::AssertOp>(op))
      return readStoreLayout(op, layout) ? WalkResult::advance()
                                         : WalkResult::interrupt();
    if (auto operand = dyn_cast<tk::warp::OperandLayoutAttr>(layout))
      return readOperandConversion(op, operand) ? WalkResult::advance()
                                                : WalkResult::interrupt();
    // Rows were read first.
    if (isa<tk::warp::RowsLayoutAttr>(layout))
      return WalkResult::advance();
    if (op->getNumResults() != 1 || !isTile(op->getResult(0).getType()))
      return refuseLayout(op, layout, "is on an op that defines no tile");
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    bool elementwise = isElementwiseLike(op);
    if (auto shared = dyn_cast<tk::warp::SharedLayoutAttr>(layout)) {
      auto dot = dyn_cast<tk::DotOp>(op);
      if (shared.getWritten() && !elementwise &&
          !(dot && computedByThreads(dot))) {
        // The runs rounding a product's wider accumulator into the tile
        // (checkNarrowingWrites: only where it is wider).
        auto runs = dyn_cast<tk::warp::RunsLayoutAttr>(shared.getWritten());
        if (!isa<tk::DotOp, tk::warp::ConvertLayoutOp>(op) || !runs)
          return refuseLayout(op, layout,
                              "names the writers of an element-wise tile, of "
                              "a product no matrix unit computes or of a "
                              "product's rounding; this op writes its own");
        if (StringRef misfit = runsMisfit(runs, type); !misfit.empty())
          return refuseLayout(op, layout, misfit);
        narrowingWrites[op] = runs.getWidth();
        return WalkResult::advance();
      }
      if (elementwise)
        materialized.insert(op);
      if (shared.getWritten() && !readSharedWrites(op, shared.getWritten()))
        return WalkResult::interrupt();
      return WalkResult::advance();
    }
    if (!onThreads())
      return refuseLayout(op, layout,
                          "needs a GPU program (the CPU form keeps tiles "
                          "in memory)");
    if (auto runs = dyn_cast<tk::warp::RunsLayoutAttr>(layout)) {
      int64_t total = type.getNumElements();
      int64_t width = runs.getWidth();
      if (!elementwise)
        return refuseLayout(op, layout, "is for element-wise tiles");
      if (runs.getThreads() != numThreads)
        return refuseLayout(op, layout, "is for another number of threads");
      if (type.getShape().back() % width != 0 ||
          total % (width * numThreads) != 0 ||
          total / numThreads > kMaxOwnedElements)
        return refuseLayout(op, layout, "does not spread this tile evenly");
      materialized.insert(op);
      residentLayout[op] = nullptr;
      residentRun[op] = width;
      return WalkResult::advance();
    }
    if (auto acc = dyn_cast<tk::warp::AccumulatorLayoutAttr>(layout)) {
      FailureOr<tk::DotOp> dot = recordedProduct(op, acc.getProduct());
      if (failed(dot))
        return WalkResult::interrupt();
      if (op == dot->getOperation()) {
        // Read by its conversion alone, or kept in registers for readers
        // that read them.
        bool converted = !op->use_empty() &&
                         llvm::all_of(op->getUsers(), [](Operation *user) {
                           return isa<tk::warp::ConvertLayoutOp>(user);
                         });
        if (converted)
          convertedDots.insert(op);
        else
          residentLayout[op] = op;
        return WalkResult::advance();
      }
      if (!elementwise || type.getShape() != dot->getType().getShape())
        return refuseLayout(
            op, layout,
            "is for the product and element-wise tiles of its shape");
      materialized.insert(op);
      residentLayout[op] = *dot;
      return WalkResult::advance();
    }
    return refuseLayout(op, layout, "is not a thread layout of a tile");
  });
  if (walk.wasInterrupted())
    return failure();
  // Where held accumulators are after their loops, checked against their
  // readers (all recorded above, so that what they read is known).
  walk = source.walk([&](scf::ForOp loop) -> WalkResult {
    auto layouts =
        loop->getAttrOfType<ArrayAttr>(TkwDialect::kResultLayoutsAttrName);
    if (!layouts)
      return WalkResult::advance();
    if (layouts.size() != loop.getNumResults())
      return refuseLayout(loop, layouts, "does not list every result");
    for (auto [i, layout] : llvm::enumerate(layouts)) {
      Value result = loop.getResult(i);
      tk::DotOp dot = heldIterArgs.lookup(loop.getRegionIterArgs()[i]);
      if (isa<UnitAttr>(layout) && !dot)
        continue;
      if (!dot)
        return refuseLayout(loop, layout,
                            "is for the result of a held accumulator");
      auto acc = dyn_cast<tk::warp::AccumulatorLayoutAttr>(layout);
      if (!acc || numberedProduct(acc.getProduct()) != dot)
        return refuseLayout(
            loop, layout,
            "is not where the loop's held accumulator is: "
            "#tkw.accumulator of its product (a tkw.convert_layout "
            "after the loop moves it to workgroup memory)");
      if (!result.use_empty() &&
          !onlyStoredFromRegisters(result, *heldProduct(dot)))
        return refuseLayout(
            loop, layout,
            "keeps a result in registers that is read other than "
            "by stores, loops holding it alike and its conversion "
            "(tkw.convert_layout)");
      heldLoopResults[result] = dot;
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // Loops that record no result layouts: decided here, as place() would.
  placeHeldLoopResults(/*recorded=*/true);
  placeConversions();
  if (failed(checkStoreLayouts()) || failed(checkSharedWrites()) ||
      failed(checkCarriedWrites()) || failed(checkNarrowingWrites()) ||
      failed(checkOperandWrites()))
    return failure();
  return checkSplits();
}

LogicalResult TilePlacement::checkSplits() {
  if (!onThreads())
    return success();
  WalkResult walk = source.walk([&](tk::ScanOp scan) -> WalkResult {
    if (splits.count(scan))
      return WalkResult::advance();
    scan.emitOpError(passName())
        << ": a scan needs its split over the threads (tkw.split, which "
           "tk-assign-thread-layouts records)";
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  walk = source.walk([&](tk::ReduceOp reduce) -> WalkResult {
    bool split = splits.count(reduce);
    if (split != reducesRegisters(reduce))
      return WalkResult::advance();
    if (split)
      reduce.emitOpError(passName())
          << ": split " << splits.lookup(reduce)
          << " of a reduction of registers, which their layout splits";
    else
      reduce.emitOpError(passName())
          << ": a reduction needs its split over the threads (tkw.split, "
             "which tk-assign-thread-layouts records)";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

bool TilePlacement::readOperandConversion(Operation *op,
                                          tk::warp::OperandLayoutAttr layout) {
  auto fail = [&](StringRef why) {
    op->emitOpError(passName()) << ": thread layout " << layout << " " << why;
    return false;
  };
  if (!isa<tk::warp::ConvertLayoutOp>(op))
    return fail("is the result of a dot operand's conversion "
                "(tkw.convert_layout)");
  if (!onThreads())
    return fail("needs a GPU program (the CPU form keeps tiles in memory)");
  FailureOr<tk::DotOp> dot = recordedProduct(op, layout.getProduct());
  if (failed(dot))
    return false;
  std::optional<tk::MatrixUnit::HeldProduct> product = heldProduct(*dot);
  unsigned index = layout.getOperand();
  std::optional<tk::SharedLayout> unitLayout =
      matrixUnit->operandLayout(*product, index);
  if (!unitLayout)
    return fail("is not a layout this matrix unit lays the product's "
                "operands out in");
  // The unit's reads (ldmatrix, wgmma's descriptors, a fragment's loads)
  // assume its own layout: a recorded one that differs would be written
  // where the unit does not read.
  tk::SharedLayout recorded = sharedLayoutOf(layout);
  if (recorded != *unitLayout) {
    op->emitOpError(passName())
        << ": thread layout " << layout
        << " is not the layout the matrix unit reads this operand in: "
        << operandLayoutAttr(op->getContext(), layout.getProduct(), index,
                             *unitLayout);
    return false;
  }
  for (OpOperand &use : op->getResult(0).getUses()) {
    auto reader = dyn_cast<tk::DotOp>(use.getOwner());
    std::optional<tk::MatrixUnit::HeldProduct> read =
        reader ? heldProduct(reader) : std::nullopt;
    if (!read || use.getOperandNumber() != index ||
        !sameLayout(*read, *product))
      return fail("is read other than as operand " + std::to_string(index) +
                  " of held products laid out alike");
  }
  // Its writers, compared with the ones the lowering takes once the rings
  // are read too (checkOperandWrites).
  std::optional<StoreLayout> written;
  if (auto acc = dyn_cast_if_present<tk::warp::AccumulatorLayoutAttr>(
          layout.getWritten())) {
    FailureOr<tk::DotOp> owner = recordedProduct(op, acc.getProduct());
    if (failed(owner))
      return false;
    written = StoreLayout{*owner, 0};
  } else if (auto runs = dyn_cast_if_present<tk::warp::RunsLayoutAttr>(
                 layout.getWritten())) {
    if (runs.getThreads() != numThreads)
      return fail("is for another number of threads");
    written = StoreLayout{{}, runs.getWidth()};
  }
  operandConversions[op] = {*dot, index, recorded, written};
  return true;
}

bool TilePlacement::readStoreLayout(Operation *access, Attribute layout) {
  auto fail = [&](StringRef why) {
    access->emitOpError(passName())
        << ": thread layout " << layout << " " << why;
    return false;
  };
  auto store = dyn_cast<tk::StoreOp>(access);
  auto check = dyn_cast<tk::AssertOp>(access);
  StringRef noun = store ? "a store" : check ? "an assert" : "an atomic";
  auto type =
      dyn_cast<RankedTensorType>(store   ? store.getValue().getType()
                                 : check ? check.getCondition().getType()
                                         : access->getResult(0).getType());
  if (!type)
    return fail(("is on " + noun + " of no tile").str());
  if (!onThreads())
    return fail("needs a GPU program (the CPU form stores in loop nests)");
  if (auto acc = dyn_cast<tk::warp::AccumulatorLayoutAttr>(layout);
      acc && store) {
    FailureOr<tk::DotOp> dot = recordedProduct(store, acc.getProduct());
    if (failed(dot))
      return false;
    storeLayouts[store] = StoreLayout{*dot, 0};
    return true;
  }
  auto runs = dyn_cast<tk::warp::RunsLayoutAttr>(layout);
  if (!runs)
    return fail(
        store
            ? "is not one a store visits its tile in (#tkw.runs or "
              "#tkw.accumulator)"
            : ("is not one " + noun + " visits its tile in (#tkw.runs)").str());
  if (StringRef misfit = runsMisfit(runs, type); !misfit.empty())
    return fail(misfit);
  storeLayouts[access] = StoreLayout{{}, runs.getWidth()};
  return true;
}

StringRef TilePlacement::runsMisfit(tk::warp::RunsLayoutAttr runs,
                                    RankedTensorType type) {
  if (runs.getThreads() != numThreads)
    return "is for another number of threads";
  // Runs of a row, and, but for single elements, as many for every thread
  // (what forEachIndex's loop takes).
  int64_t width = runs.getWidth();
  if (type.getRank() == 0
          ? width != 1
          : type.getShape().back() % width != 0 ||
                (width > 1 &&
                 type.getNumElements() % (width * numThreads) != 0))
    return "does not spread this tile over the threads in whole runs";
  return "";
}

WalkResult
TilePlacement::refuseUnlessOwners(Operation *op, const StoreLayout &recorded,
                                  const std::optional<StoreLayout> &owners,
                                  StringRef ownersAre, StringRef readsNone) {
  if (owners
          ? owners->product == recorded.product && owners->run == recorded.run
          : !recorded.product)
    return WalkResult::advance();
  InFlightDiagnostic diag = op->emitOpError(passName())
                            << ": thread layout " << storeLayoutAttr(recorded);
  if (owners)
    diag << " " << ownersAre << ": " << storeLayoutAttr(*owners);
  else
    diag << " " << readsNone;
  return WalkResult::interrupt();
}

bool TilePlacement::readSharedWrites(Operation *op, Attribute written) {
  auto fail = [&](StringRef why) {
    op->emitOpError(passName())
        << ": thread layout "
        << tk::warp::SharedLayoutAttr::get(op->getContext(), written) << " "
        << why;
    return false;
  };
  if (!onThreads())
    return fail("needs a GPU program (on the CPU one thread writes every "
                "element)");
  if (auto acc = dyn_cast<tk::warp::AccumulatorLayoutAttr>(written)) {
    if (isa<tk::DotOp>(op))
      return fail("names registers; a product no matrix unit computes is "
                  "written by runs of its elements");
    FailureOr<tk::DotOp> dot = recordedProduct(op, acc.getProduct());
    if (failed(dot))
      return false;
    sharedWrites[op] = StoreLayout{*dot, 0};
    return true;
  }
  auto runs = cast<tk::warp::RunsLayoutAttr>(written);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (StringRef misfit = runsMisfit(runs, type); !misfit.empty())
    return fail(misfit);
  sharedWrites[op] = StoreLayout{{}, runs.getWidth()};
  return true;
}

bool TilePlacement::readCarriedWrites(Operation *op, Value tile,
                                      Attribute layout) {
  auto fail = [&](StringRef why) {
    op->emitOpError(passName()) << ": thread layout " << layout << " " << why;
    return false;
  };
  auto loop = dyn_cast<scf::ForOp>(op);
  if (!onThreads())
    return fail("needs a GPU program (on the CPU one thread writes every "
                "element)");
  auto shared = dyn_cast<tk::warp::SharedLayoutAttr>(layout);
  auto runs =
      shared
          ? dyn_cast_if_present<tk::warp::RunsLayoutAttr>(shared.getWritten())
          : nullptr;
  if (!runs)
    return fail(loop ? "is not one a tile carried in workgroup memory has "
                       "(#tkw.shared written by #tkw.runs)"
                     : "is not one an if's tile result has (#tkw.shared "
                       "written by #tkw.runs)");
  if (loop &&
      !carriedInBuffer(loop, cast<BlockArgument>(tile).getArgNumber() - 1))
    return fail("is for a tile the loop carries in workgroup memory; this "
                "argument is not one (a scalar, a pointer walk or a tile "
                "held in registers)");
  if (!isTile(tile.getType()))
    return fail("is for a tile result");
  if (StringRef misfit =
          runsMisfit(runs, cast<RankedTensorType>(tile.getType()));
      !misfit.empty())
    return fail(misfit);
  carriedWrites[tile] = runs.getWidth();
  return true;
}

LogicalResult TilePlacement::checkCarriedWrites() {
  if (!onThreads())
    return success();
  // `value`, written into the buffer of `tile` by `op`, by the runs
  // recorded: it may not be computed from registers, whose owners would
  // write it where they are.
  auto check = [&](Operation *op, Value tile, Value value,
                   StringRef what) -> WalkResult {
    if (!carriedWrites.count(tile)) {
      op->emitOpError(passName())
          << ": " << what
          << " needs its writers (#tkw.shared<written = #tkw.runs<...>>, "
             "which tk-assign-thread-layouts records)";
      return WalkResult::interrupt();
    }
    if (residentOwner(value)) {
      op->emitOpError(passName())
          << ": " << what
          << " is written from registers; the threads write it by the runs "
             "its #tkw.shared records";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  };
  WalkResult walk = source.walk([&](Operation *op) -> WalkResult {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i) {
        if (!carriedInBuffer(loop, i))
          continue;
        Value arg = loop.getRegionIterArgs()[i];
        std::string what = "iteration argument " + std::to_string(i) +
                           ", a tile carried in workgroup memory,";
        if (check(loop, arg, loop.getInitArgs()[i], what).wasInterrupted() ||
            check(loop, arg, yield.getOperand(i), what).wasInterrupted())
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    auto branch = dyn_cast<scf::IfOp>(op);
    if (!branch)
      return WalkResult::advance();
    for (auto [i, result] : llvm::enumerate(branch.getResults())) {
      if (!isTile(result.getType()))
        continue;
      std::string what = "tile result " + std::to_string(i);
      for (Region *side : {&branch.getThenRegion(), &branch.getElseRegion()})
        if (!side->empty() &&
            check(branch, result, side->front().getTerminator()->getOperand(i),
                  what)
                .wasInterrupted())
          return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult TilePlacement::checkSharedWrites() {
  if (!onThreads())
    return success();
  WalkResult walk = source.walk([&](Operation *op) -> WalkResult {
    if (!writesShared(op))
      return WalkResult::advance();
    auto it = sharedWrites.find(op);
    if (it == sharedWrites.end()) {
      op->emitOpError(passName())
          << (isa<tk::DotOp>(op)
                  ? ": a product no matrix unit computes needs its writers"
                  : ": an element-wise tile kept in workgroup memory needs "
                    "its writers")
          << " (#tkw.shared<written = ...>, which tk-assign-thread-layouts "
             "records)";
      return WalkResult::interrupt();
    }
    // A tile computed from registers is written where they are; any other
    // takes the runs it records.
    return refuseUnlessOwners(
        op, it->second, ownersOfWrites(op),
        "is not where the registers it is computed from are",
        "names registers this tile is not computed from");
  });
  return failure(walk.wasInterrupted());
}

LogicalResult TilePlacement::checkStoreLayouts() {
  if (!onThreads())
    return success();
  WalkResult atomics = source.walk([&](Operation *op) -> WalkResult {
    auto check = dyn_cast<tk::AssertOp>(op);
    bool onTile = check ? isTile(check.getCondition().getType())
                        : isa<tk::AtomicRMWOp, tk::AtomicCASOp>(op) &&
                              isTile(op->getResult(0).getType());
    if (!onTile || storeLayouts.count(op))
      return WalkResult::advance();
    op->emitOpError(passName())
        << (check ? ": an assert on a tile" : ": an atomic on a tile")
        << " needs its thread layout (tkw.layout, which "
           "tk-assign-thread-layouts records)";
    return WalkResult::interrupt();
  });
  if (atomics.wasInterrupted())
    return failure();
  WalkResult walk = source.walk([&](tk::StoreOp store) -> WalkResult {
    if (!isTile(store.getValue().getType()))
      return WalkResult::advance();
    auto it = storeLayouts.find(store);
    if (it == storeLayouts.end()) {
      store.emitOpError(passName())
          << ": a store of a tile needs its thread layout (tkw.layout, "
             "which tk-assign-thread-layouts records)";
      return WalkResult::interrupt();
    }
    // A store reading registers visits them where they are; any other
    // takes the runs it records.
    return refuseUnlessOwners(store, it->second, ownersStoreLayout(store),
                              "is not where the registers it stores are",
                              "names registers this store does not read");
  });
  return failure(walk.wasInterrupted());
}

tk::warp::OperandLayoutAttr operandLayoutAttr(MLIRContext *ctx, int64_t product,
                                              unsigned operand,
                                              const tk::SharedLayout &layout,
                                              Attribute written) {
  return tk::warp::OperandLayoutAttr::get(
      ctx, product, operand, layout.tile, layout.tilesAlong, layout.contiguous,
      layout.vec, layout.perPhase, layout.maxPhase, layout.alignment, written);
}

tk::SharedLayout sharedLayoutOf(tk::warp::OperandLayoutAttr attr) {
  tk::SharedLayout layout;
  layout.tile = {attr.getTile()[0], attr.getTile()[1]};
  layout.tilesAlong = attr.getTilesAlong();
  layout.contiguous = attr.getContiguous();
  layout.vec = attr.getVec();
  layout.perPhase = attr.getPerPhase();
  layout.maxPhase = attr.getMaxPhase();
  layout.alignment = attr.getAlign();
  return layout;
}

} // namespace mlir::tk_to_loops
