//===- Compiler.cpp - tk module to a host object file -----------*- C++ -*-===//
//
// Parses the tk module, takes it through core's layout framework for the
// `cpu` TargetInfo (one warp: the CPU runs a program on one thread), lowers
// it with tk-convert-to-loops and the upstream conversions to the LLVM
// dialect, translates to LLVM IR, optimises at O3 for the host CPU and emits
// an ELF object. Every stage can be dumped.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "common/PluginSupport.h"
#include "common/ToolRunner.h"
#include "compiler/DeviceTarget.h"
#include "compiler/Passes.h"
#include "compiler/ProgramStack.h"
#include "compiler/TargetInfo.h"
#include "tk/core/CompileSupport.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/Passes.h"
#include "tk/ir/Dialect.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <mutex>
#include <vector>

using namespace mlir;

namespace tk::cpu {

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

std::string hostCpuName() { return llvm::sys::getHostCPUName().str(); }

tk_status compileTargetName(std::string &name, std::string &error) {
  std::string level;
  if (tk_status status = requestedLevel(level, error))
    return status;
  name = level.empty() ? hostTargetName() : levelTargetName(level);
  return TK_SUCCESS;
}

std::string hostTargetName() {
  // The host does not change under a process: described once, as detectHost
  // describes it to compileToObject's target machine (every kernel creation
  // asks, memory-cached ones included).
  static const std::string name = [] {
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    std::vector<std::string> enabled;
    for (const auto &feature : features)
      if (feature.getValue())
        enabled.push_back(feature.getKey().str());
    llvm::sort(enabled);
    std::string joined = llvm::join(enabled, ",");
    return llvm::sys::getProcessTriple() + " " + hostCpuName() + " " +
           llvm::utohexstr(llvm::xxh3_64bits(joined));
  }();
  return name;
}

namespace {

/// Measures the stack one program's tiles take (every static alloca of the
/// module: the kernel and what it calls, before inlining), refuses a kernel
/// no thread could run, and records the size as `<entry>_tk_stack_bytes`
/// for the driver.
tk_status recordTileStack(llvm::Module &module, const std::string &entry,
                          std::string &error) {
  const llvm::DataLayout &layout = module.getDataLayout();
  uint64_t bytes = 0;
  for (llvm::Function &function : module)
    for (llvm::Instruction &instruction : llvm::instructions(function))
      if (auto *alloca = llvm::dyn_cast<llvm::AllocaInst>(&instruction)) {
        std::optional<llvm::TypeSize> size = alloca->getAllocationSize(layout);
        if (!size || size->isScalable()) {
          error = "tk-cpu: kernel '" + entry +
                  "' has a tile of a size not known at compile time";
          return TK_ERROR_UNSUPPORTED;
        }
        bytes += size->getFixedValue() + alloca->getAlign().value();
      }
  if (bytes > kMaxTileStackBytes) {
    error = "tk-cpu: kernel '" + entry + "' holds " + std::to_string(bytes) +
            " bytes of tiles in one program; a CPU program's tiles live on "
            "its thread's stack, which holds " +
            std::to_string(kMaxTileStackBytes >> 20) +
            " MiB of them: use smaller blocks";
    return TK_ERROR_UNSUPPORTED;
  }
  llvm::Type *i64 = llvm::Type::getInt64Ty(module.getContext());
  new llvm::GlobalVariable(
      module, i64, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantInt::get(i64, bytes), entry + kStackBytesSymbolSuffix);
  return TK_SUCCESS;
}

/// The loops: loop invariants out first, as on every backend; then each
/// tile is recomputed by its readers or kept on the program's stack
/// (tk-convert-to-loops decides which). One thread runs a program, so the
/// GPU pipeline's layouts carry nothing the loops need.
void addLoopsPasses(OpPassManager &pm) {
  pm.addNestedPass<tk::FuncOp>(tk::createTkHoistLoopInvariants());
  pm.addPass(tk::createTkConvertToLoops());
  pm.addPass(tk::createCanonicalizer());
  pm.addPass(createCSEPass());
}

void addLLVMPasses(OpPassManager &pm) {
  pm.addPass(createTkCpuApproximateMath());
  pm.addPass(createTkCpuAddLaunchWrapper());
  pm.addPass(createSCFToControlFlowPass());
  // fp8 is computed in f32 and moves as bytes; its conversions become
  // integer arithmetic (LLVM has no fp8 type).
  pm.addPass(tk::createTkExpandFp8());
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

} // namespace

tk_status compileToObject(const CompileInput &input, std::string &object,
                          std::string &error) {
  initializeNativeTarget();
  // The layout passes look the `cpu` preset up by name.
  static std::once_flag presets;
  std::call_once(presets, [] { tk::cpu::registerTargetPresets(); });

  DialectRegistry registry;
  tk::registerTkDialects(registry);
  registry.insert<func::FuncDialect, memref::MemRefDialect, LLVM::LLVMDialect,
                  cf::ControlFlowDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  // One compile, one thread: the runtime compiles kernels concurrently.
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);

  tk::DiagnosticCapture capture(&context);
  const std::string &diagnostics = capture.text();

  OwningOpRef<ModuleOp> module;
  if (tk_status status = tk::plugin::statusOf(
          tk::readKernelModule(context, input.module, input.size, input.entry,
                               "tk-cpu", capture, module, error)))
    return status;
  tk::dumpStage(input.dumpDir, "0-tk.mlir",
                [&](llvm::raw_ostream &os) { module->print(os); });

  std::string failedPass;
  if (failed(runPasses(*module, failedPass, addLoopsPasses))) {
    error = "tk-cpu: lowering to loops failed in pass '" + failedPass + "':\n" +
            diagnostics + error;
    return diagnostics.find("does not support") != std::string::npos ||
                   diagnostics.find("not supported") != std::string::npos
               ? TK_ERROR_UNSUPPORTED
               : TK_ERROR_COMPILATION;
  }
  tk::dumpStage(input.dumpDir, "4-loops.mlir",
                [&](llvm::raw_ostream &os) { module->print(os); });

  if (failed(runPasses(*module, failedPass, addLLVMPasses))) {
    error = "tk-cpu: lowering to the LLVM dialect failed in pass '" +
            failedPass + "':\n" + diagnostics + error;
    return TK_ERROR_COMPILATION;
  }
  tk::dumpStage(input.dumpDir, "5-llvm-dialect.mlir",
                [&](llvm::raw_ostream &os) { module->print(os); });

  // The host as LLVM detects it, or an x86-64 level (TK_CPU_ARCH), whose
  // features come from its name alone.
  std::string level;
  if (tk_status status = requestedLevel(level, error))
    return status;
  if (!level.empty() && llvm::sys::getProcessTriple() != levelTriple()) {
    error = "tk-cpu: x86-64 levels are made for " + std::string(levelTriple()) +
            "; this host is " + llvm::sys::getProcessTriple();
    return TK_ERROR_UNSUPPORTED;
  }
  auto builder = level.empty()
                     ? llvm::orc::JITTargetMachineBuilder::detectHost()
                     : llvm::Expected<llvm::orc::JITTargetMachineBuilder>(
                           llvm::orc::JITTargetMachineBuilder(
                               llvm::Triple(llvm::sys::getProcessTriple())));
  if (!builder) {
    error = "tk-cpu: cannot describe the host CPU: " +
            llvm::toString(builder.takeError());
    return TK_ERROR_COMPILATION;
  }
  if (!level.empty())
    builder->setCPU(level);
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  builder->setRelocationModel(llvm::Reloc::PIC_);
  auto machine = builder->createTargetMachine();
  if (!machine) {
    error = "tk-cpu: no LLVM target for the host: " +
            llvm::toString(machine.takeError());
    return TK_ERROR_COMPILATION;
  }
  llvm::TargetMachine &tm = **machine;

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "tk_kernel");
  if (!llvmModule) {
    error = "tk-cpu: translation to LLVM IR failed:\n" + diagnostics;
    return TK_ERROR_COMPILATION;
  }
  llvmModule->setDataLayout(tm.createDataLayout());
  llvmModule->setTargetTriple(tm.getTargetTriple());
  if (tk_status status = recordTileStack(*llvmModule, input.entry, error))
    return status;
  std::string cpu = tm.getTargetCPU().str();
  std::string features = tm.getTargetFeatureString().str();
  for (llvm::Function &f : *llvmModule) {
    if (f.isDeclaration())
      continue;
    // The vectoriser's cost model reads the subtarget from these.
    f.addFnAttr("target-cpu", cpu);
    if (!features.empty())
      f.addFnAttr("target-features", features);
  }
  tk::dumpStage(input.dumpDir, "6-llvm-ir.ll",
                [&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });

  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(&tm);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm =
        pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(*llvmModule, mam);
  }
  if (llvm::verifyModule(*llvmModule, &llvm::errs())) {
    error = "tk-cpu: LLVM IR does not verify after optimisation";
    return TK_ERROR_COMPILATION;
  }
  tk::dumpStage(input.dumpDir, "7-llvm-ir-opt.ll",
                [&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });

  auto emit = [&](llvm::CodeGenFileType type,
                  llvm::SmallVectorImpl<char> &out) -> bool {
    llvm::raw_svector_ostream os(out);
    llvm::legacy::PassManager codegen;
    if (tm.addPassesToEmitFile(codegen, os, nullptr, type))
      return false;
    codegen.run(*llvmModule);
    return true;
  };
  if (!input.dumpDir.empty()) {
    // Code generation mutates nothing we need, but emit the assembly from a
    // clone so the object comes from the same optimised module.
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*llvmModule);
    llvm::SmallVector<char, 0> assembly;
    llvm::raw_svector_ostream os(assembly);
    llvm::legacy::PassManager codegen;
    if (!tm.addPassesToEmitFile(codegen, os, nullptr,
                                llvm::CodeGenFileType::AssemblyFile)) {
      codegen.run(*copy);
      tk::dumpStage(input.dumpDir, "8-host.s", [&](llvm::raw_ostream &out) {
        out << llvm::StringRef(assembly.data(), assembly.size());
      });
    }
  }
  llvm::SmallVector<char, 0> buffer;
  if (!emit(llvm::CodeGenFileType::ObjectFile, buffer)) {
    error = "tk-cpu: the host target cannot emit object files";
    return TK_ERROR_COMPILATION;
  }
  object.assign(buffer.data(), buffer.size());
  return TK_SUCCESS;
}

/// compiler-rt's builtins archive (TK_CPU_BUILTINS, else LLVM's own), linked
/// into every kernel: the helpers LLVM's code calls for what the CPU has no
/// instruction for (__truncsfbf2 for bf16, ...) become part of the kernel,
/// which then loads into any process. A process of libtk_runtime.so has no
/// compiler library that defines them, and Debian 12's libgcc has no bf16
/// helpers.
static tk_status findBuiltins(std::string &path, std::string &error) {
  if (const char *set = std::getenv("TK_CPU_BUILTINS"); set && *set) {
    path = set;
  } else {
    std::string major = std::to_string(LLVM_VERSION_MAJOR);
    path = "/usr/lib/llvm-" + major + "/lib/clang/" + major +
           "/lib/linux/libclang_rt.builtins-x86_64.a";
  }
  if (llvm::sys::fs::is_regular_file(path))
    return TK_SUCCESS;
  error = "tk-cpu: compiler-rt's builtins archive " + path +
          " is missing: install libclang-rt-" +
          std::to_string(LLVM_VERSION_MAJOR) +
          "-dev, or set TK_CPU_BUILTINS to the archive";
  return TK_ERROR_NOT_FOUND;
}

tk_status compileToSharedObject(const CompileInput &input,
                                std::string &sharedObject, std::string &error) {
  std::string object;
  if (tk_status status = compileToObject(input, object, error))
    return status;
  std::string builtins;
  if (tk_status status = findBuiltins(builtins, error))
    return status;
  // -Bsymbolic: the kernel's calls to its own functions stay its own, whatever
  // else the process has loaded under those names.
  return tk::plugin::linkSharedObject("tk-cpu", "TK_CPU_LLD", object,
                                      {"-Bsymbolic"}, sharedObject, error,
                                      {builtins});
}

tk_status validateObject(const void *data, size_t size, std::string &error) {
  if (!data || size == 0) {
    error = "tk-cpu: empty binary";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  llvm::MemoryBufferRef ref(
      llvm::StringRef(static_cast<const char *>(data), size), "tk-kernel");
  auto file = llvm::object::ObjectFile::createObjectFile(ref);
  if (!file) {
    error = "tk-cpu: the binary is not an object file: " +
            llvm::toString(file.takeError());
    return TK_ERROR_INVALID_ARGUMENT;
  }
  for (const llvm::object::SymbolRef &symbol : (*file)->symbols()) {
    auto name = symbol.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (name->ends_with(kLaunchSuffix))
      return TK_SUCCESS;
  }
  error = "tk-cpu: the object file has no *_tk_launch entry point";
  return TK_ERROR_INVALID_ARGUMENT;
}

} // namespace tk::cpu
