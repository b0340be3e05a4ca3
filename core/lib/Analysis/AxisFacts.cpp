//===- AxisFacts.cpp - contiguity and divisibility along a tile's axes ---===//

#include "tk/core/Analysis/AxisFacts.h"
#include "tk/core/WarpDialect.h"

#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <numeric>

using namespace mlir;

namespace tk {
namespace {

/// Divisibility is capped: beyond it the facts never matter, and products
/// stay far from overflow.
constexpr int64_t kMaxDivisibility = int64_t{1} << 30;

int64_t lowestPowerOfTwo(int64_t value) {
  if (value == 0)
    return kMaxDivisibility;
  return std::min<int64_t>(value & -value, kMaxDivisibility);
}

/// The size of `type`'s dimension `fromEnd` places before its last (1 for
/// a scalar, or past its first dimension).
int64_t dimSize(Type type, int64_t fromEnd) {
  auto tile = dyn_cast<RankedTensorType>(type);
  if (!tile || fromEnd >= tile.getRank())
    return 1;
  return tile.getDimSize(tile.getRank() - 1 - fromEnd);
}

/// The byte size of what a pointer (tile) points to; 1 for integers.
int64_t pointeeBytes(Type type) {
  if (auto tile = dyn_cast<RankedTensorType>(type))
    type = tile.getElementType();
  if (auto pointer = dyn_cast<tk::PtrType>(type))
    if (pointer.getPointeeType().isIntOrFloat())
      return std::max<int64_t>(
          pointer.getPointeeType().getIntOrFloatBitWidth() / 8, 1);
  return 1;
}

/// A value constant along the axis `fromEnd` places before the last, each
/// of which `divisibility` divides.
AxisFacts constantFacts(Type type, int64_t fromEnd, int64_t divisibility) {
  return AxisFacts{1, dimSize(type, fromEnd), divisibility};
}

/// What divides `facts`' values at the starts of runs of `length` values (a
/// power of two; `unit` bytes per value for pointers, else 1): inside a
/// longer run of consecutive values, such a start lies a multiple of
/// `length` past the run's first value.
int64_t divisibilityAtRunStarts(const AxisFacts &facts, int64_t length,
                                int64_t unit) {
  return facts.contiguity <= length
             ? facts.divisibility
             : std::gcd(facts.divisibility, length * unit);
}

/// a + b (b scaled by `scale` bytes per unit, for pointer offsets).
AxisFacts sumFacts(const AxisFacts &a, const AxisFacts &b, int64_t scale) {
  AxisFacts result;
  // A run of one stays a run where the other is constant across it.
  result.contiguity = std::max(std::gcd(a.contiguity, b.constancy),
                               std::gcd(a.constancy, b.contiguity));
  result.constancy = std::gcd(a.constancy, b.constancy);
  result.divisibility = std::gcd(
      divisibilityAtRunStarts(a, result.contiguity, scale),
      std::min(divisibilityAtRunStarts(b, result.contiguity, 1) * scale,
               kMaxDivisibility));
  return result;
}

/// a % b, as Triton's tutorials wrap offsets (`offs % M`): an aligned run
/// of m consecutive values, where m divides every divisor over it, crosses
/// no multiple of the divisor, so it stays consecutive (of either sign: an
/// aligned run does not straddle 0).
AxisFacts remainderFacts(const AxisFacts &a, const AxisFacts &b) {
  AxisFacts result;
  result.constancy = std::gcd(a.constancy, b.constancy);
  int64_t run = std::gcd(std::gcd(a.contiguity, b.divisibility), b.constancy);
  // Sub-runs of `run` inside a's runs start at multiples of `run` only when
  // a's run starts are.
  run = std::gcd(run, divisibilityAtRunStarts(a, run, 1));
  result.contiguity = std::max<int64_t>(run, 1);
  // a = q b + r with b a multiple of g: g divides r where it divides a.
  result.divisibility =
      std::gcd(divisibilityAtRunStarts(a, result.contiguity, 1),
               b.contiguity == 1 ? b.divisibility : 1);
  return result;
}

/// Whether `value` is the integer 1, or a tile of ones (a unit stride the
/// specialiser folded in, say).
bool isOne(Value value) {
  if (auto splat = value.getDefiningOp<tk::SplatOp>())
    value = splat.getSrc();
  APInt scalar;
  if (matchPattern(value, m_ConstantInt(&scalar)))
    return scalar.isOne();
  SplatElementsAttr tile;
  return matchPattern(value, m_Constant(&tile)) &&
         tile.getElementType().isIntOrIndex() &&
         tile.getSplatValue<APInt>().isOne();
}

/// The facts of block arguments (loops' pointer walks) along the axis the
/// second argument counts from the last.
using BlockArgumentFacts =
    llvm::function_ref<std::optional<AxisFacts>(BlockArgument, int64_t)>;

/// The facts of values along one axis each, counted from the last
/// (`fromEnd`): the rules follow the axis through the ops that move it
/// (tk.expand_dims, tk.trans).
class Analysis {
public:
  explicit Analysis(BlockArgumentFacts blockArgument)
      : blockArgument(blockArgument) {}

  AxisFacts facts(Value value, int64_t fromEnd = 0, int depth = 0) {
    // Address computations are short chains; give up on anything deeper.
    if (depth > 32)
      return AxisFacts{};
    // A value shared by several operands is analysed once.
    if (auto known = memo.find({value, fromEnd}); known != memo.end())
      return known->second;
    AxisFacts result = compute(value, fromEnd, depth);
    memo[{value, fromEnd}] = result;
    return result;
  }

private:
  AxisFacts compute(Value value, int64_t axis, int depth) {
    Type type = value.getType();
    auto along = [&](Value operand, int64_t operandAxis = -1) {
      return facts(operand, operandAxis < 0 ? axis : operandAxis, depth + 1);
    };
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      if (std::optional<AxisFacts> known = blockArgument(argument, axis))
        return *known;
      // A loop's counter takes lower + i * step: what divides both divides
      // each (a row walked in blocks, `for off in range(0, N, BLOCK)`).
      auto loop = dyn_cast<scf::ForOp>(argument.getOwner()->getParentOp());
      if (loop && argument.getOwner() == loop.getBody() &&
          argument.getArgNumber() < loop.getNumInductionVars())
        return constantFacts(
            type, axis,
            std::gcd(along(loop.getLowerBound(), 0).divisibility,
                     along(loop.getStep(), 0).divisibility));
      auto function =
          dyn_cast<FunctionOpInterface>(argument.getOwner()->getParentOp());
      if (function && argument.getOwner()->isEntryBlock())
        if (auto divisibility = function.getArgAttrOfType<IntegerAttr>(
                argument.getArgNumber(), "tk.divisibility"))
          return constantFacts(type, axis,
                               lowestPowerOfTwo(divisibility.getInt()));
      return constantFacts(type, axis, 1);
    }
    Operation *op = value.getDefiningOp();
    APInt scalar;
    if (matchPattern(value, m_ConstantInt(&scalar)))
      return constantFacts(type, axis, lowestPowerOfTwo(scalar.getSExtValue()));
    SplatElementsAttr splat;
    if (matchPattern(value, m_Constant(&splat)) &&
        splat.getElementType().isIntOrIndex())
      return constantFacts(
          type, axis,
          lowestPowerOfTwo(splat.getSplatValue<APInt>().getSExtValue()));
    if (auto range = dyn_cast<tk::MakeRangeOp>(op)) {
      if (axis != 0)
        return constantFacts(type, axis, lowestPowerOfTwo(range.getStart()));
      return AxisFacts{range.getEnd() - range.getStart(), 1,
                       lowestPowerOfTwo(range.getStart())};
    }
    if (auto splatOp = dyn_cast<tk::SplatOp>(op))
      return constantFacts(type, axis, along(splatOp.getSrc(), 0).divisibility);
    if (auto broadcast = dyn_cast<tk::BroadcastOp>(op)) {
      AxisFacts source = along(broadcast.getSrc());
      if (dimSize(broadcast.getSrc().getType(), axis) == 1 &&
          dimSize(type, axis) != 1)
        return constantFacts(type, axis, source.divisibility);
      return source;
    }
    if (auto expand = dyn_cast<tk::ExpandDimsOp>(op)) {
      int64_t rank = cast<RankedTensorType>(type).getRank();
      int64_t dim = rank - 1 - axis, inserted = expand.getAxis();
      if (dim != inserted)
        return along(expand.getSrc(), dim > inserted ? axis : axis - 1);
      // A new axis of size 1: every value is a run of its own.
      AxisFacts source = along(expand.getSrc(), 0);
      return AxisFacts{1, 1, source.contiguity == 1 ? source.divisibility : 1};
    }
    if (auto trans = dyn_cast<tk::TransOp>(op)) {
      int64_t rank = cast<RankedTensorType>(type).getRank();
      ArrayRef<int32_t> order = trans.getOrder();
      int64_t dim = rank - 1 - axis;
      if (dim < 0 || dim >= int64_t(order.size()))
        return AxisFacts{};
      return along(trans.getSrc(), rank - 1 - order[dim]);
    }
    // A conversion moves each element to other threads, not to another
    // coordinate: the facts along each axis are the source's (a loop's
    // pointers start from offsets another layout's store shares).
    if (auto convert = dyn_cast<tk::warp::ConvertLayoutOp>(op))
      return along(convert.getSrc());
    if (auto add = dyn_cast<tk::AddPtrOp>(op))
      return sumFacts(along(add.getPtr()), along(add.getOffset()),
                      pointeeBytes(type));
    if (auto add = dyn_cast<arith::AddIOp>(op))
      return sumFacts(along(add.getLhs()), along(add.getRhs()), 1);
    if (auto sub = dyn_cast<arith::SubIOp>(op)) {
      // a - b: a run of a minus what is constant across it stays a run
      // (b's runs of consecutive values run backwards: none are kept).
      AxisFacts rhs = along(sub.getRhs());
      if (rhs.contiguity > 1)
        rhs = AxisFacts{1, rhs.constancy, 1};
      return sumFacts(along(sub.getLhs()), rhs, 1);
    }
    if (auto mul = dyn_cast<arith::MulIOp>(op)) {
      AxisFacts lhs = along(mul.getLhs()), rhs = along(mul.getRhs());
      if (isOne(mul.getRhs()))
        return lhs;
      if (isOne(mul.getLhs()))
        return rhs;
      // Products of values that each divisibility divides.
      AxisFacts result;
      result.constancy = std::gcd(lhs.constancy, rhs.constancy);
      if (lhs.contiguity == 1 && rhs.contiguity == 1)
        result.divisibility =
            std::min(lhs.divisibility * rhs.divisibility, kMaxDivisibility);
      return result;
    }
    if (auto ext = dyn_cast<arith::ExtSIOp>(op))
      return along(ext.getIn());
    if (auto compare = dyn_cast<arith::CmpIOp>(op))
      return compareFacts(compare, axis, depth);
    if (isa<arith::AndIOp, arith::OrIOp>(op)) {
      // Equal inputs give equal outputs; and-ing keeps the low zero bits.
      AxisFacts lhs = along(op->getOperand(0)), rhs = along(op->getOperand(1));
      AxisFacts result;
      result.constancy = std::gcd(lhs.constancy, rhs.constancy);
      if (isa<arith::AndIOp>(op) && lhs.contiguity == 1 && rhs.contiguity == 1)
        result.divisibility = std::max(lhs.divisibility, rhs.divisibility);
      return result;
    }
    if (isa<arith::RemSIOp, arith::RemUIOp>(op))
      return remainderFacts(along(op->getOperand(0)), along(op->getOperand(1)));
    return AxisFacts{};
  }

  /// Triton's rule for comparisons: runs of equal results where both sides
  /// are runs of equal values, and where an ordered comparison sets an
  /// aligned contiguous run against a constant: a run of g consecutive
  /// values starting at a multiple of g, with g dividing the constant,
  /// never straddles it.
  AxisFacts compareFacts(arith::CmpIOp compare, int64_t axis, int depth) {
    AxisFacts lhs = facts(compare.getLhs(), axis, depth + 1),
              rhs = facts(compare.getRhs(), axis, depth + 1);
    int64_t size = dimSize(compare.getLhs().getType(), axis);
    AxisFacts result;
    result.constancy = std::gcd(lhs.constancy, rhs.constancy);
    auto runAgainstConstant = [&](const AxisFacts &run,
                                  const AxisFacts &constant) {
      if (constant.constancy != size || run.contiguity == 1)
        return int64_t(1);
      return std::gcd(run.contiguity,
                      std::gcd(run.divisibility, constant.divisibility));
    };
    // x < c and x >= c (c <= x, c > x) split at a multiple of the run;
    // x <= c and x > c split one after it.
    using P = arith::CmpIPredicate;
    P predicate = compare.getPredicate();
    bool runFirst =
        llvm::is_contained({P::slt, P::ult, P::sge, P::uge}, predicate);
    bool constantFirst =
        llvm::is_contained({P::sle, P::ule, P::sgt, P::ugt}, predicate);
    if (runFirst)
      result.constancy =
          std::max(result.constancy, runAgainstConstant(lhs, rhs));
    if (constantFirst)
      result.constancy =
          std::max(result.constancy, runAgainstConstant(rhs, lhs));
    return result;
  }

  BlockArgumentFacts blockArgument;
  llvm::DenseMap<std::pair<Value, int64_t>, AxisFacts> memo;
};

/// getLoopWalkFacts along the axis `fromEnd` places before the last.
std::optional<AxisFacts> loopWalkFacts(BlockArgument arg, int64_t fromEnd) {
  auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
  if (!loop || arg.getOwner() != loop.getBody() ||
      arg.getArgNumber() < loop.getNumInductionVars())
    return std::nullopt;
  unsigned index = arg.getArgNumber() - loop.getNumInductionVars();
  auto step = loop.getBody()
                  ->getTerminator()
                  ->getOperand(index)
                  .getDefiningOp<tk::AddPtrOp>();
  if (!step || step.getPtr() != arg ||
      !loop.isDefinedOutsideOfLoop(step.getOffset()))
    return std::nullopt;
  Analysis analysis(loopWalkFacts);
  return getWalkFacts(analysis.facts(loop.getInitArgs()[index], fromEnd),
                      analysis.facts(step.getOffset(), fromEnd), arg.getType());
}

} // namespace

AxisFacts getWalkFacts(const AxisFacts &start, const AxisFacts &step,
                       Type pointerType) {
  AxisFacts result = start;
  result.divisibility =
      std::gcd(start.divisibility,
               std::min(step.divisibility * pointeeBytes(pointerType),
                        kMaxDivisibility));
  return result;
}

std::optional<AxisFacts> getLoopWalkFacts(BlockArgument arg) {
  return loopWalkFacts(arg, 0);
}

bool runsAreContiguousAndAligned(const AxisFacts &facts, int64_t width,
                                 int64_t elementBytes, int64_t runBytes) {
  // Runs of `width` inside a contiguous run start `width` elements apart.
  return facts.contiguity % width == 0 &&
         std::gcd(facts.divisibility, width * elementBytes) % runBytes == 0;
}

AxisFacts getAxisFacts(
    Value value,
    llvm::function_ref<std::optional<AxisFacts>(BlockArgument)> blockArgument) {
  auto lastAxis = [&](BlockArgument arg,
                      int64_t fromEnd) -> std::optional<AxisFacts> {
    if (fromEnd != 0)
      return std::nullopt;
    return blockArgument(arg);
  };
  return Analysis(lastAxis).facts(value);
}

AxisFacts getAxisFactsAlong(Value value, int64_t dim) {
  auto tile = dyn_cast<RankedTensorType>(value.getType());
  int64_t rank = tile ? tile.getRank() : 0;
  if (dim < 0 || dim >= std::max<int64_t>(rank, 1))
    return AxisFacts{};
  return Analysis(loopWalkFacts)
      .facts(value, std::max<int64_t>(rank, 1) - 1 - dim);
}

} // namespace tk
