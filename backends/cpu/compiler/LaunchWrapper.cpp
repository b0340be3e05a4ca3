//===- LaunchWrapper.cpp - the <kernel>_tk_launch entry point ---*- C++ -*-===//
//
// Gives every lowered kernel one entry point with a fixed C signature, so the
// driver can call any kernel through the same function pointer type.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "tk/core/Conversion/Passes.h"

#include "mlir/IR/Builders.h"

namespace tk::cpu {
#define GEN_PASS_DEF_TKCPUADDLAUNCHWRAPPER
#include "compiler/Passes.h.inc"
} // namespace tk::cpu

using namespace mlir;

namespace {

struct AddLaunchWrapper
    : public tk::cpu::impl::TkCpuAddLaunchWrapperBase<AddLaunchWrapper> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i32 = IntegerType::get(ctx, 32);
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(tk::kLoweredKernelAttrName))
        kernels.push_back(func);
    for (func::FuncOp kernel : kernels) {
      OpBuilder b(ctx);
      b.setInsertionPointAfter(kernel);
      Location loc = kernel.getLoc();
      SmallVector<Type> inputs{ptr};
      inputs.append(tk::kNumGridArgs, i32);
      auto wrapper = func::FuncOp::create(
          b, loc, (kernel.getSymName() + tk::cpu::kLaunchSuffix).str(),
          b.getFunctionType(inputs, {}));
      Block *entry = wrapper.addEntryBlock();
      b.setInsertionPointToStart(entry);
      Value args = entry->getArgument(0);
      ArrayRef<Type> kernelInputs = kernel.getFunctionType().getInputs();
      unsigned numUserArgs = kernelInputs.size() - tk::kNumGridArgs;
      SmallVector<Value> operands;
      for (unsigned i = 0; i < numUserArgs; ++i) {
        // args[i] is the address of argument i's value.
        Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, args,
                                         ArrayRef<LLVM::GEPArg>{int32_t(i)});
        Value valuePtr = LLVM::LoadOp::create(b, loc, ptr, slot, 8);
        operands.push_back(
            LLVM::LoadOp::create(b, loc, kernelInputs[i], valuePtr));
      }
      for (unsigned i = 0; i < tk::kNumGridArgs; ++i)
        operands.push_back(entry->getArgument(1 + i));
      func::CallOp::create(b, loc, kernel, operands);
      func::ReturnOp::create(b, loc);
      // Internal: inlined into its only caller, the wrapper.
      kernel->setAttr("llvm.linkage",
                      LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
    }
  }
};

} // namespace
