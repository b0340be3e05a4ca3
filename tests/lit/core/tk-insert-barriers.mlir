// RUN: tk-opt %s --split-input-file --tk-insert-barriers | FileCheck %s
//
// tk-insert-barriers puts a gpu.barrier before an op whose workgroup memory
// (tkw.scratch = [offset, bytes]) overlaps what an op before it used since
// the last barrier, and nowhere else; through branches and loops.

#lanes = #tkw.linear<shape = [8], register = [], lane = [[1], [2]], warp = [[4]]>
#warps = #tkw.linear<shape = [8], register = [], lane = [[2], [4]], warp = [[1]]>

// The second conversion reuses the first's bytes: a barrier between them.
// The third uses other bytes: none before it.
// CHECK-LABEL: tk.func @in_sequence
// CHECK: %[[A:.+]] = tkw.convert_layout
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[B:.+]] = tkw.convert_layout %[[A]]
// CHECK-NEXT: tkw.convert_layout %[[B]]
// CHECK-NEXT: tk.return
tk.func @in_sequence() {
  %r = tk.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #lanes>
  %a = tkw.convert_layout %r {tkw.scratch = array<i64: 0, 32>} : tensor<8xi32, #lanes> -> tensor<8xi32, #warps>
  %b = tkw.convert_layout %a {tkw.scratch = array<i64: 16, 32>} : tensor<8xi32, #warps> -> tensor<8xi32, #lanes>
  %c = tkw.convert_layout %b {tkw.scratch = array<i64: 64, 32>} : tensor<8xi32, #lanes> -> tensor<8xi32, #warps>
  tk.return
}

// -----

#lanes = #tkw.linear<shape = [8], register = [], lane = [[1], [2]], warp = [[4]]>
#warps = #tkw.linear<shape = [8], register = [], lane = [[2], [4]], warp = [[1]]>

// A barrier already there is enough.
// CHECK-LABEL: tk.func @already_separated
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
tk.func @already_separated() {
  %r = tk.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #lanes>
  %a = tkw.convert_layout %r {tkw.scratch = array<i64: 0, 32>} : tensor<8xi32, #lanes> -> tensor<8xi32, #warps>
  gpu.barrier
  %b = tkw.convert_layout %a {tkw.scratch = array<i64: 0, 32>} : tensor<8xi32, #warps> -> tensor<8xi32, #lanes>
  tk.return
}

// -----

#lanes = #tkw.linear<shape = [8], register = [], lane = [[1], [2]], warp = [[4]]>
#warps = #tkw.linear<shape = [8], register = [], lane = [[2], [4]], warp = [[1]]>

// Alone in a loop, a conversion meets its own previous trip: a barrier
// before it, inside the loop. The conversion after the loop meets the
// last trip's: another.
// CHECK-LABEL: tk.func @in_a_loop
// CHECK: scf.for
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tkw.convert_layout
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tkw.convert_layout
tk.func @in_a_loop(%n: i32) {
  %r = tk.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #lanes>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %x = scf.for %i = %c0 to %n step %c1 iter_args(%t = %r) -> (tensor<8xi32, #lanes>) : i32 {
    %a = tkw.convert_layout %t {tkw.scratch = array<i64: 0, 32>} : tensor<8xi32, #lanes> -> tensor<8xi32, #warps>
    %b = arith.addi %a, %a : tensor<8xi32, #warps>
    %c = tkw.convert_layout %b : tensor<8xi32, #warps> -> tensor<8xi32, #lanes>
    scf.yield %c : tensor<8xi32, #lanes>
  }
  %y = tkw.convert_layout %x {tkw.scratch = array<i64: 0, 32>} : tensor<8xi32, #lanes> -> tensor<8xi32, #warps>
  tk.return
}

// -----

#lanes = #tkw.linear<shape = [8], register = [], lane = [[1], [2]], warp = [[4]]>
#warps = #tkw.linear<shape = [8], register = [], lane = [[2], [4]], warp = [[1]]>

// What one branch used is pending after the if: the conversion after it
// needs a barrier. Neither branch needs one: nothing was pending before.
// CHECK-LABEL: tk.func @after_a_branch
// CHECK: scf.if
// CHECK-NEXT: tkw.convert_layout
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } else {
// CHECK-NEXT: tkw.convert_layout
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tkw.convert_layout
tk.func @after_a_branch(%p: i1) {
  %r = tk.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #lanes>
  %x = scf.if %p -> (tensor<8xi32, #warps>) {
    %a = tkw.convert_layout %r {tkw.scratch = array<i64: 0, 32>} : tensor<8xi32, #lanes> -> tensor<8xi32, #warps>
    scf.yield %a : tensor<8xi32, #warps>
  } else {
    %b = tkw.convert_layout %r : tensor<8xi32, #lanes> -> tensor<8xi32, #warps>
    scf.yield %b : tensor<8xi32, #warps>
  }
  %y = tkw.convert_layout %x {tkw.scratch = array<i64: 0, 32>} : tensor<8xi32, #warps> -> tensor<8xi32, #lanes>
  tk.return
}
