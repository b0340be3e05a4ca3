// RUN: tk-opt %s --tk-hold-accumulators="target=cuda-sm80 num-warps=4" | FileCheck %s
// RUN: tk-opt %s --tk-hold-accumulators="target=cuda-sm80 num-warps=4" --tk-assign-thread-layouts="target=cuda-sm80 num-warps=4" | FileCheck %s --check-prefix=ASSIGNED
// RUN: not tk-opt %s --tk-hold-accumulators 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not tk-opt %s --tk-assign-thread-layouts="target=cuda-sm80 num-warps=4" --tk-hold-accumulators="target=cuda-sm80 num-warps=4" 2>&1 | FileCheck %s --check-prefix=PLACED
// RUN: sed -e 's/^  }$/  } {tkw.iter_layouts = [#tkw.accumulator<product = 0>, unit, unit]}/' -e 's/^\(    %d = tk.dot %x, %y, %acc\) :/\1 {tkw.product = 0 : i64} :/' %s > %t.mlir
// RUN: tk-opt %t.mlir --tk-hold-accumulators="target=cuda-sm80 num-warps=4" | FileCheck %s
// RUN: not tk-opt %t.mlir --tk-assign-thread-layouts="target=cuda-sm80 num-warps=4" 2>&1 | FileCheck %s --check-prefix=NO-UNIT
//
// tk-hold-accumulators records which loop-carried accumulators the
// backend's matrix unit keeps in registers (#tkw.accumulator in
// tkw.iter_layouts). tk-opt gives it no matrix unit, so nothing is held
// here; with mma.sync the K loop's accumulator is
// (backends/cuda/test/HoldAccumulatorsTest.cpp, and the dumps of
// backends/cuda/test/lit/thread-layouts.tk). tk-assign-thread-layouts holds
// what it recorded and no others, and refuses a recorded accumulator the
// unit it is given does not hold. What an earlier run recorded is replaced.

// CHECK-LABEL: tk.func @k_loop
// CHECK-NOT: tkw.
// CHECK: tk.return

// ASSIGNED-LABEL: tk.func @k_loop
// ASSIGNED-SAME: tkw.threads = 128
// ASSIGNED-NOT: #tkw.accumulator
// ASSIGNED: tk.return

// TARGET: error: tk-hold-accumulators: target=<preset> is required
// PLACED: error: 'tk.func' op tk-hold-accumulators: the kernel's thread layouts are already assigned; tk-hold-accumulators runs before tk-assign-thread-layouts
// NO-UNIT: error: 'scf.for' op tk-assign-thread-layouts: the matrix unit does not hold product 0 in registers

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
