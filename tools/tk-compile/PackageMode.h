//===- PackageMode.h - tk-compile --package and --package-info --*- C++ -*-===//

#ifndef TK_TOOLS_TKCOMPILE_PACKAGEMODE_H_
#define TK_TOOLS_TKCOMPILE_PACKAGEMODE_H_

#include <string>
#include <vector>

namespace tk::tool {

/// tk-compile with --package or --package-info among `args` (argv without
/// the program name); returns the exit status.
int runPackageMode(const std::vector<std::string> &args);

} // namespace tk::tool

#endif // TK_TOOLS_TKCOMPILE_PACKAGEMODE_H_
