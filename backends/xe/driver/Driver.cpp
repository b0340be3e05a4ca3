//===- Driver.cpp - the Level Zero loader, opened at run time ---*- C++ -*-===//
//
// dlopen of libze_loader, resolution of ZeSymbols.def, zeInit and the
// drivers, once per process; ze_result_t names and statuses.
//
//===----------------------------------------------------------------------===//

#include "driver/Driver.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <iterator>
#include <mutex>
#include <type_traits>

namespace tk::xe {

// Each prototype of ZeSymbols.def is the header's: a table entry that
// differed would pass its arguments wrongly without a word.
#define TK_ZE_REQUIRED(name, ret, params)                                      \
  static_assert(std::is_same_v<ret(*) params, decltype(&::name)>,              \
                "ZeSymbols.def: " #name " is not ze_api.h's prototype");
#include "driver/ZeSymbols.def"

// Each number of ZeErrors.def is the header's (those it declares).
#define TK_ZE_ERROR(name, value, tk)                                           \
  static_assert(static_cast<uint32_t>(name) == (value),                        \
                "ZeErrors.def: " #name " is not ze_api.h's number");
#define TK_ZE_NEWER_ERROR(name, value, tk)
#include "driver/ZeErrors.def"

namespace {

/// Names tried in turn when TK_XE_ZE_LIBRARY is not set: the soname first,
/// which the runtime package installs alone (Debian's libze1), then the
/// development link (libze-dev, or a loader built from source).
constexpr const char *kLoaderLibraries[] = {"libze_loader.so.1",
                                            "libze_loader.so"};

constexpr const char *kLibraryVariable = "TK_XE_ZE_LIBRARY";

DriverApi driverApi;
std::vector<ze_driver_handle_t> openedDrivers;
std::string openedDescription;
ze_api_version_t openedVersion = static_cast<ze_api_version_t>(0);

struct OpenOutcome {
  tk_status status = TK_SUCCESS;
  std::string error;
};

/// Opens the first of `candidates` that loads; `library` names it. When
/// none does, `reason` is the most useful dlerror: one about a library the
/// candidate needs says more than "cannot open shared object file" for a
/// name that is simply absent.
void *openFirst(const std::vector<std::string> &candidates,
                std::string &library, std::string &reason) {
  std::string firstReason;
  for (const std::string &candidate : candidates) {
    // RTLD_LOCAL: the loader's symbols stay out of the global namespace,
    // where they could clash with a loader the application links itself
    // (SYCL's runtime does); dlopen of the same file returns the same
    // handle, so the process still has one loader and one zeInit.
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

const char *knownErrorName(ze_result_t result) {
  switch (static_cast<uint32_t>(result)) {
  case ZE_RESULT_SUCCESS:
    return "ZE_RESULT_SUCCESS";
#define TK_ZE_ERROR(name, value, tk)                                           \
  case (value):                                                                \
    return #name;
#include "driver/ZeErrors.def"
  default:
    return nullptr;
  }
}

/// "0x78000001": ze_result_t's values read better in hexadecimal, where
/// their class shows (0x70...: the spec's [Core] errors, 0x78...: those it
/// tags [Validation]).
std::string numberText(ze_result_t result) {
  char number[16];
  std::snprintf(number, sizeof(number), "0x%x", static_cast<unsigned>(result));
  return number;
}

/// "ZE_RESULT_ERROR_UNINITIALIZED (0x78000001)".
std::string nameAndNumber(ze_result_t result) {
  const char *name = knownErrorName(result);
  return std::string(name ? name : "unknown") + " (" + numberText(result) + ")";
}

std::string versionText(ze_api_version_t version) {
  return std::to_string(ZE_MAJOR_VERSION(static_cast<uint32_t>(version))) +
         "." + std::to_string(ZE_MINOR_VERSION(static_cast<uint32_t>(version)));
}

OpenOutcome openOnce() {
  OpenOutcome outcome;
  const char *override = std::getenv(kLibraryVariable);
  bool overridden = override && *override;
  std::vector<std::string> candidates;
  if (overridden)
    candidates.emplace_back(override);
  else
    candidates.assign(std::begin(kLoaderLibraries), std::end(kLoaderLibraries));

  std::string library, reason;
  void *handle = openFirst(candidates, library, reason);
  if (!handle) {
    outcome.status = TK_ERROR_NO_DEVICE;
    if (overridden) {
      outcome.error = std::string("tk-xe: ") + kLibraryVariable + "=" +
                      override + " could not be opened: " + reason;
    } else {
      std::string tried;
      for (const std::string &candidate : candidates)
        tried += (tried.empty() ? "" : ", ") + candidate;
      outcome.error = "tk-xe: the Level Zero loader was not found (tried " +
                      tried + "): install it (Debian: libze1) or set " +
                      kLibraryVariable + " to its path (" + reason + ")";
    }
    return outcome;
  }

  DriverApi api;
  std::string missing;
#define TK_ZE_REQUIRED(name, ret, params)                                      \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name));       \
  if (!api.name)                                                               \
    missing += missing.empty() ? #name : ", " #name;
#define TK_ZE_OPTIONAL(name, ret, params)                                      \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name));
#include "driver/ZeSymbols.def"
  if (!missing.empty()) {
    // The library stays open, as the other plugins' runtimes do: unloading
    // one whose constructors ran is not always safe, and nothing is gained.
    outcome.status = TK_ERROR_NO_DEVICE;
    outcome.error = "tk-xe: '" + library + "'" +
                    (overridden ? std::string(" (") + kLibraryVariable + ")"
                                : std::string()) +
                    " lacks " + missing +
                    ": it is not a Level Zero loader (tk needs API 1.0 or "
                    "newer)";
    return outcome;
  }

  // GPU drivers only: the loader would otherwise also initialise NPU (VPU)
  // drivers, which tk cannot use and which may be slow to start.
  ze_result_t result = api.zeInit(ZE_INIT_FLAG_GPU_ONLY);
  if (result != ZE_RESULT_SUCCESS) {
    // Nothing else is called from here on, ever: with no driver to dispatch
    // to, Debian 12's loader (1.8.12) dereferences an empty table in
    // zeDriverGet and crashes the process.
    outcome.status = TK_ERROR_NO_DEVICE;
    outcome.error = "tk-xe: " + library +
                    " found no Intel GPU driver: zeInit(ZE_INIT_FLAG_GPU_ONLY) "
                    "returned " +
                    nameAndNumber(result) +
                    " (is Intel's compute-runtime installed, and a "
                    "/dev/dri/renderD* device readable?)";
    return outcome;
  }

  uint32_t count = 0;
  result = api.zeDriverGet(&count, nullptr);
  if (result == ZE_RESULT_SUCCESS && count == 0) {
    outcome.status = TK_ERROR_NO_DEVICE;
    outcome.error = "tk-xe: " + library +
                    " initialised but zeDriverGet "
                    "reports no Level Zero driver";
    return outcome;
  }
  std::vector<ze_driver_handle_t> handles(count);
  if (result == ZE_RESULT_SUCCESS)
    result = api.zeDriverGet(&count, handles.data());
  if (result != ZE_RESULT_SUCCESS) {
    checkZe(result, "zeDriverGet", outcome.error);
    outcome.error += " (" + library + ")";
    outcome.status = TK_ERROR_NO_DEVICE;
    return outcome;
  }
  handles.resize(count);

  ze_api_version_t version = static_cast<ze_api_version_t>(0);
  result = api.zeDriverGetApiVersion(handles.front(), &version);
  if (result != ZE_RESULT_SUCCESS) {
    checkZe(result, "zeDriverGetApiVersion", outcome.error);
    outcome.error += " (" + library + ")";
    outcome.status = TK_ERROR_NO_DEVICE;
    return outcome;
  }

  // Published only now: until zeInit succeeded, no entry point may be
  // reachable through driver().
  driverApi = api;
  openedDrivers = std::move(handles);
  openedVersion = version;
  openedDescription = library + " (Level Zero " + versionText(version) + ")";
  return outcome;
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

const std::vector<ze_driver_handle_t> &drivers() { return openedDrivers; }

const std::string &runtimeDescription() { return openedDescription; }

ze_api_version_t runtimeVersion() { return openedVersion; }

tk_status statusOfZeError(ze_result_t result) {
  switch (static_cast<uint32_t>(result)) {
  case ZE_RESULT_SUCCESS:
    return TK_SUCCESS;
#define TK_ZE_ERROR(name, value, tk)                                           \
  case (value):                                                                \
    return tk;
#include "driver/ZeErrors.def"
  default:
    return TK_ERROR_DEVICE;
  }
}

std::string describeZeError(ze_result_t result) {
  const char *name = knownErrorName(result);
  return std::string("Level Zero error '") + (name ? name : "unknown") + "' (" +
         numberText(result) + ")";
}

tk_status checkZe(ze_result_t result, const char *call, std::string &error) {
  if (result == ZE_RESULT_SUCCESS)
    return TK_SUCCESS;
  error = std::string("tk-xe: ") + call + " failed: " + describeZeError(result);
  return statusOfZeError(result);
}

} // namespace tk::xe
