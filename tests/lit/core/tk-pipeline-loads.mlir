// RUN: tk-opt %s --tk-assign-linear-layouts="target=amd-cdna3 num-warps=4" --tk-dot-operand-layouts --tk-pipeline-loads="num-stages=3" | FileCheck %s
// RUN: tk-opt %s --tk-assign-linear-layouts="target=amd-cdna3 num-warps=4" --tk-dot-operand-layouts --tk-pipeline-loads="num-stages=1" | FileCheck %s --check-prefix=ONE
//
// tk-pipeline-loads on a target without asynchronous copies (CDNA3; the
// rings of cp.async targets are tk-pipeline-loads-rings.mlir): a matmul's K loop walks a and b by pointer steps and
// masks the last trip's k. Both loads feed the dot, so both are issued one
// trip early: a copy before the loop loads trip 0 (masked by 0 < n), each
// trip loads the next at its start (the pointers one step on, as the trip
// yields them; k's mask for i + 1; and i + 1 < n), and the dot multiplies
// the tiles the loop carries. The bias load feeds no dot and stays.

// CHECK-LABEL: tk.func @matmul_k_loop
// CHECK: %[[RUNS:.+]] = arith.cmpi slt, %[[C0:.+]], %[[N:[^ ]+]] : i32
// CHECK: %[[RUNS_A:.+]] = tk.splat %[[RUNS]] : i1 -> tensor<64x32xi1
// CHECK: %[[MASK_A0:.+]] = arith.andi %{{.+}}, %[[RUNS_A]]
// CHECK: %[[A0:.+]] = tk.load %{{.+}}, %[[MASK_A0]], %{{.+}} : tensor<64x32x!tk.ptr<f16>
// CHECK: %[[B0:.+]] = tk.load {{.+}} : tensor<32x64x!tk.ptr<f16>
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %[[N]] step %[[STEP:[^ ]+]] iter_args(%[[PA:[^ ]+]] = %{{[^,]+}}, %[[PB:[^ ]+]] = %{{[^,]+}}, %[[ACC:[^ ]+]] = %{{[^,]+}}, %[[A:[^ ]+]] = %[[A0]], %[[B:[^ ]+]] = %[[B0]])
// CHECK-NEXT: %[[NEXT:.+]] = arith.addi %[[I]], %[[STEP]] : i32
// CHECK-NEXT: %[[PA_NEXT:.+]] = tk.addptr %[[PA]],
// CHECK-NEXT: %[[PB_NEXT:.+]] = tk.addptr %[[PB]],
// CHECK-NEXT: %[[MORE:.+]] = arith.cmpi slt, %[[NEXT]], %[[N]] : i32
// CHECK: arith.muli %[[NEXT]],
// CHECK: %[[A_NEXT:.+]] = tk.load %[[PA_NEXT]],
// CHECK: %[[B_NEXT:.+]] = tk.load %[[PB_NEXT]],
// CHECK: tk.load %{{.+}} : tensor<64x64x!tk.ptr<f32>
// CHECK: tk.dot %[[A]], %[[B]], %[[ACC]]
// CHECK: scf.yield %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[A_NEXT]], %[[B_NEXT]] :

// With num_stages 1 the loop is as it was.
// ONE-LABEL: tk.func @matmul_k_loop
// ONE: scf.for {{.*}} iter_args(%{{[^ ]+}} = %{{[^,]+}}, %{{[^ ]+}} = %{{[^,]+}}, %{{[^ ]+}} = %{{[^)]+}}) ->
// ONE: tk.load
// ONE: tk.load
// ONE: tk.dot
tk.func @matmul_k_loop(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %b: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %bias: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %c: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32, %k: i32) {
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
  %br = arith.muli %krows, %c64k : tensor<32x1xi32>
  %brb = tk.broadcast %br : tensor<32x1xi32> -> tensor<32x64xi32>
  %bcb = tk.broadcast %cols : tensor<1x64xi32> -> tensor<32x64xi32>
  %boff = arith.addi %brb, %bcb : tensor<32x64xi32>
  %pb0 = tk.splat %b : !tk.ptr<f16> -> tensor<32x64x!tk.ptr<f16>>
  %pb = tk.addptr %pb0, %boff : tensor<32x64x!tk.ptr<f16>>, tensor<32x64xi32>
  %cr = arith.muli %rows, %c64 : tensor<64x1xi32>
  %crb = tk.broadcast %cr : tensor<64x1xi32> -> tensor<64x64xi32>
  %ccb = tk.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %coff = arith.addi %crb, %ccb : tensor<64x64xi32>
  %pbias0 = tk.splat %bias : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %pbias = tk.addptr %pbias0, %coff : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  %stepa = arith.constant dense<32> : tensor<64x32xi32>
  %stepb = arith.constant dense<2048> : tensor<32x64xi32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %zf = arith.constant dense<0.0> : tensor<64x32xf16>
  %zfb = arith.constant dense<0.0> : tensor<32x64xf16>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32s = arith.constant 32 : i32
  %res:3 = scf.for %i = %c0 to %n step %c1 iter_args(%qa = %pa, %qb = %pb, %acc = %zero) -> (tensor<64x32x!tk.ptr<f16>>, tensor<32x64x!tk.ptr<f16>>, tensor<64x64xf32>) : i32 {
    %done = arith.muli %i, %c32s : i32
    %left = arith.subi %k, %done : i32
    %lefta = tk.splat %left : i32 -> tensor<1x32xi32>
    %ina = arith.cmpi slt, %kcols, %lefta : tensor<1x32xi32>
    %maska = tk.broadcast %ina : tensor<1x32xi1> -> tensor<64x32xi1>
    %av = tk.load %qa, %maska, %zf : tensor<64x32x!tk.ptr<f16>>
    %leftb = tk.splat %left : i32 -> tensor<32x1xi32>
    %inb = arith.cmpi slt, %krows, %leftb : tensor<32x1xi32>
    %maskb = tk.broadcast %inb : tensor<32x1xi1> -> tensor<32x64xi1>
    %bv = tk.load %qb, %maskb, %zfb : tensor<32x64x!tk.ptr<f16>>
    %biasv = tk.load %pbias : tensor<64x64x!tk.ptr<f32>>
    %d = tk.dot %av, %bv, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    %sum = arith.addf %d, %biasv : tensor<64x64xf32>
    %na = tk.addptr %qa, %stepa : tensor<64x32x!tk.ptr<f16>>, tensor<64x32xi32>
    %nb = tk.addptr %qb, %stepb : tensor<32x64x!tk.ptr<f16>>, tensor<32x64xi32>
    scf.yield %na, %nb, %sum : tensor<64x32x!tk.ptr<f16>>, tensor<32x64x!tk.ptr<f16>>, tensor<64x64xf32>
  }
  %pc0 = tk.splat %c : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %pc = tk.addptr %pc0, %coff : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  tk.store %pc, %res#2 : tensor<64x64x!tk.ptr<f32>>
  tk.return
}
