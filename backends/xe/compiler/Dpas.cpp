//===- Dpas.cpp - tk.dot on Intel's DPAS ----------------------------------===//
//
// Intel's half of the layout-driven matrix unit. The operand vectors follow
// cl_intel_subgroup_matrix_multiply_accumulate: for 8 rows (the systolic
// depth), a work-item passes one element of a per row, packed to 16 bits at
// subgroup 16 and to 32 bits at subgroup 8; b's column as 32-bit words of
// consecutive k; the accumulator's column as 8 values.
//
//===----------------------------------------------------------------------===//

#include "compiler/Dpas.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

namespace tk::xe {

namespace {

/// The extension's name of an element type: "f16", "bf16", "tf32", "i8"
/// (signed).
const char *elementName(MatrixElementType type) {
  switch (type) {
  case MatrixElementType::F16:
    return "f16";
  case MatrixElementType::BF16:
    return "bf16";
  case MatrixElementType::TF32:
    return "tf32";
  case MatrixElementType::I8:
    return "i8";
  default:
    return nullptr;
  }
}

/// The Itanium code of a scalar type: "s" (short), "i", "f", "Dh" (half).
std::string scalarCode(Type type) {
  if (type.isF32())
    return "f";
  if (type.isF16())
    return "Dh";
  if (type.isInteger(16))
    return "s";
  if (type.isInteger(32))
    return "i";
  return "";
}

} // namespace

std::string dpasBuiltinName(const MatrixIntrinsic &intrinsic, Type a, Type b,
                            Type accumulator) {
  std::string name = std::string("intel_sub_group_") +
                     elementName(intrinsic.aType) + "_" +
                     elementName(intrinsic.bType) + "_matrix_mad_k" +
                     std::to_string(intrinsic.k);
  std::string mangled = "_Z" + std::to_string(name.size()) + name;
  // Vector types are substitution candidates: the second use of one is
  // "S_", of the next distinct one "S0_", ...
  SmallVector<Type> seen;
  for (Type type : {a, b, accumulator}) {
    auto vector = dyn_cast<VectorType>(type);
    if (!vector) {
      mangled += scalarCode(type);
      continue;
    }
    auto at = llvm::find(seen, type);
    if (at != seen.end()) {
      size_t index = at - seen.begin();
      mangled += index == 0 ? "S_" : "S" + std::to_string(index - 1) + "_";
      continue;
    }
    seen.push_back(type);
    mangled += "Dv" + std::to_string(vector.getNumElements()) + "_" +
               scalarCode(vector.getElementType());
  }
  return mangled;
}

Type DpasUnit::operandType(OpBuilder &b, const MatrixIntrinsic &intrinsic,
                           unsigned operand, Type element,
                           int64_t count) const {
  if (intrinsic.aType == MatrixElementType::TF32)
    return VectorType::get({count}, b.getF32Type());
  int64_t elementBits = element.getIntOrFloatBitWidth();
  int64_t bits = count * elementBits;
  // a: a register a row, holding the row's k / n elements that fall to one
  // work-item (n = the subgroup's lanes): 16 bits at subgroup 16 (one f16,
  // two i8), 32 at subgroup 8. b: consecutive k packed in 32-bit words.
  int64_t word =
      operand == 0
          ? std::max<int64_t>(16, intrinsic.k * elementBits / intrinsic.n)
          : 32;
  Type wordType = b.getIntegerType(word);
  return VectorType::get({bits / word}, wordType);
}

Value DpasUnit::multiply(OpBuilder &b, Location loc,
                         const MatrixIntrinsic &intrinsic, Value aOperand,
                         Value bOperand, Value acc) const {
  std::string name = dpasBuiltinName(intrinsic, aOperand.getType(),
                                     bOperand.getType(), acc.getType());
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  auto type = LLVM::LLVMFunctionType::get(
      acc.getType(), {aOperand.getType(), bOperand.getType(), acc.getType()});
  auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
  if (!callee) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    callee = LLVM::LLVMFuncOp::create(b, loc, name, type);
    callee.setCConv(LLVM::CConv::SPIR_FUNC);
    // A subgroup operation: every work-item of the subgroup takes part, so
    // no transformation may make it conditional.
    callee.setConvergent(true);
    callee.setNoUnwind(true);
    callee.setWillReturn(true);
  }
  auto call =
      LLVM::CallOp::create(b, loc, callee, ValueRange{aOperand, bOperand, acc});
  call.setCConv(LLVM::CConv::SPIR_FUNC);
  call.setConvergent(true);
  return call.getResult();
}

std::shared_ptr<const MatrixUnit> makeDpasUnit(const TargetInfo &info) {
  if (info.intrinsics.empty())
    return nullptr;
  return std::make_shared<DpasUnit>(info);
}

} // namespace tk::xe
