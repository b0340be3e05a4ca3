// RUN: tk-opt %s --tk-expand-fp8 | FileCheck %s
//
// fp8 conversions become integer arithmetic on the bits, and fp8 constants
// their bits: what is left of fp8 is arith.bitcast, which LLVM's type
// converter makes i8. The values are checked in the conformance suite's
// fp8_*_edges cases (every fp8 value, every tie, the overflow boundary),
// against APFloat, on every backend that declares fp8.

// Narrowing to nearest even: the subnormal path adds a magic 2^14, whose
// ulp is f8E4M3FN's subnormal step 2^-9 (bits 0x46800000 = 1182793728); the
// normal path rebiases by 120 << 23 and adds just under half an ulp plus
// the ulp's parity; past 2^9 (0x44000000 = 1140850688) and for NaN, code
// 0x7f; the sign goes back on top.
// CHECK-LABEL: func.func @narrow
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.constant 1182793728 : i32
// CHECK: arith.addf
// CHECK: arith.shrui %{{.*}}, %c20_i32
// CHECK: arith.constant -1006108673 : i32
// CHECK: arith.cmpi uge, %{{.*}}, %c1140850688_i32
// CHECK: arith.cmpi ugt, %{{.*}}, %c2139095040_i32
// CHECK: %[[CODE:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK-NEXT: %[[FP8:.*]] = arith.bitcast %[[CODE]] : i8 to f8E4M3FN
// CHECK-NEXT: return %[[FP8]]
// CHECK-NOT: arith.truncf
func.func @narrow(%x: f32) -> f8E4M3FN {
  %y = arith.truncf %x : f32 to f8E4M3FN
  return %y : f8E4M3FN
}

// Widening exactly: normal codes rebiased (112 << 23 = 939524096 for
// f8E5M2), subnormals as their mantissa times 2^-16, infinity (0x7c) and
// NaN (above it) as such.
// CHECK-LABEL: func.func @widen
// CHECK: arith.bitcast %{{.*}} : f8E5M2 to i8
// CHECK: arith.constant 939524096 : i32
// CHECK: arith.uitofp
// CHECK: arith.mulf
// CHECK: arith.cmpi eq, %{{.*}}, %c124_i32
// CHECK: arith.cmpi ugt, %{{.*}}, %c124_i32
// CHECK: %[[F32:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT: return %[[F32]]
func.func @widen(%x: f8E5M2) -> f32 {
  %y = arith.extf %x : f8E5M2 to f32
  return %y : f32
}

// 1.5 in f8E4M3FN: exponent field 7, mantissa 100: 0x3c.
// CHECK-LABEL: func.func @constant
// CHECK: %[[C:.*]] = arith.constant 60 : i8
// CHECK-NEXT: arith.bitcast %[[C]] : i8 to f8E4M3FN
func.func @constant() -> f8E4M3FN {
  %c = arith.constant 1.5 : f8E4M3FN
  return %c : f8E4M3FN
}

// From f16 through f32, exactly, then one rounding.
// CHECK-LABEL: func.func @from_f16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.bitcast %{{.*}} : i8 to f8E5M2
func.func @from_f16(%x: f16) -> f8E5M2 {
  %y = arith.truncf %x : f16 to f8E5M2
  return %y : f8E5M2
}

// Vectors and narrowing from f64 are left alone: the lowerings convert fp8
// element by element, and convertFloat narrows f64 through f32.
// CHECK-LABEL: func.func @left
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xf8E4M3FN>
// CHECK: arith.truncf %{{.*}} : f64 to f8E4M3FN
func.func @left(%x: vector<4xf32>, %d: f64) -> (vector<4xf8E4M3FN>, f8E4M3FN) {
  %y = arith.truncf %x : vector<4xf32> to vector<4xf8E4M3FN>
  %z = arith.truncf %d : f64 to f8E4M3FN
  return %y, %z : vector<4xf8E4M3FN>, f8E4M3FN
}

// Integers go through f32 (exact over fp8's range), both ways.
// CHECK-LABEL: func.func @integers
// CHECK: %[[W:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
// CHECK: arith.bitcast %{{.*}} : f8E5M2 to i8
// CHECK: arith.fptoui %{{.*}} : f32 to i16
func.func @integers(%i: i32, %f: f8E5M2) -> (f8E4M3FN, i16) {
  %x = arith.sitofp %i : i32 to f8E4M3FN
  %y = arith.fptoui %f : f8E5M2 to i16
  return %x, %y : f8E4M3FN, i16
}
