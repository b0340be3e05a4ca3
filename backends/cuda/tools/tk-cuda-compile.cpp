//===- tk-cuda-compile.cpp - compile a .tk file for an NVIDIA GPU -*- C++ -*-=//
//
// Runs the CUDA backend's compile pipeline on a tk text file without a GPU
// or the runtime, and prints LLVM IR, PTX or writes the cubin: the driver of
// the backend's FileCheck tests.
//
//   tk-cuda-compile kernel.tk --entry NAME --arch sm_80|sm_90a
//                   [--num-warps N] [--num-stages N] [--min-programs-per-sm N]
//                   [--emit ptx|cubin|llvm] [--dump-dir DIR] [-o OUT]
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

constexpr const char *kUsage =
    "usage: tk-cuda-compile <file.tk> --entry NAME --arch sm_80|sm_86|sm_89|"
    "sm_90|sm_90a\n"
    "                       [--num-warps N] [--num-stages N] "
    "[--min-programs-per-sm N]\n"
    "                       [--emit ptx|cubin|llvm] [--dump-dir DIR] "
    "[-o OUT]\n"
    "Prints PTX (default) or LLVM IR to stdout, or writes them (or the "
    "cubin) to OUT.\n";

int usageError(const std::string &message) {
  std::cerr << "tk-cuda-compile: " << message << "\n" << kUsage;
  return 2;
}

/// Parses a positive integer option value; false when it is not one.
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
  std::string inputPath, entry, arch, emit = "ptx", outputPath, dumpDir;
  int numWarps = 4, numStages = 3, minProgramsPerSM = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--entry") {
      if (!value(entry))
        return usageError("--entry needs a kernel name");
    } else if (arg == "--arch") {
      if (!value(arch))
        return usageError("--arch needs a target such as sm_90a");
    } else if (arg == "--emit") {
      if (!value(emit))
        return usageError("--emit needs ptx, cubin or llvm");
    } else if (arg == "-o") {
      if (!value(outputPath))
        return usageError("-o needs a file name");
    } else if (arg == "--dump-dir") {
      if (!value(dumpDir))
        return usageError("--dump-dir needs a folder");
    } else if (arg == "--num-warps") {
      if (!value(text) || !parsePositive(text, numWarps))
        return usageError("--num-warps needs a number from 1 to 1024");
    } else if (arg == "--num-stages") {
      if (!value(text) || !parsePositive(text, numStages))
        return usageError("--num-stages needs a number from 1 to 1024");
    } else if (arg == "--min-programs-per-sm") {
      if (!value(text) || !parsePositive(text, minProgramsPerSM))
        return usageError(
            "--min-programs-per-sm needs a number from 1 to 1024");
    } else if (!arg.empty() && arg[0] == '-' && arg != "-") {
      return usageError("unknown option '" + arg + "'");
    } else if (inputPath.empty()) {
      inputPath = arg;
    } else {
      return usageError("more than one input file ('" + inputPath + "', '" +
                        arg + "')");
    }
  }
  if (inputPath.empty())
    return usageError("no input file");
  if (entry.empty())
    return usageError("no --entry");
  if (arch.empty())
    return usageError("no --arch");

  tk::cuda::CompileStage stage;
  if (emit == "ptx")
    stage = tk::cuda::CompileStage::PTX;
  else if (emit == "cubin")
    stage = tk::cuda::CompileStage::Cubin;
  else if (emit == "llvm")
    stage = tk::cuda::CompileStage::LLVMIR;
  else
    return usageError("--emit " + emit + ": expected ptx, cubin or llvm");
  if (stage == tk::cuda::CompileStage::Cubin && outputPath.empty())
    return usageError("--emit cubin writes a binary: give -o OUT");

  std::string source;
  {
    std::ifstream file;
    std::istream *in = &std::cin;
    if (inputPath != "-") {
      file.open(inputPath, std::ios::binary);
      if (!file) {
        std::cerr << "tk-cuda-compile: cannot read '" << inputPath << "'\n";
        return 1;
      }
      in = &file;
    }
    std::ostringstream buffer;
    buffer << in->rdbuf();
    source = buffer.str();
  }

  tk::cuda::CompileInput input;
  input.module = source.data();
  input.size = source.size();
  input.entry = entry;
  input.dumpDir = dumpDir;
  input.options.numWarps = numWarps;
  input.options.numStages = numStages;
  input.options.minProgramsPerSM = minProgramsPerSM;
  std::string error;
  if (tk::cuda::parseTargetName(arch, input.options.target, error)) {
    std::cerr << error << "\n";
    return 2;
  }
  tk::cuda::CompiledKernel kernel;
  if (tk::cuda::compileKernel(input, stage, kernel, error)) {
    std::cerr << error << "\n";
    return 1;
  }

  const std::string &result =
      stage == tk::cuda::CompileStage::LLVMIR ? kernel.llvmIR
      : stage == tk::cuda::CompileStage::PTX  ? kernel.ptx
                                              : kernel.cubin;
  if (outputPath.empty() || outputPath == "-") {
    std::cout << result;
    return std::cout.good() ? 0 : 1;
  }
  std::ofstream out(outputPath, std::ios::binary);
  out << result;
  if (!out.good()) {
    std::cerr << "tk-cuda-compile: cannot write '" << outputPath << "'\n";
    return 1;
  }
  return 0;
}
