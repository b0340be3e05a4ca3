//===- KernelCache.cpp - compiled kernels in memory and on disk -----------===//
//
// The single-flight memory cache and the checked, atomically written disk
// entries described in KernelCache.h.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/KernelCache.h"
#include "tk/runtime/Runtime.h"

#include "tk/runtime/Logging.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

using namespace tk::runtime;

//===----------------------------------------------------------------------===//
// Keys
//===----------------------------------------------------------------------===//

CacheKeyBuilder &CacheKeyBuilder::add(llvm::StringRef bytes) {
  uint64_t size = bytes.size();
  hasher.update(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(&size), sizeof(size)));
  hasher.update(bytes);
  return *this;
}

CacheKeyBuilder &CacheKeyBuilder::add(int64_t value) {
  return add(
      llvm::StringRef(reinterpret_cast<const char *>(&value), sizeof(value)));
}

std::string KernelCache::toHex(const CacheKey &key) {
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(key.size() * 2);
  for (uint8_t byte : key) {
    hex.push_back(digits[byte >> 4]);
    hex.push_back(digits[byte & 15]);
  }
  return hex;
}

//===----------------------------------------------------------------------===//
// Disk entries
//===----------------------------------------------------------------------===//

namespace {
/// The fixed-size start of an entry file. Host byte order: the cache belongs
/// to one machine, and a foreign file fails the magic or checksum check.
struct FileHeader {
  char magic[8];
  uint32_t formatVersion;
  uint32_t headerSize;
  uint8_t key[32];
  uint64_t payloadSize;
  uint64_t checksum;
};
static_assert(sizeof(FileHeader) == 64, "the header layout is part of the "
                                        "file format");

/// The start of the payload.
struct FileMetadata {
  int32_t numWarps;
  int32_t sharedMemoryBytes;
  int32_t registersPerThread;
  int32_t reserved;
};
static_assert(sizeof(FileMetadata) == 16, "the metadata layout is part of the "
                                          "file format");
} // namespace

static constexpr char kMagic[8] = {'T', 'K', 'C', 'A', 'C', 'H', 'E', '\0'};

std::string KernelCache::getDirectory() {
  if (const char *dir = std::getenv("TK_CACHE_DIR"))
    return dir;
  llvm::SmallString<256> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    path = xdg;
  } else if (const char *home = std::getenv("HOME"); home && *home) {
    path = home;
    llvm::sys::path::append(path, ".cache");
  } else {
    return {};
  }
  llvm::sys::path::append(path, "tk");
  return std::string(path);
}

std::string KernelCache::getEntryPath(llvm::StringRef directory,
                                      const CacheKey &key) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, toHex(key) + ".tkbin");
  return std::string(path);
}

KernelCache::ReadResult KernelCache::readEntry(const std::string &path,
                                               const CacheKey &key,
                                               CompiledBinary &out,
                                               std::string &why) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file) {
    if (file.getError() != std::errc::no_such_file_or_directory)
      getLogger().warn("kernel cache: cannot read {}: {}", path,
                       file.getError().message());
    return ReadResult::Missing;
  }
  llvm::StringRef bytes = (*file)->getBuffer();
  FileHeader header;
  if (bytes.size() < sizeof(header)) {
    why = "truncated header (" + std::to_string(bytes.size()) + " bytes)";
    return ReadResult::Corrupt;
  }
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (std::memcmp(header.magic, kMagic, sizeof(kMagic)) != 0) {
    why = "bad magic";
    return ReadResult::Corrupt;
  }
  if (header.formatVersion != kFormatVersion ||
      header.headerSize != sizeof(FileHeader)) {
    why = "format version " + std::to_string(header.formatVersion) +
          ", expected " + std::to_string(kFormatVersion);
    return ReadResult::Corrupt;
  }
  if (std::memcmp(header.key, key.data(), key.size()) != 0) {
    why = "the key inside does not match the file name";
    return ReadResult::Corrupt;
  }
  llvm::StringRef payload = bytes.drop_front(sizeof(header));
  // A payload of metadata alone holds no binary: no compile writes one.
  if (header.payloadSize != payload.size() ||
      payload.size() <= sizeof(FileMetadata)) {
    why = "payload of " + std::to_string(payload.size()) +
          " bytes, header says " + std::to_string(header.payloadSize);
    return ReadResult::Corrupt;
  }
  if (llvm::xxh3_64bits(payload) != header.checksum) {
    why = "checksum mismatch";
    return ReadResult::Corrupt;
  }
  FileMetadata metadata;
  std::memcpy(&metadata, payload.data(), sizeof(metadata));
  llvm::StringRef binary = payload.drop_front(sizeof(metadata));
  out.data.assign(binary.bytes_begin(), binary.bytes_end());
  out.numWarps = metadata.numWarps;
  out.sharedMemoryBytes = metadata.sharedMemoryBytes;
  out.registersPerThread = metadata.registersPerThread;
  return ReadResult::Found;
}

Status KernelCache::writeEntry(const std::string &directory,
                               const CacheKey &key,
                               const CompiledBinary &binary) {
  if (std::error_code error = llvm::sys::fs::create_directories(directory))
    return Status(TK_ERROR_IO, "kernel cache: cannot create " + directory +
                                   ": " + error.message());

  FileMetadata metadata = {binary.numWarps, binary.sharedMemoryBytes,
                           binary.registersPerThread, 0};
  std::string payload(reinterpret_cast<const char *>(&metadata),
                      sizeof(metadata));
  payload.append(reinterpret_cast<const char *>(binary.data.data()),
                 binary.data.size());
  FileHeader header;
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  header.formatVersion = kFormatVersion;
  header.headerSize = sizeof(FileHeader);
  std::memcpy(header.key, key.data(), key.size());
  header.payloadSize = payload.size();
  header.checksum = llvm::xxh3_64bits(payload);

  // The temporary lives in the cache folder itself: rename is atomic only
  // within one file system.
  llvm::SmallString<256> model(directory);
  llvm::sys::path::append(model, toHex(key) + "-%%%%%%%%.tmp");
  int fd = -1;
  llvm::SmallString<256> temporary;
  if (std::error_code error =
          llvm::sys::fs::createUniqueFile(model, fd, temporary))
    return Status(TK_ERROR_IO, "kernel cache: cannot create a file in " +
                                   directory + ": " + error.message());
  {
    llvm::raw_fd_ostream stream(fd, /*shouldClose=*/true);
    stream.write(reinterpret_cast<const char *>(&header), sizeof(header));
    stream << payload;
    stream.close();
    if (stream.has_error()) {
      std::string message = stream.error().message();
      stream.clear_error();
      llvm::sys::fs::remove(temporary);
      return Status(TK_ERROR_IO, "kernel cache: cannot write " +
                                     std::string(temporary) + ": " + message);
    }
  }
  std::string path = getEntryPath(directory, key);
  if (std::error_code error = llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    return Status(TK_ERROR_IO, "kernel cache: cannot rename into " + path +
                                   ": " + error.message());
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Lookup
//===----------------------------------------------------------------------===//

Status KernelCache::load(const CacheKey &key, CompileFn compile,
                         bool forceCompile,
                         std::shared_ptr<const CompiledBinary> &out,
                         Origin &origin) {
  std::string directory = getDirectory();
  std::string path = directory.empty() ? "" : getEntryPath(directory, key);
  if (!path.empty() && !forceCompile) {
    auto binary = std::make_shared<CompiledBinary>();
    std::string why;
    switch (readEntry(path, key, *binary, why)) {
    case ReadResult::Found:
      getLogger().debug("kernel cache: disk hit {}", path);
      ++diskHits;
      origin = Origin::Disk;
      out = std::move(binary);
      return Status::success();
    case ReadResult::Corrupt:
      // A crash mid-write cannot cause this (writes are atomic), but a full
      // disk, a foreign file or a format change can; recompiling fixes it.
      getLogger().warn("kernel cache: deleting corrupt entry {} ({}); "
                       "recompiling",
                       path, why);
      ++corruptEntries;
      llvm::sys::fs::remove(path);
      break;
    case ReadResult::Missing:
      break;
    }
  }

  auto binary = std::make_shared<CompiledBinary>();
  auto start = std::chrono::steady_clock::now();
  TK_RETURN_IF_ERROR(compile(*binary));
  ++compiles;
  getLogger().info("kernel cache: compiled {} in {} ms",
                   toHex(key).substr(0, 16),
                   std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - start)
                       .count());
  if (!path.empty()) {
    // A cache that cannot be written costs time, not correctness.
    Status written = writeEntry(directory, key, *binary);
    if (!written.isOk())
      getLogger().warn("{}", written.message());
  }
  origin = Origin::Compiler;
  out = std::move(binary);
  return Status::success();
}

Status KernelCache::getOrCompile(const CacheKey &key, CompileFn compile,
                                 std::shared_ptr<const CompiledBinary> &out,
                                 Origin *origin, bool forceCompile) {
  Origin found = Origin::Compiler;
  std::shared_ptr<Entry> entry;
  {
    std::unique_lock<std::mutex> lock(mutex);
    auto it = entries.find(key);
    if (it != entries.end() && !forceCompile) {
      entry = it->second;
      // Another thread is compiling this key: wait for its result rather
      // than compiling the same kernel twice.
      finished.wait(lock, [&] { return entry->done; });
      if (!entry->status.isOk())
        return entry->status;
      ++memoryHits;
      out = entry->binary;
      if (origin)
        *origin = Origin::Memory;
      return Status::success();
    }
    entry = std::make_shared<Entry>();
    entries[key] = entry;
  }

  // Compile outside the lock: other keys proceed meanwhile.
  std::shared_ptr<const CompiledBinary> binary;
  Status status = load(key, compile, forceCompile, binary, found);
  {
    std::lock_guard<std::mutex> lock(mutex);
    entry->done = true;
    if (status.isOk()) {
      entry->binary = binary;
    } else {
      entry->status = status;
      auto it = entries.find(key);
      if (it != entries.end() && it->second == entry)
        entries.erase(it);
    }
  }
  finished.notify_all();
  if (!status.isOk())
    return status;
  out = std::move(binary);
  if (origin)
    *origin = found;
  return Status::success();
}

void KernelCache::clearMemory() {
  std::lock_guard<std::mutex> lock(mutex);
  // Entries still compiling stay: their owners will fill them in.
  for (auto it = entries.begin(); it != entries.end();) {
    if (it->second->done)
      it = entries.erase(it);
    else
      ++it;
  }
}

KernelCache::Statistics KernelCache::getStatistics() const {
  Statistics statistics;
  statistics.memoryHits = memoryHits.load();
  statistics.diskHits = diskHits.load();
  statistics.compiles = compiles.load();
  statistics.corruptEntries = corruptEntries.load();
  return statistics;
}

KernelCache &Runtime::getKernelCache() {
  std::call_once(kernelCacheOnce,
                 [this] { kernelCache = std::make_shared<KernelCache>(); });
  return *kernelCache;
}
