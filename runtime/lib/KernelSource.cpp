//===- KernelSource.cpp - from kernel source to compiler input ------------===//
//
// Parsing, verification, entry selection, specialisation and serialisation
// of a kernel, each failure turned into a status naming what was wrong.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/KernelSource.h"
#include "tk/runtime/BytecodeCheck.h"
#include "tk/runtime/CEnum.h"

#include "tk/core/BoundsChecks.h"
#include "tk/core/CompileSupport.h"
#include "tk/core/Specialize.h"
#include "tk/core/TileParameters.h"
#include "tk/ir/Dialect.h"
#include "tk/ir/NestingLimit.h"
#include "tk/ttir/Import.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <optional>

using namespace tk::runtime;
using namespace mlir;

/// The dialects a kernel of `kind` may use. Triton's `tt` is read only from a
/// TTIR source, which converts it to tk before anything else sees it: a tk
/// text source that wrote `tt` ops would otherwise be accepted here and its
/// bytecode refused by every reader that knows only tk (tk-bytecode-check,
/// the plugins, the kernel cache).
static const DialectRegistry &getDialectRegistry(tk_source_kind kind) {
  static const DialectRegistry *tkRegistry = [] {
    auto *registry = new DialectRegistry();
    tk::registerTkDialects(*registry);
    return registry;
  }();
  static const DialectRegistry *ttirRegistry = [] {
    auto *registry = new DialectRegistry();
    tk::registerTkDialects(*registry);
    tk::ttir::registerTtirImport(*registry);
    return registry;
  }();
  return kind == TK_SOURCE_TTIR ? *ttirRegistry : *tkRegistry;
}

namespace {
/// Collects every diagnostic of a context into text. Text sources go through
/// the SourceMgr handler, which quotes the offending line with a caret; the
/// other sources print `location: severity: message`.
class DiagnosticCollector {
public:
  DiagnosticCollector(MLIRContext &context, llvm::SourceMgr *sourceMgr)
      : stream(text) {
    if (sourceMgr)
      sourceHandler.emplace(*sourceMgr, &context, stream);
    else
      handler.emplace(&context, [this](Diagnostic &diagnostic) {
        print(diagnostic);
        return success();
      });
  }

  /// Everything reported so far, without the last newline.
  std::string take() {
    std::string result = llvm::StringRef(text).rtrim().str();
    text.clear();
    return result.empty() ? "(no diagnostic)" : result;
  }

private:
  void print(Diagnostic &diagnostic) {
    printOne(diagnostic);
    for (Diagnostic &note : diagnostic.getNotes())
      printOne(note);
  }

  void printOne(Diagnostic &diagnostic) {
    if (auto fileLoc =
            diagnostic.getLocation()->findInstanceOf<FileLineColLoc>())
      stream << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine()
             << ":" << fileLoc.getColumn();
    else
      stream << diagnostic.getLocation();
    switch (diagnostic.getSeverity()) {
    case DiagnosticSeverity::Error:
      stream << ": error: ";
      break;
    case DiagnosticSeverity::Warning:
      stream << ": warning: ";
      break;
    case DiagnosticSeverity::Note:
      stream << ": note: ";
      break;
    case DiagnosticSeverity::Remark:
      stream << ": remark: ";
      break;
    }
    stream << diagnostic << "\n";
  }

  std::string text;
  llvm::raw_string_ostream stream;
  /// One of them is registered on construction and removed on destruction;
  /// declared last so they go before the stream they write to. Each is held
  /// as its own type: ScopedDiagnosticHandler has no virtual destructor, so
  /// deleting the SourceMgr one through it was undefined (ASan's
  /// new-delete-type-mismatch).
  std::optional<SourceMgrDiagnosticHandler> sourceHandler;
  std::optional<ScopedDiagnosticHandler> handler;
};
} // namespace

/// Wraps what the parser produced into one builtin.module (or takes the one
/// the source wrote).
static OwningOpRef<ModuleOp> takeModule(Block &block, MLIRContext &context,
                                        llvm::StringRef sourceName) {
  LocationAttr loc = FileLineColLoc::get(&context, sourceName, 1, 1);
  return detail::constructContainerOpForParserIfNecessary<ModuleOp>(
      &block, &context, loc);
}

static Status invalidIR(llvm::StringRef what,
                        DiagnosticCollector &diagnostics) {
  return Status(TK_ERROR_INVALID_IR, what.str() + ":\n" + diagnostics.take());
}

/// Refuses text nested deeper than the parser's recursion can take.
static Status checkNesting(llvm::StringRef text, llvm::StringRef sourceName) {
  std::optional<size_t> at = tk::findNestingBeyond(text);
  if (!at)
    return Status::success();
  auto [line, column] = tk::lineAndColumnAt(text, *at);
  return Status(TK_ERROR_INVALID_IR,
                sourceName.str() + ":" + std::to_string(line) + ":" +
                    std::to_string(column) +
                    ": the kernel source nests deeper than " +
                    std::to_string(tk::kMaxIRNesting) +
                    " brackets; it is refused before parsing, which would "
                    "overflow the stack");
}

/// Parses text, reads bytecode, imports TTIR, or copies a builder module
/// through bytecode into `context`. The copy goes through bytecode rather than
/// clone(): the builder's module lives in the caller's context (and may have
/// been built with another copy of the tk dialect), and the runtime must not
/// register handlers on, or mutate, a context it does not own.
static Status readSource(const tk_kernel_source &source,
                         llvm::StringRef sourceName, MLIRContext &context,
                         llvm::SourceMgr &sourceMgr,
                         DiagnosticCollector &diagnostics,
                         OwningOpRef<ModuleOp> &module) {
  ParserConfig config(&context, /*verifyAfterParse=*/true);
  Block block;
  switch (source.kind) {
  case TK_SOURCE_TEXT: {
    const char *data = static_cast<const char *>(source.data);
    // A size of 0 means NUL-terminated text.
    size_t size = source.size ? source.size : std::strlen(data);
    llvm::StringRef text(data, size);
    TK_RETURN_IF_ERROR(checkNesting(text, sourceName));
    sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(
                                     llvm::StringRef(data, size), sourceName),
                                 llvm::SMLoc());
    AsmParserState state;
    if (failed(parseAsmSourceFile(sourceMgr, &block, config, &state)))
      return invalidIR("the kernel source does not parse or verify",
                       diagnostics);
    module = takeModule(block, context, sourceName);
    if (!module)
      return invalidIR("the kernel source is not a module", diagnostics);
    tk::recoverArgumentNames(*module, state);
    return Status::success();
  }
  case TK_SOURCE_TTIR: {
    const char *data = static_cast<const char *>(source.data);
    size_t size = source.size ? source.size : std::strlen(data);
    llvm::StringRef text(data, size);
    TK_RETURN_IF_ERROR(checkNesting(text, sourceName));
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, sourceName), llvm::SMLoc());
    tk::ttir::ImportFailure failure;
    module = tk::ttir::importTtir(sourceMgr, context, failure);
    if (failure == tk::ttir::ImportFailure::InvalidIR)
      return invalidIR("the TTIR does not parse", diagnostics);
    if (failure == tk::ttir::ImportFailure::Unsupported)
      return Status(TK_ERROR_UNSUPPORTED,
                    "the TTIR uses what tk cannot import:\n" +
                        diagnostics.take());
    return Status::success();
  }
  case TK_SOURCE_BYTECODE: {
    llvm::MemoryBufferRef buffer(
        llvm::StringRef(static_cast<const char *>(source.data), source.size),
        sourceName);
    if (!isBytecode(buffer))
      return Status(TK_ERROR_INVALID_IR,
                    "the kernel source is marked TK_SOURCE_BYTECODE but its " +
                        std::to_string(source.size) +
                        " bytes are not MLIR bytecode");
    // MLIR's reader may end the process on a malformed file: it reads it in
    // a process of its own first.
    TK_RETURN_IF_ERROR(checkBytecodeApart(buffer.getBuffer()));
    if (failed(readBytecodeFile(buffer, &block, config)))
      return invalidIR("the kernel bytecode does not read or verify",
                       diagnostics);
    module = takeModule(block, context, sourceName);
    if (!module)
      return invalidIR("the kernel bytecode is not a module", diagnostics);
    return Status::success();
  }
  case TK_SOURCE_MODULE: {
    // ModuleOp is a handle class; copying it reads the caller's pointer.
    ModuleOp builderModule = *static_cast<const ModuleOp *>(source.data);
    Operation *op = builderModule.getOperation();
    if (!op)
      return Status(TK_ERROR_INVALID_ARGUMENT,
                    "source->data points at a null mlir::ModuleOp");
    std::string bytecode;
    llvm::raw_string_ostream stream(bytecode);
    if (failed(writeBytecodeToFile(op, stream)))
      return Status(TK_ERROR_INVALID_IR,
                    "the builder module cannot be serialised to bytecode");
    llvm::MemoryBufferRef buffer(bytecode, "<builder module>");
    if (failed(readBytecodeFile(buffer, &block, config)))
      return invalidIR("the builder module does not verify", diagnostics);
    module = takeModule(block, context, sourceName);
    if (!module)
      return invalidIR("the builder module is not a module", diagnostics);
    return Status::success();
  }
  case TK_SOURCE_PACKAGE:
    // Kernel::create loads a package's binaries; nothing compiles them.
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "a package holds compiled kernels, not a source to compile "
                  "or autotune");
  }
  return Status(TK_ERROR_INTERNAL, "readSource: an unchecked source->kind");
}

/// The tk.func to launch: `entry`, or the only one when `entry` is null.
static Status selectEntry(ModuleOp module, const char *entry, tk::FuncOp &out) {
  SmallVector<tk::FuncOp> funcs(module.getOps<tk::FuncOp>());
  std::string available;
  for (tk::FuncOp func : funcs)
    available += (available.empty() ? "" : ", ") + func.getSymName().str();
  if (available.empty())
    available = "none";
  if (entry) {
    for (tk::FuncOp func : funcs)
      if (func.getSymName() == entry) {
        out = func;
        return Status::success();
      }
    return Status(TK_ERROR_NOT_FOUND,
                  std::string("no tk.func named '") + entry +
                      "' in the kernel source; it defines: " + available);
  }
  if (funcs.empty())
    return Status(TK_ERROR_NOT_FOUND,
                  "the kernel source defines no tk.func: there is no kernel "
                  "to compile");
  if (funcs.size() != 1)
    return Status(TK_ERROR_NOT_FOUND,
                  "the kernel source defines " + std::to_string(funcs.size()) +
                      " tk.func (" + available +
                      "); set tk_kernel_source.entry to pick one");
  out = funcs.front();
  return Status::success();
}

/// Folds the constexpr values, given by argument name, into `func`.
static Status applyConstexprs(tk::FuncOp func,
                              llvm::ArrayRef<tk_constexpr_value> constexprs,
                              DiagnosticCollector &diagnostics) {
  SmallVector<std::pair<unsigned, int64_t>> values;
  llvm::StringSet<> seen;
  std::string names;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    names += (i ? ", " : "") + tk::getArgumentName(func, i);
  for (auto [position, constexprValue] : llvm::enumerate(constexprs)) {
    if (!constexprValue.name)
      return Status(TK_ERROR_INVALID_ARGUMENT, "options->constexprs[" +
                                                   std::to_string(position) +
                                                   "].name is NULL");
    if (!seen.insert(constexprValue.name).second)
      return Status(TK_ERROR_INVALID_ARGUMENT, std::string("constexpr '") +
                                                   constexprValue.name +
                                                   "' is given twice");
    std::optional<unsigned> index;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (tk::getArgumentName(func, i) == constexprValue.name)
        index = i;
    DictionaryAttr folded = func.getConstexprs();
    if (!index && folded && folded.get(constexprValue.name))
      return Status(TK_ERROR_NOT_FOUND,
                    std::string("constexpr '") + constexprValue.name +
                        "': kernel '" + func.getSymName().str() +
                        "' already has it folded in (tk.constexprs); only "
                        "arguments can be specialised: " +
                        (names.empty() ? "none" : names));
    if (!index)
      return Status(TK_ERROR_NOT_FOUND,
                    std::string("constexpr '") + constexprValue.name +
                        "': kernel '" + func.getSymName().str() +
                        "' has no argument of that name; its arguments are: " +
                        (names.empty() ? "none" : names));
    values.push_back({*index, constexprValue.value});
  }
  if (failed(tk::specializeArguments(func, values)))
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "cannot apply the constexprs:\n" + diagnostics.take());
  return Status::success();
}

/// Rewrites `entry` into the kernel of the bounds-checked mode and fills
/// `table` with what it added.
static Status makeBoundsChecked(ModuleOp module, tk::FuncOp entry,
                                DiagnosticCollector &diagnostics,
                                BoundsCheckTable &table) {
  std::string name = entry.getSymName().str();
  tk::BoundsChecks checks;
  if (failed(tk::addBoundsChecks(entry, checks)))
    return Status(TK_ERROR_UNSUPPORTED,
                  "the bounds-checked mode (TK_CHECK_BOUNDS) cannot check "
                  "kernel '" +
                      name + "':\n" + diagnostics.take());
  // The offsets of pointers no access uses go; the backends get the kernel
  // as lean as a user would have written it.
  PassManager pm(module.getContext());
  pm.addPass(tk::createCanonicalizer());
  pm.addPass(createCSEPass());
  if (failed(pm.run(module)) || failed(verify(module)))
    return Status(TK_ERROR_INTERNAL, "the bounds-checked kernel '" + name +
                                         "' does not verify:\n" +
                                         diagnostics.take());
  table.numUserArguments = checks.numUserArguments;
  table.extentArguments.assign(checks.extentArguments.begin(),
                               checks.extentArguments.end());
  for (const tk::BoundsCheckSite &site : checks.sites)
    table.sites.push_back({site.op, site.location, site.argument});
  return Status::success();
}

/// The launch signature of `func`: what a launch passes for each argument.
static Status getSignature(tk::FuncOp func,
                           std::vector<KernelArgument> &arguments) {
  if (func.getNumArguments() > kMaxKernelArguments)
    return Status(TK_ERROR_UNSUPPORTED,
                  "kernel '" + func.getSymName().str() + "' takes " +
                      std::to_string(func.getNumArguments()) +
                      " arguments; tk launches at most " +
                      std::to_string(kMaxKernelArguments));
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
    KernelArgument argument;
    argument.name = tk::getArgumentName(func, index);
    llvm::raw_string_ostream(argument.typeName) << type;
    if (auto divisibility = func.getArgAttrOfType<IntegerAttr>(
            index, tk::TkDialect::kDivisibilityAttrName))
      argument.divisibility = std::max<int64_t>(divisibility.getInt(), 1);
    if (auto ptr = dyn_cast<tk::PtrType>(type)) {
      argument.type = TK_PLUGIN_ARG_PTR;
      Type pointee = ptr.getPointeeType();
      argument.elementBytes = pointee.isIntOrFloat()
                                  ? (pointee.getIntOrFloatBitWidth() + 7) / 8
                                  : 1;
      // As in Triton, the divisibility of a pointer is of its byte address.
      argument.alignment = argument.divisibility;
    } else if (type.isInteger(32)) {
      argument.type = TK_PLUGIN_ARG_I32;
    } else if (type.isInteger(64)) {
      argument.type = TK_PLUGIN_ARG_I64;
    } else if (type.isF32()) {
      argument.type = TK_PLUGIN_ARG_F32;
    } else if (type.isF64()) {
      argument.type = TK_PLUGIN_ARG_F64;
    } else {
      return Status(TK_ERROR_UNSUPPORTED,
                    "argument " + std::to_string(index) + " ('" +
                        argument.name + "') of kernel '" +
                        func.getSymName().str() + "' has type " +
                        argument.typeName +
                        ", which a launch cannot pass (it passes !tk.ptr, "
                        "i32, i64, f32 and f64); make it a constexpr or "
                        "widen it");
    }
    arguments.push_back(std::move(argument));
  }
  return Status::success();
}

Status tk::runtime::prepareKernel(const tk_kernel_source &source,
                                  llvm::ArrayRef<tk_constexpr_value> constexprs,
                                  PreparedKernel &out,
                                  llvm::StringRef sourceName,
                                  bool checkBounds) {
  if (!source.data)
    return Status(TK_ERROR_INVALID_ARGUMENT, "source->data is NULL");
  // Checked as the integer it is before it is read as the enum.
  long long kind = rawEnumValue(source.kind);
  if (kind != TK_SOURCE_TEXT && kind != TK_SOURCE_BYTECODE &&
      kind != TK_SOURCE_MODULE && kind != TK_SOURCE_TTIR &&
      kind != TK_SOURCE_PACKAGE)
    return Status(TK_ERROR_INVALID_ARGUMENT, "source->kind " +
                                                 std::to_string(kind) +
                                                 " is not a tk_source_kind");
  if (source.kind == TK_SOURCE_BYTECODE && source.size == 0)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "source->size is 0 for TK_SOURCE_BYTECODE");

  // A private context per kernel: diagnostics handlers are per context, so
  // threads creating kernels at the same time never see each other's
  // messages, and nothing here contends on a shared context. Threading is
  // off: a kernel is small, and a thread pool per context would be waste.
  MLIRContext context(getDialectRegistry(source.kind),
                      MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // The located message with its source line says what is wrong; a generic
  // dump of the whole kernel after it ("see current operation") only buries
  // it in the error string.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  DiagnosticCollector diagnostics(context, source.kind == TK_SOURCE_TEXT ||
                                                   source.kind == TK_SOURCE_TTIR
                                               ? &sourceMgr
                                               : nullptr);

  // A text kernel's tile parameters take their values before it is parsed:
  // they are part of its types.
  std::string expanded;
  std::vector<tk::TileParameter> tileParameters;
  tk_kernel_source readable = source;
  if (source.kind == TK_SOURCE_TEXT) {
    SmallVector<std::pair<std::string, int64_t>> values;
    for (const tk_constexpr_value &value : constexprs)
      if (value.name)
        values.push_back({value.name, value.value});
    std::string error;
    if (failed(tk::expandTileParameters(
            StringRef(static_cast<const char *>(source.data), source.size),
            values, expanded, tileParameters, error)))
      return Status(TK_ERROR_INVALID_IR, sourceName.str() + ":" + error);
    readable.data = expanded.data();
    readable.size = expanded.size();
  }

  OwningOpRef<ModuleOp> module;
  TK_RETURN_IF_ERROR(readSource(readable, sourceName, context, sourceMgr,
                                diagnostics, module));

  tk::FuncOp entry;
  TK_RETURN_IF_ERROR(selectEntry(*module, source.entry, entry));
  // The entry's tile parameters are recorded with the other constexprs; the
  // constexprs that named them are spent.
  SmallVector<tk_constexpr_value> argumentConstexprs;
  {
    SmallVector<NamedAttribute> recorded;
    if (DictionaryAttr existing = entry.getConstexprs())
      llvm::append_range(recorded, existing.getValue());
    llvm::StringSet<> parameterNames;
    Builder builder(&context);
    for (const tk::TileParameter &parameter : tileParameters) {
      if (parameter.kernel != entry.getSymName())
        continue;
      parameterNames.insert(parameter.name);
      Type type =
          parameter.type == "i64" ? builder.getI64Type() : builder.getI32Type();
      llvm::erase_if(recorded, [&](const NamedAttribute &attr) {
        return attr.getName() == parameter.name;
      });
      recorded.push_back(builder.getNamedAttr(
          parameter.name, builder.getIntegerAttr(type, parameter.value)));
    }
    if (!parameterNames.empty())
      entry->setAttr(tk::TkDialect::kConstexprsAttrName,
                     builder.getDictionaryAttr(recorded));
    for (const tk_constexpr_value &value : constexprs)
      if (!value.name || !parameterNames.contains(value.name))
        argumentConstexprs.push_back(value);
  }
  constexprs = argumentConstexprs;
  // The compiler gets the entry alone: other kernels of the file would only
  // cost compile time and make the cache key depend on unrelated code.
  for (tk::FuncOp func :
       llvm::make_early_inc_range(module->getOps<tk::FuncOp>()))
    if (func != entry)
      func.erase();

  TK_RETURN_IF_ERROR(applyConstexprs(entry, constexprs, diagnostics));
  if (failed(verify(*module)))
    return invalidIR("the specialised kernel does not verify", diagnostics);
  out.boundsChecks.reset();
  if (checkBounds)
    TK_RETURN_IF_ERROR(makeBoundsChecked(*module, entry, diagnostics,
                                         out.boundsChecks.emplace()));

  out.entry = entry.getSymName().str();
  out.arguments.clear();
  TK_RETURN_IF_ERROR(getSignature(entry, out.arguments));

  out.bytecode.clear();
  llvm::raw_string_ostream stream(out.bytecode);
  if (failed(writeBytecodeToFile(module->getOperation(), stream)))
    return Status(TK_ERROR_INTERNAL, "cannot serialise kernel '" + out.entry +
                                         "' to bytecode:\n" +
                                         diagnostics.take());
  return Status::success();
}

Status tk::runtime::renameEntry(PreparedKernel &prepared, StringRef name) {
  auto isIdentifier = [](StringRef text) {
    return !text.empty() && (llvm::isAlpha(text[0]) || text[0] == '_') &&
           llvm::all_of(text,
                        [](char c) { return llvm::isAlnum(c) || c == '_'; });
  };
  if (!isIdentifier(name))
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "'" + name.str() +
                      "' cannot name a kernel: an entry name is an "
                      "identifier ([A-Za-z_][A-Za-z0-9_]*)");
  MLIRContext context(getDialectRegistry(TK_SOURCE_BYTECODE),
                      MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  DiagnosticCollector diagnostics(context, nullptr);
  ParserConfig config(&context, /*verifyAfterParse=*/true);
  Block block;
  llvm::MemoryBufferRef buffer(prepared.bytecode, prepared.entry);
  OwningOpRef<ModuleOp> module;
  if (succeeded(readBytecodeFile(buffer, &block, config)))
    module = takeModule(block, context, prepared.entry);
  if (!module)
    return Status(TK_ERROR_INTERNAL, "the prepared kernel '" + prepared.entry +
                                         "' does not read back:\n" +
                                         diagnostics.take());
  for (tk::FuncOp func : module->getOps<tk::FuncOp>())
    if (func.getSymName() == prepared.entry)
      func.setSymName(name);
  std::string bytecode;
  llvm::raw_string_ostream stream(bytecode);
  if (failed(verify(*module)) ||
      failed(writeBytecodeToFile(module->getOperation(), stream)))
    return Status(TK_ERROR_INTERNAL, "cannot rename kernel '" + prepared.entry +
                                         "' to '" + name.str() + "':\n" +
                                         diagnostics.take());
  prepared.entry = name.str();
  prepared.bytecode = std::move(bytecode);
  return Status::success();
}
