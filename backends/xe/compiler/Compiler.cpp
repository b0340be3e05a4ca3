//===- Compiler.cpp - tk module to SPIR-V and Intel native code -----------===//
//
// Parses the tk module, hands it to the lowering (Lowering.h) for the LLVM
// dialect, translates to LLVM IR, optimises at O3, and emits SPIR-V with
// LLVM's SPIR-V backend. MLIR's XeVM path (xevm.* ops to LLVM, then the
// same backend) would serve too; tk needs only XeVM's DPAS call, which it
// names itself (Dpas.h says why), and no XeVM op otherwise, so the kernels
// go straight from core's GPU form to LLVM.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "common/LLVMCodegen.h"
#include "common/PluginSupport.h"
#include "common/ToolRunner.h"
#include "tk/core/CompileSupport.h"
#include "tk/ir/Dialect.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/IPO/Internalize.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;

namespace tk::xe {

namespace {

/// 64-bit pointers, OpenCL's memory model; the backend's SPIR-V version
/// (1.4), which IGC reads. Not OpenCL 2.2's 1.2: at 1.2 LLVM cannot express
/// the subgroup size a kernel requires and stops the process.
constexpr const char *kTriple = "spirv64-unknown-unknown";

/// The SPIR-V extensions the backend may use, each one IGC has taken since
/// 2021: float atomics (atomic_rmw fadd, fmax, fmin) and Intel's subgroup
/// shuffles.
constexpr const char *kExtensions =
    "--spirv-ext=+SPV_EXT_shader_atomic_float_add,"
    "+SPV_EXT_shader_atomic_float_min_max,+SPV_INTEL_subgroups";

/// OpenCL's local (SLM) address space in SPIR's numbering.
constexpr unsigned kLocalAddressSpace = 3;

void initializeSPIRVTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeSPIRVTargetInfo();
    LLVMInitializeSPIRVTarget();
    LLVMInitializeSPIRVTargetMC();
  });
}

/// SPIR-V of the optimised module by LLVM's `llc`, in a process of its own.
/// LLVM 22's SPIR-V backend keeps what it learns of a module in static
/// state (its module analysis), so in one process a module's code depends
/// on the modules compiled before it (labels defined twice) and two
/// threads compiling at once would share it; and it stops its process on a
/// module it cannot express. A process a module avoids all three.
tk_status runLlc(const std::string &bitcode, const char *level,
                 const char *fileType, std::string &out, std::string &error) {
  std::string llc;
  if (tk_status status =
          tk::plugin::findLLVMTool("llc", "TK_XE_LLC", llc, error)) {
    error = "tk-xe: " + error;
    return status;
  }
  tk::plugin::TemporaryFile input, output;
  for (auto [file, suffix] :
       {std::pair{&input, "bc"}, std::pair{&output, "spv"}})
    if (std::error_code ec = file->create("tk-xe", suffix)) {
      error = "tk-xe: cannot create a temporary file for llc: " + ec.message();
      return TK_ERROR_IO;
    }
  if (std::error_code ec = tk::writeWholeFile(input.path, bitcode)) {
    error =
        "tk-xe: cannot write " + std::string(input.path) + ": " + ec.message();
    return TK_ERROR_IO;
  }
  // -disable-lsr: loop strength reduction and CodeGenPrepare turned a
  // 64-bit loop counter's exit test into OpIAddCarry, which the drivers'
  // IGC refuses without a word (ocloc exits 1; an fp8 matmul's k loop at 8
  // warps). IGC reduces the loops of the code it builds itself.
  tk::plugin::ToolRun run = tk::plugin::runTool(
      llc, {llc, level, "-mtriple=spirv64-unknown-unknown", kExtensions,
            "-disable-lsr", std::string("-filetype=") + fileType, "-o",
            std::string(output.path), std::string(input.path)});
  auto written = llvm::MemoryBuffer::getFile(output.path);
  if (!run.succeeded() || !written) {
    error = "tk-xe: LLVM's SPIR-V backend failed: " + run.describe(llc);
    return TK_ERROR_COMPILATION;
  }
  out = (*written)->getBuffer().str();
  return TK_SUCCESS;
}

/// Whether any value, argument or global of `module` is (or holds) a
/// scalar of which `is` holds.
bool usesType(const llvm::Module &module,
              llvm::function_ref<bool(llvm::Type *)> is) {
  auto matches = [&](llvm::Type *type) { return is(type->getScalarType()); };
  for (const llvm::GlobalVariable &global : module.globals())
    if (matches(global.getValueType()))
      return true;
  for (const llvm::Function &function : module) {
    for (const llvm::Argument &argument : function.args())
      if (matches(argument.getType()))
        return true;
    for (const llvm::BasicBlock &block : function)
      for (const llvm::Instruction &instruction : block) {
        if (matches(instruction.getType()))
          return true;
        for (const llvm::Value *operand : instruction.operands())
          if (matches(operand->getType()))
            return true;
      }
  }
  return false;
}

} // namespace

tk_status compileKernel(const CompileInput &input, CompileStage stopAfter,
                        CompiledKernel &out, std::string &error) {
  initializeSPIRVTarget();
  DialectRegistry registry;
  registerLoweringDialects(registry);
  // One compile, one thread: the runtime compiles kernels concurrently.
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  tk::DiagnosticCapture capture(&context);
  const std::string &diagnostics = capture.text();
  if (input.entry.empty()) {
    error = "tk-xe: compile needs the name of the kernel to launch";
    return TK_ERROR_NOT_FOUND;
  }
  const Target &target = input.options.target;
  OwningOpRef<ModuleOp> module;
  if (tk_status status = tk::plugin::statusOf(
          tk::readKernelModule(context, input.module, input.size, input.entry,
                               "tk-xe", capture, module, error)))
    return status;
  tk::dumpStage(input.dumpDir, "0-tk.mlir",
                [&](llvm::raw_ostream &os) { module->print(os); });
  std::string loweringError;
  DumpFn dump = [&](llvm::StringRef file, ModuleOp stage) {
    tk::dumpStage(input.dumpDir, file,
                  [&](llvm::raw_ostream &os) { stage.print(os); });
  };
  if (tk_status status =
          lowerToLLVMDialect(*module, input.options, out.lowered, loweringError,
                             input.dumpDir.empty() ? DumpFn() : dump)) {
    error = "tk-xe: lowering for " + target.name + " failed: " + loweringError;
    if (!diagnostics.empty())
      error += "\n" + diagnostics;
    return status;
  }

  std::string targetError;
  llvm::Triple triple(kTriple);
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, targetError);
  if (!llvmTarget) {
    error = "tk-xe: LLVM lacks the SPIR-V target: " + targetError;
    return TK_ERROR_COMPILATION;
  }
  // In this process only for the IR optimiser's cost model; code
  // generation is llc's (runLlc says why).
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple, "", "", llvm::TargetOptions(), std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine) {
    error = "tk-xe: cannot create the SPIR-V target machine";
    return TK_ERROR_COMPILATION;
  }
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "tk_kernel");
  if (!llvmModule) {
    error = "tk-xe: translation to LLVM IR failed:\n" + diagnostics;
    return TK_ERROR_COMPILATION;
  }
  llvmModule->setTargetTriple(machine->getTargetTriple());
  llvmModule->setDataLayout(machine->createDataLayout());
  tk::dumpStage(input.dumpDir, "6-llvm-ir.ll",
                [&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });
  // The OpenCL builtins stay declarations (the driver provides them); every
  // other function is the kernel's own.
  llvm::internalizeModule(*llvmModule, [&](const llvm::GlobalValue &value) {
    return value.getName() == input.entry || value.isDeclaration();
  });
  tk::plugin::optimizeForTarget(*llvmModule, *machine);
  std::string verifierOutput;
  llvm::raw_string_ostream verifierStream(verifierOutput);
  if (llvm::verifyModule(*llvmModule, &verifierStream)) {
    error =
        "tk-xe: LLVM IR does not verify after optimisation:\n" + verifierOutput;
    return TK_ERROR_COMPILATION;
  }
  for (const llvm::GlobalVariable &global : llvmModule->globals())
    if (global.getAddressSpace() == kLocalAddressSpace)
      out.slmBytes += static_cast<int>(
          llvmModule->getDataLayout().getTypeAllocSize(global.getValueType()));
  if (out.slmBytes > out.lowered.slmLimit) {
    error = "tk-xe: " + input.entry + " needs " + std::to_string(out.slmBytes) +
            " B of SLM; a workgroup on " + target.name + " has " +
            std::to_string(out.lowered.slmLimit);
    return TK_ERROR_UNSUPPORTED;
  }
  tk::dumpStage(input.dumpDir, "7-llvm-ir-opt.ll",
                [&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });
  if (stopAfter == CompileStage::LLVMIR) {
    llvm::raw_string_ostream os(out.llvmIR);
    llvmModule->print(os, nullptr);
    return TK_SUCCESS;
  }

  // A bfloat left would need SPV_KHR_bfloat16, which the drivers' IGC
  // predates (tk-xe-bf16-as-i16 leaves none, or fails).
  if (usesType(*llvmModule, [](llvm::Type *t) { return t->isBFloatTy(); })) {
    error = "tk-xe: " + input.entry +
            " still holds a bf16 value after tk-xe-bf16-as-i16";
    return TK_ERROR_INTERNAL;
  }
  if (!target.fp64 &&
      usesType(*llvmModule, [](llvm::Type *t) { return t->isDoubleTy(); })) {
    error = "tk-xe: " + input.entry + " computes with f64, which " +
            target.name + " has no unit for";
    return TK_ERROR_UNSUPPORTED;
  }
  std::string bitcode;
  {
    llvm::raw_string_ostream os(bitcode);
    llvm::WriteBitcodeToFile(*llvmModule, os);
  }
  // LLVM 22's SPIR-V backend writes invalid modules for some kernels: its
  // machine combines (O1 and up) can leave a 64-bit operand in a 32-bit
  // OpBitwiseAnd (argmax, attention). spirv-val decides: the O3 module,
  // else the O0 one. The IR was optimised at O3 either way, and IGC
  // optimises the SPIR-V again.
  const char *level = "-O3";
  std::string words;
  if (tk_status status = runLlc(bitcode, level, "obj", words, error))
    return status;
  std::string invalid;
  if (haveSpirvVal() && validateSpirv(words, invalid)) {
    level = "-O0";
    std::string stillInvalid;
    if (tk_status status = runLlc(bitcode, level, "obj", words, error))
      return status;
    if (validateSpirv(words, stillInvalid)) {
      error = "tk-xe: LLVM's SPIR-V backend wrote an invalid module at O3 (" +
              invalid + ") and at O0 (" + stillInvalid + ")";
      return TK_ERROR_COMPILATION;
    }
  }
  std::string text;
  if (!input.dumpDir.empty())
    if (tk_status status = runLlc(bitcode, level, "asm", text, error))
      return status;
  out.spirv = std::move(words);
  out.spirvText = std::move(text);
  tk::dumpStage(input.dumpDir, "8-kernel.spvasm",
                [&](llvm::raw_ostream &os) { os << out.spirvText; });
  if (stopAfter == CompileStage::SPIRV)
    return TK_SUCCESS;

  if (tk_status status = buildNativeLeastSpills(out.spirv, input.entry, target,
                                                out.native, error))
    return status;
  out.haveNative = true;
  tk::dumpStage(input.dumpDir, "9-kernel.asm",
                [&](llvm::raw_ostream &os) { os << out.native.assembly; });
  return TK_SUCCESS;
}

tk_status compileToPackage(const CompileInput &input, Package &out,
                           std::string &error) {
  CompiledKernel kernel;
  CompileStage stage =
      input.native && haveOcloc() ? CompileStage::Native : CompileStage::SPIRV;
  if (tk_status status = compileKernel(input, stage, kernel, error))
    return status;
  const Target &target = input.options.target;
  out = Package();
  out.target = target.name;
  out.entry = input.entry;
  // The subgroups the workgroup runs (getSubgroupsForWarps).
  out.numWarps = std::max<int32_t>(1, kernel.lowered.threadsPerBlock /
                                          target.subgroupSize);
  out.threadsPerBlock = kernel.lowered.threadsPerBlock;
  out.subgroupSize = target.subgroupSize;
  out.matrixDots = kernel.lowered.matrixDots;
  out.spirv = std::move(kernel.spirv);
  out.sharedMemoryBytes = kernel.slmBytes;
  if (kernel.haveNative) {
    if (kernel.native.simdWidth != target.subgroupSize) {
      error = "tk-xe: IGC compiled " + input.entry + " at SIMD" +
              std::to_string(kernel.native.simdWidth) +
              ", the lowering assumed subgroups of " +
              std::to_string(target.subgroupSize);
      return TK_ERROR_INTERNAL;
    }
    out.buildOptions = kernel.native.buildOptions;
    out.natives.push_back(std::move(kernel.native.binary));
  }
  return TK_SUCCESS;
}

tk_status validatePackage(const void *data, size_t size, std::string &report,
                          std::string &error) {
  Package package;
  if (tk_status status = parsePackage(data, size, package, error))
    return status;
  if (tk_status status = validateSpirv(package.spirv, error))
    return status;
  const char *strict = std::getenv("TK_XE_VALIDATION");
  if (!strict || std::string(strict) != "1")
    return TK_SUCCESS;
  Target target;
  if (tk_status status = parseTarget(package.target, target, error))
    return status;
  NativeReport native;
  if (tk_status status = buildNative(package.spirv, package.entry, target,
                                     package.buildOptions, native, error))
    return status;
  if (native.simdWidth != package.subgroupSize) {
    error = "tk-xe: IGC compiled " + package.entry + " at SIMD" +
            std::to_string(native.simdWidth) + ", not the package's " +
            std::to_string(package.subgroupSize);
    return TK_ERROR_COMPILATION;
  }
  if (native.slmBytes < package.sharedMemoryBytes) {
    error = "tk-xe: the module declares " +
            std::to_string(package.sharedMemoryBytes) +
            " B of SLM, IGC reserves " + std::to_string(native.slmBytes);
    return TK_ERROR_COMPILATION;
  }
  if (package.matrixDots > 0 && native.binary.dpasInstructions == 0) {
    error = "tk-xe: " + std::to_string(package.matrixDots) +
            " dots went to DPAS, but iga64 finds no dpas in " + package.entry +
            " for " + target.name;
    return TK_ERROR_COMPILATION;
  }
  report = target.name + ": " + std::to_string(native.binary.grfRegisters) +
           " GRFs, " + std::to_string(native.spillBytes) + " B spilled, " +
           std::to_string(native.binary.scratchBytes) + " B scratch, " +
           std::to_string(native.slmBytes) + " B SLM, " +
           std::to_string(native.binary.dpasInstructions) + " dpas, SIMD" +
           std::to_string(native.simdWidth);
  return TK_SUCCESS;
}

} // namespace tk::xe
