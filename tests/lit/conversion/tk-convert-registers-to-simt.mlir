// RUN: tk-opt %s --split-input-file --tk-convert-registers-to-simt --canonicalize --cse | FileCheck %s
//
// tk-convert-registers-to-simt on 2 warps of 8 lanes: each tile is the
// values its #tkw.linear layout gives a thread, and each op works on them.

#blocked = #tkw.linear<shape = [64], register = [[1], [2]], lane = [[4], [8], [16]], warp = [[32]]>

// A thread holds elements 4 * lane + 32 * warp + {0, 1, 2, 3}: one
// coordinate from the thread id, the others one addition each (no lane or
// warp sets their low bits, so XOR is addition there). The mask is not
// proven uniform over the run (nothing is known of %n): one branch takes
// the whole run as one 16-byte vector where all four are in, each element
// its own branch otherwise. The sum: the registers in order, butterfly
// shuffles over the 3 lane bits, then one value per warp through the
// scratch (lane 0 of each warp writes), a barrier and both warps' values
// in order. Thread 0 stores the scalar.
// CHECK-LABEL: func.func @load_reduce
// CHECK-SAME: (%[[X:.*]]: !llvm.ptr {llvm.align = 16 : i64}, %[[N:.*]]: i32) attributes {tk_kernel}
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: arith.addi %[[E0:.*]], %c1_i32
// CHECK: %[[M0:.*]] = arith.cmpi slt, %[[E0]], %[[N]]
// CHECK: %[[P:.*]] = llvm.getelementptr %[[X]][%[[E0]]]
// CHECK: arith.andi
// CHECK: arith.andi
// CHECK: %[[ALL:.*]] = arith.andi
// CHECK: %[[LOADED:.*]]:4 = scf.if %[[ALL]] -> (f32, f32, f32, f32) {
// CHECK-NEXT: %[[V:.*]] = llvm.load %[[P]] {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK-COUNT-4: llvm.extractelement %[[V]]
// CHECK: } else {
// CHECK: scf.if %[[M0]] -> (f32) {
// CHECK-NEXT: llvm.load %[[P]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-COUNT-3: llvm.load {{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: %[[S0:.*]] = arith.addf %[[LOADED]]#0, %[[LOADED]]#1 : f32
// CHECK: %[[S1:.*]] = arith.addf %[[S0]], %[[LOADED]]#2 : f32
// CHECK: %[[S2:.*]] = arith.addf %[[S1]], %[[LOADED]]#3 : f32
// CHECK: gpu.shuffle xor %[[S2]], %c1_i32, %c8_i32 : f32
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32, %c8_i32 : f32
// CHECK: gpu.shuffle xor %{{.*}}, %c4_i32, %c8_i32 : f32
// CHECK: %[[LANE0:.*]] = arith.cmpi eq
// CHECK: %[[BUF:.*]] = memref.get_global @load_reduce_scratch_f32 : memref<2xf32, #gpu.address_space<workgroup>>
// CHECK: scf.if %[[LANE0]] {
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: gpu.barrier
// CHECK: %[[W0:.*]] = memref.load %[[BUF]][%c0]
// CHECK: %[[W1:.*]] = memref.load %[[BUF]][%c1]
// CHECK: %[[SUM:.*]] = arith.addf %[[W0]], %[[W1]] : f32
// CHECK: scf.if
// CHECK-NEXT: llvm.store %[[SUM]], %[[X]]
tk.func @load_reduce(%x: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32) attributes {tkw.num_warps = 2 : i32, tkw.shared_memory = 8 : i64, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #blocked>
  %ns = tk.splat %n : i32 -> tensor<64xi32, #blocked>
  %m = arith.cmpi slt, %r, %ns : tensor<64xi32, #blocked>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>, #blocked>
  %p = tk.addptr %xs, %r : tensor<64x!tk.ptr<f32>, #blocked>, tensor<64xi32, #blocked>
  %v = tk.load %p, %m : tensor<64x!tk.ptr<f32>, #blocked>
  %s = tk.reduce(%v : tensor<64xf32, #blocked>) {axis = 0 : i32, tkw.scratch = array<i64: 0, 8>} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    tk.reduce.return %c : f32
  }
  tk.store %x, %s : !tk.ptr<f32>
  tk.return
}

// -----

#blocked = #tkw.linear<shape = [64], register = [[1], [2]], lane = [[4], [8], [16]], warp = [[32]]>

// With %n divisible by 16, AxisFacts proves each run of 4 all in or all
// out: one branch on the run's first mask.
// CHECK-LABEL: func.func @uniform_mask
// CHECK: %[[M0:.*]] = arith.cmpi slt
// CHECK-NOT: arith.andi %{{.*}} : i1
// CHECK: scf.if %[[M0]] -> (f32, f32, f32, f32) {
// CHECK-NEXT: llvm.load {{.*}} -> vector<4xf32>
// CHECK: } else {
// CHECK-NEXT: scf.yield %cst, %cst, %cst, %cst
tk.func @uniform_mask(%x: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %y: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32 {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #blocked>
  %ns = tk.splat %n : i32 -> tensor<64xi32, #blocked>
  %m = arith.cmpi slt, %r, %ns : tensor<64xi32, #blocked>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>, #blocked>
  %p = tk.addptr %xs, %r : tensor<64x!tk.ptr<f32>, #blocked>, tensor<64xi32, #blocked>
  %v = tk.load %p, %m : tensor<64x!tk.ptr<f32>, #blocked>
  %ys = tk.splat %y : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>, #blocked>
  %q = tk.addptr %ys, %r : tensor<64x!tk.ptr<f32>, #blocked>, tensor<64xi32, #blocked>
  tk.store %q, %v, %m : tensor<64x!tk.ptr<f32>, #blocked>
  tk.return
}

// -----

#blocked = #tkw.linear<shape = [64], register = [[1], [2]], lane = [[4], [8], [16]], warp = [[32]]>
#swapped = #tkw.linear<shape = [64], register = [[2], [1]], lane = [[4], [8], [16]], warp = [[32]]>

// Every thread holds the same elements in both layouts, in other
// registers: a permutation, no memory, no barrier.
// CHECK-LABEL: func.func @permute
// CHECK-NOT: memref
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-4: llvm.store
tk.func @permute(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #blocked>
  %s = tkw.convert_layout %r : tensor<64xi32, #blocked> -> tensor<64xi32, #swapped>
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<64x!tk.ptr<i32>, #swapped>
  %r2 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #swapped>
  %p = tk.addptr %xs, %r2 : tensor<64x!tk.ptr<i32>, #swapped>, tensor<64xi32, #swapped>
  tk.store %p, %s : tensor<64x!tk.ptr<i32>, #swapped>
  tk.return
}

// -----

#blocked = #tkw.linear<shape = [64], register = [[1], [2]], lane = [[4], [8], [16]], warp = [[32]]>
#lanes_swapped = #tkw.linear<shape = [64], register = [[1], [2]], lane = [[8], [4], [16]], warp = [[32]]>

// Lanes 1 and 2 of each warp exchange their elements: within the warp, so
// one shuffle a register from the lane with bits 0 and 1 swapped, no
// memory, no barrier.
// CHECK-LABEL: func.func @lanes_by_shuffles
// CHECK-NOT: memref
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-4: gpu.shuffle  idx
// CHECK-NOT: gpu.shuffle
tk.func @lanes_by_shuffles(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #blocked>
  %s = tkw.convert_layout %r : tensor<64xi32, #blocked> -> tensor<64xi32, #lanes_swapped>
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<64x!tk.ptr<i32>, #lanes_swapped>
  %r2 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #lanes_swapped>
  %p = tk.addptr %xs, %r2 : tensor<64x!tk.ptr<i32>, #lanes_swapped>, tensor<64xi32, #lanes_swapped>
  tk.store %p, %s : tensor<64x!tk.ptr<i32>, #lanes_swapped>
  tk.return
}

// -----

#accumulator = #tkw.linear<shape = [64], register = [[2], [4]], lane = [[8], [16], [1]], warp = [[32]]>
#operand = #tkw.linear<shape = [64], register = [[1], [2], [4]], lane = [[8], [16], [0]], warp = [[32]]>

// RDNA3's attention probabilities in small (a row is coordinate bits 3-4,
// a column bits 0-2): a lane holds a row's even or odd columns (lane bit
// 2), and the matrix operand wants the whole row in both half-waves.
// Register r of the result reads lane (lane & 3) | (r & 1) << 2, which
// offers its register r >> 1: eight shuffles by index, no select.
// CHECK-LABEL: func.func @rows_to_both_half_waves
// CHECK-NOT: memref
// CHECK-NOT: arith.select
// CHECK: %[[ROW:.*]] = arith.andi %{{.*}}, %c3_i32 : i32
// CHECK: gpu.shuffle  idx %{{.*}}, %[[ROW]], %c8_i32 : i32
// CHECK: %[[ODD:.*]] = arith.xori %[[ROW]], %c4_i32 : i32
// CHECK: gpu.shuffle  idx %{{.*}}, %[[ODD]], %c8_i32 : i32
// CHECK-COUNT-6: gpu.shuffle  idx
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
tk.func @rows_to_both_half_waves(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #accumulator>
  %s = tkw.convert_layout %r : tensor<64xi32, #accumulator> -> tensor<64xi32, #operand>
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<64x!tk.ptr<i32>, #operand>
  %r2 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #operand>
  %p = tk.addptr %xs, %r2 : tensor<64x!tk.ptr<i32>, #operand>, tensor<64xi32, #operand>
  tk.store %p, %s : tensor<64x!tk.ptr<i32>, #operand>
  tk.return
}

// -----

#accumulator = #tkw.linear<shape = [64], register = [[2], [4]], lane = [[8], [16], [1]], warp = [[32]]>
#operand = #tkw.linear<shape = [64], register = [[1], [2], [4]], lane = [[8], [16], [0]], warp = [[32]]>

// The same of f16: registers r and r ^ 2 read the same lane, so they cross
// as one 32-bit word, low half and high half: four shuffles, not eight.
// CHECK-LABEL: func.func @f16_pairs_in_one_word
// CHECK-NOT: memref
// CHECK: %[[HIGH:.*]] = arith.extui %{{.*}} : i16 to i32
// CHECK: %[[SHIFTED:.*]] = arith.shli %[[HIGH]], %c16_i32 : i32
// CHECK: %[[LOW:.*]] = arith.extui %{{.*}} : i16 to i32
// CHECK: %[[WORD:.*]] = arith.ori %[[LOW]], %[[SHIFTED]] : i32
// CHECK: %[[GOT:.*]], %{{.*}} = gpu.shuffle  idx %[[WORD]], %{{.*}}, %c8_i32 : i32
// CHECK: arith.trunci %[[GOT]] : i32 to i16
// CHECK: arith.shrui %[[GOT]], %c16_i32 : i32
// CHECK-COUNT-3: gpu.shuffle  idx %{{.*}} : i32
// CHECK-NOT: gpu.shuffle
tk.func @f16_pairs_in_one_word(%x: !tk.ptr<f16> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #accumulator>
  %xs = tk.splat %x : !tk.ptr<f16> -> tensor<64x!tk.ptr<f16>, #accumulator>
  %p = tk.addptr %xs, %r : tensor<64x!tk.ptr<f16>, #accumulator>, tensor<64xi32, #accumulator>
  %l = tk.load %p : tensor<64x!tk.ptr<f16>, #accumulator>
  %s = tkw.convert_layout %l : tensor<64xf16, #accumulator> -> tensor<64xf16, #operand>
  %ys = tk.splat %x : !tk.ptr<f16> -> tensor<64x!tk.ptr<f16>, #operand>
  %r2 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #operand>
  %q = tk.addptr %ys, %r2 : tensor<64x!tk.ptr<f16>, #operand>, tensor<64xi32, #operand>
  tk.store %q, %s : tensor<64x!tk.ptr<f16>, #operand>
  tk.return
}

// -----

#row = #tkw.linear<shape = [8], register = [[1], [2], [4]], lane = [[0], [0], [0]], warp = [[0]]>
#by_lane = #tkw.linear<shape = [8], register = [], lane = [[1], [2], [4]], warp = [[0]]>

// Every lane holds the whole row; each then keeps the element of its lane:
// selects by its own lane bits, no shuffle.
// CHECK-LABEL: func.func @select_by_lane
// CHECK-NOT: gpu.shuffle
// CHECK: arith.select
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: memref.get_global
tk.func @select_by_lane(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<8x!tk.ptr<i32>, #row>
  %r = tk.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #row>
  %p = tk.addptr %xs, %r : tensor<8x!tk.ptr<i32>, #row>, tensor<8xi32, #row>
  %l = tk.load %p : tensor<8x!tk.ptr<i32>, #row>
  %s = tkw.convert_layout %l : tensor<8xi32, #row> -> tensor<8xi32, #by_lane>
  %ys = tk.splat %x : !tk.ptr<i32> -> tensor<8x!tk.ptr<i32>, #by_lane>
  %r2 = tk.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #by_lane>
  %q = tk.addptr %ys, %r2 : tensor<8x!tk.ptr<i32>, #by_lane>, tensor<8xi32, #by_lane>
  tk.store %q, %s : tensor<8x!tk.ptr<i32>, #by_lane>
  tk.return
}

// -----

#blocked = #tkw.linear<shape = [64], register = [[1], [2]], lane = [[4], [8], [16]], warp = [[32]]>
#strided = #tkw.linear<shape = [64], register = [[32], [1]], lane = [[2], [4], [8]], warp = [[16]]>

// Elements move between warps: through the scratch. Coordinate bit 0 is
// register bit 0 on one side and register bit 1 on the other, and no
// other basis sets it: two rounds of half the tile (128 bytes), each
// written at the coordinate less that bit, a barrier, read back; a
// barrier between the rounds.
// CHECK-LABEL: func.func @rounds
// CHECK: %[[BUF:.*]] = memref.get_global @rounds_scratch_i32 : memref<32xi32, #gpu.address_space<workgroup>>
// CHECK-COUNT-2: memref.store %{{.*}}, %[[BUF]]
// CHECK-NEXT: gpu.barrier
// CHECK: memref.load %[[BUF]]
// CHECK: gpu.barrier
// CHECK-COUNT-2: memref.store %{{.*}}, %[[BUF]]
// CHECK-NEXT: gpu.barrier
// CHECK: memref.load %[[BUF]]
tk.func @rounds(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.shared_memory = 128 : i64, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #blocked>
  %s = tkw.convert_layout %r {tkw.scratch = array<i64: 0, 128>} : tensor<64xi32, #blocked> -> tensor<64xi32, #strided>
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<64x!tk.ptr<i32>, #strided>
  %r2 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #strided>
  %p = tk.addptr %xs, %r2 : tensor<64x!tk.ptr<i32>, #strided>, tensor<64xi32, #strided>
  tk.store %p, %s : tensor<64x!tk.ptr<i32>, #strided>
  tk.return
}

// -----

#blocked = #tkw.linear<shape = [64], register = [[1], [2]], lane = [[4], [8], [16]], warp = [[32]]>
#strided = #tkw.linear<shape = [64], register = [[32], [1]], lane = [[2], [4], [8]], warp = [[16]]>

// A tile of pointers crosses threads as its 64-bit addresses (a loop's
// pointer walk handed to a loop whose loads take another layout): each
// pointer leaves as ptrtoint and comes back as inttoptr, through an i64
// scratch buffer (the same two rounds as above, 8 bytes an element).
// CHECK-LABEL: func.func @pointers
// CHECK: %[[BUF:.*]] = memref.get_global @pointers_scratch_i64 : memref<32xi64, #gpu.address_space<workgroup>>
// CHECK: %[[ADDR:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr to i64
// CHECK: memref.store %[[ADDR]], %[[BUF]]
// CHECK: gpu.barrier
// CHECK: %[[BACK:.*]] = memref.load %[[BUF]]
// CHECK: llvm.inttoptr %[[BACK]] : i64 to !llvm.ptr
// CHECK: llvm.store
tk.func @pointers(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.shared_memory = 256 : i64, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<64x!tk.ptr<i32>, #blocked>
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #blocked>
  %p = tk.addptr %xs, %r : tensor<64x!tk.ptr<i32>, #blocked>, tensor<64xi32, #blocked>
  %q = tkw.convert_layout %p {tkw.scratch = array<i64: 0, 256>} : tensor<64x!tk.ptr<i32>, #blocked> -> tensor<64x!tk.ptr<i32>, #strided>
  %r2 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #strided>
  tk.store %q, %r2 : tensor<64x!tk.ptr<i32>, #strided>
  tk.return
}

// -----

#pairs = #tkw.linear<shape = [128], register = [[1], [16], [64]], lane = [[2], [4], [8]], warp = [[32]]>
#quads = #tkw.linear<shape = [128], register = [[1], [2], [4]], lane = [[8], [16], [32]], warp = [[64]]>

// Consecutive registers at consecutive coordinates move as vectors, on a
// target that moves 16 bytes of workgroup memory at once: each thread writes its four pairs as four 8-byte stores and reads its eight
// elements back as two 16-byte loads (16 bytes at most). No coordinate
// bit is fixed by both sides' registers outside the vectors: one round,
// the whole tile. The swizzle against the readers' bank conflicts flips
// coordinate bit 2 where bit 5 is set (a bank bit above both sides'
// vectors), so every vector stays whole. The swizzle is linear: a
// register's slot is the thread's slot joined with its constant's, added
// where no lane or warp sets its bits (the writers' 16, 64, 80), XORed
// where they do (the readers' 4, which a lane's bit 5 flips).
// CHECK-LABEL: func.func @vectors
// CHECK: %[[BUF:.*]] = memref.get_global @vectors_scratch_i32 : memref<128xi32, #gpu.address_space<workgroup>>
// CHECK: %[[W0:.*]] = arith.index_castui %[[WRITE:.*]] : i32 to index
// CHECK: vector.store %{{.*}}, %[[BUF]][%[[W0]]] {alignment = 8 : i64} : memref<128xi32, #gpu.address_space<workgroup>>, vector<2xi32>
// CHECK-NEXT: arith.addi %[[WRITE]], %c16_i32 overflow<nsw, nuw> : i32
// CHECK-COUNT-3: vector.store %{{.*}}, %[[BUF]][%{{.*}}] {alignment = 8 : i64} : memref<128xi32, #gpu.address_space<workgroup>>, vector<2xi32>
// CHECK-NEXT: gpu.barrier
// CHECK: %[[R0:.*]] = arith.index_castui %[[READ:.*]] : i32 to index
// CHECK-NEXT: vector.load %[[BUF]][%[[R0]]] {alignment = 16 : i64} : memref<128xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// CHECK: arith.xori %[[READ]], %c4_i32 : i32
// CHECK: vector.load %[[BUF]][%{{.*}}] {alignment = 16 : i64} : memref<128xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// CHECK-NOT: memref.load %[[BUF]]
tk.func @vectors(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.shared_memory = 512 : i64, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256:workgroup-vector-bytes=16", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #pairs>
  %s = tkw.convert_layout %r {tkw.scratch = array<i64: 0, 512>} : tensor<128xi32, #pairs> -> tensor<128xi32, #quads>
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<128x!tk.ptr<i32>, #quads>
  %r2 = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #quads>
  %p = tk.addptr %xs, %r2 : tensor<128x!tk.ptr<i32>, #quads>, tensor<128xi32, #quads>
  tk.store %p, %s : tensor<128x!tk.ptr<i32>, #quads>
  tk.return
}

// -----

#bcast = #tkw.linear<shape = [4], register = [[1], [2]], lane = [[0], [0], [0]], warp = [[0]]>

// Every thread holds the whole tile: only thread 0 (no lane or warp bit
// set) stores it. f16 math is computed in f32 and rounded once.
// CHECK-LABEL: func.func @broadcast_store
// CHECK: %[[WIDE:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[EXP:.*]] = math.exp %[[WIDE]] : f32
// CHECK: arith.truncf %[[EXP]] : f32 to f16
// CHECK: %[[LANE0:.*]] = arith.cmpi eq
// CHECK: %[[WARP0:.*]] = arith.cmpi eq
// CHECK: %[[HOLDER:.*]] = arith.andi %[[LANE0]], %[[WARP0]] : i1
// CHECK: scf.if %[[HOLDER]] {
// CHECK: llvm.store {{.*}} : vector<4xf16>, !llvm.ptr
tk.func @broadcast_store(%x: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %y: f16) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32, #bcast>
  %f = tk.splat %y : f16 -> tensor<4xf16, #bcast>
  %e = math.exp %f : tensor<4xf16, #bcast>
  %xs = tk.splat %x : !tk.ptr<f16> -> tensor<4x!tk.ptr<f16>, #bcast>
  %p = tk.addptr %xs, %r : tensor<4x!tk.ptr<f16>, #bcast>, tensor<4xi32, #bcast>
  tk.store %p, %e : tensor<4x!tk.ptr<f16>, #bcast>
  tk.return
}

// -----

#blocked = #tkw.linear<shape = [64], register = [[1], [2]], lane = [[4], [8], [16]], warp = [[32]]>

// A target that asks for it (CUDA's: ptxas then keeps what derives from
// the warp index in uniform registers) gets the warp index broadcast from
// lane 0, once, at the start of the function.
// CHECK-LABEL: func.func @warp_index_broadcast
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[ID:.*]] = arith.index_castui %[[TID]] : index to i32
// CHECK-NEXT: %[[WARP:.*]] = arith.shrui %[[ID]], %c3_i32 : i32
// CHECK-NEXT: %[[UNIFORM:.*]] = gpu.subgroup_broadcast %[[WARP]], {{ *}}specific_lane %c0_i32 : i32
// CHECK-NOT: gpu.thread_id
// CHECK: arith.andi %[[UNIFORM]], %c1_i32
tk.func @warp_index_broadcast(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.target = "cuda-sm80:warp-size=8", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #blocked>
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<64x!tk.ptr<i32>, #blocked>
  %p = tk.addptr %xs, %r : tensor<64x!tk.ptr<i32>, #blocked>, tensor<64xi32, #blocked>
  tk.store %p, %r : tensor<64x!tk.ptr<i32>, #blocked>
  tk.return
}

// -----

#blocked = #tkw.linear<shape = [64], register = [[1], [2]], lane = [[4], [8], [16]], warp = [[32]]>

// Vulkan's does not: SPIR-V compilers see no gain from it.
// CHECK-LABEL: func.func @warp_index_plain
// CHECK-NOT: gpu.subgroup_broadcast
// CHECK: return
tk.func @warp_index_plain(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #blocked>
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<64x!tk.ptr<i32>, #blocked>
  %p = tk.addptr %xs, %r : tensor<64x!tk.ptr<i32>, #blocked>, tensor<64xi32, #blocked>
  tk.store %p, %r : tensor<64x!tk.ptr<i32>, #blocked>
  tk.return
}

// -----

#blocked = #tkw.linear<shape = [64], register = [[1], [2]], lane = [[4], [8], [16]], warp = [[32]]>

// bf16 runs move as their bits: one vector<4xi16> load and store a thread
// (SPIR-V has no bf16 vectors), and a copy needs no conversion at all.
// CHECK-LABEL: func.func @bf16_runs
// CHECK: %[[V:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr -> vector<4xi16>
// CHECK-NOT: arith.bitcast
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<4xi16>, !llvm.ptr
tk.func @bf16_runs(%x: !tk.ptr<bf16> {tk.divisibility = 16 : i32}, %y: !tk.ptr<bf16> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #blocked>
  %xs = tk.splat %x : !tk.ptr<bf16> -> tensor<64x!tk.ptr<bf16>, #blocked>
  %p = tk.addptr %xs, %r : tensor<64x!tk.ptr<bf16>, #blocked>, tensor<64xi32, #blocked>
  %v = tk.load %p : tensor<64x!tk.ptr<bf16>, #blocked>
  %ys = tk.splat %y : !tk.ptr<bf16> -> tensor<64x!tk.ptr<bf16>, #blocked>
  %q = tk.addptr %ys, %r : tensor<64x!tk.ptr<bf16>, #blocked>, tensor<64xi32, #blocked>
  tk.store %q, %v : tensor<64x!tk.ptr<bf16>, #blocked>
  tk.return
}

// -----

#lanes = #tkw.linear<shape = [32], register = [[1], [2]], lane = [[4], [8], [16]], warp = []>

// An f16 max is computed in f32 and rounded once per op; between two maxima
// the rounding and the widening after it change nothing (the f32 maximum is
// one of two widened f16 values), so they are folded away: each register is
// widened once, the maxima and the shuffles run in f32, and only the result
// is rounded to f16. A sum rounds after each step, as before.
// CHECK-LABEL: func.func @narrow_max
// CHECK: %[[V:.*]] = llvm.load %{{.*}} -> vector<4xf16>
// CHECK-NOT: arith.truncf
// CHECK: %[[W0:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: %[[W1:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: %[[M0:.*]] = arith.maxnumf %[[W0]], %[[W1]] : f32
// CHECK-NEXT: %[[W2:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: %[[M1:.*]] = arith.maxnumf %[[M0]], %[[W2]] : f32
// CHECK-NEXT: %[[W3:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: %[[M2:.*]] = arith.maxnumf %[[M1]], %[[W3]] : f32
// CHECK-NEXT: %[[X1:.*]], %{{.*}} = gpu.shuffle xor %[[M2]], %c1_i32, %c8_i32 : f32
// CHECK-NEXT: %[[M3:.*]] = arith.maxnumf %[[M2]], %[[X1]] : f32
// CHECK-NEXT: %[[X2:.*]], %{{.*}} = gpu.shuffle xor %[[M3]], %c2_i32, %c8_i32 : f32
// CHECK-NEXT: %[[M4:.*]] = arith.maxnumf %[[M3]], %[[X2]] : f32
// CHECK-NEXT: %[[X4:.*]], %{{.*}} = gpu.shuffle xor %[[M4]], %c4_i32, %c8_i32 : f32
// CHECK-NEXT: %[[M5:.*]] = arith.maxnumf %[[M4]], %[[X4]] : f32
// CHECK-NEXT: %[[MAX:.*]] = arith.truncf %[[M5]] : f32 to f16
// CHECK: llvm.store %[[MAX]]
// CHECK: %[[S0:.*]] = arith.addf %[[W0]], %[[W1]] : f32
// CHECK-NEXT: %[[R0:.*]] = arith.truncf %[[S0]] : f32 to f16
// CHECK-NEXT: arith.extf %[[R0]] : f16 to f32
tk.func @narrow_max(%x: !tk.ptr<f16> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 1 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #lanes>
  %xs = tk.splat %x : !tk.ptr<f16> -> tensor<32x!tk.ptr<f16>, #lanes>
  %p = tk.addptr %xs, %r : tensor<32x!tk.ptr<f16>, #lanes>, tensor<32xi32, #lanes>
  %v = tk.load %p : tensor<32x!tk.ptr<f16>, #lanes>
  %m = tk.reduce(%v : tensor<32xf16, #lanes>) {axis = 0 : i32} -> f16 {
  ^bb0(%a: f16, %b: f16):
    %c = arith.maxnumf %a, %b : f16
    tk.reduce.return %c : f16
  }
  tk.store %x, %m : !tk.ptr<f16>
  %s = tk.reduce(%v : tensor<32xf16, #lanes>) {axis = 0 : i32} -> f16 {
  ^bb0(%a: f16, %b: f16):
    %c = arith.addf %a, %b : f16
    tk.reduce.return %c : f16
  }
  tk.store %x, %s : !tk.ptr<f16>
  tk.return
}

// -----

#half = #tkw.linear<shape = [32], register = [[1]], lane = [[2], [4], [8]], warp = [[16]]>
#pairs = #tkw.linear<shape = [32, 2], register = [[0, 1], [1, 0]], lane = [[2, 0], [4, 0], [8, 0]], warp = [[16, 0]]>
#woven = #tkw.linear<shape = [64], register = [[1], [2]], lane = [[4], [8], [16]], warp = [[32]]>

// A join pairs each thread's registers (a's, then b's, per element) and
// the reshape reads them as the woven tile: nothing moves between threads,
// and the four values a thread holds leave as one 16-byte store in the
// order a0, b0, a1, b1.
// CHECK-LABEL: func.func @interleave
// CHECK: %[[A0:.*]] = arith.addf %[[R0:.*]], %arg0 : f32
// CHECK: %[[A1:.*]] = arith.addf %[[R1:.*]], %arg0 : f32
// CHECK: %[[B0:.*]] = arith.mulf %[[R0]], %arg1 : f32
// CHECK: %[[B1:.*]] = arith.mulf %[[R1]], %arg1 : f32
// CHECK: %[[V0:.*]] = llvm.insertelement %[[A0]], %{{.*}}[%c0_i32 : i32] : vector<4xf32>
// CHECK: %[[V1:.*]] = llvm.insertelement %[[B0]], %[[V0]][%c1_i32 : i32] : vector<4xf32>
// CHECK: %[[V2:.*]] = llvm.insertelement %[[A1]], %[[V1]][%c2_i32 : i32] : vector<4xf32>
// CHECK: %[[V3:.*]] = llvm.insertelement %[[B1]], %[[V2]][%c3_i32 : i32] : vector<4xf32>
// CHECK: llvm.store %[[V3]], %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
tk.func @interleave(%a: f32, %b: f32, %x: !tk.ptr<f32> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #half>
  %rf = arith.sitofp %r : tensor<32xi32, #half> to tensor<32xf32, #half>
  %sa = tk.splat %a : f32 -> tensor<32xf32, #half>
  %sb = tk.splat %b : f32 -> tensor<32xf32, #half>
  %va = arith.addf %rf, %sa : tensor<32xf32, #half>
  %vb = arith.mulf %rf, %sb : tensor<32xf32, #half>
  %j = tk.join %va, %vb : tensor<32xf32, #half> -> tensor<32x2xf32, #pairs>
  %w = tk.reshape %j : tensor<32x2xf32, #pairs> -> tensor<64xf32, #woven>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>, #woven>
  %i = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #woven>
  %p = tk.addptr %xs, %i : tensor<64x!tk.ptr<f32>, #woven>, tensor<64xi32, #woven>
  tk.store %p, %w : tensor<64x!tk.ptr<f32>, #woven>
  tk.return
}

// -----

#copies = #tkw.linear<shape = [16], register = [[1], [0]], lane = [[2], [4], [8]], warp = [[0]]>

// tk.assert and tk.print on the registers: each element by its first
// holder (warp 0: both warps hold the tile; register 2 repeats register 0
// and is skipped). A failed check prints its message with the program id;
// the scalar prints one line from thread 0, each element of the tile a
// line with its index.
// CHECK-LABEL: func.func @debug
// CHECK: %[[WARP0:.*]] = arith.cmpi eq, %{{.*}}, %c0_i32 : i32
// CHECK: %[[OUT0:.*]] = arith.cmpi sge, %[[E0:.*]], %arg0 : i32
// CHECK: %[[FAIL0:.*]] = arith.andi %[[WARP0]], %[[OUT0]] : i1
// CHECK: scf.if %[[FAIL0]] {
// CHECK: gpu.printf "tk assert failed in program (%d, %d, %d): r < n\0A"
// CHECK: scf.if
// CHECK: gpu.printf "tk assert failed in program (%d, %d, %d): r < n\0A"
// CHECK: scf.if
// CHECK: gpu.printf "pid (%d, %d, %d) r =  %d\0A", {{.*}}, %arg0
// CHECK: scf.if %[[WARP0]] {
// CHECK: gpu.printf "pid (%d, %d, %d) idx (%d) r = %d\0A", {{.*}}, %[[E0]], %[[E0]]
// CHECK-NEXT: gpu.printf "pid (%d, %d, %d) idx (%d) r = %d\0A"
// CHECK-NOT: gpu.printf
tk.func @debug(%n: i32) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #copies>
  %ns = tk.splat %n : i32 -> tensor<16xi32, #copies>
  %ok = arith.cmpi slt, %r, %ns : tensor<16xi32, #copies>
  tk.assert %ok, "r < n" : tensor<16xi1, #copies>
  tk.print "r = " %n, %r : i32, tensor<16xi32, #copies>
  tk.return
}

// -----

#split = #tkw.linear<shape = [64], register = [[1], [34]], lane = [[2], [4], [8]], warp = [[16]]>

// Register 2's constant 34 shares bit 1 with the lanes: that bit is XORed
// into the thread's coordinate, bit 5 added; register 3 (35) shares the
// same XORed base and adds 33. A swizzle's registers so share one base
// per phase, and the additions (of disjoint bits: they wrap in no sense)
// fold into addresses' immediate offsets.
// CHECK-LABEL: func.func @split_constant
// CHECK: arith.addi %[[T:.*]], %c1_i32 overflow<nsw, nuw> : i32
// CHECK: %[[B:.*]] = arith.xori %[[T]], %c2_i32 : i32
// CHECK: %[[R2:.*]] = arith.addi %[[B]], %c32_i32 overflow<nsw, nuw> : i32
// CHECK: %[[R3:.*]] = arith.addi %[[B]], %c33_i32 overflow<nsw, nuw> : i32
// CHECK: llvm.getelementptr %{{.*}}[%[[T]]]
// CHECK: llvm.getelementptr %{{.*}}[%[[R2]]]
tk.func @split_constant(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #split>
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<64x!tk.ptr<i32>, #split>
  %p = tk.addptr %xs, %r : tensor<64x!tk.ptr<i32>, #split>, tensor<64xi32, #split>
  tk.store %p, %r : tensor<64x!tk.ptr<i32>, #split>
  tk.return
}
