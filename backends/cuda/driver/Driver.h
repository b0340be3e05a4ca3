//===- Driver.h - libcuda.so.1, opened at run time --------------*- C++ -*-===//
//
// The CUDA driver is never linked: the plugin opens libcuda.so.1 with dlopen
// and resolves the symbols of CudaSymbols.def into one table, so the plugin
// builds and loads on machines without the NVIDIA driver and reports "no
// device" there. cuda.h is included for its types and prototypes only.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CUDA_DRIVER_DRIVER_H_
#define TK_BACKENDS_CUDA_DRIVER_DRIVER_H_

#include "tk/tk.h"

#include <cuda.h>

#include <string>

namespace tk::cuda {

/// The driver's entry points, one pointer per symbol of CudaSymbols.def.
struct DriverApi {
#define TK_CU_REQUIRED(name) decltype(&::name) name = nullptr;
#include "driver/CudaSymbols.def"
};

/// Opens libcuda.so.1 and resolves its symbols, once per process; later calls
/// return the first outcome. TK_ERROR_NO_DEVICE, with the reason in `error`,
/// when the library or a required symbol is missing.
tk_status openDriver(std::string &error);

/// The table openDriver filled; only valid after it succeeded.
const DriverApi &driver();

/// The tk_status a CUresult is reported as (CudaErrors.def).
tk_status statusOfCudaError(CUresult result);

/// "CUDA error 'CUDA_ERROR_OUT_OF_MEMORY' (2): out of memory".
std::string describeCudaError(CUresult result);

/// TK_SUCCESS for CUDA_SUCCESS; otherwise the mapped status, with `error` set
/// to "tk-cuda: <call> failed: <describeCudaError>".
tk_status checkCuda(CUresult result, const char *call, std::string &error);

} // namespace tk::cuda

/// Calls driver entry point `name` and returns from the enclosing function
/// (whose `error` string receives the message) when it fails.
#define TK_CU_RETURN_IF_ERROR(name, ...)                                       \
  do {                                                                         \
    if (tk_status tkCuStatus = ::tk::cuda::checkCuda(                          \
            ::tk::cuda::driver().name(__VA_ARGS__), #name, error))             \
      return tkCuStatus;                                                       \
  } while (false)

#endif // TK_BACKENDS_CUDA_DRIVER_DRIVER_H_
