//===- CheckBounds.cpp - tk-check-bounds
//-----------------------------------===//
//
// The runtime's bounds-checked launch mode as a pass, so that tk-opt and the
// lit tests show what tk::addBoundsChecks does to a kernel.
//
//===----------------------------------------------------------------------===//

#include "tk/core/BoundsChecks.h"
#include "tk/core/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tk {
#define GEN_PASS_DEF_TKCHECKBOUNDS
#include "tk/core/Passes.h.inc"
} // namespace tk

namespace {

struct CheckBounds : tk::impl::TkCheckBoundsBase<CheckBounds> {
  void runOnOperation() override {
    tk::BoundsChecks checks;
    if (failed(tk::addBoundsChecks(getOperation(), checks)))
      signalPassFailure();
  }
};

} // namespace
