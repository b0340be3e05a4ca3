//===- ReplayMain.cpp - a fuzz target without libFuzzer -------------------===//
//
// Outside the fuzz build (gcc, no sanitizer) each fuzz target is linked with
// this main instead of libFuzzer's: it runs the target once on every file
// named, or every file of every folder named, so the regression inputs of
// tests/fuzz/regressions run in `make test`.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc,
                                                          char ***argv);

namespace fs = std::filesystem;

static bool runOne(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()),
                         bytes.size());
  return true;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  size_t ran = 0;
  for (int i = 1; i < argc; ++i) {
    std::error_code error;
    if (fs::is_directory(argv[i], error)) {
      std::vector<fs::path> files;
      for (const fs::directory_entry &entry : fs::directory_iterator(argv[i]))
        if (entry.is_regular_file())
          files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      for (const fs::path &file : files)
        ran += runOne(file) ? 1 : 0;
    } else if (runOne(argv[i])) {
      ++ran;
    } else {
      return 1;
    }
  }
  std::printf("%s: %zu inputs ran\n", argv[0], ran);
  // An empty run checks nothing: refuse it rather than pass.
  return ran ? 0 : 1;
}
