//===- DotOperands.cpp - where a dot reads its operands -------------------===//
//
// The operand layouts of a dot, derived from its accumulator's, and the
// swizzled workgroup memory an operand waits in when it does not arrive in
// them (DotOperands.h).
//
//===----------------------------------------------------------------------===//

#include "tk/core/DotOperands.h"

#include "tk/core/Layout.h"
#include "tk/core/Layout/LayoutPresets.h"
#include "tk/core/TargetInfo.h"
#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tk;

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

using Basis = std::vector<int32_t>;

/// Operand `opIdx` (0: a, m x k; 1: b, k x n) of a dot whose accumulator
/// (rows x cols, reduction depth `depth`) is `accumulator`, tiled from an
/// intrinsic whose accumulator fragment has `fragmentRegisterBits` register
/// bits and whose operand fragment is `fragment`. The accumulator's bases
/// say how its fragments are spread: its warp bases and its registers past
/// the fragment's each move along the product's rows or its columns. The
/// operand follows those along its own dimension (rows for a, columns for
/// b) and holds copies along the other; the reduction dimension repeats in
/// further registers.
llvm::Expected<LinearLayout> tileFragment(const LinearLayout &accumulator,
                                          int32_t fragmentRegisterBits,
                                          const LinearLayout &fragment,
                                          unsigned opIdx, int64_t depth) {
  // The operand's dimension the product's shares: a's rows are the
  // product's rows (its dim0), b's columns the product's columns (dim1).
  unsigned shared = opIdx == 0 ? 0 : 1;
  unsigned reduction = opIdx == 0 ? 1 : 0;
  auto project = [&](const Basis &basis, Basis &out) -> bool {
    out.assign(2, 0);
    if (basis[1 - shared] != 0 && basis[shared] != 0)
      return false; // moves along both: not a tiling tk makes
    out[shared] = basis[shared];
    return true;
  };
  LinearLayout::BasesT bases;
  std::vector<Basis> registers, lanes, warps;
  for (int32_t bit = 0; bit < fragment.getInDimSizeLog2(kRegisterDim); ++bit)
    registers.push_back(fragment.getBasis(kRegisterDim, bit));
  for (int32_t bit = 0; bit < fragment.getInDimSizeLog2(kLaneDim); ++bit)
    lanes.push_back(fragment.getBasis(kLaneDim, bit));
  auto moveError = [] {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the accumulator's tiling moves along rows and columns at once");
  };
  for (int32_t bit = fragmentRegisterBits;
       bit < accumulator.getInDimSizeLog2(kRegisterDim); ++bit) {
    Basis projected;
    if (!project(accumulator.getBasis(kRegisterDim, bit), projected))
      return moveError();
    // Repeats along the other dimension are the same operand elements.
    if (projected[shared] != 0)
      registers.push_back(projected);
  }
  int32_t fragmentDepth = fragment.getOutDimSize(standardOutDimName(reduction));
  for (int64_t step = fragmentDepth; step < depth; step *= 2) {
    Basis basis(2, 0);
    basis[reduction] = static_cast<int32_t>(step);
    registers.push_back(basis);
  }
  for (int32_t bit = 0; bit < accumulator.getInDimSizeLog2(kWarpDim); ++bit) {
    Basis projected;
    if (!project(accumulator.getBasis(kWarpDim, bit), projected))
      return moveError();
    warps.push_back(projected);
  }
  bases.emplace_back(kRegisterDim.str(), std::move(registers));
  bases.emplace_back(kLaneDim.str(), std::move(lanes));
  bases.emplace_back(kWarpDim.str(), std::move(warps));
  int32_t sharedSize = accumulator.getOutDimSize(standardOutDimName(shared));
  LinearLayout::DimSizes outDims = {{"dim0", 0}, {"dim1", 0}};
  outDims[shared].second = sharedSize;
  outDims[reduction].second = static_cast<int32_t>(depth);
  return LinearLayout::create(std::move(bases), std::move(outDims));
}

/// Operand `opIdx` of a dot computed by each thread on its own (no matrix
/// intrinsic: fused multiply-adds): every index that holds an element of
/// the product holds the whole reduction dimension of that element's row of
/// a (column of b), in registers. The accumulator's register, lane and warp
/// bases along the operand's own dimension are kept; those along the other
/// dimension hold copies (zero bases; registers that would only repeat an
/// element are dropped). Triton's dot-operand layout of a blocked parent.
llvm::Expected<LinearLayout> fmaLayout(const LinearLayout &accumulator,
                                       unsigned opIdx, int64_t depth) {
  unsigned shared = opIdx == 0 ? 0 : 1;
  unsigned reduction = 1 - shared;
  LinearLayout::BasesT bases;
  for (llvm::StringRef dim : {kRegisterDim, kLaneDim, kWarpDim}) {
    std::vector<Basis> projected;
    for (int32_t bit = 0; bit < accumulator.getInDimSizeLog2(dim); ++bit) {
      Basis basis = accumulator.getBasis(dim, bit);
      if (basis[reduction] != 0 && basis[shared] != 0)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "the accumulator's layout moves along rows and columns at once");
      Basis out(2, 0);
      out[shared] = basis[shared];
      if (dim == kRegisterDim && out[shared] == 0)
        continue;
      projected.push_back(out);
    }
    if (dim == kRegisterDim)
      for (int64_t step = 1; step < depth; step *= 2) {
        Basis basis(2, 0);
        basis[reduction] = static_cast<int32_t>(step);
        projected.push_back(basis);
      }
    bases.emplace_back(dim.str(), std::move(projected));
  }
  LinearLayout::DimSizes outDims = {{"dim0", 0}, {"dim1", 0}};
  outDims[shared].second =
      accumulator.getOutDimSize(standardOutDimName(shared));
  outDims[reduction].second = static_cast<int32_t>(depth);
  return LinearLayout::create(std::move(bases), std::move(outDims));
}

/// The plan of a dot computed by a warpgroup intrinsic: each operand, in
/// whatever layout it arrives, is read from workgroup memory by descriptor
/// (where tk-pipeline-loads made it a ring's slot, in place; otherwise
/// from the dot's scratch, where its holders write it).
llvm::Expected<DotOperandPlan>
planDescriptorOperands(DotOp dot, const LinearLayout &acc,
                       std::array<const LinearLayout *, 2> operands,
                       DotOperandPlan plan);

/// Operand a of a warpgroup intrinsic (wgmma) in registers: each k step's
/// fragment is the intrinsic's accumulator fragment of a product k wide
/// (PTX ISA: .m64nNk16's register fragment of A is D's of N = 16), tiled as
/// the accumulator tiles its instructions.
llvm::Expected<LinearLayout>
warpgroupOperandLayout(const LinearLayout &accumulator,
                       const MatrixIntrinsic &intrinsic, unsigned opIdx,
                       int64_t depth) {
  if (opIdx != 0)
    return makeError(intrinsic.name +
                     " reads operand b from shared memory itself");
  llvm::Expected<int64_t> width = getWarpgroupWidth(accumulator);
  if (!width)
    return width.takeError();
  llvm::Expected<LinearLayout> accFragment =
      intrinsic.accLayout.toLinearLayout(intrinsic.m, *width);
  if (!accFragment)
    return accFragment.takeError();
  llvm::Expected<LinearLayout> fragment =
      intrinsic.accLayout.toLinearLayout(intrinsic.m, intrinsic.k);
  if (!fragment)
    return fragment.takeError();
  return tileFragment(accumulator, accFragment->getInDimSizeLog2(kRegisterDim),
                      *fragment, opIdx, depth);
}

} // namespace

llvm::Expected<LinearLayout>
tk::getMatrixOperandLayout(const LinearLayout &accumulator,
                           const MatrixIntrinsic &intrinsic, unsigned opIdx,
                           int64_t depth) {
  if (intrinsic.scope == MatrixScope::Warpgroup)
    return warpgroupOperandLayout(accumulator, intrinsic, opIdx, depth);
  const std::optional<FragmentLayout> &operand =
      opIdx == 0 ? intrinsic.aLayout : intrinsic.bLayout;
  if (!operand)
    return makeError(intrinsic.name + " reads operand " +
                     (opIdx == 0 ? "a" : "b") + " from shared memory itself");
  llvm::Expected<LinearLayout> accFragment =
      intrinsic.accLayout.toLinearLayout(intrinsic.m, intrinsic.n);
  if (!accFragment)
    return accFragment.takeError();
  llvm::Expected<LinearLayout> fragment =
      opIdx == 0 ? operand->toLinearLayout(intrinsic.m, intrinsic.k)
                 : operand->toLinearLayout(intrinsic.k, intrinsic.n);
  if (!fragment)
    return fragment.takeError();
  return tileFragment(accumulator, accFragment->getInDimSizeLog2(kRegisterDim),
                      *fragment, opIdx, depth);
}

llvm::Expected<LinearLayout>
tk::getFmaOperandLayout(const LinearLayout &accumulator, unsigned opIdx,
                        int64_t depth) {
  return fmaLayout(accumulator, opIdx, depth);
}

/// The dimension along which `layout` holds consecutive elements in
/// consecutive registers, if any.
static std::optional<int32_t> getRegisterRunDim(const LinearLayout &layout) {
  if (layout.getInDimSizeLog2(kRegisterDim) == 0)
    return std::nullopt;
  std::vector<int32_t> first = layout.getBasis(kRegisterDim, 0);
  for (int32_t dim : {0, 1})
    if (first[dim] == 1 && first[1 - dim] == 0)
      return dim;
  return std::nullopt;
}

llvm::Expected<tk::DescriptorOperand>
tk::getDescriptorOperand(llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
                         unsigned opIdx, const LinearLayout &source,
                         int64_t width) {
  if (shape.size() != 2)
    return makeError("a dot operand of rank " + llvm::Twine(shape.size()) +
                     ", expected 2");
  // a: (m, k); b: (k, n). K-major: k is the contiguous dimension.
  int32_t kDim = opIdx == 0 ? 1 : 0;
  bool kMajor = opIdx == 0 || getRegisterRunDim(source).value_or(1) == 0;
  if (!kMajor && elementBytes != 2)
    return makeError("wgmma reads an MN-major operand of 16-bit elements "
                     "only, not of " +
                     llvm::Twine(elementBytes) + "-byte ones");
  int32_t contiguous = kMajor ? kDim : 1 - kDim;
  // An instruction reads its k (K-major) or its n (MN-major, at most the
  // tile's) from one row of atoms.
  int64_t extent = kMajor ? shape[kDim] : std::min(width, shape[contiguous]);
  DescriptorOperand operand;
  operand.swizzleBytes = std::min<int64_t>(128, extent * elementBytes);
  if (operand.swizzleBytes < 32)
    return makeError("a descriptor operand whose contiguous rows are " +
                     llvm::Twine(extent * elementBytes) +
                     " bytes, under the 32 of the narrowest swizzle");
  operand.order = {contiguous, 1 - contiguous};
  return operand;
}

llvm::Expected<int64_t> tk::getWarpgroupWidth(const LinearLayout &acc) {
  auto basis = [&](int32_t bit) { return acc.getBasis(kRegisterDim, bit); };
  int32_t bits = acc.getInDimSizeLog2(kRegisterDim);
  if (bits < 2 || basis(0) != std::vector<int32_t>{0, 1} ||
      basis(1) != std::vector<int32_t>{8, 0})
    return makeError("an accumulator that is not in wgmma's fragments");
  int64_t width = 8;
  for (int32_t bit = 2; bit < bits && width < 256; ++bit) {
    if (basis(bit) != std::vector<int32_t>{0, int32_t(width)})
      break;
    width *= 2;
  }
  return width;
}

llvm::Expected<tk::OperandSwizzle>
tk::getOperandSwizzle(llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
                      const LinearLayout &source, const LinearLayout &fragments,
                      bool readersFirst) {
  if (shape.size() != 2)
    return makeError("a dot operand of rank " + llvm::Twine(shape.size()) +
                     ", expected 2");
  // The buffer's rows run along the dimension in which one side moves
  // consecutive registers as vectors: the writers where they do (a
  // coalesced load's runs), else the readers' fragments; or the other way
  // round where the readers come first.
  const LinearLayout &first = readersFirst ? fragments : source;
  const LinearLayout &second = readersFirst ? source : fragments;
  int32_t colDim =
      getRegisterRunDim(first).value_or(getRegisterRunDim(second).value_or(1));
  int64_t cols = shape[colDim];
  int64_t rowBytes = cols * elementBytes;
  // Triton's swizzle of mma operands, in bytes: 16-byte vectors; rows
  // shorter than the 128 bytes of the banks share a phase in groups that
  // fill them; 8 phases over the 8 vectors of those 128 bytes.
  OperandSwizzle swizzle;
  swizzle.vec = std::clamp<int64_t>(16 / elementBytes, 1, cols);
  swizzle.perPhase = std::max<int64_t>(128 / rowBytes, 1);
  swizzle.maxPhase = std::max<int64_t>(8 / swizzle.perPhase, 1);
  swizzle.order = {colDim, 1 - colDim};
  return swizzle;
}

llvm::Expected<LinearLayout>
tk::getOperandSharedLayout(llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
                           const LinearLayout &source,
                           const LinearLayout &fragments, bool readersFirst) {
  llvm::Expected<OperandSwizzle> swizzle =
      getOperandSwizzle(shape, elementBytes, source, fragments, readersFirst);
  if (!swizzle)
    return swizzle.takeError();
  SmallVector<int32_t> sizes = {int32_t(shape[0]), int32_t(shape[1])};
  return swizzledSharedLayout(sizes, int32_t(swizzle->vec),
                              int32_t(swizzle->perPhase),
                              int32_t(swizzle->maxPhase), swizzle->order);
}

SmallVector<int64_t, 2>
tk::getDescriptorSlotOrder(const DescriptorOperand &descriptor,
                           ArrayRef<int32_t> transposed) {
  SmallVector<int64_t, 2> order = {descriptor.order[0], descriptor.order[1]};
  if (!transposed.empty())
    for (int64_t &dim : order)
      dim = transposed[dim];
  return order;
}

warp::LocalLoadOp tk::getSlotRead(Value operand,
                                  ArrayRef<int32_t> *transposed) {
  if (auto trans = operand.getDefiningOp<TransOp>()) {
    if (transposed)
      *transposed = trans.getOrder();
    operand = trans.getSrc();
  }
  return operand.getDefiningOp<warp::LocalLoadOp>();
}

/// Whether the lanes and warps of `a` and `b` hold the same coordinates:
/// they differ at most in the order of a thread's registers.
static bool sameThreadBases(const LinearLayout &a, const LinearLayout &b) {
  for (StringRef dim : {kLaneDim, kWarpDim}) {
    int32_t bits = a.hasInDim(dim) ? a.getInDimSizeLog2(dim) : 0;
    if (bits != (b.hasInDim(dim) ? b.getInDimSizeLog2(dim) : 0))
      return false;
    for (int32_t bit = 0; bit < bits; ++bit)
      if (a.getBasis(dim, bit) != b.getBasis(dim, bit))
        return false;
  }
  return true;
}

int64_t tk::getThreadRegisters(const LinearLayout &layout,
                               int64_t elementBits) {
  return llvm::divideCeil(layout.getInDimSize(kRegisterDim) * elementBits, 32);
}

int64_t tk::estimateLoopTileRegisters(scf::ForOp loop) {
  // A float tile a thread holds one register (or half of one) an element
  // of: not a splat or a constant (one value), nor a broadcast or a
  // reshape of a tile already counted.
  auto registersOf = [](Value value) -> int64_t {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    auto layout =
        type ? dyn_cast_or_null<warp::LinearLayoutAttr>(warp::getLayout(type))
             : nullptr;
    if (!layout || !isa<FloatType>(type.getElementType()))
      return 0;
    if (Operation *op = value.getDefiningOp())
      if (isa<SplatOp, BroadcastOp, ExpandDimsOp, arith::ConstantOp>(op))
        return 0;
    return getThreadRegisters(layout.getLinearLayout(),
                              type.getElementType().getIntOrFloatBitWidth());
  };
  Block &body = *loop.getBody();
  llvm::DenseMap<Operation *, int64_t> points;
  for (auto [point, op] : llvm::enumerate(body))
    points[&op] = int64_t(point);
  int64_t end = int64_t(points.size());
  // What the body reads from outside is held on every trip.
  int64_t throughout = 0;
  llvm::DenseSet<Value> outside;
  body.walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (!loop->isAncestor(operand.getParentBlock()->getParentOp()) &&
          outside.insert(operand).second)
        throughout += registersOf(operand);
  });
  // The rest from where it is defined (an iteration argument: the trip's
  // start) to its last use in the body (a yielded value: the trip's end).
  std::vector<int64_t> starts(end, 0), stops(end, 0);
  auto hold = [&](Value value, int64_t first) {
    int64_t registers = registersOf(value);
    if (!registers)
      return;
    int64_t last = first;
    for (Operation *user : value.getUsers())
      if (Operation *at = body.findAncestorOpInBlock(*user))
        last = std::max(last, points[at]);
    starts[first] += registers;
    stops[last] += registers;
  };
  for (BlockArgument arg : body.getArguments())
    hold(arg, 0);
  for (Operation &op : body)
    for (Value result : op.getResults())
      hold(result, points[&op]);
  int64_t held = 0, most = 0;
  for (int64_t point = 0; point < end; ++point) {
    held += starts[point];
    most = std::max(most, held);
    held -= stops[point];
  }
  return throughout + most;
}

llvm::Expected<DotOperandPlan> tk::planDotOperands(DotOp dot,
                                                   const TargetInfo *target) {
  auto layoutOf = [](Type type) -> const LinearLayout * {
    auto attr = dyn_cast_or_null<warp::LinearLayoutAttr>(warp::getLayout(type));
    return attr ? &attr.getLinearLayout() : nullptr;
  };
  // A cooperative-matrix accumulator's blocks are its placement's.
  const LinearLayout *acc = layoutOf(dot.getType());
  if (auto opaque = dyn_cast_or_null<warp::CooperativeMatrixAttr>(
          warp::getLayout(dot.getType())))
    acc = &opaque.getPlacement().getLinearLayout();
  std::array<const LinearLayout *, 2> operands = {
      layoutOf(dot.getA().getType()), layoutOf(dot.getB().getType())};
  if (!acc || !operands[0] || !operands[1])
    return makeError("a dot whose tiles are not all in #tkw.linear layouts");
  auto aType = cast<RankedTensorType>(dot.getA().getType());
  if (aType.getRank() != 2)
    return makeError("a dot of rank " + llvm::Twine(aType.getRank()) +
                     ", expected 2");
  int64_t depth = aType.getDimSize(1);

  DotOperandPlan plan;
  auto name =
      dot->getAttrOfType<StringAttr>(warp::TkwDialect::kIntrinsicAttrName);
  // An operand in a layout other than the one the product reads waits in
  // the dot's workgroup memory, laid out for its writers and readers.
  auto planShared = [&](unsigned opIdx, bool readersFirst) -> llvm::Error {
    // Multiply-adds read a row of a and a column of b a k step at a time,
    // at offsets computed: row-major, unswizzled. Opaque intrinsics load a
    // matrix at a row stride, which allows no swizzle: column blocks as
    // wide as the matrix (getOpaqueOperandBlock), so that a matrix's rows
    // are a block row apart, not a tile row (on NVIDIA's Vulkan driver
    // b's 16 rows of 512 bytes fell in one bank).
    bool computedOffsets = !name || plan.intrinsic->opaque;
    if (!computedOffsets && *operands[opIdx] == plan.fragments[opIdx])
      return llvm::Error::success();
    auto type = cast<RankedTensorType>(opIdx == 0 ? dot.getA().getType()
                                                  : dot.getB().getType());
    int64_t bytes =
        std::max<int64_t>(type.getElementType().getIntOrFloatBitWidth() / 8, 1);
    SmallVector<int32_t> shape(type.getShape());
    llvm::Expected<LinearLayout> shared =
        !computedOffsets
            ? getOperandSharedLayout(type.getShape(), bytes, *operands[opIdx],
                                     plan.fragments[opIdx], readersFirst)
        : !name ? swizzledSharedLayout(shape, 1, 1, 1, {1, 0})
                : columnBlockedSharedLayout(
                      shape,
                      int32_t(getOpaqueOperandBlock(*plan.intrinsic, opIdx)));
    if (!shared)
      return shared.takeError();
    plan.shared[opIdx] = std::move(*shared);
    plan.sharedOffset[opIdx] = llvm::alignTo(plan.sharedBytes, 16);
    plan.sharedBytes = plan.sharedOffset[opIdx] + type.getNumElements() * bytes;
    return llvm::Error::success();
  };
  if (!name) {
    // Fused multiply-adds read both operands from the thread's registers,
    // in any register order, or, where tk-dot-operand-layouts left them as
    // they were (kFmaDotRegisters), both from the dot's scratch, a k step
    // at a time.
    bool inRegisters = true;
    for (unsigned opIdx : {0u, 1u}) {
      llvm::Expected<LinearLayout> layout = fmaLayout(*acc, opIdx, depth);
      if (!layout)
        return layout.takeError();
      plan.fragments[opIdx] = std::move(*layout);
      inRegisters &= sameThreadBases(*operands[opIdx], plan.fragments[opIdx]);
    }
    if (!inRegisters)
      for (unsigned opIdx : {0u, 1u})
        if (llvm::Error error = planShared(opIdx, /*readersFirst=*/true))
          return error;
    return plan;
  }
  std::optional<TargetInfo> parsed;
  if (!target) {
    auto func = dot->getParentOfType<FuncOp>();
    auto spec =
        func
            ? func->getAttrOfType<StringAttr>(warp::TkwDialect::kTargetAttrName)
            : nullptr;
    if (!spec)
      return makeError("the dot records an intrinsic but its function "
                       "records no tkw.target");
    std::string error;
    parsed = TargetInfo::parse(spec.getValue(), error);
    if (!parsed)
      return makeError(error);
    target = &*parsed;
  }
  if (const MatrixIntrinsic *intrinsic = target->findIntrinsic(name))
    plan.intrinsic = *intrinsic;
  if (!plan.intrinsic)
    return makeError(target->name + " has no matrix intrinsic " +
                     name.getValue());
  if (plan.intrinsic->scope == MatrixScope::Warpgroup)
    return planDescriptorOperands(dot, *acc, operands, std::move(plan));
  // An opaque intrinsic loads its operands' matrices from workgroup memory
  // itself, at a row stride: both wait there in column blocks, unswizzled.
  if (plan.intrinsic->opaque) {
    for (unsigned opIdx : {0u, 1u}) {
      plan.fragments[opIdx] = *operands[opIdx];
      if (llvm::Error error = planShared(opIdx, /*readersFirst=*/false))
        return error;
    }
    return plan;
  }
  for (unsigned opIdx : {0u, 1u}) {
    llvm::Expected<LinearLayout> layout =
        getMatrixOperandLayout(*acc, *plan.intrinsic, opIdx, depth);
    if (!layout)
      return layout.takeError();
    plan.fragments[opIdx] = std::move(*layout);
    // A ring of one slot holds an operand written once, before the loop
    // (tk-dot-operand-layouts' staging): the dot reads its fragments there
    // one k step at a time, so that a thread holds one step's, not the
    // whole operand's. (Pipelined rings keep their reads whole.)
    warp::LocalLoadOp load = getSlotRead(opIdx == 0 ? dot.getA() : dot.getB());
    if (load && load.getOffsets().empty() &&
        load.getRing().getType().getSlots() == 1 &&
        *operands[opIdx] == plan.fragments[opIdx] &&
        load.getResult() == (opIdx == 0 ? dot.getA() : dot.getB())) {
      plan.inPlace[opIdx] = true;
      continue;
    }
    if (llvm::Error error =
            planShared(opIdx, /*readersFirst=*/!target->transposingMatrixLoads))
      return error;
  }
  return plan;
}

namespace {
llvm::Expected<DotOperandPlan>
planDescriptorOperands(DotOp dot, const LinearLayout &acc,
                       std::array<const LinearLayout *, 2> operands,
                       DotOperandPlan plan) {
  llvm::Expected<int64_t> width = getWarpgroupWidth(acc);
  if (!width)
    return width.takeError();
  plan.width = *width;
  for (unsigned opIdx : {0u, 1u}) {
    auto type = cast<RankedTensorType>(opIdx == 0 ? dot.getA().getType()
                                                  : dot.getB().getType());
    // a arrives in its register fragments (tk-dot-operand-layouts converted
    // it): no descriptor, no scratch.
    if (opIdx == 0) {
      llvm::Expected<LinearLayout> registers = warpgroupOperandLayout(
          acc, *plan.intrinsic, opIdx, type.getDimSize(1));
      if (!registers)
        return registers.takeError();
      if (*registers == *operands[opIdx]) {
        plan.fragments[opIdx] = std::move(*registers);
        continue;
      }
    }
    int64_t bytes =
        std::max<int64_t>(type.getElementType().getIntOrFloatBitWidth() / 8, 1);
    llvm::Expected<DescriptorOperand> operand = getDescriptorOperand(
        type.getShape(), bytes, opIdx, *operands[opIdx], plan.width);
    if (!operand)
      return operand.takeError();
    SmallVector<int32_t> sizes = {int32_t(type.getDimSize(0)),
                                  int32_t(type.getDimSize(1))};
    llvm::Expected<LinearLayout> shared = nvmmaSharedLayout(
        sizes, int32_t(bytes), int32_t(operand->swizzleBytes), operand->order);
    if (!shared)
      return shared.takeError();
    plan.fragments[opIdx] = *operands[opIdx];
    plan.shared[opIdx] = std::move(*shared);
    plan.descriptors[opIdx] = *operand;
    // A whole slot of a ring in this layout is read where it lies, also
    // transposed: its order, carried back to the slot's dimensions, is the
    // slot's.
    ArrayRef<int32_t> transposed;
    if (auto load =
            getSlotRead(opIdx == 0 ? dot.getA() : dot.getB(), &transposed)) {
      auto nvmma =
          dyn_cast<warp::NvmmaSharedAttr>(load.getRing().getType().getLayout());
      if (load.getOffsets().empty() && nvmma &&
          nvmma.getSwizzle() == operand->swizzleBytes &&
          nvmma.getOrder() ==
              ArrayRef<int64_t>(getDescriptorSlotOrder(*operand, transposed))) {
        plan.inPlace[opIdx] = true;
        continue;
      }
    }
    plan.sharedOffset[opIdx] =
        llvm::alignTo(plan.sharedBytes, kDescriptorAlignment);
    plan.sharedBytes = plan.sharedOffset[opIdx] + type.getNumElements() * bytes;
  }
  return plan;
}
} // namespace
