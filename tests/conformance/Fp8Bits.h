//===- Fp8Bits.h - fp8 values from and to their bits, as APFloat rounds ---===//
//
// The harness encodes inputs and decodes outputs with these, and the
// corrupting fixture plugin spoils fp8 outputs with them: one definition of
// what an fp8 byte means on the host.
//
//===----------------------------------------------------------------------===//

#ifndef TK_TESTS_CONFORMANCE_FP8BITS_H
#define TK_TESTS_CONFORMANCE_FP8BITS_H

#include "llvm/ADT/APFloat.h"

#include <cstdint>

namespace tk::conformance {

/// f8E4M3FN (`e4m3`) or f8E5M2 in APFloat's semantics, which the backends'
/// conversions follow: to nearest, ties to even; past the largest finite
/// value, f8E5M2's infinity and f8E4M3FN's NaN.
inline const llvm::fltSemantics &fp8Semantics(bool e4m3) {
  return e4m3 ? llvm::APFloat::Float8E4M3FN() : llvm::APFloat::Float8E5M2();
}

inline uint8_t toFp8Bits(bool e4m3, double value) {
  llvm::APFloat f(value);
  bool losesInfo = false;
  f.convert(fp8Semantics(e4m3), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return uint8_t(f.bitcastToAPInt().getZExtValue());
}

inline double fromFp8Bits(bool e4m3, uint8_t bits) {
  llvm::APFloat f(fp8Semantics(e4m3), llvm::APInt(8, bits));
  bool losesInfo = false;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return f.convertToDouble();
}

} // namespace tk::conformance

#endif // TK_TESTS_CONFORMANCE_FP8BITS_H
