// RUN: tk-opt %s --tk-convert-to-simt="target=intel-dg2 num-warps=4" \
// RUN:   --canonicalize | FileCheck %s
// RUN: tk-opt %s --tk-assign-thread-layouts="target=intel-dg2 num-warps=4" \
// RUN:   | FileCheck %s --check-prefix=LAYOUT

// A dot without a matrix unit whose accumulator is loop-carried and read by
// nothing else updates the loop's buffer in place: each thread reads an
// element of the accumulator before it writes the same element, and no
// other thread reads it. One 32x32 f32 tile of workgroup memory, not two,
// and no copy into the carried buffer at the yield.
// Which thread computes which element is recorded on the dot: single
// elements, thread t taking t, t + 32, ...
// LAYOUT: tk.dot {{.*}} {tkw.layout = #tkw.shared<written = #tkw.runs<width = 1, threads = 32>>}
// CHECK-COUNT-1: memref.global "private" @acc_loop_tile{{[0-9]+}} : memref<32x32xf32
// CHECK-NOT: memref.global {{.*}}memref<32x32xf32
// CHECK: scf.for %{{.*}} = %c0_i32 to %arg3 step %c1_i32 : i32 {
// CHECK: %[[ACC:.*]] = memref.load %[[BUF:.*]][%[[I:.*]], %[[J:.*]]] : memref<32x32xf32
// CHECK: %[[SUM:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ACC]]) -> (f32) {
// CHECK: math.fma
// CHECK: memref.store %[[SUM]], %[[BUF]][%[[I]], %[[J]]] : memref<32x32xf32
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: }

tk.func @acc_loop(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                  %b: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                  %c: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32) {
  %r = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %row = tk.expand_dims %r {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %col = tk.expand_dims %r {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %c32 = arith.constant dense<32> : tensor<32x1xi32>
  %rows = arith.muli %row, %c32 : tensor<32x1xi32>
  %rb = tk.broadcast %rows : tensor<32x1xi32> -> tensor<32x32xi32>
  %cb = tk.broadcast %col : tensor<1x32xi32> -> tensor<32x32xi32>
  %offs = arith.addi %rb, %cb : tensor<32x32xi32>
  %sa = tk.splat %a : !tk.ptr<f16> -> tensor<32x32x!tk.ptr<f16>>
  %pa = tk.addptr %sa, %offs : tensor<32x32x!tk.ptr<f16>>, tensor<32x32xi32>
  %sb = tk.splat %b : !tk.ptr<f16> -> tensor<32x32x!tk.ptr<f16>>
  %pb = tk.addptr %sb, %offs : tensor<32x32x!tk.ptr<f16>>, tensor<32x32xi32>
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%acc_iter = %zero) -> (tensor<32x32xf32>) : i32 {
    %ta = tk.load %pa : tensor<32x32x!tk.ptr<f16>>
    %tb = tk.load %pb : tensor<32x32x!tk.ptr<f16>>
    %next = tk.dot %ta, %tb, %acc_iter : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
    scf.yield %next : tensor<32x32xf32>
  }
  %sc = tk.splat %c : !tk.ptr<f32> -> tensor<32x32x!tk.ptr<f32>>
  %pc = tk.addptr %sc, %offs : tensor<32x32x!tk.ptr<f32>>, tensor<32x32xi32>
  tk.store %pc, %acc : tensor<32x32x!tk.ptr<f32>>
  tk.return
}
