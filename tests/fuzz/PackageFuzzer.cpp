//===- PackageFuzzer.cpp - every backend's binary format ------------------===//
//
// One input is a backend selector byte and the bytes of a package, as a
// cache entry's payload hands it to a plugin: 0 cuda, 1 rocm, 2 vulkan,
// 3 xe, 4 the cpu plugin's object file (the selector is taken modulo 5).
// Seeds: packages tk-compile wrote for the example kernels, each behind its
// selector (tests/fuzz/make-seeds.sh).
//
//===----------------------------------------------------------------------===//

#include "packages/PackageCheck.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const uint8_t *package = data + 1;
  size_t packageSize = size - 1;
  // A backend this build lacks (TK_BACKENDS) takes no input.
  switch (data[0] % 5) {
#ifdef TK_FUZZ_PACKAGE_CUDA
  case 0:
    tk::fuzz::checkCudaPackage(package, packageSize);
    break;
#endif
#ifdef TK_FUZZ_PACKAGE_ROCM
  case 1:
    tk::fuzz::checkRocmPackage(package, packageSize);
    break;
#endif
#ifdef TK_FUZZ_PACKAGE_VULKAN
  case 2:
    tk::fuzz::checkVulkanPackage(package, packageSize);
    break;
#endif
#ifdef TK_FUZZ_PACKAGE_XE
  case 3:
    tk::fuzz::checkXePackage(package, packageSize);
    break;
#endif
#ifdef TK_FUZZ_PACKAGE_CPU
  case 4:
    tk::fuzz::checkCpuObject(package, packageSize);
    break;
#endif
  default:
    break;
  }
  return 0;
}
