//===- Cuda.cpp - the cuda package and its cubin under the fuzzer ---------===//

#include "PackageCheck.h"

#include "compiler/Package.h"

void tk::fuzz::checkCudaPackage(const uint8_t *data, size_t size) {
  checkPackage<tk::cuda::Package>(data, size, "cuda", tk::cuda::parsePackage,
                                  tk::cuda::serializePackage);
  // validate(): the cubin's ELF header too.
  std::string error;
  tk_status status = tk::cuda::validatePackage(data, size, error);
  if (status != TK_SUCCESS)
    requireRefusal(status, error, {TK_ERROR_INVALID_ARGUMENT});
}
