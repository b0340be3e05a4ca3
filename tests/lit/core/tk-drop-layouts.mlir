// RUN: split-file %s %t
// RUN: tk-opt %t/pipeline.mlir --split-input-file --tk-assign-layouts="target=cpu num-warps=1" --tk-distribute-to-warps --tk-match-target-size --tk-drop-layouts | FileCheck %t/pipeline.mlir
// RUN: tk-opt %t/warp.mlir --tk-drop-layouts | FileCheck %t/warp.mlir
// RUN: for k in %examples/kernels/*.tk; do tk-opt $k --tk-assign-layouts="target=cpu num-warps=1" --tk-distribute-to-warps --tk-match-target-size --tk-drop-layouts || exit 1; done | FileCheck %s --check-prefix=SEEDS

// Every seed kernel goes through the framework and comes back layout-free.
// SEEDS: tk.func @
// SEEDS-NOT: tkw

//--- pipeline.mlir

// The CPU pipeline: the layout framework for one warp of the cpu target,
// then tk-drop-layouts. The kernel comes back as plain tk: no encodings, no
// tkw ops or attributes; the dot stays whole (the CPU has no intrinsic).

// CHECK-LABEL: tk.func @gemm_loop
// CHECK-NOT: tkw
// CHECK: scf.for {{.*}} -> (tensor<32x64xf32>, !tk.ptr<tensor<32x16xf16>>, !tk.ptr<tensor<16x64xf16>>)
// CHECK: tk.dot {{.*}} : tensor<32x16xf16> * tensor<16x64xf16> -> tensor<32x64xf32>
// CHECK-NOT: tkw
// CHECK: tk.store
tk.func @gemm_loop(%pa: !tk.ptr<f16>, %pb: !tk.ptr<f16>, %pc: !tk.ptr<f32>, %k: i32, %k64: i64) {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %c64 = arith.constant 64 : i32
  %l1 = arith.constant 1 : i64
  %l64 = arith.constant 64 : i64
  %ba = tk.make_block_ptr %pa, [%l64, %k64], [%k64, %l1], [%c0, %c0] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<32x16xf16>>
  %bb = tk.make_block_ptr %pb, [%k64, %l64], [%l64, %l1], [%c0, %c0] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<16x64xf16>>
  %zero = arith.constant dense<0.0> : tensor<32x64xf32>
  %r:3 = scf.for %i = %c0 to %k step %c16 iter_args(%acc = %zero, %qa = %ba, %qb = %bb) -> (tensor<32x64xf32>, !tk.ptr<tensor<32x16xf16>>, !tk.ptr<tensor<16x64xf16>>) : i32 {
    %a = tk.load %qa : !tk.ptr<tensor<32x16xf16>>
    %b = tk.load %qb : !tk.ptr<tensor<16x64xf16>>
    %d = tk.dot %a, %b, %acc : tensor<32x16xf16> * tensor<16x64xf16> -> tensor<32x64xf32>
    %na = tk.advance %qa, [%c0, %c16] : !tk.ptr<tensor<32x16xf16>>
    %nb = tk.advance %qb, [%c16, %c0] : !tk.ptr<tensor<16x64xf16>>
    scf.yield %d, %na, %nb : tensor<32x64xf32>, !tk.ptr<tensor<32x16xf16>>, !tk.ptr<tensor<16x64xf16>>
  }
  %rows = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %cols = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %r2 = tk.expand_dims %rows {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %c2 = tk.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %s64 = tk.splat %c64 : i32 -> tensor<32x1xi32>
  %r3 = arith.muli %r2, %s64 : tensor<32x1xi32>
  %r4 = tk.broadcast %r3 : tensor<32x1xi32> -> tensor<32x64xi32>
  %c3 = tk.broadcast %c2 : tensor<1x64xi32> -> tensor<32x64xi32>
  %off = arith.addi %r4, %c3 : tensor<32x64xi32>
  %base = tk.splat %pc : !tk.ptr<f32> -> tensor<32x64x!tk.ptr<f32>>
  %ptrs = tk.addptr %base, %off : tensor<32x64x!tk.ptr<f32>>, tensor<32x64xi32>
  tk.store %ptrs, %r#0 : tensor<32x64x!tk.ptr<f32>>
  tk.return
}

// -----

// A non-splat constant keeps its values, retyped without its layout.

// CHECK-LABEL: tk.func @dense_constant
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NOT: tkw
tk.func @dense_constant(%p: !tk.ptr<f32>) {
  %v = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %r = tk.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %base = tk.splat %p : !tk.ptr<f32> -> tensor<4x!tk.ptr<f32>>
  %ptrs = tk.addptr %base, %r : tensor<4x!tk.ptr<f32>>, tensor<4xi32>
  tk.store %ptrs, %v : tensor<4x!tk.ptr<f32>>
  tk.return
}

//--- warp.mlir

// Written at the warp level of one warp: a convert between layouts that
// give the warp the same (whole) tile is forwarded, the warp id is 0.

#blocked = #tkw.blocked<sizePerWarp = [16, 16], warpsPerCTA = [1, 1], order = [1, 0]>
#a = #tkw.dot_operand<opIdx = 0, parent = #blocked>
// CHECK-LABEL: tk.func @one_warp
// CHECK-NOT: tkw
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[X:.*]] = tk.load %{{.*}} : tensor<16x16x!tk.ptr<f32>>
// CHECK: tk.dot %[[X]], %[[X]], %[[X]] : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
// CHECK: tk.splat %[[ZERO]] : i32 -> tensor<16x16xi32>
// CHECK-NOT: tkw
tk.func @one_warp(%p: !tk.ptr<f32>) attributes {tkw.level = "intrinsic", tkw.num_warps = 1 : i32, tkw.target = "cpu", tkw.threads_per_warp = 1 : i32} {
  %w = tkw.warp_id : i32
  %ps = tk.splat %p : !tk.ptr<f32> -> tensor<16x16x!tk.ptr<f32>, #blocked>
  %x = tk.load %ps : tensor<16x16x!tk.ptr<f32>, #blocked>
  %xa = tkw.convert_layout %x : tensor<16x16xf32, #blocked> -> tensor<16x16xf32, #a>
  %d = tk.dot %xa, %x, %x : tensor<16x16xf32, #a> * tensor<16x16xf32, #blocked> -> tensor<16x16xf32, #blocked>
  %ws = tk.splat %w : i32 -> tensor<16x16xi32, #blocked>
  %q = tk.addptr %ps, %ws : tensor<16x16x!tk.ptr<f32>, #blocked>, tensor<16x16xi32, #blocked>
  tk.store %q, %d : tensor<16x16x!tk.ptr<f32>, #blocked>
  tk.return
}
