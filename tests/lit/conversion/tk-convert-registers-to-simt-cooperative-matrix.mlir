// RUN: tk-opt %s --tk-assign-linear-layouts="target=vulkan-cooperative-matrix:intrinsics=coopmat.16x16x16.f16.f32 num-warps=4" --tk-dot-operand-layouts --tk-cooperative-accumulators --tk-allocate-shared-memory="target=vulkan-cooperative-matrix:intrinsics=coopmat.16x16x16.f16.f32" --tk-insert-barriers --tk-convert-registers-to-simt | FileCheck %s
//
// tk-convert-registers-to-simt on cooperative matrices (64x32 by 32x64 f16
// into f32, 4 warps, each 32x32 of the product: four 16x16 matrices). The
// splat accumulator is one constant matrix; the loop carries the four
// matrices. Each trip the threads write a and b to the dot's scratch in
// column blocks of 16 (a: k, b: n), eight f16 a 16-byte word (vector<4xi32>:
// SPIR-V's f16 arrays take an element an access), and after a barrier each
// k step (two of 16) loads a warp's two rows of a and two columns of b, each
// once, at the blocks' row stride (16 elements, 2 words, not the tiles' 32
// and 64), and multiplies each accumulator matrix once. After the loop
// the bias (a row of 64, broadcast) is added in place: the threads that
// hold its elements write them to the broadcast's scratch once, and after
// a barrier each matrix loads its 16 columns of it with stride 0 (every
// row the same) and adds it to its accumulator. Then each sum is stored
// whole to the warp's 1 KB of scratch (16 per row) and read back by its
// lanes, between barriers.
// CHECK: memref.global "private" @"dot_bias_scratch_vector<4xi32>" : memref<512xvector<4xi32>, #gpu.address_space<workgroup>>
// CHECK-NOT: dot_bias_scratch_f16
// CHECK-LABEL: func.func @dot_bias
// CHECK: %[[ZERO:.+]] = tkw.matrix_splat %{{.+}} : f32 -> !tkw.matrix<16, 16, f32, "acc">
// CHECK: %[[LOOP:.+]]:4 = scf.for {{.*}} iter_args(%[[C0:.+]] = %[[ZERO]], %[[C1:.+]] = %[[ZERO]], %[[C2:.+]] = %[[ZERO]], %[[C3:.+]] = %[[ZERO]]) -> (!tkw.matrix<16, 16, f32, "acc">, !tkw.matrix<16, 16, f32, "acc">, !tkw.matrix<16, 16, f32, "acc">, !tkw.matrix<16, 16, f32, "acc">)
// CHECK: gpu.barrier
// CHECK: vector.bitcast %{{.+}} : vector<2xf16> to vector<1xi32>
// CHECK-COUNT-4: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<512xvector<4xi32>, #gpu.address_space<workgroup>>
// CHECK-NOT: memref.store
// CHECK: gpu.barrier
// CHECK: %[[A0:.+]] = tkw.matrix_load %{{.+}}[%{{.+}}] stride = 2 : memref<512xvector<4xi32>, #gpu.address_space<workgroup>> -> !tkw.matrix<16, 16, f16, "a">
// CHECK: %[[B0:.+]] = tkw.matrix_load %{{.+}}[%{{.+}}] stride = 2 : memref<512xvector<4xi32>, #gpu.address_space<workgroup>> -> !tkw.matrix<16, 16, f16, "b">
// CHECK: tkw.matrix_multiply_add %[[A0]], %[[B0]], %[[C0]]
// CHECK-COUNT-7: tkw.matrix_multiply_add
// CHECK-NOT: tkw.matrix_multiply_add
// CHECK: scf.yield
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %[[VECTOR:.+]][%{{.+}}] : memref<1024xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-NOT: memref.store
// CHECK: %[[BIAS0:.+]] = tkw.matrix_load %[[VECTOR]][%{{.+}}] stride = 0 : memref<1024xf32, #gpu.address_space<workgroup>> -> !tkw.matrix<16, 16, f32, "acc">
// CHECK-COUNT-3: tkw.matrix_load %[[VECTOR]][%{{.+}}] stride = 0 :
// CHECK: %[[SUM0:.+]] = tkw.matrix_elementwise addf %[[LOOP]]#0, %[[BIAS0]] : !tkw.matrix<16, 16, f32, "acc">
// CHECK-COUNT-3: tkw.matrix_elementwise addf %[[LOOP]]
// CHECK: tkw.matrix_store %[[SUM0]], %{{.+}}[%{{.+}}] stride = 16 : !tkw.matrix<16, 16, f32, "acc">, memref<{{.*}}xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-3: tkw.matrix_store %{{.+}}, %{{.+}}[%{{.+}}] stride = 16 : !tkw.matrix<16, 16, f32, "acc">, memref<{{.*}}xf32, #gpu.address_space<workgroup>>
tk.func @dot_bias(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %b: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %bias: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %c: !tk.ptr<f32> {tk.divisibility = 16 : i32}) {
  %r64 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %r32 = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %rows = tk.expand_dims %r64 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %kcols = tk.expand_dims %r32 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %krows = tk.expand_dims %r32 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %cols = tk.expand_dims %r64 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %c32 = arith.constant dense<32> : tensor<64x1xi32>
  %c64k = arith.constant dense<64> : tensor<32x1xi32>
  %c64 = arith.constant dense<64> : tensor<64x1xi32>
  %ar = arith.muli %rows, %c32 : tensor<64x1xi32>
  %arb = tk.broadcast %ar : tensor<64x1xi32> -> tensor<64x32xi32>
  %acb = tk.broadcast %kcols : tensor<1x32xi32> -> tensor<64x32xi32>
  %aoff = arith.addi %arb, %acb : tensor<64x32xi32>
  %pa0 = tk.splat %a : !tk.ptr<f16> -> tensor<64x32x!tk.ptr<f16>>
  %pa = tk.addptr %pa0, %aoff : tensor<64x32x!tk.ptr<f16>>, tensor<64x32xi32>
  %av = tk.load %pa : tensor<64x32x!tk.ptr<f16>>
  %br = arith.muli %krows, %c64k : tensor<32x1xi32>
  %brb = tk.broadcast %br : tensor<32x1xi32> -> tensor<32x64xi32>
  %bcb = tk.broadcast %cols : tensor<1x64xi32> -> tensor<32x64xi32>
  %boff = arith.addi %brb, %bcb : tensor<32x64xi32>
  %pb0 = tk.splat %b : !tk.ptr<f16> -> tensor<32x64x!tk.ptr<f16>>
  %pb = tk.addptr %pb0, %boff : tensor<32x64x!tk.ptr<f16>>, tensor<32x64xi32>
  %bv = tk.load %pb : tensor<32x64x!tk.ptr<f16>>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %zero) -> (tensor<64x64xf32>) : i32 {
    %d = tk.dot %av, %bv, %s : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %pbias0 = tk.splat %bias : !tk.ptr<f32> -> tensor<1x64x!tk.ptr<f32>>
  %pbias = tk.addptr %pbias0, %cols : tensor<1x64x!tk.ptr<f32>>, tensor<1x64xi32>
  %biasv = tk.load %pbias : tensor<1x64x!tk.ptr<f32>>
  %biasb = tk.broadcast %biasv : tensor<1x64xf32> -> tensor<64x64xf32>
  %sum = arith.addf %acc, %biasb : tensor<64x64xf32>
  %cr = arith.muli %rows, %c64 : tensor<64x1xi32>
  %crb = tk.broadcast %cr : tensor<64x1xi32> -> tensor<64x64xi32>
  %ccb = tk.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %coff = arith.addi %crb, %ccb : tensor<64x64xi32>
  %pc0 = tk.splat %c : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %pc = tk.addptr %pc0, %coff : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  tk.store %pc, %sum : tensor<64x64x!tk.ptr<f32>>
  tk.return
}
