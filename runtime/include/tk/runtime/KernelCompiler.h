//===- KernelCompiler.h - what libtk adds to the runtime --------*- C++ -*-===//
//
// The runtime loads packages and launches kernels without a compiler: that
// is libtk_runtime.so, which links neither LLVM nor MLIR. libtk.so is the
// same runtime with a compiler linked in: its KernelCompile.cpp registers a
// KernelCompiler when the library loads, and every source that is not a
// package goes to it. Without one, such a source is TK_ERROR_UNSUPPORTED
// with compilerMissing's message, and the runtime opens the driver-only
// plugins (libtk_driver_<name>.so) instead of the full ones.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_KERNELCOMPILER_H_
#define TK_RUNTIME_KERNELCOMPILER_H_

#include "tk/runtime/Status.h"
#include "tk/tk.h"

#include <string_view>

namespace tk::runtime {

class Device;
class Kernel;
struct KernelOptions;

class KernelCompiler {
public:
  virtual ~KernelCompiler() = default;

  /// Kernel::create for a source that is not a package: prepare, find in
  /// the process's kernel cache or compile, load.
  virtual Status createKernel(Device &device, const tk_kernel_source &source,
                              const KernelOptions &options, Kernel **out) = 0;
  /// tk_kernel_create with options->autotune.
  virtual Status createAutotuned(tk_device device,
                                 const tk_kernel_source &source,
                                 const tk_autotune_options &options,
                                 tk_kernel *out) = 0;
  /// tk_autotune: each candidate compiled and timed, the fastest kept.
  virtual Status autotune(tk_device device, const tk_autotune_request *request,
                          tk_kernel *out, tk_autotune_result *result) = 0;
  /// tk_ttir_read_metadata: num_warps and num_stages of Triton's JSON, each
  /// left as it is where the JSON has none.
  virtual Status readTritonMetadata(std::string_view json, int32_t &numWarps,
                                    int32_t &numStages) = 0;
};

/// The compiler linked into this library, or null (libtk_runtime.so).
KernelCompiler *getKernelCompiler();

/// Makes `compiler` the process's; called once, as libtk.so loads.
void registerKernelCompiler(KernelCompiler &compiler);

/// TK_ERROR_UNSUPPORTED: `what` needs a compiler, and this runtime has none.
Status compilerMissing(std::string_view what);

} // namespace tk::runtime

#endif // TK_RUNTIME_KERNELCOMPILER_H_
