//===- Passes.h - tk's layout passes ----------------------------*- C++ -*-===//
//
// Declarations and registration of the tile-level passes and of the layout
// passes of the GPU register pipeline (Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_PASSES_H_
#define TK_CORE_PASSES_H_

#include "tk/core/WarpDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/Pass.h"

namespace tk {

#define GEN_PASS_DECL
#include "tk/core/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tk/core/Passes.h.inc"

/// Registers the layout passes with the global registry (for tk-opt).
inline void registerTransformsPasses() { registerTkTransformsPasses(); }

/// Registers the tkw dialect, which the layout passes produce.
void registerWarpDialect(mlir::DialectRegistry &registry);

} // namespace tk

#endif // TK_CORE_PASSES_H_
