// RUN: tk-opt %s --split-input-file --tk-allocate-shared-memory="target=cuda-sm80" | FileCheck %s
//
// tk-allocate-shared-memory on tiles in #tkw.linear layouts (2 warps of 4
// lanes, 8 f32): what moves between warps gets a buffer, what stays in a
// warp does not, and buffers alive at different points share offset 0.

#lanes = #tkw.linear<shape = [8], register = [], lane = [[1], [2]], warp = [[4]]>
#lanes_swapped = #tkw.linear<shape = [8], register = [], lane = [[2], [1]], warp = [[4]]>
#warps_swapped = #tkw.linear<shape = [8], register = [], lane = [[2], [4]], warp = [[1]]>

// A permutation of the lanes of each warp moves by shuffles
// (getWarpShufflePlan): no buffer.
// CHECK-LABEL: tk.func @within_a_warp
// CHECK-SAME: tkw.shared_memory = 0 : i64
// CHECK-NOT: tkw.scratch
tk.func @within_a_warp() attributes {tkw.num_warps = 2 : i32, tkw.threads_per_warp = 4 : i32} {
  %r = tk.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #lanes>
  %s = tkw.convert_layout %r : tensor<8xi32, #lanes> -> tensor<8xi32, #lanes_swapped>
  tk.return
}

// -----

#pairs = #tkw.linear<shape = [32], register = [[1]], lane = [[2], [4]], warp = [[8], [16]]>
#whole = #tkw.linear<shape = [32], register = [[1], [2], [4]], lane = [[0], [0]], warp = [[8], [16]]>

// Every lane of a warp then holds the warp's eight elements: within the
// warp too, but eight shuffles against one 8-byte write, two 16-byte reads
// and the barriers: the round trip pays, 32 x 4 bytes.
// CHECK-LABEL: tk.func @within_a_warp_broadcast
// CHECK-SAME: tkw.shared_memory = 128 : i64
// CHECK: tkw.scratch = array<i64: 0, 128>
tk.func @within_a_warp_broadcast() attributes {tkw.num_warps = 4 : i32, tkw.threads_per_warp = 4 : i32} {
  %r = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #pairs>
  %s = tkw.convert_layout %r : tensor<32xi32, #pairs> -> tensor<32xi32, #whole>
  tk.return
}

// -----

#lanes = #tkw.linear<shape = [8], register = [], lane = [[1], [2]], warp = [[4]]>
#warps_swapped = #tkw.linear<shape = [8], register = [], lane = [[2], [4]], warp = [[1]]>

// Element 1 moves from warp 0 to warp 1: the tile goes through shared
// memory, 8 x 4 bytes; the way back is another buffer at another point,
// so both start at 0 and the kernel needs 32 bytes, not 64.
// CHECK-LABEL: tk.func @across_warps
// CHECK-SAME: tkw.shared_memory = 32 : i64
// CHECK: tkw.convert_layout {{.*}} {tkw.scratch = array<i64: 0, 32>}
// CHECK: tkw.convert_layout {{.*}} {tkw.scratch = array<i64: 0, 32>}
tk.func @across_warps() attributes {tkw.num_warps = 2 : i32, tkw.threads_per_warp = 4 : i32} {
  %r = tk.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #lanes>
  %s = tkw.convert_layout %r : tensor<8xi32, #lanes> -> tensor<8xi32, #warps_swapped>
  %t = tkw.convert_layout %s : tensor<8xi32, #warps_swapped> -> tensor<8xi32, #lanes>
  tk.return
}

// -----

#lanes = #tkw.linear<shape = [16], register = [[8]], lane = [[1], [2]], warp = [[4]]>
#warps_swapped = #tkw.linear<shape = [16], register = [[8]], lane = [[2], [4]], warp = [[1]]>
#no_register_shared = #tkw.linear<shape = [16], register = [[4]], lane = [[1], [2]], warp = [[8]]>

// Both layouts hold elements 8 apart in one thread's two registers: the
// conversion moves in two rounds (elements 0-7, then 8-15), each through
// 8 x 4 bytes. Back to a layout whose register holds elements 4 apart, no
// register bit is shared: the whole tile at once, 16 x 4 bytes.
// CHECK-LABEL: tk.func @in_rounds
// CHECK-SAME: tkw.shared_memory = 64 : i64
// CHECK: tkw.convert_layout {{.*}} {tkw.scratch = array<i64: 0, 32>}
// CHECK: tkw.convert_layout {{.*}} {tkw.scratch = array<i64: 0, 64>}
tk.func @in_rounds() attributes {tkw.num_warps = 2 : i32, tkw.threads_per_warp = 4 : i32} {
  %r = tk.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #lanes>
  %s = tkw.convert_layout %r : tensor<16xi32, #lanes> -> tensor<16xi32, #warps_swapped>
  %t = tkw.convert_layout %s : tensor<16xi32, #warps_swapped> -> tensor<16xi32, #no_register_shared>
  tk.return
}

// -----

#rows = #tkw.linear<shape = [2, 8], register = [[1, 0]], lane = [[0, 1], [0, 2]], warp = [[0, 4]]>
#row = #tkw.linear<shape = [2], register = [[1]], lane = [[0], [0]], warp = [[0]]>
#columns = #tkw.linear<shape = [8, 2], register = [[0, 1]], lane = [[1, 0], [2, 0]], warp = [[4, 0]]>
#column_sums = #tkw.linear<shape = [8], register = [], lane = [[1], [2]], warp = [[4]]>

// An argmax along rows that span both warps keeps, per row, one partial
// value and index per warp: 2 warps x 2 rows x (4 + 4) bytes. A sum along
// rows a thread holds whole (in its registers) needs none.
// CHECK-LABEL: tk.func @reductions
// CHECK-SAME: tkw.shared_memory = 32 : i64
// CHECK: tk.reduce({{.*}}) {axis = 1 : i32, tkw.scratch = array<i64: 0, 32>}
// CHECK: tk.reduce({{.*}}) {axis = 1 : i32} -> tensor<8xf32
tk.func @reductions() attributes {tkw.num_warps = 2 : i32, tkw.threads_per_warp = 4 : i32} {
  %v = arith.constant dense<0.0> : tensor<2x8xf32, #rows>
  %i = arith.constant dense<0> : tensor<2x8xi32, #rows>
  %m, %mi = tk.reduce(%v, %i : tensor<2x8xf32, #rows>, tensor<2x8xi32, #rows>) {axis = 1 : i32} -> tensor<2xf32, #row>, tensor<2xi32, #row> {
  ^bb0(%av: f32, %ai: i32, %bv: f32, %bi: i32):
    %gt = arith.cmpf ogt, %bv, %av : f32
    %mv = arith.select %gt, %bv, %av : f32
    %mx = arith.select %gt, %bi, %ai : i32
    tk.reduce.return %mv, %mx : f32, i32
  }
  %c = arith.constant dense<0.0> : tensor<8x2xf32, #columns>
  %s = tk.reduce(%c : tensor<8x2xf32, #columns>) {axis = 1 : i32} -> tensor<8xf32, #column_sums> {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    tk.reduce.return %t : f32
  }
  tk.return
}

// -----

#lanes = #tkw.linear<shape = [8], register = [], lane = [[1], [2]], warp = [[4]]>
#warps_swapped = #tkw.linear<shape = [8], register = [], lane = [[2], [4]], warp = [[1]]>

// RUN: not tk-opt %s --split-input-file --tk-allocate-shared-memory="target=cuda-sm80:shared-memory=16" 2>&1 | FileCheck %s --check-prefix=TOO-BIG
// TOO-BIG: error: tk-allocate-shared-memory: the kernel needs 32 bytes of workgroup memory, and cuda-sm80:shared-memory=16 has 16
// TOO-BIG: note: the largest buffer: 32 bytes, for this tkw.convert_layout
tk.func @too_big() attributes {tkw.num_warps = 2 : i32, tkw.threads_per_warp = 4 : i32} {
  %r = tk.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #lanes>
  %s = tkw.convert_layout %r : tensor<8xi32, #lanes> -> tensor<8xi32, #warps_swapped>
  tk.return
}

// -----

#chunks = #tkw.linear<shape = [16], register = [[8]], lane = [[1], [2]], warp = [[4]]>

// A scan whose axis crosses the 2 warps (position 4) with a register above
// them (position 8): one total per warp and chunk of 8 positions, 2 x 2 x 4
// bytes, where a reduction along the same axis keeps one per warp (8).
// CHECK-LABEL: tk.func @scan_chunks
// CHECK-SAME: tkw.shared_memory = 16 : i64
// CHECK: tk.scan{{.*}}tkw.scratch = array<i64: 0, 16>
tk.func @scan_chunks(%x: f32) attributes {tkw.num_warps = 2 : i32, tkw.threads_per_warp = 4 : i32} {
  %t = tk.splat %x : f32 -> tensor<16xf32, #chunks>
  %s = tk.scan(%t : tensor<16xf32, #chunks>) {axis = 0 : i32} -> tensor<16xf32, #chunks> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    tk.scan.return %r : f32
  }
  tk.return
}

// -----

#copies = #tkw.linear<shape = [32], register = [[1], [16]], lane = [[2], [4], [8]], warp = [[0]]>
#own = #tkw.linear<shape = [32], register = [[1]], lane = [[2], [4], [8]], warp = [[16]]>

// Atomics whose old values threads other than the updater read pass them
// through scratch: a tile whose two warps both hold it (32 x 4 bytes) and a
// scalar read by every thread (4), which share offset 0; a tile each thread
// holds alone, and a scalar whose old value nothing reads, need none.
// CHECK-LABEL: tk.func @atomic_old_values
// CHECK-SAME: tkw.shared_memory = 128 : i64
// CHECK: tk.atomic_rmw max, relaxed, {{.*}} {tkw.scratch = array<i64: 0, 128>}
// CHECK: tk.atomic_rmw max, relaxed, %{{[0-9]+}}, %{{[0-9]+}} :
// CHECK: tk.atomic_rmw add, relaxed, {{.*}} {tkw.scratch = array<i64: 0, 4>}
// CHECK: tk.atomic_rmw add, relaxed, %arg1, %{{.*}} : (!tk.ptr<i32>, i32) -> i32
tk.func @atomic_old_values(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}, %c: !tk.ptr<i32>) attributes {tkw.num_warps = 2 : i32, tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #copies>
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<32x!tk.ptr<i32>, #copies>
  %p = tk.addptr %xs, %r : tensor<32x!tk.ptr<i32>, #copies>, tensor<32xi32, #copies>
  %old = tk.atomic_rmw max, relaxed, %p, %r : (tensor<32x!tk.ptr<i32>, #copies>, tensor<32xi32, #copies>) -> tensor<32xi32, #copies>
  tk.store %p, %old : tensor<32x!tk.ptr<i32>, #copies>
  %r2 = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #own>
  %xs2 = tk.splat %x : !tk.ptr<i32> -> tensor<32x!tk.ptr<i32>, #own>
  %p2 = tk.addptr %xs2, %r2 : tensor<32x!tk.ptr<i32>, #own>, tensor<32xi32, #own>
  %own = tk.atomic_rmw max, relaxed, %p2, %r2 : (tensor<32x!tk.ptr<i32>, #own>, tensor<32xi32, #own>) -> tensor<32xi32, #own>
  tk.store %p2, %own : tensor<32x!tk.ptr<i32>, #own>
  %one = arith.constant 1 : i32
  %ticket = tk.atomic_rmw add, relaxed, %c, %one : (!tk.ptr<i32>, i32) -> i32
  tk.store %c, %ticket : !tk.ptr<i32>
  %unused = tk.atomic_rmw add, relaxed, %c, %one : (!tk.ptr<i32>, i32) -> i32
  tk.return
}
