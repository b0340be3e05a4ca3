//===- Passes.h - the TTIR reader's pass ------------------------*- C++ -*-===//

#ifndef TK_TTIR_PASSES_H_
#define TK_TTIR_PASSES_H_

#include "mlir/Pass/Pass.h"

namespace tk::ttir {

#define GEN_PASS_DECL
#include "tk/ttir/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tk/ttir/Passes.h.inc"

} // namespace tk::ttir

#endif // TK_TTIR_PASSES_H_
