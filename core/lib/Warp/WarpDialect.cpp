//===- WarpDialect.cpp - the tkw dialect: layouts and warp-level ops ------===//
//
// Registers tkw and verifies its layout attributes, its ops and the function
// attributes the layout passes record (`tkw.num_warps`, `tkw.level`, ...).
//
//===----------------------------------------------------------------------===//

#include "tk/core/WarpDialect.h"
#include "tk/core/Layout.h"
#include "tk/core/Layout/LayoutPresets.h"
#include "tk/core/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace tk::warp;

#include "tk/core/WarpDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tk/core/LayoutAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tk/core/WarpTypes.cpp.inc"

#define GET_OP_CLASSES
#include "tk/core/WarpOps.cpp.inc"

namespace {

/// Short aliases (`#blocked`, `#dot_op`, `#slice`, `#frag_a`, `#frag_b`,
/// `#frag_acc`) keep printed IR readable:
/// layouts repeat on every tile type.
struct TkwOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<BlockedLayoutAttr>(attr)) {
      os << "blocked";
      return AliasResult::FinalAlias;
    }
    if (isa<DotOperandLayoutAttr>(attr)) {
      os << "dot_op";
      return AliasResult::FinalAlias;
    }
    if (isa<SliceLayoutAttr>(attr)) {
      os << "slice";
      return AliasResult::FinalAlias;
    }
    if (isa<LinearLayoutAttr>(attr)) {
      os << "linear";
      return AliasResult::FinalAlias;
    }
    if (auto fragment = dyn_cast<FragmentLayoutAttr>(attr)) {
      static const char *const kOperands[] = {"a", "b", "acc"};
      os << "frag_" << kOperands[std::min(fragment.getOpIdx(), 2u)];
      return AliasResult::FinalAlias;
    }
    return AliasResult::NoAlias;
  }
};

} // namespace

void TkwDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tk/core/LayoutAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "tk/core/WarpTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tk/core/WarpOps.cpp.inc"
      >();
  addInterfaces<TkwOpAsmInterface>();
}

void tk::registerWarpDialect(DialectRegistry &registry) {
  registry.insert<TkwDialect>();
}

//===----------------------------------------------------------------------===//
// Layout attributes
//===----------------------------------------------------------------------===//

int64_t BlockedLayoutAttr::getNumWarps() const {
  int64_t product = 1;
  for (int64_t warps : getWarpsPerCTA())
    product *= warps;
  return product;
}

LogicalResult BlockedLayoutAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> sizePerWarp,
    ArrayRef<int64_t> warpsPerCTA, ArrayRef<int64_t> order) {
  size_t rank = sizePerWarp.size();
  if (rank == 0 || warpsPerCTA.size() != rank || order.size() != rank)
    return emitError() << "expected sizePerWarp, warpsPerCTA and order of "
                          "one non-zero rank, got "
                       << sizePerWarp.size() << ", " << warpsPerCTA.size()
                       << " and " << order.size() << " entries";
  for (size_t d = 0; d < rank; ++d) {
    // Tiles have power-of-two sizes, so blocks and warp counts must too for
    // the blocks to tile them exactly.
    if (sizePerWarp[d] <= 0 || !llvm::isPowerOf2_64(sizePerWarp[d]))
      return emitError() << "expected sizePerWarp[" << d
                         << "] to be a positive power of two, not "
                         << sizePerWarp[d];
    if (warpsPerCTA[d] <= 0 || !llvm::isPowerOf2_64(warpsPerCTA[d]))
      return emitError() << "expected warpsPerCTA[" << d
                         << "] to be a positive power of two, not "
                         << warpsPerCTA[d];
  }
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t d : order)
    if (d < 0 || d >= static_cast<int64_t>(rank) || !seen.insert(d).second)
      return emitError() << "expected order to be a permutation of the " << rank
                         << " dimensions";
  return success();
}

int64_t FragmentLayoutAttr::getNumLanes() const {
  return getLanesPerWarp()[0] * getLanesPerWarp()[1];
}

LogicalResult FragmentLayoutAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringRef intrinsic,
    unsigned opIdx, ArrayRef<int64_t> sizePerLane,
    ArrayRef<int64_t> lanesPerWarp, ArrayRef<int64_t> warpsPerFragment,
    ArrayRef<int64_t> order) {
  if (opIdx > 2)
    return emitError() << "expected opIdx 0 (a), 1 (b) or 2 (accumulator), "
                          "not "
                       << opIdx;
  for (ArrayRef<int64_t> grid : {sizePerLane, lanesPerWarp, warpsPerFragment})
    if (grid.size() != 2 || llvm::any_of(grid, [](int64_t n) {
          return n <= 0 || !llvm::isPowerOf2_64(n);
        }))
      return emitError() << "expected sizePerLane, lanesPerWarp and "
                            "warpsPerFragment of two positive powers of two";
  if (order.size() != 2 || order[0] == order[1] || order[0] < 0 ||
      order[0] > 1 || order[1] < 0 || order[1] > 1)
    return emitError() << "expected order to be [0, 1] or [1, 0]";
  return success();
}

LogicalResult
DotOperandLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                             unsigned opIdx, BlockedLayoutAttr parent) {
  if (opIdx > 1)
    return emitError() << "expected opIdx 0 (a) or 1 (b), not " << opIdx;
  if (!parent || parent.getRank() != 2)
    return emitError() << "expected a 2-D blocked parent layout";
  return success();
}

LogicalResult
SliceLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        unsigned dim, Attribute parent) {
  if (!isLayout(parent))
    return emitError() << "expected a tkw layout as parent, not " << parent;
  int64_t rank = getLayoutRank(parent);
  if (rank < 2 || dim >= rank)
    return emitError() << "expected dim in [0, " << rank
                       << ") of a parent of rank 2 or more, not " << dim;
  return success();
}

//===----------------------------------------------------------------------===//
// LinearLayoutAttr
//===----------------------------------------------------------------------===//

/// The input dimensions of a tile's linear layout, in the order they are
/// written.
static constexpr llvm::StringLiteral kTileLayoutInDims[] = {
    tk::kRegisterDim, tk::kLaneDim, tk::kWarpDim};

/// How many elements `layout` reaches: 2 to the rank of its image, the
/// number of input bits that are not free variables.
static int64_t reachedElements(const tk::LinearLayout &layout) {
  int32_t rank = layout.getTotalInDimSizeLog2();
  for (const auto &[name, freeMask] : layout.getFreeVariableMasks())
    rank -= llvm::popcount(static_cast<uint32_t>(freeMask));
  return int64_t(1) << rank;
}

Attribute LinearLayoutAttr::parse(AsmParser &parser, Type) {
  // <shape = [16, 8], register = [[0, 1], ...], lane = [...], warp = [...]>
  SMLoc loc = parser.getCurrentLocation();
  auto parseIntegers = [&](std::vector<int32_t> &values) {
    return parser.parseCommaSeparatedList(
        AsmParser::Delimiter::Square, [&]() -> ParseResult {
          int64_t value = 0;
          if (parser.parseInteger(value))
            return failure();
          if (value < 0 || value > INT32_MAX)
            return parser.emitError(parser.getCurrentLocation())
                   << "expected a coordinate in [0, 2^31), not " << value;
          values.push_back(static_cast<int32_t>(value));
          return success();
        });
  };
  std::vector<int32_t> shape;
  if (parser.parseLess() || parser.parseKeyword("shape") ||
      parser.parseEqual() || parseIntegers(shape))
    return {};
  tk::LinearLayout::BasesT bases;
  for (StringRef dim : kTileLayoutInDims) {
    std::vector<std::vector<int32_t>> dimBases;
    if (parser.parseComma() || parser.parseKeyword(dim) ||
        parser.parseEqual() ||
        parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
          return parseIntegers(dimBases.emplace_back());
        }))
      return {};
    bases.emplace_back(dim.str(), std::move(dimBases));
  }
  if (parser.parseGreater())
    return {};
  tk::LinearLayout::DimSizes outDims;
  for (auto [index, size] : llvm::enumerate(shape))
    outDims.emplace_back(tk::standardOutDimName(index), size);
  llvm::Expected<tk::LinearLayout> layout =
      tk::LinearLayout::create(std::move(bases), std::move(outDims));
  if (!layout) {
    parser.emitError(loc) << "invalid linear layout: "
                          << llvm::toString(layout.takeError());
    return {};
  }
  return parser.getChecked<LinearLayoutAttr>(loc, parser.getContext(),
                                             std::move(*layout));
}

void LinearLayoutAttr::print(AsmPrinter &printer) const {
  const tk::LinearLayout &layout = getLinearLayout();
  printer << "<shape = [";
  llvm::interleaveComma(getShape(), printer);
  printer << "]";
  for (StringRef dim : kTileLayoutInDims) {
    printer << ", " << dim << " = [";
    llvm::interleaveComma(llvm::seq<int32_t>(0, layout.getInDimSizeLog2(dim)),
                          printer, [&](int32_t bit) {
                            printer << "[";
                            llvm::interleaveComma(layout.getBasis(dim, bit),
                                                  printer);
                            printer << "]";
                          });
    printer << "]";
  }
  printer << ">";
}

LogicalResult
LinearLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         tk::LinearLayout layout) {
  std::vector<std::string> inDims = layout.getInDimNames();
  if (!llvm::equal(inDims, kTileLayoutInDims))
    return emitError() << "expected the input dimensions register, lane, "
                          "warp, not "
                       << llvm::join(inDims, ", ");
  std::vector<std::string> outDims = layout.getOutDimNames();
  if (outDims != tk::standardOutDimNames(outDims.size()))
    return emitError() << "expected the output dimensions dim0, dim1, ..., "
                          "not "
                       << llvm::join(outDims, ", ");
  // A tile's every element lives somewhere; an element no index holds
  // would be lost.
  if (!layout.isSurjective())
    return emitError() << "expected every element of the tile to be held "
                          "by some register, lane and warp; this layout "
                          "reaches "
                       << reachedElements(layout) << " of "
                       << layout.getTotalOutDimSize();
  return success();
}

SmallVector<int64_t> LinearLayoutAttr::getShape() const {
  SmallVector<int64_t> shape;
  for (const auto &[name, size] : getLinearLayout().getOutDims())
    shape.push_back(size);
  return shape;
}

int64_t LinearLayoutAttr::getNumRegisters() const {
  return getLinearLayout().getInDimSize(tk::kRegisterDim);
}
int64_t LinearLayoutAttr::getNumLanes() const {
  return getLinearLayout().getInDimSize(tk::kLaneDim);
}
int64_t LinearLayoutAttr::getNumWarps() const {
  return getLinearLayout().getInDimSize(tk::kWarpDim);
}

LogicalResult LinearLayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (!llvm::equal(shape, getShape()))
    return emitError() << "expected a tile of the layout's shape ["
                       << llvm::interleaved(getShape()) << "], not ["
                       << llvm::interleaved(shape) << "]";
  return success();
}

//===----------------------------------------------------------------------===//
// ConvertLayoutOp
//===----------------------------------------------------------------------===//

LogicalResult ConvertLayoutOp::verify() {
  auto src = getSrc().getType();
  auto dst = getType();
  if (src.getElementType() != dst.getElementType())
    return emitOpError() << "expected the element type to stay "
                         << src.getElementType() << ", not become "
                         << dst.getElementType();
  if (src.getRank() != dst.getRank())
    return emitOpError() << "expected the rank to stay " << src.getRank();
  // At the warp level each side is the warp's share in its own layout, so
  // only tiles with both layouts may change shape.
  if (src.getShape() != dst.getShape() &&
      !(src.getEncoding() && dst.getEncoding()))
    return emitOpError()
           << "expected the same shape unless both sides have a layout";
  return success();
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  // A thread-level conversion keeps its types; its tkw.layout says where
  // the result lives.
  if (getSrc().getType() == getType() &&
      !(*this)->hasAttr(TkwDialect::kLayoutAttrName))
    return getSrc();
  // convert(convert(x)) moves x once.
  if (auto inner = getSrc().getDefiningOp<ConvertLayoutOp>()) {
    if (inner.getSrc().getType() == getType())
      return inner.getSrc();
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// ExtractOp and GlueOp
//===----------------------------------------------------------------------===//

LogicalResult ExtractOp::verify() {
  auto src = getSrc().getType();
  auto dst = getType();
  ArrayRef<int64_t> offsets = getOffsets();
  if (src.getElementType() != dst.getElementType() ||
      src.getRank() != dst.getRank() ||
      static_cast<int64_t>(offsets.size()) != src.getRank())
    return emitOpError() << "expected a result and " << src.getRank()
                         << " offsets of the source's rank and element type";
  for (int64_t d = 0; d < src.getRank(); ++d)
    if (offsets[d] < 0 || offsets[d] + dst.getDimSize(d) > src.getDimSize(d))
      return emitOpError() << "expected the block along dimension " << d
                           << " ([" << offsets[d] << ", "
                           << offsets[d] + dst.getDimSize(d)
                           << ")) to lie inside the source's "
                           << src.getDimSize(d) << " elements";
  return success();
}

OpFoldResult ExtractOp::fold(FoldAdaptor) {
  auto src = getSrc().getType();
  auto dst = getType();
  if (src == dst)
    return getSrc();
  // extract(glue(pieces)) at a piece boundary is that piece.
  auto glue = getSrc().getDefiningOp<GlueOp>();
  if (!glue || glue.getPieces().front().getType() != dst)
    return {};
  int64_t index = 0;
  for (int64_t d = 0; d < src.getRank(); ++d) {
    int64_t size = dst.getDimSize(d);
    if (getOffsets()[d] % size != 0)
      return {};
    index = index * (src.getDimSize(d) / size) + getOffsets()[d] / size;
  }
  return glue.getPieces()[index];
}

LogicalResult GlueOp::verify() {
  if (getPieces().empty())
    return emitOpError() << "expected at least one piece";
  auto piece = cast<RankedTensorType>(getPieces().front().getType());
  auto dst = getType();
  for (Value other : getPieces())
    if (other.getType() != piece)
      return emitOpError() << "expected every piece to be " << piece << ", not "
                           << other.getType();
  if (piece.getElementType() != dst.getElementType() ||
      piece.getRank() != dst.getRank())
    return emitOpError() << "expected the result to have the pieces' rank "
                            "and element type";
  int64_t count = 1;
  for (int64_t d = 0; d < dst.getRank(); ++d) {
    if (dst.getDimSize(d) % piece.getDimSize(d) != 0)
      return emitOpError() << "expected pieces of " << piece.getDimSize(d)
                           << " to divide dimension " << d << " of "
                           << dst.getDimSize(d);
    count *= dst.getDimSize(d) / piece.getDimSize(d);
  }
  if (static_cast<int64_t>(getPieces().size()) != count)
    return emitOpError() << "expected " << count << " pieces, not "
                         << getPieces().size();
  return success();
}

//===----------------------------------------------------------------------===//
// Function attributes
//===----------------------------------------------------------------------===//

/// Checks that every #tkw.linear layout of a tile defined in `op` has
/// `size` indices of input dimension `dim`, as `op`'s attribute `name`
/// (tkw.num_warps, tkw.threads_per_warp) says.
static LogicalResult verifyLinearLayoutsIn(Operation *op, StringRef dim,
                                           int64_t size, StringRef name) {
  auto check = [&](Value value) -> LogicalResult {
    auto layout =
        dyn_cast_or_null<LinearLayoutAttr>(getLayout(value.getType()));
    if (!layout || layout.getLinearLayout().getInDimSize(dim) == size)
      return success();
    return value.getDefiningOp()
               ? value.getDefiningOp()->emitError()
                     << "a tile's layout has "
                     << layout.getLinearLayout().getInDimSize(dim) << " " << dim
                     << "s where '" << name << "' of the function says " << size
               : op->emitError()
                     << "a block argument's layout has "
                     << layout.getLinearLayout().getInDimSize(dim) << " " << dim
                     << "s where '" << name << "' says " << size;
  };
  WalkResult result = op->walk([&](Operation *nested) {
    for (Region &region : nested->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (failed(check(arg)))
            return WalkResult::interrupt();
    for (Value value : nested->getResults())
      if (failed(check(value)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult TkwDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kNumWarpsAttrName || name == kThreadsPerWarpAttrName) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() <= 0 || !llvm::isPowerOf2_64(value.getInt()))
      return op->emitError()
             << "'" << name << "' must be a positive power-of-two integer";
    return verifyLinearLayoutsIn(
        op, name == kNumWarpsAttrName ? tk::kWarpDim : tk::kLaneDim,
        value.getInt(), name);
  }
  if (name == kConversionsAttrName) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() < 0)
      return op->emitError()
             << "'" << name << "' must be a non-negative integer";
    return success();
  }
  if (name == kTargetAttrName || name == kIntrinsicAttrName) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a string";
    return success();
  }
  if (name == kLevelAttrName) {
    auto level = dyn_cast<StringAttr>(attr.getValue());
    if (!level ||
        (level.getValue() != "warp" && level.getValue() != "intrinsic"))
      return op->emitError()
             << "'" << name << "' must be \"warp\" or \"intrinsic\"";
    return success();
  }
  if (name == kLayoutAttrName) {
    if (!isThreadLayout(attr.getValue()))
      return op->emitError() << "'" << name
                             << "' must be a thread layout (#tkw.shared, "
                                "#tkw.runs, #tkw.accumulator, #tkw.rows, "
                                "#tkw.operand)";
    return success();
  }
  if (name == kIterLayoutsAttrName || name == kResultLayoutsAttrName) {
    auto layouts = dyn_cast<ArrayAttr>(attr.getValue());
    if (!layouts || !llvm::all_of(layouts, [](Attribute layout) {
          return isa<UnitAttr>(layout) || isThreadLayout(layout);
        }))
      return op->emitError()
             << "'" << name << "' must be an array of thread layouts or unit";
    return success();
  }
  if (name == kRingAttrName) {
    if (!isa<RingLayoutAttr>(attr.getValue()) || !isa<tk::LoadOp>(op))
      return op->emitError()
             << "'" << name << "' must be a #tkw.ring layout on a tk.load";
    return success();
  }
  if (name == kSplitAttrName) {
    if (!isa<SplitLayoutAttr>(attr.getValue()) ||
        !isa<tk::ReduceOp, tk::ScanOp>(op))
      return op->emitError() << "'" << name
                             << "' must be a #tkw.split layout on a tk.reduce "
                                "or a tk.scan";
    return success();
  }
  if (name == kHeldAttrName) {
    if (!isa<HeldLayoutAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a #tkw.held layout";
    return success();
  }
  if (name == kSharedMemoryAttrName) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() < 0)
      return op->emitError()
             << "'" << name << "' must be a non-negative integer";
    return success();
  }
  if (name == kScratchAttrName) {
    auto value = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!value || value.size() != 2 || value[0] < 0 || value[1] <= 0)
      return op->emitError() << "'" << name
                             << "' must be array<i64: offset, bytes> with a "
                                "non-negative offset and a positive size";
    return success();
  }
  if (name == kProductAttrName || name == kThreadsAttrName) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() < 0)
      return op->emitError()
             << "'" << name << "' must be a non-negative integer";
    return success();
  }
  if (name == kPendingAttrName) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() < 0 ||
        op->getName().getStringRef() != "tk.dot")
      return op->emitError()
             << "'" << name << "' must be a non-negative integer on a tk.dot";
    return success();
  }
  if (name == kRegisterPipelineAttrName) {
    if (!isa<StringAttr>(attr.getValue()) || !isa<ModuleOp>(op))
      return op->emitError() << "'" << name << "' must be a string on a module";
    return success();
  }
  return op->emitError() << "unknown tkw attribute '" << name << "'";
}

/// A held product's number and one of its operands, as the layouts that
/// name them (#tkw.operand, #tkw.ring) carry them.
static LogicalResult
verifyProductOperand(function_ref<InFlightDiagnostic()> emitError,
                     int64_t product, int64_t operand) {
  if (product < 0)
    return emitError() << "product must be non-negative, not " << product;
  if (operand != 0 && operand != 1)
    return emitError() << "operand must be 0 (A) or 1 (B), not " << operand;
  return success();
}

LogicalResult
OperandLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          int64_t product, int64_t operand,
                          ArrayRef<int64_t> tile, int64_t tilesAlong,
                          int64_t contiguous, int64_t vec, int64_t perPhase,
                          int64_t maxPhase, int64_t align, Attribute written) {
  if (failed(verifyProductOperand(emitError, product, operand)))
    return failure();
  if (written && !isa<RunsLayoutAttr, AccumulatorLayoutAttr>(written))
    return emitError() << "an operand's tile is written by runs (#tkw.runs) "
                          "or by a held product's registers "
                          "(#tkw.accumulator), not "
                       << written;
  if (tile.size() != 2 || tile[0] <= 0 || tile[1] <= 0)
    return emitError() << "tile must be two positive sizes";
  if ((tilesAlong != 0 && tilesAlong != 1) ||
      (contiguous != 0 && contiguous != 1))
    return emitError() << "tilesAlong and contiguous must be dimensions (0 "
                          "or 1)";
  if (vec <= 0 || perPhase <= 0)
    return emitError() << "vec and perPhase must be positive";
  if (maxPhase <= 0 || !llvm::isPowerOf2_64(maxPhase) || align <= 0 ||
      !llvm::isPowerOf2_64(align))
    return emitError() << "maxPhase and align must be positive powers of two";
  // A chunk index XORed with a phase must stay in its line.
  if (maxPhase > 1 &&
      (tile[contiguous] % vec != 0 || (tile[contiguous] / vec) % maxPhase != 0))
    return emitError() << "a line of " << tile[contiguous]
                       << " elements does not hold a multiple of " << maxPhase
                       << " chunks of " << vec;
  return success();
}

LogicalResult
SplitLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t parts, StringRef across) {
  if (parts <= 0 || !llvm::isPowerOf2_64(parts))
    return emitError() << "parts must be a positive power of two, not "
                       << parts;
  if (across != "lanes" && across != "warps" && across != "memory")
    return emitError() << "parts meet across \"lanes\", \"warps\" or "
                          "\"memory\", not \""
                       << across << "\"";
  return success();
}

LogicalResult
RingLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t stages, int64_t product, int64_t operand) {
  if (stages < 2)
    return emitError() << "a ring has at least 2 stages, not " << stages;
  return verifyProductOperand(emitError, product, operand);
}

LogicalResult
SharedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         Attribute written) {
  if (written && !isa<RunsLayoutAttr, AccumulatorLayoutAttr>(written))
    return emitError() << "a shared tile is written by runs (#tkw.runs) or "
                          "by a held product's registers (#tkw.accumulator), "
                          "not "
                       << written;
  return success();
}

LogicalResult
RunsLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t width, int64_t threads) {
  if (width <= 0 || !llvm::isPowerOf2_64(width))
    return emitError() << "run width must be a positive power of two, not "
                       << width;
  if (threads <= 0)
    return emitError() << "threads must be positive, not " << threads;
  return success();
}
