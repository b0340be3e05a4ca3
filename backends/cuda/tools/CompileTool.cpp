//===- CompileTool.cpp - the CUDA compiler behind tk-compile ----*- C++ -*-===//
//
// `tk-compile --backend cuda --arch sm_80|sm_86|sm_89|sm_90|sm_90a`:
// `binary` writes the cubin (from ptxas), `asm` the PTX, `llvm` the
// optimised LLVM IR. --min-programs-per-cu N becomes .minnctapersm N.
//
//===----------------------------------------------------------------------===//

#include "common/CompileTool.h"
#include "compiler/Compiler.h"

namespace tk::cuda {

extern const char *const kCompileToolArchs;
const char *const kCompileToolArchs = "sm_80, sm_86, sm_89, sm_90, sm_90a";
extern const char *const kCompileToolDefaultArch;
const char *const kCompileToolDefaultArch = "sm_80";

tk_status runCompileTool(const tool::CompileRequest &request,
                         tool::CompileResult &result, std::string &error) {
  if (request.emit == tool::Emit::SPIRV) {
    error = "tk-cuda: no SPIR-V to emit: this backend compiles to PTX and cubins";
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
  input.options.minProgramsPerSM = request.minProgramsPerCu;
  if (tk_status status =
          parseTargetName(request.arch, input.options.target, error))
    return status;
  if (request.emit == tool::Emit::Package) {
    Package package;
    if (tk_status status = compileToPackage(input, package, error))
      return status;
    result.bytes = serializePackage(package);
    return TK_SUCCESS;
  }
  CompileStage stage = request.emit == tool::Emit::LLVM ? CompileStage::LLVMIR
                       : request.emit == tool::Emit::Assembly
                           ? CompileStage::PTX
                           : CompileStage::Cubin;
  CompiledKernel kernel;
  if (tk_status status = compileKernel(input, stage, kernel, error))
    return status;
  switch (stage) {
  case CompileStage::LLVMIR:
    result.bytes = kernel.llvmIR;
    break;
  case CompileStage::PTX:
    result.bytes = kernel.ptx;
    break;
  case CompileStage::Cubin:
    result.bytes = kernel.cubin;
    result.summary = input.options.target.name() + " " + request.entry +
                     ": " + std::to_string(kernel.registersPerThread) +
                     " registers, " +
                     std::to_string(kernel.lowered.sharedMemoryBytes) +
                     " B shared memory";
    break;
  }
  return TK_SUCCESS;
}

} // namespace tk::cuda
