//===- NativeCode.cpp - SPIR-V to Intel's native code with ocloc ----------===//
//
// ocloc compile -spirv_input writes `<name>_<family><device>.bin`, an
// OpenCL program binary (the format ocloc 22.x writes for these targets:
// patch tokens, not zebin), which zeModuleCreate takes as
// ZE_MODULE_FORMAT_NATIVE. `ocloc disasm` splits it into the kernel heap
// that iga64 disassembles; IGC's .cos dump is the same binary's patch
// tokens, printed by IGC itself.
//
//===----------------------------------------------------------------------===//

#include "compiler/NativeCode.h"

#include "common/LLVMCodegen.h"
#include "common/ToolRunner.h"
#include "tk/core/CompileSupport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <regex>

namespace tk::xe {

namespace {

/// A folder under the system's temporary folder, removed with its files
/// when this goes.
struct TemporaryFolder {
  llvm::SmallString<128> path;
  ~TemporaryFolder() {
    if (!path.empty())
      (void)llvm::sys::fs::remove_directories(path);
  }
  std::error_code create() {
    return llvm::sys::fs::createUniqueDirectory("tk-xe", path);
  }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<128> full(path);
    llvm::sys::path::append(full, name);
    return std::string(full);
  }
};

tk_status writeFile(const std::string &path, const std::string &bytes,
                    std::string &error) {
  if (std::error_code ec = tk::writeWholeFile(path, bytes)) {
    error = "tk-xe: cannot write " + path + ": " + ec.message();
    return TK_ERROR_IO;
  }
  return TK_SUCCESS;
}

/// The one file in `folder` whose name ends with `suffix` (and, when given,
/// contains `part`), or "".
std::string findFile(const std::string &folder, llvm::StringRef suffix,
                     llvm::StringRef part = "") {
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(folder, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (name.ends_with(suffix) && (part.empty() || name.contains(part)))
      return it->path();
  }
  return "";
}

/// The integer after "<key> =" (IGC's .cos) or "<key> " (its .asm header).
std::optional<int64_t> field(const std::string &text, const std::string &key) {
  std::smatch match;
  if (!std::regex_search(text, match, std::regex(key + "\\s*=?\\s*([0-9]+)")))
    return std::nullopt;
  return std::stoll(match[1].str());
}

std::string readText(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

std::string ocloc(std::string &error) {
  return tk::plugin::findTool("TK_XE_OCLOC", {"ocloc"}, error);
}

} // namespace

bool haveOcloc() {
  std::string ignored;
  return !ocloc(ignored).empty();
}

bool haveSpirvVal() {
  std::string ignored;
  return !tk::plugin::findTool("TK_XE_SPIRV_VAL", {"spirv-val"}, ignored)
              .empty();
}

tk_status validateSpirv(const std::string &spirv, std::string &error) {
  std::string where;
  std::string tool =
      tk::plugin::findTool("TK_XE_SPIRV_VAL", {"spirv-val"}, where);
  if (tool.empty()) {
    error = "tk-xe: spirv-val not found: " + where + "; install spirv-tools";
    return TK_ERROR_NOT_FOUND;
  }
  tk::plugin::TemporaryFile file;
  if (std::error_code ec = file.create("tk-xe", "spv")) {
    error = "tk-xe: cannot create a temporary file: " + ec.message();
    return TK_ERROR_IO;
  }
  if (tk_status status = writeFile(std::string(file.path), spirv, error))
    return status;
  tk::plugin::ToolRun run = tk::plugin::runTool(
      // SPIR-V 1.4's universal rules: spirv-val's OpenCL environments are
      // SPIR-V 1.2 and refuse f16 arithmetic, which cl_khr_fp16 allows.
      tool, {tool, "--target-env", "spv1.4", std::string(file.path)});
  if (!run.succeeded()) {
    error = "tk-xe: the SPIR-V does not validate: " + run.describe(tool);
    return TK_ERROR_COMPILATION;
  }
  return TK_SUCCESS;
}

tk_status buildNative(const std::string &spirv, const std::string &entry,
                      const Target &target, const std::string &buildOptions,
                      NativeReport &out, std::string &error) {
  std::string where;
  std::string oclocPath = ocloc(where);
  if (oclocPath.empty()) {
    error = "tk-xe: ocloc not found: " + where + "; install intel-opencl-icd";
    return TK_ERROR_NOT_FOUND;
  }
  std::string igaPath = tk::plugin::findTool("TK_XE_IGA", {"iga64"}, where);
  if (igaPath.empty()) {
    error = "tk-xe: iga64 not found: " + where + "; install libigc-tools";
    return TK_ERROR_NOT_FOUND;
  }
  TemporaryFolder folder;
  if (std::error_code ec = folder.create()) {
    error = "tk-xe: cannot create a temporary folder: " + ec.message();
    return TK_ERROR_IO;
  }
  std::string input = folder.file("kernel.spv");
  if (tk_status status = writeFile(input, spirv, error))
    return status;
  std::string dumps = folder.file("igc");
  // -q: no progress lines; the dump is IGC's, written beside the binary.
  std::vector<std::string> args = {oclocPath,
                                   "compile",
                                   "-file",
                                   input,
                                   "-spirv_input",
                                   "-device",
                                   target.oclocDevice,
                                   "-output",
                                   "kernel",
                                   "-out_dir",
                                   folder.file(""),
                                   "-q"};
  if (!buildOptions.empty()) {
    args.push_back("-options");
    args.push_back(buildOptions);
  }
  tk::plugin::ToolRun compile = tk::plugin::runTool(
      oclocPath, args,
      {"IGC_ShaderDumpEnable=1", "IGC_DumpToCustomDir=" + dumps});
  std::string binary = findFile(std::string(folder.path), ".bin", "kernel");
  if (!compile.succeeded() || binary.empty()) {
    error = "tk-xe: Intel's compiler refused the SPIR-V for " + target.name +
            ": " + compile.describe("ocloc");
    return TK_ERROR_COMPILATION;
  }
  out.binary.target = target.name;
  out.binary.bytes = readText(binary);
  out.buildOptions = buildOptions;

  // IGC's statistics of the kernel: the .cos of its SIMD compile.
  std::string cos = readText(findFile(dumps, ".cos", "entry"));
  std::string asmHeader = readText(findFile(dumps, ".asm", "entry"));
  if (cos.empty()) {
    error = "tk-xe: IGC wrote no statistics for " + entry + " (no .cos in " +
            dumps + ")";
    return TK_ERROR_COMPILATION;
  }
  out.binary.grfRegisters =
      static_cast<int32_t>(field(cos, "NumGRFRequired").value_or(0));
  out.binary.scratchBytes = static_cast<int32_t>(
      field(cos, "PerThreadScratchSpace").value_or(0) +
      field(cos, "PerThreadPrivateMemorySize").value_or(0));
  out.simdWidth =
      static_cast<int>(field(cos, "LargestCompiledSIMDSize").value_or(0));
  out.hasDpas = cos.find("HasDPAS = true") != std::string::npos;
  out.slmBytes =
      static_cast<int>(field(cos, "TotalInlineLocalMemorySize").value_or(0));
  out.spillBytes =
      static_cast<int>(field(asmHeader, "//\\.spill size").value_or(0));

  // iga64 on the kernel heap ocloc disasm cuts out of the binary.
  std::string heaps = folder.file("heaps");
  tk::plugin::ToolRun split = tk::plugin::runTool(
      oclocPath, {oclocPath, "disasm", "-file", binary, "-device",
                  target.oclocDevice, "-dump", heaps});
  std::string heap = folder.file("heaps/" + entry + "_KernelHeap.dat");
  if (!llvm::sys::fs::exists(heap)) {
    error = "tk-xe: ocloc disasm gave no kernel heap for " + entry + ": " +
            split.describe("ocloc disasm");
    return TK_ERROR_COMPILATION;
  }
  tk::plugin::ToolRun disassemble = tk::plugin::runTool(
      igaPath, {igaPath, "-d", "-p=" + target.igaPlatform, heap});
  if (!disassemble.succeeded()) {
    error = "tk-xe: " + disassemble.describe("iga64");
    return TK_ERROR_COMPILATION;
  }
  out.assembly = disassemble.output;
  int dpas = 0;
  for (llvm::StringRef line : llvm::split(out.assembly, '\n'))
    // "dpas.8x8 (16|M0) r33:f null:f r25:hf r17.0:hf": repeat count 8,
    // systolic depth 8.
    if (line.contains("dpas."))
      ++dpas;
  out.binary.dpasInstructions = dpas;
  return TK_SUCCESS;
}

tk_status buildNativeLeastSpills(const std::string &spirv,
                                 const std::string &entry, const Target &target,
                                 NativeReport &out, std::string &error) {
  if (tk_status status = buildNative(spirv, entry, target, "", out, error))
    return status;
  if (out.spillBytes == 0 || !target.largeRegisterFile)
    return TK_SUCCESS;
  NativeReport large;
  if (tk_status status = buildNative(spirv, entry, target,
                                     kLargeRegisterFileOption, large, error))
    return status;
  if (large.spillBytes < out.spillBytes)
    out = std::move(large);
  return TK_SUCCESS;
}

} // namespace tk::xe
