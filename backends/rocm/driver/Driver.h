//===- Driver.h - libamdhip64, opened at run time ---------------*- C++ -*-===//
//
// The HIP runtime is never linked: the plugin opens libamdhip64 with dlopen
// and resolves the symbols of HipSymbols.def into one table, so the plugin
// builds without ROCm and loads on machines without it (or without an AMD
// GPU), reporting "no device" there.
//
// No HIP header is included either: the few types, enum values and flags tk
// passes are declared below, with where each number comes from. They are
// the ABI of libamdhip64 5.0 and later, which the runtime's own version
// (hipRuntimeGetVersion) must confirm before anything else is called.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_ROCM_DRIVER_DRIVER_H_
#define TK_BACKENDS_ROCM_DRIVER_DRIVER_H_

#include "tk/tk.h"

#include <cstddef>
#include <string>

namespace tk::rocm {

//===--- HIP's types ------------------------------------------------------===//

/// hipError_t: a C enum in hip_runtime_api.h, an int on the ABI.
using hipError_t = int;
constexpr hipError_t hipSuccess = 0;
/// The errors of HipErrors.def, by name (hipErrorNoDevice = 100, ...).
#define TK_HIP_ERROR(name, value, tk) constexpr hipError_t name = value;
#include "driver/HipErrors.def"

/// A device as hipDeviceGet returns it: the ordinal, in every HIP so far.
using hipDevice_t = int;

/// Opaque handles: pointers to the runtime's structs, whose names (ihip*)
/// are those of hip_runtime_api.h; tk never looks inside.
struct ihipModule_t;
struct ihipModuleSymbol_t;
struct ihipStream_t;
struct ihipEvent_t;
using hipModule_t = ihipModule_t *;
using hipFunction_t = ihipModuleSymbol_t *;
using hipStream_t = ihipStream_t *;
using hipEvent_t = ihipEvent_t *;

/// The hipDeviceAttribute_t values tk queries. ROCm 5.0 renumbered this enum
/// (in ROCm 4.x hipDeviceAttributeMaxThreadsPerBlock was 0; 5.0 reordered it
/// after CUDA's names, starting at hipDeviceAttributeCudaCompatibleBegin = 0),
/// which is why openDriver refuses a runtime older than 5.0. The numbers are
/// those of include/hip/hip_runtime_api.h in ROCm/HIP, evaluated by a
/// compiler at the tags rocm-5.0.0, rocm-5.2.3, rocm-5.7.1, rocm-6.0.0 and
/// rocm-6.2.2, which agree on each value below (later releases only append
/// to the enum). Not every runtime answers every attribute: HIP 5's
/// hipDeviceGetAttribute (ROCm/hipamd, rocm-5.0.0 to rocm-5.6.1) returns
/// hipErrorInvalidValue for MaxRegistersPerMultiprocessor.
enum hipDeviceAttribute_t : int {
  hipDeviceAttributeClockRate = 5,               // kHz
  hipDeviceAttributeL2CacheSize = 19,            // bytes
  hipDeviceAttributeComputeCapabilityMajor = 23, // gfx942: 9
  hipDeviceAttributeMaxGridDimX = 29,
  hipDeviceAttributeMaxGridDimY = 30,
  hipDeviceAttributeMaxGridDimZ = 31,
  hipDeviceAttributeMaxThreadsPerBlock = 56,
  hipDeviceAttributeMaxThreadsPerMultiProcessor = 57,
  hipDeviceAttributeMemoryBusWidth = 59,         // bits
  hipDeviceAttributeMemoryClockRate = 60,        // kHz
  hipDeviceAttributeComputeCapabilityMinor = 61, // gfx942: 4, gfx90a: 0
  hipDeviceAttributeMultiprocessorCount = 63, // CUs (WGPs on RDNA in WGP mode)
  /// On AMD the CU's 32-bit registers (HIP 5 fills regsPerBlock with them).
  hipDeviceAttributeMaxRegistersPerBlock = 71,
  /// Answered by ROCm 6; HIP 5 refuses it.
  hipDeviceAttributeMaxRegistersPerMultiprocessor = 72,
  /// The workgroup's LDS limit (there is no opt-in above it on AMD).
  hipDeviceAttributeMaxSharedMemoryPerBlock = 74,
  hipDeviceAttributeWarpSize = 87,
  /// AMD-specific values start at hipDeviceAttributeAmdSpecificBegin = 10000.
  hipDeviceAttributeMaxSharedMemoryPerMultiprocessor = 10002,
};

/// hipFunction_attribute (include/hip/driver_types.h; unchanged since ROCm
/// 4 because it follows CUDA's CUfunction_attribute).
enum hipFunction_attribute : int {
  HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  HIP_FUNC_ATTRIBUTE_NUM_REGS = 4, // VGPRs per lane
};

/// hipMemcpyKind (include/hip/driver_types.h).
enum hipMemcpyKind : int {
  hipMemcpyHostToDevice = 1,
  hipMemcpyDeviceToHost = 2,
  hipMemcpyDeviceToDevice = 3,
};

/// hipStreamCreateWithFlags' flags (#defines of hip_runtime_api.h).
constexpr unsigned int hipStreamDefault = 0x0;

/// hipRuntimeGetVersion's encoding (HIP_VERSION in hip_version.h, e.g.
/// 50221153 for HIP 5.2.21153): major * 10000000 + minor * 100000 + patch.
constexpr int kHipVersionMajorScale = 10000000;
constexpr int kHipVersionMinorScale = 100000;
/// HIP 5.0: the first with the hipDeviceAttribute_t values above.
constexpr int kMinimumHipVersion = 5 * kHipVersionMajorScale;

//===--- The runtime ------------------------------------------------------===//

/// The runtime's entry points, one pointer per symbol of HipSymbols.def.
struct DriverApi {
#define TK_HIP_REQUIRED(name, ret, params) ret(*name) params = nullptr;
#include "driver/HipSymbols.def"
};

/// Opens libamdhip64 and resolves its symbols, once per process; later calls
/// return the first outcome. TK_ROCM_HIP_LIBRARY, when set, names the
/// library to open (a path or a file name); otherwise libamdhip64.so, then
/// the sonames of ROCm 7, 6 and 5 are tried. TK_ERROR_NO_DEVICE, with the
/// reason in `error`, when no library opens, a required symbol is missing,
/// or the runtime is older than HIP 5.0.
tk_status openDriver(std::string &error);

/// The table openDriver filled; only valid after it succeeded.
const DriverApi &driver();

/// What openDriver opened, for messages: "libamdhip64.so.5 (HIP 5.2)".
/// Empty before openDriver succeeded.
const std::string &runtimeDescription();

/// hipRuntimeGetVersion's answer (0 before openDriver succeeded).
int runtimeVersion();

/// The tk_status a hipError_t is reported as (HipErrors.def).
tk_status statusOfHipError(hipError_t result);

/// "HIP error 'hipErrorOutOfMemory' (2): out of memory"; the text is left
/// out where the runtime's is only the name again (HIP 5).
std::string describeHipError(hipError_t result);

/// TK_SUCCESS for hipSuccess; otherwise the mapped status, with `error` set
/// to "tk-rocm: <call> failed: <describeHipError>".
tk_status checkHip(hipError_t result, const char *call, std::string &error);

} // namespace tk::rocm

/// Calls runtime entry point `name` and returns from the enclosing function
/// (whose `error` string receives the message) when it fails.
#define TK_HIP_RETURN_IF_ERROR(name, ...)                                      \
  do {                                                                         \
    if (tk_status tkHipStatus = ::tk::rocm::checkHip(                          \
            ::tk::rocm::driver().name(__VA_ARGS__), #name, error))             \
      return tkHipStatus;                                                      \
  } while (false)

#endif // TK_BACKENDS_ROCM_DRIVER_DRIVER_H_
