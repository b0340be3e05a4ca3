// RUN: tk-opt %s --split-input-file --tk-convert-registers-to-simt | FileCheck %s
//
// tk.scan on the registers of a thread, bit by bit of the position along
// the axis, lowest first (recursive doubling): the register bits in the
// thread, the lane bits by shuffles, the warps' bits through the scratch.

#lanes = #tkw.linear<shape = [32], register = [[1], [2]], lane = [[4], [8], [16]], warp = []>

// One warp of 8 lanes, 4 elements a thread: positions 1 and 2 are
// registers (three adds: 0+1, 2+3, then the pair total in front of 2 and
// 3), positions 4, 8, 16 lanes: each lane level shuffles the block total
// of each register once (12 shuffles) and the upper half of each pair of
// lanes puts the lower half's total in front. No workgroup memory.
// CHECK-LABEL: func.func @scan_in_warp
// CHECK-COUNT-12: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: return
tk.func @scan_in_warp(%x: i32) attributes {tkw.num_warps = 1 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %t = tk.splat %x : i32 -> tensor<32xi32, #lanes>
  %s = tk.scan(%t : tensor<32xi32, #lanes>) {axis = 0 : i32} -> tensor<32xi32, #lanes> {
  ^bb0(%a: i32, %b: i32):
    %r = arith.addi %a, %b : i32
    tk.scan.return %r : i32
  }
  tk.return
}

// -----

#chunks = #tkw.linear<shape = [64], register = [[1], [32]], lane = [[2], [4], [8]], warp = [[16]]>

// Two warps (position 16) with a register above them (position 32): two
// chunks of 32 positions, 4 elements a thread (positions 1 and 32 in
// registers, 12 shuffles for the lanes). The first lane of each warp
// writes the warp's
// total of each chunk (2 stores, at 2 x chunk + warp), a barrier, and
// every thread reads both warps' totals of each chunk (4 loads): the
// second warp puts the first's total in front, and the chunk above takes
// the lower chunk's total of both warps in front.
// CHECK-LABEL: func.func @scan_across_warps
// CHECK-COUNT-12: gpu.shuffle xor
// CHECK: scf.if
// CHECK-COUNT-2: memref.store
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: memref.load
// CHECK-NOT: memref.load
// CHECK: return
tk.func @scan_across_warps(%x: f32) attributes {tkw.num_warps = 2 : i32, tkw.shared_memory = 16 : i64, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %t = tk.splat %x : f32 -> tensor<64xf32, #chunks>
  %s = tk.scan(%t : tensor<64xf32, #chunks>) {axis = 0 : i32, tkw.scratch = array<i64: 0, 16>} -> tensor<64xf32, #chunks> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    tk.scan.return %r : f32
  }
  tk.return
}

// -----

#lanes = #tkw.linear<shape = [32], register = [[1], [2]], lane = [[4], [8], [16]], warp = []>

// A reverse scan runs in the order of 31 - position: in each pair of
// registers and each pair of lanes the lower half comes second, so it is
// the lower lanes (bit clear: `eq 0`) that put the other half's total in
// front, the combiner's first operand; the same 12 shuffles.
// CHECK-LABEL: func.func @reverse_scan
// CHECK: %[[LANE:.*]] = arith.andi %{{.*}}, %c7_i32
// CHECK: %[[BIT:.*]] = arith.andi %[[LANE]], %c1_i32
// CHECK: %[[LOWER:.*]] = arith.cmpi eq, %[[BIT]], %c0_i32
// CHECK: %[[OTHER:.*]], %{{.*}} = gpu.shuffle xor
// CHECK: %[[SECOND:.*]] = arith.subi %[[OTHER]], %{{.*}} : i32
// CHECK: arith.select %[[LOWER]], %[[SECOND]]
// CHECK-COUNT-11: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// CHECK: return
tk.func @reverse_scan(%x: i32) attributes {tkw.num_warps = 1 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %t = tk.splat %x : i32 -> tensor<32xi32, #lanes>
  %s = tk.scan(%t : tensor<32xi32, #lanes>) {axis = 0 : i32, reverse = true} -> tensor<32xi32, #lanes> {
  ^bb0(%a: i32, %b: i32):
    %r = arith.subi %a, %b : i32
    tk.scan.return %r : i32
  }
  tk.return
}
