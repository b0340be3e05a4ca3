//===- BytecodeCheck.cpp - bytecode read first in another process ---------===//

#include "tk/runtime/BytecodeCheck.h"
#include "tk/runtime/PluginLoader.h"

#include "tk/core/CompileSupport.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include <signal.h>

using namespace tk::runtime;

namespace {
constexpr llvm::StringLiteral kProgram = "tk-bytecode-check";
/// Reading a kernel takes milliseconds; a file that keeps the reader busy
/// this long is hostile.
constexpr unsigned kSeconds = 20;
/// Megabytes of address space the reader may take. None under a sanitizer
/// (ASan, TSan, MSan), whose shadow memory reserves terabytes of it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||     \
    __has_feature(memory_sanitizer)
#define TK_SANITIZED 1
#endif
#endif
#ifdef TK_SANITIZED
constexpr unsigned kMemoryLimitMB = 0;
#else
constexpr unsigned kMemoryLimitMB = 4096;
#endif
/// Bytecode that passed, by SHA-256; cleared when it holds this many.
constexpr size_t kRememberedLimit = 4096;

using Digest = std::array<uint8_t, 32>;

struct Remembered {
  std::mutex mutex;
  std::set<Digest> digests;
};

Remembered &remembered() {
  // Leaked on purpose: kernels may be created from static destructors.
  static Remembered *set = new Remembered();
  return *set;
}

/// TK_BYTECODE_CHECK, else beside libtk.so (a build tree), else in its tk/
/// folder (installed, with the plugins).
std::string findProgram(std::string &looked) {
  if (const char *set = std::getenv("TK_BYTECODE_CHECK"); set && *set) {
    looked = std::string("TK_BYTECODE_CHECK=") + set;
    return llvm::sys::fs::can_execute(set) ? set : "";
  }
  std::string libraryDir = PluginLoader::getLibraryDirectory();
  for (llvm::StringRef sub : {"", "tk"}) {
    llvm::SmallString<256> path(libraryDir);
    llvm::sys::path::append(path, sub, kProgram);
    looked += (looked.empty() ? "" : ", ") + std::string(path);
    if (llvm::sys::fs::can_execute(path))
      return std::string(path);
  }
  return "";
}

/// Runs `program` (posix_spawn, so safe in a threaded process) and waits
/// for it, killing it after kSeconds: its exit code, or -2 with `failure`
/// saying why it did not exit (a signal, the deadline), -1 when it did not
/// start. Polls rather than let llvm::sys::Wait time it: that sets a
/// process-wide SIGALRM, which is the caller's, not tk's.
int runWithDeadline(llvm::StringRef program,
                    llvm::ArrayRef<llvm::StringRef> argv,
                    llvm::ArrayRef<std::optional<llvm::StringRef>> redirects,
                    std::string &failure) {
  llvm::sys::ProcessInfo child = llvm::sys::ExecuteNoWait(
      program, argv, std::nullopt, redirects, kMemoryLimitMB, &failure);
  if (child.Pid == llvm::sys::ProcessInfo::InvalidPid)
    return -1;
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(kSeconds);
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    // A wait of 0 seconds does not block: Pid is 0 while it runs.
    llvm::sys::ProcessInfo done = llvm::sys::Wait(child, 0, &failure);
    if (done.Pid != 0)
      return done.ReturnCode;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child.Pid, SIGKILL);
      llvm::sys::Wait(child, std::nullopt, &failure);
      failure = "killed after " + std::to_string(kSeconds) + " s";
      return -2;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

} // namespace

Status tk::runtime::checkBytecodeApart(llvm::StringRef bytes) {
  Digest digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes));
  {
    Remembered &set = remembered();
    std::lock_guard<std::mutex> lock(set.mutex);
    if (set.digests.count(digest))
      return Status::success();
  }

  std::string looked;
  std::string program = findProgram(looked);
  if (program.empty())
    return Status(TK_ERROR_NOT_FOUND,
                  "cannot read TK_SOURCE_BYTECODE: " + kProgram.str() +
                      ", which reads bytecode in a process of its own before "
                      "tk reads it in yours, is not found (looked at " +
                      looked + ")");

  // Both removed on return, whatever it is.
  llvm::SmallString<128> input, errors;
  std::optional<llvm::FileRemover> removeInput, removeErrors;
  int fd = -1;
  std::error_code error =
      llvm::sys::fs::createTemporaryFile("tk-bytecode", "mlirbc", fd, input);
  if (!error) {
    removeInput.emplace(input);
    error = tk::writeWholeFile(fd, bytes);
  }
  if (!error) {
    error = llvm::sys::fs::createTemporaryFile("tk-bytecode", "log", errors);
    if (!error)
      removeErrors.emplace(errors);
  }
  if (error)
    return Status(TK_ERROR_IO, "cannot write a temporary file for " +
                                   kProgram.str() + ": " + error.message());

  llvm::StringRef argv[] = {program};
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(input),
                                                llvm::StringRef("/dev/null"),
                                                llvm::StringRef(errors)};
  std::string failure;
  int code = runWithDeadline(program, argv, redirects, failure);
  std::string said;
  if (auto log = llvm::MemoryBuffer::getFile(errors))
    said = (*log)->getBuffer().rtrim().take_front(4000).str();

  if (code == 0) {
    Remembered &set = remembered();
    std::lock_guard<std::mutex> lock(set.mutex);
    if (set.digests.size() >= kRememberedLimit)
      set.digests.clear();
    set.digests.insert(digest);
    return Status::success();
  }
  if (code == 1)
    return Status(TK_ERROR_INVALID_IR,
                  "the kernel bytecode does not read or verify:\n" +
                      (said.empty() ? std::string("(no diagnostic)") : said));
  return Status(
      TK_ERROR_INVALID_IR,
      "the kernel bytecode is refused: MLIR's bytecode reader, run "
      "on it in a process of its own (" +
          kProgram.str() + ", at most " + std::to_string(kSeconds) + " s" +
          (kMemoryLimitMB ? " and " + std::to_string(kMemoryLimitMB) + " MB"
                          : std::string()) +
          "), did not finish: " +
          (failure.empty() ? "exit code " + std::to_string(code) : failure) +
          (said.empty() ? "" : "\n" + said));
}
