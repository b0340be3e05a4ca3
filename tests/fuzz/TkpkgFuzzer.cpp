//===- TkpkgFuzzer.cpp - the .tkpkg format --------------------------------===//
//
// One input is a selector byte and a file handed to tk_kernel_create as
// TK_SOURCE_PACKAGE (0), or the payload of one behind a right header (1),
// read by tk::package::read. A refusal must say why. An accepted package
// must be exactly what writing it back gives: the reader took every byte
// for what the writer puts there, and nothing else.
// Seeds: packages tk-compile --package built from the example kernels
// (tests/fuzz/make-seeds.sh).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "tk/package/Package.h"

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>

using tk::fuzz::require;

/// `payload` behind a header with its size and CRC-32 right, so that
/// mutations reach the fields behind the checksum.
static std::string wrap(const uint8_t *payload, size_t size) {
  std::string file(tk::package::kMagic, sizeof(tk::package::kMagic));
  auto append = [&](uint64_t value, int width) {
    for (int i = 0; i < width; ++i)
      file.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  };
  uLong crc = crc32(0L, Z_NULL, 0);
  if (size > 0)
    crc = crc32(crc, payload, static_cast<uInt>(size));
  append(tk::package::kFormatVersion, 4);
  append(tk::package::kHeaderBytes, 4);
  append(size, 8);
  append(crc, 4);
  append(0, 4);
  return file + std::string(reinterpret_cast<const char *>(payload), size);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  // The first byte: 0 for a file as it is, 1 for a payload behind a right
  // header.
  std::string file =
      data[0] % 2
          ? wrap(data + 1, size - 1)
          : std::string(reinterpret_cast<const char *>(data + 1), size - 1);
  tk::package::Package package;
  std::string error;
  if (!tk::package::read(file.data(), file.size(), package, error)) {
    require(!error.empty(), "a package refused without a message");
    return 0;
  }
  std::string written;
  require(tk::package::write(package, written, error),
          "an accepted package the writer refuses: " + error);
  require(written == file,
          "an accepted package that does not write back byte for byte");
  return 0;
}
