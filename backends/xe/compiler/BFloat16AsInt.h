//===- BFloat16AsInt.h - bf16 values as their 16 bits -----------*- C++ -*-===//

#ifndef TK_BACKENDS_XE_COMPILER_BFLOAT16ASINT_H_
#define TK_BACKENDS_XE_COMPILER_BFLOAT16ASINT_H_

#include "mlir/Pass/Pass.h"

#include <memory>

namespace tk::xe {

/// tk-xe-bf16-as-i16: in the LLVM dialect, every bf16 value becomes the i16
/// of its bits. What computes with bf16 was moved to f32 before (MLIR's
/// arith-emulate-unsupported-floats and math-extend-to-supported-types),
/// and the conversions expanded into integer code (arith-expand with bf16),
/// so bf16 is left only where it is moved: loads, stores, SLM tiles,
/// selects, vectors, constants and bitcasts to and from i16. Those take
/// i16 unchanged; an op that would still compute with bf16 fails the pass,
/// naming it. SPIR-V needs this because a bfloat type needs
/// SPV_KHR_bfloat16, which the drivers' IGC predates.
std::unique_ptr<mlir::Pass> createBFloat16AsIntPass();

} // namespace tk::xe

#endif // TK_BACKENDS_XE_COMPILER_BFLOAT16ASINT_H_
