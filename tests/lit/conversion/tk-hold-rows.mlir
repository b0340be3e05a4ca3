// RUN: tk-opt %s --tk-hold-accumulators="target=cuda-sm90a num-warps=4" --tk-hold-rows="target=cuda-sm90a num-warps=4" | FileCheck %s
// RUN: not tk-opt %s --tk-hold-rows 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not tk-opt %s --tk-assign-thread-layouts="target=cuda-sm90a num-warps=4" --tk-hold-rows="target=cuda-sm90a num-warps=4" 2>&1 | FileCheck %s --check-prefix=PLACED
// RUN: not tk-opt %s --tk-hold-rows="target=vulkan target-units=true" 2>&1 | FileCheck %s --check-prefix=NO-UNITS
// RUN: sed -e 's/^\(  %qk = tk.dot %x, %y, %zero\) :/\1 {tkw.product = 0 : i64} :/' -e 's/^\(  %m = tk.reduce(%qk : tensor<64x64xf32>) {axis = 1 : i32\)}/\1, tkw.layout = #tkw.rows<product = 0>}/' %s > %t.mlir
// RUN: not tk-opt %t.mlir --tk-assign-thread-layouts="target=cuda-sm90a num-warps=4" 2>&1 | FileCheck %s --check-prefix=NO-UNIT
//
// tk-hold-rows records which 1-D tiles of one value per row of a product
// held in registers stay in the registers of the lanes holding the row
// (#tkw.rows<product>). tk-opt gives it no matrix unit unless asked
// (target-units=true, with the units of the backend that registered the
// preset: backends/rocm/test/lit/tk-hold-rows.tk), so nothing is kept
// here. tk-assign-thread-layouts keeps what it recorded and no others, and
// refuses a row layout whose product the unit it is given does not hold.

// CHECK-LABEL: tk.func @row_max
// CHECK-NOT: tkw.
// CHECK: tk.return

// TARGET: error: tk-hold-rows: target=<preset> is required
// PLACED: error: 'tk.func' op tk-hold-rows: the kernel's thread layouts are already assigned; tk-hold-rows runs before tk-assign-thread-layouts
// NO-UNITS: error: tk-hold-rows: target-units: no units are registered for preset 'vulkan'
// NO-UNIT: error: 'tk.reduce' op tk-assign-thread-layouts: the matrix unit does not hold product 0 in registers

tk.func @row_max(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                 %o: !tk.ptr<f32> {tk.divisibility = 16 : i32}) {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %row = tk.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %col = tk.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rowb = tk.broadcast %row : tensor<64x1xi32> -> tensor<64x64xi32>
  %colb = tk.broadcast %col : tensor<1x64xi32> -> tensor<64x64xi32>
  %c64 = arith.constant 64 : i32
  %c64t = tk.splat %c64 : i32 -> tensor<64x64xi32>
  %rows = arith.muli %rowb, %c64t : tensor<64x64xi32>
  %offs = arith.addi %rows, %colb : tensor<64x64xi32>
  %sa = tk.splat %a : !tk.ptr<f16> -> tensor<64x64x!tk.ptr<f16>>
  %pa = tk.addptr %sa, %offs : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  %x = tk.load %pa : tensor<64x64x!tk.ptr<f16>>
  %y = tk.load %pa : tensor<64x64x!tk.ptr<f16>>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %qk = tk.dot %x, %y, %zero : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
  %m = tk.reduce(%qk : tensor<64x64xf32>) {axis = 1 : i32} -> tensor<64xf32> {
  ^bb0(%p: f32, %q: f32):
    %mx = arith.maxnumf %p, %q : f32
    tk.reduce.return %mx : f32
  }
  %mc = tk.expand_dims %m {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
  %mb = tk.broadcast %mc : tensor<64x1xf32> -> tensor<64x64xf32>
  %d = arith.subf %qk, %mb : tensor<64x64xf32>
  %so = tk.splat %o : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %po = tk.addptr %so, %offs : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  tk.store %po, %d : tensor<64x64x!tk.ptr<f32>>
  tk.return
}
