//===- BFloat16AsInt.cpp - bf16 values as their 16 bits -------------------===//
//
// A retyping, not a dialect conversion: bf16 and i16 have the same size and
// every op that may still carry bf16 only moves bits, so each such op keeps
// its operands and takes the new types in place.
//
//===----------------------------------------------------------------------===//

#include "compiler/BFloat16AsInt.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace tk::xe {
namespace {

/// `type` with every bf16 in it (scalars, vectors, arrays, function types)
/// replaced by i16.
Type withoutBF16(Type type) {
  MLIRContext *ctx = type.getContext();
  if (type.isBF16())
    return IntegerType::get(ctx, 16);
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(withoutBF16(vector.getElementType()));
  if (auto array = dyn_cast<LLVM::LLVMArrayType>(type))
    return LLVM::LLVMArrayType::get(withoutBF16(array.getElementType()),
                                    array.getNumElements());
  if (auto function = dyn_cast<LLVM::LLVMFunctionType>(type)) {
    SmallVector<Type> inputs;
    for (Type input : function.getParams())
      inputs.push_back(withoutBF16(input));
    return LLVM::LLVMFunctionType::get(withoutBF16(function.getReturnType()),
                                       inputs, function.isVarArg());
  }
  return type;
}

bool holdsBF16(Type type) { return withoutBF16(type) != type; }

/// The ops that only move a bf16 value: they are right for its bits as i16.
bool movesBits(Operation *op) {
  return isa<LLVM::LoadOp, LLVM::StoreOp, LLVM::GEPOp, LLVM::BitcastOp,
             LLVM::ConstantOp, LLVM::UndefOp, LLVM::PoisonOp, LLVM::ZeroOp,
             LLVM::SelectOp, LLVM::InsertElementOp, LLVM::ExtractElementOp,
             LLVM::ShuffleVectorOp, LLVM::InsertValueOp, LLVM::ExtractValueOp,
             LLVM::BrOp, LLVM::CondBrOp, LLVM::SwitchOp, LLVM::ReturnOp,
             LLVM::GlobalOp, LLVM::AddressOfOp, LLVM::LLVMFuncOp,
             LLVM::CallOp>(op);
}

/// An attribute of bf16 values as the same bits in i16.
Attribute withoutBF16(Attribute attribute) {
  if (auto value = dyn_cast<FloatAttr>(attribute); value && value.getType().isBF16())
    return IntegerAttr::get(IntegerType::get(value.getContext(), 16),
                            value.getValue().bitcastToAPInt());
  if (auto dense = dyn_cast<DenseElementsAttr>(attribute);
      dense && dense.getElementType().isBF16())
    return dense.bitcast(IntegerType::get(dense.getContext(), 16));
  return attribute;
}

struct BFloat16AsInt
    : public PassWrapper<BFloat16AsInt, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(BFloat16AsInt)

  StringRef getArgument() const override { return "tk-xe-bf16-as-i16"; }

  void runOnOperation() override {
    // Block arguments (values carried around loops) first: the branches
    // that pass them are checked against them.
    getOperation().walk([](Block *block) {
      for (BlockArgument argument : block->getArguments())
        argument.setType(withoutBF16(argument.getType()));
    });
    WalkResult walked = getOperation().walk([&](Operation *op) {
      bool touches = llvm::any_of(op->getResultTypes(), holdsBF16) ||
                     llvm::any_of(op->getOperandTypes(), holdsBF16);
      if (auto func = dyn_cast<LLVM::LLVMFuncOp>(op))
        touches |= holdsBF16(func.getFunctionType());
      if (auto global = dyn_cast<LLVM::GlobalOp>(op))
        touches |= holdsBF16(global.getGlobalType());
      if (auto gep = dyn_cast<LLVM::GEPOp>(op))
        touches |= holdsBF16(gep.getElemType());
      if (!touches)
        return WalkResult::advance();
      // A call may pass bf16 bits along (DPAS takes its operands as i16),
      // but not to a function that computes with them as floats.
      if (!movesBits(op)) {
        op->emitError("tk-xe-bf16-as-i16: '")
            << op->getName() << "' still computes with bf16";
        return WalkResult::interrupt();
      }
      for (OpResult result : op->getResults())
        result.setType(withoutBF16(result.getType()));
      if (auto func = dyn_cast<LLVM::LLVMFuncOp>(op)) {
        func.setFunctionType(
            cast<LLVM::LLVMFunctionType>(withoutBF16(func.getFunctionType())));
      }
      if (auto global = dyn_cast<LLVM::GlobalOp>(op)) {
        global.setGlobalType(withoutBF16(global.getGlobalType()));
        if (std::optional<Attribute> value = global.getValue())
          global.setValueAttr(withoutBF16(*value));
      }
      if (auto gep = dyn_cast<LLVM::GEPOp>(op))
        gep.setElemType(withoutBF16(gep.getElemType()));
      if (auto constant = dyn_cast<LLVM::ConstantOp>(op))
        constant.setValueAttr(withoutBF16(constant.getValue()));
      if (auto call = dyn_cast<LLVM::CallOp>(op))
        if (std::optional<LLVM::LLVMFunctionType> type = call.getVarCalleeType())
          call.setVarCalleeType(
              cast<LLVM::LLVMFunctionType>(withoutBF16(*type)));
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return signalPassFailure();
    // Bitcasts between bf16 and i16 are now from i16 to i16.
    getOperation().walk([](LLVM::BitcastOp cast) {
      if (cast.getArg().getType() == cast.getType()) {
        cast.replaceAllUsesWith(cast.getArg());
        cast.erase();
      }
    });
  }
};

} // namespace

std::unique_ptr<Pass> createBFloat16AsIntPass() {
  return std::make_unique<BFloat16AsInt>();
}

} // namespace tk::xe
