//===- RuntimeTestSupport.h - helpers of the runtime and C API tests -*- C++
//-*-===//
//
// Paths the build passes in, the kernels the tests compile, and the check
// that skips launch tests until the CPU backend plugin is built.
//
//===----------------------------------------------------------------------===//

#ifndef TK_TESTS_UNIT_RUNTIMETESTSUPPORT_H_
#define TK_TESTS_UNIT_RUNTIMETESTSUPPORT_H_

#include "tk/runtime/PluginLoader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace tk::test {

/// The whole of examples/kernels/<name>.
inline std::string readKernel(const char *name) {
  // The environment's folder first: a test binary carried to another
  // machine (the GPU scripts) finds the kernels of the tree there.
  const char *dir = std::getenv("TK_TEST_KERNELS_DIR");
  llvm::SmallString<256> path(dir && *dir ? dir : TK_TEST_KERNELS_DIR);
  llvm::sys::path::append(path, name);
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return {};
  return (*buffer)->getBuffer().str();
}

/// A fresh, empty folder under the system temporary folder.
inline std::string makeTempDir(const char *prefix) {
  llvm::SmallString<256> path;
  if (llvm::sys::fs::createUniqueDirectory(prefix, path))
    return {};
  return std::string(path);
}

/// Sets TK_CACHE_DIR to a fresh folder for the life of the object.
class ScopedCacheDir {
public:
  ScopedCacheDir() : path(makeTempDir("tk-cache-test")) {
    if (const char *old = std::getenv("TK_CACHE_DIR"))
      previous = old, hadPrevious = true;
    setenv("TK_CACHE_DIR", path.c_str(), 1);
  }
  ~ScopedCacheDir() {
    if (hadPrevious)
      setenv("TK_CACHE_DIR", previous.c_str(), 1);
    else
      unsetenv("TK_CACHE_DIR");
    llvm::sys::fs::remove_directories(path);
  }
  const std::string &getPath() const { return path; }

private:
  std::string path;
  std::string previous;
  bool hadPrevious = false;
};

} // namespace tk::test

#endif // TK_TESTS_UNIT_RUNTIMETESTSUPPORT_H_
