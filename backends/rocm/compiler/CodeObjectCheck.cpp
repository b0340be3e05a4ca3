//===- CodeObjectCheck.cpp - a package held against its code object -------===//

#include "compiler/CodeObjectCheck.h"
#include "common/ToolRunner.h"
#include "compiler/Compiler.h"
#include "tk/core/CompileSupport.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>
#include <regex>

namespace tk::rocm {

namespace {

/// Runs `tool` with `args` (after the program name) and returns what it
/// printed, or an error naming the tool and its exit.
tk_status runTool(const std::string &tool,
                  llvm::ArrayRef<std::string> arguments, std::string &output,
                  std::string &error) {
  std::vector<std::string> args = {tool};
  args.insert(args.end(), arguments.begin(), arguments.end());
  tk::plugin::ToolRun run = tk::plugin::runTool(tool, args, {}, 60);
  output = run.output;
  if (!run.succeeded()) {
    error = "tk-rocm: " + run.describe(tool);
    return TK_ERROR_COMPILATION;
  }
  return TK_SUCCESS;
}

/// The integer after `key` in the YAML llvm-readelf prints for the kernel,
/// or nullopt.
std::optional<int64_t> yamlField(const std::string &notes,
                                 const std::string &key) {
  std::regex pattern("\\" + key + ":\\s+([0-9]+)");
  std::smatch match;
  if (!std::regex_search(notes, match, pattern))
    return std::nullopt;
  return std::stoll(match[1].str());
}

} // namespace

tk_status checkMetadata(const Package &package, std::string &error) {
  // A code object whose metadata cannot be read is a corrupt package here
  // (after a compile, the same failure is the compiler's: COMPILATION).
  Package read;
  if (readCodeObjectMetadata(package.hsaco, package.entry, read, error))
    return TK_ERROR_INVALID_ARGUMENT;
  auto differs = [&](const char *what, int32_t inPackage, int32_t inCode) {
    if (inPackage == inCode)
      return false;
    error = std::string("tk-rocm: the package says ") + what + " " +
            std::to_string(inPackage) + ", its code object " +
            std::to_string(inCode);
    return true;
  };
  if (differs("kernarg bytes", package.kernargBytes, read.kernargBytes) ||
      differs("LDS bytes", package.sharedMemoryBytes, read.sharedMemoryBytes) ||
      differs("wave size", package.waveSize, read.waveSize) ||
      differs("VGPRs", package.vgprs, read.vgprs) ||
      differs("SGPRs", package.sgprs, read.sgprs) ||
      differs("scratch bytes", package.scratchBytes, read.scratchBytes))
    return TK_ERROR_INVALID_ARGUMENT;
  return TK_SUCCESS;
}

tk_status checkWithLLVMTools(const Package &package, ToolReport &report,
                             std::string &error) {
  std::string readelf, objdump;
  if (tk_status status =
          findLLVMTool("llvm-readelf", "TK_ROCM_READELF", readelf, error))
    return status;
  if (tk_status status =
          findLLVMTool("llvm-objdump", "TK_ROCM_OBJDUMP", objdump, error))
    return status;
  llvm::SmallString<128> path;
  int fd = -1;
  if (llvm::sys::fs::createTemporaryFile("tk-rocm", "hsaco", fd, path)) {
    error = "tk-rocm: cannot create a temporary file for the code object";
    return TK_ERROR_IO;
  }
  llvm::FileRemover removeCode(path);
  if (std::error_code ec = tk::writeWholeFile(fd, package.hsaco)) {
    error = "tk-rocm: cannot write the code object for the LLVM tools: " +
            ec.message();
    return TK_ERROR_IO;
  }
  // The notes and the symbol tables in one run.
  std::string notes, disassembly;
  if (tk_status status = runTool(
          readelf, {"--notes", "--syms", "--dyn-syms", std::string(path)},
          notes, error))
    return status;
  // The metadata the loader reads, as llvm-readelf decodes it.
  if (!std::regex_search(notes,
                         std::regex("\\.name:\\s+" + package.entry + "\\s"))) {
    error = "tk-rocm: llvm-readelf finds no kernel '" + package.entry +
            "' in the code object's notes";
    return TK_ERROR_COMPILATION;
  }
  struct Expected {
    const char *key;
    int32_t value;
  };
  for (const Expected &expected :
       {Expected{".kernarg_segment_size", package.kernargBytes},
        Expected{".group_segment_fixed_size", package.sharedMemoryBytes},
        Expected{".wavefront_size", package.waveSize},
        Expected{".private_segment_fixed_size", package.scratchBytes}}) {
    std::optional<int64_t> found = yamlField(notes, expected.key);
    if (!found || *found != expected.value) {
      error = std::string("tk-rocm: llvm-readelf reads ") + expected.key +
              " as " + (found ? std::to_string(*found) : "nothing") +
              ", the package says " + std::to_string(expected.value);
      return TK_ERROR_COMPILATION;
    }
  }
  // A symbol the code object leaves undefined is one the loader cannot
  // resolve (the HIP runtime links nothing into a code object).
  for (llvm::StringRef line : llvm::split(notes, '\n')) {
    llvm::SmallVector<llvm::StringRef, 8> fields;
    line.split(fields, ' ', -1, /*KeepEmpty=*/false);
    // Num: Value Size Type Bind Vis Ndx Name
    if (fields.size() >= 8 && fields[6] == "UND") {
      error = "tk-rocm: llvm-readelf finds '" + fields[7].str() +
              "' undefined in the code object: the loader could not "
              "resolve it";
      return TK_ERROR_COMPILATION;
    }
  }
  report.scratchBytes = package.scratchBytes;
  if (tk_status status =
          runTool(objdump, {"-d", "--mcpu=" + package.arch, std::string(path)},
                  disassembly, error))
    return status;
  report.matrixInstructions = 0;
  for (llvm::StringRef line : llvm::split(disassembly, '\n'))
    if (line.contains("v_mfma") || line.contains("v_wmma"))
      ++report.matrixInstructions;
  if (package.matrixDots > 0 && report.matrixInstructions == 0) {
    error = "tk-rocm: the kernel has " + std::to_string(package.matrixDots) +
            " dot(s) of types " + package.arch +
            "'s matrix instructions take, but llvm-objdump finds no v_mfma "
            "or v_wmma in its code";
    return TK_ERROR_COMPILATION;
  }
  return TK_SUCCESS;
}

tk_status validatePackage(const void *data, size_t size, std::string &error) {
  Package package;
  if (tk_status status = parsePackage(data, size, package, error))
    return status;
  if (tk_status status = checkMetadata(package, error))
    return status;
  const char *tools = std::getenv("TK_ROCM_VALIDATION");
  if (!tools || std::string(tools) != "1")
    return TK_SUCCESS;
  ToolReport report;
  return checkWithLLVMTools(package, report, error);
}

} // namespace tk::rocm
