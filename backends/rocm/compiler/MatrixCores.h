//===- MatrixCores.h - tk.dot on AMD's MFMA and WMMA ------------*- C++ -*-===//
//
// The matrix unit of CDNA (MFMA, wave64) and RDNA3 (WMMA, wave32), driven by
// the TargetInfo preset: the instruction a dot takes is the first of the
// preset's intrinsics whose element types match and whose shape divides the
// dot's, and where each lane holds its operands and accumulator is the
// preset's FragmentLayout of it (placed with tk::placeFragment). Nothing in
// here knows an instruction's shape or lane mapping by heart, so a new
// instruction is one line of compiler/TargetInfo.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_ROCM_COMPILER_MATRIXCORES_H_
#define TK_BACKENDS_ROCM_COMPILER_MATRIXCORES_H_

#include "tk/core/Conversion/Passes.h"
#include "tk/core/TargetInfo.h"

#include <memory>

namespace tk::rocm {

class MatrixCoreUnit : public tk::MatrixUnit {
public:
  explicit MatrixCoreUnit(tk::TargetInfo info) : info(std::move(info)) {}

  /// The intrinsic an (m x k) . (k x n) product of these types runs on, or
  /// null.
  const tk::MatrixIntrinsic *select(mlir::Type a, mlir::Type b,
                                    mlir::Type accumulator, int64_t m,
                                    int64_t n, int64_t k) const;

  bool supports(mlir::Type a, mlir::Type b, mlir::Type accumulator, int64_t m,
                int64_t n, int64_t k) const override {
    return select(a, b, accumulator, m, n, k) != nullptr;
  }

  /// Each wave takes the result's (M x N) tiles in turn; for each it holds
  /// its lanes' accumulator registers and runs the instruction over k, its
  /// operand fragments read from workgroup memory.
  mlir::LogicalResult emit(mlir::OpBuilder &builder, mlir::Location loc,
                           const Product &product) const override;

  /// Held accumulators (a loop-carried accumulator in registers): the waves
  /// form a grid over the result and each owns a block of the
  /// instruction's tiles, so that one A fragment serves a row of tiles and
  /// one B fragment a column; the registers are the accumulator fragments
  /// of those tiles, rows then columns. The grid is the layout passes'
  /// choice: rows across waves for rowsAcrossWarps products, otherwise the
  /// one that reads the fewest fragments per k step.
  bool holds(const HeldProduct &product) const override;
  llvm::SmallVector<std::pair<mlir::Value, mlir::Value>>
  registerPositions(mlir::OpBuilder &builder, mlir::Location loc,
                    const HeldProduct &product) const override;
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  accumulate(mlir::OpBuilder &builder, mlir::Location loc,
             const HeldProduct &product, mlir::Value a, mlir::Value b,
             mlir::ValueRange registers) const override;
  /// Operands of held products go to LDS K-major (A as stored, B
  /// transposed), so that each lane's run of k elements is one read, with
  /// each row's runs permuted by an XOR of the row (a swizzle), so that the
  /// rows a wave reads at one k fall in different banks.
  bool laysOutOperands(const HeldProduct &product) const override;
  mlir::Value operandOffset(mlir::OpBuilder &builder, mlir::Location loc,
                            const HeldProduct &product, unsigned operand,
                            mlir::Value row, mlir::Value col) const override;
  /// The element offset operandOffset gives, for `row` and `col` known
  /// (what its tests hold against LDS banks).
  std::optional<int64_t> operandOffset(const HeldProduct &product,
                                       unsigned operand, int64_t row,
                                       int64_t col) const;
  /// Products whose rows the layout passes give to single waves
  /// (rowsAcrossWarps) keep each row in one wave: reductions along rows
  /// and per-row values (attention's running max and sum) stay in
  /// registers and shuffles.
  std::optional<RegisterRows>
  registerRows(const HeldProduct &product) const override;

private:
  /// How the waves share a held product.
  struct WaveTiling {
    const tk::MatrixIntrinsic *intrinsic;
    int64_t wavesM, wavesN, rows, cols;
  };
  std::optional<WaveTiling> tileWaves(const HeldProduct &product) const;
  /// The instruction a held product runs on (null: not held).
  const tk::MatrixIntrinsic *heldIntrinsic(const HeldProduct &product) const;

  tk::TargetInfo info;
};

/// The unit for `info`, or null when its preset has no matrix instruction.
std::shared_ptr<const tk::MatrixUnit>
makeMatrixUnit(const tk::TargetInfo &info);

/// The tk.dot ops of `module` whose element types one of `info`'s matrix
/// instructions takes: the dots whose code must hold matrix instructions.
int countMatrixDots(mlir::ModuleOp module, const tk::TargetInfo &info);

} // namespace tk::rocm

#endif // TK_BACKENDS_ROCM_COMPILER_MATRIXCORES_H_
