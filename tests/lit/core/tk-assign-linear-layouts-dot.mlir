// RUN: tk-opt %s --tk-assign-linear-layouts="target=cuda-sm80 num-warps=4" | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: tk-opt %s --tk-assign-linear-layouts="target=amd-cdna3 num-warps=4" | FileCheck %s --check-prefixes=CHECK,CDNA3
// RUN: tk-opt %s --tk-assign-linear-layouts="target=intel-pvc num-warps=4" | FileCheck %s --check-prefixes=CHECK,PVC
//
// A 64x64x32 f16 dot with an f32 bias on 4 warps. Its accumulator is the
// matrix unit's fragment (as the presets state it from each ISA), tiled
// over a 2 x 2 grid of warps and then over registers:
// - sm80, mma.sync m16n8k16 (warp of 32): the 16x8 fragment (registers
//   [0, 1], [8, 0]; lanes [0, 2], [0, 4], [1, 0], [2, 0], [4, 0]), warps
//   8 columns and 16 rows apart, then 4 fragments along a row and 2 along
//   a column in further registers;
// - CDNA3, mfma 32x32x8 (wave of 64) in its transposed form: the 32x32
//   fragment, a lane's four registers along a row, one fragment a warp;
// - PVC, dpas 8x16 (subgroup of 16): the 8x16 fragment, warps 16 columns
//   and 8 rows apart, then 2 x 4 fragments in registers.
// The bias row is converted to the accumulator's layout less its rows and
// broadcast without moving; the sum converts to the store's coalesced
// layout (16 bytes a thread).
// SM80-DAG: #[[ACC:linear[0-9]*]] = #tkw.linear<shape = [64, 64], register = {{\[\[}}0, 1], [8, 0], [0, 16], [0, 32], [32, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}0, 8], [16, 0]]>
// SM80-DAG: #[[BIAS:linear[0-9]*]] = #tkw.linear<shape = [1, 64], register = {{\[\[}}0, 1], [0, 16], [0, 32]], lane = {{\[\[}}0, 2], [0, 4], [0, 0], [0, 0], [0, 0]], warp = {{\[\[}}0, 8], [0, 0]]>
// SM80-DAG: #[[OUT:linear[0-9]*]] = #tkw.linear<shape = [64, 64], register = {{\[\[}}0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = {{\[\[}}2, 0], [4, 0]]>
// CDNA3-DAG: #[[ACC:linear[0-9]*]] = #tkw.linear<shape = [64, 64], register = {{\[\[}}0, 1], [0, 2], [0, 8], [0, 16]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], warp = {{\[\[}}0, 32], [32, 0]]>
// CDNA3-DAG: #[[BIAS:linear[0-9]*]] = #tkw.linear<shape = [1, 64], register = {{\[\[}}0, 1], [0, 2], [0, 8], [0, 16]], lane = {{\[\[}}0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 4]], warp = {{\[\[}}0, 32], [0, 0]]>
// CDNA3-DAG: #[[OUT:linear[0-9]*]] = #tkw.linear<shape = [64, 64], register = {{\[\[}}0, 1], [0, 2], [16, 0], [32, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warp = {{\[\[}}4, 0], [8, 0]]>
// PVC-DAG: #[[ACC:linear[0-9]*]] = #tkw.linear<shape = [64, 64], register = {{\[\[}}1, 0], [2, 0], [4, 0], [0, 32], [16, 0], [32, 0]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8]], warp = {{\[\[}}0, 16], [8, 0]]>
// PVC-DAG: #[[BIAS:linear[0-9]*]] = #tkw.linear<shape = [1, 64], register = {{\[\[}}0, 32]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8]], warp = {{\[\[}}0, 16], [0, 0]]>
// PVC-DAG: #[[OUT:linear[0-9]*]] = #tkw.linear<shape = [64, 64], register = {{\[\[}}0, 1], [0, 2], [4, 0], [8, 0], [16, 0], [32, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32]], warp = {{\[\[}}1, 0], [2, 0]]>
// CHECK-LABEL: tk.func @dot_bias
// CHECK: %[[ACCV:.+]] = tk.dot {{.*}} -> tensor<64x64xf32, #[[ACC]]>
// CHECK: %[[ROW:.+]] = tkw.convert_layout {{.*}} -> tensor<1x64xf32, #[[BIAS]]>
// CHECK: %[[ROWS:.+]] = tk.broadcast %[[ROW]] : tensor<1x64xf32, #[[BIAS]]> -> tensor<64x64xf32, #[[ACC]]>
// CHECK: %[[SUM:.+]] = arith.addf %[[ACCV]], %[[ROWS]] : tensor<64x64xf32, #[[ACC]]>
// CHECK: %[[MOVED:.+]] = tkw.convert_layout %[[SUM]] : tensor<64x64xf32, #[[ACC]]> -> tensor<64x64xf32, #[[OUT]]>
// CHECK: tk.store {{.*}}, %[[MOVED]] : tensor<64x64x!tk.ptr<f32>, #[[OUT]]>
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
  %acc = tk.dot %av, %bv, %zero : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
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
