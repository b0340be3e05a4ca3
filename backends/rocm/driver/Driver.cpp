//===- Driver.cpp - libamdhip64, opened at run time -------------*- C++ -*-===//
//
// dlopen of the HIP runtime, resolution of HipSymbols.def and the version
// gate, once per process; hipError_t names and statuses.
//
//===----------------------------------------------------------------------===//

#include "driver/Driver.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <iterator>
#include <mutex>
#include <vector>

namespace tk::rocm {

namespace {

/// Names tried in turn when TK_ROCM_HIP_LIBRARY is not set. The unversioned
/// name comes with ROCm's own packages (and Debian's libamdhip64-dev), the
/// sonames with the runtime alone (Debian's libamdhip64-5 has only
/// libamdhip64.so.5); the newest first, so a machine with several ROCm
/// installs gets the one it most likely means.
constexpr const char *kRuntimeLibraries[] = {
    "libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
    "libamdhip64.so.5"};

constexpr const char *kLibraryVariable = "TK_ROCM_HIP_LIBRARY";

DriverApi driverApi;
std::string openedDescription;
int openedVersion = 0;

struct OpenOutcome {
  tk_status status = TK_SUCCESS;
  std::string error;
};

/// Opens the first of `candidates` that loads; `library` names it. When
/// none does, `reason` is the most useful dlerror: one about a library the
/// candidate needs (libhsa-runtime64.so.1 missing, say) says more than
/// "cannot open shared object file" for a name that is simply absent.
void *openFirst(const std::vector<std::string> &candidates,
                std::string &library, std::string &reason) {
  std::string firstReason;
  for (const std::string &candidate : candidates) {
    // RTLD_LOCAL: the runtime's symbols stay out of the global namespace,
    // where they could satisfy (or clash with) a libamdhip64 the
    // application links itself (PyTorch does); the runtime is then loaded
    // once and shared, as dlopen of the same file returns the same handle.
    if (void *handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      library = candidate;
      return handle;
    }
    const char *text = dlerror();
    std::string message = text ? text : "no reason given";
    if (firstReason.empty())
      firstReason = message;
    if (reason.empty() && message.compare(0, candidate.size(), candidate) != 0)
      reason = message;
  }
  if (reason.empty())
    reason = firstReason;
  return nullptr;
}

std::string versionText(int version) {
  return std::to_string(version / kHipVersionMajorScale) + "." +
         std::to_string(version / kHipVersionMinorScale % 100);
}

OpenOutcome openOnce() {
  OpenOutcome outcome;
  const char *override = std::getenv(kLibraryVariable);
  bool overridden = override && *override;
  std::vector<std::string> candidates;
  if (overridden)
    candidates.emplace_back(override);
  else
    candidates.assign(std::begin(kRuntimeLibraries),
                      std::end(kRuntimeLibraries));

  std::string library, reason;
  void *handle = openFirst(candidates, library, reason);
  if (!handle) {
    outcome.status = TK_ERROR_NO_DEVICE;
    if (overridden) {
      outcome.error = std::string("tk-rocm: ") + kLibraryVariable + "=" +
                      override + " could not be opened: " + reason;
    } else {
      std::string tried;
      for (const std::string &candidate : candidates)
        tried += (tried.empty() ? "" : ", ") + candidate;
      outcome.error = "tk-rocm: libamdhip64.so not found (tried " + tried +
                      "): install ROCm's HIP runtime (Debian: libamdhip64-5) "
                      "or set " +
                      kLibraryVariable + " to its path (" + reason + ")";
    }
    return outcome;
  }

  DriverApi api;
  std::string missing;
#define TK_HIP_REQUIRED(name, ret, params)                                     \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name));       \
  if (!api.name)                                                               \
    missing += missing.empty() ? #name : ", " #name;
#define TK_HIP_OPTIONAL(name, ret, params)                                     \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name));
#include "driver/HipSymbols.def"
  if (!missing.empty()) {
    // The library stays open, as the CUDA plugin's: unloading a runtime
    // whose constructors ran is not always safe, and nothing is gained.
    outcome.status = TK_ERROR_NO_DEVICE;
    outcome.error = "tk-rocm: the HIP runtime '" + library + "' lacks " +
                    missing + ": tk needs HIP 5.0 or newer";
    return outcome;
  }
  // From here describeHipError can name the runtime's errors.
  driverApi = api;

  // Before any call that passes an enum value: HIP 4.x numbers
  // hipDeviceAttribute_t differently, and would answer the wrong question
  // without an error. hipRuntimeGetVersion needs no device.
  int version = 0;
  hipError_t result = api.hipRuntimeGetVersion(&version);
  if (result != hipSuccess) {
    checkHip(result, "hipRuntimeGetVersion", outcome.error);
    outcome.error += " (HIP runtime '" + library + "')";
    outcome.status = TK_ERROR_NO_DEVICE;
    return outcome;
  }
  if (version < kMinimumHipVersion) {
    outcome.status = TK_ERROR_NO_DEVICE;
    outcome.error = "tk-rocm: the HIP runtime '" + library + "' is HIP " +
                    versionText(version) +
                    "; tk needs HIP 5.0 or newer (ROCm 5.0 renumbered the "
                    "device attributes tk queries)";
    return outcome;
  }
  openedVersion = version;
  openedDescription = library + " (HIP " + versionText(version) + ")";
  return outcome;
}

const char *knownErrorName(hipError_t result) {
  switch (result) {
  case hipSuccess:
    return "hipSuccess";
#define TK_HIP_ERROR(name, value, tk)                                          \
  case name:                                                                   \
    return #name;
#include "driver/HipErrors.def"
  default:
    return nullptr;
  }
}

} // namespace

tk_status openDriver(std::string &error) {
  static std::once_flag once;
  static OpenOutcome outcome;
  std::call_once(once, [] { outcome = openOnce(); });
  if (outcome.status != TK_SUCCESS)
    error = outcome.error;
  return outcome.status;
}

const DriverApi &driver() { return driverApi; }

const std::string &runtimeDescription() { return openedDescription; }

int runtimeVersion() { return openedVersion; }

tk_status statusOfHipError(hipError_t result) {
  switch (result) {
  case hipSuccess:
    return TK_SUCCESS;
#define TK_HIP_ERROR(name, value, tk)                                          \
  case name:                                                                   \
    return tk;
#include "driver/HipErrors.def"
  default:
    return TK_ERROR_DEVICE;
  }
}

std::string describeHipError(hipError_t result) {
  // The runtime's name first: it knows errors newer than HipErrors.def. But
  // it answers "hipErrorUnknown" for a number it does not know, where tk's
  // list may still know better.
  const char *name =
      driverApi.hipGetErrorName ? driverApi.hipGetErrorName(result) : nullptr;
  if (!name || (std::strcmp(name, "hipErrorUnknown") == 0 &&
                result != hipErrorUnknown && knownErrorName(result)))
    name = knownErrorName(result);
  const char *text = driverApi.hipGetErrorString
                         ? driverApi.hipGetErrorString(result)
                         : nullptr;
  std::string description = std::string("HIP error '") +
                            (name ? name : "unknown") + "' (" +
                            std::to_string(result) + ")";
  // HIP 5's hipGetErrorString returns the name again.
  if (text && *text && (!name || std::strcmp(text, name) != 0))
    description += std::string(": ") + text;
  return description;
}

tk_status checkHip(hipError_t result, const char *call, std::string &error) {
  if (result == hipSuccess)
    return TK_SUCCESS;
  error =
      std::string("tk-rocm: ") + call + " failed: " + describeHipError(result);
  return statusOfHipError(result);
}

} // namespace tk::rocm
