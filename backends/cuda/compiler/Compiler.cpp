//===- Compiler.cpp - tk module to PTX and a cubin --------------*- C++ -*-===//
//
// Parses the tk module, hands it to the lowering (Lowering.h) for the LLVM
// dialect, translates to LLVM IR, links the libdevice functions it calls,
// optimises at O3 for the NVPTX target, emits PTX and runs the toolkit's
// ptxas for a cubin. Every stage can be dumped (DESIGN.md §3).
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "common/LLVMCodegen.h"
#include "common/OperandsInRegisters.h"
#include "common/PluginSupport.h"
#include "compiler/SharedMemory.h"
#include "tk/core/CompileSupport.h"
#include "tk/ir/Dialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/IPO/Internalize.h"

#include <cstdlib>
#include <mutex>
#include <regex>

using namespace mlir;

namespace tk::cuda {

namespace {

constexpr const char *kTriple = "nvptx64-nvidia-cuda";

/// The PTX ISA version LLVM emits: 8.6 (CUDA 12.8) covers sm_80 to sm_90a
/// and every instruction the lowering uses; CUDA 13's ptxas reads it, and a
/// driver new enough for the GPUs that need the PTX JIT does too.
constexpr const char *kPtxFeatures = "+ptx86";

constexpr const char *kDefaultToolkit = "/usr/local/cuda";

void initializeNVPTXTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

/// Writes `<dir>/<name>` when dumping is on; failures are ignored (dumps are
/// a debugging aid, never a reason to fail a compile).

/// The value of environment variable `name`, or "" when unset.
std::string getEnv(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

/// Links the libdevice functions `module` calls (__nv_*), then internalises
/// everything but the kernel so that O3 may inline and drop them.
tk_status linkLibdevice(llvm::Module &module, llvm::StringRef entry,
                        std::string &error) {
  bool callsLibdevice = false;
  for (const llvm::Function &function : module)
    if (function.isDeclaration() && function.getName().starts_with("__nv_"))
      callsLibdevice = true;
  if (callsLibdevice) {
    // Reading libdevice (some 500 KB of bitcode) is skipped for the kernels
    // that need none of it.
    llvm::SmallString<256> path(cudaToolkitRoot());
    llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
    llvm::SMDiagnostic diagnostic;
    // Lazy: the linker materialises only the functions the kernel calls.
    std::unique_ptr<llvm::Module> libdevice =
        llvm::getLazyIRFileModule(path, diagnostic, module.getContext());
    if (!libdevice) {
      error = "tk-cuda: cannot read libdevice at " + std::string(path) +
              " (set CUDA_HOME to the CUDA toolkit): " +
              diagnostic.getMessage().str();
      return TK_ERROR_COMPILATION;
    }
    // libdevice says "nvptx64-nvidia-gpulibs"; the linker would warn.
    libdevice->setTargetTriple(module.getTargetTriple());
    libdevice->setDataLayout(module.getDataLayout());
    if (llvm::Linker::linkModules(module, std::move(libdevice),
                                  llvm::Linker::Flags::LinkOnlyNeeded)) {
      error = "tk-cuda: linking libdevice failed";
      return TK_ERROR_COMPILATION;
    }
  }
  llvm::internalizeModule(module, [&](const llvm::GlobalValue &value) {
    return value.getName() == entry;
  });
  // libdevice's __nvvm_reflect("__CUDA_FTZ") reads this flag: 0 keeps
  // denormals, as tk's f32 semantics (and the CPU backend) do.
  module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  return TK_SUCCESS;
}

/// "ptxas info    : Used 32 registers, ..." → 32; 0 when absent.
int parseRegisterCount(const std::string &log) {
  static const std::regex pattern("Used ([0-9]+) registers");
  std::smatch match;
  if (std::regex_search(log, match, pattern))
    return std::atoi(match[1].str().c_str());
  return 0;
}

tk_status runPtxas(const std::string &ptx, const Target &target,
                   CompiledKernel &out, std::string &error) {
  std::string ptxas;
  if (tk_status status = findPtxas(ptxas, error))
    return status;
  tk::plugin::TemporaryFile input, output, log;
  for (auto [file, suffix] :
       {std::pair{&input, "ptx"}, std::pair{&output, "cubin"},
        std::pair{&log, "log"}}) {
    if (std::error_code ec = file->create("tk-cuda", suffix)) {
      error =
          "tk-cuda: cannot create a temporary file for ptxas: " + ec.message();
      return TK_ERROR_IO;
    }
  }
  if (std::error_code ec = tk::writeWholeFile(input.path, ptx)) {
    error = "tk-cuda: cannot write " + std::string(input.path) + ": " +
            ec.message();
    return TK_ERROR_IO;
  }
  std::string arch = "-arch=" + target.name();
  llvm::SmallVector<llvm::StringRef> args = {
      ptxas, arch, "-O3", "--verbose", "-o", output.path, input.path};
  // stdout and stderr into one log: errors and -v's register counts.
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(log.path), llvm::StringRef(log.path)};
  std::string launchError;
  bool launchFailed = false;
  int exitCode = llvm::sys::ExecuteAndWait(
      ptxas, args, /*Env=*/std::nullopt, redirects, /*SecondsToWait=*/0,
      /*MemoryLimit=*/0, &launchError, &launchFailed);
  if (auto buffer = llvm::MemoryBuffer::getFile(log.path))
    out.ptxasLog = (*buffer)->getBuffer().str();
  if (launchFailed) {
    error = "tk-cuda: cannot run " + ptxas + ": " + launchError;
    return TK_ERROR_COMPILATION;
  }
  if (exitCode != 0) {
    error = "tk-cuda: ptxas " + arch + " failed (exit code " +
            std::to_string(exitCode) + "):\n" + out.ptxasLog;
    return TK_ERROR_COMPILATION;
  }
  auto cubin = llvm::MemoryBuffer::getFile(output.path);
  if (!cubin) {
    error = "tk-cuda: ptxas wrote no cubin: " + cubin.getError().message();
    return TK_ERROR_COMPILATION;
  }
  out.cubin = (*cubin)->getBuffer().str();
  out.registersPerThread = parseRegisterCount(out.ptxasLog);
  return TK_SUCCESS;
}

} // namespace

namespace {
/// Whether `root` holds what tk uses of a CUDA toolkit: ptxas and libdevice.
bool holdsToolkit(llvm::StringRef root) {
  llvm::SmallString<256> ptxas(root), libdevice(root);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
  return llvm::sys::fs::can_execute(ptxas) && llvm::sys::fs::exists(libdevice);
}
} // namespace

std::string cudaToolkitRoot() {
  std::string home = getEnv("CUDA_HOME");
  if (!home.empty())
    return home;
  // The toolkit of the ptxas on PATH: <root>/bin/ptxas, symbolic links
  // (Debian's /usr/bin/ptxas, alternatives) resolved. A wrapper script
  // (/usr/local/bin/ptxas exec'ing the toolkit's) leaves no link to follow,
  // so a root counts only when it holds libdevice too.
  if (llvm::ErrorOr<std::string> onPath =
          llvm::sys::findProgramByName("ptxas")) {
    llvm::SmallString<256> real;
    if (!llvm::sys::fs::real_path(*onPath, real)) {
      llvm::sys::path::remove_filename(real); // .../bin
      llvm::sys::path::remove_filename(real); // the root
      if (holdsToolkit(real))
        return std::string(real);
    }
  }
  return kDefaultToolkit;
}

tk_status findPtxas(std::string &path, std::string &error) {
  llvm::SmallString<256> candidate(cudaToolkitRoot());
  llvm::sys::path::append(candidate, "bin", "ptxas");
  if (llvm::sys::fs::can_execute(candidate)) {
    path = std::string(candidate);
    return TK_SUCCESS;
  }
  std::string home = getEnv("CUDA_HOME");
  error = "tk-cuda: ptxas, which turns PTX into a cubin, not found: ";
  if (!home.empty())
    error += "looked for " + std::string(candidate) + " (CUDA_HOME=" + home +
             "); point CUDA_HOME at a CUDA toolkit";
  else
    error += std::string("looked on PATH and for ") + kDefaultToolkit +
             "/bin/ptxas; install the CUDA toolkit or set CUDA_HOME";
  return TK_ERROR_COMPILATION;
}

namespace {
/// One compile of `input`; compileKernel decides between two of them.
tk_status compileOnce(const CompileInput &input, CompileStage stopAfter,
                      CompiledKernel &out, std::string &error) {
  initializeNVPTXTarget();

  DialectRegistry registry;
  tk::registerTkDialects(registry);
  registerLoweringDialects(registry);
  // One compile, one thread: the runtime compiles kernels concurrently.
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);

  tk::DiagnosticCapture capture(&context);
  const std::string &diagnostics = capture.text();

  if (input.entry.empty()) {
    error = "tk-cuda: compile needs the name of the kernel to launch";
    return TK_ERROR_NOT_FOUND;
  }
  // ptxas ignores a .minnctapersm it cannot meet; a hint that asks for more
  // threads than an SM holds is the caller's mistake, said here.
  const LoweringOptions &options = input.options;
  int threadsPerBlock = std::max(1, options.numWarps) * 32;
  if (options.minProgramsPerSM < 0 ||
      int64_t(options.minProgramsPerSM) * threadsPerBlock >
          options.target.maxThreadsPerSM()) {
    error = "tk-cuda: min_programs_per_cu " +
            std::to_string(options.minProgramsPerSM) + " of " +
            std::to_string(threadsPerBlock) + " threads each exceeds the " +
            std::to_string(options.target.maxThreadsPerSM()) + " threads an " +
            options.target.name() + " SM holds";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  OwningOpRef<ModuleOp> module;
  if (tk_status status = tk::plugin::statusOf(
          tk::readKernelModule(context, input.module, input.size, input.entry,
                               "tk-cuda", capture, module, error)))
    return status;
  tk::dumpStage(input.dumpDir, "0-tk.mlir",
                [&](llvm::raw_ostream &os) { module->print(os); });

  std::string loweringError;
  DumpFn dump = [&](llvm::StringRef file, ModuleOp stage) {
    tk::dumpStage(input.dumpDir, file,
                  [&](llvm::raw_ostream &os) { stage.print(os); });
  };
  tk_status status = lowerToLLVMDialect(
      *module, input.entry, input.options, out.lowered, loweringError,
      input.dumpDir.empty() ? DumpFn() : dump);
  if (status != TK_SUCCESS) {
    error = "tk-cuda: lowering for " + input.options.target.name() +
            " failed: " + loweringError;
    if (!diagnostics.empty())
      error += "\n" + diagnostics;
    return status;
  }
  if (out.lowered.threadsPerBlock <= 0)
    out.lowered.threadsPerBlock = input.options.numWarps * 32;
  tk::dumpStage(input.dumpDir, "5-llvm-dialect.mlir",
                [&](llvm::raw_ostream &os) { module->print(os); });

  std::string targetError;
  llvm::Triple triple(kTriple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, targetError);
  if (!target) {
    error = "tk-cuda: LLVM lacks the NVPTX target: " + targetError;
    return TK_ERROR_COMPILATION;
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, input.options.target.name(), kPtxFeatures, llvm::TargetOptions(),
      std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine) {
    error = "tk-cuda: cannot create the NVPTX target machine for " +
            input.options.target.name();
    return TK_ERROR_COMPILATION;
  }

  llvm::LLVMContext llvmContext;
  tk::plugin::CodegenErrors codegenErrors;
  codegenErrors.install(llvmContext);
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "tk_kernel");
  if (!llvmModule) {
    error = "tk-cuda: translation to LLVM IR failed:\n" + diagnostics;
    return TK_ERROR_COMPILATION;
  }
  llvmModule->setTargetTriple(machine->getTargetTriple());
  llvmModule->setDataLayout(machine->createDataLayout());
  out.lowered.sharedMemoryBytes =
      static_cast<int>(moveSharedMemoryToDynamic(*llvmModule));
  tk::dumpStage(input.dumpDir, "6-llvm-ir.ll",
                [&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });

  if (tk_status status = linkLibdevice(*llvmModule, input.entry, error))
    return status;
  tk::plugin::optimizeForTarget(*llvmModule, *machine);
  std::string verifierOutput;
  llvm::raw_string_ostream verifierStream(verifierOutput);
  if (llvm::verifyModule(*llvmModule, &verifierStream)) {
    error = "tk-cuda: LLVM IR does not verify after optimisation:\n" +
            verifierOutput;
    return TK_ERROR_COMPILATION;
  }
  tk::dumpStage(input.dumpDir, "7-llvm-ir-opt.ll",
                [&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });
  if (stopAfter == CompileStage::LLVMIR) {
    llvm::raw_string_ostream os(out.llvmIR);
    llvmModule->print(os, nullptr);
    return TK_SUCCESS;
  }

  {
    llvm::SmallVector<char, 0> buffer;
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                     llvm::CodeGenFileType::AssemblyFile)) {
      error = "tk-cuda: the NVPTX target cannot emit PTX";
      return TK_ERROR_COMPILATION;
    }
    codegen.run(*llvmModule);
    out.ptx.assign(buffer.data(), buffer.size());
  }
  if (!codegenErrors.empty()) {
    error = "tk-cuda: code generation for " + input.options.target.name() +
            " failed: " + codegenErrors.text;
    return TK_ERROR_COMPILATION;
  }
  tk::dumpStage(input.dumpDir, "8-kernel.ptx",
                [&](llvm::raw_ostream &os) { os << out.ptx; });
  if (stopAfter == CompileStage::PTX)
    return TK_SUCCESS;

  status = runPtxas(out.ptx, input.options.target, out, error);
  tk::dumpStage(input.dumpDir, "9-ptxas.log",
                [&](llvm::raw_ostream &os) { os << out.ptxasLog; });
  return status;
}

/// The bytes ptxas -v says the kernel spills (stores and loads); -1 when
/// the log does not say.
int64_t parseSpillBytes(const std::string &log) {
  static const std::regex pattern(
      "([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  std::smatch match;
  if (!std::regex_search(log, match, pattern))
    return -1;
  return std::atoll(match[1].str().c_str()) +
         std::atoll(match[2].str().c_str());
}
} // namespace

tk_status compileKernel(const CompileInput &input, CompileStage stopAfter,
                        CompiledKernel &out, std::string &error) {
  if (tk_status status = compileOnce(input, stopAfter, out, error))
    return status;
  // An invariant dot operand staged in shared memory (attention's q, where
  // the estimate says the loop's registers would not hold it) spares
  // registers, and is read from shared memory at every product. Whether the
  // registers would have held it is ptxas's answer: the kernel is compiled
  // again with the operand in registers, and the staged code is kept only
  // where it spills less (attention at head dim 256 on two warpgroups: 0
  // bytes against 144). A compile that stops at LLVM IR keeps it staged.
  if (!out.lowered.stagedOperands || stopAfter == CompileStage::LLVMIR)
    return TK_SUCCESS;
  std::string stagedLog = out.ptxasLog;
  if (stopAfter == CompileStage::PTX) {
    CompiledKernel probe;
    std::string probeError;
    tk_status probed =
        runPtxas(out.ptx, input.options.target, probe, probeError);
    tk::dumpStage(input.dumpDir, "9-ptxas.log",
                  [&](llvm::raw_ostream &os) { os << probe.ptxasLog; });
    if (probed != TK_SUCCESS)
      return TK_SUCCESS;
    stagedLog = probe.ptxasLog;
  }
  tk::plugin::compareWithOperandsInRegisters(
      input, out,
      [](const CompileInput &inRegisters, CompiledKernel &held,
         std::string &heldError) {
        return compileOnce(inRegisters, CompileStage::Cubin, held, heldError);
      },
      [&](const CompiledKernel &, const CompiledKernel &held) {
        int64_t stagedSpills = parseSpillBytes(stagedLog);
        int64_t heldSpills = parseSpillBytes(held.ptxasLog);
        return stagedSpills >= 0 && heldSpills >= 0 &&
               heldSpills <= stagedSpills;
      });
  return TK_SUCCESS;
}

tk_status compileToPackage(const CompileInput &input, Package &out,
                           std::string &error) {
  CompiledKernel kernel;
  if (tk_status status =
          compileKernel(input, CompileStage::Cubin, kernel, error))
    return status;
  out.arch = input.options.target.name();
  out.entry = input.entry;
  out.numWarps = input.options.numWarps;
  out.threadsPerBlock = kernel.lowered.threadsPerBlock;
  out.sharedMemoryBytes = kernel.lowered.sharedMemoryBytes;
  out.registersPerThread = kernel.registersPerThread;
  out.ptx = std::move(kernel.ptx);
  out.cubin = std::move(kernel.cubin);
  return TK_SUCCESS;
}

} // namespace tk::cuda
