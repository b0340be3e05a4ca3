//===- CompileTool.cpp - the ROCm compiler behind tk-compile ---*- C++ -*-===//
//
// `tk-compile --backend rocm --arch gfx942|gfx90a|gfx1100`: `binary` writes
// the code object (hsaco, for llvm-objdump and llvm-readelf) after the
// checks validate() makes with the LLVM tools (CodeObjectCheck.h), `asm`
// the AMDGPU assembly, `llvm` the optimised LLVM IR.
//
//===----------------------------------------------------------------------===//

#include "common/CompileTool.h"
#include "compiler/CodeObjectCheck.h"
#include "compiler/Compiler.h"

namespace tk::rocm {

extern const char *const kCompileToolArchs;
const char *const kCompileToolArchs = "gfx942, gfx90a, gfx1100";
extern const char *const kCompileToolDefaultArch;
const char *const kCompileToolDefaultArch = "gfx942";

tk_status runCompileTool(const tool::CompileRequest &request,
                         tool::CompileResult &result, std::string &error) {
  if (request.emit == tool::Emit::SPIRV) {
    error = "tk-rocm: no SPIR-V to emit: this backend compiles to AMDGPU code "
            "objects";
    return TK_ERROR_UNSUPPORTED;
  }
  CompileInput input;
  input.module = request.source.data();
  input.size = request.source.size();
  input.entry = request.entry;
  input.dumpDir = request.dumpDir;
  input.options.numWarps = request.numWarps;
  if (request.numStages > 0)
    input.options.numStages = request.numStages;
  if (tk_status status = parseTarget(request.arch, input.options.target, error))
    return status;
  if (request.emit == tool::Emit::Package) {
    Package package;
    if (tk_status status = compileToPackage(input, package, error))
      return status;
    result.bytes = serializePackage(package);
    return TK_SUCCESS;
  }
  if (request.emit != tool::Emit::Binary) {
    CompiledKernel kernel;
    CompileStage stage = request.emit == tool::Emit::LLVM
                             ? CompileStage::LLVMIR
                             : CompileStage::Assembly;
    if (tk_status status = compileKernel(input, stage, kernel, error))
      return status;
    result.bytes = stage == CompileStage::LLVMIR ? kernel.llvmIR
                                                 : kernel.assembly;
    return TK_SUCCESS;
  }
  Package package;
  if (tk_status status = compileToPackage(input, package, error))
    return status;
  ToolReport report;
  if (tk_status status = checkWithLLVMTools(package, report, error))
    return status;
  result.bytes = package.hsaco;
  result.summary = package.arch + " " + package.entry + ": " +
                   std::to_string(package.numWarps) + " waves of " +
                   std::to_string(package.waveSize) + ", " +
                   std::to_string(package.vgprs) + " VGPRs, " +
                   std::to_string(package.sgprs) + " SGPRs, " +
                   std::to_string(package.sharedMemoryBytes) + " B LDS, " +
                   std::to_string(package.scratchBytes) + " B scratch, " +
                   std::to_string(report.matrixInstructions) +
                   " matrix instructions (llvm-objdump)";
  return TK_SUCCESS;
}

} // namespace tk::rocm
