//===- Autotune.h - choosing the fastest of several kernels -----*- C++ -*-===//
//
// tk_autotune and its use as an option of kernel creation
// (tk_compile_options.autotune), both layered over the C API.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_AUTOTUNE_H_
#define TK_RUNTIME_AUTOTUNE_H_

#include "tk/runtime/Status.h"
#include "tk/tk.h"

#include <cstddef>
#include <vector>

namespace tk::runtime {

/// tk_autotune: compiles the candidates in parallel, times each, records
/// and returns the fastest.
Status autotune(tk_device device, const tk_autotune_request *request,
                tk_kernel *outKernel, tk_autotune_result *outResult);

/// tk_kernel_create with `options.autotune`: the configurations become
/// candidates of `source` and are tuned as above.
Status createAutotuned(tk_device device, const tk_kernel_source &source,
                       const tk_autotune_options &options,
                       tk_kernel *outKernel);

/// The candidates autotune times a second time, interleaved, before it
/// chooses: those whose first timing (`seconds`, where `timed`) is within
/// 5% of the fastest, fastest first, at most 4; none when fewer than two
/// are that close.
std::vector<size_t> autotuneFinalists(const std::vector<double> &seconds,
                                      const std::vector<bool> &timed);

} // namespace tk::runtime

#endif // TK_RUNTIME_AUTOTUNE_H_
