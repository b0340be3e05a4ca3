//===- ScalarOps.h - one element of a tile op, as every lowering computes it
//-===//
//
// The arithmetic of one element, shared by the CPU's loop lowering
// (tk-convert-to-loops) and the register lowering
// (tk-convert-registers-to-simt), so that a kernel computes the same
// values on every backend: narrow floats (f16, bf16, fp8) are computed in
// f32 and rounded once per op, and float conversions round as tk.fp_to_fp
// says.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_SCALAROPS_H
#define TK_CORE_CONVERSION_SCALAROPS_H

#include "tk/ir/Dialect.h"

#include "mlir/IR/Builders.h"

#include <optional>
#include <string>

namespace tk {

/// fp8 (f8E4M3FN, f8E5M2): no target computes on it, and LLVM has no such
/// type; tk-expand-fp8 turns its conversions into integer arithmetic.
inline bool isFp8(mlir::Type type) {
  auto f = llvm::dyn_cast<mlir::FloatType>(type);
  return f && f.getWidth() == 8;
}

/// f16, bf16 and fp8: computed in f32.
inline bool isNarrowFloat(mlir::Type type) {
  return type.isF16() || type.isBF16() || isFp8(type);
}

/// The type a scalar of `type` moves through memory as, in LLVM's loads and
/// stores: fp8 as its 8 bits (LLVM has no fp8 type), anything else as
/// itself.
inline mlir::Type getMemoryType(mlir::Type type) {
  return isFp8(type) ? mlir::IntegerType::get(type.getContext(), 8) : type;
}

/// llvm.load of a `type` at `address`, through getMemoryType.
mlir::Value loadScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                       mlir::Value address, unsigned alignment,
                       bool isVolatile = false);

/// llvm.store of `value` at `address`, through getMemoryType.
void storeScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                 mlir::Value address, unsigned alignment);

/// `value` converted to `to`: widening exactly, narrowing to nearest (ties
/// to even) or, with RTZ, toward zero; f16 <-> bf16 and f64 -> f16/bf16
/// through f32.
mlir::Value convertFloat(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value value, mlir::FloatType to,
                         std::optional<RoundingMode> rounding);

/// Whether emitScalarOp computes `op` in f32 (an arith or math op on
/// narrow floats other than a conversion, bitcast, select or constant).
bool computesInF32(mlir::Operation *op);

/// The element `op` (an arith or math op) computes from the elements
/// `operands`: a clone of `op` on scalars of `scalarType` of its element
/// types, in f32 where computesInF32 and rounded back.
mlir::FailureOr<mlir::Value>
emitScalarOp(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
             llvm::ArrayRef<mlir::Value> operands,
             llvm::function_ref<mlir::Type(mlir::Type)> scalarType);

/// `value` as printf takes it, with its conversion `spec` ("%g", "%p",
/// "%lld", "%d"): floats as doubles, integers narrower than 32 bits as ints.
/// tk.print's lowerings share it.
mlir::Value promoteForPrintf(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value value, std::string &spec);

/// Removes the rounding emitScalarOp puts between two ops on narrow floats
/// where it changes nothing: `extf(truncf(x))` becomes x when x is exactly
/// representable in the narrow type, which holds for a widened narrow value
/// and for a min, max, select or shuffle of such values (their result is
/// one of their operands). A min or max reduction of f16 then runs in f32 from
/// its inputs to its one result, not through a conversion at each step
/// (lavapipe's JIT took minutes over 128 such steps a thread). Values
/// crossing a block argument are not followed.
void foldExactNarrowRoundTrips(mlir::Operation *root);

} // namespace tk

#endif // TK_CORE_CONVERSION_SCALAROPS_H
