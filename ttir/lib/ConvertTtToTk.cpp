//===- ConvertTtToTk.cpp - Triton's TTIR into tk (tk-convert-tt-to-tk) ----===//
//
// tk's ops follow Triton's semantics one to one (DESIGN.md §2), so most of
// the conversion renames: the types are converted in place first (every
// `!tt.ptr` becomes a `!tk.ptr`), then each tt op is replaced by its tk twin
// or by the arith/math ops that compute it, at its own location. What tk
// cannot run is reported at the op, never guessed at.
//
//===----------------------------------------------------------------------===//

#include "tk/ttir/Dialect.h"
#include "tk/ttir/Import.h"
#include "tk/ttir/Passes.h"

#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace tk::ttir {
#define GEN_PASS_DEF_TKCONVERTTTTOTK
#include "tk/ttir/Passes.h.inc"
} // namespace tk::ttir

using namespace mlir;
namespace tt = tk::ttir;

namespace {

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// `type` with every tt pointer a tk pointer.
Type convertType(Type type) {
  MLIRContext *context = type.getContext();
  if (auto ptr = dyn_cast<tt::PtrType>(type))
    return tk::PtrType::get(context, convertType(ptr.getPointeeType()));
  // A tensor descriptor is a block pointer whose loads and stores check
  // every bound.
  if (auto descriptor = dyn_cast<tt::TensorDescType>(type))
    return tk::PtrType::get(context, descriptor.getBlockType());
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.clone(convertType(tensor.getElementType()));
  if (auto function = dyn_cast<FunctionType>(type)) {
    SmallVector<Type> inputs, results;
    for (Type input : function.getInputs())
      inputs.push_back(convertType(input));
    for (Type result : function.getResults())
      results.push_back(convertType(result));
    return FunctionType::get(context, inputs, results);
  }
  return type;
}

/// The address space of the first pointer in `type` outside global memory
/// (Triton's 1), if any: tk's pointers are global.
std::optional<int> nonGlobalAddressSpace(Type type) {
  if (auto ptr = dyn_cast<tt::PtrType>(type)) {
    if (ptr.getAddressSpace() != 1)
      return ptr.getAddressSpace();
    return nonGlobalAddressSpace(ptr.getPointeeType());
  }
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return nonGlobalAddressSpace(tensor.getElementType());
  return std::nullopt;
}

InFlightDiagnostic unsupported(Operation *op, const Twine &why) {
  return op->emitError() << "'" << op->getName()
                         << "' cannot be imported into tk: " << why;
}

Type elementTypeOf(Type type) { return getElementTypeOrSelf(type); }

/// A descriptor access's boundary check: dimensions 0 to rank - 1.
SmallVector<int32_t> everyDimension(size_t rank) {
  return llvm::to_vector(llvm::seq<int32_t>(0, int32_t(rank)));
}

//===----------------------------------------------------------------------===//
// extern_elementwise: libdevice and OCML names to math ops
//===----------------------------------------------------------------------===//

/// Builds the op for the math function `name` (libdevice's and OCML's name
/// without prefix or type suffix); null, having built nothing, for one tk
/// does not know.
Value buildMathFunction(OpBuilder &b, Location loc, StringRef name,
                        ValueRange args, Type resultType) {
  auto unary = [&](auto tag) -> Value {
    using OpTy = decltype(tag);
    if (args.size() != 1)
      return {};
    return OpTy::create(b, loc, args[0]);
  };
  auto binary = [&](auto tag) -> Value {
    using OpTy = decltype(tag);
    if (args.size() != 2)
      return {};
    return OpTy::create(b, loc, args[0], args[1]);
  };
  // clang-format off
  if (name == "exp") return unary(math::ExpOp{});
  if (name == "exp2") return unary(math::Exp2Op{});
  if (name == "expm1") return unary(math::ExpM1Op{});
  if (name == "log") return unary(math::LogOp{});
  if (name == "log2") return unary(math::Log2Op{});
  if (name == "log10") return unary(math::Log10Op{});
  if (name == "log1p") return unary(math::Log1pOp{});
  if (name == "sqrt") return unary(math::SqrtOp{});
  if (name == "rsqrt") return unary(math::RsqrtOp{});
  if (name == "cbrt") return unary(math::CbrtOp{});
  if (name == "sin") return unary(math::SinOp{});
  if (name == "cos") return unary(math::CosOp{});
  if (name == "tan") return unary(math::TanOp{});
  if (name == "asin") return unary(math::AsinOp{});
  if (name == "acos") return unary(math::AcosOp{});
  if (name == "atan") return unary(math::AtanOp{});
  if (name == "sinh") return unary(math::SinhOp{});
  if (name == "cosh") return unary(math::CoshOp{});
  if (name == "tanh") return unary(math::TanhOp{});
  if (name == "asinh") return unary(math::AsinhOp{});
  if (name == "acosh") return unary(math::AcoshOp{});
  if (name == "atanh") return unary(math::AtanhOp{});
  if (name == "erf") return unary(math::ErfOp{});
  if (name == "erfc") return unary(math::ErfcOp{});
  if (name == "fabs") return unary(math::AbsFOp{});
  if (name == "floor") return unary(math::FloorOp{});
  if (name == "ceil") return unary(math::CeilOp{});
  if (name == "trunc") return unary(math::TruncOp{});
  if (name == "round") return unary(math::RoundOp{});
  if (name == "rint" || name == "nearbyint") return unary(math::RoundEvenOp{});
  if (name == "pow") return binary(math::PowFOp{});
  if (name == "atan2") return binary(math::Atan2Op{});
  if (name == "fmin") return binary(arith::MinNumFOp{});
  if (name == "fmax") return binary(arith::MaxNumFOp{});
  if (name == "fmod") return binary(arith::RemFOp{});
  if (name == "copysign") return binary(math::CopySignOp{});
  // clang-format on
  if (name == "fma" && args.size() == 3)
    return math::FmaOp::create(b, loc, args[0], args[1], args[2]);
  if ((name == "isnan" || name == "isinf") && args.size() == 1 &&
      isa<IntegerType>(elementTypeOf(resultType))) {
    // libdevice returns an int: 1 where the predicate holds.
    Value holds =
        name == "isnan"
            ? Value(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO,
                                          args[0], args[0]))
            : Value(math::IsInfOp::create(b, loc, args[0]));
    return arith::ExtUIOp::create(b, loc, resultType, holds);
  }
  return {};
}

/// The op computing the extern function `symbol` (`__nv_expf`,
/// `__ocml_exp_f32`); null, having built nothing, for one tk does not know.
Value buildExternFunction(OpBuilder &b, Location loc, StringRef symbol,
                          ValueRange args, Type resultType) {
  StringRef name = symbol;
  if (name.consume_front("__nv_")) {
    if (Value result = buildMathFunction(b, loc, name, args, resultType))
      return result;
    // libdevice's float variants end in `f` (expf, fabsf, erff).
    if (name.consume_back("f"))
      return buildMathFunction(b, loc, name, args, resultType);
    return {};
  }
  if (name.consume_front("__ocml_")) {
    for (StringRef suffix : {"_f16", "_f32", "_f64"})
      if (name.consume_back(suffix))
        break;
    return buildMathFunction(b, loc, name, args, resultType);
  }
  return {};
}

//===----------------------------------------------------------------------===//
// The conversion
//===----------------------------------------------------------------------===//

/// Triton gives some f32 ops of TTIR its fast forms (tl.exp is ex2.approx
/// of x·log2(e), `/` is div.full, tl.sqrt is sqrt.approx; the precise ones
/// are tt.precise_sqrt, tt.precise_divf and libdevice's): tk's name for that
/// meaning is `fastmath<afn>`, which its backends lower the same way.
void markTritonApproximation(Operation *op) {
  if (!isa<math::ExpOp, math::Exp2Op, math::LogOp, math::Log2Op, math::SinOp,
           math::CosOp, math::SqrtOp, math::RsqrtOp, arith::DivFOp>(op) ||
      !elementTypeOf(op->getResult(0).getType()).isF32())
    return;
  auto fastMath = cast<arith::ArithFastMathInterface>(op);
  op->setAttr(fastMath.getFastMathAttrName(),
              arith::FastMathFlagsAttr::get(
                  op->getContext(), fastMath.getFastMathFlagsAttr().getValue() |
                                        arith::FastMathFlags::afn));
}

class TtToTk {
public:
  explicit TtToTk(MLIRContext *context) : rewriter(context) {}

  LogicalResult convert(ModuleOp module);

private:
  LogicalResult convertTypes(Operation *root);
  LogicalResult convertOp(Operation *op);
  LogicalResult convertFunc(tt::FuncOp func);
  LogicalResult convertHostDescriptors(tt::FuncOp func);

  /// Replaces `op` by a new op `name` with the same location and converted
  /// result types; regions move over.
  Operation *replaceWith(Operation *op, StringRef name, ValueRange operands,
                         ArrayRef<NamedAttribute> attributes = {});

  NamedAttribute attr(StringRef name, Attribute value) {
    return rewriter.getNamedAttr(name, value);
  }

  IRRewriter rewriter;
  /// The block pointers of tensor descriptors made with `padding = nan`,
  /// and whether the module makes any.
  llvm::DenseSet<Value> nanPadded;
  bool anyNanPadded = false;
};

/// Triton compiles with `enable_fp_fusion` on unless told otherwise: a float
/// multiplication and the addition or subtraction it feeds may round once
/// (one fused multiply-add). TTIR does not say so on its ops; MLIR's arith
/// says it with `contract`, which every backend ending in LLVM carries to
/// the target (FlashAttention's `qk * scale - m` is then one instruction an
/// element). A kernel written in tk asks for it op by op.
static void allowFloatContraction(ModuleOp module) {
  auto contract = [](auto op) {
    op.setFastmath(op.getFastmath() | arith::FastMathFlags::contract);
  };
  module.walk([&](Operation *op) {
    if (auto add = dyn_cast<arith::AddFOp>(op))
      contract(add);
    else if (auto sub = dyn_cast<arith::SubFOp>(op))
      contract(sub);
    else if (auto mul = dyn_cast<arith::MulFOp>(op))
      contract(mul);
  });
}

LogicalResult TtToTk::convert(ModuleOp module) {
  bool failed = false;
  // Functions Triton did not inline and nothing calls are left behind; a
  // call to one is refused at the call.
  for (auto func : llvm::make_early_inc_range(module.getOps<tt::FuncOp>()))
    if (func.isPrivate() && SymbolTable::symbolKnownUseEmpty(func, module))
      func.erase();

  // A public declaration (Triton writes none) has no body to run.
  for (auto func : module.getOps<tt::FuncOp>())
    if (func.isPublic() && func.getBody().empty()) {
      func.emitError() << "'tt.func' @" << func.getSymName()
                       << " is a declaration without a body; tk imports "
                          "kernels, which have one";
      failed = true;
    }
  // A descriptor made on the host (Triton's TensorDescriptor) is passed as
  // Triton's launchers without TMA pass it: its base, shape and strides.
  for (auto func : module.getOps<tt::FuncOp>())
    if (func.isPublic() && !func.getBody().empty())
      failed |= mlir::failed(convertHostDescriptors(func));
  // Whether a NaN-padded descriptor exists: its loads need to see it.
  module.walk([&](tt::MakeTensorDescOp make) {
    anyNanPadded |= make.getPadding() == tt::PaddingOption::NaN;
  });
  if (failed || mlir::failed(convertTypes(module)))
    return failure();

  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (op != module.getOperation() && !isa<tt::FuncOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops)
    failed |= mlir::failed(convertOp(op));
  if (failed)
    return failure();
  allowFloatContraction(module);
  // Loop invariants stay where Triton wrote them: every backend's pipeline
  // starts with tk-hoist-loop-invariants, for tk kernels and imported ones
  // alike.
  for (auto func : llvm::make_early_inc_range(module.getOps<tt::FuncOp>())) {
    // A helper still called is refused at its calls, not again here.
    if (func.isPrivate())
      func.erase();
    else
      failed |= mlir::failed(convertFunc(func));
  }
  return failure(failed);
}

LogicalResult TtToTk::convertTypes(Operation *root) {
  bool failed = false;
  auto update = [&](Operation *at, Value value) {
    if (std::optional<int> space = nonGlobalAddressSpace(value.getType())) {
      unsupported(at, "it uses a pointer of address space " + Twine(*space) +
                          "; tk's pointers are to global memory (1)");
      failed = true;
      return;
    }
    value.setType(convertType(value.getType()));
  };
  root->walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          update(op, argument);
    for (Value result : op->getResults())
      update(op, result);
  });
  return failure(failed);
}

Operation *TtToTk::replaceWith(Operation *op, StringRef name,
                               ValueRange operands,
                               ArrayRef<NamedAttribute> attributes) {
  OperationState state(op->getLoc(), name);
  state.addOperands(operands);
  state.addAttributes(attributes);
  state.addTypes(op->getResultTypes());
  for (unsigned i = 0; i < op->getNumRegions(); ++i)
    state.addRegion();
  rewriter.setInsertionPoint(op);
  Operation *replacement = rewriter.create(state);
  for (auto [from, to] : llvm::zip(op->getRegions(), replacement->getRegions()))
    to.takeBody(from);
  rewriter.replaceOp(op, replacement->getResults());
  return replacement;
}

LogicalResult TtToTk::convertHostDescriptors(tt::FuncOp func) {
  Block &entry = func.getBody().front();
  for (unsigned index = 0; index < func.getNumArguments(); ++index) {
    BlockArgument descriptor = func.getArgument(index);
    auto type = dyn_cast<tt::TensorDescType>(descriptor.getType());
    if (!type)
      continue;
    RankedTensorType block = type.getBlockType();
    unsigned rank = block.getRank();
    // Triton 3.6 follows the descriptor with its shape (an i32 each) and
    // strides (an i64 each).
    auto follows = [&](unsigned offset, Type expected) {
      unsigned at = index + 1 + offset;
      return at < func.getNumArguments() &&
             func.getArgument(at).getType() == expected;
    };
    bool complete = true;
    for (unsigned dim = 0; dim < rank; ++dim)
      complete &= follows(dim, rewriter.getI32Type()) &&
                  follows(rank + dim, rewriter.getI64Type());
    if (!complete)
      return unsupported(func, "argument " + Twine(index) +
                                   " is a tensor descriptor made on the host "
                                   "without the shape (i32) and strides "
                                   "(i64) Triton 3.6 writes after it");
    // Named after the descriptor (tk.arg_names): Triton names all five so.
    Location loc = descriptor.getLoc();
    std::string name = "desc";
    if (auto named = dyn_cast<NameLoc>(loc))
      name = named.getName().str();
    auto namedLoc = [&](const Twine &suffix) -> Location {
      return NameLoc::get(rewriter.getStringAttr(name + suffix), loc);
    };
    // What Triton's TensorDescriptor checks, and TMA needs, is what a launch
    // of the imported kernel checks (tk.divisibility): a 16-byte aligned
    // base and strides of 16-byte multiples. The innermost dimension is
    // contiguous: a CUtensorMap has no stride for it, and Triton's
    // TensorDescriptor asserts 1; the argument stays for the launch's
    // sake and is not read. tk also takes the innermost extent in 16-byte
    // multiples, which TMA does not need: a bound that can cut a 16-byte
    // run kept every load's element-by-element path beside the vector
    // one, and on sm_90a ptxas then serialised the wgmmas (the attention
    // tutorial's forward ran at 0.40-0.53x Triton).
    int64_t elementBytes =
        std::max<int64_t>(block.getElementTypeBitWidth() / 8, 1);
    auto divisibility = [&](int64_t value) {
      return rewriter.getDictionaryAttr(rewriter.getNamedAttr(
          "tt.divisibility", rewriter.getI32IntegerAttr(int32_t(value))));
    };
    rewriter.setInsertionPointToStart(&entry);
    SmallVector<Value> shape, strides;
    for (unsigned dim = 0; dim < rank; ++dim) {
      BlockArgument extent = func.getArgument(index + 1 + dim);
      extent.setLoc(namedLoc("_shape" + Twine(dim)));
      if (dim + 1 == rank && 16 / elementBytes > 1)
        func.setArgAttrs(index + 1 + dim, divisibility(16 / elementBytes));
      shape.push_back(extent);
      unsigned at = index + 1 + rank + dim;
      BlockArgument stride = func.getArgument(at);
      stride.setLoc(namedLoc("_stride" + Twine(dim)));
      if (dim + 1 == rank) {
        strides.push_back(arith::ConstantOp::create(
            rewriter, loc, rewriter.getI64IntegerAttr(1)));
      } else {
        if (16 / elementBytes > 1)
          func.setArgAttrs(at, divisibility(16 / elementBytes));
        strides.push_back(stride);
      }
    }
    // The base takes the descriptor's place.
    if (failed(func.insertArgument(
            index + 1,
            tt::PtrType::get(rewriter.getContext(), block.getElementType(), 1),
            divisibility(16), loc)))
      return func.emitError("could not insert the base of argument ") << index;
    Value base = func.getArgument(index + 1);
    auto made = tt::MakeTensorDescOp::create(rewriter, loc, type, base, shape,
                                             strides, nullptr);
    descriptor.replaceAllUsesWith(made.getResult());
    if (failed(func.eraseArgument(index)))
      return func.emitError("could not replace argument ") << index;
    index += 2 * rank;
  }
  return success();
}

LogicalResult TtToTk::convertFunc(tt::FuncOp func) {
  if (func.getNumResults() != 0)
    return unsupported(func, "a tk kernel returns nothing, and this function "
                             "returns values (Triton did not inline it)");
  rewriter.setInsertionPoint(func);
  auto type = cast<FunctionType>(convertType(func.getFunctionType()));
  auto kernel =
      tk::FuncOp::create(rewriter, func.getLoc(), func.getSymName(), type);
  SmallVector<Attribute> names;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    NamedAttrList attributes;
    // tt.divisibility is Triton's specialisation on multiples of 16 and
    // means the same in tk; other argument hints are Triton's own.
    if (DictionaryAttr hints = func.getArgAttrDict(i))
      if (Attribute divisibility = hints.get("tt.divisibility"))
        attributes.append(tk::TkDialect::kDivisibilityAttrName, divisibility);
    kernel.setArgAttrs(i, attributes.getDictionary(rewriter.getContext()));
    // Triton names each argument's location after the Python parameter.
    if (auto name = dyn_cast<NameLoc>(func.getArgument(i).getLoc()))
      names.push_back(name.getName());
  }
  if (!names.empty() && names.size() == func.getNumArguments())
    kernel->setAttr(tk::TkDialect::kArgNamesAttrName,
                    rewriter.getArrayAttr(names));
  kernel.getBody().takeBody(func.getBody());
  rewriter.eraseOp(func);
  return success();
}

LogicalResult TtToTk::convertOp(Operation *op) {
  StringRef dialect = op->getName().getDialectNamespace();
  if (dialect == "arith" || dialect == "math") {
    markTritonApproximation(op);
    return success(); // Their types were converted in place.
  }
  if (dialect == "scf") {
    // tk's lowerings take counted loops and branches (DESIGN.md §2).
    // (scf.condition is refused with its scf.while.)
    if (isa<scf::ForOp, scf::IfOp, scf::YieldOp, scf::ConditionOp>(op))
      return success();
    return unsupported(op, "tk kernels loop with scf.for and branch with "
                           "scf.if; this one (a Python while loop, say) is "
                           "not lowered");
  }
  if (dialect == "cf")
    return unsupported(op, "tk kernels use structured control flow (scf); "
                           "this branch came from code Triton could not "
                           "structure (an early return in a loop, say)");
  if (auto poison = dyn_cast<ub::PoisonOp>(op)) {
    // Any value refines poison; zero is one.
    Type type = poison.getType();
    if (!isa<IntegerType, FloatType>(elementTypeOf(type)))
      return unsupported(op, "only integer and float poison is imported");
    rewriter.setInsertionPoint(op);
    rewriter.replaceOp(op, arith::ConstantOp::create(
                               rewriter, op->getLoc(),
                               cast<TypedAttr>(rewriter.getZeroAttr(type))));
    return success();
  }
  if (auto assume = dyn_cast<LLVM::AssumeOp>(op)) {
    // tl.assume: a hint that only makes more programs undefined; tk's
    // AxisFacts derives its own facts. The condition's ops stay, unused.
    rewriter.eraseOp(assume);
    return success();
  }
  if (dialect != "tt")
    return unsupported(op, "TTIR uses tt, arith, math, scf and cf ops (and "
                           "llvm.intr.assume), not this dialect's");

  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  auto i32 = [&](int64_t value) { return rewriter.getI32IntegerAttr(value); };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](tt::ReturnOp ret) {
        replaceWith(ret, tk::ReturnOp::getOperationName(), ret.getSrcs());
        return success();
      })
      .Case([&](tt::CallOp call) {
        return unsupported(call, "tk kernels have no calls; '" +
                                     call.getCallee() +
                                     "' was kept out of line (noinline=True "
                                     "in the Python source)");
      })
      .Case([&](tt::GetProgramIdOp pid) {
        replaceWith(pid, tk::ProgramIdOp::getOperationName(), {},
                    {attr("axis", i32(static_cast<int>(pid.getAxis())))});
        return success();
      })
      .Case([&](tt::GetNumProgramsOp num) {
        replaceWith(num, tk::NumProgramsOp::getOperationName(), {},
                    {attr("axis", i32(static_cast<int>(num.getAxis())))});
        return success();
      })
      .Case([&](tt::MakeRangeOp range) {
        replaceWith(range, tk::MakeRangeOp::getOperationName(), {},
                    {attr("start", range.getStartAttr()),
                     attr("end", range.getEndAttr())});
        return success();
      })
      .Case([&](tt::SplatOp splat) {
        replaceWith(splat, tk::SplatOp::getOperationName(), splat.getSrc());
        return success();
      })
      .Case([&](tt::BroadcastOp broadcast) {
        replaceWith(broadcast, tk::BroadcastOp::getOperationName(),
                    broadcast.getSrc());
        return success();
      })
      .Case([&](tt::ExpandDimsOp expand) {
        replaceWith(expand, tk::ExpandDimsOp::getOperationName(),
                    expand.getSrc(), {attr("axis", expand.getAxisAttr())});
        return success();
      })
      .Case([&](tt::ReshapeOp reshape) {
        // allow_reorder lets Triton pick any order; row-major is one.
        replaceWith(reshape, tk::ReshapeOp::getOperationName(),
                    reshape.getSrc());
        return success();
      })
      .Case([&](tt::TransOp trans) {
        replaceWith(trans, tk::TransOp::getOperationName(), trans.getSrc(),
                    {attr("order", trans.getOrderAttr())});
        return success();
      })
      .Case([&](tt::CatOp cat) {
        replaceWith(cat, tk::CatOp::getOperationName(), cat.getOperands());
        return success();
      })
      .Case([&](tt::JoinOp join) {
        replaceWith(join, tk::JoinOp::getOperationName(), join.getOperands());
        return success();
      })
      .Case([&](tt::SplitOp split) -> LogicalResult {
        // split(x) = (x[..., 0], x[..., 1]): two reductions over the last
        // axis (of size 2) whose combiners keep the first or the second.
        auto source = dyn_cast<RankedTensorType>(split.getSrc().getType());
        if (!source || source.getRank() < 2)
          return unsupported(split, "a split to scalars is not imported");
        int axis = source.getRank() - 1;
        Type element = source.getElementType();
        SmallVector<Value> halves;
        for (bool keepFirst : {true, false}) {
          OperationState state(loc, tk::ReduceOp::getOperationName());
          state.addOperands(split.getSrc());
          state.addAttribute("axis", i32(axis));
          state.addTypes(split.getOutLHS().getType());
          Region *combiner = state.addRegion();
          Block *block = rewriter.createBlock(combiner, {}, {element, element},
                                              {loc, loc});
          tk::ReduceReturnOp::create(
              rewriter, loc, ValueRange{block->getArgument(keepFirst ? 0 : 1)});
          rewriter.setInsertionPoint(split);
          halves.push_back(rewriter.create(state)->getResult(0));
        }
        rewriter.replaceOp(split, halves);
        return success();
      })
      .Case([&](tt::AddPtrOp add) {
        replaceWith(add, tk::AddPtrOp::getOperationName(), add.getOperands());
        return success();
      })
      .Case([&](tt::LoadOp load) {
        // Cache and eviction hints are Triton's per-target choices; tk makes
        // its own.
        auto tkLoad = tk::LoadOp::create(rewriter, loc, load.getPtr(),
                                         load.getMask(), load.getOther());
        tkLoad.setBoundaryCheck(load.getBoundaryCheck());
        if (std::optional<tt::PaddingOption> padding = load.getPadding())
          tkLoad.setPadding(*padding == tt::PaddingOption::NaN
                                ? tk::PaddingOption::NaN
                                : tk::PaddingOption::Zero);
        tkLoad.setIsVolatile(load.getIsVolatile());
        rewriter.replaceOp(load, tkLoad.getResult());
        return success();
      })
      .Case([&](tt::StoreOp store) {
        SmallVector<Value> operands = {store.getPtr(), store.getValue()};
        if (store.getMask())
          operands.push_back(store.getMask());
        replaceWith(store, tk::StoreOp::getOperationName(), operands,
                    {attr("boundary_check", store.getBoundaryCheckAttr())});
        return success();
      })
      .Case([&](tt::MakeTensorPtrOp make) {
        auto segments = rewriter.getDenseI32ArrayAttr(
            {1, static_cast<int32_t>(make.getShape().size()),
             static_cast<int32_t>(make.getStrides().size()),
             static_cast<int32_t>(make.getOffsets().size())});
        replaceWith(make, tk::MakeBlockPtrOp::getOperationName(),
                    make.getOperands(),
                    {attr("order", make.getOrderAttr()),
                     attr("operandSegmentSizes", segments)});
        return success();
      })
      .Case([&](tt::MakeTensorDescOp make) {
        // tk.make_block_ptr at offset zero: shapes widened to i64, the
        // last dimension the contiguous one (descriptors are row-major).
        int64_t rank = make.getShape().size();
        SmallVector<Value> operands = {make.getBase()};
        for (Value extent : make.getShape())
          operands.push_back(arith::ExtSIOp::create(
              rewriter, loc, rewriter.getI64Type(), extent));
        llvm::append_range(operands, make.getStrides());
        Value zero = arith::ConstantOp::create(rewriter, loc, i32(0));
        operands.append(rank, zero);
        SmallVector<int32_t> order;
        for (int64_t dim = rank - 1; dim >= 0; --dim)
          order.push_back(int32_t(dim));
        auto segments = rewriter.getDenseI32ArrayAttr(
            {1, int32_t(rank), int32_t(rank), int32_t(rank)});
        // Read before the replacement erases `make`.
        bool padsWithNaN = make.getPadding() == tt::PaddingOption::NaN;
        Operation *block =
            replaceWith(make, tk::MakeBlockPtrOp::getOperationName(), operands,
                        {attr("order", rewriter.getDenseI32ArrayAttr(order)),
                         attr("operandSegmentSizes", segments)});
        if (padsWithNaN)
          nanPadded.insert(block->getResult(0));
        return success();
      })
      .Case([&](tt::DescriptorLoadOp load) -> LogicalResult {
        Value block = load.getDesc();
        if (!block.getDefiningOp<tk::MakeBlockPtrOp>() && anyNanPadded)
          return unsupported(load, "a descriptor padded with NaN reaches "
                                   "this load through a loop or branch; tk "
                                   "pads only where it sees the descriptor");
        auto moved = tk::AdvanceOp::create(rewriter, loc, block.getType(),
                                           block, load.getIndices());
        auto tkLoad = tk::LoadOp::create(rewriter, loc, moved.getResult(),
                                         Value(), Value());
        tkLoad.setBoundaryCheck(everyDimension(load.getIndices().size()));
        tkLoad.setPadding(nanPadded.contains(block) ? tk::PaddingOption::NaN
                                                    : tk::PaddingOption::Zero);
        // A result may leave out the block's leading dimensions of 1.
        Value loaded = tkLoad.getResult();
        if (loaded.getType() != load.getType())
          loaded = tk::ReshapeOp::create(rewriter, loc, load.getType(), loaded);
        rewriter.replaceOp(load, loaded);
        return success();
      })
      .Case([&](tt::DescriptorStoreOp store) {
        Value block = store.getDesc();
        auto moved = tk::AdvanceOp::create(rewriter, loc, block.getType(),
                                           block, store.getIndices());
        // A source may leave out the block's leading dimensions of 1.
        Value source = store.getSrc();
        Type blockType = cast<tk::PtrType>(block.getType()).getPointeeType();
        if (source.getType() != blockType)
          source = tk::ReshapeOp::create(rewriter, loc, blockType, source);
        replaceWith(store, tk::StoreOp::getOperationName(),
                    {moved.getResult(), source},
                    {attr("boundary_check",
                          rewriter.getDenseI32ArrayAttr(
                              everyDimension(store.getIndices().size())))});
        return success();
      })
      .Case([&](tt::AdvanceOp advance) {
        replaceWith(advance, tk::AdvanceOp::getOperationName(),
                    advance.getOperands());
        return success();
      })
      .Case([&](tt::DotOp dot) -> LogicalResult {
        // Triton writes tf32 on every dot; it means something for f32
        // inputs only.
        tk::InputPrecision precision = tk::InputPrecision::IEEE;
        if (elementTypeOf(dot.getA().getType()).isF32()) {
          switch (dot.getInputPrecision()) {
          case tt::InputPrecision::TF32:
            precision = tk::InputPrecision::TF32;
            break;
          case tt::InputPrecision::TF32x3:
            precision = tk::InputPrecision::TF32x3;
            break;
          case tt::InputPrecision::IEEE:
            break;
          default:
            return unsupported(
                dot, "tk's f32 dots are ieee, tf32 or tf32x3, "
                     "not " +
                         tt::stringifyInputPrecision(dot.getInputPrecision()));
          }
        }
        replaceWith(
            dot, tk::DotOp::getOperationName(), dot.getOperands(),
            {attr("input_precision", tk::InputPrecisionAttr::get(
                                         rewriter.getContext(), precision))});
        return success();
      })
      .Case([&](tt::ReduceOp reduce) {
        replaceWith(reduce, tk::ReduceOp::getOperationName(), reduce.getSrcs(),
                    {attr("axis", reduce.getAxisAttr())});
        return success();
      })
      .Case([&](tt::ReduceReturnOp ret) {
        replaceWith(ret, tk::ReduceReturnOp::getOperationName(),
                    ret.getResult());
        return success();
      })
      .Case([&](tt::ScanOp scan) {
        replaceWith(scan, tk::ScanOp::getOperationName(), scan.getSrcs(),
                    {attr("axis", scan.getAxisAttr()),
                     attr("reverse", scan.getReverseAttr())});
        return success();
      })
      .Case([&](tt::ScanReturnOp ret) {
        replaceWith(ret, tk::ScanReturnOp::getOperationName(), ret.getResult());
        return success();
      })
      .Case([&](tt::FpToFpOp convert) {
        SmallVector<NamedAttribute> attributes;
        if (std::optional<tt::RoundingMode> rounding = convert.getRounding())
          attributes.push_back(
              attr("rounding",
                   tk::RoundingModeAttr::get(rewriter.getContext(),
                                             *rounding == tt::RoundingMode::RTZ
                                                 ? tk::RoundingMode::RTZ
                                                 : tk::RoundingMode::RTNE)));
        replaceWith(convert, tk::FpToFpOp::getOperationName(), convert.getSrc(),
                    attributes);
        return success();
      })
      .Case([&](tt::BitcastOp cast) -> LogicalResult {
        Type from = cast.getSrc().getType(), to = cast.getType();
        if (from == to) {
          rewriter.replaceOp(cast, cast.getSrc());
          return success();
        }
        if (isa<tk::PtrType>(elementTypeOf(from)) ||
            isa<tk::PtrType>(elementTypeOf(to)))
          return unsupported(cast, "tk has no casts between pointer types");
        rewriter.replaceOp(
            cast, arith::BitcastOp::create(rewriter, loc, to, cast.getSrc()));
        return success();
      })
      .Case([&](tt::IntToPtrOp cast) {
        return unsupported(cast, "tk has no casts from integers to pointers");
      })
      .Case([&](tt::PtrToIntOp cast) {
        return unsupported(cast, "tk has no casts from pointers to integers");
      })
      .Case([&](tt::ClampFOp clamp) {
        Value clamped;
        if (clamp.getPropagateNan() == tt::PropagateNan::All) {
          Value low = arith::MaximumFOp::create(rewriter, loc, clamp.getX(),
                                                clamp.getMin());
          clamped =
              arith::MinimumFOp::create(rewriter, loc, low, clamp.getMax());
        } else {
          Value low = arith::MaxNumFOp::create(rewriter, loc, clamp.getX(),
                                               clamp.getMin());
          clamped =
              arith::MinNumFOp::create(rewriter, loc, low, clamp.getMax());
        }
        rewriter.replaceOp(clamp, clamped);
        return success();
      })
      .Case([&](tt::PreciseSqrtOp sqrt) {
        rewriter.replaceOp(sqrt,
                           math::SqrtOp::create(rewriter, loc, sqrt.getX()));
        return success();
      })
      .Case([&](tt::PreciseDivFOp div) {
        rewriter.replaceOp(
            div, arith::DivFOp::create(rewriter, loc, div.getX(), div.getY()));
        return success();
      })
      .Case([&](tt::MulhiUIOp mulhi) -> LogicalResult {
        // The high half of the double-width product, in arith ops every
        // lowering has: widen, multiply, shift, narrow.
        Type type = mulhi.getType();
        auto element = dyn_cast<IntegerType>(elementTypeOf(type));
        if (!element || element.getWidth() > 32)
          return unsupported(
              mulhi, "tk imports mulhiui of integers up to "
                     "32 bits, not " +
                         Twine(element ? element.getWidth() : 0) + "-bit");
        unsigned width = element.getWidth();
        Type wide = tk::withElementType(
            type, IntegerType::get(rewriter.getContext(), 2 * width));
        Value x = arith::ExtUIOp::create(rewriter, loc, wide, mulhi.getX());
        Value y = arith::ExtUIOp::create(rewriter, loc, wide, mulhi.getY());
        Value product = arith::MulIOp::create(rewriter, loc, x, y);
        Value shift = arith::ConstantOp::create(
            rewriter, loc,
            cast<TypedAttr>(
                tk::getShapeOrEmpty(wide).empty()
                    ? Attribute(rewriter.getIntegerAttr(wide, width))
                    : Attribute(DenseElementsAttr::get(
                          cast<ShapedType>(wide),
                          rewriter.getIntegerAttr(elementTypeOf(wide),
                                                  width)))));
        Value high = arith::ShRUIOp::create(rewriter, loc, product, shift);
        rewriter.replaceOp(mulhi,
                           arith::TruncIOp::create(rewriter, loc, type, high));
        return success();
      })
      .Case([&](tt::ExternElementwiseOp call) -> LogicalResult {
        Value result = buildExternFunction(rewriter, loc, call.getSymbol(),
                                           call.getSrcs(), call.getType());
        if (!result)
          return unsupported(call, "tk maps libdevice's and OCML's common "
                                   "math functions onto its own, and '" +
                                       call.getSymbol() +
                                       "' is not one of them");
        rewriter.replaceOp(call, result);
        return success();
      })
      .Case([&](tt::AtomicRMWOp rmw) -> LogicalResult {
        if (rmw.getScope() == tt::MemSyncScope::System)
          return unsupported(rmw, "tk's atomics are device-wide; this one is "
                                  "of system scope");
        tk::AtomicRMWKind kind = tk::AtomicRMWKind::Add;
        switch (rmw.getAtomicRmwOp()) {
          // clang-format off
        case tt::RMWOp::And: kind = tk::AtomicRMWKind::And; break;
        case tt::RMWOp::Or: kind = tk::AtomicRMWKind::Or; break;
        case tt::RMWOp::Xor: kind = tk::AtomicRMWKind::Xor; break;
        case tt::RMWOp::Add: kind = tk::AtomicRMWKind::Add; break;
        case tt::RMWOp::FAdd: kind = tk::AtomicRMWKind::FAdd; break;
        case tt::RMWOp::Max: kind = tk::AtomicRMWKind::Max; break;
        case tt::RMWOp::Min: kind = tk::AtomicRMWKind::Min; break;
        case tt::RMWOp::UMax: kind = tk::AtomicRMWKind::UMax; break;
        case tt::RMWOp::UMin: kind = tk::AtomicRMWKind::UMin; break;
        case tt::RMWOp::Xchg: kind = tk::AtomicRMWKind::Xchg; break;
          // clang-format on
        }
        SmallVector<Value> operands = {rmw.getPtr(), rmw.getVal()};
        if (rmw.getMask())
          operands.push_back(rmw.getMask());
        MLIRContext *context = rewriter.getContext();
        replaceWith(
            rmw, tk::AtomicRMWOp::getOperationName(), operands,
            {attr("kind", tk::AtomicRMWKindAttr::get(context, kind)),
             attr("sem",
                  tk::MemSemanticAttr::get(
                      context, static_cast<tk::MemSemantic>(
                                   static_cast<int>(rmw.getSem()) - 1)))});
        return success();
      })
      .Case([&](tt::AtomicCASOp cas) -> LogicalResult {
        if (cas.getScope() == tt::MemSyncScope::System)
          return unsupported(cas, "tk's atomics are device-wide; this one is "
                                  "of system scope");
        replaceWith(
            cas, tk::AtomicCASOp::getOperationName(), cas.getOperands(),
            {attr("sem", tk::MemSemanticAttr::get(
                             rewriter.getContext(),
                             static_cast<tk::MemSemantic>(
                                 static_cast<int>(cas.getSem()) - 1)))});
        return success();
      })
      .Case([&](tt::PrintOp print) -> LogicalResult {
        if (print.getHex())
          return unsupported(print, "tk.print prints decimal, not hex");
        replaceWith(print, tk::PrintOp::getOperationName(), print.getArgs(),
                    {attr("prefix", print.getPrefixAttr())});
        return success();
      })
      .Case([&](tt::AssertOp check) {
        replaceWith(check, tk::AssertOp::getOperationName(),
                    check.getCondition(),
                    {attr("message", check.getMessageAttr())});
        return success();
      })
      .Default([&](Operation *other) {
        return unsupported(other, "tk has no conversion for it");
      });
}

struct ConvertTtToTkPass
    : tk::ttir::impl::TkConvertTtToTkBase<ConvertTtToTkPass> {
  void runOnOperation() override {
    if (failed(tk::ttir::convertTtToTk(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult tk::ttir::convertTtToTk(ModuleOp module) {
  return TtToTk(module.getContext()).convert(module);
}
