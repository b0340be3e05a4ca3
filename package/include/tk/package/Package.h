//===- Package.h - kernels for several targets in one file ------*- C++ -*-===//
//
// A `.tkpkg` file holds compiled kernels, each with the signature a launch
// is checked against and one binary per target (the bytes a plugin's
// compile returned for it, and the launch facts that came with them), so
// that a program loads a kernel on any device the package was built for
// without compiling it (tk_kernel_create with TK_SOURCE_PACKAGE).
//
//   header (32 bytes): magic "TKPKG\0\0\0", format version (u32), header
//                      size (u32), payload size (u64), CRC-32 of the
//                      payload (u32), reserved (u32, 0)
//   payload:           the kernel count, then each kernel: entry, requested
//                      num_warps and num_stages, arguments (name, IR type,
//                      plugin argument kind, divisibility, alignment, element
//                      bytes), binaries (backend, target, compiler, num_warps,
//                      shared memory, registers per thread, the bytes)
//
// Integers are little-endian, strings and byte runs follow their length.
// Reading checks every length against what is left and every count against
// a limit before using it, so a truncated or corrupt file is an error naming
// the byte where it went wrong, never an overread. No LLVM: the runtime that
// loads packages stays small.
//
//===----------------------------------------------------------------------===//

#ifndef TK_PACKAGE_PACKAGE_H_
#define TK_PACKAGE_PACKAGE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tk::package {

/// Bumped whenever the layout changes; a reader refuses other versions.
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr char kMagic[8] = {'T', 'K', 'P', 'K', 'G', 0, 0, 0};
inline constexpr size_t kHeaderBytes = 32;

/// Limits a reader holds a package to (a writer refuses more).
inline constexpr uint32_t kMaxKernels = 4096;
inline constexpr uint32_t kMaxArguments = 256;
inline constexpr uint32_t kMaxBinaries = 64;
inline constexpr uint32_t kMaxStringBytes = 4096;

/// One argument of a kernel's signature (tk::runtime::KernelArgument).
struct Argument {
  std::string name;
  std::string typeName;
  /// A tk_plugin_arg_type.
  uint32_t kind = 0;
  int64_t divisibility = 1;
  int64_t alignment = 1;
  int64_t elementBytes = 0;
};

/// The code of a kernel for one target, as a plugin's compile returned it.
struct Binary {
  /// The plugin's name ("cuda") and its compile_target for the devices the
  /// code is for ("sm_90a"): what a device must report to take it.
  std::string backend;
  std::string target;
  /// The plugin's compiler_version when it compiled the code.
  std::string compiler;
  int32_t numWarps = 0;
  int32_t sharedMemoryBytes = 0;
  int32_t registersPerThread = 0;
  std::string bytes;
};

struct Kernel {
  std::string entry;
  /// The num_warps and num_stages it was compiled with (0: the default).
  int32_t numWarps = 0;
  int32_t numStages = 0;
  std::vector<Argument> arguments;
  std::vector<Binary> binaries;
};

struct Package {
  std::vector<Kernel> kernels;

  /// The kernel named `entry`, or null.
  const Kernel *find(const std::string &entry) const;
};

/// The file's bytes; false with the reason (a limit exceeded, an empty
/// entry, a kernel named twice, two binaries for one target) when `package`
/// cannot be written as one.
bool write(const Package &package, std::string &out, std::string &error);

/// Parses a package; false with a message naming the byte offset and the
/// field where the bytes stop being one.
bool read(const void *data, size_t size, Package &out, std::string &error);

} // namespace tk::package

#endif // TK_PACKAGE_PACKAGE_H_
