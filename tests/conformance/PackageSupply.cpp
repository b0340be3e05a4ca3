//===- PackageSupply.cpp - the cells' kernels from a package --------------===//
//
// The supplier of tk-conformance-run: each cell's kernel created from the
// package tk-conformance --write-package wrote, through TK_SOURCE_PACKAGE as
// a program linked against libtk_runtime.so creates it. No compiler: a
// kernel the package lacks is reported with the refusal its writer recorded
// (`<package>.refused`: entry, status code, message per line), so the
// column reads as the compiling one would.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include "tk/package/Package.h"
#include "tk/runtime/Device.h"
#include "tk/runtime/Kernel.h"
#include "tk/runtime/Status.h"

#include <fstream>
#include <map>
#include <memory>
#include <sstream>

using namespace tk::conformance;
namespace rt = tk::runtime;

namespace {

struct Refusal {
  tk_status code;
  std::string message;
};

struct PackageSupply {
  std::string path;
  std::string bytes;
  tk::package::Package package;
  std::map<std::string, Refusal> refusals;

  SuppliedKernel supply(const KernelRequest &request) const {
    SuppliedKernel out;
    std::string entry = packageEntry(request.key);
    if (!request.device) {
      out.code = TK_ERROR_NO_DEVICE;
      out.error = request.backend +
                  " has no device here, and a package's kernels are run, "
                  "not compiled (tk-conformance checks a column without a "
                  "device)";
      return out;
    }
    // The kernel alone, as a package of its own: tk_kernel_create reads
    // (and checksums) the whole package it is given, and the suite's is
    // tens of MB for hundreds of kernels; makePackageSupplier read the file
    // once with the same reader. A kernel the package lacks gets the whole
    // package, so that the runtime's refusal names what it holds.
    std::string single;
    const std::string *given = &bytes;
    if (const tk::package::Kernel *kernel = package.find(entry)) {
      tk::package::Package alone;
      alone.kernels.push_back(*kernel);
      std::string error;
      if (!tk::package::write(alone, single, error)) {
        out.code = TK_ERROR_INTERNAL;
        out.error = "kernel '" + entry + "' of " + path +
                    " does not write back as a package: " + error;
        return out;
      }
      given = &single;
    }
    tk_kernel_source source = {TK_SOURCE_PACKAGE, given->data(), given->size(),
                               entry.c_str()};
    rt::Status status =
        rt::Kernel::create(*request.device, source, nullptr, &out.kernel);
    if (status.isOk())
      return out;
    out.kernel = nullptr;
    if (auto refusal = refusals.find(entry); refusal != refusals.end()) {
      out.code = refusal->second.code;
      out.error = std::string(rt::getStatusName(out.code)) + " (when " + path +
                  " was written): " + refusal->second.message;
      return out;
    }
    out.code = status.code();
    out.error =
        std::string(rt::getStatusName(status.code())) + ": " + status.message();
    if (!package.find(entry))
      out.error += " (write it with tk-conformance --write-package ... "
                   "--kernel " +
                   request.kase.name + ")";
    return out;
  }
};

bool readFile(const std::string &path, std::string &out) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return false;
  std::ostringstream text;
  text << file.rdbuf();
  out = text.str();
  return !file.bad();
}

} // namespace

bool tk::conformance::makePackageSupplier(const std::string &path,
                                          KernelSupplier &out,
                                          std::string &error) {
  auto supply = std::make_shared<PackageSupply>();
  supply->path = path;
  if (!readFile(path, supply->bytes)) {
    error = "cannot read " + path;
    return false;
  }
  std::string why;
  if (!tk::package::read(supply->bytes.data(), supply->bytes.size(),
                         supply->package, why)) {
    error = path + " is not a package: " + why;
    return false;
  }
  // The refusals are optional (a package every kernel went into has an
  // empty file, or none if written by hand); each line must read whole.
  std::string refused;
  if (readFile(path + ".refused", refused)) {
    std::istringstream lines(refused);
    std::string line;
    for (size_t number = 1; std::getline(lines, line); ++number) {
      size_t tab1 = line.find('\t');
      size_t tab2 =
          tab1 == std::string::npos ? tab1 : line.find('\t', tab1 + 1);
      int code = 0;
      bool parsed = tab2 != std::string::npos;
      if (parsed) {
        std::istringstream field(line.substr(tab1 + 1, tab2 - tab1 - 1));
        parsed = bool(field >> code) && field.eof() && code > 0;
      }
      if (!parsed) {
        error = path + ".refused:" + std::to_string(number) +
                ": not 'entry<TAB>status code<TAB>message'";
        return false;
      }
      supply->refusals[line.substr(0, tab1)] = {static_cast<tk_status>(code),
                                                line.substr(tab2 + 1)};
    }
  }
  out = [supply](const KernelRequest &request) {
    return supply->supply(request);
  };
  return true;
}
