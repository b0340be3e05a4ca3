//===- Package.cpp - the .tkpkg format --------------------------*- C++ -*-===//

#include "tk/package/Package.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

using namespace tk::package;

const Kernel *Package::find(const std::string &entry) const {
  for (const Kernel &kernel : kernels)
    if (kernel.entry == entry)
      return &kernel;
  return nullptr;
}

namespace {

uint32_t checksum(const char *data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // crc32 takes a uInt length: feed large payloads in pieces.
  while (size > 0) {
    uInt piece = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef *>(data), piece);
    data += piece;
    size -= piece;
  }
  return static_cast<uint32_t>(crc);
}

//===--- Writing ----------------------------------------------------------===//

class Writer {
public:
  void u32(uint32_t value) { integer(value, 4); }
  void u64(uint64_t value) { integer(value, 8); }
  void i32(int32_t value) { u32(static_cast<uint32_t>(value)); }
  void i64(int64_t value) { u64(static_cast<uint64_t>(value)); }
  void string(const std::string &value) {
    u32(static_cast<uint32_t>(value.size()));
    out += value;
  }
  void bytes(const std::string &value) {
    u64(value.size());
    out += value;
  }
  std::string out;

private:
  void integer(uint64_t value, int width) {
    for (int i = 0; i < width; ++i)
      out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
};

bool checkString(const std::string &value, const std::string &what,
                 std::string &error) {
  if (value.size() <= kMaxStringBytes)
    return true;
  error = what + " is " + std::to_string(value.size()) +
          " bytes long; a package holds at most " +
          std::to_string(kMaxStringBytes);
  return false;
}

//===--- Reading ----------------------------------------------------------===//

/// Reads fields from the payload; each failure names the offset (counted
/// from the start of the file) and the field.
class Reader {
public:
  Reader(const unsigned char *data, size_t size, std::string &error)
      : data(data), size(size), error(error) {}

  bool u32(uint32_t &value, const char *what) {
    uint64_t wide = 0;
    if (!integer(wide, 4, what))
      return false;
    value = static_cast<uint32_t>(wide);
    return true;
  }
  bool u64(uint64_t &value, const char *what) {
    return integer(value, 8, what);
  }
  bool i32(int32_t &value, const char *what) {
    uint32_t bits = 0;
    if (!u32(bits, what))
      return false;
    value = static_cast<int32_t>(bits);
    return true;
  }
  bool i64(int64_t &value, const char *what) {
    uint64_t bits = 0;
    if (!u64(bits, what))
      return false;
    value = static_cast<int64_t>(bits);
    return true;
  }
  bool string(std::string &value, const char *what) {
    size_t at = offset;
    uint32_t length = 0;
    if (!u32(length, what))
      return false;
    if (length > kMaxStringBytes)
      return fail(at, std::string(what) + " claims " + std::to_string(length) +
                          " bytes; a package holds at most " +
                          std::to_string(kMaxStringBytes));
    return run(value, length, at, what);
  }
  bool bytes(std::string &value, const char *what) {
    size_t at = offset;
    uint64_t length = 0;
    return u64(length, what) && run(value, length, at, what);
  }
  /// A count, refused above `limit`.
  bool count(uint32_t &value, uint32_t limit, const char *what) {
    size_t at = offset;
    if (!u32(value, what))
      return false;
    if (value > limit)
      return fail(at, std::string(what) + " is " + std::to_string(value) +
                          "; a package holds at most " + std::to_string(limit));
    return true;
  }
  bool fail(size_t at, const std::string &message) {
    error = "at byte " + std::to_string(kHeaderBytes + at) + ": " + message;
    return false;
  }
  size_t remaining() const { return size - offset; }
  size_t position() const { return offset; }

private:
  bool integer(uint64_t &value, int width, const char *what) {
    if (remaining() < static_cast<size_t>(width))
      return fail(offset, std::string(what) + " runs past the end (" +
                              std::to_string(width) + " bytes needed, " +
                              std::to_string(remaining()) + " left)");
    value = 0;
    for (int i = 0; i < width; ++i)
      value |= static_cast<uint64_t>(data[offset + i]) << (8 * i);
    offset += width;
    return true;
  }
  bool run(std::string &value, uint64_t length, size_t at, const char *what) {
    if (length > remaining())
      return fail(at, std::string(what) + " claims " + std::to_string(length) +
                          " bytes, " + std::to_string(remaining()) + " left");
    value.assign(reinterpret_cast<const char *>(data + offset),
                 static_cast<size_t>(length));
    offset += static_cast<size_t>(length);
    return true;
  }

  const unsigned char *data;
  size_t size;
  size_t offset = 0;
  std::string &error;
};

bool readArgument(Reader &in, Argument &out) {
  return in.string(out.name, "an argument's name") &&
         in.string(out.typeName, "an argument's type") &&
         in.u32(out.kind, "an argument's kind") &&
         in.i64(out.divisibility, "an argument's divisibility") &&
         in.i64(out.alignment, "an argument's alignment") &&
         in.i64(out.elementBytes, "an argument's element size");
}

bool readBinary(Reader &in, Binary &out) {
  size_t at = in.position();
  if (!in.string(out.backend, "a binary's backend") ||
      !in.string(out.target, "a binary's target") ||
      !in.string(out.compiler, "a binary's compiler") ||
      !in.i32(out.numWarps, "a binary's num_warps") ||
      !in.i32(out.sharedMemoryBytes, "a binary's shared memory") ||
      !in.i32(out.registersPerThread, "a binary's registers") ||
      !in.bytes(out.bytes, "a binary's code"))
    return false;
  if (out.backend.empty() || out.bytes.empty())
    return in.fail(at, "a binary without a backend or code");
  if (out.numWarps < 0 || out.sharedMemoryBytes < 0 ||
      out.registersPerThread < 0)
    return in.fail(at, "a binary for " + out.backend + " " + out.target +
                           " with negative launch facts");
  return true;
}

bool readKernel(Reader &in, Kernel &out) {
  size_t at = in.position();
  uint32_t arguments = 0, binaries = 0;
  if (!in.string(out.entry, "a kernel's entry") ||
      !in.i32(out.numWarps, "a kernel's num_warps") ||
      !in.i32(out.numStages, "a kernel's num_stages") ||
      !in.count(arguments, kMaxArguments, "a kernel's argument count"))
    return false;
  if (out.entry.empty())
    return in.fail(at, "a kernel without an entry name");
  out.arguments.resize(arguments);
  for (Argument &argument : out.arguments)
    if (!readArgument(in, argument))
      return false;
  if (!in.count(binaries, kMaxBinaries, "a kernel's binary count"))
    return false;
  out.binaries.resize(binaries);
  std::set<std::pair<std::string, std::string>> targets;
  for (Binary &binary : out.binaries) {
    size_t binaryAt = in.position();
    if (!readBinary(in, binary))
      return false;
    if (!targets.insert({binary.backend, binary.target}).second)
      return in.fail(binaryAt, "kernel '" + out.entry +
                                   "' has two binaries for " + binary.backend +
                                   " " + binary.target);
  }
  return true;
}

} // namespace

bool tk::package::write(const Package &package, std::string &out,
                        std::string &error) {
  if (package.kernels.size() > kMaxKernels) {
    error = std::to_string(package.kernels.size()) +
            " kernels; a package holds at most " + std::to_string(kMaxKernels);
    return false;
  }
  Writer payload;
  payload.u32(static_cast<uint32_t>(package.kernels.size()));
  std::set<std::string> entries;
  for (const Kernel &kernel : package.kernels) {
    if (kernel.entry.empty()) {
      error = "a kernel without an entry name";
      return false;
    }
    if (!entries.insert(kernel.entry).second) {
      error = "two kernels named '" + kernel.entry + "'";
      return false;
    }
    if (kernel.arguments.size() > kMaxArguments ||
        kernel.binaries.size() > kMaxBinaries) {
      error = "kernel '" + kernel.entry + "' has " +
              std::to_string(kernel.arguments.size()) + " arguments and " +
              std::to_string(kernel.binaries.size()) +
              " binaries; a package holds at most " +
              std::to_string(kMaxArguments) + " and " +
              std::to_string(kMaxBinaries);
      return false;
    }
    if (!checkString(kernel.entry, "an entry name", error))
      return false;
    payload.string(kernel.entry);
    payload.i32(kernel.numWarps);
    payload.i32(kernel.numStages);
    payload.u32(static_cast<uint32_t>(kernel.arguments.size()));
    for (const Argument &argument : kernel.arguments) {
      if (!checkString(argument.name, "an argument's name", error) ||
          !checkString(argument.typeName, "an argument's type", error))
        return false;
      payload.string(argument.name);
      payload.string(argument.typeName);
      payload.u32(argument.kind);
      payload.i64(argument.divisibility);
      payload.i64(argument.alignment);
      payload.i64(argument.elementBytes);
    }
    payload.u32(static_cast<uint32_t>(kernel.binaries.size()));
    std::set<std::pair<std::string, std::string>> targets;
    for (const Binary &binary : kernel.binaries) {
      if (binary.backend.empty() || binary.bytes.empty()) {
        error = "kernel '" + kernel.entry +
                "' has a binary without a backend or code";
        return false;
      }
      if (!targets.insert({binary.backend, binary.target}).second) {
        error = "kernel '" + kernel.entry + "' has two binaries for " +
                binary.backend + " " + binary.target;
        return false;
      }
      if (!checkString(binary.backend, "a backend name", error) ||
          !checkString(binary.target, "a target name", error) ||
          !checkString(binary.compiler, "a compiler name", error))
        return false;
      payload.string(binary.backend);
      payload.string(binary.target);
      payload.string(binary.compiler);
      payload.i32(binary.numWarps);
      payload.i32(binary.sharedMemoryBytes);
      payload.i32(binary.registersPerThread);
      payload.bytes(binary.bytes);
    }
  }
  Writer header;
  header.out.append(kMagic, sizeof(kMagic));
  header.u32(kFormatVersion);
  header.u32(static_cast<uint32_t>(kHeaderBytes));
  header.u64(payload.out.size());
  header.u32(checksum(payload.out.data(), payload.out.size()));
  header.u32(0);
  out = std::move(header.out);
  out += payload.out;
  return true;
}

bool tk::package::read(const void *data, size_t size, Package &out,
                       std::string &error) {
  out = Package();
  const auto *bytes = static_cast<const unsigned char *>(data);
  if (!bytes || size < kHeaderBytes) {
    error = "the file is " + std::to_string(size) +
            " bytes, shorter than a package's " + std::to_string(kHeaderBytes) +
            "-byte header";
    return false;
  }
  if (std::memcmp(bytes, kMagic, sizeof(kMagic)) != 0) {
    error = "it does not start with the magic \"TKPKG\": not a tk package";
    return false;
  }
  std::string headerError;
  Reader header(bytes + sizeof(kMagic), kHeaderBytes - sizeof(kMagic),
                headerError);
  uint32_t version = 0, headerBytes = 0, crc = 0, reserved = 0;
  uint64_t payloadBytes = 0;
  header.u32(version, "the format version");
  header.u32(headerBytes, "the header size");
  header.u64(payloadBytes, "the payload size");
  header.u32(crc, "the checksum");
  header.u32(reserved, "the reserved field");
  if (version != kFormatVersion) {
    error = "format version " + std::to_string(version) +
            "; this tk reads version " + std::to_string(kFormatVersion);
    return false;
  }
  if (headerBytes != kHeaderBytes || reserved != 0) {
    error = "the header claims " + std::to_string(headerBytes) +
            " bytes (version 1 has " + std::to_string(kHeaderBytes) +
            ") or a non-zero reserved field";
    return false;
  }
  if (payloadBytes != size - kHeaderBytes) {
    error = "the header announces " + std::to_string(payloadBytes) +
            " bytes after it, the file has " +
            std::to_string(size - kHeaderBytes) +
            (payloadBytes > size - kHeaderBytes ? " (truncated?)" : "");
    return false;
  }
  const char *payload = reinterpret_cast<const char *>(bytes + kHeaderBytes);
  if (checksum(payload, payloadBytes) != crc) {
    error = "the payload's CRC-32 does not match the header's: the file is "
            "damaged";
    return false;
  }
  Reader in(bytes + kHeaderBytes, payloadBytes, error);
  uint32_t kernels = 0;
  if (!in.count(kernels, kMaxKernels, "the kernel count"))
    return false;
  out.kernels.resize(kernels);
  std::set<std::string> entries;
  for (Kernel &kernel : out.kernels) {
    size_t at = in.position();
    if (!readKernel(in, kernel))
      return false;
    if (!entries.insert(kernel.entry).second)
      return in.fail(at, "two kernels named '" + kernel.entry + "'");
  }
  if (in.remaining() != 0)
    return in.fail(in.position(), std::to_string(in.remaining()) +
                                      " bytes after the last kernel");
  return true;
}
