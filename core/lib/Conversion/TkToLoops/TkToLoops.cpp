//===- TkToLoops.cpp - tile ops to scalar loop nests -----------*- C++ -*-===//
//
// The CPU pass, tk-convert-to-loops, and the program its lowering
// (KernelLowering) writes for: program ids from arguments, buffers on the
// stack, serial nests, printf from the C library.
//
// Lowers each tk.func to a func.func whose tiles are computed element by
// element in scf.for loop nests, with pointers as !llvm.ptr and memory
// accesses as LLVM dialect loads, stores and atomics guarded by their masks.
//
// The lowering is sink-driven: an element-wise tile (arith/math, splat,
// make_range, shape ops, addptr, loads) gets no storage of its own; the op
// that consumes it (a store, a reduction, a dot operand, a loop-carried
// value) runs one loop nest and recomputes the element-wise chain inside it.
// This is what linalg's element-wise fusion would give, but it keeps memory
// effects in program order (a load never moves past a write, and never fuses
// into a store) and lets reductions and dots pick loop orders that LLVM
// vectorises without reassociating floats.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"
#include "tk/core/Conversion/Passes.h"

namespace tk {
#define GEN_PASS_DEF_TKCONVERTTOLOOPS
#include "tk/core/Conversion/Passes.h.inc"
} // namespace tk

using namespace mlir;
using mlir::tk_to_loops::KernelLowering;

/// Replaces every tk.func of `module` by its lowered func.func.
static LogicalResult convertKernels(ModuleOp module,
                                    const KernelLowering::Config &config) {
  SmallVector<tk::FuncOp> kernels(module.getOps<tk::FuncOp>());
  for (tk::FuncOp kernel : kernels) {
    MLIRContext *ctx = module.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    SmallVector<Type> inputs;
    for (Type type : kernel.getArgumentTypes())
      inputs.push_back(isa<tk::PtrType>(type) ? Type(ptr) : type);
    // The launcher appends the program's grid position.
    inputs.append(tk::kNumGridArgs, IntegerType::get(ctx, 32));
    OpBuilder builder(kernel);
    auto func =
        func::FuncOp::create(builder, kernel.getLoc(), kernel.getSymName(),
                             builder.getFunctionType(inputs, {}));
    func->setAttr(tk::kLoweredKernelAttrName, builder.getUnitAttr());
    // A pointer's divisibility is its alignment: LLVM may then merge
    // neighbouring accesses into vector ones.
    for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
      if (auto divisibility =
              kernel.getArgAttrOfType<IntegerAttr>(i, "tk.divisibility"))
        if (isa<tk::PtrType>(kernel.getArgumentTypes()[i]))
          func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                          builder.getI64IntegerAttr(divisibility.getInt()));
    if (failed(KernelLowering(kernel, func, config).run())) {
      func.erase();
      return failure();
    }
    kernel.erase();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The host program: the grid from the arguments, stack buffers, serial nests
//===----------------------------------------------------------------------===//

namespace mlir::tk_to_loops {

void KernelLowering::bindGridPosition(unsigned numArgs) {
  for (unsigned i = 0; i < tk::kNumGridArgs; ++i)
    grid[i] = entryBlock->getArgument(numArgs + i);
}

/// Declares (once) `int printf(ptr, ...)` in the module of `op`.
static LLVM::LLVMFuncOp getOrDeclarePrintf(OpBuilder &b, Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>("printf"))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  MLIRContext *ctx = b.getContext();
  auto type = LLVM::LLVMFunctionType::get(IntegerType::get(ctx, 32),
                                          {LLVM::LLVMPointerType::get(ctx)},
                                          /*isVarArg=*/true);
  return LLVM::LLVMFuncOp::create(b, op->getLoc(), "printf", type);
}

/// The address of a NUL-terminated private string constant.
static Value getStringPointer(OpBuilder &b, Location loc, Operation *op,
                              StringRef text) {
  auto module = op->getParentOfType<ModuleOp>();
  std::string name =
      "__tk_str_" + std::to_string(llvm::hash_value(text) & 0xffffffffu);
  auto global = module.lookupSymbol<LLVM::GlobalOp>(name);
  if (!global) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    std::string data = text.str();
    data.push_back('\0');
    auto type = LLVM::LLVMArrayType::get(b.getI8Type(), data.size());
    global = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                    LLVM::Linkage::Private, name,
                                    b.getStringAttr(data));
  }
  return LLVM::AddressOfOp::create(b, loc, global);
}

void KernelLowering::emitPrintf(StringRef format, ValueRange args) {
  LLVM::LLVMFuncOp printf = getOrDeclarePrintf(b, target);
  SmallVector<Value> operands{getStringPointer(b, loc, target, format)};
  llvm::append_range(operands, args);
  LLVM::CallOp::create(b, loc, printf, operands);
}

} // namespace mlir::tk_to_loops

namespace {

/// The CPU form: one host thread runs a program.
struct ConvertTkToLoops
    : public tk::impl::TkConvertToLoopsBase<ConvertTkToLoops> {
  using TkConvertToLoopsBase::TkConvertToLoopsBase;

  void runOnOperation() override {
    KernelLowering::Config config;
    config.fuseLoadsIntoStores = fuseLoadsIntoStores;
    if (failed(convertKernels(getOperation(), config)))
      signalPassFailure();
  }
};

} // namespace
