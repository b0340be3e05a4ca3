//===- Specialize.cpp - fold constexpr arguments into a kernel ------------===//
//
// Implements tk::specializeArguments: scalar arguments become constants and
// leave the signature, and the kernel records what it was specialised for.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Specialize.h"

#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;
using tk::FuncOp;

void tk::recoverArgumentNames(ModuleOp module, const AsmParserState &state) {
  Builder builder(module.getContext());
  for (FuncOp func : module.getOps<FuncOp>()) {
    if (func->hasAttr(tk::TkDialect::kArgNamesAttrName) ||
        func.getBody().empty())
      continue;
    const AsmParserState::BlockDefinition *definition =
        state.getBlockDef(&func.getBody().front());
    if (!definition || definition->arguments.size() != func.getNumArguments())
      continue;
    SmallVector<Attribute> names;
    for (const AsmParserState::SMDefinition &argument : definition->arguments) {
      const char *start = argument.loc.Start.getPointer();
      const char *end = argument.loc.End.getPointer();
      if (!start || !end || end <= start)
        return;
      llvm::StringRef name(start, end - start);
      name.consume_front("%");
      if (name.empty())
        return;
      names.push_back(builder.getStringAttr(name));
    }
    func->setAttr(tk::TkDialect::kArgNamesAttrName,
                  builder.getArrayAttr(names));
  }
}

std::string tk::getArgumentName(FuncOp func, unsigned index) {
  if (auto names =
          func->getAttrOfType<ArrayAttr>(TkDialect::kArgNamesAttrName)) {
    if (index < names.size())
      if (auto name = dyn_cast<StringAttr>(names[index]))
        return name.str();
  }
  return "arg" + std::to_string(index);
}

/// The constant that replaces an argument of type `type` given `value`, or a
/// null attribute (with a diagnostic) when the value cannot be represented.
static TypedAttr getConstantFor(tk::FuncOp func, unsigned index, Type type,
                                int64_t value) {
  if (auto intType = dyn_cast<IntegerType>(type)) {
    unsigned width = intType.getWidth();
    // Accept both the signed and the unsigned reading of the width, so that
    // `0xFF` for an i8 mask is as valid as `-1`.
    bool fits = width >= 64 ||
                (width == 1 ? (value == 0 || value == 1)
                            : (value >= -(int64_t(1) << (width - 1)) &&
                               value <= int64_t((uint64_t(1) << width) - 1)));
    if (!fits) {
      func.emitError() << "constexpr value " << value << " for argument "
                       << index << " ('" << tk::getArgumentName(func, index)
                       << "') does not fit its type " << type;
      return {};
    }
    APInt bits = value < 0 ? APInt(width, value, /*isSigned=*/true,
                                   /*implicitTrunc=*/true)
                           : APInt(width, uint64_t(value), /*isSigned=*/false,
                                   /*implicitTrunc=*/true);
    return IntegerAttr::get(type, bits);
  }
  if (auto floatType = dyn_cast<FloatType>(type))
    return FloatAttr::get(floatType, double(value));
  func.emitError() << "argument " << index << " ('"
                   << tk::getArgumentName(func, index) << "') is " << type
                   << "; only integer and floating-point arguments can be "
                      "constexprs";
  return {};
}

LogicalResult
tk::specializeArguments(FuncOp func,
                        ArrayRef<std::pair<unsigned, int64_t>> values) {
  if (values.empty())
    return success();
  unsigned numArgs = func.getNumArguments();

  // Check everything before touching the IR, so a failure leaves `func` as it
  // was and the caller can report the diagnostic against the original.
  llvm::BitVector erased(numArgs);
  SmallVector<TypedAttr> constants;
  for (auto [index, value] : values) {
    if (index >= numArgs)
      return func.emitError()
             << "constexpr for argument " << index << " but the kernel has "
             << numArgs << " arguments";
    if (erased.test(index))
      return func.emitError()
             << "argument " << index << " ('" << getArgumentName(func, index)
             << "') is given two constexpr values";
    erased.set(index);
    TypedAttr constant =
        getConstantFor(func, index, func.getArgumentTypes()[index], value);
    if (!constant)
      return failure();
    constants.push_back(constant);
  }

  Block &entry = func.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  NamedAttrList constexprs;
  if (DictionaryAttr existing = func.getConstexprs())
    constexprs.append(existing.getValue());
  for (auto [pair, constant] : llvm::zip_equal(values, constants)) {
    unsigned index = pair.first;
    BlockArgument arg = entry.getArgument(index);
    auto op = arith::ConstantOp::create(builder, arg.getLoc(), constant);
    arg.replaceAllUsesWith(op.getResult());
    constexprs.set(builder.getStringAttr(getArgumentName(func, index)),
                   constant);
  }

  // Keep tk.arg_names parallel to the signature: drop the erased entries.
  if (auto names =
          func->getAttrOfType<ArrayAttr>(TkDialect::kArgNamesAttrName)) {
    SmallVector<Attribute> kept;
    for (auto [index, name] : llvm::enumerate(names))
      if (index >= numArgs || !erased.test(index))
        kept.push_back(name);
    func->setAttr(TkDialect::kArgNamesAttrName, builder.getArrayAttr(kept));
  }
  if (failed(func.eraseArguments(erased)))
    return func.emitError() << "cannot erase the specialised arguments";
  func->setAttr(TkDialect::kConstexprsAttrName,
                constexprs.getDictionary(func.getContext()));
  return success();
}
