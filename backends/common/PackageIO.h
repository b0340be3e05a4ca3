//===- PackageIO.h - little-endian fields of a plugin's package -*- C++ -*-===//
//
// The writing and bounds-checked reading that every backend's binary format
// (its "package") needs: integers little-endian, byte strings after their
// length. A reader never reads past the end it was given, so a truncated or
// corrupt package is an error, not an overread. Header-only, no LLVM: the
// drivers that parse packages stay small.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_COMMON_PACKAGEIO_H_
#define TK_BACKENDS_COMMON_PACKAGEIO_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace tk::plugin {

inline void appendU32(std::string &out, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

inline void appendU64(std::string &out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

/// A length (u32) and the bytes.
inline void appendString(std::string &out, const std::string &value) {
  appendU32(out, static_cast<uint32_t>(value.size()));
  out += value;
}

/// The start of every package: its 8-byte magic (a NUL-terminated name) and
/// the format version.
inline void appendHeader(std::string &out, const char (&magic)[8],
                         uint32_t version) {
  out.append(magic, sizeof(magic));
  appendU32(out, version);
}

/// Reads from a byte range, failing (without reading) past its end.
class PackageReader {
public:
  PackageReader(const void *data, size_t size)
      : data(static_cast<const unsigned char *>(data)), size(size) {}

  size_t remaining() const { return size - offset; }

  bool readU32(uint32_t &value) {
    if (remaining() < 4)
      return false;
    value = 0;
    for (int i = 0; i < 4; ++i)
      value |= static_cast<uint32_t>(data[offset + i]) << (8 * i);
    offset += 4;
    return true;
  }

  bool readU64(uint64_t &value) {
    if (remaining() < 8)
      return false;
    value = 0;
    for (int i = 0; i < 8; ++i)
      value |= static_cast<uint64_t>(data[offset + i]) << (8 * i);
    offset += 8;
    return true;
  }

  bool readBytes(uint64_t count, std::string &out) {
    if (count > remaining())
      return false;
    out.assign(reinterpret_cast<const char *>(data + offset),
               static_cast<size_t>(count));
    offset += static_cast<size_t>(count);
    return true;
  }

  /// A string written by appendString, refused above `maxLength` bytes.
  bool readString(std::string &out, uint32_t maxLength) {
    uint32_t length = 0;
    return readU32(length) && length <= maxLength && readBytes(length, out);
  }

  /// Reads the header appendHeader wrote: empty when it holds `magic` and
  /// `version`, otherwise why the bytes are not such a package.
  std::string readHeader(const char (&magic)[8], uint32_t version) {
    std::string found;
    if (!readBytes(sizeof(magic), found) ||
        std::memcmp(found.data(), magic, sizeof(magic)) != 0)
      return std::string("it does not start with the magic \"") + magic + "\"";
    uint32_t foundVersion = 0;
    if (!readU32(foundVersion))
      return "truncated before the format version";
    if (foundVersion != version)
      return "format version " + std::to_string(foundVersion) +
             ", this plugin reads version " + std::to_string(version);
    return "";
  }

private:
  const unsigned char *data;
  size_t size;
  size_t offset = 0;
};

} // namespace tk::plugin

#endif // TK_BACKENDS_COMMON_PACKAGEIO_H_
