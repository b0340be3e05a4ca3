// RUN: tk-opt %s --split-input-file --tk-hoist-loop-invariants | FileCheck %s

// A pointer walk whose step tile is built inside the loop (as Triton's TTIR
// writes it) leaves with the step: the walk's offset is then the splat of a
// value defined outside the loop, the form the lowering pipelines. The
// load, its sum and the walk stay.

// CHECK-LABEL: tk.func @step_built_in_the_loop
// CHECK:       %[[STEP:.+]] = arith.muli
// CHECK-NEXT:  %[[TILE:.+]] = tk.splat %[[STEP]] : i32 -> tensor<64xi32>
// CHECK-NEXT:  scf.for
// CHECK-NEXT:    tk.load
// CHECK-NEXT:    arith.addf
// CHECK-NEXT:    tk.addptr %{{.+}}, %[[TILE]]
// CHECK-NEXT:    scf.yield
tk.func @step_built_in_the_loop(%p: !tk.ptr<f32>, %n: i32, %stride: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %r = tk.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %ps = tk.splat %p : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  %ptrs = tk.addptr %ps, %r : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %acc, %last = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero, %q = %ptrs) -> (tensor<64xf32>, tensor<64x!tk.ptr<f32>>) : i32 {
    %x = tk.load %q : tensor<64x!tk.ptr<f32>>
    %sum = arith.addf %a, %x : tensor<64xf32>
    %step = arith.muli %stride, %c64 : i32
    %off = tk.splat %step : i32 -> tensor<64xi32>
    %nq = tk.addptr %q, %off : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
    scf.yield %sum, %nq : tensor<64xf32>, tensor<64x!tk.ptr<f32>>
  }
  tk.store %ptrs, %acc : tensor<64x!tk.ptr<f32>>
  tk.return
}

// -----

// A dense constant step (Triton's `a_ptrs += BLOCK_K` with a stride of 1)
// becomes the splat of a scalar constant; a dense constant used otherwise
// is left alone.

// CHECK-LABEL: tk.func @constant_step
// CHECK-DAG:   %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<16x32xf32>
// CHECK-DAG:   %[[C32:.+]] = arith.constant 32 : i32
// CHECK-DAG:   %[[TILE:.+]] = tk.splat %[[C32]] : i32 -> tensor<16x32xi32>
// CHECK-NOT:   dense<32>
// CHECK:       scf.for {{.*}} iter_args(%{{.+}} = %[[ZERO]]
// CHECK:         tk.addptr %{{.+}}, %[[TILE]]
tk.func @constant_step(%p: !tk.ptr<f32>, %o: !tk.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<16x32xf32>
  %step = arith.constant dense<32> : tensor<16x32xi32>
  %r = tk.make_range {start = 0 : i32, end = 32 : i32} : tensor<32xi32>
  %row = tk.expand_dims %r {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %offs = tk.broadcast %row : tensor<1x32xi32> -> tensor<16x32xi32>
  %ps = tk.splat %p : !tk.ptr<f32> -> tensor<16x32x!tk.ptr<f32>>
  %ptrs = tk.addptr %ps, %offs : tensor<16x32x!tk.ptr<f32>>, tensor<16x32xi32>
  %acc, %last = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero, %q = %ptrs) -> (tensor<16x32xf32>, tensor<16x32x!tk.ptr<f32>>) : i32 {
    %x = tk.load %q : tensor<16x32x!tk.ptr<f32>>
    %sum = arith.addf %a, %x : tensor<16x32xf32>
    %nq = tk.addptr %q, %step : tensor<16x32x!tk.ptr<f32>>, tensor<16x32xi32>
    scf.yield %sum, %nq : tensor<16x32xf32>, tensor<16x32x!tk.ptr<f32>>
  }
  %os = tk.splat %o : !tk.ptr<f32> -> tensor<16x32x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %offs : tensor<16x32x!tk.ptr<f32>>, tensor<16x32xi32>
  tk.store %optrs, %acc : tensor<16x32x!tk.ptr<f32>>
  tk.return
}

// -----

// What reads or writes memory stays in the loop, even when its operands
// do not change: a load of a fixed address (a write may change it) and a
// store.

// CHECK-LABEL: tk.func @memory_stays
// CHECK:       scf.for
// CHECK-NEXT:    %[[X:.+]] = tk.load %arg0 : !tk.ptr<f32>
// CHECK-NEXT:    tk.store %arg1, %[[X]] : !tk.ptr<f32>
// CHECK-NEXT:  }
tk.func @memory_stays(%p: !tk.ptr<f32>, %o: !tk.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %x = tk.load %p : !tk.ptr<f32>
    tk.store %o, %x : !tk.ptr<f32>
  }
  tk.return
}

// -----

// Triton's grouped matmul, as imported from the corpus: A's step is the
// dense constant BLOCK_K (stride_ak is 1), B's the product BLOCK_K *
// stride_bk built in the loop. Both walks step by splats defined before
// the loop.
// RUN: tk-opt --from ttir %S/../../ttir/corpus/matmul_f16/kernel.ttir --tk-hoist-loop-invariants | FileCheck %s --check-prefix=MATMUL
// MATMUL:      %[[A_STEP:.+]] = tk.splat %c32_i32 : i32 -> tensor<64x32xi32>
// MATMUL:      %[[B_STEP:.+]] = tk.splat %{{.+}} : i32 -> tensor<32x64xi32>
// MATMUL-NEXT: scf.for
// MATMUL:        tk.addptr %{{.+}}, %[[A_STEP]] : tensor<64x32x!tk.ptr<f16>>
// MATMUL-NEXT:   tk.addptr %{{.+}}, %[[B_STEP]] : tensor<32x64x!tk.ptr<f16>>
