// RUN: tk-opt %s --tk-assign-linear-layouts="target=vulkan-cooperative-matrix:intrinsics=coopmat.16x16x16.f16.f32 num-warps=4" --tk-dot-operand-layouts --tk-cooperative-accumulators | FileCheck %s
// RUN: tk-opt %s --tk-assign-linear-layouts="target=vulkan num-warps=4" --tk-dot-operand-layouts --tk-cooperative-accumulators | FileCheck %s --check-prefix=NONE
//
// tk-cooperative-accumulators: a dot on Vulkan's cooperative matrices (an
// opaque intrinsic) computes into a #tkw.cooperative_matrix tile whose
// placement is the layout tk-assign-linear-layouts gave it. Its operands
// stay as loaded (the dot loads its matrices from workgroup memory). The
// loop carries the opaque tile: its splat initial value is retyped. The
// bias, a row broadcast over the tile, is broadcast into the opaque layout
// instead (from the row as loaded, its layout conversion skipped) and added
// on the matrices; the sum converts to its placement once, for the store.
// Without cooperative matrices the pass changes nothing.
// CHECK-LABEL: tk.func @dot_bias
// CHECK: %[[AV:.+]] = tk.load
// CHECK-NOT: tkw.convert_layout
// CHECK: %[[BV:.+]] = tk.load
// CHECK-NOT: tkw.convert_layout
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC:linear[0-9]*]]>>
// CHECK: %[[LOOP:.+]] = scf.for {{.*}} iter_args(%[[SUM:.+]] = %[[ZERO]]) -> (tensor<64x64xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC]]>>)
// CHECK-NEXT: %[[D:.+]] = tk.dot %[[AV]], %[[BV]], %[[SUM]] {tkw.intrinsic = "coopmat.16x16x16.f16.f32"} : {{.*}} -> tensor<64x64xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC]]>>
// CHECK-NEXT: scf.yield %[[D]]
// CHECK: %[[ROW:.+]] = tk.load %{{.+}} : tensor<1x64x!tk.ptr<f32>, #[[ROWL:linear[0-9]*]]>
// CHECK-NOT: tkw.convert_layout %[[ROW]]
// CHECK: %[[BIAS:.+]] = tk.broadcast %[[ROW]] : tensor<1x64xf32, #[[ROWL]]> -> tensor<64x64xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC]]>>
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[LOOP]], %[[BIAS]] : tensor<64x64xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC]]>>
// CHECK-NEXT: %[[PLACED:.+]] = tkw.convert_layout %[[SUM]] : tensor<64x64xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC]]>> -> tensor<64x64xf32, #[[ACC]]>
// CHECK-NOT: arith.addf
// CHECK: tkw.convert_layout %[[PLACED]] : tensor<64x64xf32, #[[ACC]]> -> tensor<64x64xf32, #{{.+}}>
// CHECK: tk.store
// NONE-LABEL: tk.func @dot_bias
// NONE-NOT: cooperative_matrix
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

// The accumulator scaled by a constant inside the loop is scaled on its
// matrices: no conversion in the loop.
// CHECK-LABEL: tk.func @scaled_in_loop
// CHECK: scf.for {{.*}} iter_args(%[[SUM:.+]] = %{{.+}}) -> (tensor<64x64xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC:linear[0-9]*]]>>)
// CHECK-NOT: tkw.convert_layout
// CHECK: %[[HALF:.+]] = arith.constant dense<5.000000e-01> : tensor<64x64xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC]]>>
// CHECK-NEXT: %[[T:.+]] = arith.mulf %[[SUM]], %[[HALF]] : tensor<64x64xf32, #tkw.cooperative_matrix
// CHECK-NEXT: %[[D:.+]] = tk.dot {{.*}}, %[[T]] {tkw.intrinsic = "coopmat.16x16x16.f16.f32"}
// CHECK-NEXT: scf.yield %[[D]]
tk.func @scaled_in_loop(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %b: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %bias: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %c: !tk.ptr<f32> {tk.divisibility = 16 : i32}) {
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
    %half = arith.constant dense<0.5> : tensor<64x64xf32>
    %t = arith.mulf %s, %half : tensor<64x64xf32>
    %d = tk.dot %av, %bv, %t : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
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

// An accumulator two loops carry (split over an outer and an inner loop)
// stays in matrices through both, and leaves after the outer one (with its
// bias).
// CHECK-LABEL: tk.func @nested_loops
// CHECK: %[[OUTER:.+]] = scf.for {{.*}} iter_args(%[[S:.+]] = %{{.+}}) -> (tensor<64x64xf32, #tkw.cooperative_matrix
// CHECK-NEXT: %[[INNER:.+]] = scf.for {{.*}} iter_args(%[[T:.+]] = %[[S]]) -> (tensor<64x64xf32, #tkw.cooperative_matrix
// CHECK-NEXT: %[[D:.+]] = tk.dot {{.*}}, %[[T]] {tkw.intrinsic = "coopmat.16x16x16.f16.f32"}
// CHECK-NEXT: scf.yield %[[D]]
// CHECK: scf.yield %[[INNER]]
// CHECK: %[[SUM:.+]] = arith.addf %[[OUTER]], %{{.+}} : tensor<64x64xf32, #tkw.cooperative_matrix
// CHECK-NEXT: tkw.convert_layout %[[SUM]] : tensor<64x64xf32, #tkw.cooperative_matrix
tk.func @nested_loops(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %b: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %bias: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %c: !tk.ptr<f32> {tk.divisibility = 16 : i32}) {
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
    %inner = scf.for %j = %c0 to %c4 step %c1 iter_args(%t = %s) -> (tensor<64x64xf32>) : i32 {
      %d = tk.dot %av, %bv, %t : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    scf.yield %inner : tensor<64x64xf32>
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

// A float conversion that is all the leaving tile meets (the epilogue's
// truncf to f16) happens on the matrices before they leave: the tile
// leaves in f16.
// CHECK-LABEL: tk.func @rounded
// CHECK: %[[LOOP:.+]] = scf.for
// CHECK: %[[HALF:.+]] = arith.truncf %[[LOOP]] : tensor<64x64xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC:linear[0-9]*]]>> to tensor<64x64xf16, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC]]>>
// CHECK-NEXT: %[[PLACED:.+]] = tkw.convert_layout %[[HALF]] : tensor<64x64xf16, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC]]>> -> tensor<64x64xf16, #[[ACC]]>
// CHECK-NOT: arith.truncf
// CHECK: tk.store
tk.func @rounded(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %b: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %bias: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %c: !tk.ptr<f16> {tk.divisibility = 16 : i32}) {
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
  %sum = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xf16>
  %cr = arith.muli %rows, %c64 : tensor<64x1xi32>
  %crb = tk.broadcast %cr : tensor<64x1xi32> -> tensor<64x64xi32>
  %ccb = tk.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %coff = arith.addi %crb, %ccb : tensor<64x64xi32>
  %pc0 = tk.splat %c : !tk.ptr<f16> -> tensor<64x64x!tk.ptr<f16>>
  %pc = tk.addptr %pc0, %coff : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  tk.store %pc, %sum : tensor<64x64x!tk.ptr<f16>>
  tk.return
}

// Attention's accumulator: scaled by a column (a factor a row) every trip
// and divided by another after the loop, then rounded to f16. The columns
// are broadcast into the opaque layout and the work happens on the
// matrices: the accumulator never leaves them in the loop, and leaves once,
// in f16.
// CHECK-LABEL: tk.func @rows_scaled
// CHECK: %[[LOOP:.+]] = scf.for {{.*}} iter_args(%[[SUM:.+]] = %{{.+}}) -> (tensor<64x64xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC:linear[0-9]*]]>>)
// CHECK-NOT: tkw.convert_layout
// CHECK: %[[ALPHA:.+]] = tk.broadcast %{{.+}} : tensor<64x1xf32, #{{.+}}> -> tensor<64x64xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC]]>>
// CHECK-NEXT: %[[T:.+]] = arith.mulf %[[SUM]], %[[ALPHA]] : tensor<64x64xf32, #tkw.cooperative_matrix
// CHECK-NEXT: %[[D:.+]] = tk.dot {{.*}}, %[[T]] {tkw.intrinsic = "coopmat.16x16x16.f16.f32"}
// CHECK-NEXT: scf.yield %[[D]]
// CHECK: %[[L:.+]] = tk.broadcast %{{.+}} : tensor<64x1xf32, #{{.+}}> -> tensor<64x64xf32, #tkw.cooperative_matrix
// CHECK-NEXT: %[[Q:.+]] = arith.divf %[[LOOP]], %[[L]] : tensor<64x64xf32, #tkw.cooperative_matrix
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[Q]] : tensor<64x64xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC]]>> to tensor<64x64xf16, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC]]>>
// CHECK-NEXT: tkw.convert_layout %[[H]] : tensor<64x64xf16, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #[[ACC]]>> -> tensor<64x64xf16, #[[ACC]]>
// CHECK-NOT: arith.divf
// CHECK: tk.store
tk.func @rows_scaled(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %b: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %scale: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %c: !tk.ptr<f16> {tk.divisibility = 16 : i32}) {
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
  %ps0 = tk.splat %scale : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  %ps = tk.addptr %ps0, %r64 : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %zero) -> (tensor<64x64xf32>) : i32 {
    %alpha = tk.load %ps : tensor<64x!tk.ptr<f32>>
    %alpha2 = tk.expand_dims %alpha {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
    %alphab = tk.broadcast %alpha2 : tensor<64x1xf32> -> tensor<64x64xf32>
    %t = arith.mulf %s, %alphab : tensor<64x64xf32>
    %d = tk.dot %av, %bv, %t : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %l = tk.load %ps : tensor<64x!tk.ptr<f32>>
  %l2 = tk.expand_dims %l {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
  %lb = tk.broadcast %l2 : tensor<64x1xf32> -> tensor<64x64xf32>
  %q = arith.divf %acc, %lb : tensor<64x64xf32>
  %h = arith.truncf %q : tensor<64x64xf32> to tensor<64x64xf16>
  %cr = arith.muli %rows, %c64 : tensor<64x1xi32>
  %crb = tk.broadcast %cr : tensor<64x1xi32> -> tensor<64x64xi32>
  %ccb = tk.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %coff = arith.addi %crb, %ccb : tensor<64x64xi32>
  %pc0 = tk.splat %c : !tk.ptr<f16> -> tensor<64x64x!tk.ptr<f16>>
  %pc = tk.addptr %pc0, %coff : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  tk.store %pc, %h : tensor<64x64x!tk.ptr<f16>>
  tk.return
}
