//===- Package.h - the CUDA backend's binary format -------------*- C++ -*-===//
//
// What compile() returns and executable_load() takes: one kernel as a cubin
// for the target it was compiled for, plus the PTX it came from (the driver
// JIT-compiles it on GPUs the cubin cannot run on), and what a launch needs
// to know (threads per block, dynamic shared memory).
//
// Layout, all integers little-endian:
//
//   char     magic[8]           "TKCUDA1\0"
//   uint32   format_version     kPackageFormatVersion
//   uint32   num_warps
//   uint32   threads_per_block
//   uint32   shared_memory_bytes (dynamic, passed at launch)
//   uint32   registers_per_thread (from ptxas; 0 if unknown)
//   uint32   arch length,  then the bytes ("sm_90a")
//   uint32   entry length, then the bytes (the kernel's symbol)
//   uint64   ptx length,   then the bytes
//   uint64   cubin length, then the bytes
//
// and nothing after. The parser checks every length against what is left,
// so a truncated or corrupt package is an error, never an overread.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CUDA_COMPILER_PACKAGE_H_
#define TK_BACKENDS_CUDA_COMPILER_PACKAGE_H_

#include "tk/tk.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tk::cuda {

/// Bumped whenever the layout above changes; older packages are refused
/// (the runtime's cache then recompiles).
constexpr uint32_t kPackageFormatVersion = 1;

struct Package {
  /// The target the cubin is for ("sm_90a").
  std::string arch;
  std::string entry;
  int32_t numWarps = 0;
  int32_t threadsPerBlock = 0;
  int32_t sharedMemoryBytes = 0;
  int32_t registersPerThread = 0;
  std::string ptx;
  std::string cubin;
};

/// The bytes of `package` in the layout above.
std::string serializePackage(const Package &package);

/// Parses and checks a package (lengths, a sane launch shape, an entry, PTX
/// or a cubin). TK_ERROR_INVALID_ARGUMENT with the reason otherwise.
tk_status parsePackage(const void *data, size_t size, Package &out,
                       std::string &error);

/// Checks that `cubin` is a 64-bit ELF file for NVIDIA GPUs (EM_CUDA).
tk_status checkCubin(const std::string &cubin, std::string &error);

/// parsePackage, then checkCubin: what the plugin's validate() does.
tk_status validatePackage(const void *data, size_t size, std::string &error);

} // namespace tk::cuda

#endif // TK_BACKENDS_CUDA_COMPILER_PACKAGE_H_
