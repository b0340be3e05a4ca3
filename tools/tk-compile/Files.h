//===- Files.h - tk-compile's reads and writes ------------------*- C++ -*-===//

#ifndef TK_TOOLS_TKCOMPILE_FILES_H_
#define TK_TOOLS_TKCOMPILE_FILES_H_

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace tk::tool {

/// The bytes of `path`; false when it cannot be read.
inline bool readFile(const std::string &path, std::string &out) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return false;
  std::ostringstream buffer;
  buffer << file.rdbuf();
  out = buffer.str();
  return true;
}

/// Writes `bytes` beside `path` and renames the file into place: readers
/// never see a partial file, and a failure leaves none.
inline bool writeFileAtomically(const std::string &path,
                                const std::string &bytes) {
  std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary);
    out << bytes;
    out.close();
    if (!out.good()) {
      std::remove(partial.c_str());
      return false;
    }
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    std::remove(partial.c_str());
    return false;
  }
  return true;
}

} // namespace tk::tool

#endif // TK_TOOLS_TKCOMPILE_FILES_H_
