//===- Fragments.cpp - a matrix intrinsic's fragment as IR ----------------===//
//===----------------------------------------------------------------------===//

#include "tk/core/Conversion/Fragments.h"
#include "tk/core/CompileSupport.h"
#include "tk/core/Conversion/Folding.h"
#include "tk/core/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

#include <map>
#include <vector>

using namespace mlir;

namespace {

Value constant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// `index`'s coordinates in a grid walked with order[0] fastest, as values
/// (null for a dimension of extent 1). `index` is below the grid's size.
std::array<Value, 2> coordinates(OpBuilder &b, Location loc, Value index,
                                 const std::array<int64_t, 2> &grid,
                                 const std::array<int64_t, 2> &order) {
  std::array<Value, 2> at;
  int64_t fast = order[0], slow = order[1];
  if (grid[slow] > 1)
    at[slow] = grid[fast] > 1
                   ? Value(arith::DivUIOp::create(b, loc, index,
                                                  constant(b, loc, grid[fast])))
                   : index;
  if (grid[fast] > 1)
    at[fast] = grid[slow] > 1
                   ? Value(arith::RemUIOp::create(b, loc, index,
                                                  constant(b, loc, grid[fast])))
                   : index;
  return at;
}

Value scaled(OpBuilder &b, Location loc, Value value, int64_t factor) {
  if (!value || factor == 1)
    return value;
  return arith::MulIOp::create(b, loc, value, constant(b, loc, factor));
}

/// base + term, either of which may be null (nothing to add).
Value plus(OpBuilder &b, Location loc, Value base, Value term) {
  if (!base || !term)
    return base ? base : term;
  return arith::AddIOp::create(b, loc, base, term);
}

Value plus(OpBuilder &b, Location loc, Value base, int64_t term) {
  return term ? plus(b, loc, base, constant(b, loc, term)) : base;
}

} // namespace

SmallVector<std::pair<Value, Value>>
tk::FragmentPlacement::positions(OpBuilder &b, Location loc, int64_t rowShift,
                                 int64_t colShift) const {
  // One value per distinct row and column, as a hand-written unit would.
  std::map<int64_t, Value> rows, cols;
  auto at = [&](std::map<int64_t, Value> &cache, Value base, int64_t offset) {
    Value &value = cache[offset];
    if (!value)
      value = plus(b, loc, base, offset);
    return value;
  };
  SmallVector<std::pair<Value, Value>> result;
  for (const std::array<int64_t, 2> &offset : offsets)
    result.push_back({at(rows, row, rowShift + offset[0]),
                      at(cols, col, colShift + offset[1])});
  return result;
}

SmallVector<Value> tk::FragmentPlacement::along(OpBuilder &b, Location loc,
                                                int dim, int64_t shift) const {
  std::map<int64_t, Value> made;
  SmallVector<Value> result;
  for (const std::array<int64_t, 2> &offset : offsets) {
    Value &value = made[shift + offset[dim]];
    if (!value)
      value = plus(b, loc, dim == 0 ? row : col, shift + offset[dim]);
    result.push_back(value);
  }
  return result;
}

tk::FragmentPlacement tk::FragmentPlacement::shifted(OpBuilder &b, Location loc,
                                                     Value rowOrigin,
                                                     Value colOrigin) const {
  FragmentPlacement moved = *this;
  moved.row = plus(b, loc, rowOrigin, row);
  moved.col = plus(b, loc, colOrigin, col);
  return moved;
}

FailureOr<tk::FragmentPlacement>
tk::placeFragment(OpBuilder &b, Location loc, const FragmentLayout &layout,
                  int64_t rows, int64_t cols, Value originRow, Value originCol,
                  Value warp, Value lane) {
  std::array<int64_t, 2> extent = {rows, cols}, share{};
  for (int d = 0; d < 2; ++d) {
    share[d] = extent[d] / layout.warpsPerFragment[d];
    if (share[d] < layout.sizePerLane[d] * layout.lanesPerWarp[d])
      return failure();
  }
  std::array<Value, 2> warpAt = {Value(), Value()};
  if (layout.numWarps() > 1) {
    if (!warp)
      return failure();
    warpAt = coordinates(b, loc, warp, layout.warpsPerFragment, layout.order);
  }
  std::array<Value, 2> laneAt =
      coordinates(b, loc, lane, layout.lanesPerWarp, layout.order);
  FragmentPlacement placement;
  std::array<Value, 2> origin = {originRow, originCol};
  std::array<Value, 2> start;
  // The fragment's origin, the warp's block, the lane's start.
  for (int d = 0; d < 2; ++d) {
    start[d] = plus(b, loc, origin[d], scaled(b, loc, warpAt[d], share[d]));
    start[d] = plus(b, loc, start[d],
                    scaled(b, loc, laneAt[d], layout.sizePerLane[d]));
  }
  placement.row = start[0] ? start[0] : constant(b, loc, 0);
  placement.col = start[1] ? start[1] : constant(b, loc, 0);
  placement.offsets = layout.elementsOf(/*warp=*/0, /*lane=*/0, rows, cols);
  return placement;
}

int64_t tk::rowLaneMask(const FragmentLayout &layout) {
  // Lanes along columns are the low bits of the lane index when columns are
  // walked first, the high bits otherwise.
  int64_t alongColumns = layout.lanesPerWarp[1];
  if (layout.order[0] == 1)
    return alongColumns - 1;
  return (alongColumns - 1) * layout.lanesPerWarp[0];
}

SmallVector<std::array<int64_t, 2>>
tk::HeldLayout::elementsOf(int64_t thread, int64_t numThreads, int64_t m,
                           int64_t n) const {
  int64_t warpSize = fragment.numLanes();
  int64_t group = thread / groupThreads;
  int64_t inGroup = thread % groupThreads;
  // The origins of this thread's tiles, in register order.
  SmallVector<std::array<int64_t, 2>> origins;
  if (cyclic) {
    int64_t tilesN = n / tile[1];
    int64_t numTiles = (m / tile[0]) * tilesN;
    // A group wider than the threads deals no tile.
    int64_t numGroups = numThreads / groupThreads;
    for (int64_t t = group; numGroups > 0 && t < numTiles; t += numGroups)
      origins.push_back({t / tilesN * tile[0], t % tilesN * tile[1]});
  } else {
    int64_t rowBase = group / groups[1] * tilesPerGroup[0] * tile[0];
    int64_t colBase = group % groups[1] * tilesPerGroup[1] * tile[1];
    for (int64_t r = 0; r < tilesPerGroup[0]; ++r)
      for (int64_t c = 0; c < tilesPerGroup[1]; ++c)
        origins.push_back({rowBase + r * tile[0], colBase + c * tile[1]});
  }
  SmallVector<std::array<int64_t, 2>> elements;
  for (const std::array<int64_t, 2> &origin : origins)
    for (const std::array<int64_t, 2> &at : fragment.elementsOf(
             inGroup / warpSize, inGroup % warpSize, tile[0], tile[1]))
      elements.push_back({origin[0] + at[0], origin[1] + at[1]});
  return elements;
}

FailureOr<SmallVector<std::pair<Value, Value>>>
tk::HeldLayout::positions(OpBuilder &b, Location loc, Value thread,
                          int64_t numThreads, int64_t m, int64_t n) const {
  SmallVector<std::pair<Value, Value>> result;
  if (cyclic) {
    int64_t numTiles = (m / tile[0]) * (n / tile[1]);
    int64_t perGroup = numTiles / (numThreads / groupThreads);
    for (int64_t j = 0; j < perGroup; ++j) {
      FailureOr<FragmentPlacement> placed = placeInTile(
          b, loc, thread,
          tileOrigin(b, loc, dealtTile(b, loc, thread, j, numThreads), n));
      if (failed(placed))
        return failure();
      llvm::append_range(result, placed->positions(b, loc));
    }
    return result;
  }
  // Blocks: the fragment at (0, 0) moved to this group's block; every tile
  // of the block lies a constant shift further.
  FailureOr<HeldBlockPlacement> block = placeBlock(b, loc, thread);
  if (failed(block))
    return failure();
  FragmentPlacement moved =
      block->accumulator.shifted(b, loc, block->rowBase, block->colBase);
  for (int64_t r = 0; r < tilesPerGroup[0]; ++r) {
    SmallVector<Value> rows = moved.along(b, loc, 0, r * tile[0]);
    for (int64_t c = 0; c < tilesPerGroup[1]; ++c)
      for (auto [row, col] :
           llvm::zip_equal(rows, moved.along(b, loc, 1, c * tile[1])))
        result.push_back({row, col});
  }
  return result;
}

Value tk::HeldLayout::dealtTile(OpBuilder &b, Location loc, Value thread,
                                int64_t j, int64_t numThreads) const {
  assert(cyclic && "only tiles dealt in turn have a turn");
  // Tile j of a group is tile group + j * numGroups of the product.
  Value group =
      arith::DivUIOp::create(b, loc, thread, constant(b, loc, groupThreads));
  return plus(b, loc, group, j * (numThreads / groupThreads));
}

std::pair<Value, Value> tk::HeldLayout::tileOrigin(OpBuilder &b, Location loc,
                                                   Value tileIndex,
                                                   int64_t n) const {
  int64_t tilesN = n / tile[1];
  Value row =
      arith::DivUIOp::create(b, loc, tileIndex, constant(b, loc, tilesN));
  Value col =
      arith::RemUIOp::create(b, loc, tileIndex, constant(b, loc, tilesN));
  return {arith::MulIOp::create(b, loc, row, constant(b, loc, tile[0])),
          arith::MulIOp::create(b, loc, col, constant(b, loc, tile[1]))};
}

FailureOr<tk::FragmentPlacement>
tk::HeldLayout::placeInTile(OpBuilder &b, Location loc, Value thread,
                            std::pair<Value, Value> origin) const {
  int64_t warpSize = fragment.numLanes();
  Value inGroup =
      arith::RemUIOp::create(b, loc, thread, constant(b, loc, groupThreads));
  Value warp =
      fragment.numWarps() > 1
          ? arith::DivUIOp::create(b, loc, inGroup, constant(b, loc, warpSize))
          : Value();
  Value lane =
      groupThreads == warpSize
          ? inGroup
          : arith::RemUIOp::create(b, loc, inGroup, constant(b, loc, warpSize));
  return placeFragment(b, loc, fragment, tile[0], tile[1], origin.first,
                       origin.second, warp, lane);
}

FailureOr<tk::HeldBlockPlacement>
tk::HeldLayout::placeBlock(OpBuilder &b, Location loc, Value thread) const {
  assert(!cyclic && "tiles dealt in turn have no block");
  int64_t warpSize = fragment.numLanes();
  auto index = [&](int64_t v) { return constant(b, loc, v); };
  Value inGroup = arith::RemUIOp::create(b, loc, thread, index(groupThreads));
  Value group = arith::DivUIOp::create(b, loc, thread, index(groupThreads));
  Value groupRow = arith::DivUIOp::create(b, loc, group, index(groups[1]));
  Value groupCol = arith::RemUIOp::create(b, loc, group, index(groups[1]));
  HeldBlockPlacement place;
  Value warp = fragment.numWarps() > 1
                   ? arith::DivUIOp::create(b, loc, inGroup, index(warpSize))
                   : Value();
  place.lane = groupThreads == warpSize
                   ? inGroup
                   : arith::RemUIOp::create(b, loc, inGroup, index(warpSize));
  FailureOr<FragmentPlacement> placed = placeFragment(
      b, loc, fragment, tile[0], tile[1], Value(), Value(), warp, place.lane);
  if (failed(placed))
    return failure();
  place.accumulator = *placed;
  place.rowBase = arith::MulIOp::create(b, loc, groupRow,
                                        index(tilesPerGroup[0] * tile[0]));
  place.colBase = arith::MulIOp::create(b, loc, groupCol,
                                        index(tilesPerGroup[1] * tile[1]));
  return place;
}

std::optional<tk::RegisterRows>
tk::HeldLayout::rowsOf(int64_t numThreads, int64_t m, int64_t n) const {
  int64_t warpSize = fragment.numLanes();
  RegisterRows rows;
  // Per row: the first thread seen holding it, and how many hold it.
  std::vector<int64_t> firstHolder(m, -1), holders(m, 0);
  for (int64_t thread = 0; thread < numThreads; ++thread) {
    SmallVector<std::array<int64_t, 2>> elements =
        elementsOf(thread, numThreads, m, n);
    if (elements.empty())
      return std::nullopt;
    SmallVector<int64_t> offsets;
    for (const std::array<int64_t, 2> &at : elements) {
      if (at[0] < 0 || at[0] >= m)
        return std::nullopt;
      offsets.push_back(at[0] - elements[0][0]);
    }
    if (thread == 0)
      rows.rowOfRegister = offsets;
    else if (offsets != rows.rowOfRegister)
      return std::nullopt;
    llvm::SmallDenseSet<int64_t> seen;
    for (const std::array<int64_t, 2> &at : elements) {
      int64_t row = at[0];
      if (!seen.insert(row).second)
        continue;
      ++holders[row];
      int64_t &first = firstHolder[row];
      if (first < 0) {
        first = thread;
        continue;
      }
      if (first / warpSize != thread / warpSize)
        return std::nullopt;
      rows.laneMask |= first ^ thread;
    }
  }
  // Every row is held by all the lanes its lane bits reach (what a
  // butterfly of shuffles over laneMask combines).
  int64_t perRow = int64_t(1) << llvm::popcount(uint64_t(rows.laneMask));
  for (int64_t count : holders)
    if (count != perRow)
      return std::nullopt;
  return rows;
}

std::optional<std::string>
tk::HeldLayout::uncovered(int64_t numThreads, int64_t m, int64_t n) const {
  std::vector<int64_t> count(m * n, 0);
  for (int64_t thread = 0; thread < numThreads; ++thread)
    for (const std::array<int64_t, 2> &at :
         elementsOf(thread, numThreads, m, n)) {
      if (at[0] < 0 || at[0] >= m || at[1] < 0 || at[1] >= n)
        return "thread " + std::to_string(thread) + " holds (" +
               std::to_string(at[0]) + ", " + std::to_string(at[1]) +
               "), outside the " + std::to_string(m) + "x" + std::to_string(n) +
               " product";
      ++count[at[0] * n + at[1]];
    }
  for (int64_t i = 0; i < m * n; ++i)
    if (count[i] != 1)
      return "(" + std::to_string(i / n) + ", " + std::to_string(i % n) +
             ") is held by " + std::to_string(count[i]) + " threads, not 1";
  return std::nullopt;
}

std::optional<std::string>
tk::heldLayoutMismatch(MLIRContext &context, const MatrixUnit &unit,
                       MatrixUnit::HeldProduct product,
                       const HeldLayout &layout) {
  context.loadDialect<arith::ArithDialect>();
  auto describe = [](int64_t thread, size_t i) {
    return "thread " + std::to_string(thread) + ", register " +
           std::to_string(i);
  };
  for (int64_t thread = 0; thread < product.numThreads; ++thread) {
    // Emitted with a constant thread id into a scratch module, then folded
    // op by op in program order.
    OpBuilder b(&context);
    Location loc = b.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToStart(module->getBody());
    product.threadId = arith::ConstantIndexOp::create(b, loc, thread);
    SmallVector<std::pair<Value, Value>> positions =
        unit.registerPositions(b, loc, product);
    SmallVector<Value> coordinates;
    for (auto [row, col] : positions)
      coordinates.append({row, col});
    std::string error;
    FailureOr<SmallVector<int64_t>> folded =
        foldToIntegers(*module->getBody(), coordinates, error);
    if (failed(folded))
      return "registerPositions of thread " + std::to_string(thread) + ": " +
             error;
    SmallVector<std::array<int64_t, 2>> stated =
        layout.elementsOf(thread, product.numThreads, product.m, product.n);
    if (stated.size() != positions.size())
      return "thread " + std::to_string(thread) + " has " +
             std::to_string(positions.size()) +
             " registers, the layout states " + std::to_string(stated.size());
    for (size_t i = 0; i < positions.size(); ++i) {
      int64_t row = (*folded)[2 * i], col = (*folded)[2 * i + 1];
      if (row != stated[i][0] || col != stated[i][1])
        return describe(thread, i) + " is at (" + std::to_string(row) + ", " +
               std::to_string(col) + "), the layout states (" +
               std::to_string(stated[i][0]) + ", " +
               std::to_string(stated[i][1]) + ")";
    }
  }
  return std::nullopt;
}

std::optional<std::string>
tk::emittedLayoutMismatch(MLIRContext &context, const MatrixUnit &unit,
                          MatrixUnit::HeldProduct product,
                          const HeldLayout &layout) {
  context.loadDialect<arith::ArithDialect, func::FuncDialect,
                      memref::MemRefDialect, scf::SCFDialect, LLVM::LLVMDialect,
                      gpu::GPUDialect>();
  int64_t m = product.m, n = product.n, k = product.k;
  for (int64_t thread = 0; thread < product.numThreads; ++thread) {
    std::string who = "thread " + std::to_string(thread);
    // emit for one constant thread into a function of scratch buffers.
    OpBuilder b(&context);
    Location loc = b.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToStart(module->getBody());
    auto buffer = [](int64_t rows, int64_t cols, Type element) -> Type {
      return MemRefType::get({rows, cols}, element);
    };
    auto function = func::FuncOp::create(
        b, loc, "product",
        b.getFunctionType({buffer(m, k, product.a), buffer(k, n, product.b),
                           buffer(m, n, product.accumulator)},
                          {}));
    Block *entry = function.addEntryBlock();
    b.setInsertionPointToStart(entry);
    Value zero =
        arith::ConstantOp::create(b, loc, b.getZeroAttr(product.accumulator));
    Value result = entry->getArgument(2);
    // Named: Product holds a function_ref, which must not outlive it.
    auto zeroAccumulator = [&](OpBuilder &, Location, Value, Value) {
      return zero;
    };
    MatrixUnit::Product emitted{entry->getArgument(0),
                                entry->getArgument(1),
                                result,
                                zeroAccumulator,
                                arith::ConstantIndexOp::create(b, loc, thread),
                                product.numThreads};
    if (failed(unit.emit(b, loc, emitted)))
      return "emit failed for " + who;
    func::ReturnOp::create(b, loc);
    // Every loop unrolled and the indices folded: each write of the result
    // is then a memref.store at constant indices.
    for (bool unrolled = true; unrolled;) {
      PassManager pm(&context);
      pm.addPass(tk::createCanonicalizer());
      if (failed(pm.run(*module)))
        return "the canonicalizer failed on the product of " + who;
      SmallVector<scf::ForOp> loops;
      module->walk([&](scf::ForOp loop) { loops.push_back(loop); });
      unrolled = false;
      for (scf::ForOp loop : loops) {
        std::optional<APInt> trips = loop.getStaticTripCount();
        if (!trips)
          continue;
        // A product's loops run over its tiles and k steps: more trips
        // than that is a loop this check cannot unroll.
        if (trips->getZExtValue() > uint64_t(m * n * k))
          return "the product of " + who + " has a loop of " +
                 std::to_string(trips->getZExtValue()) + " trips";
        if (succeeded(loopUnrollFull(loop))) {
          unrolled = true;
          break;
        }
      }
    }
    SmallVector<std::array<int64_t, 2>> written;
    std::string problem;
    module->walk([&](memref::StoreOp store) {
      if (store.getMemRef() != result)
        return;
      std::array<int64_t, 2> at = {-1, -1};
      for (auto [i, index] : llvm::enumerate(store.getIndices()))
        if (std::optional<int64_t> value = getConstantIntValue(index))
          at[i] = *value;
      if (at[0] < 0 || at[1] < 0)
        problem = who + " writes the result at an index that does not fold";
      written.push_back(at);
    });
    if (!problem.empty())
      return problem;
    SmallVector<std::array<int64_t, 2>> stated =
        layout.elementsOf(thread, product.numThreads, m, n);
    llvm::sort(written);
    llvm::sort(stated);
    if (written != stated) {
      auto at = [](const std::array<int64_t, 2> &element) {
        return "(" + std::to_string(element[0]) + ", " +
               std::to_string(element[1]) + ")";
      };
      size_t same = 0;
      while (same < written.size() && same < stated.size() &&
             written[same] == stated[same])
        ++same;
      std::string text = who + " writes " + std::to_string(written.size()) +
                         " elements, the layout states " +
                         std::to_string(stated.size());
      if (same < written.size() && same < stated.size())
        text += "; in order, it writes " + at(written[same]) +
                " where the layout states " + at(stated[same]);
      return text;
    }
  }
  return std::nullopt;
}

FailureOr<SmallVector<int64_t>>
tk::foldToIntegers(Block &block, ValueRange values, std::string &error) {
  DenseMap<Value, Attribute> known;
  for (Operation &op : block) {
    SmallVector<Attribute> operands;
    for (Value v : op.getOperands())
      operands.push_back(known.lookup(v));
    SmallVector<OpFoldResult> folded;
    if (failed(op.fold(operands, folded)) || folded.size() != 1) {
      error = op.getName().getStringRef().str() + " does not fold";
      return failure();
    }
    known[op.getResult(0)] = isa<Attribute>(folded[0])
                                 ? cast<Attribute>(folded[0])
                                 : known.lookup(cast<Value>(folded[0]));
  }
  SmallVector<int64_t> integers;
  for (Value v : values) {
    auto attr = dyn_cast_or_null<IntegerAttr>(known.lookup(v));
    if (!attr) {
      error = "a value does not fold to an integer constant";
      return failure();
    }
    integers.push_back(attr.getInt());
  }
  return integers;
}

int64_t tk::SharedLayout::offset(int64_t row, int64_t col,
                                 std::array<int64_t, 2> shape) const {
  int64_t tilesDown = shape[0] / tile[0], tilesAcross = shape[1] / tile[1];
  int64_t tileRow = row / tile[0], tileCol = col / tile[1];
  int64_t tileIndex = tilesAlong == 1 ? tileRow * tilesAcross + tileCol
                                      : tileCol * tilesDown + tileRow;
  row %= tile[0];
  col %= tile[1];
  int64_t line = contiguous == 1 ? row : col,
          along = contiguous == 1 ? col : row;
  int64_t width = tile[contiguous];
  int64_t chunk = (along / vec) ^ ((line / perPhase) % maxPhase);
  return tileIndex * tile[0] * tile[1] + line * width + chunk * vec +
         along % vec;
}

Value tk::SharedLayout::offset(OpBuilder &b, Location loc, Value row, Value col,
                               std::array<int64_t, 2> shape) const {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // Only the arithmetic the layout needs: one tile has no tile index, an
  // unswizzled line no chunks.
  Value base;
  if (tile != shape) {
    auto tileOf = [&](Value v, int dim) -> Value {
      return tile[dim] == shape[dim]
                 ? Value()
                 : arith::DivUIOp::create(b, loc, v, index(tile[dim]));
    };
    // The tiles before (tileRow, tileCol) in the tiles' order: `outer`
    // whole runs of `innerCount` tiles, then `inner` more.
    int outerDim = tilesAlong == 1 ? 0 : 1, innerDim = 1 - outerDim;
    Value outer = tileOf(outerDim == 0 ? row : col, outerDim);
    Value inner = tileOf(innerDim == 0 ? row : col, innerDim);
    int64_t innerCount = shape[innerDim] / tile[innerDim];
    Value tileIndex = inner;
    if (outer) {
      Value skipped = arith::MulIOp::create(b, loc, outer, index(innerCount));
      tileIndex =
          inner ? arith::AddIOp::create(b, loc, skipped, inner) : skipped;
    }
    base = arith::MulIOp::create(b, loc, tileIndex, index(tile[0] * tile[1]));
  }
  // In-tile coordinates, where the tile does not span its dimension.
  Value tileRow = tile[0] == shape[0]
                      ? row
                      : arith::RemUIOp::create(b, loc, row, index(tile[0]));
  Value tileCol = tile[1] == shape[1]
                      ? col
                      : arith::RemUIOp::create(b, loc, col, index(tile[1]));
  Value line = contiguous == 1 ? tileRow : tileCol;
  Value along = contiguous == 1 ? tileCol : tileRow;
  // Along the line, the coordinate before its tile's cut: a tile's width is
  // a multiple of the chunk.
  Value wholeAlong = contiguous == 1 ? col : row;
  Value chunk;
  if (maxPhase > 1) {
    chunk = arith::DivUIOp::create(b, loc, along, index(vec));
    Value phase = line;
    if (perPhase > 1)
      phase = arith::DivUIOp::create(b, loc, phase, index(perPhase));
    // A line index cut to a tile of no more lines than the phases cycle
    // over needs no wrap.
    int lineDim = 1 - contiguous;
    if (tile[lineDim] == shape[lineDim] || tile[lineDim] > perPhase * maxPhase)
      phase = arith::RemUIOp::create(b, loc, phase, index(maxPhase));
    chunk = arith::XOrIOp::create(b, loc, chunk, phase);
  }
  Value start = arith::MulIOp::create(b, loc, line, index(tile[contiguous]));
  Value inLine = along;
  if (chunk)
    inLine = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, chunk, index(vec)),
        arith::RemUIOp::create(b, loc, wholeAlong, index(vec)));
  if (base)
    start = arith::AddIOp::create(b, loc, base, start);
  return arith::AddIOp::create(b, loc, start, inLine);
}

std::optional<std::string>
tk::SharedLayout::misfit(std::array<int64_t, 2> shape) const {
  if (contiguous != 0 && contiguous != 1)
    return "its contiguous dimension is neither 0 nor 1";
  if (tilesAlong != 0 && tilesAlong != 1)
    return "its tiles run along neither dimension 0 nor 1";
  for (int dim : {0, 1})
    if (tile[dim] <= 0 || shape[dim] % tile[dim] != 0)
      return "its tiles of " + std::to_string(tile[0]) + "x" +
             std::to_string(tile[1]) + " do not divide an operand of " +
             std::to_string(shape[0]) + "x" + std::to_string(shape[1]);
  if (vec <= 0 || perPhase <= 0 || maxPhase <= 0 ||
      !llvm::isPowerOf2_64(maxPhase))
    return "its swizzle needs positive chunks and phases, a power of two "
           "of them";
  // A chunk index XORed with a phase stays in the line.
  if (maxPhase > 1 &&
      (tile[contiguous] % vec != 0 || (tile[contiguous] / vec) % maxPhase != 0))
    return "its lines of " + std::to_string(tile[contiguous]) +
           " elements do not hold " + std::to_string(maxPhase) + " chunks of " +
           std::to_string(vec);
  if (alignment <= 0 || !llvm::isPowerOf2_64(alignment))
    return "its alignment is not a power of two";
  return std::nullopt;
}

int64_t tk::SharedLayout::consecutiveRun() const {
  return maxPhase > 1 ? vec : tile[contiguous];
}
