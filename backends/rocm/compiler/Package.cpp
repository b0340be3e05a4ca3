//===- Package.cpp - the ROCm backend's binary format -----------*- C++ -*-===//
//
// Writing and bounds-checked reading of the layout of Package.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Package.h"

#include "common/PackageIO.h"

namespace tk::rocm {

namespace {

constexpr char kMagic[8] = {'T', 'K', 'R', 'O', 'C', 'M', '1', '\0'};
/// A name longer than this is corruption, not a kernel.
constexpr uint32_t kMaxNameLength = 4096;
/// ELF's e_machine for AMD GPUs (EM_AMDGPU).
constexpr uint16_t kElfMachineAmdgpu = 224;

tk_status corrupt(std::string &error, const std::string &what) {
  error = "tk-rocm: not a valid ROCm package: " + what;
  return TK_ERROR_INVALID_ARGUMENT;
}

/// Why `elf` is not a 64-bit little-endian AMDGPU shared object, or "".
std::string codeObjectProblem(const std::string &elf) {
  if (elf.size() < 64 || elf.compare(0, 4,
                                     "\x7f"
                                     "ELF") != 0)
    return "the code object is not an ELF file";
  if (elf[4] != 2 || elf[5] != 1)
    return "the code object is not 64-bit little-endian ELF";
  auto u16 = [&](size_t at) {
    return static_cast<uint16_t>(static_cast<unsigned char>(elf[at]) |
                                 static_cast<unsigned char>(elf[at + 1]) << 8);
  };
  // e_type ET_DYN (the loader takes shared objects), e_machine EM_AMDGPU.
  if (u16(16) != 3)
    return "the code object is not a shared object (not linked)";
  if (u16(18) != kElfMachineAmdgpu)
    return "the code object is for ELF machine " + std::to_string(u16(18)) +
           ", not AMDGPU (224)";
  return "";
}

} // namespace

std::string serializePackage(const Package &package) {
  using namespace tk::plugin;
  std::string out;
  appendHeader(out, kMagic, kPackageFormatVersion);
  for (int32_t field :
       {package.numWarps, package.threadsPerBlock, package.waveSize,
        package.sharedMemoryBytes, package.kernargBytes, package.vgprs,
        package.sgprs, package.scratchBytes, package.matrixDots})
    appendU32(out, static_cast<uint32_t>(field));
  appendString(out, package.arch);
  appendString(out, package.entry);
  appendU64(out, package.hsaco.size());
  out += package.hsaco;
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
  uint32_t fields[9];
  for (uint32_t &field : fields)
    if (!reader.readU32(field))
      return corrupt(error, "truncated in the launch parameters");
  auto [warps, threads, wave, lds, kernarg, vgprs, sgprs, scratch, dots] =
      fields;
  if (warps == 0 || (wave != 32 && wave != 64) || threads != warps * wave ||
      threads > 1024)
    return corrupt(error, "launch shape of " + std::to_string(warps) +
                              " waves of " + std::to_string(wave) + ", " +
                              std::to_string(threads) + " threads");
  if (lds > 65536 || kernarg > 4096 || vgprs > 512 || sgprs > 128 ||
      scratch > (1u << 20) || dots > (1u << 16))
    return corrupt(error, "resources out of range (" + std::to_string(lds) +
                              " bytes of LDS, " + std::to_string(kernarg) +
                              " of kernel arguments, " + std::to_string(vgprs) +
                              " VGPRs, " + std::to_string(sgprs) + " SGPRs, " +
                              std::to_string(scratch) + " of scratch)");
  if (!reader.readString(out.arch, kMaxNameLength) ||
      out.arch.rfind("gfx", 0) != 0)
    return corrupt(error, "truncated or bad arch name");
  if (!reader.readString(out.entry, kMaxNameLength) || out.entry.empty())
    return corrupt(error, "truncated or empty entry name");
  uint64_t hsacoBytes = 0;
  if (!reader.readU64(hsacoBytes) || !reader.readBytes(hsacoBytes, out.hsaco))
    return corrupt(error, "truncated code object");
  if (reader.remaining() != 0)
    return corrupt(error, std::to_string(reader.remaining()) +
                              " bytes after the code object");
  if (std::string why = codeObjectProblem(out.hsaco); !why.empty())
    return corrupt(error, why);
  out.numWarps = static_cast<int32_t>(warps);
  out.threadsPerBlock = static_cast<int32_t>(threads);
  out.waveSize = static_cast<int32_t>(wave);
  out.sharedMemoryBytes = static_cast<int32_t>(lds);
  out.kernargBytes = static_cast<int32_t>(kernarg);
  out.vgprs = static_cast<int32_t>(vgprs);
  out.sgprs = static_cast<int32_t>(sgprs);
  out.scratchBytes = static_cast<int32_t>(scratch);
  out.matrixDots = static_cast<int32_t>(dots);
  return TK_SUCCESS;
}

} // namespace tk::rocm
