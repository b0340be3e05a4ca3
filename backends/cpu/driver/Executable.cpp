//===- Executable.cpp - a loaded CPU kernel ---------------------*- C++ -*-===//
//
// Loads the shared object the compiler made (an ld.lld -shared link of the
// kernel's object) with the dynamic loader, from an anonymous in-memory file:
// nothing is written to disk, and libm, libc and the runtime helpers LLVM may
// call (memcpy, __truncsfhf2, ...) resolve against the process as they would
// for any library it opens. No LLVM: the driver-only plugin loads these too.
//
//===----------------------------------------------------------------------===//

#include "driver/Executable.h"
#include "compiler/DeviceTarget.h"

#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <mutex>
#include <set>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace tk::cpu {

namespace {
/// The /proc/self/fd/<n> names of the libraries loaded now. The dynamic
/// loader matches a name it has loaded before it looks at the file, so a
/// kernel opened under a name a loaded kernel has would be that kernel: each
/// load takes a number no loaded kernel's name has.
std::mutex namesMutex;
std::set<int> namesInUse;

/// Closes `fd` and returns a descriptor of the same file whose number no
/// loaded kernel's name has (-1 with errno set on failure).
int takeUnusedNumber(int fd) {
  std::lock_guard<std::mutex> lock(namesMutex);
  std::vector<int> held;
  int candidate = fd;
  while (candidate >= 0 && namesInUse.count(candidate)) {
    held.push_back(candidate);
    candidate = fcntl(fd, F_DUPFD_CLOEXEC, candidate + 1);
  }
  for (int other : held)
    close(other);
  if (candidate >= 0)
    namesInUse.insert(candidate);
  return candidate;
}
} // namespace

Executable::~Executable() {
  if (library)
    dlclose(library);
  if (nameNumber >= 0) {
    std::lock_guard<std::mutex> lock(namesMutex);
    namesInUse.erase(nameNumber);
  }
}

namespace {
/// The ELF header's e_type of a 64-bit little-endian x86-64 shared object.
bool isSharedObject(const void *data, size_t size) {
  const auto *bytes = static_cast<const unsigned char *>(data);
  constexpr unsigned char kMagic[] = {0x7f, 'E', 'L', 'F'};
  constexpr unsigned kElfClass64 = 2, kLittleEndian = 1, kSharedType = 3;
  return size >= 64 && std::memcmp(bytes, kMagic, 4) == 0 &&
         bytes[4] == kElfClass64 && bytes[5] == kLittleEndian &&
         (bytes[16] | bytes[17] << 8) == kSharedType;
}

/// dlerror's text, or `fallback` when it has none.
std::string loaderError(const char *fallback) {
  const char *text = dlerror();
  return text ? text : fallback;
}
} // namespace

tk_status loadExecutable(const void *object, size_t size,
                         const std::string &entry,
                         std::unique_ptr<Executable> &out, std::string &error) {
  // The loader trusts what it maps: only a shared object's header gets
  // there, and packages are checksummed before their binaries reach here.
  if (!object || !isSharedObject(object, size)) {
    error = "tk-cpu: the binary of kernel '" + entry +
            "' is not a 64-bit ELF shared object (an object of an older "
            "tk-cpu, or not a tk-cpu binary)";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  int fd = memfd_create(("tk-cpu-" + entry).c_str(), MFD_CLOEXEC);
  if (fd < 0) {
    error = std::string("tk-cpu: memfd_create: ") + std::strerror(errno);
    return TK_ERROR_IO;
  }
  const char *bytes = static_cast<const char *>(object);
  for (size_t written = 0; written < size;) {
    ssize_t n = write(fd, bytes + written, size - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = std::string("tk-cpu: writing the kernel's shared object: ") +
              std::strerror(errno);
      close(fd);
      return TK_ERROR_IO;
    }
    written += size_t(n);
  }
  fd = takeUnusedNumber(fd);
  if (fd < 0) {
    error = std::string("tk-cpu: fcntl: ") + std::strerror(errno);
    return TK_ERROR_IO;
  }
  auto executable = std::make_unique<Executable>();
  executable->nameNumber = fd;
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  // RTLD_NOW: a symbol the kernel needs and the process lacks is an error
  // here, not at a launch. RTLD_LOCAL: kernels do not see each other.
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  close(fd);
  if (!library) {
    error = "tk-cpu: cannot load kernel '" + entry +
            "': " + loaderError("dlopen failed");
    return TK_ERROR_INVALID_ARGUMENT;
  }
  executable->library = library;
  std::string symbol = entry + kLaunchSymbolSuffix;
  void *launch = dlsym(library, symbol.c_str());
  if (!launch) {
    error = "tk-cpu: cannot link kernel '" + entry + "': no " + symbol;
    return TK_ERROR_NOT_FOUND;
  }
  // The size of the program's tiles, which decides the threads it may run
  // on. Every object tk-cpu 4 makes has it.
  auto *stackBytes = static_cast<const uint64_t *>(
      dlsym(library, (entry + kStackBytesSymbolSuffix).c_str()));
  if (!stackBytes) {
    error = "tk-cpu: kernel '" + entry + "' has no tile size record";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  executable->tileStackBytes = *stackBytes;
  executable->launch = reinterpret_cast<LaunchFn>(launch);
  executable->entry = entry;
  out = std::move(executable);
  return TK_SUCCESS;
}

} // namespace tk::cpu
