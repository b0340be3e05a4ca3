//===- LayoutPropagation.h - layouts along def-use chains -------*- C++ -*-===//
//
// The propagation of tk-assign-linear-layouts: roots get a layout, the
// other tiles follow along def-use chains (element-wise ops, loops,
// branches, reductions, expand_dims, broadcast, trans, join, reshape), and
// where two layouts meet the types get a `tkw.convert_layout` (or a cheap
// value is computed again). What a layout becomes across a reduction,
// expand_dims, broadcast or dot is the layout system's rule (LayoutRules,
// LinearLayoutRules.h), kept apart so that the walk reads in one pass.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_TRANSFORMS_LAYOUTPROPAGATION_H
#define TK_CORE_TRANSFORMS_LAYOUTPROPAGATION_H

#include "tk/core/WarpDialect.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

#include <deque>

namespace tk::warp {

/// What a layout becomes across the ops that change shape or layout. A
/// rule returns a null attribute where the layout system has no answer;
/// propagation then stops there and the value gets a layout of its own.
class LayoutRules {
public:
  virtual ~LayoutRules();

  /// Whether `layout` can be the layout of a tile of `shape`.
  virtual bool fits(mlir::Attribute layout,
                    llvm::ArrayRef<int64_t> shape) const = 0;
  /// What a `tk.dot` whose result has `result` wants of operand `opIdx`
  /// (0: a, 1: b).
  virtual mlir::Attribute dotOperand(mlir::Attribute result,
                                     unsigned opIdx) const = 0;
  /// The result of a reduction along `axis` of a source in `source`.
  virtual mlir::Attribute reduceResult(mlir::Attribute source,
                                       int64_t axis) const = 0;
  /// The source of a reduction along `axis` (of `size` elements) whose
  /// result has `result`.
  virtual mlir::Attribute reduceSource(mlir::Attribute result, int64_t axis,
                                       int64_t size) const = 0;
  /// The result of `tk.expand_dims` at `axis` of a source in `source`.
  virtual mlir::Attribute expandDimsResult(mlir::Attribute source,
                                           int64_t axis) const = 0;
  /// The source of `tk.expand_dims` at `axis` whose result has `result`.
  virtual mlir::Attribute expandDimsSource(mlir::Attribute result,
                                           int64_t axis) const = 0;
  /// The result, of `shape`, of `tk.broadcast` of a source in `source`.
  virtual mlir::Attribute
  broadcastResult(mlir::Attribute source,
                  llvm::ArrayRef<int64_t> shape) const = 0;
  /// The source, of `sourceShape`, of `tk.broadcast` whose result has
  /// `result`.
  virtual mlir::Attribute
  broadcastSource(mlir::Attribute result,
                  llvm::ArrayRef<int64_t> sourceShape) const = 0;
  /// The result of `tk.trans` by `order` of a source in `source`, and the
  /// source whose transpose has `result`; null (no rule) by default.
  virtual mlir::Attribute transResult(mlir::Attribute source,
                                      llvm::ArrayRef<int32_t> order) const {
    return {};
  }
  virtual mlir::Attribute transSource(mlir::Attribute result,
                                      llvm::ArrayRef<int32_t> order) const {
    return {};
  }
  /// The result of `tk.join` of sources in `source`, and the sources of a
  /// join whose result has `result`; null (no rule) by default.
  virtual mlir::Attribute joinResult(mlir::Attribute source) const {
    return {};
  }
  virtual mlir::Attribute joinSource(mlir::Attribute result) const {
    return {};
  }
  /// The result, of `shape`, of `tk.reshape` of a source in `source`, and
  /// the source, of `sourceShape`, of a reshape whose result has `result`;
  /// null (no rule) by default.
  virtual mlir::Attribute reshapeResult(mlir::Attribute source,
                                        llvm::ArrayRef<int64_t> shape) const {
    return {};
  }
  virtual mlir::Attribute
  reshapeSource(mlir::Attribute result,
                llvm::ArrayRef<int64_t> sourceShape) const {
    return {};
  }
};

/// The layout assignment of one function: a layout per tile value, and per
/// use the layout the user wants, which decides where converts go.
class LayoutPropagation {
public:
  explicit LayoutPropagation(const LayoutRules &rules) : rules(rules) {}

  /// Gives `value` `layout` unless it has one; queues it for propagation.
  void setLayout(mlir::Value value, mlir::Attribute layout);

  /// Records that the user of `use` wants `layout`; the value takes it if
  /// nothing else gave it one first. Such backward steps wait until forward
  /// propagation is done, so that a value computed from a root keeps the
  /// root's layout and is converted once, next to the user that wants
  /// another (attention converts p, not qk and every op in between).
  void want(mlir::OpOperand &use, mlir::Attribute layout);

  mlir::Attribute lookup(mlir::Value value) const {
    return layouts.lookup(value);
  }
  mlir::Attribute lookupWant(mlir::OpOperand &use) const {
    return wants.lookup(&use);
  }

  /// Propagates every queued layout to a fixed point.
  void run();

  /// Writes the layouts into the types of `func` and, where a use wants
  /// another layout than its value has, inserts a `tkw.convert_layout` (or
  /// computes a tile made from scalars again in the wanted layout). Errors
  /// name `passName`.
  mlir::LogicalResult apply(tk::FuncOp func, llvm::StringRef passName);

private:
  void visitResult(mlir::Operation *op, unsigned index, mlir::Attribute layout);
  void visitBlockArgument(mlir::BlockArgument arg, mlir::Attribute layout);
  void visitUse(mlir::OpOperand &use, mlir::Attribute layout);
  void tieLoopValue(mlir::Operation *loop, unsigned index,
                    mlir::Attribute layout);

  const LayoutRules &rules;
  llvm::MapVector<mlir::Value, mlir::Attribute> layouts;
  llvm::DenseMap<mlir::OpOperand *, mlir::Attribute> wants;
  std::deque<mlir::Value> worklist;
  std::deque<std::pair<mlir::Value, mlir::Attribute>> deferred;
};

} // namespace tk::warp

#endif // TK_CORE_TRANSFORMS_LAYOUTPROPAGATION_H
