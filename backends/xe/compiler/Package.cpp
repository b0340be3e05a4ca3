//===- Package.cpp - the Xe backend's binary format -------------*- C++ -*-===//
//
// Writing and bounds-checked reading of the layout of Package.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Package.h"

#include "common/PackageIO.h"

namespace tk::xe {

namespace {

constexpr char kMagic[8] = {'T', 'K', 'X', 'E', '1', '\0', '\0', '\0'};
/// A name longer than this is corruption, not a kernel.
constexpr uint32_t kMaxNameLength = 4096;
/// Targets ocloc could have built code for, far more than tk knows.
constexpr uint32_t kMaxNatives = 64;
/// SPIR-V's magic number, as the first word of a little-endian module.
constexpr uint32_t kSpirvMagic = 0x07230203;

tk_status corrupt(std::string &error, const std::string &what) {
  error = "tk-xe: not a valid Xe package: " + what;
  return TK_ERROR_INVALID_ARGUMENT;
}

} // namespace

const NativeBinary *Package::nativeFor(const std::string &name) const {
  for (const NativeBinary &native : natives)
    if (native.target == name)
      return &native;
  return nullptr;
}

std::string serializePackage(const Package &package) {
  using namespace tk::plugin;
  std::string out;
  appendHeader(out, kMagic, kPackageFormatVersion);
  for (int32_t field :
       {package.numWarps, package.threadsPerBlock, package.subgroupSize,
        package.sharedMemoryBytes, package.matrixDots})
    appendU32(out, static_cast<uint32_t>(field));
  appendString(out, package.target);
  appendString(out, package.entry);
  appendString(out, package.buildOptions);
  appendU64(out, package.spirv.size());
  out += package.spirv;
  appendU32(out, static_cast<uint32_t>(package.natives.size()));
  for (const NativeBinary &native : package.natives) {
    appendString(out, native.target);
    for (int32_t field :
         {native.grfRegisters, native.scratchBytes, native.dpasInstructions})
      appendU32(out, static_cast<uint32_t>(field));
    appendU64(out, native.bytes.size());
    out += native.bytes;
  }
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
  uint32_t fields[5];
  for (uint32_t &field : fields)
    if (!reader.readU32(field))
      return corrupt(error, "truncated in the launch parameters");
  auto [warps, threads, subgroup, slm, dots] = fields;
  if (warps == 0 || (subgroup != 8 && subgroup != 16 && subgroup != 32) ||
      threads != warps * subgroup || threads > 1024)
    return corrupt(error, "launch shape of " + std::to_string(warps) +
                              " subgroups of " + std::to_string(subgroup) +
                              ", " + std::to_string(threads) + " work-items");
  if (slm > 131072 || dots > (1u << 16))
    return corrupt(error, "resources out of range (" + std::to_string(slm) +
                              " bytes of SLM, " + std::to_string(dots) +
                              " dots)");
  if (!reader.readString(out.target, kMaxNameLength) || out.target.empty())
    return corrupt(error, "truncated or empty target name");
  if (!reader.readString(out.entry, kMaxNameLength) || out.entry.empty())
    return corrupt(error, "truncated or empty entry name");
  if (!reader.readString(out.buildOptions, kMaxNameLength))
    return corrupt(error, "truncated build options");
  uint64_t spirvBytes = 0;
  if (!reader.readU64(spirvBytes) || !reader.readBytes(spirvBytes, out.spirv))
    return corrupt(error, "truncated SPIR-V module");
  tk::plugin::PackageReader words(out.spirv.data(), out.spirv.size());
  uint32_t magic = 0;
  if (out.spirv.size() % 4 != 0 || !words.readU32(magic) ||
      magic != kSpirvMagic)
    return corrupt(error, "the module is not little-endian SPIR-V");
  uint32_t natives = 0;
  if (!reader.readU32(natives) || natives > kMaxNatives)
    return corrupt(error, "truncated or bad count of native binaries");
  out.natives.clear();
  for (uint32_t i = 0; i < natives; ++i) {
    NativeBinary native;
    uint32_t grf = 0, scratch = 0, dpas = 0;
    uint64_t bytes = 0;
    if (!reader.readString(native.target, kMaxNameLength) ||
        native.target.empty() || !reader.readU32(grf) ||
        !reader.readU32(scratch) || !reader.readU32(dpas) ||
        !reader.readU64(bytes) || !reader.readBytes(bytes, native.bytes) ||
        native.bytes.empty())
      return corrupt(error, "truncated native binary " + std::to_string(i));
    if (grf > 512 || scratch > (1u << 24))
      return corrupt(error, "native binary for " + native.target + " claims " +
                                std::to_string(grf) + " GRFs and " +
                                std::to_string(scratch) + " bytes of scratch");
    native.grfRegisters = static_cast<int32_t>(grf);
    native.scratchBytes = static_cast<int32_t>(scratch);
    native.dpasInstructions = static_cast<int32_t>(dpas);
    out.natives.push_back(std::move(native));
  }
  if (reader.remaining() != 0)
    return corrupt(error, std::to_string(reader.remaining()) +
                              " bytes after the last native binary");
  out.numWarps = static_cast<int32_t>(warps);
  out.threadsPerBlock = static_cast<int32_t>(threads);
  out.subgroupSize = static_cast<int32_t>(subgroup);
  out.sharedMemoryBytes = static_cast<int32_t>(slm);
  out.matrixDots = static_cast<int32_t>(dots);
  return TK_SUCCESS;
}

} // namespace tk::xe
