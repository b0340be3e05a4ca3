//===- main.cpp - tk-examples: run the seed kernels, one line each --------===//
//
//   tk-examples                      every seed kernel, f32
//   tk-examples softmax matmul       the named ones
//   tk-examples --dtype f16 matmul   another element type (f32, f16, bf16)
//
// Exit status: the number of kernels that failed.
//
//===----------------------------------------------------------------------===//

#include "Example.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace tk::examples;

namespace {

struct Entry {
  const char *name;
  int (*run)(DType);
};

const Entry kExamples[] = {
    {"vector_add", runVectorAdd},
    {"matrix_copy", runMatrixCopy},
    {"matrix_transpose", runMatrixTranspose},
    {"softmax", runSoftmax},
    {"persistent_softmax", runPersistentSoftmax},
    {"matmul", runMatmul},
    {"layernorm", runLayerNorm},
};

/// The usage on `out`; 2, the status of a usage error.
int usage(std::FILE *out = stderr) {
  std::fprintf(out, "usage: tk-examples [--dtype f32|f16|bf16] [kernel...]\n"
                    "Runs the seed kernels (all without names) on the default "
                    "backend (TK_BACKEND)\nand checks each against a host "
                    "reference.\nkernels:");
  for (const Entry &e : kExamples)
    std::fprintf(out, " %s", e.name);
  std::fprintf(out, "\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  DType dtype = DType::F32;
  std::vector<const Entry *> chosen;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    }
    if (arg == "--dtype" && i + 1 < argc) {
      std::string d = argv[++i];
      if (d == "f32")
        dtype = DType::F32;
      else if (d == "f16")
        dtype = DType::F16;
      else if (d == "bf16")
        dtype = DType::BF16;
      else
        return usage();
      continue;
    }
    const Entry *found = nullptr;
    for (const Entry &e : kExamples)
      if (arg == e.name)
        found = &e;
    if (!found) {
      std::fprintf(stderr, "tk-examples: unknown kernel '%s'\n", arg.c_str());
      return usage();
    }
    chosen.push_back(found);
  }
  if (chosen.empty())
    for (const Entry &e : kExamples)
      chosen.push_back(&e);

  int failures = 0;
  for (const Entry *e : chosen)
    failures += e->run(dtype);
  return failures;
}
