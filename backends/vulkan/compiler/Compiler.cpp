//===- Compiler.cpp - tk module to a Vulkan SPIR-V package ------*- C++ -*-===//
//
// The shared GPU lowering (core's register pipeline) with the device's
// subgroup as the warp, then SPIR-V (ConvertToSPIRV.cpp), MLIR's entry-point
// lowering (LocalSize, builtins as interface variables) and spirv-update-vce
// (the capabilities and extensions the kernel uses, no more), serialised.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "compiler/TargetInfo.h"

#include "common/PluginSupport.h"
#include "common/ToolRunner.h"
#include "tk/core/CompileSupport.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/Passes.h"
#include "tk/core/TargetInfo.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Target/SPIRV/Serialization.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;

namespace tk::vulkan {

namespace {

void registerDialects(DialectRegistry &registry) {
  tk::registerTkDialects(registry);
  registry.insert<func::FuncDialect, memref::MemRefDialect, LLVM::LLVMDialect,
                  gpu::GPUDialect, scf::SCFDialect, arith::ArithDialect,
                  math::MathDialect, ub::UBDialect, spirv::SPIRVDialect>();
}

/// The first spirv.module of `module`.
spirv::ModuleOp spirvModuleOf(ModuleOp module) {
  auto modules = module.getOps<spirv::ModuleOp>();
  return modules.empty() ? spirv::ModuleOp() : *modules.begin();
}

tk_status compileOnce(const CompileInput &input, Package &out,
                      std::string &error);

} // namespace

tk_status compileToPackage(const CompileInput &input, Package &out,
                           std::string &error) {
  tk_status status = compileOnce(input, out, error);
  if (status != TK_ERROR_UNSUPPORTED ||
      input.target.features.cooperativeMatrix.empty())
    return status;
  // Cooperative matrices read both operands of a dot from workgroup memory
  // whole; where that does not fit, the kernel still runs as vector code
  // (TK_DUMP_IR's stages show which).
  CompileInput vectorCode = input;
  vectorCode.target.features.cooperativeMatrix.clear();
  error.clear();
  return compileOnce(vectorCode, out, error);
}

namespace {

tk_status compileOnce(const CompileInput &input, Package &out,
                      std::string &error) {
  static std::once_flag presets;
  std::call_once(presets, [] { registerTargetPresets(); });
  DialectRegistry registry;
  registerDialects(registry);
  // One compile, one thread: the runtime compiles kernels concurrently.
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  tk::DiagnosticCapture capture(&context);
  if (input.entry.empty()) {
    error = "tk-vulkan: compile needs the name of the kernel to launch";
    return TK_ERROR_NOT_FOUND;
  }
  const DeviceTarget &target = input.target;
  int64_t subgroupSize = target.features.subgroupSize;
  // num_warps counts warps of 32 lanes (lavapipe's 8 lanes run 4 subgroups
  // a warp); the package records the subgroups.
  int64_t numWarps = tk::getSubgroupsForWarps(input.numWarps, subgroupSize,
                                              target.maxThreadsPerBlock);
  int64_t threads = numWarps * subgroupSize;
  std::string spec =
      targetSpec(subgroupSize, target.sharedMemoryBytes,
                 target.maxThreadsPerBlock, target.features.cooperativeMatrix);
  std::string specError;
  std::optional<TargetInfo> info = TargetInfo::parse(spec, specError);
  if (!info) {
    error = "tk-vulkan: " + specError;
    return TK_ERROR_INTERNAL;
  }
  if (std::optional<std::string> problem = info->workgroupProblem(numWarps)) {
    error = "tk-vulkan: " + *problem;
    return TK_ERROR_UNSUPPORTED;
  }

  OwningOpRef<ModuleOp> module;
  if (tk_status status = tk::plugin::statusOf(
          tk::readKernelModule(context, input.module, input.size, input.entry,
                               "tk-vulkan", capture, module, error)))
    return status;
  auto dump = [&](llvm::StringRef file, Operation *op) {
    tk::dumpStage(input.dumpDir, file,
                  [&](llvm::raw_ostream &os) { op->print(os); });
  };
  dump("0-tk.mlir", *module);
  // Core's register pipeline (DESIGN §3) at the device's subgroup size,
  // with cooperative matrices where the device has them and without async
  // copies; lavapipe has 32 KB of workgroup memory, which tiles whose lives
  // do not overlap share (tk-allocate-shared-memory). A kernel it refuses
  // (workgroup memory beyond the device's) is unsupported.
  SIMTLowering lowering;
  lowering.target = spec;
  lowering.numWarps = numWarps;
  // num_stages is not passed on: without asynchronous copies
  // tk-pipeline-loads would carry the next trip's operands in registers,
  // and on NVIDIA's Vulkan driver (H100) every cooperative matmul
  // configuration ran 10-33% slower so (docs/bench/
  // 2026-12-06-789eacc-vulkan-h100); lavapipe's registers are memory.
  // No cap on the elements a thread holds: lavapipe's LLVM 15 JIT, which
  // builds a subgroup's code for 8 or 16 lanes at once, took over 5
  // minutes on an f16 min or max reduction of 128 elements a thread at 16
  // lanes while each step rounded to f16 and widened again; with those
  // round trips folded (tk::foldExactNarrowRoundTrips) it takes 35 s.
  // A dot without a matrix unit may hold up to 1,024 registers a thread
  // (the accumulator; its operands wait in workgroup memory): lavapipe's
  // registers are memory, and a GPU spills them rather than need
  // workgroup memory for whole tiles.
  lowering.maxFmaDotRegisters = 1024;
  StageDumpFn dumpStage;
  if (!input.dumpDir.empty())
    dumpStage = [&](llvm::StringRef file, ModuleOp stage) {
      dump(file, stage);
    };
  bool refused = false;
  if (failed(lowerToSIMT(*module, lowering, dumpStage, error, &refused))) {
    error = "tk-vulkan: compiling for subgroups of " +
            std::to_string(subgroupSize) + ": " + error;
    if (refused)
      return TK_ERROR_UNSUPPORTED;
    if (!capture.text().empty())
      error += ":\n" + capture.text();
    return TK_ERROR_COMPILATION;
  }

  auto failedIn = [&](const std::string &failedPass) {
    error = "tk-vulkan: compiling for subgroups of " +
            std::to_string(subgroupSize) + " failed in pass '" + failedPass +
            "'";
    if (!capture.text().empty())
      error += ":\n" + capture.text();
  };
  std::string failedPass;

  KernelInterface interface;
  if (failed(runPasses(*module, failedPass, [&](OpPassManager &pm) {
        // SPIR-V has no bf16: arithmetic and math on bf16 are done in f32,
        // and ConvertToSPIRV keeps bf16 values as their 16 bits.
        arith::ArithEmulateUnsupportedFloatsOptions emulate;
        emulate.sourceTypeStrs = {"bf16"};
        emulate.targetTypeStr = "f32";
        pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
        math::MathExtendToSupportedTypesOptions extend;
        extend.extraTypeStrs = {"f16"};
        extend.targetTypeStr = "f32";
        pm.addPass(math::createMathExtendToSupportedTypes(extend));
        pm.addPass(createConvertToSPIRVPass(input.entry, threads,
                                            target.features, &interface));
        OpPassManager &spirvPasses = pm.nest<spirv::ModuleOp>();
        // The conversion writes each address's sign extension and scaling
        // again per access (GEPLowering): one of each.
        spirvPasses.addPass(createCSEPass());
        spirvPasses.addPass(spirv::createSPIRVLowerABIAttributesPass());
        spirvPasses.addPass(spirv::createSPIRVUpdateVCEPass());
      }))) {
    failedIn(failedPass);
    // A type or op the device lacks is the usual cause; the message says
    // which.
    return TK_ERROR_UNSUPPORTED;
  }
  spirv::ModuleOp spirvModule = spirvModuleOf(*module);
  dump("5-spirv.mlir", *module);
  if (!spirvModule) {
    error = "tk-vulkan: no spirv.module after the conversion";
    return TK_ERROR_INTERNAL;
  }
  if (interface.argumentBufferBytes > kMaxArgumentBlockBytes) {
    error = "tk-vulkan: the kernel's arguments take " +
            std::to_string(interface.argumentBufferBytes) +
            " bytes; tk-vulkan passes at most " +
            std::to_string(kMaxArgumentBlockBytes);
    return TK_ERROR_UNSUPPORTED;
  }
  if (interface.sharedMemoryBytes > uint64_t(target.sharedMemoryBytes)) {
    error = "tk-vulkan: the kernel needs " +
            std::to_string(interface.sharedMemoryBytes) +
            " bytes of workgroup memory; the device has " +
            std::to_string(target.sharedMemoryBytes);
    return TK_ERROR_UNSUPPORTED;
  }
  // spirv-update-vce picks the lowest SPIR-V version the ops need, but the
  // entry point's interface lists the push constants and workgroup
  // variables, which only SPIR-V 1.4 on allows: pin 1.5 (Vulkan 1.2). The
  // extensions 1.5 made core go: a declared extension must be enabled on
  // the device (VUID-VkShaderModuleCreateInfo-pCode-04147), and
  // update-vce may name SPV_EXT_physical_storage_buffer, which Vulkan
  // never enables.
  // update-vce does not see that an atomic on 64 bits needs Int64Atomics.
  bool atomics64 = false;
  spirvModule.walk([&](Operation *op) {
    StringRef name = op->getName().getStringRef();
    if ((name.starts_with("spirv.Atomic") ||
         name.starts_with("spirv.EXT.Atomic")) &&
        op->getNumResults() == 1 &&
        op->getResult(0).getType().getIntOrFloatBitWidth() == 64)
      atomics64 = true;
  });
  // Nor that a cooperative matrix of bf16 needs BFloat16CooperativeMatrixKHR
  // (SPV_KHR_bfloat16), besides the type's BFloat16TypeKHR.
  bool bfloat16Matrices = false;
  spirvModule.walk([&](spirv::KHRCooperativeMatrixMulAddOp product) {
    auto a = cast<spirv::CooperativeMatrixType>(product.getA().getType());
    bfloat16Matrices |= a.getElementType().isBF16();
  });
  if (atomics64 && !target.features.int64Atomics) {
    error = "tk-vulkan: the kernel uses 64-bit atomics; the device has no "
            "shaderBufferInt64Atomics";
    return TK_ERROR_UNSUPPORTED;
  }
  if (std::optional<spirv::VerCapExtAttr> triple = spirvModule.getVceTriple()) {
    SmallVector<spirv::Capability> capabilities =
        llvm::to_vector(triple->getCapabilities());
    if (atomics64 &&
        !llvm::is_contained(capabilities, spirv::Capability::Int64Atomics))
      capabilities.push_back(spirv::Capability::Int64Atomics);
    if (bfloat16Matrices)
      capabilities.push_back(spirv::Capability::BFloat16CooperativeMatrixKHR);
    SmallVector<spirv::Extension> extensions;
    for (spirv::Extension extension : triple->getExtensions())
      if (extension != spirv::Extension::SPV_EXT_physical_storage_buffer &&
          extension != spirv::Extension::SPV_KHR_physical_storage_buffer &&
          extension != spirv::Extension::SPV_KHR_8bit_storage &&
          extension != spirv::Extension::SPV_KHR_16bit_storage &&
          extension != spirv::Extension::SPV_KHR_storage_buffer_storage_class)
        extensions.push_back(extension);
    spirvModule.setVceTripleAttr(spirv::VerCapExtAttr::get(
        spirv::Version::V_1_5, capabilities, extensions, &context));
  }
  if (input.spirvText) {
    llvm::raw_string_ostream os(*input.spirvText);
    spirvModule->print(os);
  }
  llvm::SmallVector<uint32_t, 0> words;
  if (failed(spirv::serialize(spirvModule, words))) {
    error = "tk-vulkan: SPIR-V serialisation failed";
    if (!capture.text().empty())
      error += ":\n" + capture.text();
    return TK_ERROR_COMPILATION;
  }
  out.spirv.assign(words.begin(), words.end());
  // TK_VULKAN_VALIDATION=1 checks every module with Khronos' validator
  // too, before any driver sees it (the CI columns run so).
  if (const char *validation = std::getenv("TK_VULKAN_VALIDATION");
      validation && std::string(validation) == "1")
    if (tk_status status = validateSpirv(out.spirv, error))
      return status;
  out.arch = archForSubgroupSize(subgroupSize);
  out.entry = input.entry;
  out.numWarps = static_cast<int32_t>(numWarps);
  out.threadsPerBlock = static_cast<int32_t>(threads);
  out.subgroupSize = static_cast<int32_t>(subgroupSize);
  out.sharedMemoryBytes = static_cast<int32_t>(interface.sharedMemoryBytes);
  out.pushConstantBytes = interface.pushConstantBytes;
  out.argumentBufferBytes = interface.argumentBufferBytes;
  out.argOffsets = interface.argOffsets;
  return TK_SUCCESS;
}

/// The capabilities SPIR-V gained after Debian's spirv-val (2023.1):
/// SPV_KHR_cooperative_matrix's CooperativeMatrixKHR and SPV_KHR_bfloat16's
/// BFloat16TypeKHR, BFloat16DotProductKHR and BFloat16CooperativeMatrixKHR.
constexpr uint32_t kNewerCapabilities[] = {6022, 5116, 5117, 5118};

/// The capabilities the module declares (OpCapability, opcode 17, two
/// words).
std::vector<uint32_t> declaredCapabilities(const std::vector<uint32_t> &words) {
  std::vector<uint32_t> capabilities;
  for (size_t at = 5; at + 1 < words.size();) {
    uint32_t count = words[at] >> 16, opcode = words[at] & 0xffff;
    if (count == 0)
      break;
    if (opcode == 17 && count == 2)
      capabilities.push_back(words[at + 1]);
    at += count;
  }
  return capabilities;
}

} // namespace

tk_status validateSpirv(const std::vector<uint32_t> &words,
                        std::string &error) {
  std::string program;
  if (const char *path = std::getenv("TK_SPIRV_VAL"); path && *path)
    program = path;
  else if (llvm::ErrorOr<std::string> found =
               llvm::sys::findProgramByName("spirv-val"))
    program = *found;
  if (program.empty()) {
    error = "tk-vulkan: spirv-val not found (install spirv-tools, or set "
            "TK_SPIRV_VAL)";
    return TK_ERROR_NOT_FOUND;
  }
  tk::plugin::TemporaryFile input;
  if (std::error_code ec = input.create("tk-vulkan", "spv")) {
    error = "tk-vulkan: cannot create a temporary file for spirv-val: " +
            ec.message();
    return TK_ERROR_INTERNAL;
  }
  if (std::error_code ec = tk::writeWholeFile(
          input.path,
          llvm::StringRef(reinterpret_cast<const char *>(words.data()),
                          words.size() * 4))) {
    error = "tk-vulkan: cannot write the SPIR-V for spirv-val: " + ec.message();
    return TK_ERROR_IO;
  }
  tk::plugin::ToolRun run = tk::plugin::runTool(
      program, {program, "--target-env", "vulkan1.3", std::string(input.path)},
      {}, 60);
  if (run.succeeded())
    return TK_SUCCESS;
  // A spirv-val older than SPV_KHR_cooperative_matrix and SPV_KHR_bfloat16
  // (Debian's 2023.1) stops at the first such capability's number; the
  // driver and Khronos' validation layer still check such a module when it
  // is loaded.
  std::string described = run.describe(program);
  for (uint32_t capability : declaredCapabilities(words))
    if (llvm::is_contained(kNewerCapabilities, capability) &&
        described.find("Invalid capability operand: " +
                       std::to_string(capability)) != std::string::npos)
      return TK_SUCCESS;
  error = "tk-vulkan: spirv-val rejects the module: " + run.describe(program);
  return TK_ERROR_COMPILATION;
}

} // namespace tk::vulkan
