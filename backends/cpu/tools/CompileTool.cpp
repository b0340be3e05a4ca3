//===- CompileTool.cpp - the CPU compiler behind tk-compile -----*- C++ -*-===//
//
// `tk-compile --backend cpu [--arch host]`: `binary` writes the relocatable
// object the plugin links and loads (ELF, for this machine's CPU; validated
// as the plugin does). The CPU backend compiles for the host it runs on, so
// --arch takes `host` or the host CPU's LLVM name, and the stages are seen
// with --dump-dir (there is no separate `asm` or `llvm` output).
//
//===----------------------------------------------------------------------===//

#include "common/CompileTool.h"
#include "compiler/Compiler.h"

namespace tk::cpu {

extern const char *const kCompileToolArchs;
const char *const kCompileToolArchs =
    "host (this machine's CPU; its LLVM name is taken too)";
extern const char *const kCompileToolDefaultArch;
const char *const kCompileToolDefaultArch = "host";

tk_status runCompileTool(const tool::CompileRequest &request,
                         tool::CompileResult &result, std::string &error) {
  std::string host = hostCpuName();
  if (request.arch != "host" && request.arch != host) {
    error = "tk-cpu: the CPU backend compiles for the machine it runs on: "
            "--arch host (here " +
            host + "), not '" + request.arch + "'";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  if (request.emit != tool::Emit::Binary) {
    error = "tk-cpu: emits the object file only (--emit binary); "
            "--dump-dir DIR writes each stage's IR, LLVM IR included";
    return TK_ERROR_UNSUPPORTED;
  }
  CompileInput input;
  input.module = request.source.data();
  input.size = request.source.size();
  input.entry = request.entry;
  input.dumpDir = request.dumpDir;
  if (tk_status status = compileToObject(input, result.bytes, error))
    return status;
  if (tk_status status =
          validateObject(result.bytes.data(), result.bytes.size(), error))
    return status;
  result.summary = hostTargetName() + " " + request.entry + ": " +
                   std::to_string(result.bytes.size()) + " B object";
  return TK_SUCCESS;
}

} // namespace tk::cpu
