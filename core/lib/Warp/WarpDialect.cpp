//===- WarpDialect.cpp - the tkw dialect: layouts and warp-level ops ------===//
//
// Registers tkw and verifies its layout attributes, its ops and the
// attributes the layout passes record (`tkw.num_warps`, `tkw.scratch`, ...).
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

#include "tk/core/WarpEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tk/core/LayoutAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tk/core/WarpTypes.cpp.inc"

#define GET_OP_CLASSES
#include "tk/core/WarpOps.cpp.inc"

namespace {

/// A short alias (`#linear`, `#linear1`, ...) keeps printed IR readable:
/// layouts repeat on every tile type.
struct TkwOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<LinearLayoutAttr>(attr)) {
      os << "linear";
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
// CooperativeMatrixAttr
//===----------------------------------------------------------------------===//

LogicalResult
CooperativeMatrixAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              int64_t rows, int64_t cols,
                              LinearLayoutAttr placement) {
  if (!placement)
    return emitError() << "expected a #tkw.linear placement";
  if (rows <= 0 || cols <= 0 || !llvm::isPowerOf2_64(rows) ||
      !llvm::isPowerOf2_64(cols))
    return emitError() << "expected a matrix of powers of two, not " << rows
                       << "x" << cols;
  SmallVector<int64_t> shape = placement.getShape();
  int64_t lanes = placement.getNumLanes();
  if (shape.size() != 2 || shape[0] % rows || shape[1] % cols ||
      (rows * cols) % lanes ||
      rows * cols / lanes > placement.getNumRegisters())
    return emitError() << "expected a two-dimensional placement of whole "
                       << rows << "x" << cols << " matrices, each spread over "
                       << lanes << " lanes";
  // The lanes and the lowest registers stay in one matrix; the other bits
  // move by whole matrices.
  const tk::LinearLayout &layout = placement.getLinearLayout();
  int32_t inside = llvm::Log2_64(rows * cols / lanes);
  for (StringRef dim : kTileLayoutInDims)
    for (int32_t bit = 0; bit < layout.getInDimSizeLog2(dim); ++bit) {
      std::vector<int32_t> basis = layout.getBasis(dim, bit);
      bool inMatrix =
          dim == tk::kLaneDim || (dim == tk::kRegisterDim && bit < inside);
      bool ok = inMatrix ? basis[0] < rows && basis[1] < cols
                         : basis[0] % rows == 0 && basis[1] % cols == 0;
      if (!ok)
        return emitError() << dim << " bit " << bit << " of the placement "
                           << (inMatrix ? "leaves its matrix"
                                        : "moves within a matrix");
    }
  return success();
}

int64_t CooperativeMatrixAttr::getRegistersPerMatrix() const {
  return getRows() * getCols() / getPlacement().getNumLanes();
}

int64_t CooperativeMatrixAttr::getNumMatrices() const {
  return getPlacement().getNumRegisters() / getRegistersPerMatrix();
}

LogicalResult CooperativeMatrixAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  return getPlacement().verifyEncoding(shape, elementType, emitError);
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
  if (src.getShape() != dst.getShape())
    return emitOpError() << "expected the shape to stay [" << src.getShape()
                         << "], not become [" << dst.getShape() << "]";
  // An opaque tile reaches registers only in its placement.
  for (auto [from, to] : {std::pair(src, dst), std::pair(dst, src)})
    if (auto opaque =
            dyn_cast_or_null<CooperativeMatrixAttr>(from.getEncoding()))
      if (to.getEncoding() != opaque.getPlacement())
        return emitOpError() << "expected a #tkw.cooperative_matrix tile to "
                                "convert to or from its placement "
                             << opaque.getPlacement() << " only";
  return success();
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  // convert(convert(x)) moves x once, except through an opaque layout,
  // whose conversions reach its placement only.
  if (auto inner = getSrc().getDefiningOp<ConvertLayoutOp>()) {
    if (inner.getSrc().getType() == getType())
      return inner.getSrc();
    if (isa_and_nonnull<CooperativeMatrixAttr>(
            inner.getSrc().getType().getEncoding()))
      return {};
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  return {};
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
  if (name == kTargetAttrName || name == kIntrinsicAttrName) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a string";
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
  if (name == kPendingAttrName) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() < 0 ||
        op->getName().getStringRef() != "tk.dot")
      return op->emitError()
             << "'" << name << "' must be a non-negative integer on a tk.dot";
    return success();
  }
  if (name == kDeferredAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) ||
        op->getName().getStringRef() != "tk.dot")
      return op->emitError() << "'" << name << "' must be a unit on a tk.dot";
    return success();
  }
  return op->emitError() << "unknown tkw attribute '" << name << "'";
}
