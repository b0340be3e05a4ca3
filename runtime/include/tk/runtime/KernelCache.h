//===- KernelCache.h - compiled kernels in memory and on disk ---*- C++ -*-===//
//
// Compiled binaries keyed by a SHA-256 of everything that decides the code
// (IR bytecode, entry, options, backend, arch, compiler and tk versions).
// Lookups go to memory, then to the disk cache folder, then to the compiler;
// a key is compiled once even when many threads ask for it at the same time.
//
// Disk entries are one file per key, `<hex key>.tkbin`:
//
//   header (64 bytes): magic "TKCACHE\0", format version, header size,
//                      key (32 bytes), payload size, xxh3-64 of the payload
//   payload:           metadata (num_warps, shared memory bytes, registers
//                      per thread, reserved; 4 x int32), then the binary
//
// Entries are written to a temporary file in the same folder and renamed
// into place, so readers (other threads, other processes) never see half an
// entry. An entry that fails any check is logged, deleted and recompiled.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_KERNELCACHE_H_
#define TK_RUNTIME_KERNELCACHE_H_

#include "tk/runtime/CompiledBinary.h"
#include "tk/runtime/Status.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SHA256.h"

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tk::runtime {

using CacheKey = std::array<uint8_t, 32>;

/// Hashes the parts of a cache key. Each part is length-prefixed, so that
/// ("ab", "c") and ("a", "bc") give different keys.
class CacheKeyBuilder {
public:
  CacheKeyBuilder &add(llvm::StringRef bytes);
  CacheKeyBuilder &add(int64_t value);
  CacheKey finish() { return hasher.final(); }

private:
  llvm::SHA256 hasher;
};

class KernelCache {
public:
  /// Bumped whenever the file layout changes; older entries are recompiled.
  static constexpr uint32_t kFormatVersion = 1;

  /// Where a lookup found its binary (BinaryOrigin::Package is never the
  /// cache's answer).
  using Origin = BinaryOrigin;

  /// Produces the binary on a miss.
  using CompileFn = llvm::function_ref<Status(CompiledBinary &)>;

  /// The binary for `key`: from memory, else from disk, else from `compile`
  /// (then stored in both). Concurrent callers with one key share a single
  /// compile; if it fails they all get its status and the next call retries.
  /// `forceCompile` skips both lookups (TK_DUMP_IR wants a real compile).
  Status getOrCompile(const CacheKey &key, CompileFn compile,
                      std::shared_ptr<const CompiledBinary> &out,
                      Origin *origin = nullptr, bool forceCompile = false);

  /// Forgets the in-memory entries (the disk cache stays).
  void clearMemory();

  /// TK_CACHE_DIR when set (empty: no disk cache), else $XDG_CACHE_HOME/tk,
  /// else $HOME/.cache/tk; "" when there is none. Read at every lookup.
  static std::string getDirectory();
  static std::string toHex(const CacheKey &key);
  static std::string getEntryPath(llvm::StringRef directory,
                                  const CacheKey &key);

  /// Reads the entry file at `path`. Missing: no file. Corrupt: `why` says
  /// which check failed; the caller deletes it.
  enum class ReadResult { Found, Missing, Corrupt };
  static ReadResult readEntry(const std::string &path, const CacheKey &key,
                              CompiledBinary &out, std::string &why);
  /// Writes an entry atomically (temporary file + rename) under `directory`,
  /// creating the folder if needed.
  static Status writeEntry(const std::string &directory, const CacheKey &key,
                           const CompiledBinary &binary);

  struct Statistics {
    uint64_t memoryHits = 0;
    uint64_t diskHits = 0;
    uint64_t compiles = 0;
    uint64_t corruptEntries = 0;
  };
  Statistics getStatistics() const;

private:
  /// One key's slot; `done` turns true once `binary` or `status` is set.
  struct Entry {
    bool done = false;
    std::shared_ptr<const CompiledBinary> binary;
    Status status;
  };

  /// Disk lookup, then compile; stores to disk on a compile.
  Status load(const CacheKey &key, CompileFn compile, bool forceCompile,
              std::shared_ptr<const CompiledBinary> &out, Origin &origin);

  std::mutex mutex;
  std::condition_variable finished;
  std::map<CacheKey, std::shared_ptr<Entry>> entries;

  std::atomic<uint64_t> memoryHits{0};
  std::atomic<uint64_t> diskHits{0};
  std::atomic<uint64_t> compiles{0};
  std::atomic<uint64_t> corruptEntries{0};
};

} // namespace tk::runtime

#endif // TK_RUNTIME_KERNELCACHE_H_
