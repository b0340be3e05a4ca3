//===- Package.cpp - the CUDA backend's binary format -----------*- C++ -*-===//
//
// Writing and bounds-checked reading of the package layout of Package.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Package.h"

#include "common/PackageIO.h"

#include <cstring>

namespace tk::cuda {

namespace {

constexpr char kMagic[8] = {'T', 'K', 'C', 'U', 'D', 'A', '1', '\0'};

/// ELF constants (the System V gABI), to check a cubin without <elf.h>.
constexpr unsigned char kElfClass64 = 2;
constexpr unsigned char kElfDataLittleEndian = 1;
constexpr uint16_t kElfMachineCuda = 190; // EM_CUDA
constexpr size_t kElf64HeaderSize = 64;

/// The largest string field the parser believes: an arch or entry name longer
/// than this is corruption, not a kernel.
constexpr uint32_t kMaxNameLength = 4096;

tk_status corrupt(std::string &error, const std::string &what) {
  error = "tk-cuda: not a valid CUDA package: " + what;
  return TK_ERROR_INVALID_ARGUMENT;
}

} // namespace

std::string serializePackage(const Package &package) {
  using namespace tk::plugin;
  std::string out;
  out.reserve(64 + package.arch.size() + package.entry.size() +
              package.ptx.size() + package.cubin.size());
  appendHeader(out, kMagic, kPackageFormatVersion);
  appendU32(out, static_cast<uint32_t>(package.numWarps));
  appendU32(out, static_cast<uint32_t>(package.threadsPerBlock));
  appendU32(out, static_cast<uint32_t>(package.sharedMemoryBytes));
  appendU32(out, static_cast<uint32_t>(package.registersPerThread));
  appendU32(out, static_cast<uint32_t>(package.arch.size()));
  out += package.arch;
  appendU32(out, static_cast<uint32_t>(package.entry.size()));
  out += package.entry;
  appendU64(out, package.ptx.size());
  out += package.ptx;
  appendU64(out, package.cubin.size());
  out += package.cubin;
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

  uint32_t numWarps = 0, threadsPerBlock = 0, sharedBytes = 0, registers = 0;
  if (!reader.readU32(numWarps) || !reader.readU32(threadsPerBlock) ||
      !reader.readU32(sharedBytes) || !reader.readU32(registers))
    return corrupt(error, "truncated in the launch parameters");
  // 1024 threads is every CUDA GPU's limit per block; shared memory and
  // registers far beyond any GPU's are corruption.
  if (numWarps == 0 || numWarps > 32)
    return corrupt(error, "num_warps " + std::to_string(numWarps) +
                              " is not in 1..32");
  if (threadsPerBlock == 0 || threadsPerBlock > 1024)
    return corrupt(error, "threads per block " +
                              std::to_string(threadsPerBlock) +
                              " is not in 1..1024");
  if (sharedBytes > (1u << 24))
    return corrupt(error, "shared memory of " + std::to_string(sharedBytes) +
                              " bytes");
  if (registers > 255)
    return corrupt(error, std::to_string(registers) + " registers per thread");

  uint32_t archLength = 0;
  if (!reader.readU32(archLength) || archLength > kMaxNameLength ||
      !reader.readBytes(archLength, out.arch))
    return corrupt(error, "truncated or oversized arch name");
  if (out.arch.rfind("sm_", 0) != 0)
    return corrupt(error, "arch '" + out.arch + "' is not an sm_* name");
  uint32_t entryLength = 0;
  if (!reader.readU32(entryLength) || entryLength > kMaxNameLength ||
      !reader.readBytes(entryLength, out.entry))
    return corrupt(error, "truncated or oversized entry name");
  if (out.entry.empty())
    return corrupt(error, "the entry name is empty");

  uint64_t ptxLength = 0, cubinLength = 0;
  if (!reader.readU64(ptxLength) || !reader.readBytes(ptxLength, out.ptx))
    return corrupt(error, "truncated in the PTX (" + std::to_string(ptxLength) +
                              " bytes declared)");
  if (!reader.readU64(cubinLength) || !reader.readBytes(cubinLength, out.cubin))
    return corrupt(error, "truncated in the cubin (" +
                              std::to_string(cubinLength) + " bytes declared)");
  if (reader.remaining() != 0)
    return corrupt(error, std::to_string(reader.remaining()) +
                              " unexpected bytes after the cubin");
  if (out.ptx.empty() && out.cubin.empty())
    return corrupt(error, "it holds neither PTX nor a cubin");

  out.numWarps = static_cast<int32_t>(numWarps);
  out.threadsPerBlock = static_cast<int32_t>(threadsPerBlock);
  out.sharedMemoryBytes = static_cast<int32_t>(sharedBytes);
  out.registersPerThread = static_cast<int32_t>(registers);
  return TK_SUCCESS;
}

tk_status checkCubin(const std::string &cubin, std::string &error) {
  if (cubin.size() < kElf64HeaderSize)
    return corrupt(error, "the cubin (" + std::to_string(cubin.size()) +
                              " bytes) is shorter than an ELF header");
  const auto *bytes = reinterpret_cast<const unsigned char *>(cubin.data());
  if (bytes[0] != 0x7f || bytes[1] != 'E' || bytes[2] != 'L' || bytes[3] != 'F')
    return corrupt(error, "the cubin is not an ELF file");
  if (bytes[4] != kElfClass64 || bytes[5] != kElfDataLittleEndian)
    return corrupt(error, "the cubin is not a 64-bit little-endian ELF file");
  // e_machine: the half-word at offset 18 of the ELF header.
  uint16_t machine = static_cast<uint16_t>(bytes[18] | (bytes[19] << 8));
  if (machine != kElfMachineCuda)
    return corrupt(error, "the cubin's ELF machine is " +
                              std::to_string(machine) + ", not EM_CUDA (" +
                              std::to_string(kElfMachineCuda) + ")");
  return TK_SUCCESS;
}

tk_status validatePackage(const void *data, size_t size, std::string &error) {
  Package package;
  if (tk_status status = parsePackage(data, size, package, error))
    return status;
  if (package.cubin.empty())
    return corrupt(error, "it holds no cubin");
  return checkCubin(package.cubin, error);
}

} // namespace tk::cuda
