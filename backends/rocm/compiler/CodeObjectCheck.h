//===- CodeObjectCheck.h - a package held against its code object -*- C++
//-*-===//
//
// What validate() checks of a ROCm package, with no AMD GPU to run it:
//
// - always: the code object's amdhsa.kernels metadata, read again, agrees
//   with the package (kernel name, kernarg size, LDS, wave size, registers,
//   scratch);
// - with TK_ROCM_VALIDATION=1 (the rocm column of tk-conformance), the same
//   through tools independent of tk's compiler: `llvm-readelf --notes`
//   prints the metadata the loader reads, and `llvm-objdump -d` must show
//   matrix instructions (v_mfma, v_wmma) when the package says its dots run
//   on them.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_ROCM_COMPILER_CODEOBJECTCHECK_H_
#define TK_BACKENDS_ROCM_COMPILER_CODEOBJECTCHECK_H_

#include "compiler/Package.h"

#include <string>

namespace tk::rocm {

/// What the independent tools found in a code object.
struct ToolReport {
  /// Lines of llvm-objdump's disassembly holding v_mfma or v_wmma.
  int matrixInstructions = 0;
  /// The kernel's private segment (scratch: spills) in bytes, from
  /// llvm-readelf.
  int scratchBytes = 0;
};

/// The always-on check above.
tk_status checkMetadata(const Package &package, std::string &error);

/// The tools' check above, filling `report`.
tk_status checkWithLLVMTools(const Package &package, ToolReport &report,
                             std::string &error);

/// parsePackage, checkMetadata, and checkWithLLVMTools when
/// TK_ROCM_VALIDATION=1: the plugin's validate().
tk_status validatePackage(const void *data, size_t size, std::string &error);

} // namespace tk::rocm

#endif // TK_BACKENDS_ROCM_COMPILER_CODEOBJECTCHECK_H_
