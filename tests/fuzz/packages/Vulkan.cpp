//===- Vulkan.cpp - the vulkan package under the fuzzer -------------------===//
//
// validate() would also run spirv-val, a process per input: the parse is
// what the driver does before it hands SPIR-V to the Vulkan loader.
//
//===----------------------------------------------------------------------===//

#include "PackageCheck.h"

#include "compiler/Package.h"

void tk::fuzz::checkVulkanPackage(const uint8_t *data, size_t size) {
  checkPackage<tk::vulkan::Package>(data, size, "vulkan",
                                    tk::vulkan::parsePackage,
                                    tk::vulkan::serializePackage);
}
