// RUN: tk-opt %s --tk-assign-thread-layouts="target=cuda-sm80 num-warps=4" --tk-pipeline-operands="target=cuda-sm80 num-warps=4 num-stages=3" | FileCheck %s
// RUN: not tk-opt %s --tk-pipeline-operands="target=cuda-sm80 num-warps=4 num-stages=3" 2>&1 | FileCheck %s --check-prefix=UNPLACED
// RUN: not tk-opt %s --tk-assign-thread-layouts="target=cuda-sm80 num-warps=4" --tk-pipeline-operands="target=cuda-sm80 num-warps=4 num-stages=0" 2>&1 | FileCheck %s --check-prefix=STAGES
//
// tk-pipeline-operands decides on recorded thread layouts which dot
// operands the backend's async copies load trips ahead (#tkw.ring). tk-opt
// gives it neither a matrix unit nor async copies, so nothing is held and
// nothing pipelined here; with CUDA's units the matmul's two operand loads
// get rings (backends/cuda/test/lit/thread-layouts.tk).

// CHECK-LABEL: tk.func @k_loop
// CHECK-SAME: tkw.threads = 128
// CHECK-NOT: tkw.ring
// CHECK: tk.return

// UNPLACED: error: 'tk.func' op tk-pipeline-operands: the kernel has no thread layouts; run tk-assign-thread-layouts first
// STAGES: error: tk-pipeline-operands: num-stages must be at least 1, not 0

tk.func @k_loop(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                %b: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                %c: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %K: i32) {
  %r = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %row = tk.expand_dims %r {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %col = tk.expand_dims %r {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %rowb = tk.broadcast %row : tensor<32x1xi32> -> tensor<32x32xi32>
  %colb = tk.broadcast %col : tensor<1x32xi32> -> tensor<32x32xi32>
  %c32 = arith.constant 32 : i32
  %c32t = tk.splat %c32 : i32 -> tensor<32x32xi32>
  %rows = arith.muli %rowb, %c32t : tensor<32x32xi32>
  %offs = arith.addi %rows, %colb : tensor<32x32xi32>
  %sa = tk.splat %a : !tk.ptr<f16> -> tensor<32x32x!tk.ptr<f16>>
  %pa = tk.addptr %sa, %offs : tensor<32x32x!tk.ptr<f16>>, tensor<32x32xi32>
  %sb = tk.splat %b : !tk.ptr<f16> -> tensor<32x32x!tk.ptr<f16>>
  %pb = tk.addptr %sb, %offs : tensor<32x32x!tk.ptr<f16>>, tensor<32x32xi32>
  %step = tk.splat %c32 : i32 -> tensor<32x32xi32>
  %zero = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
  %c0 = arith.constant 0 : i32
  %res:3 = scf.for %k = %c0 to %K step %c32 iter_args(%acc = %zero, %pa_it = %pa, %pb_it = %pb) -> (tensor<32x32xf32>, tensor<32x32x!tk.ptr<f16>>, tensor<32x32x!tk.ptr<f16>>) : i32 {
    %x = tk.load %pa_it : tensor<32x32x!tk.ptr<f16>>
    %y = tk.load %pb_it : tensor<32x32x!tk.ptr<f16>>
    %d = tk.dot %x, %y, %acc : tensor<32x32xf16> * tensor<32x32xf16> -> tensor<32x32xf32>
    %pa_next = tk.addptr %pa_it, %step : tensor<32x32x!tk.ptr<f16>>, tensor<32x32xi32>
    %pb_next = tk.addptr %pb_it, %step : tensor<32x32x!tk.ptr<f16>>, tensor<32x32xi32>
    scf.yield %d, %pa_next, %pb_next : tensor<32x32xf32>, tensor<32x32x!tk.ptr<f16>>, tensor<32x32x!tk.ptr<f16>>
  }
  %sc = tk.splat %c : !tk.ptr<f32> -> tensor<32x32x!tk.ptr<f32>>
  %pc = tk.addptr %sc, %offs : tensor<32x32x!tk.ptr<f32>>, tensor<32x32xi32>
  tk.store %pc, %res#0 : tensor<32x32x!tk.ptr<f32>>
  tk.return
}
