//===- CompileTool.cpp - the Vulkan compiler behind tk-compile --*- C++ -*-===//
//
// `tk-compile --backend vulkan --arch sgN`, N the device's subgroup size (4,
// 8, 16, 32 or 64; "vk-sgN", the package's arch name, is taken too):
// `binary` writes the SPIR-V module alone (a .spv for spirv-val and
// spirv-dis) after spirv-val has passed it, `asm` the spirv.module as MLIR
// text. There is no `llvm`: the backend goes through MLIR's SPIR-V dialect.
// The device is taken to have 32 KB of workgroup memory and workgroups of
// up to 1024 invocations (DeviceTarget's defaults). `sgN-coopmat` is a
// device with VK_KHR_cooperative_matrix as NVIDIA's driver lists it (f16
// into f32 at 16x16x16, 16x8x16 and 16x8x8, s8 into s32 at 16x16x32 and
// 16x8x32: nvidiaCooperativeMatrixKeys) and 48 KB: its modules use
// SPV_KHR_cooperative_matrix, which Debian's spirv-val (2023.1) does not
// know: where it stops at the capability, `binary` writes them anyway.
//
//===----------------------------------------------------------------------===//

#include "common/CompileTool.h"
#include "compiler/Compiler.h"

namespace tk::vulkan {

extern const char *const kCompileToolArchs;
const char *const kCompileToolArchs =
    "sg4, sg8, sg16, sg32, sg64 (subgroup size), sgN-coopmat (with "
    "cooperative matrices)";
extern const char *const kCompileToolDefaultArch;
const char *const kCompileToolDefaultArch = "sg32";

namespace {

/// "sg8" or "vk-sg8" → 8; 0 for anything else. Drops a "-coopmat" suffix
/// into `cooperativeMatrix`.
int parseSubgroupArch(std::string arch, bool &cooperativeMatrix) {
  if (arch.rfind("vk-", 0) == 0)
    arch = arch.substr(3);
  const std::string suffix = "-coopmat";
  cooperativeMatrix =
      arch.size() > suffix.size() &&
      arch.compare(arch.size() - suffix.size(), suffix.size(), suffix) == 0;
  if (cooperativeMatrix)
    arch.resize(arch.size() - suffix.size());
  for (int size : {4, 8, 16, 32, 64})
    if (arch == "sg" + std::to_string(size))
      return size;
  return 0;
}

} // namespace

tk_status runCompileTool(const tool::CompileRequest &request,
                         tool::CompileResult &result, std::string &error) {
  if (request.emit == tool::Emit::LLVM) {
    error = "tk-vulkan: no LLVM IR to emit: the Vulkan backend goes through "
            "MLIR's SPIR-V dialect, not LLVM IR (--emit asm prints the "
            "spirv.module)";
    return TK_ERROR_UNSUPPORTED;
  }
  bool cooperativeMatrix = false;
  int subgroupSize = parseSubgroupArch(request.arch, cooperativeMatrix);
  if (subgroupSize == 0) {
    error = "tk-vulkan: unknown arch '" + request.arch + "': expected " +
            kCompileToolArchs;
    return TK_ERROR_INVALID_ARGUMENT;
  }
  CompileInput input;
  input.module = request.source.data();
  input.size = request.source.size();
  input.entry = request.entry;
  input.numWarps = request.numWarps;
  input.target.features.subgroupSize = subgroupSize;
  if (cooperativeMatrix) {
    input.target.features.cooperativeMatrix = nvidiaCooperativeMatrixKeys();
    input.target.sharedMemoryBytes = 48 * 1024;
  }
  input.dumpDir = request.dumpDir;
  std::string spirvText;
  if (request.emit == tool::Emit::Assembly)
    input.spirvText = &spirvText;
  Package package;
  if (tk_status status = compileToPackage(input, package, error))
    return status;
  if (request.emit == tool::Emit::Assembly) {
    result.bytes = spirvText + "\n";
    return TK_SUCCESS;
  }
  if (request.emit == tool::Emit::Package) {
    result.bytes = serializePackage(package);
    return TK_SUCCESS;
  }
  if (tk_status status = validateSpirv(package.spirv, error))
    return status;
  result.bytes.assign(reinterpret_cast<const char *>(package.spirv.data()),
                      package.spirv.size() * sizeof(uint32_t));
  result.summary =
      package.arch + " " + package.entry + ": " +
      std::to_string(package.spirv.size()) + " words, " +
      std::to_string(package.threadsPerBlock) + " threads, " +
      std::to_string(package.sharedMemoryBytes) + " B shared memory, " +
      std::to_string(package.pushConstantBytes) + " B of arguments" +
      (cooperativeMatrix ? " (spirv-val passed, or stopped at "
                           "SPV_KHR_cooperative_matrix, which it predates)"
                         : " (spirv-val passed)");
  return TK_SUCCESS;
}

} // namespace tk::vulkan
