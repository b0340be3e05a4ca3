//===- Compiler.cpp - tk module to an AMDGPU code object --------*- C++ -*-===//
//
// Parses the tk module, hands it to the lowering (Lowering.h) for the LLVM
// dialect, translates to LLVM IR, links the ocml functions it calls (with
// the oclc control constants ocml reads), optimises at O3 for the AMDGPU
// target, emits an object and links it with ld.lld into the shared object
// the HIP runtime loads. Every stage can be dumped (DESIGN.md §3).
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "common/LLVMCodegen.h"
#include "common/OperandsInRegisters.h"
#include "common/PluginSupport.h"
#include "common/ToolRunner.h"
#include "compiler/RecomputeLaneIndices.h"
#include "tk/core/CompileSupport.h"
#include "tk/ir/Dialect.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/BinaryFormat/MsgPackReader.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ELF.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Alignment.h"
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
#include "llvm/Transforms/Utils/Cloning.h"

#include <cstdlib>
#include <mutex>
#include <set>

using namespace mlir;

namespace tk::rocm {

namespace {

/// LDS is address space 3 (AMDGPUUsage, "Address Spaces").
constexpr unsigned kLocalAddressSpace = 3;

/// The bytes of the LDS globals the kernel uses, each at its alignment: no
/// more than the backend allocates for them.
int64_t ldsBytesOfGlobals(const llvm::Module &module) {
  const llvm::DataLayout &layout = module.getDataLayout();
  uint64_t bytes = 0;
  for (const llvm::GlobalVariable &global : module.globals()) {
    if (global.getAddressSpace() != kLocalAddressSpace ||
        global.isDeclaration() || global.use_empty())
      continue;
    bytes = llvm::alignTo(bytes, layout.getPreferredAlign(&global));
    bytes += layout.getTypeAllocSize(global.getValueType());
  }
  return static_cast<int64_t>(bytes);
}

constexpr const char *kTriple = "amdgcn-amd-amdhsa";

void initializeAMDGPUTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    // Inline assembly (RecomputeLaneIndices.h) is parsed when an object is
    // emitted.
    LLVMInitializeAMDGPUAsmParser();
  });
}

/// The folder of ROCm's device bitcode (ocml.bc, ockl.bc):
/// $TK_ROCM_DEVICE_LIBS, $ROCM_PATH/amdgcn/bitcode, Debian's rocm-device-libs,
/// /opt/rocm's.
std::string deviceLibsFolder(std::string &looked) {
  std::vector<std::string> candidates;
  if (const char *dir = std::getenv("TK_ROCM_DEVICE_LIBS"); dir && *dir)
    candidates.push_back(dir);
  if (const char *rocm = std::getenv("ROCM_PATH"); rocm && *rocm)
    candidates.push_back(std::string(rocm) + "/amdgcn/bitcode");
  candidates.push_back("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode");
  candidates.push_back("/opt/rocm/amdgcn/bitcode");
  for (const std::string &dir : candidates) {
    looked += (looked.empty() ? "" : ", ") + dir;
    if (llvm::sys::fs::exists(dir + "/ocml.bc"))
      return dir;
  }
  return "";
}

/// ocml reads its configuration from constants the oclc_*.bc files define
/// (one file per setting and per ISA). They are defined here instead, so
/// that any ISA LLVM knows works with any device-library release: denormals
/// kept, no finite-only or unsafe math, correctly rounded f32 sqrt.
void addOclcControlConstants(llvm::Module &module, const Target &target,
                             int codeObjectVersion) {
  llvm::LLVMContext &ctx = module.getContext();
  // "gfx942" -> 9402 (major, minor, stepping as ocml compares them): gfx9
  // names carry a hex digit per field, gfx10+ a two-digit major.
  llvm::StringRef digits = llvm::StringRef(target.arch).drop_front(3);
  unsigned major = 0, minor = 0, stepping = 0;
  llvm::StringRef rest = digits.drop_back(2);
  (void)rest.getAsInteger(10, major);
  (void)digits.take_back(2).take_front(1).getAsInteger(16, minor);
  (void)digits.take_back(1).getAsInteger(16, stepping);
  auto define = [&](llvm::StringRef name, llvm::Type *type, uint64_t value) {
    llvm::GlobalVariable *global = module.getNamedGlobal(name);
    // One of another type stays undefined, which the check for undefined
    // variables after optimisation reports.
    if (global && (!global->isDeclaration() || global->getValueType() != type))
      return;
    // ocml declares the constants it reads: the definition is given to that
    // declaration. A second global of the same name would be renamed
    // (name.1) and left unread, and the declaration an unresolved symbol
    // whose load ocml's code then branches on at run time.
    if (!global)
      global = new llvm::GlobalVariable(
          module, type, /*isConstant=*/true,
          llvm::GlobalValue::LinkOnceODRLinkage, nullptr, name, nullptr,
          llvm::GlobalValue::NotThreadLocal, /*AddressSpace=*/4);
    global->setConstant(true);
    global->setLinkage(llvm::GlobalValue::LinkOnceODRLinkage);
    global->setInitializer(llvm::ConstantInt::get(type, value));
    global->setVisibility(llvm::GlobalValue::ProtectedVisibility);
    global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Local);
  };
  llvm::Type *i8 = llvm::Type::getInt8Ty(ctx),
             *i32 = llvm::Type::getInt32Ty(ctx);
  define("__oclc_finite_only_opt", i8, 0);
  define("__oclc_unsafe_math_opt", i8, 0);
  define("__oclc_daz_opt", i8, 0);
  define("__oclc_correctly_rounded_sqrt32", i8, 1);
  define("__oclc_wavefrontsize64", i8, target.waveSize == 64 ? 1 : 0);
  define("__oclc_ISA_version", i32, major * 1000 + minor * 100 + stepping);
  define("__oclc_ABI_version", i32, codeObjectVersion * 100);
}

/// Links the device-library functions `module` calls (ocml's __ocml_* for
/// math, ockl's __ockl_* for the grid size), then internalises everything
/// but the kernel so that O3 may inline and drop them.
tk_status linkDeviceLibs(llvm::Module &module, const CompileInput &input,
                         std::string &error) {
  std::vector<std::string> libraries;
  for (auto [prefix, file] :
       {std::pair{"__ocml_", "ocml.bc"}, std::pair{"__ockl_", "ockl.bc"}})
    for (const llvm::Function &function : module)
      if (function.isDeclaration() && function.getName().starts_with(prefix)) {
        libraries.push_back(file);
        break;
      }
  if (!libraries.empty()) {
    std::string looked;
    std::string folder = deviceLibsFolder(looked);
    if (folder.empty()) {
      error = "tk-rocm: the kernel calls ROCm's device libraries, whose "
              "bitcode was not found (looked in " +
              looked + "); install rocm-device-libs or set TK_ROCM_DEVICE_LIBS";
      return TK_ERROR_COMPILATION;
    }
    for (const std::string &file : libraries) {
      llvm::SMDiagnostic diagnostic;
      std::unique_ptr<llvm::Module> library = llvm::getLazyIRFileModule(
          folder + "/" + file, diagnostic, module.getContext());
      if (!library) {
        error = "tk-rocm: cannot read " + folder + "/" + file + ": " +
                diagnostic.getMessage().str();
        return TK_ERROR_COMPILATION;
      }
      library->setDataLayout(module.getDataLayout());
      if (llvm::Linker::linkModules(module, std::move(library),
                                    llvm::Linker::Flags::LinkOnlyNeeded)) {
        error = "tk-rocm: linking " + file + " failed";
        return TK_ERROR_COMPILATION;
      }
    }
    addOclcControlConstants(module, input.options.target,
                            input.codeObjectVersion);
  }
  llvm::internalizeModule(module, [&](const llvm::GlobalValue &value) {
    return value.getName() == input.entry;
  });
  return TK_SUCCESS;
}

} // namespace

tk_status findLLVMTool(const std::string &name, const char *envVar,
                       std::string &path, std::string &error) {
  tk_status status = tk::plugin::findLLVMTool(name, envVar, path, error);
  if (status != TK_SUCCESS)
    error = "tk-rocm: " + error;
  return status;
}

namespace {
/// Whether `blob` is one MessagePack object of the shape AMDGPU metadata
/// has: maps keyed by distinct strings, nested at most 16 deep, nothing
/// after it. llvm::msgpack::Document::readFromBlob trusts what it reads (a
/// corrupt code object made it crash), so a blob goes to it only once this
/// streaming walk, which reads every length against what is left, passed.
class MetadataShapeCheck {
public:
  explicit MetadataShapeCheck(llvm::StringRef blob)
      : reader(llvm::MemoryBufferRef(blob, "amdgpu-metadata")),
        size(blob.size()) {}

  bool run() {
    llvm::msgpack::Object end;
    if (!object(0))
      return false;
    llvm::Expected<bool> more = reader.read(end);
    if (!more) {
      llvm::consumeError(more.takeError());
      return false;
    }
    return !*more;
  }

private:
  bool next(llvm::msgpack::Object &object) {
    llvm::Expected<bool> read = reader.read(object);
    if (!read) {
      llvm::consumeError(read.takeError());
      return false;
    }
    return *read;
  }

  bool object(int depth, llvm::msgpack::Object *out = nullptr) {
    llvm::msgpack::Object read;
    if (depth > 16 || !next(read))
      return false;
    if (out)
      *out = read;
    switch (read.Kind) {
    case llvm::msgpack::Type::Array:
      // Each element takes a byte at least.
      if (read.Length > size)
        return false;
      for (size_t i = 0; i < read.Length; ++i)
        if (!object(depth + 1))
          return false;
      return true;
    case llvm::msgpack::Type::Map: {
      if (read.Length > size)
        return false;
      std::set<std::string> keys;
      for (size_t i = 0; i < read.Length; ++i) {
        llvm::msgpack::Object key;
        if (!object(depth + 1, &key) ||
            key.Kind != llvm::msgpack::Type::String ||
            !keys.insert(key.Raw.str()).second || !object(depth + 1))
          return false;
      }
      return true;
    }
    case llvm::msgpack::Type::Extension:
      return false;
    default:
      return true;
    }
  }

  llvm::msgpack::Reader reader;
  size_t size;
};
} // namespace

tk_status readCodeObjectMetadata(const std::string &hsaco,
                                 const std::string &entry, Package &out,
                                 std::string &error) {
  // The AMDGPU note (type NT_AMDGPU_METADATA, 32) of the "AMDGPU" owner is a
  // MessagePack map whose amdhsa.kernels list describes each kernel.
  auto file = llvm::object::ELF64LEFile::create(
      llvm::StringRef(hsaco.data(), hsaco.size()));
  if (!file) {
    error = "tk-rocm: the code object is not 64-bit ELF: " +
            llvm::toString(file.takeError());
    return TK_ERROR_COMPILATION;
  }
  auto sections = file->sections();
  if (!sections) {
    error = "tk-rocm: the code object's sections cannot be read: " +
            llvm::toString(sections.takeError());
    return TK_ERROR_COMPILATION;
  }
  llvm::msgpack::Document document;
  bool found = false;
  for (const auto &section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_NOTE)
      continue;
    llvm::Error noteError = llvm::Error::success();
    for (const auto &note : file->notes(section, noteError))
      if (note.getName() == "AMDGPU" &&
          note.getType() == llvm::ELF::NT_AMDGPU_METADATA) {
        // Notes are 4- or 8-byte aligned; getDesc rounds by the section's
        // alignment, which must be one of them.
        uint64_t align = section.sh_addralign;
        if (align != 4 && align != 8)
          continue;
        llvm::ArrayRef<uint8_t> desc = note.getDesc(align);
        llvm::StringRef blob(reinterpret_cast<const char *>(desc.data()),
                             desc.size());
        found = MetadataShapeCheck(blob).run() &&
                document.readFromBlob(blob, /*Multi=*/false);
      }
    if (noteError) {
      error = "tk-rocm: the code object's notes cannot be read: " +
              llvm::toString(std::move(noteError));
      return TK_ERROR_COMPILATION;
    }
  }
  if (!found || !document.getRoot().isMap()) {
    error = "tk-rocm: the code object has no readable amdhsa.kernels metadata";
    return TK_ERROR_COMPILATION;
  }
  llvm::msgpack::MapDocNode root = document.getRoot().getMap();
  llvm::msgpack::DocNode kernels = root["amdhsa.kernels"];
  llvm::msgpack::MapDocNode *kernel = nullptr;
  if (kernels.isArray())
    for (llvm::msgpack::DocNode &node : kernels.getArray())
      if (node.isMap()) {
        llvm::msgpack::DocNode name = node.getMap()[".name"];
        if (name.isString() && name.getString() == entry)
          kernel = &node.getMap();
      }
  if (!kernel) {
    error = "tk-rocm: the code object's metadata has no kernel '" + entry + "'";
    return TK_ERROR_COMPILATION;
  }
  std::string missing;
  for (auto [key, into] :
       {std::pair{".kernarg_segment_size", &out.kernargBytes},
        std::pair{".group_segment_fixed_size", &out.sharedMemoryBytes},
        std::pair{".wavefront_size", &out.waveSize},
        std::pair{".vgpr_count", &out.vgprs},
        std::pair{".sgpr_count", &out.sgprs},
        std::pair{".private_segment_fixed_size", &out.scratchBytes}}) {
    auto at = kernel->find(llvm::StringRef(key));
    bool isUInt = at != kernel->end() &&
                  at->second.getKind() == llvm::msgpack::Type::UInt;
    if (at == kernel->end() ||
        (!isUInt && at->second.getKind() != llvm::msgpack::Type::Int)) {
      missing += std::string(missing.empty() ? "" : ", ") + key;
      continue;
    }
    *into = static_cast<int32_t>(isUInt ? at->second.getUInt()
                                        : at->second.getInt());
  }
  if (!missing.empty()) {
    error = "tk-rocm: the code object's metadata of '" + entry + "' lacks " +
            missing;
    return TK_ERROR_COMPILATION;
  }
  return TK_SUCCESS;
}

namespace {
/// The kernel's scratch bytes in an object, or -1 where its metadata cannot
/// be read.
int64_t scratchBytesOf(llvm::ArrayRef<char> object, const std::string &entry) {
  Package metadata;
  std::string ignored;
  if (readCodeObjectMetadata(std::string(object.data(), object.size()), entry,
                             metadata, ignored) != TK_SUCCESS)
    return -1;
  return metadata.scratchBytes;
}

/// Where the kernel spills, a copy of `module` with its lane indices
/// recomputed after loops (RecomputeLaneIndices.h), and `object` replaced by
/// the copy's, when that leaves less scratch; otherwise null. The code is
/// generated again because the register allocator decides: the
/// recomputation adds a few instructions after a loop and frees VGPRs across
/// it, which ends the spill of the 128x128x64 matmuls; in an attention of
/// two loops, recomputing after both moved the spill into the second loop's
/// preheader, and after the first alone ended it. So: after every loop
/// first, then after each alone, until one leaves no scratch.
template <typename EmitFn>
std::unique_ptr<llvm::Module>
recomputeWhereItSpillsLess(llvm::Module &module, const std::string &entry,
                           int waveSize, llvm::SmallVector<char, 0> &object,
                           EmitFn &emit, tk::plugin::CodegenErrors &errors) {
  int64_t scratch = scratchBytesOf(object, entry);
  llvm::Function *kernel = module.getFunction(entry);
  if (scratch <= 0 || !kernel)
    return nullptr;
  int loops = static_cast<int>(countOutermostLoops(*kernel));
  std::unique_ptr<llvm::Module> best;
  for (int onlyLoop = -1; onlyLoop < (loops > 1 ? loops : 0) && scratch > 0;
       ++onlyLoop) {
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
    if (recomputeLaneIndicesAfterLoops(*copy->getFunction(entry), waveSize,
                                       onlyLoop) == 0)
      continue;
    llvm::SmallVector<char, 0> recompiled;
    std::string errorsBefore = errors.text;
    bool emitted = emit(*copy, llvm::CodeGenFileType::ObjectFile, recompiled);
    if (!emitted || errors.text != errorsBefore) {
      errors.text = std::move(errorsBefore);
      continue;
    }
    int64_t recompiledScratch = scratchBytesOf(recompiled, entry);
    if (recompiledScratch < 0 || recompiledScratch >= scratch)
      continue;
    scratch = recompiledScratch;
    object = std::move(recompiled);
    best = std::move(copy);
  }
  return best;
}

/// compileKernel, the operands staged or not as `input` says.
tk_status compileOnce(const CompileInput &input, CompileStage stopAfter,
                      CompiledKernel &out, std::string &error) {
  initializeAMDGPUTarget();
  DialectRegistry registry;
  registerLoweringDialects(registry);
  // One compile, one thread: the runtime compiles kernels concurrently.
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  tk::DiagnosticCapture capture(&context);
  const std::string &diagnostics = capture.text();
  if (input.entry.empty()) {
    error = "tk-rocm: compile needs the name of the kernel to launch";
    return TK_ERROR_NOT_FOUND;
  }
  const Target &target = input.options.target;
  OwningOpRef<ModuleOp> module;
  if (tk_status status = tk::plugin::statusOf(
          tk::readKernelModule(context, input.module, input.size, input.entry,
                               "tk-rocm", capture, module, error)))
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
    error =
        "tk-rocm: lowering for " + target.arch + " failed: " + loweringError;
    if (!diagnostics.empty())
      error += "\n" + diagnostics;
    return status;
  }

  std::string targetError;
  llvm::Triple triple(kTriple);
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, targetError);
  if (!llvmTarget) {
    error = "tk-rocm: LLVM lacks the AMDGPU target: " + targetError;
    return TK_ERROR_COMPILATION;
  }
  // RDNA runs wave32 unless told otherwise; CDNA only has wave64.
  std::string features = target.waveSize == 32 ? "+wavefrontsize32" : "";
  llvm::TargetOptions targetOptions;
  // The assembly says what the backend computed: registers, occupancy
  // (waves per SIMD), scratch, as comments.
  targetOptions.MCOptions.AsmVerbose = true;
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple, target.arch, features, targetOptions, std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine) {
    error =
        "tk-rocm: cannot create the AMDGPU target machine for " + target.arch;
    return TK_ERROR_COMPILATION;
  }

  llvm::LLVMContext llvmContext;
  // The AMDGPU backend reports LDS over the limit as an error diagnostic.
  tk::plugin::CodegenErrors codegenErrors;
  codegenErrors.install(llvmContext);
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, "tk_kernel");
  if (!llvmModule) {
    error = "tk-rocm: translation to LLVM IR failed:\n" + diagnostics;
    return TK_ERROR_COMPILATION;
  }
  llvmModule->setTargetTriple(machine->getTargetTriple());
  llvmModule->setDataLayout(machine->createDataLayout());
  // A kernel whose workgroup tiles alone pass the LDS limit is refused here:
  // the AMDGPU backend lays out at least those bytes and would refuse it
  // too ("local memory ... exceeds limit"), but only at the end of code
  // generation, seconds later for a large kernel.
  if (int64_t lds = ldsBytesOfGlobals(*llvmModule);
      out.lowered.ldsBytesLimit > 0 && lds > out.lowered.ldsBytesLimit) {
    error = "tk-rocm: the kernel needs " + std::to_string(lds) +
            " bytes of LDS for its workgroup tiles; " + target.arch + " has " +
            std::to_string(out.lowered.ldsBytesLimit) + " a workgroup";
    return TK_ERROR_UNSUPPORTED;
  }
  // The code object version the HIP runtime reads (4 for ROCm 5, 5 since).
  llvmModule->addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version",
                            uint32_t(input.codeObjectVersion * 100));
  tk::dumpStage(input.dumpDir, "6-llvm-ir.ll",
                [&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });
  if (tk_status status = linkDeviceLibs(*llvmModule, input, error))
    return status;
  tk::plugin::optimizeForTarget(*llvmModule, *machine);
  std::string verifierOutput;
  llvm::raw_string_ostream verifierStream(verifierOutput);
  if (llvm::verifyModule(*llvmModule, &verifierStream)) {
    error = "tk-rocm: LLVM IR does not verify after optimisation:\n" +
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
  // Any function or variable left undefined would fail at load: say which
  // now.
  for (const llvm::Function &function : *llvmModule)
    if (function.isDeclaration() && !function.isIntrinsic() &&
        !function.use_empty()) {
      error = "tk-rocm: the kernel calls '" + function.getName().str() +
              "', which neither LLVM nor ROCm's device libraries define";
      return TK_ERROR_COMPILATION;
    }
  for (const llvm::GlobalVariable &global : llvmModule->globals())
    if (global.isDeclaration() && !global.use_empty()) {
      error = "tk-rocm: the kernel reads '" + global.getName().str() +
              "', which neither tk nor ROCm's device libraries define";
      return TK_ERROR_COMPILATION;
    }

  auto codegenFailed = [&] {
    error = "tk-rocm: code generation for " + target.arch +
            " failed: " + codegenErrors.text;
    // Tiles over the LDS of a workgroup are a limit of the target.
    return codegenErrors.text.find("local memory") != std::string::npos
               ? TK_ERROR_UNSUPPORTED
               : TK_ERROR_COMPILATION;
  };
  auto emit = [&](const llvm::Module &source, llvm::CodeGenFileType type,
                  llvm::SmallVector<char, 0> &into) -> bool {
    // Code generation changes the module: each file from a fresh copy.
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(source);
    llvm::raw_svector_ostream os(into);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr, type))
      return false;
    codegen.run(*copy);
    return true;
  };
  llvm::SmallVector<char, 0> object;
  if (!emit(*llvmModule, llvm::CodeGenFileType::ObjectFile, object)) {
    error = "tk-rocm: the AMDGPU target cannot emit an object";
    return TK_ERROR_COMPILATION;
  }
  if (!codegenErrors.empty())
    return codegenFailed();
  if (std::unique_ptr<llvm::Module> recomputed =
          recomputeWhereItSpillsLess(*llvmModule, input.entry, target.waveSize,
                                     object, emit, codegenErrors)) {
    llvmModule = std::move(recomputed);
    tk::dumpStage(
        input.dumpDir, "7-llvm-ir-recomputed.ll",
        [&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });
  }
  // A kernel that staged an operand is compared with its other form by
  // LLVM's figures in the assembly (compileKernel).
  if (stopAfter == CompileStage::Assembly || !input.dumpDir.empty() ||
      out.lowered.stagedOperands) {
    llvm::SmallVector<char, 0> text;
    if (!emit(*llvmModule, llvm::CodeGenFileType::AssemblyFile, text)) {
      error = "tk-rocm: the AMDGPU target cannot emit assembly";
      return TK_ERROR_COMPILATION;
    }
    if (!codegenErrors.empty())
      return codegenFailed();
    out.assembly.assign(text.data(), text.size());
    tk::dumpStage(input.dumpDir, "8-kernel.s",
                  [&](llvm::raw_ostream &os) { os << out.assembly; });
    if (stopAfter == CompileStage::Assembly)
      return TK_SUCCESS;
  }
  if (tk_status status = tk::plugin::linkSharedObject(
          "tk-rocm", "TK_ROCM_LLD",
          llvm::StringRef(object.data(), object.size()), {}, out.hsaco, error))
    return status;
  return readCodeObjectMetadata(out.hsaco, input.entry, out.metadata, error);
}

/// What LLVM's assembly printer says of the kernel in its comments: its
/// scratch bytes and its waves a SIMD (registers and LDS together); -1
/// where a comment is missing.
struct AssemblyFigures {
  int64_t scratchBytes = -1;
  int64_t wavesPerSimd = -1;
};

AssemblyFigures readAssemblyFigures(llvm::StringRef assembly) {
  AssemblyFigures figures;
  auto comment = [&](llvm::StringRef key, int64_t &into) {
    size_t at = assembly.find(key);
    if (at == llvm::StringRef::npos)
      return;
    llvm::StringRef rest = assembly.drop_front(at + key.size()).ltrim();
    rest.consumeInteger(10, into);
  };
  comment("; ScratchSize:", figures.scratchBytes);
  comment("; Occupancy:", figures.wavesPerSimd);
  return figures;
}
} // namespace

tk_status compileKernel(const CompileInput &input, CompileStage stopAfter,
                        CompiledKernel &out, std::string &error) {
  if (tk_status status = compileOnce(input, stopAfter, out, error))
    return status;
  if (!out.lowered.stagedOperands || stopAfter == CompileStage::LLVMIR)
    return TK_SUCCESS;
  // An operand staged in LDS (tk-dot-operand-layouts: with it, the loop's
  // tiles would take over 3/4 of a lane's registers) spares registers but
  // takes LDS, which can leave fewer waves a SIMD than the registers would:
  // at head size 128 on 8 waves, attention's q in LDS made 48 KiB a
  // workgroup and 4 waves; held in registers it spills nothing once the
  // lane indices are recomputed after its loops (32 KiB, 6 waves). Whether
  // the registers hold it is the register allocator's answer, so both are
  // compiled and the code that spills no more and runs more waves is kept.
  tk::plugin::compareWithOperandsInRegisters(
      input, out,
      [&](const CompileInput &inRegisters, CompiledKernel &held,
          std::string &heldError) {
        return compileOnce(inRegisters, stopAfter, held, heldError);
      },
      [](const CompiledKernel &staged, const CompiledKernel &held) {
        AssemblyFigures inLds = readAssemblyFigures(staged.assembly);
        AssemblyFigures inLanes = readAssemblyFigures(held.assembly);
        if (inLds.scratchBytes < 0 || inLanes.scratchBytes < 0 ||
            inLds.wavesPerSimd < 0 || inLanes.wavesPerSimd < 0)
          return false;
        return inLanes.scratchBytes <= inLds.scratchBytes &&
               inLanes.wavesPerSimd > inLds.wavesPerSimd;
      });
  return TK_SUCCESS;
}

tk_status compileToPackage(const CompileInput &input, Package &out,
                           std::string &error) {
  CompiledKernel kernel;
  if (tk_status status =
          compileKernel(input, CompileStage::CodeObject, kernel, error))
    return status;
  out = kernel.metadata;
  out.arch = input.options.target.arch;
  out.entry = input.entry;
  out.numWarps = std::max(1, input.options.numWarps);
  out.threadsPerBlock = kernel.lowered.threadsPerBlock;
  out.matrixDots = kernel.lowered.matrixDots;
  if (out.waveSize != input.options.target.waveSize) {
    error = "tk-rocm: the code object runs waves of " +
            std::to_string(out.waveSize) + ", the lowering assumed " +
            std::to_string(input.options.target.waveSize);
    return TK_ERROR_INTERNAL;
  }
  out.hsaco = std::move(kernel.hsaco);
  return TK_SUCCESS;
}

} // namespace tk::rocm
