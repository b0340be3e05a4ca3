//===- Package.h - the Vulkan backend's binary format -----------*- C++ -*-===//
//
// What compile() returns and executable_load() takes: one kernel as a
// SPIR-V module for the Vulkan environment and what the loader and a launch
// need to know. Layout, integers little-endian (common/PackageIO.h):
//
//   char     magic[8]           "TKVULK1\0"
//   uint32   format_version     kPackageFormatVersion
//   uint32   num_warps
//   uint32   threads_per_block  (the workgroup size, LocalSize x)
//   uint32   subgroup_size      (the code's warp size; the device must run it)
//   uint32   shared_memory_bytes (Workgroup variables)
//   uint32   push_constant_bytes
//   uint32   argument_buffer_bytes (0: the arguments are the push
//            constants; else they are a buffer of this many bytes and the
//            push constants its 8-byte address)
//   uint32   number of arguments, then each one's offset in its block
//   uint32   arch length,  then the bytes ("vk-sg8")
//   uint32   entry length, then the bytes (the OpEntryPoint's name)
//   uint64   SPIR-V length in bytes (a multiple of 4), then the words
//
// and nothing after.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_VULKAN_COMPILER_PACKAGE_H_
#define TK_BACKENDS_VULKAN_COMPILER_PACKAGE_H_

#include "tk/tk.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tk::vulkan {

constexpr uint32_t kPackageFormatVersion = 2;

/// The largest argument block a package may have (kMaxArguments of 8
/// bytes).
constexpr uint32_t kMaxArgumentBlockBytes = 8192;

struct Package {
  std::string arch;
  std::string entry;
  int32_t numWarps = 0;
  int32_t threadsPerBlock = 0;
  int32_t subgroupSize = 0;
  int32_t sharedMemoryBytes = 0;
  uint32_t pushConstantBytes = 0;
  uint32_t argumentBufferBytes = 0;
  std::vector<uint32_t> argOffsets;
  std::vector<uint32_t> spirv;
};

/// The bytes of `package` in the layout above.
std::string serializePackage(const Package &package);

/// Parses and checks a package: lengths, a sane launch shape, argument
/// offsets inside their block, SPIR-V that starts with its magic.
/// TK_ERROR_INVALID_ARGUMENT with the reason otherwise.
tk_status parsePackage(const void *data, size_t size, Package &out,
                       std::string &error);

/// The arch name of code for subgroups of `subgroupSize` ("vk-sg8").
std::string archForSubgroupSize(int64_t subgroupSize);

} // namespace tk::vulkan

#endif // TK_BACKENDS_VULKAN_COMPILER_PACKAGE_H_
