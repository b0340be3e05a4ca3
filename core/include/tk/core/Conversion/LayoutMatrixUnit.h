//===- LayoutMatrixUnit.h - a matrix unit driven by its layouts -*- C++ -*-===//
//
// A tk::MatrixUnit for subgroup-scoped matrix instructions (AMD's MFMA and
// WMMA, Intel's DPAS) that knows each instruction only through the
// TargetInfo preset: which instruction a dot takes (tk-dot-operand-layouts
// picks it from the preset's intrinsics), and where each lane holds its
// operands and accumulator (the preset's FragmentLayout of it, as a linear
// layout). A backend supplies two things: the type a lane passes an operand
// in, and the call of the instruction. A new instruction is then one line
// of the backend's compiler/TargetInfo.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_LAYOUTMATRIXUNIT_H_
#define TK_CORE_CONVERSION_LAYOUTMATRIXUNIT_H_

#include "tk/core/Conversion/Passes.h"
#include "tk/core/TargetInfo.h"

#include "mlir/IR/BuiltinOps.h"

namespace tk {

class LayoutMatrixUnit : public MatrixUnit {
public:
  explicit LayoutMatrixUnit(TargetInfo info) : info(std::move(info)) {}

  /// The type a lane passes `count` elements of `element` in, as operand
  /// `operand` (0: a, 1: b) of `intrinsic`.
  virtual mlir::Type operandType(mlir::OpBuilder &builder,
                                 const MatrixIntrinsic &intrinsic,
                                 unsigned operand, mlir::Type element,
                                 int64_t count) const = 0;
  /// One instruction: `accumulator` + a . b, the operands packed as
  /// operandType says and the accumulator a vector of the lane's elements.
  virtual mlir::Value multiply(mlir::OpBuilder &builder, mlir::Location loc,
                               const MatrixIntrinsic &intrinsic, mlir::Value a,
                               mlir::Value b,
                               mlir::Value accumulator) const = 0;

  /// The lane's fragments packed as operandType says, the accumulator as
  /// one vector, one multiply.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitFragmentProduct(mlir::OpBuilder &builder, mlir::Location loc,
                      const MatrixIntrinsic &intrinsic, mlir::ValueRange a,
                      mlir::ValueRange b,
                      mlir::ValueRange accumulator) const override;

protected:
  TargetInfo info;

private:
  /// Packs the lane's operand elements as operandType says.
  mlir::Value packElements(mlir::OpBuilder &builder, mlir::Location loc,
                           const MatrixIntrinsic &intrinsic, unsigned operand,
                           mlir::ValueRange elements) const;
};

/// The tk.dot ops of `module` whose element types one of `info`'s matrix
/// instructions takes: the dots whose code must hold matrix instructions.
int countMatrixDots(mlir::ModuleOp module, const TargetInfo &info);

} // namespace tk

#endif // TK_CORE_CONVERSION_LAYOUTMATRIXUNIT_H_
