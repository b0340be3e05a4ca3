//===- Package.h - the Xe backend's binary format ---------------*- C++ -*-===//
//
// What compile() returns and executable_load() takes: one kernel as a SPIR-V
// module for OpenCL/Level Zero (always: any Intel GPU's driver can finalize
// it) plus, where Intel's offline compiler (ocloc) was installed when it was
// compiled, native device binaries for the targets tk knows. The runtime
// loads the native binary whose target is the device's, the SPIR-V
// otherwise.
//
// Layout, all integers little-endian:
//
//   char     magic[8]             "TKXE1\0\0\0"
//   uint32   format_version       kPackageFormatVersion
//   uint32   num_warps            subgroups of a workgroup
//   uint32   threads_per_block    work-items of a workgroup
//   uint32   subgroup_size        8, 16 or 32
//   uint32   shared_memory_bytes  SLM (static: the module declares it)
//   uint32   matrix_dots          tk.dot ops given to DPAS
//   uint32   target length, then the bytes: the target compiled for ("pvc")
//   uint32   entry length,  then the bytes: the kernel's name
//   uint32   options length, then the bytes: IGC's build options for the
//            SPIR-V ("-ze-opt-large-register-file" or empty)
//   uint64   spirv length,  then the SPIR-V words
//   uint32   native binaries, then for each:
//     uint32   target length, then the bytes ("pvc", "dg2")
//     uint32   grf_registers      GRFs a thread (IGC's NumGRFRequired)
//     uint32   scratch_bytes      scratch and private memory a hardware
//                                 thread (IGC's patch tokens; spills)
//     uint32   dpas_instructions  in the kernel's code (iga64's count)
//     uint64   length, then the bytes (ocloc's output)
//
// and nothing after. Every length is checked against what is left, so a
// truncated or corrupt package is an error, never an overread.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_XE_COMPILER_PACKAGE_H_
#define TK_BACKENDS_XE_COMPILER_PACKAGE_H_

#include "tk/tk.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tk::xe {

/// Bumped whenever the layout above changes; older packages are refused
/// (the runtime's cache then recompiles).
constexpr uint32_t kPackageFormatVersion = 1;

/// A device binary ocloc built from the package's SPIR-V for one target.
struct NativeBinary {
  /// tk's target name: "pvc", "dg2".
  std::string target;
  int32_t grfRegisters = 0;
  /// Scratch and private memory a hardware thread, as IGC reports them.
  int32_t scratchBytes = 0;
  int32_t dpasInstructions = 0;
  std::string bytes;
};

struct Package {
  /// The target the SPIR-V was lowered for (its subgroup size and DPAS).
  std::string target;
  std::string entry;
  /// The build options the driver's compile of the SPIR-V takes (the ones
  /// the native binaries were built with): the register mode.
  std::string buildOptions;
  int32_t numWarps = 0;
  int32_t threadsPerBlock = 0;
  int32_t subgroupSize = 0;
  int32_t sharedMemoryBytes = 0;
  /// tk.dot ops given to DPAS: when not 0, the native code must hold dpas.
  int32_t matrixDots = 0;
  std::string spirv;
  std::vector<NativeBinary> natives;

  /// The native binary for `target`, or null.
  const NativeBinary *nativeFor(const std::string &target) const;
};

/// The bytes of `package` in the layout above.
std::string serializePackage(const Package &package);

/// Parses and checks a package (lengths, a sane launch shape, an entry,
/// SPIR-V's magic number). TK_ERROR_INVALID_ARGUMENT with the reason
/// otherwise.
tk_status parsePackage(const void *data, size_t size, Package &out,
                       std::string &error);

} // namespace tk::xe

#endif // TK_BACKENDS_XE_COMPILER_PACKAGE_H_
