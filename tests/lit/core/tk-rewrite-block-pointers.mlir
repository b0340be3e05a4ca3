// RUN: tk-opt %s --split-input-file --tk-rewrite-block-pointers | FileCheck %s

// A block pointer walked by a loop: the loop carries the tile of its
// pointers, advanced by one splat step (delta x stride), and the window
// offset it advances, which the mask is built from; the pieces it passes on
// unchanged (base, shape, strides, the row offset) leave it. The load is
// the gather of the tile, its boundary check on dimension 1 the mask
// `position ult shape`, its padding the other value; the store, without a
// check, is the plain scatter (the unit column stride left out). No block
// pointer is left.

// CHECK-LABEL: tk.func @walk
// CHECK-NOT:   !tk.ptr<tensor
// CHECK:       %[[BASE:.+]] = tk.splat %arg0 : !tk.ptr<f32> -> tensor<16x32x!tk.ptr<f32>>
// CHECK:       %[[START:.+]] = tk.addptr %[[BASE]], %{{.+}} : tensor<16x32x!tk.ptr<f32>>, tensor<16x32xi64>
// CHECK:       scf.for {{.+}} iter_args(%[[ACC:.+]] = %{{.+}}, %[[COL:.+]] = %c0_i32, %[[PTRS:.+]] = %[[START]]) -> (tensor<16x32xf32>, i32, tensor<16x32x!tk.ptr<f32>>)
// CHECK:         %[[RANGE:.+]] = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
// CHECK:         %[[COLS:.+]] = tk.splat %[[COL]] : i32 -> tensor<32xi32>
// CHECK:         %[[POS:.+]] = arith.addi %[[RANGE]], %[[COLS]] : tensor<32xi32>
// CHECK:         %[[WIDE:.+]] = arith.extsi %[[POS]] : tensor<32xi32> to tensor<32xi64>
// CHECK:         %[[ROW:.+]] = tk.expand_dims %[[WIDE]] {axis = 0 : i32} : tensor<32xi64> -> tensor<1x32xi64>
// CHECK:         %[[K:.+]] = tk.splat %arg3 : i64 -> tensor<1x32xi64>
// CHECK:         %[[KEEP:.+]] = arith.cmpi ult, %[[ROW]], %[[K]] : tensor<1x32xi64>
// CHECK:         %[[MASK:.+]] = tk.broadcast %[[KEEP]] : tensor<1x32xi1> -> tensor<16x32xi1>
// CHECK:         %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<16x32xf32>
// CHECK:         %[[X:.+]] = tk.load %[[PTRS]], %[[MASK]], %[[ZERO]] : tensor<16x32x!tk.ptr<f32>>
// CHECK:         %[[COL2:.+]] = arith.addi %[[COL]], %c32_i32 : i32
// CHECK:         %[[DELTA:.+]] = arith.extsi %c32_i32 : i32 to i64
// CHECK:         %[[STEP:.+]] = arith.muli %[[DELTA]], %c1_i64 : i64
// CHECK:         %[[SPLAT:.+]] = tk.splat %[[STEP]] : i64 -> tensor<16x32xi64>
// CHECK:         %[[NEXT:.+]] = tk.addptr %[[PTRS]], %[[SPLAT]] : tensor<16x32x!tk.ptr<f32>>, tensor<16x32xi64>
// CHECK:         scf.yield %{{.+}}, %[[COL2]], %[[NEXT]] :
// CHECK-NOT:   arith.muli %{{.+}} : tensor<1x32xi64>
// CHECK:       tk.store %{{.+}}, %{{.+}} : tensor<16x32x!tk.ptr<f32>>
tk.func @walk(%x: !tk.ptr<f32>, %y: !tk.ptr<f32>, %m: i64, %k: i64, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %one = arith.constant 1 : i64
  %bp = tk.make_block_ptr %x, [%m, %k], [%k, %one], [%c0, %c0] {order = array<i32: 1, 0>} : !tk.ptr<f32> -> !tk.ptr<tensor<16x32xf32>>
  %zero = arith.constant dense<0.0> : tensor<16x32xf32>
  %acc, %end = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero, %p = %bp) -> (tensor<16x32xf32>, !tk.ptr<tensor<16x32xf32>>) : i32 {
    %v = tk.load %p {boundary_check = array<i32: 1>, padding = #tk.padding<zero>} : !tk.ptr<tensor<16x32xf32>>
    %s = arith.addf %a, %v : tensor<16x32xf32>
    %next = tk.advance %p, [%c0, %c32] : !tk.ptr<tensor<16x32xf32>>
    scf.yield %s, %next : tensor<16x32xf32>, !tk.ptr<tensor<16x32xf32>>
  }
  %out = tk.make_block_ptr %y, [%m, %k], [%k, %one], [%c0, %c0] {order = array<i32: 1, 0>} : !tk.ptr<f32> -> !tk.ptr<tensor<16x32xf32>>
  tk.store %out, %acc : !tk.ptr<tensor<16x32xf32>>
  tk.return
}

// -----

// A nan padding on both dimensions: two comparisons, anded, and NaN as
// the other value.

// CHECK-LABEL: tk.func @nan_padding
// CHECK:       arith.cmpi ult, %{{.+}}, %{{.+}} : tensor<8x1xi64>
// CHECK:       arith.cmpi ult, %{{.+}}, %{{.+}} : tensor<1x8xi64>
// CHECK:       %[[MASK:.+]] = arith.andi %{{.+}}, %{{.+}} : tensor<8x8xi1>
// CHECK:       %[[NAN:.+]] = arith.constant dense<0x7E00> : tensor<8x8xf16>
// CHECK:       tk.load %{{.+}}, %[[MASK]], %[[NAN]] : tensor<8x8x!tk.ptr<f16>>
tk.func @nan_padding(%x: !tk.ptr<f16>, %y: !tk.ptr<f16>, %m: i64, %o: i32) {
  %s = arith.constant 64 : i64
  %bp = tk.make_block_ptr %x, [%m, %m], [%s, %s], [%o, %o] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<8x8xf16>>
  %v = tk.load %bp {boundary_check = array<i32: 0, 1>, padding = #tk.padding<nan>} : !tk.ptr<tensor<8x8xf16>>
  %ps = tk.splat %y : !tk.ptr<f16> -> tensor<8x8x!tk.ptr<f16>>
  tk.store %ps, %v : tensor<8x8x!tk.ptr<f16>>
  tk.return
}
