//===- LayoutPresets.cpp - the linear layouts GPU code starts from --------===//
//
// Blocked, sliced and broadcast tile layouts, the matrix units' fragments
// and swizzled shared memory, each built from bases or products of 1-D
// identities. The facts each follows are in LayoutPresets.h.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout/LayoutPresets.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/ADT/bit.h"

#include <optional>

using namespace tk;

namespace {

using Bases = std::vector<std::vector<int32_t>>;

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

bool isPowerOf2(int64_t value) {
  return value > 0 && llvm::has_single_bit(uint64_t(value));
}

int32_t log2Of(int64_t powerOf2) {
  return int32_t(llvm::countr_zero(uint64_t(powerOf2)));
}

/// Why `sizes` (named `what`) cannot size a layout of `rank` dimensions.
std::optional<std::string> sizesProblem(llvm::ArrayRef<int32_t> sizes,
                                        size_t rank, llvm::StringRef what) {
  if (sizes.size() != rank)
    return (what + " has " + llvm::Twine(sizes.size()) +
            " dimensions, expected " + llvm::Twine(rank))
        .str();
  for (auto [dim, size] : llvm::enumerate(sizes))
    if (!isPowerOf2(size))
      return (what + "[" + llvm::Twine(dim) + "] is " + llvm::Twine(size) +
              ", expected a power of two")
          .str();
  return std::nullopt;
}

/// Why `order` is not a permutation of 0 .. rank - 1.
std::optional<std::string> orderProblem(llvm::ArrayRef<int32_t> order,
                                        size_t rank) {
  llvm::SmallVector<bool, 4> seen(rank, false);
  if (order.size() != rank)
    return "order has " + std::to_string(order.size()) +
           " dimensions, expected " + std::to_string(rank);
  for (int32_t dim : order) {
    if (dim < 0 || size_t(dim) >= rank || seen[dim])
      return "order is not a permutation of 0 to " + std::to_string(rank - 1);
    seen[dim] = true;
  }
  return std::nullopt;
}

/// Why `layout`'s outputs are not dim0, dim1, ... in order.
std::optional<std::string> standardOutsProblem(const LinearLayout &layout) {
  std::vector<std::string> names = layout.getOutDimNames();
  if (names != standardOutDimNames(int32_t(names.size())))
    return "expected output dimensions dim0, dim1, ... in order";
  return std::nullopt;
}

/// A fragment: register and lane bases onto rows x cols, one warp.
LinearLayout fragment(Bases registers, Bases lanes, int32_t rows, int32_t cols,
                      Bases warps = {}) {
  return LinearLayout({{kRegisterDim.str(), std::move(registers)},
                       {kLaneDim.str(), std::move(lanes)},
                       {kWarpDim.str(), std::move(warps)}},
                      {{"dim0", rows}, {"dim1", cols}});
}

/// The lanes of mma.sync and wgmma: threadID_in_group (lane % 4) steps two
/// columns, groupID (lane / 4) one row.
Bases mmaLanes() { return {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}; }

} // namespace

std::string tk::standardOutDimName(int32_t index) {
  return "dim" + std::to_string(index);
}

std::vector<std::string> tk::standardOutDimNames(int32_t rank) {
  std::vector<std::string> names;
  for (int32_t dim = 0; dim < rank; ++dim)
    names.push_back(standardOutDimName(dim));
  return names;
}

//===----------------------------------------------------------------------===//
// Layouts of tiles in registers
//===----------------------------------------------------------------------===//

llvm::Expected<LinearLayout> tk::blockedLayout(
    llvm::ArrayRef<int32_t> shape, llvm::ArrayRef<int32_t> sizePerThread,
    llvm::ArrayRef<int32_t> threadsPerWarp, llvm::ArrayRef<int32_t> warpsPerCTA,
    llvm::ArrayRef<int32_t> order) {
  size_t rank = shape.size();
  if (rank == 0)
    return makeError("blockedLayout: expected a tile of at least one "
                     "dimension");
  for (auto [sizes, what] :
       {std::pair{shape, "shape"}, std::pair{sizePerThread, "sizePerThread"},
        std::pair{threadsPerWarp, "threadsPerWarp"},
        std::pair{warpsPerCTA, "warpsPerCTA"}})
    if (std::optional<std::string> problem = sizesProblem(sizes, rank, what))
      return makeError("blockedLayout: " + *problem);
  if (std::optional<std::string> problem = orderProblem(order, rank))
    return makeError("blockedLayout: " + *problem);
  // Each input and output dimension must stay within 2^30 elements.
  int32_t registerBits = 0, laneBits = 0, warpBits = 0;
  for (size_t dim = 0; dim < rank; ++dim) {
    int32_t coverBits = log2Of(sizePerThread[dim]) +
                        log2Of(threadsPerWarp[dim]) + log2Of(warpsPerCTA[dim]);
    registerBits += log2Of(sizePerThread[dim]) +
                    std::max(0, log2Of(shape[dim]) - coverBits);
    laneBits += log2Of(threadsPerWarp[dim]);
    warpBits += log2Of(warpsPerCTA[dim]);
    if (coverBits > 30)
      return makeError("blockedLayout: a CTA covers more than 2^30 elements "
                       "of dimension " +
                       llvm::Twine(dim));
  }
  if (registerBits > 30 || laneBits > 30 || warpBits > 30)
    return makeError("blockedLayout: more than 2^30 registers, lanes or "
                     "warps");

  // The CTA's tile, dimensions fastest first: registers inside lanes inside
  // warps.
  LinearLayout layout;
  for (auto [inDim, sizes] : {std::pair{kRegisterDim, sizePerThread},
                              std::pair{kLaneDim, threadsPerWarp},
                              std::pair{kWarpDim, warpsPerCTA}}) {
    LinearLayout level;
    for (int32_t dim : order)
      level *=
          LinearLayout::identity1D(sizes[dim], inDim, standardOutDimName(dim));
    layout *= level;
  }
  // A tile larger than the CTA's: repeats in registers, the fastest
  // dimension's first.
  for (int32_t dim : order) {
    int64_t cover = layout.getOutDimSize(standardOutDimName(dim));
    if (cover < shape[dim])
      layout *= LinearLayout::identity1D(int32_t(shape[dim] / cover),
                                         kRegisterDim, standardOutDimName(dim));
  }
  layout = layout.transposeOuts(standardOutDimNames(int32_t(rank)));
  // A tile smaller than the CTA's: coordinates wrap, and the indices whose
  // bits went beyond the tile hold copies. Cutting a basis to the tile's
  // bits is linear (AND with a constant distributes over XOR).
  LinearLayout::BasesT bases = layout.getBases();
  for (auto &[inDim, dimBases] : bases)
    for (std::vector<int32_t> &basis : dimBases)
      for (size_t dim = 0; dim < rank; ++dim)
        basis[dim] &= shape[dim] - 1;
  LinearLayout::DimSizes outDims;
  for (size_t dim = 0; dim < rank; ++dim)
    outDims.emplace_back(standardOutDimName(int32_t(dim)), shape[dim]);
  return LinearLayout(std::move(bases), std::move(outDims));
}

llvm::Expected<LinearLayout> tk::sliceLayout(const LinearLayout &parent,
                                             int32_t dim) {
  if (std::optional<std::string> problem = standardOutsProblem(parent))
    return makeError("sliceLayout: " + *problem);
  int32_t rank = int32_t(parent.getNumOutDims());
  if (dim < 0 || dim >= rank)
    return makeError("sliceLayout: dimension " + llvm::Twine(dim) +
                     " of a tile of " + llvm::Twine(rank));
  LinearLayout::BasesT bases = parent.getBases();
  for (auto &[inDim, dimBases] : bases) {
    for (std::vector<int32_t> &basis : dimBases)
      basis.erase(basis.begin() + dim);
    // A register bit that no longer moves the element would make a thread
    // hold one value twice; lanes and warps keep theirs, as broadcasts.
    if (inDim == kRegisterDim)
      llvm::erase_if(dimBases, [](const std::vector<int32_t> &basis) {
        return llvm::all_of(basis, [](int32_t value) { return value == 0; });
      });
  }
  LinearLayout::DimSizes outDims;
  for (int32_t d = 0; d < rank; ++d)
    if (d != dim)
      outDims.emplace_back(standardOutDimName(int32_t(outDims.size())),
                           parent.getOutDimSize(standardOutDimName(d)));
  return LinearLayout(std::move(bases), std::move(outDims));
}

llvm::Expected<LinearLayout> tk::expandDimsLayout(const LinearLayout &layout,
                                                  int32_t dim) {
  if (std::optional<std::string> problem = standardOutsProblem(layout))
    return makeError("expandDimsLayout: " + *problem);
  int32_t rank = int32_t(layout.getNumOutDims());
  if (dim < 0 || dim > rank)
    return makeError("expandDimsLayout: dimension " + llvm::Twine(dim) +
                     " of a tile of " + llvm::Twine(rank + 1));
  LinearLayout::BasesT bases = layout.getBases();
  for (auto &[inDim, dimBases] : bases)
    for (std::vector<int32_t> &basis : dimBases)
      basis.insert(basis.begin() + dim, 0);
  LinearLayout::DimSizes outDims;
  for (int32_t d = 0; d <= rank; ++d)
    outDims.emplace_back(standardOutDimName(d),
                         d == dim ? 1
                                  : layout.getOutDimSize(standardOutDimName(
                                        d < dim ? d : d - 1)));
  return LinearLayout(std::move(bases), std::move(outDims));
}

llvm::Expected<LinearLayout> tk::transLayout(const LinearLayout &layout,
                                             llvm::ArrayRef<int32_t> order) {
  if (std::optional<std::string> problem = standardOutsProblem(layout))
    return makeError("transLayout: " + *problem);
  int32_t rank = int32_t(layout.getNumOutDims());
  llvm::SmallVector<int32_t> sorted(order);
  llvm::sort(sorted);
  if (int32_t(order.size()) != rank ||
      !llvm::equal(sorted, llvm::seq<int32_t>(0, rank)))
    return makeError("transLayout: the order is not a permutation of " +
                     llvm::Twine(rank) + " dimensions");
  LinearLayout::BasesT bases = layout.getBases();
  for (auto &[inDim, dimBases] : bases)
    for (std::vector<int32_t> &basis : dimBases) {
      std::vector<int32_t> permuted(rank);
      for (int32_t d = 0; d < rank; ++d)
        permuted[d] = basis[order[d]];
      basis = std::move(permuted);
    }
  LinearLayout::DimSizes outDims;
  for (int32_t d = 0; d < rank; ++d)
    outDims.emplace_back(standardOutDimName(d),
                         layout.getOutDimSize(standardOutDimName(order[d])));
  return LinearLayout(std::move(bases), std::move(outDims));
}

llvm::Expected<LinearLayout> tk::joinLayout(const LinearLayout &source) {
  if (std::optional<std::string> problem = standardOutsProblem(source))
    return makeError("joinLayout: " + *problem);
  int32_t rank = int32_t(source.getNumOutDims());
  LinearLayout::BasesT bases = source.getBases();
  bool hasRegisters = false;
  for (auto &[inDim, dimBases] : bases) {
    for (std::vector<int32_t> &basis : dimBases)
      basis.push_back(0);
    if (inDim != kRegisterDim)
      continue;
    std::vector<int32_t> pair(rank + 1, 0);
    pair[rank] = 1;
    dimBases.insert(dimBases.begin(), std::move(pair));
    hasRegisters = true;
  }
  if (!hasRegisters)
    return makeError("joinLayout: the layout has no register dimension");
  LinearLayout::DimSizes outDims = source.getOutDims();
  outDims.emplace_back(standardOutDimName(rank), 2);
  return LinearLayout::create(std::move(bases), std::move(outDims));
}

llvm::Expected<LinearLayout> tk::joinSourceLayout(const LinearLayout &joined) {
  if (std::optional<std::string> problem = standardOutsProblem(joined))
    return makeError("joinSourceLayout: " + *problem);
  int32_t last = int32_t(joined.getNumOutDims()) - 1;
  if (last < 1 || joined.getOutDimSize(standardOutDimName(last)) != 2)
    return makeError("joinSourceLayout: the last dimension is not a pair");
  LinearLayout::BasesT bases = joined.getBases();
  int pairBits = 0;
  for (auto &[inDim, dimBases] : bases) {
    auto pair = llvm::find_if(
        dimBases, [&](const std::vector<int32_t> &b) { return b[last] != 0; });
    if (pair == dimBases.end())
      continue;
    std::vector<int32_t> unit(last + 1, 0);
    unit[last] = 1;
    if (inDim != kRegisterDim || *pair != unit ||
        std::any_of(std::next(pair), dimBases.end(),
                    [&](const std::vector<int32_t> &b) { return b[last]; }))
      return makeError("joinSourceLayout: the pairs are not held by one "
                       "register bit of each thread");
    dimBases.erase(pair);
    ++pairBits;
  }
  if (pairBits != 1)
    return makeError("joinSourceLayout: no register bit holds the pairs");
  for (auto &[inDim, dimBases] : bases)
    for (std::vector<int32_t> &basis : dimBases)
      basis.pop_back();
  LinearLayout::DimSizes outDims = joined.getOutDims();
  outDims.pop_back();
  return LinearLayout::create(std::move(bases), std::move(outDims));
}

llvm::Expected<LinearLayout> tk::reshapeLayout(const LinearLayout &layout,
                                               llvm::ArrayRef<int64_t> shape) {
  if (std::optional<std::string> problem = standardOutsProblem(layout))
    return makeError("reshapeLayout: " + *problem);
  // Row-major: the last dimension varies fastest, and reshapeOuts takes
  // the first-listed as the least significant, so both sides are listed
  // last dimension first.
  int32_t rank = int32_t(layout.getNumOutDims());
  std::vector<std::string> reversed;
  for (int32_t d = rank - 1; d >= 0; --d)
    reversed.push_back(standardOutDimName(d));
  LinearLayout::DimSizes newDims;
  for (int32_t d = int32_t(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] <= 0 || !llvm::isPowerOf2_64(shape[d]))
      return makeError("reshapeLayout: dimension " + llvm::Twine(d) +
                       " of size " + llvm::Twine(shape[d]) +
                       " is not a power of two");
    newDims.emplace_back(standardOutDimName(d), int32_t(shape[d]));
  }
  llvm::Expected<LinearLayout> reshaped =
      layout.transposeOuts(reversed).reshapeOuts(newDims);
  if (!reshaped)
    return reshaped.takeError();
  std::vector<std::string> standard;
  for (int32_t d = 0; d < int32_t(shape.size()); ++d)
    standard.push_back(standardOutDimName(d));
  return reshaped->transposeOuts(standard);
}

llvm::Expected<LinearLayout> tk::broadcastLayout(const LinearLayout &layout,
                                                 int32_t dim, int32_t size) {
  if (std::optional<std::string> problem = standardOutsProblem(layout))
    return makeError("broadcastLayout: " + *problem);
  int32_t rank = int32_t(layout.getNumOutDims());
  if (dim < 0 || dim >= rank)
    return makeError("broadcastLayout: dimension " + llvm::Twine(dim) +
                     " of a tile of " + llvm::Twine(rank));
  std::string name = standardOutDimName(dim);
  if (layout.getOutDimSize(name) != 1)
    return makeError("broadcastLayout: " + name + " has size " +
                     llvm::Twine(layout.getOutDimSize(name)) + ", expected 1");
  if (!isPowerOf2(size) || size > (1 << 30))
    return makeError("broadcastLayout: size " + llvm::Twine(size) +
                     ", expected a power of two up to 2^30");
  int32_t registerBits =
      layout.hasInDim(kRegisterDim) ? layout.getInDimSizeLog2(kRegisterDim) : 0;
  if (registerBits + log2Of(size) > 30)
    return makeError("broadcastLayout: more than 2^30 registers");
  // The product puts the new registers above the layout's, and a shared
  // output of size 1 leaves the new values unshifted.
  return layout * LinearLayout::identity1D(size, kRegisterDim, name);
}

//===----------------------------------------------------------------------===//
// Matrix units' fragments
//===----------------------------------------------------------------------===//

LinearLayout tk::mmaSyncM16N8AccumulatorLayout() {
  // c0 -> c1 one column right, c0 -> c2 eight rows down.
  return fragment({{0, 1}, {8, 0}}, mmaLanes(), 16, 8);
}

LinearLayout tk::mmaSyncM16N8K16ALayout() {
  // a0 -> a1 one column, a0 -> a2 eight rows, a0 -> a4 eight columns.
  return fragment({{0, 1}, {8, 0}, {0, 8}}, mmaLanes(), 16, 16);
}

LinearLayout tk::mmaSyncM16N8K16BLayout() {
  // b is k x n: threadID_in_group steps two rows (k), groupID one column;
  // b0 -> b1 one row, b0 -> b2 eight rows.
  return fragment({{1, 0}, {8, 0}}, {{2, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}},
                  16, 8);
}

llvm::Expected<LinearLayout> tk::wgmmaM64AccumulatorLayout(int32_t n) {
  if (!isPowerOf2(n) || n < 8 || n > 256)
    return makeError("wgmmaM64AccumulatorLayout: n = " + llvm::Twine(n) +
                     ", expected a power of two from 8 to 256");
  // mma.sync's 16 x 8 block, repeated every 8 columns in further registers;
  // warp w of the warpgroup 16 rows down.
  Bases registers = {{0, 1}, {8, 0}};
  for (int32_t col = 8; col < n; col *= 2)
    registers.push_back({0, col});
  return fragment(std::move(registers), mmaLanes(), 64, n, {{16, 0}, {32, 0}});
}

LinearLayout tk::mfma32x32AccumulatorLayout() {
  // Registers: 4 consecutive rows, then blocks 8 rows apart; lanes 32 and
  // up take the 4 rows after lanes 0 to 31.
  return fragment({{1, 0}, {2, 0}, {8, 0}, {16, 0}},
                  {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 16}, {4, 0}}, 32, 32);
}

LinearLayout tk::mfma16x16AccumulatorLayout() {
  // Registers: 4 consecutive rows; each group of 16 lanes 4 rows further.
  return fragment({{1, 0}, {2, 0}},
                  {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {4, 0}, {8, 0}}, 16, 16);
}

LinearLayout tk::wmma16x16AccumulatorLayout() {
  // Registers every other row; lanes 16 to 31 the odd rows.
  return fragment({{2, 0}, {4, 0}, {8, 0}},
                  {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {1, 0}}, 16, 16);
}

LinearLayout tk::dpas8x16AccumulatorLayout() {
  return fragment({{1, 0}, {2, 0}, {4, 0}}, {{0, 1}, {0, 2}, {0, 4}, {0, 8}}, 8,
                  16);
}

LinearLayout tk::dpas8x8AccumulatorLayout() {
  return fragment({{1, 0}, {2, 0}, {4, 0}}, {{0, 1}, {0, 2}, {0, 4}}, 8, 8);
}

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

/// The offset bits of `rows` rows of `cols` elements, swizzled: the column
/// within a row, then the row, whose bits also XOR the swizzle into the
/// column (the phase (row / perPhase) % maxPhase takes bits of the row and
/// so is linear in it).
static Bases swizzledRowBases(size_t rank, int32_t rowDim, int32_t colDim,
                              int64_t rows, int64_t cols, int64_t vec,
                              int64_t perPhase, int64_t maxPhase) {
  Bases bases;
  auto basis = [&](int64_t row, int64_t col) {
    std::vector<int32_t> values(rank, 0);
    values[rowDim] = int32_t(row);
    values[colDim] = int32_t(col);
    return values;
  };
  for (int64_t col = 1; col < cols; col *= 2)
    bases.push_back(basis(0, col));
  for (int64_t row = 1; row < rows; row *= 2)
    bases.push_back(basis(row, (vec * ((row / perPhase) % maxPhase)) % cols));
  return bases;
}

llvm::Expected<LinearLayout>
tk::swizzledSharedLayout(llvm::ArrayRef<int32_t> shape, int32_t vec,
                         int32_t perPhase, int32_t maxPhase,
                         llvm::ArrayRef<int32_t> order) {
  size_t rank = shape.size();
  if (rank < 2)
    return makeError("swizzledSharedLayout: expected a tile of at least two "
                     "dimensions");
  if (std::optional<std::string> problem = sizesProblem(shape, rank, "shape"))
    return makeError("swizzledSharedLayout: " + *problem);
  if (std::optional<std::string> problem = orderProblem(order, rank))
    return makeError("swizzledSharedLayout: " + *problem);
  for (auto [value, what] :
       {std::pair{vec, "vec"}, std::pair{perPhase, "perPhase"},
        std::pair{maxPhase, "maxPhase"}})
    if (!isPowerOf2(value))
      return makeError("swizzledSharedLayout: " + llvm::Twine(what) + " is " +
                       llvm::Twine(value) +
                       ", expected a power of two (the swizzle is linear "
                       "only then)");
  int32_t totalBits = 0;
  for (int32_t size : shape)
    totalBits += log2Of(size);
  if (totalBits > 30)
    return makeError("swizzledSharedLayout: more than 2^30 elements");

  int32_t colDim = order[0], rowDim = order[1];
  int64_t cols = shape[colDim], rows = shape[rowDim];
  Bases bases = swizzledRowBases(rank, rowDim, colDim, rows, cols, vec,
                                 perPhase, maxPhase);
  // Slower dimensions stack whole matrices.
  for (size_t index = 2; index < rank; ++index)
    for (int64_t step = 1; step < shape[order[index]]; step *= 2) {
      std::vector<int32_t> values(rank, 0);
      values[order[index]] = int32_t(step);
      bases.push_back(std::move(values));
    }
  LinearLayout::DimSizes outDims;
  for (size_t dim = 0; dim < rank; ++dim)
    outDims.emplace_back(standardOutDimName(int32_t(dim)), shape[dim]);
  return LinearLayout({{kOffsetDim.str(), std::move(bases)}},
                      std::move(outDims));
}

llvm::Expected<LinearLayout>
tk::columnBlockedSharedLayout(llvm::ArrayRef<int32_t> shape,
                              int32_t blockCols) {
  if (shape.size() != 2)
    return makeError(
        "columnBlockedSharedLayout: expected a tile of two dimensions");
  if (std::optional<std::string> problem = sizesProblem(shape, 2, "shape"))
    return makeError("columnBlockedSharedLayout: " + *problem);
  if (blockCols < 1 || !isPowerOf2(blockCols) || blockCols > shape[1])
    return makeError("columnBlockedSharedLayout: blocks of " +
                     llvm::Twine(blockCols) + " columns in a tile of " +
                     llvm::Twine(shape[1]));
  // One block's rows, unswizzled, then the blocks.
  Bases bases = swizzledRowBases(2, /*rowDim=*/0, /*colDim=*/1, shape[0],
                                 blockCols, 1, 1, 1);
  for (int64_t col = blockCols; col < shape[1]; col *= 2)
    bases.push_back({0, int32_t(col)});
  LinearLayout::DimSizes outDims;
  for (size_t dim = 0; dim < 2; ++dim)
    outDims.emplace_back(standardOutDimName(int32_t(dim)), shape[dim]);
  return LinearLayout({{kOffsetDim.str(), std::move(bases)}},
                      std::move(outDims));
}

llvm::Expected<LinearLayout>
tk::nvmmaSharedLayout(llvm::ArrayRef<int32_t> shape, int32_t elementBytes,
                      int32_t swizzleBytes, llvm::ArrayRef<int32_t> order) {
  if (shape.size() != 2)
    return makeError("nvmmaSharedLayout: expected a tile of two dimensions");
  if (std::optional<std::string> problem = sizesProblem(shape, 2, "shape"))
    return makeError("nvmmaSharedLayout: " + *problem);
  if (std::optional<std::string> problem = orderProblem(order, 2))
    return makeError("nvmmaSharedLayout: " + *problem);
  if (swizzleBytes != 32 && swizzleBytes != 64 && swizzleBytes != 128)
    return makeError("nvmmaSharedLayout: a swizzle of " +
                     llvm::Twine(swizzleBytes) +
                     " bytes, expected 32, 64 or 128");
  if (!isPowerOf2(elementBytes) || elementBytes > 16)
    return makeError("nvmmaSharedLayout: elements of " +
                     llvm::Twine(elementBytes) + " bytes");
  int32_t colDim = order[0], rowDim = order[1];
  int64_t cols = shape[colDim], rows = shape[rowDim];
  int64_t atomCols = swizzleBytes / elementBytes;
  if (atomCols > cols)
    return makeError("nvmmaSharedLayout: atoms of " + llvm::Twine(atomCols) +
                     " elements are wider than the tile's " +
                     llvm::Twine(cols));
  int64_t vec = 16 / elementBytes, perPhase = 128 / swizzleBytes,
          maxPhase = swizzleBytes / 16;
  // The rows of one column of atoms, swizzled, then the columns of atoms.
  Bases bases = swizzledRowBases(2, rowDim, colDim, rows, atomCols, vec,
                                 perPhase, maxPhase);
  for (int64_t col = atomCols; col < cols; col *= 2) {
    std::vector<int32_t> values(2, 0);
    values[colDim] = int32_t(col);
    bases.push_back(std::move(values));
  }
  LinearLayout::DimSizes outDims;
  for (size_t dim = 0; dim < 2; ++dim)
    outDims.emplace_back(standardOutDimName(int32_t(dim)), shape[dim]);
  return LinearLayout({{kOffsetDim.str(), std::move(bases)}},
                      std::move(outDims));
}
