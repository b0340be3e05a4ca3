//===- LinearLayoutRules.h - what a #tkw.linear becomes across ops -*- C++
//-*-===//
//
// The layout rules of the register pipeline (LayoutRules for #tkw.linear):
// tk-assign-linear-layouts propagates by them, tk-remove-layout-conversions
// rematerialises values by them.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_TRANSFORMS_LINEARLAYOUTRULES_H
#define TK_CORE_TRANSFORMS_LINEARLAYOUTRULES_H

#include "LayoutPropagation.h"

#include "tk/core/Layout/LinearLayout.h"

namespace tk::warp {

/// `layout` as a #tkw.linear attribute; null (the error in the debug log)
/// where building it failed.
LinearLayoutAttr toLinearLayoutAttr(mlir::MLIRContext *context,
                                    llvm::Expected<LinearLayout> layout);

/// The layout of a #tkw.linear attribute, or nothing.
const LinearLayout *getLinearLayoutOf(mlir::Attribute attr);

class LinearLayoutRules : public LayoutRules {
public:
  explicit LinearLayoutRules(mlir::MLIRContext *context) : context(context) {}

  bool fits(mlir::Attribute layout,
            llvm::ArrayRef<int64_t> shape) const override;
  /// The operands' layouts are the dot-operands pass's choice (the matrix
  /// unit's, through shared memory or registers); here they keep what
  /// their producers give them: null.
  mlir::Attribute dotOperand(mlir::Attribute, unsigned) const override {
    return {};
  }
  /// The source's layout less the reduced dimension (sliceLayout).
  mlir::Attribute reduceResult(mlir::Attribute source,
                               int64_t axis) const override;
  /// A reduction's result says nothing of how its source's reduced
  /// dimension is spread; the source's layout comes from its own
  /// producers: null.
  mlir::Attribute reduceSource(mlir::Attribute, int64_t,
                               int64_t) const override {
    return {};
  }
  mlir::Attribute expandDimsResult(mlir::Attribute source,
                                   int64_t axis) const override;
  mlir::Attribute expandDimsSource(mlir::Attribute result,
                                   int64_t axis) const override;
  /// A broadcast takes the layout its users want (see broadcastSource), so
  /// that x - broadcast(max(x)) needs no conversion; forward it has no
  /// rule (null). Broadcasts no user gives a layout get
  /// broadcastFromSource.
  mlir::Attribute broadcastResult(mlir::Attribute,
                                  llvm::ArrayRef<int64_t>) const override {
    return {};
  }
  /// The result's layout with every broadcast dimension reduced to size 1:
  /// each thread then already holds, for every element of the result, the
  /// source element it repeats.
  mlir::Attribute
  broadcastSource(mlir::Attribute result,
                  llvm::ArrayRef<int64_t> sourceShape) const override;

  /// The source's layout with its outputs permuted (transLayout): a
  /// transpose moves nothing. transSource permutes back.
  mlir::Attribute transResult(mlir::Attribute source,
                              llvm::ArrayRef<int32_t> order) const override;
  mlir::Attribute transSource(mlir::Attribute result,
                              llvm::ArrayRef<int32_t> order) const override;

  /// A join pairs each thread's elements in a new lowest register bit
  /// (joinLayout); its sources are the result less that bit
  /// (joinSourceLayout). Nothing moves.
  mlir::Attribute joinResult(mlir::Attribute source) const override;
  mlir::Attribute joinSource(mlir::Attribute result) const override;
  /// A reshape keeps every thread's registers and reads them as the other
  /// shape (reshapeLayout), both ways.
  mlir::Attribute reshapeResult(mlir::Attribute source,
                                llvm::ArrayRef<int64_t> shape) const override;
  mlir::Attribute
  reshapeSource(mlir::Attribute result,
                llvm::ArrayRef<int64_t> sourceShape) const override;

  /// The layout of a broadcast to `shape` that no user gave one: the
  /// source's layout, whose indices that hold copies (zero lane and warp
  /// bases) now spread the broadcast dimensions, and further registers
  /// where they do not suffice. The broadcast moves nothing.
  mlir::Attribute broadcastFromSource(mlir::Attribute source,
                                      llvm::ArrayRef<int64_t> shape) const;

private:
  mlir::MLIRContext *context;
};

} // namespace tk::warp

#endif // TK_CORE_TRANSFORMS_LINEARLAYOUTRULES_H
