//===- WarpgroupDot.cpp - tk.dot on a warpgroup intrinsic (wgmma) ---------===//
//
// A warpgroup intrinsic reads b, and a unless a arrives in its register
// fragments (attention's p and q), from workgroup memory through
// descriptors, in the nvmma layouts the dot's plan chose (DotOperands.h).
// An operand that tk-pipeline-loads made a ring's slot in that layout is
// read where it lies; any other is first written to the dot's scratch by
// the threads that hold it, then published to the unit's reads.
//
// The accumulator's layout tiles the intrinsic's 64 x n fragment over
// registers and warpgroups (tk-assign-linear-layouts): a thread finds its
// tiles by their register-only origins, to which its warpgroup adds its
// part (the warp bits above the four warps of one warpgroup). Since the
// shared layouts are linear, the offset of an operand block is the XOR of
// the offsets of those two parts, and at a block's first row (a multiple of
// 8) it is also the unswizzled address a descriptor starts from.
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"

#include "tk/core/Conversion/Passes.h"
#include "tk/core/DotOperands.h"
#include "tk/core/TargetInfo.h"
#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <optional>
#include <set>

using namespace mlir;

namespace tk::simt {

namespace {

/// The offset `inverse` (coordinates -> offset) gives (row, col).
int32_t offsetOf(const LinearLayout &inverse, int32_t row, int32_t col) {
  return inverse.apply({{"dim0", row}, {"dim1", col}})[0].second;
}

/// XOR of `constant` and, for each warp bit `bit` of `parts` set in `warp`
/// (i32), `parts[bit]`: an offset of this thread's warpgroup.
Value warpgroupOffset(OpBuilder &b, Location loc, Value warp,
                      ArrayRef<std::pair<int32_t, int32_t>> parts,
                      int32_t constant) {
  Type i32 = b.getI32Type();
  Value offset = arith::ConstantIntOp::create(b, loc, i32, constant);
  Value zero = arith::ConstantIntOp::create(b, loc, i32, 0);
  Value one = arith::ConstantIntOp::create(b, loc, i32, 1);
  for (auto [bit, part] : parts) {
    Value shifted = arith::ShRUIOp::create(
        b, loc, warp, arith::ConstantIntOp::create(b, loc, i32, bit));
    Value set = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, shifted, one), zero);
    offset = arith::XOrIOp::create(
        b, loc, offset,
        arith::SelectOp::create(b, loc, set,
                                arith::ConstantIntOp::create(b, loc, i32, part),
                                zero));
  }
  return offset;
}

} // namespace

bool isReadInPlace(warp::LocalLoadOp load) {
  if (load->use_empty())
    return false;
  // Through one transpose (attention's k).
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : load->getUses()) {
    auto trans = dyn_cast<tk::TransOp>(use.getOwner());
    if (!trans) {
      uses.push_back(&use);
      continue;
    }
    if (trans->use_empty())
      return false;
    for (OpOperand &transUse : trans->getUses())
      uses.push_back(&transUse);
  }
  for (OpOperand *use : uses) {
    auto dot = dyn_cast<tk::DotOp>(use->getOwner());
    if (!dot || use->getOperandNumber() > 1)
      return false;
    llvm::Expected<DotOperandPlan> plan = planDotOperands(dot, nullptr);
    if (!plan) {
      llvm::consumeError(plan.takeError());
      return false;
    }
    if (!plan->inPlace[use->getOperandNumber()])
      return false;
  }
  return true;
}

FailureOr<SmallVector<Value>>
lowerWarpgroupDot(tk::DotOp op, const DotOperandPlan &plan,
                  const LinearLayout &acc, ValueRange aValues,
                  ValueRange bValues, ValueRange accValues,
                  ConversionPatternRewriter &rewriter, const MatrixUnit &unit,
                  const RegisterTypeConverter &converter) {
  const MatrixIntrinsic &intrinsic = *plan.intrinsic;
  Location loc = op.getLoc();
  ThreadPosition thread = ThreadPosition::get(rewriter, loc, converter);
  auto error = [&](const Twine &message) {
    return op.emitOpError("tk-convert-registers-to-simt: ") << message;
  };

  // Each operand's buffer, the element where its tile starts, and its
  // layout's inverse (coordinates -> offset).
  std::array<MatrixUnit::WarpgroupOperand, 2> operands;
  std::array<Value, 2> bases;
  std::array<LinearLayout, 2> inverses;
  bool written = false;
  bool aInRegisters = !plan.descriptors[0];
  for (unsigned opIdx : {0u, 1u}) {
    if (opIdx == 0 && aInRegisters)
      continue;
    Value operand = opIdx == 0 ? op.getA() : op.getB();
    auto type = cast<RankedTensorType>(operand.getType());
    int64_t bytes =
        std::max<int64_t>(type.getElementType().getIntOrFloatBitWidth() / 8, 1);
    const DescriptorOperand &descriptor = *plan.descriptors[opIdx];
    llvm::Expected<LinearLayout> inverse = plan.shared[opIdx]->invert();
    if (!inverse)
      return error(llvm::toString(inverse.takeError()));
    inverses[opIdx] = std::move(*inverse);
    Value buffer =
        getScratchBuffer(rewriter, loc, op, storageType(type.getElementType()));
    if (!buffer)
      return error("no workgroup buffer for the dot's operands");
    operands[opIdx].buffer = buffer;
    operands[opIdx].swizzleBytes = descriptor.swizzleBytes;
    // a: (m, k), b: (k, n).
    operands[opIdx].kMajor = descriptor.order[0] == (opIdx == 0 ? 1 : 0);
    operands[opIdx].atomColumnBytes =
        type.getDimSize(descriptor.order[1]) * descriptor.swizzleBytes;
    if (plan.inPlace[opIdx]) {
      warp::LocalLoadOp load = getSlotRead(operand);
      Value ring = rewriter.getRemappedValue(load.getRing());
      Value slot = rewriter.getRemappedValue(load.getSlot());
      if (!ring || !slot)
        return error("a ring read in place without its converted slot");
      bases[opIdx] =
          getSlotBase(rewriter, loc, load.getRing().getType(), ring, slot);
      continue;
    }
    auto scratch = op->getAttrOfType<DenseI64ArrayAttr>(
        warp::TkwDialect::kScratchAttrName);
    const LinearLayout *source = getLinearLayout(type);
    if (!scratch || scratch.size() != 2 ||
        (scratch[0] + plan.sharedOffset[opIdx]) % bytes || !source)
      return error("a warpgroup dot without an aligned tkw.scratch (run "
                   "tk-allocate-shared-memory first)");
    bases[opIdx] = arith::ConstantIntOp::create(
        rewriter, loc, rewriter.getI32Type(),
        (scratch[0] + plan.sharedOffset[opIdx]) / bytes);
    if (failed(writeTileToWorkgroup(
            rewriter, loc, op, opIdx == 0 ? aValues : bValues, *source,
            *plan.shared[opIdx], buffer, bases[opIdx], thread)))
      return failure();
    written = true;
  }
  if (written)
    unit.publishOperands(rewriter, loc);

  // The warp bits of the accumulator: the first two are the intrinsic's
  // (rows 16 and 32 of its fragment); the others place warpgroups, each
  // moving a's rows or b's columns.
  int64_t m = intrinsic.m, n = plan.width;
  llvm::Expected<LinearLayout> fragment =
      intrinsic.accLayout.toLinearLayout(m, n);
  if (!fragment)
    return error(llvm::toString(fragment.takeError()));
  int32_t warpBits = acc.getInDimSizeLog2(kWarpDim);
  if (warpBits < 2 ||
      acc.getBasis(kWarpDim, 0) != std::vector<int32_t>{16, 0} ||
      acc.getBasis(kWarpDim, 1) != std::vector<int32_t>{32, 0})
    return error("an accumulator whose warps are not whole warpgroups");
  SmallVector<std::pair<int32_t, int32_t>> aParts, bParts;
  for (int32_t bit = 2; bit < warpBits; ++bit) {
    std::vector<int32_t> basis = acc.getBasis(kWarpDim, bit);
    if (basis[0] && !aInRegisters)
      aParts.push_back({bit, offsetOf(inverses[0], basis[0], 0)});
    if (basis[1])
      bParts.push_back({bit, offsetOf(inverses[1], 0, basis[1])});
  }

  // The tiles by register-only origin, each with its registers in the
  // fragment's order.
  Type accElement = getElementTypeOrSelf(op.getType());
  bool narrow = accElement.isF16() || accElement.isBF16();
  // Products left running read no register but the next products'.
  int64_t pending = 0;
  if (auto attr =
          op->getAttrOfType<IntegerAttr>(warp::TkwDialect::kPendingAttrName))
    pending = attr.getInt();
  // A deferred dot (tk-defer-dot-waits) waits nowhere: a later
  // tkw.dot_wait does.
  bool deferred = op->hasAttr(warp::TkwDialect::kDeferredAttrName);
  if (pending < 0 || ((pending > 0 || deferred) && !accElement.isF32()))
    return error("products left running (tkw.pending, tkw.deferred) need a "
                 "non-negative count and an f32 accumulator");
  RegisterIndex accIndex(acc);
  // a in registers: each k step's block is the accumulator fragment of a
  // product k wide, which the thread finds as it finds its tiles.
  std::optional<RegisterIndex> aIndex;
  LinearLayout aFragment;
  if (aInRegisters) {
    llvm::Expected<LinearLayout> layout =
        intrinsic.accLayout.toLinearLayout(m, intrinsic.k);
    if (!layout)
      return error(llvm::toString(layout.takeError()));
    aFragment = std::move(*layout);
    aIndex.emplace(plan.fragments[0]);
  }
  SmallVector<Value> results(accValues.begin(), accValues.end());
  SmallVector<SmallVector<int32_t>> tileRegisters;
  SmallVector<MatrixUnit::WarpgroupTile> tiles;
  std::set<std::pair<int32_t, int32_t>> seen;
  int64_t depth = cast<RankedTensorType>(op.getA().getType()).getDimSize(1);
  for (int32_t reg = 0; reg < int32_t(results.size()); ++reg) {
    SmallVector<int32_t> at = registerCoordinates(acc, reg);
    int32_t row = at[0] & ~int32_t(m - 1), col = at[1] & ~int32_t(n - 1);
    if (!seen.insert({row, col}).second)
      continue;
    std::optional<SmallVector<int32_t>> registers =
        gatherFragment(accIndex, *fragment, row, col);
    if (!registers)
      return error("an accumulator tile not in the thread's registers");
    MatrixUnit::WarpgroupTile tile;
    for (int32_t held : *registers)
      tile.accumulator.push_back(
          narrow ? Value(arith::ExtFOp::create(
                       rewriter, loc, rewriter.getF32Type(), results[held]))
                 : results[held]);
    for (int64_t k = 0; k < depth; k += intrinsic.k) {
      if (aInRegisters) {
        std::optional<SmallVector<int32_t>> held =
            gatherFragment(*aIndex, aFragment, row, int32_t(k));
        if (!held)
          return error("a block of a not in the thread's registers");
        tile.aFragments.emplace_back();
        for (int32_t reg : *held)
          tile.aFragments.back().push_back(aValues[reg]);
      } else {
        Value aOffset = warpgroupOffset(rewriter, loc, thread.warp, aParts,
                                        offsetOf(inverses[0], row, int32_t(k)));
        tile.aStarts.push_back(
            arith::AddIOp::create(rewriter, loc, bases[0], aOffset));
      }
      Value bOffset = warpgroupOffset(rewriter, loc, thread.warp, bParts,
                                      offsetOf(inverses[1], int32_t(k), col));
      tile.bStarts.push_back(
          arith::AddIOp::create(rewriter, loc, bases[1], bOffset));
    }
    tiles.push_back(std::move(tile));
    tileRegisters.push_back(std::move(*registers));
  }
  FailureOr<SmallVector<SmallVector<Value>>> products =
      unit.emitWarpgroupProducts(rewriter, loc, intrinsic, n, operands[0],
                                 operands[1], tiles, deferred ? 1 : pending);
  if (failed(products))
    return error("the matrix unit emits no " + intrinsic.name);
  for (auto [registers, values] : llvm::zip_equal(tileRegisters, *products))
    for (auto [reg, value] : llvm::zip_equal(registers, values))
      results[reg] =
          narrow ? arith::TruncFOp::create(rewriter, loc, accElement, value)
                 : value;
  // Products left running: those of earlier trips are waited for here.
  if (!deferred && pending > 0 &&
      failed(unit.emitWarpgroupWait(rewriter, loc, {}, pending)))
    return error("the matrix unit has no wait for running products");
  return results;
}

namespace {

/// tkw.dot_wait: the unit's wait, through the accumulator's registers.
struct DotWaitLowering : OpConversionPattern<warp::DotWaitOp> {
  DotWaitLowering(const TypeConverter &converter, MLIRContext *context,
                  std::shared_ptr<const MatrixUnit> unit)
      : OpConversionPattern(converter, context), unit(std::move(unit)) {}

  LogicalResult
  matchAndRewrite(warp::DotWaitOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<SmallVector<Value>> waited =
        unit ? unit->emitWarpgroupWait(rewriter, op.getLoc(),
                                       adaptor.getInput(), op.getPending())
             : FailureOr<SmallVector<Value>>(failure());
    if (failed(waited))
      return op.emitOpError("tk-convert-registers-to-simt: the matrix unit "
                            "has no wait for running products of this tile");
    rewriter.replaceOpWithMultiple(op, {*waited});
    return success();
  }

  std::shared_ptr<const MatrixUnit> unit;
};

} // namespace

void populateDotWaitPatterns(RegisterTypeConverter &converter,
                             RewritePatternSet &patterns,
                             std::shared_ptr<const MatrixUnit> matrixUnit) {
  patterns.add<DotWaitLowering>(converter, patterns.getContext(),
                                std::move(matrixUnit));
}

} // namespace tk::simt
