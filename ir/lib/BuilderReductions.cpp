//===- BuilderReductions.cpp - Dots, reductions, scans and control flow ---===//
//
// The KernelBuilder's dots, reductions, scans and control flow (Builder.cpp has
// the rest).
//
//===----------------------------------------------------------------------===//

#include "BuilderSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tk;
using namespace tk::builder_support;

//===----------------------------------------------------------------------===//
// Dot, reductions, scans
//===----------------------------------------------------------------------===//

Tile KernelBuilder::dot(const Tile &a, const Tile &b, const Tile &accIn,
                        const DotOptions &options) {
  if (!check(a, "dot") || !check(b, "dot"))
    return Tile();
  if (a.rank() != 2 || b.rank() != 2) {
    emitError("dot: expected 2-D tiles, got shapes " + shapeOf(a) + " and " +
              shapeOf(b));
    return Tile();
  }
  int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  if (b.shape()[0] != k) {
    emitError("dot: the inner dimensions differ: " + str(a.shape()) + " · " +
              str(b.shape()));
    return Tile();
  }
  if (a.dtype() != b.dtype() && !(isFp8(a.dtype()) && isFp8(b.dtype()))) {
    emitError("dot: dtype mismatch: " + str(a.dtype()) + " and " +
              str(b.dtype()) + "; cast one side first");
    return Tile();
  }
  Tile acc = accIn;
  if (acc.builder() || acc.valid()) {
    if (!check(acc, "dot"))
      return Tile();
    if (acc.shape() != ArrayRef<int64_t>({m, n})) {
      emitError("dot: the accumulator of shape " + shapeOf(acc) +
                " does not match the result shape " + str({m, n}));
      return Tile();
    }
  } else {
    Type accType = options.accType;
    if (!accType)
      accType = a.dtype().isInteger(8) ? i32()
                : a.dtype().isF64()    ? f64()
                                       : f32();
    acc = zeros({m, n}, accType);
    if (!acc.valid())
      return Tile();
  }
  DotTilingAttr tiling;
  if (options.tiling)
    tiling = DotTilingAttr::get(ctx_, *options.tiling);
  return wrapResult(DotOp::create(b_, loc_, acc.type(), a.value(), b.value(),
                                  acc.value(), options.inputPrecision, tiling));
}

/// Checks the sources of a reduce or scan: non-empty tiles of one shape and
/// an axis within their rank.
static bool checkCombineSources(KernelBuilder &k, ArrayRef<Tile> srcs, int axis,
                                StringRef what) {
  if (srcs.empty()) {
    k.emitError(what + ": needs at least one source");
    return false;
  }
  for (const Tile &src : srcs) {
    if (!src.valid()) {
      k.emitError(what + ": an operand is an empty Tile (the result of a "
                         "failed call, or default-constructed)");
      return false;
    }
    if (!src.isTile() || src.isPointer()) {
      k.emitError(what + ": expected tiles of numbers, got " + str(src.type()));
      return false;
    }
    if (src.shape() != srcs.front().shape()) {
      k.emitError(what + ": the sources have different shapes " +
                  str(srcs.front().shape()) + " and " + str(src.shape()));
      return false;
    }
  }
  if (axis < 0 || axis >= srcs.front().rank()) {
    k.emitError(what + ": axis " + Twine(axis) +
                " is out of range for a tile of shape " +
                str(srcs.front().shape()));
    return false;
  }
  return true;
}

/// Runs `combine` inside the combiner block of `op` and terminates it with
/// `ReturnOpT`; checks that it returns one value of each source's dtype.
template <typename ReturnOpT>
static bool buildCombiner(KernelBuilder &k, OpBuilder &b, Location loc,
                          Operation *op, ArrayRef<Tile> srcs,
                          KernelBuilder::MultiCombiner combine,
                          StringRef what) {
  Block &block = op->getRegion(0).front();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&block);
  SmallVector<Tile> acc, next;
  for (unsigned i = 0; i < srcs.size(); ++i) {
    // Names for `printNameLocAsPrefix`: ^bb0(%acc: f32, %next: f32).
    std::string suffix = srcs.size() == 1 ? "" : std::to_string(i);
    acc.push_back(k.wrap(block.getArgument(i)).named("acc" + suffix));
    next.push_back(
        k.wrap(block.getArgument(srcs.size() + i)).named("next" + suffix));
  }
  SmallVector<Tile> results = combine(acc, next);
  if (!k.ok())
    return false;
  if (results.size() != srcs.size()) {
    k.emitError(what + ": the combiner returned " + Twine(results.size()) +
                " values for " + Twine(srcs.size()) + " sources");
    return false;
  }
  SmallVector<Value> values;
  for (auto [index, result] : llvm::enumerate(results)) {
    if (!result.valid()) {
      k.emitError(what + ": the combiner returned an empty Tile");
      return false;
    }
    if (result.type() != srcs[index].dtype()) {
      k.emitError(what + ": the combiner returned " + str(result.type()) +
                  " for source " + Twine(index) + " of dtype " +
                  str(srcs[index].dtype()));
      return false;
    }
    values.push_back(result.value());
  }
  ReturnOpT::create(b, loc, values);
  return true;
}

SmallVector<Tile> KernelBuilder::reduce(ArrayRef<Tile> srcs, int axis,
                                        MultiCombiner combine) {
  if (!ok() || !checkCombineSources(*this, srcs, axis, "reduce"))
    return {};
  SmallVector<Value> values;
  for (const Tile &src : srcs)
    values.push_back(src.value());
  auto op = ReduceOp::create(b_, loc_, values, axis);
  if (!buildCombiner<ReduceReturnOp>(*this, b_, loc_, op, srcs, combine,
                                     "reduce"))
    return {};
  SmallVector<Tile> results;
  for (Value result : op.getResults())
    results.push_back(Tile(this, result));
  return results;
}

Tile KernelBuilder::reduce(const Tile &x, int axis, Combiner combine) {
  SmallVector<Tile> results = reduce(
      ArrayRef<Tile>(x), axis, [&](ArrayRef<Tile> acc, ArrayRef<Tile> next) {
        return SmallVector<Tile>{combine(acc[0], next[0])};
      });
  return results.empty() ? Tile() : results.front();
}

Tile KernelBuilder::widenForSum(const Tile &x) {
  // Narrow integers are summed as i32 so that sums do not wrap (as Triton
  // does). Narrow floats are summed in f32: unlike tl.sum, which adds fp16
  // in fp16 (the n eps |x| error that Triton's own kernels avoid with
  // `.to(tl.float32)` by hand), and as PyTorch accumulates half sums.
  if (x.isInt() && x.dtype().getIntOrFloatBitWidth() < 32)
    return cast(x, i32());
  if (x.isFloat() && x.dtype().getIntOrFloatBitWidth() < 32)
    return cast(x, f32());
  return x;
}

Tile KernelBuilder::reduceWith(const Tile &x, int axis, bool keepDims,
                               StringRef what, Combiner combine) {
  if (!check(x, what))
    return Tile();
  Tile result = reduce(x, axis, combine);
  if (!keepDims || !result.valid())
    return result;
  if (!result.isTile())
    return splat(result, {1});
  return expandDims(result, axis);
}

Tile KernelBuilder::sum(const Tile &x, int axis, bool keepDims) {
  if (!check(x, "sum"))
    return Tile();
  return reduceWith(widenForSum(x), axis, keepDims, "sum",
                    [](Tile a, Tile b) { return a + b; });
}

Tile KernelBuilder::max(const Tile &x, int axis, bool keepDims) {
  return reduceWith(x, axis, keepDims, "max",
                    [this](Tile a, Tile b) { return maximum(a, b); });
}

Tile KernelBuilder::min(const Tile &x, int axis, bool keepDims) {
  return reduceWith(x, axis, keepDims, "min",
                    [this](Tile a, Tile b) { return minimum(a, b); });
}

std::pair<Tile, Tile> KernelBuilder::argReduce(const Tile &x, int axis,
                                               bool isMax) {
  StringRef what = isMax ? "argmax" : "argmin";
  if (!check(x, what) || !checkCombineSources(*this, x, axis, what))
    return {};
  // The index tile: arange along `axis`, broadcast to the shape of `x`.
  int64_t size = x.shape()[axis];
  Tile index = arange(0, static_cast<int32_t>(size));
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != axis)
      index = expandDims(index, static_cast<int>(d));
  index = broadcastImpl(index, x.shape(), what);
  if (!index.valid())
    return {};
  SmallVector<Tile> results =
      reduce({x, index}, axis, [&](ArrayRef<Tile> acc, ArrayRef<Tile> next) {
        // Keep the accumulated pair when it wins or ties with a lower index,
        // as Triton's tie_break_left.
        Tile wins = isMax ? acc[0] > next[0] : acc[0] < next[0];
        Tile equal = acc[0] == next[0];
        Tile lower = acc[1] < next[1];
        Tile tie = equal & lower;
        Tile keep = wins | tie;
        Tile value = where(keep, acc[0], next[0]);
        Tile idx = where(keep, acc[1], next[1]);
        return SmallVector<Tile>{value, idx};
      });
  if (results.size() != 2)
    return {};
  return {results[0], results[1]};
}

std::pair<Tile, Tile> KernelBuilder::argmax(const Tile &x, int axis) {
  return argReduce(x, axis, /*isMax=*/true);
}
std::pair<Tile, Tile> KernelBuilder::argmin(const Tile &x, int axis) {
  return argReduce(x, axis, /*isMax=*/false);
}

SmallVector<Tile> KernelBuilder::scan(ArrayRef<Tile> srcs, int axis,
                                      MultiCombiner combine, bool reverse) {
  if (!ok() || !checkCombineSources(*this, srcs, axis, "scan"))
    return {};
  SmallVector<Value> values;
  for (const Tile &src : srcs)
    values.push_back(src.value());
  auto op = ScanOp::create(b_, loc_, values, axis, reverse);
  if (!buildCombiner<ScanReturnOp>(*this, b_, loc_, op, srcs, combine, "scan"))
    return {};
  SmallVector<Tile> results;
  for (Value result : op.getResults())
    results.push_back(Tile(this, result));
  return results;
}

Tile KernelBuilder::scan(const Tile &x, int axis, Combiner combine,
                         bool reverse) {
  SmallVector<Tile> results = scan(
      ArrayRef<Tile>(x), axis,
      [&](ArrayRef<Tile> acc, ArrayRef<Tile> next) {
        return SmallVector<Tile>{combine(acc[0], next[0])};
      },
      reverse);
  return results.empty() ? Tile() : results.front();
}

Tile KernelBuilder::cumsum(const Tile &x, int axis, bool reverse) {
  if (!check(x, "cumsum"))
    return Tile();
  return scan(
      widenForSum(x), axis, [](Tile a, Tile b) { return a + b; }, reverse);
}

Tile KernelBuilder::cumprod(const Tile &x, int axis, bool reverse) {
  if (!check(x, "cumprod"))
    return Tile();
  return scan(
      widenForSum(x), axis, [](Tile a, Tile b) { return a * b; }, reverse);
}

//===----------------------------------------------------------------------===//
// Control flow and debugging
//===----------------------------------------------------------------------===//

SmallVector<Tile> KernelBuilder::forLoop(const Operand &lb, const Operand &ub,
                                         const Operand &step,
                                         ArrayRef<Tile> initArgs,
                                         LoopBody body) {
  if (!ok())
    return {};
  // Bounds are i32 like Triton's loop variables, unless one is i64.
  Type type = i32();
  for (const Operand *bound : {&lb, &ub, &step})
    if (bound->isTile() && bound->tile().valid() &&
        bound->tile().dtype().isInteger(64))
      type = i64();
  Tile lower = toIndex(lb, type, "forLoop");
  Tile upper = toIndex(ub, type, "forLoop");
  Tile stride = toIndex(step, type, "forLoop");
  SmallVector<Value> inits;
  for (const Tile &init : initArgs) {
    if (!check(init, "forLoop"))
      return {};
    inits.push_back(init.value());
  }
  if (!ok())
    return {};
  auto forOp = scf::ForOp::create(
      b_, loc_, lower.value(), upper.value(), stride.value(), inits,
      [&](OpBuilder &, Location, Value iv, ValueRange args) {
        // ForOp::build positions b_ itself in the new body block.
        SmallVector<Tile> carried;
        for (Value arg : args)
          carried.push_back(Tile(this, arg));
        SmallVector<Tile> yielded = body(Tile(this, iv), carried);
        if (!ok())
          return;
        if (yielded.size() != inits.size()) {
          emitError("forLoop: the body yields " + Twine(yielded.size()) +
                    " values for " + Twine(inits.size()) + " carried values");
          return;
        }
        SmallVector<Value> values;
        for (auto [index, value] : llvm::enumerate(yielded)) {
          if (!check(value, "forLoop"))
            return;
          if (value.type() != inits[index].getType()) {
            emitError("forLoop: the body yields " + str(value.type()) +
                      " for carried value " + Twine(index) + " of type " +
                      str(inits[index].getType()));
            return;
          }
          values.push_back(value.value());
        }
        scf::YieldOp::create(b_, loc_, values);
      });
  if (!ok())
    return {};
  SmallVector<Tile> results;
  for (Value result : forOp.getResults())
    results.push_back(Tile(this, result));
  return results;
}

void KernelBuilder::forLoop(const Operand &lb, const Operand &ub,
                            const Operand &step,
                            llvm::function_ref<void(Tile iv)> body) {
  forLoop(lb, ub, step, {}, [&](Tile iv, ArrayRef<Tile>) {
    body(iv);
    return SmallVector<Tile>();
  });
}

void KernelBuilder::ifThen(const Tile &cond, llvm::function_ref<void()> body) {
  if (!check(cond, "ifThen"))
    return;
  if (cond.isTile() || !cond.isBool()) {
    emitError("ifThen: the condition must be a scalar i1, not " +
              str(cond.type()));
    return;
  }
  auto ifOp = scf::IfOp::create(b_, loc_, cond.value(),
                                /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b_);
  // Before the implicit scf.yield that IfOp::build added.
  b_.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  body();
}

void KernelBuilder::deviceAssert(const Tile &cond, StringRef message) {
  if (!check(cond, "deviceAssert"))
    return;
  if (!cond.isBool()) {
    emitError("deviceAssert: the condition must be i1, not " +
              str(cond.type()));
    return;
  }
  AssertOp::create(b_, loc_, cond.value(), message);
}

void KernelBuilder::print(StringRef prefix, ArrayRef<Tile> args) {
  SmallVector<Value> values;
  for (const Tile &arg : args) {
    if (!check(arg, "print"))
      return;
    values.push_back(arg.value());
  }
  if (ok())
    PrintOp::create(b_, loc_, prefix, values);
}

//===----------------------------------------------------------------------===//
// finish
//===----------------------------------------------------------------------===//

FailureOr<OwningOpRef<ModuleOp>> KernelBuilder::finish() {
  if (finished_) {
    emitError("finish() was already called");
    return failure();
  }
  if (!error_.empty()) {
    finished_ = true;
    module_ = nullptr;
    return failure();
  }
  finished_ = true;
  b_.setInsertionPointToEnd(entry_);
  ReturnOp::create(b_, loc_);

  SmallVector<Type> argTypes(entry_->getArgumentTypes());
  func_.setFunctionType(b_.getFunctionType(argTypes, {}));
  SmallVector<Attribute> names;
  SmallVector<DictionaryAttr> argAttrs;
  bool anyArgAttr = false;
  for (auto [name, divisibility] : llvm::zip(argNames_, argDivisibility_)) {
    names.push_back(b_.getStringAttr(name));
    SmallVector<NamedAttribute> attrs;
    if (divisibility != 0) {
      attrs.push_back(b_.getNamedAttr(TkDialect::kDivisibilityAttrName,
                                      b_.getI32IntegerAttr(divisibility)));
      anyArgAttr = true;
    }
    argAttrs.push_back(b_.getDictionaryAttr(attrs));
  }
  if (anyArgAttr)
    func_.setAllArgAttrs(argAttrs);
  func_->setAttr(TkDialect::kArgNamesAttrName, b_.getArrayAttr(names));
  if (!constexprs_.empty())
    func_->setAttr(TkDialect::kConstexprsAttrName,
                   b_.getDictionaryAttr(constexprs_));

  // Collect the verifier's diagnostics instead of printing them, so that the
  // caller decides where they go.
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  LogicalResult verified = success();
  {
    ScopedDiagnosticHandler handler(ctx_, [&](Diagnostic &diag) {
      if (!diagnostics.empty())
        os << "\n";
      os << diag;
      for (Diagnostic &note : diag.getNotes())
        os << "\n  note: " << note;
      return success();
    });
    verified = verify(*module_);
  }
  if (failed(verified)) {
    error_ = "kernel '" + func_.getSymName().str() +
             "' failed to verify: " + diagnostics;
    module_ = nullptr;
    return failure();
  }
  return std::move(module_);
}
