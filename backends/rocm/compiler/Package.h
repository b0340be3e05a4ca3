//===- Package.h - the ROCm backend's binary format -------------*- C++ -*-===//
//
// What compile() returns and executable_load() takes: one kernel as an AMDGPU
// code object (hsaco) for the gfx target it was compiled for, and what a
// launch and the checks of the code object need to know. The figures the
// hardware's loader reads again (kernarg size, LDS, wave size, registers,
// scratch) are taken from the code object's own metadata when it is
// packaged, so validate() can hold the two against each other.
//
// Layout, all integers little-endian:
//
//   char     magic[8]            "TKROCM1\0"
//   uint32   format_version      kPackageFormatVersion
//   uint32   num_warps           (waves of a workgroup)
//   uint32   threads_per_block
//   uint32   wave_size           32 or 64
//   uint32   shared_memory_bytes LDS (static: the code object declares it)
//   uint32   kernarg_bytes
//   uint32   vgprs, sgprs        per lane, per wave
//   uint32   scratch_bytes       private segment per lane (spills)
//   uint32   matrix_dots         tk.dot ops given to the matrix unit
//   uint32   arch length,  then the bytes ("gfx942")
//   uint32   entry length, then the bytes (the kernel's symbol)
//   uint64   hsaco length, then the bytes
//
// and nothing after. Every length is checked against what is left, so a
// truncated or corrupt package is an error, never an overread.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_ROCM_COMPILER_PACKAGE_H_
#define TK_BACKENDS_ROCM_COMPILER_PACKAGE_H_

#include "tk/tk.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tk::rocm {

/// Bumped whenever the layout above changes; older packages are refused
/// (the runtime's cache then recompiles).
constexpr uint32_t kPackageFormatVersion = 1;

struct Package {
  /// The gfx target the code object is for ("gfx942").
  std::string arch;
  std::string entry;
  int32_t numWarps = 0;
  int32_t threadsPerBlock = 0;
  int32_t waveSize = 0;
  int32_t sharedMemoryBytes = 0;
  int32_t kernargBytes = 0;
  int32_t vgprs = 0;
  int32_t sgprs = 0;
  int32_t scratchBytes = 0;
  /// tk.dot ops the matrix unit (MFMA, WMMA) computes: when not 0, the code
  /// object must hold matrix instructions.
  int32_t matrixDots = 0;
  std::string hsaco;
};

/// The bytes of `package` in the layout above.
std::string serializePackage(const Package &package);

/// Parses and checks a package (lengths, a sane launch shape, an entry, an
/// ELF code object for AMDGPU). TK_ERROR_INVALID_ARGUMENT with the reason
/// otherwise.
tk_status parsePackage(const void *data, size_t size, Package &out,
                       std::string &error);

} // namespace tk::rocm

#endif // TK_BACKENDS_ROCM_COMPILER_PACKAGE_H_
