//===- CompileTool.cpp - the Xe compiler behind tk-compile -----*- C++ -*-===//
//
// `tk-compile --backend xe --arch pvc|dg2`: `spirv` writes the SPIR-V module
// (after spirv-val), `binary` the package (SPIR-V and, with ocloc
// installed, Intel's native binary), `asm` iga64's disassembly of the
// native kernel, `llvm` the optimised LLVM IR. The summary line gives what
// IGC and iga64 report: GRFs, spills, scratch, SLM, dpas, SIMD width.
//
//===----------------------------------------------------------------------===//

#include "common/CompileTool.h"
#include "compiler/Compiler.h"

namespace tk::xe {

extern const char *const kCompileToolArchs;
const char *const kCompileToolArchs = "pvc, dg2";
extern const char *const kCompileToolDefaultArch;
const char *const kCompileToolDefaultArch = "pvc";

tk_status runCompileTool(const tool::CompileRequest &request,
                         tool::CompileResult &result, std::string &error) {
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
  CompiledKernel kernel;
  CompileStage stage = request.emit == tool::Emit::LLVM ? CompileStage::LLVMIR
                       : request.emit == tool::Emit::SPIRV
                           ? CompileStage::SPIRV
                           : CompileStage::Native;
  // Xe's binary is its package.
  if (request.emit == tool::Emit::Binary ||
      request.emit == tool::Emit::Package) {
    Package package;
    if (tk_status status = compileToPackage(input, package, error))
      return status;
    std::string bytes = serializePackage(package);
    std::string report;
    if (tk_status status =
            validatePackage(bytes.data(), bytes.size(), report, error))
      return status;
    result.bytes = std::move(bytes);
    result.summary = package.target + " " + package.entry + ": " +
                     std::to_string(package.numWarps) + " subgroups of " +
                     std::to_string(package.subgroupSize) + ", " +
                     std::to_string(package.spirv.size()) + " B SPIR-V, " +
                     std::to_string(package.natives.size()) +
                     " native binaries" + (report.empty() ? "" : "; " + report);
    return TK_SUCCESS;
  }
  if (tk_status status = compileKernel(input, stage, kernel, error))
    return status;
  switch (stage) {
  case CompileStage::LLVMIR:
    result.bytes = kernel.llvmIR;
    break;
  case CompileStage::SPIRV:
    if (tk_status status = validateSpirv(kernel.spirv, error))
      return status;
    result.bytes = kernel.spirv;
    result.summary = input.options.target.name + " " + input.entry + ": " +
                     std::to_string(kernel.spirv.size()) +
                     " B SPIR-V, spirv-val passes";
    break;
  case CompileStage::Native: {
    const NativeReport &native = kernel.native;
    result.bytes = native.assembly;
    result.summary =
        input.options.target.name + " " + input.entry + ": " +
        std::to_string(native.binary.grfRegisters) + " GRFs, " +
        std::to_string(native.spillBytes) + " B spilled, " +
        std::to_string(native.binary.scratchBytes) + " B scratch, " +
        std::to_string(native.slmBytes) + " B SLM, " +
        std::to_string(native.binary.dpasInstructions) + " dpas, SIMD" +
        std::to_string(native.simdWidth) + " (IGC, iga64)";
    break;
  }
  }
  return TK_SUCCESS;
}

} // namespace tk::xe
