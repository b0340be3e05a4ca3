//===- Package.cpp - the Vulkan backend's binary format ---------*- C++ -*-===//
//
// Writing and bounds-checked reading of the layout of Package.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Package.h"

#include "common/PackageIO.h"

#include <cstring>

namespace tk::vulkan {

namespace {

constexpr char kMagic[8] = {'T', 'K', 'V', 'U', 'L', 'K', '1', '\0'};
constexpr uint32_t kSpirvMagic = 0x07230203;
/// A name longer than this is corruption, not a kernel.
constexpr uint32_t kMaxNameLength = 4096;
/// More arguments than any kernel of tk takes: corruption.
constexpr uint32_t kMaxArguments = 1024;

tk_status corrupt(std::string &error, const std::string &what) {
  error = "tk-vulkan: not a valid Vulkan package: " + what;
  return TK_ERROR_INVALID_ARGUMENT;
}

} // namespace

std::string archForSubgroupSize(int64_t subgroupSize) {
  return "vk-sg" + std::to_string(subgroupSize);
}

std::string serializePackage(const Package &package) {
  using namespace tk::plugin;
  std::string out;
  appendHeader(out, kMagic, kPackageFormatVersion);
  appendU32(out, static_cast<uint32_t>(package.numWarps));
  appendU32(out, static_cast<uint32_t>(package.threadsPerBlock));
  appendU32(out, static_cast<uint32_t>(package.subgroupSize));
  appendU32(out, static_cast<uint32_t>(package.sharedMemoryBytes));
  appendU32(out, package.pushConstantBytes);
  appendU32(out, package.argumentBufferBytes);
  appendU32(out, static_cast<uint32_t>(package.argOffsets.size()));
  for (uint32_t offset : package.argOffsets)
    appendU32(out, offset);
  appendString(out, package.arch);
  appendString(out, package.entry);
  appendU64(out, package.spirv.size() * 4);
  out.append(reinterpret_cast<const char *>(package.spirv.data()),
             package.spirv.size() * 4);
  return out;
}

tk_status parsePackage(const void *data, size_t size, Package &out,
                       std::string &error) {
  if (!data || size == 0)
    return corrupt(error, "the binary is empty");
  tk::plugin::PackageReader reader(data, size);
  if (std::string why = reader.readHeader(kMagic, kPackageFormatVersion);
      !why.empty())
    return corrupt(error, why);
  uint32_t numWarps = 0, threads = 0, subgroup = 0, shared = 0, push = 0,
           argumentBuffer = 0, numArgs = 0;
  if (!reader.readU32(numWarps) || !reader.readU32(threads) ||
      !reader.readU32(subgroup) || !reader.readU32(shared) ||
      !reader.readU32(push) || !reader.readU32(argumentBuffer) ||
      !reader.readU32(numArgs))
    return corrupt(error, "truncated in the launch parameters");
  if (numWarps == 0 || threads == 0 || threads > 4096 || subgroup == 0 ||
      subgroup > 128 || threads % subgroup != 0)
    return corrupt(error, "launch shape of " + std::to_string(numWarps) +
                              " warps, " + std::to_string(threads) +
                              " threads, subgroups of " +
                              std::to_string(subgroup));
  if (shared > (1u << 24) || push > 4096)
    return corrupt(error, std::to_string(shared) + " bytes of shared memory, " +
                              std::to_string(push) +
                              " bytes of push constants");
  if (argumentBuffer != 0 && (push != 8 || argumentBuffer % 4 != 0 ||
                              argumentBuffer > kMaxArgumentBlockBytes))
    return corrupt(error, "an argument buffer of " +
                              std::to_string(argumentBuffer) +
                              " bytes behind " + std::to_string(push) +
                              " bytes of push constants");
  if (numArgs > kMaxArguments)
    return corrupt(error, std::to_string(numArgs) + " arguments");
  uint32_t block = argumentBuffer ? argumentBuffer : push;
  out.argOffsets.assign(numArgs, 0);
  for (uint32_t &offset : out.argOffsets) {
    // An argument takes at most 8 bytes; it must lie in the block.
    if (!reader.readU32(offset))
      return corrupt(error, "truncated in the argument offsets");
    if (uint64_t(offset) + 4 > block)
      return corrupt(error, "an argument offset " + std::to_string(offset) +
                                " past the " + std::to_string(block) +
                                " bytes of its block");
  }
  if (!reader.readString(out.arch, kMaxNameLength) ||
      out.arch.rfind("vk-sg", 0) != 0)
    return corrupt(error, "truncated or bad arch name");
  if (!reader.readString(out.entry, kMaxNameLength) || out.entry.empty())
    return corrupt(error, "truncated or empty entry name");
  uint64_t spirvBytes = 0;
  std::string words;
  if (!reader.readU64(spirvBytes) || spirvBytes % 4 != 0 || spirvBytes < 20 ||
      !reader.readBytes(spirvBytes, words))
    return corrupt(error, "truncated SPIR-V");
  if (reader.remaining() != 0)
    return corrupt(error, std::to_string(reader.remaining()) +
                              " bytes after the SPIR-V");
  out.spirv.resize(spirvBytes / 4);
  std::memcpy(out.spirv.data(), words.data(), spirvBytes);
  if (out.spirv[0] != kSpirvMagic)
    return corrupt(error, "the SPIR-V does not start with its magic number");
  out.numWarps = static_cast<int32_t>(numWarps);
  out.threadsPerBlock = static_cast<int32_t>(threads);
  out.subgroupSize = static_cast<int32_t>(subgroup);
  out.sharedMemoryBytes = static_cast<int32_t>(shared);
  out.pushConstantBytes = push;
  out.argumentBufferBytes = argumentBuffer;
  return TK_SUCCESS;
}

} // namespace tk::vulkan
