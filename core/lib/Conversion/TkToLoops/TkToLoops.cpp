//===- TkToLoops.cpp - tile ops to scalar loop nests -----------*- C++ -*-===//
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
#include "tk/core/TargetInfo.h"

namespace tk {
#define GEN_PASS_DEF_TKCONVERTTOLOOPS
#include "tk/core/Conversion/Passes.h.inc"
} // namespace tk

using namespace mlir;
using mlir::tk_to_loops::KernelLowering;

namespace {

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

struct ConvertTkToLoops
    : public tk::impl::TkConvertToLoopsBase<ConvertTkToLoops> {
  using TkConvertToLoopsBase::TkConvertToLoopsBase;
  ConvertTkToLoops(const tk::TkConvertToLoopsOptions &options,
                   std::shared_ptr<const tk::MatrixUnit> matrixUnit,
                   std::shared_ptr<const tk::AsyncCopyUnit> asyncCopy)
      : TkConvertToLoopsBase(options), matrixUnit(std::move(matrixUnit)),
        asyncCopy(std::move(asyncCopy)) {}

  std::shared_ptr<const tk::MatrixUnit> matrixUnit;
  std::shared_ptr<const tk::AsyncCopyUnit> asyncCopy;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (threadsPerProgram < 0) {
      module.emitError("tk-convert-to-loops: threads-per-program must be "
                       "0 (CPU) or positive, not ")
          << static_cast<int64_t>(threadsPerProgram);
      return signalPassFailure();
    }
    // A GPU program's lanes form warps of its target's size.
    int64_t warpSize = 1;
    if (threadsPerProgram > 0) {
      if (target.empty()) {
        module.emitError("tk-convert-to-loops: a GPU program "
                         "(threads-per-program > 0) needs target=<preset>, "
                         "whose warp size its shuffles span");
        return signalPassFailure();
      }
      std::string error;
      std::optional<tk::TargetInfo> info = tk::TargetInfo::parse(target, error);
      if (!info) {
        module.emitError("tk-convert-to-loops: ") << error;
        return signalPassFailure();
      }
      warpSize = info->warpSize;
      if (!llvm::isPowerOf2_64(warpSize) || threadsPerProgram % warpSize != 0) {
        module.emitError("tk-convert-to-loops: ")
            << static_cast<int64_t>(threadsPerProgram)
            << " threads are not whole warps of " << warpSize << " lanes ("
            << info->name << ")";
        return signalPassFailure();
      }
    }
    SmallVector<tk::FuncOp> kernels(module.getOps<tk::FuncOp>());
    for (tk::FuncOp kernel : kernels) {
      MLIRContext *ctx = &getContext();
      auto ptr = LLVM::LLVMPointerType::get(ctx);
      SmallVector<Type> inputs;
      for (Type type : kernel.getArgumentTypes())
        inputs.push_back(isa<tk::PtrType>(type) ? Type(ptr) : type);
      // A GPU program reads its grid position from the hardware.
      if (threadsPerProgram == 0)
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
      KernelLowering lowering(kernel, func, fuseLoadsIntoStores,
                              threadsPerProgram, warpSize, matrixUnit.get(),
                              asyncCopy.get(), std::max<int64_t>(1, numStages));
      if (failed(lowering.run())) {
        func.erase();
        return signalPassFailure();
      }
      kernel.erase();
    }
  }
};

} // namespace

std::unique_ptr<Pass>
tk::createConvertToLoopsPass(const TkConvertToLoopsOptions &options,
                             std::shared_ptr<const MatrixUnit> matrixUnit,
                             std::shared_ptr<const AsyncCopyUnit> asyncCopy) {
  return std::make_unique<ConvertTkToLoops>(options, std::move(matrixUnit),
                                            std::move(asyncCopy));
}

//===----------------------------------------------------------------------===//
// MatrixUnit defaults: a unit that holds nothing is never asked to.
//===----------------------------------------------------------------------===//

SmallVector<std::pair<Value, Value>>
tk::MatrixUnit::registerPositions(OpBuilder &, Location,
                                  const HeldProduct &) const {
  return {};
}

FailureOr<SmallVector<Value>>
tk::MatrixUnit::accumulate(OpBuilder &, Location loc, const HeldProduct &,
                           Value, Value, ValueRange) const {
  return emitError(loc, "tk-convert-to-loops: this matrix unit holds no "
                        "accumulators in registers");
}
