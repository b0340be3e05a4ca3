//===- HostFloat.cpp - f16 and bf16 conversions on the host ---------------===//
//
// Bit-exact IEEE binary16 / bfloat16 conversions for preparing and reading
// buffers, written on the bits so they behave the same with every compiler
// and host (no _Float16, no F16C requirement). Checked against LLVM's APFloat
// for every half value and for random floats in tests/unit/CApiTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "tk/tk.h"

#include <cmath>
#include <cstring>

namespace {

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// `value >> shift` rounded to nearest, ties to even.
uint32_t shiftRightRoundEven(uint32_t value, uint32_t shift) {
  uint32_t kept = value >> shift;
  uint32_t dropped = value & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (dropped > half || (dropped == half && (kept & 1)))
    ++kept;
  return kept;
}

} // namespace

extern "C" uint16_t tk_f32_to_f16(float value) {
  uint32_t bits = bitsOf(value);
  uint32_t sign = (bits >> 16) & 0x8000;
  uint32_t exponent = (bits >> 23) & 0xff;
  uint32_t mantissa = bits & 0x7fffff;
  if (exponent == 0xff) // infinity, or NaN kept quiet
    return uint16_t(sign | 0x7c00 | (mantissa ? 0x200 | (mantissa >> 13) : 0));
  // The exponent rebased from float's bias (127) to half's (15).
  int32_t halfExponent = int32_t(exponent) - 112;
  if (halfExponent >= 31)
    return uint16_t(sign | 0x7c00);
  if (halfExponent <= 0) {
    // A half subnormal counts units of 2^-24: the float's 24-bit significand
    // shifted right by 14 - halfExponent. Below half the smallest subnormal
    // it rounds to zero.
    if (halfExponent < -10)
      return uint16_t(sign);
    uint32_t significand = mantissa | 0x800000;
    return uint16_t(
        sign | shiftRightRoundEven(significand, uint32_t(14 - halfExponent)));
  }
  // A carry out of the mantissa moves into the exponent, up to infinity.
  uint32_t half = (uint32_t(halfExponent) << 10) | (mantissa >> 13);
  uint32_t dropped = mantissa & 0x1fff;
  if (dropped > 0x1000 || (dropped == 0x1000 && (half & 1)))
    ++half;
  return uint16_t(sign | half);
}

extern "C" float tk_f16_to_f32(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f)
    return floatOf(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) {
    // Zero or subnormal: mantissa units of 2^-24, exact in a float.
    float magnitude = std::ldexp(float(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

extern "C" uint16_t tk_f32_to_bf16(float value) {
  uint32_t bits = bitsOf(value);
  if (std::isnan(value)) // keep the sign, make it quiet
    return uint16_t(((bits >> 16) & 0x8000) | 0x7fc0);
  return uint16_t(shiftRightRoundEven(bits, 16) & 0xffff);
}

extern "C" float tk_bf16_to_f32(uint16_t bits) {
  return floatOf(uint32_t(bits) << 16);
}
