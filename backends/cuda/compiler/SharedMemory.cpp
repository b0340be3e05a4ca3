//===- SharedMemory.cpp - tile buffers into dynamic shared memory ---------===//

#include "compiler/SharedMemory.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Alignment.h"

namespace tk::cuda {

namespace {
constexpr unsigned kSharedAddressSpace = 3;
constexpr uint64_t kMinAlignment = 16;
} // namespace

int64_t moveSharedMemoryToDynamic(llvm::Module &module) {
  llvm::SmallVector<llvm::GlobalVariable *> shared;
  for (llvm::GlobalVariable &global : module.globals())
    if (global.getAddressSpace() == kSharedAddressSpace &&
        !global.isDeclaration())
      shared.push_back(&global);
  if (shared.empty())
    return 0;

  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *i8 = llvm::Type::getInt8Ty(ctx);
  auto *base = new llvm::GlobalVariable(
      module, llvm::ArrayType::get(i8, 0), /*isConstant=*/false,
      llvm::GlobalValue::ExternalLinkage, /*Initializer=*/nullptr,
      "__tk_dynamic_shared", /*InsertBefore=*/nullptr,
      llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
  base->setAlignment(llvm::Align(kMinAlignment));

  const llvm::DataLayout &layout = module.getDataLayout();
  uint64_t offset = 0, baseAlignment = kMinAlignment;
  for (llvm::GlobalVariable *global : shared) {
    uint64_t alignment = std::max<uint64_t>(
        kMinAlignment, global->getAlign().valueOrOne().value());
    baseAlignment = std::max(baseAlignment, alignment);
    offset = llvm::alignTo(offset, alignment);
    llvm::Constant *address = llvm::ConstantExpr::getInBoundsGetElementPtr(
        i8, base, llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx), offset));
    offset += layout.getTypeAllocSize(global->getValueType());
    global->replaceAllUsesWith(address);
    global->eraseFromParent();
  }
  // Offsets are aligned relative to the base, so the base carries the
  // largest alignment (the driver starts dynamic shared memory on a
  // 1024-byte boundary, which wgmma's swizzled buffers need).
  base->setAlignment(llvm::Align(baseAlignment));
  return static_cast<int64_t>(offset);
}

mlir::Value sharedElementAddress(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value buffer, mlir::Value offset) {
  using namespace mlir;
  auto type = cast<MemRefType>(buffer.getType());
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value bytes = arith::AddIOp::create(
      b, loc, base,
      arith::MulIOp::create(
          b, loc, offset,
          arith::ConstantIndexOp::create(b, loc, elementBytes)));
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
      arith::IndexCastOp::create(b, loc, b.getI64Type(), bytes).getResult());
}

} // namespace tk::cuda
