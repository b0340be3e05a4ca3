// RUN: tk-opt %s | FileCheck %s
// RUN: tk-opt %s | tk-opt | FileCheck %s
//
// #tkw.linear, a tk::LinearLayout as the encoding of a tile type, prints as
// it is written and survives a round trip; the function's tkw.num_warps and
// tkw.threads_per_warp agree with every layout in it.

// mma.sync's 16x8 accumulator (PTX ISA, m16n8k16, C/D) on one warp.
// CHECK: #[[ACC:linear]] = #tkw.linear<shape = [16, 8], register = {{\[\[}}0, 1], [8, 0]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>
// A blocked layout of a 4x128 f32 tile: four consecutive elements a thread
// (16 bytes), 32 lanes along a row, one row a warp, rows across 4 warps.
// CHECK: #[[ROWS:linear1]] = #tkw.linear<shape = [4, 128], register = {{\[\[}}0, 1], [0, 2]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [0, 64]], warp = {{\[\[}}1, 0], [2, 0]]>
// A 1-D tile every lane of every warp holds whole (zero lane and warp
// bases: a broadcast).
// CHECK: #[[BCAST:linear2]] = #tkw.linear<shape = [4], register = {{\[\[}}1], [2]], lane = {{\[\[}}0], [0], [0], [0], [0]], warp = {{\[\[}}0], [0]]>

// CHECK-LABEL: tk.func @accumulator
// CHECK: arith.constant dense<0.000000e+00> : tensor<16x8xf32, #[[ACC]]>
tk.func @accumulator() attributes {tkw.num_warps = 1 : i32, tkw.threads_per_warp = 32 : i32} {
  %c = arith.constant dense<0.0> : tensor<16x8xf32, #tkw.linear<shape = [16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>>
  tk.return
}

// CHECK-LABEL: tk.func @blocked_and_broadcast
// CHECK: tk.splat {{.*}} -> tensor<4x128x!tk.ptr<f32>, #[[ROWS]]>
// CHECK: tk.load {{.*}} : tensor<4x128x!tk.ptr<f32>, #[[ROWS]]>
// CHECK: arith.addf {{.*}} : tensor<4x128xf32, #[[ROWS]]>
// CHECK: tk.make_range {{.*}} : tensor<4xi32, #[[BCAST]]>
tk.func @blocked_and_broadcast(%p: !tk.ptr<f32>) attributes {tkw.num_warps = 4 : i32, tkw.threads_per_warp = 32 : i32} {
  %ps = tk.splat %p : !tk.ptr<f32> -> tensor<4x128x!tk.ptr<f32>, #tkw.linear<shape = [4, 128], register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [0, 64]], warp = [[1, 0], [2, 0]]>>
  %x = tk.load %ps : tensor<4x128x!tk.ptr<f32>, #tkw.linear<shape = [4, 128], register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [0, 64]], warp = [[1, 0], [2, 0]]>>
  %y = arith.addf %x, %x : tensor<4x128xf32, #tkw.linear<shape = [4, 128], register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [0, 64]], warp = [[1, 0], [2, 0]]>>
  %r = tk.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32, #tkw.linear<shape = [4], register = [[1], [2]], lane = [[0], [0], [0], [0], [0]], warp = [[0], [0]]>>
  tk.return
}
