//===- Xe.cpp - the xe package under the fuzzer ---------------------------===//
//
// validate() would also run spirv-val, a process per input: the parse is
// what the driver does before it hands the module to Level Zero.
//
//===----------------------------------------------------------------------===//

#include "PackageCheck.h"

#include "compiler/Package.h"

void tk::fuzz::checkXePackage(const uint8_t *data, size_t size) {
  checkPackage<tk::xe::Package>(data, size, "xe", tk::xe::parsePackage,
                                tk::xe::serializePackage);
}
