//===- PackageCheck.h - one backend's package under the fuzzer --*- C++ -*-===//
//
// Each backend's check lives in a file of its own, compiled against that
// backend's headers alone (every backend names its format
// "compiler/Package.h"); PackageFuzzer.cpp picks one per input.
//
//===----------------------------------------------------------------------===//

#ifndef TK_TESTS_FUZZ_PACKAGES_PACKAGECHECK_H_
#define TK_TESTS_FUZZ_PACKAGES_PACKAGECHECK_H_

#include "FuzzSupport.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tk::fuzz {

/// Parses `data` as the backend's package, as its driver and validate() do.
/// A refusal must be INVALID_ARGUMENT with a reason. An accepted package
/// must be canonical: serialising what was read gives back the input bytes
/// (the format has one encoding and the parser accepts nothing after it).
template <typename PackageT, typename Parse, typename Serialize>
void checkPackage(const uint8_t *data, size_t size, const char *backend,
                  Parse parse, Serialize serialize) {
  PackageT package;
  std::string error;
  tk_status status = parse(data, size, package, error);
  if (status != TK_SUCCESS) {
    requireRefusal(status, error, {TK_ERROR_INVALID_ARGUMENT});
    return;
  }
  std::string bytes = serialize(package);
  require(bytes.size() == size &&
              std::equal(bytes.begin(), bytes.end(),
                         reinterpret_cast<const char *>(data)),
          std::string(backend) + ": an accepted package of " +
              std::to_string(size) + " bytes serialises to " +
              std::to_string(bytes.size()) + " other bytes");
}

void checkCudaPackage(const uint8_t *data, size_t size);
void checkRocmPackage(const uint8_t *data, size_t size);
void checkVulkanPackage(const uint8_t *data, size_t size);
void checkXePackage(const uint8_t *data, size_t size);
void checkCpuObject(const uint8_t *data, size_t size);

} // namespace tk::fuzz

#endif // TK_TESTS_FUZZ_PACKAGES_PACKAGECHECK_H_
