//===- Rocm.cpp - the rocm package and its code object under the fuzzer ---===//

#include "PackageCheck.h"

#include "compiler/CodeObjectCheck.h"

void tk::fuzz::checkRocmPackage(const uint8_t *data, size_t size) {
  checkPackage<tk::rocm::Package>(data, size, "rocm", tk::rocm::parsePackage,
                                  tk::rocm::serializePackage);
  // validate() without TK_ROCM_VALIDATION: the code object's metadata, read
  // with LLVM's object library, held against the package.
  std::string error;
  tk_status status = tk::rocm::validatePackage(data, size, error);
  if (status != TK_SUCCESS)
    requireRefusal(status, error, {TK_ERROR_INVALID_ARGUMENT});
}
