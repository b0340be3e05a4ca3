//===- LayoutMatrixUnit.h - a matrix unit driven by its layouts -*- C++ -*-===//
//
// A tk::MatrixUnit for subgroup-scoped matrix instructions (AMD's MFMA and
// WMMA, Intel's DPAS) that knows each instruction only through the
// TargetInfo preset: which instruction a dot takes is the first of the
// preset's intrinsics whose element types match and whose shape divides the
// dot's, and where each lane holds its operands and accumulator is the
// preset's FragmentLayout of it (placed with tk::placeFragment). A backend
// supplies two things: the type a lane passes an operand in, and the call
// of the instruction. A new instruction is then one line of the backend's
// compiler/TargetInfo.cpp.
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
  /// `maxHeldRegisters`: the most accumulator elements a lane may hold for
  /// held products, so that the rest of the kernel keeps room.
  LayoutMatrixUnit(TargetInfo info, int64_t maxHeldRegisters)
      : info(std::move(info)), maxHeldRegisters(maxHeldRegisters) {}

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

  /// The intrinsic an (m x k) . (k x n) product of these types runs on, or
  /// null.
  const MatrixIntrinsic *select(mlir::Type a, mlir::Type b,
                                mlir::Type accumulator, int64_t m, int64_t n,
                                int64_t k) const;

  bool supports(mlir::Type a, mlir::Type b, mlir::Type accumulator, int64_t m,
                int64_t n, int64_t k) const override {
    return select(a, b, accumulator, m, n, k) != nullptr;
  }

  /// Each subgroup takes the result's (M x N) tiles in turn; for each it
  /// holds its lanes' accumulator registers and runs the instruction over k,
  /// its operand fragments read from workgroup memory.
  mlir::LogicalResult emit(mlir::OpBuilder &builder, mlir::Location loc,
                           const Product &product) const override;
  /// The selected instruction's tiles dealt to the subgroups in turn.
  std::optional<HeldLayout>
  emittedLayout(const HeldProduct &product) const override;

  /// Held accumulators (a loop-carried accumulator in registers): the
  /// subgroups form a grid over the result and each owns a block of the
  /// instruction's tiles, so that one A fragment serves a row of tiles and
  /// one B fragment a column; the registers are the accumulator fragments
  /// of those tiles, rows then columns. The grid is the layout passes'
  /// choice: rows across subgroups for rowsAcrossWarps products, otherwise
  /// the one that reads the fewest fragments per k step. Products whose
  /// rows go to single subgroups keep each row in one subgroup, so that
  /// reductions along rows and per-row values (attention's running max and
  /// sum) stay in registers and shuffles (registerRows).
  std::optional<HeldLayout>
  heldLayout(const HeldProduct &product) const override;
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  accumulate(mlir::OpBuilder &builder, mlir::Location loc,
             const HeldProduct &product, mlir::Value a, mlir::Value b,
             mlir::ValueRange registers) const override;
  /// Operands of held products go to workgroup memory K-major (A as stored,
  /// B transposed), so that each lane's run of k elements is one read, with
  /// each row's runs permuted by an XOR of the row (a swizzle), so that the
  /// rows a subgroup reads at one k fall in different banks.
  std::optional<SharedLayout> operandLayout(const HeldProduct &product,
                                            unsigned operand) const override;
  /// The register pipeline's product: the lane's fragments packed as
  /// operandType says, the accumulator as one vector, one multiply.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  emitFragmentProduct(mlir::OpBuilder &builder, mlir::Location loc,
                      const MatrixIntrinsic &intrinsic, mlir::ValueRange a,
                      mlir::ValueRange b,
                      mlir::ValueRange accumulator) const override;

protected:
  TargetInfo info;

private:
  /// How the subgroups share a held product.
  struct WaveTiling {
    const MatrixIntrinsic *intrinsic;
    int64_t wavesM, wavesN, rows, cols;
  };
  std::optional<WaveTiling> tileWaves(const HeldProduct &product) const;
  /// The instruction a held product runs on (null: not held).
  const MatrixIntrinsic *heldIntrinsic(const HeldProduct &product) const;
  /// Packs the lane's operand elements at `at` as operandType says.
  mlir::Value
  packOperand(mlir::OpBuilder &builder, mlir::Location loc,
              const MatrixIntrinsic &intrinsic, unsigned operand,
              mlir::Value memref,
              llvm::ArrayRef<std::pair<mlir::Value, mlir::Value>> at,
              llvm::function_ref<mlir::Value(mlir::Value, mlir::Value)> offset =
                  nullptr) const;
  /// Packs the lane's operand elements as operandType says.
  mlir::Value packElements(mlir::OpBuilder &builder, mlir::Location loc,
                           const MatrixIntrinsic &intrinsic, unsigned operand,
                           mlir::ValueRange elements) const;

  int64_t maxHeldRegisters;
};

/// The tk.dot ops of `module` whose element types one of `info`'s matrix
/// instructions takes: the dots whose code must hold matrix instructions.
int countMatrixDots(mlir::ModuleOp module, const TargetInfo &info);

} // namespace tk

#endif // TK_CORE_CONVERSION_LAYOUTMATRIXUNIT_H_
