//===- tk-vulkan-compile.cpp - compile a .tk file for Vulkan -----*- C++ -*-=//
//
// Runs the Vulkan backend's compile pipeline on a tk text file without a
// device or the runtime: the driver of the backend's lit tests.
//
//   tk-vulkan-compile kernel.tk --entry NAME [--subgroup-size N]
//                     [--num-warps N] [--validate] [--dump-dir DIR] [-o OUT]
//
// Prints the spirv.module to stdout, or writes the SPIR-V binary to OUT;
// --validate runs spirv-val on it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

constexpr const char *kUsage =
    "usage: tk-vulkan-compile <file.tk> --entry NAME [--subgroup-size N]\n"
    "                         [--num-warps N] [--validate] [--dump-dir DIR] "
    "[-o OUT]\n"
    "Prints the spirv.module, or writes the SPIR-V binary to OUT; with\n"
    "--dump-dir, each stage's IR too.\n";

int usageError(const std::string &message) {
  std::cerr << "tk-vulkan-compile: " << message << "\n" << kUsage;
  return 2;
}

bool parsePositive(const std::string &text, int &out) {
  char *end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 1 || value > 1024)
    return false;
  out = static_cast<int>(value);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string inputPath, entry, outputPath, dumpDir;
  int numWarps = 4, subgroupSize = 8;
  bool validate = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "--entry") {
      if (!value(entry))
        return usageError("--entry needs a name");
    } else if (arg == "--num-warps" || arg == "--subgroup-size") {
      int &target = arg == "--num-warps" ? numWarps : subgroupSize;
      if (!value(text) || !parsePositive(text, target))
        return usageError(arg + " needs a number in 1..1024");
    } else if (arg == "--validate") {
      validate = true;
    } else if (arg == "--dump-dir") {
      if (!value(dumpDir))
        return usageError("--dump-dir needs a folder");
    } else if (arg == "-o") {
      if (!value(outputPath))
        return usageError("-o needs a file");
    } else if (!arg.empty() && arg[0] == '-') {
      return usageError("unknown option " + arg);
    } else if (inputPath.empty()) {
      inputPath = arg;
    } else {
      return usageError("more than one input file");
    }
  }
  if (inputPath.empty() || entry.empty())
    return usageError("an input file and --entry are required");
  std::ifstream file(inputPath, std::ios::binary);
  if (!file)
    return usageError("cannot read " + inputPath);
  std::stringstream text;
  text << file.rdbuf();
  std::string source = text.str();

  tk::vulkan::CompileInput input;
  input.module = source.data();
  input.size = source.size();
  input.entry = entry;
  input.numWarps = numWarps;
  input.target.features.subgroupSize = subgroupSize;
  input.dumpDir = dumpDir;
  std::string spirvText;
  if (outputPath.empty())
    input.spirvText = &spirvText;
  tk::vulkan::Package package;
  std::string error;
  if (tk_status status = tk::vulkan::compileToPackage(input, package, error)) {
    std::cerr << error << "\n";
    return status == TK_ERROR_UNSUPPORTED ? 3 : 1;
  }
  if (validate && tk::vulkan::validateSpirv(package.spirv, error)) {
    std::cerr << error << "\n";
    return 1;
  }
  if (outputPath.empty()) {
    std::cout << spirvText << "\n";
    return 0;
  }
  std::ofstream out(outputPath, std::ios::binary);
  out.write(reinterpret_cast<const char *>(package.spirv.data()),
            package.spirv.size() * 4);
  if (!out) {
    std::cerr << "tk-vulkan-compile: cannot write " << outputPath << "\n";
    return 1;
  }
  std::cerr << "tk-vulkan-compile: " << entry << ": " << package.spirv.size()
            << " words, " << package.threadsPerBlock << " threads, "
            << package.sharedMemoryBytes << " bytes shared, "
            << package.pushConstantBytes << " bytes of arguments\n";
  return 0;
}
