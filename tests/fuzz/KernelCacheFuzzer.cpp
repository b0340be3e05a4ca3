//===- KernelCacheFuzzer.cpp - disk cache entries as the runtime reads them
//===//
//
// One input is the bytes of a `<key>.tkbin` file, read with
// KernelCache::readEntry for the key the file's name would carry. The first
// input byte says how much of the entry the fuzzer repairs before writing
// it, so that inputs reach past the checks a random file fails first:
//   bit 0: look the entry up under the key its header holds (else a key no
//          header holds);
//   bit 1: put the payload's true size and xxh3 in the header.
// A corrupt entry must say why; a found one must hold what the file holds.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "tk/runtime/KernelCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/xxhash.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using tk::fuzz::require;
using tk::runtime::CacheKey;
using tk::runtime::CompiledBinary;
using tk::runtime::KernelCache;

namespace {
// The file layout KernelCache.h describes.
constexpr size_t kHeaderBytes = 64;
constexpr size_t kKeyOffset = 16;
constexpr size_t kPayloadSizeOffset = 48;
constexpr size_t kChecksumOffset = 56;
constexpr size_t kMetadataBytes = 16;

/// A file of this process's own, in memory where the system has /dev/shm.
const std::string &scratchPath() {
  static const std::string path = [] {
    llvm::SmallString<128> model(
        llvm::sys::fs::is_directory("/dev/shm") ? "/dev/shm" : "/tmp");
    model += "/tk-fuzz-cache-%%%%%%%%.tkbin";
    llvm::SmallString<128> result;
    llvm::sys::fs::createUniquePath(model, result, /*MakeAbsolute=*/false);
    return std::string(result);
  }();
  return path;
}

void removeScratch() { std::remove(scratchPath().c_str()); }
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  std::atexit(removeScratch);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  uint8_t repairs = data[0];
  std::string file(reinterpret_cast<const char *>(data + 1), size - 1);

  CacheKey key;
  key.fill(0xA5);
  if ((repairs & 1) && file.size() >= kKeyOffset + key.size())
    std::memcpy(key.data(), file.data() + kKeyOffset, key.size());
  if ((repairs & 2) && file.size() >= kHeaderBytes) {
    llvm::StringRef payload = llvm::StringRef(file).drop_front(kHeaderBytes);
    uint64_t payloadSize = payload.size();
    uint64_t checksum = llvm::xxh3_64bits(payload);
    std::memcpy(&file[kPayloadSizeOffset], &payloadSize, 8);
    std::memcpy(&file[kChecksumOffset], &checksum, 8);
  }

  FILE *out = std::fopen(scratchPath().c_str(), "wb");
  require(out != nullptr, "cannot write " + scratchPath());
  require(std::fwrite(file.data(), 1, file.size(), out) == file.size() &&
              std::fclose(out) == 0,
          "cannot write " + scratchPath());

  CompiledBinary binary;
  std::string why;
  switch (KernelCache::readEntry(scratchPath(), key, binary, why)) {
  case KernelCache::ReadResult::Missing:
    require(false, "an entry that exists was reported missing");
    break;
  case KernelCache::ReadResult::Corrupt:
    require(!why.empty(), "a corrupt entry without a reason");
    break;
  case KernelCache::ReadResult::Found:
    require(file.size() > kHeaderBytes + kMetadataBytes,
            "a " + std::to_string(file.size()) + "-byte file was found whole");
    require(binary.data.size() == file.size() - kHeaderBytes - kMetadataBytes &&
                std::memcmp(binary.data.data(),
                            file.data() + kHeaderBytes + kMetadataBytes,
                            binary.data.size()) == 0,
            "the binary read is not the one the file holds");
    break;
  }
  return 0;
}
