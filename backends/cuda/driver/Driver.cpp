//===- Driver.cpp - libcuda.so.1, opened at run time ------------*- C++ -*-===//
//
// dlopen of the driver and resolution of CudaSymbols.def, once per process.
//
//===----------------------------------------------------------------------===//

#include "driver/Driver.h"

#include <dlfcn.h>
#include <mutex>

namespace tk::cuda {

namespace {

/// The library name the NVIDIA driver installs; the unversioned libcuda.so
/// comes only with development packages.
constexpr const char *kDriverLibrary = "libcuda.so.1";

DriverApi driverApi;

struct OpenOutcome {
  tk_status status = TK_SUCCESS;
  std::string error;
};

OpenOutcome openOnce() {
  OpenOutcome outcome;
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace, where
  // they could satisfy (or clash with) a linked libcuda of the application.
  void *library = dlopen(kDriverLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *reason = dlerror();
    outcome.status = TK_ERROR_NO_DEVICE;
    outcome.error = std::string("tk-cuda: CUDA driver library '") +
                    kDriverLibrary +
                    "' not found: install the NVIDIA driver (" +
                    (reason ? reason : "no reason given") + ")";
    return outcome;
  }
  DriverApi api;
  std::string missing;
#define TK_CU_REQUIRED(name)                                                   \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(library, #name));      \
  if (!api.name)                                                               \
    missing += missing.empty() ? #name : ", " #name;
#define TK_CU_OPTIONAL(name)                                                   \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(library, #name));
#include "driver/CudaSymbols.def"
  if (!missing.empty()) {
    // The library stays open: a driver library may not be safe to unload
    // after its constructors ran, and the process is better off reporting.
    outcome.status = TK_ERROR_NO_DEVICE;
    outcome.error = std::string("tk-cuda: the CUDA driver '") + kDriverLibrary +
                    "' lacks " + missing + ": update the NVIDIA driver";
    return outcome;
  }
  driverApi = api;
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

tk_status statusOfCudaError(CUresult result) {
  switch (result) {
  case CUDA_SUCCESS:
    return TK_SUCCESS;
#define TK_CU_ERROR(cuda, tk)                                                  \
  case cuda:                                                                   \
    return tk;
#include "driver/CudaErrors.def"
  default:
    return TK_ERROR_DEVICE;
  }
}

std::string describeCudaError(CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  // Both are part of the table, but a message must not depend on it.
  if (driverApi.cuGetErrorName)
    driverApi.cuGetErrorName(result, &name);
  if (driverApi.cuGetErrorString)
    driverApi.cuGetErrorString(result, &text);
  return std::string("CUDA error '") + (name ? name : "unknown") + "' (" +
         std::to_string(static_cast<int>(result)) +
         "): " + (text ? text : "no description");
}

tk_status checkCuda(CUresult result, const char *call, std::string &error) {
  if (result == CUDA_SUCCESS)
    return TK_SUCCESS;
  error =
      std::string("tk-cuda: ") + call + " failed: " + describeCudaError(result);
  return statusOfCudaError(result);
}

} // namespace tk::cuda
