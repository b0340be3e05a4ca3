// RUN: tk-opt %s --split-input-file --tk-convert-registers-to-simt --canonicalize --cse | FileCheck %s
//
// Atomics in registers on 2 warps of 8 lanes: each element is updated
// once, by its first holder, under its mask; the old value stays in the
// updating thread's registers.

#blocked = #tkw.linear<shape = [64], register = [[1], [2]], lane = [[4], [8], [16]], warp = [[32]]>

// Each element has one holder: four atomic adds, each under its own mask,
// 0 where the mask is off; the old values go to the thread's own store.
// CHECK-LABEL: func.func @add_old
// CHECK: %[[M:.*]] = arith.cmpi slt
// CHECK: %[[OLD:.*]] = scf.if %[[M]] -> (i32) {
// CHECK-NEXT: %[[A:.*]] = llvm.atomicrmw add %{{.*}}, %{{.*}} monotonic : !llvm.ptr, i32
// CHECK-NEXT: scf.yield %[[A]] : i32
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %c0_i32 : i32
// CHECK-COUNT-3: llvm.atomicrmw add
// CHECK: llvm.store %[[OLD]]
tk.func @add_old(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}, %y: !tk.ptr<i32> {tk.divisibility = 16 : i32}, %n: i32) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #blocked>
  %ns = tk.splat %n : i32 -> tensor<64xi32, #blocked>
  %m = arith.cmpi slt, %r, %ns : tensor<64xi32, #blocked>
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<64x!tk.ptr<i32>, #blocked>
  %p = tk.addptr %xs, %r : tensor<64x!tk.ptr<i32>, #blocked>, tensor<64xi32, #blocked>
  %old = tk.atomic_rmw add, relaxed, %p, %r, %m : (tensor<64x!tk.ptr<i32>, #blocked>, tensor<64xi32, #blocked>, tensor<64xi1, #blocked>) -> tensor<64xi32, #blocked>
  %ys = tk.splat %y : !tk.ptr<i32> -> tensor<64x!tk.ptr<i32>, #blocked>
  %q = tk.addptr %ys, %r : tensor<64x!tk.ptr<i32>, #blocked>, tensor<64xi32, #blocked>
  tk.store %q, %old, %m : tensor<64x!tk.ptr<i32>, #blocked>
  tk.return
}

// -----

#copies = #tkw.linear<shape = [32], register = [[1], [0], [16]], lane = [[2], [4], [8]], warp = [[0]]>

// Both warps and two registers of each thread hold each element: only
// warp 0 updates, and only the first register of each pair (4 of 8); an
// unmasked compare-and-swap needs no other condition. Its old values are
// not read.
// CHECK-LABEL: func.func @claim_once
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c0_i32
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-COUNT-4: llvm.cmpxchg {{.*}} acq_rel acquire : !llvm.ptr, i32
// CHECK-NEXT: }
// CHECK-NOT: llvm.cmpxchg
tk.func @claim_once(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #copies>
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<32x!tk.ptr<i32>, #copies>
  %p = tk.addptr %xs, %r : tensor<32x!tk.ptr<i32>, #copies>, tensor<32xi32, #copies>
  %none = arith.constant dense<-1> : tensor<32xi32, #copies>
  %old = tk.atomic_cas acq_rel, %p, %none, %r : (tensor<32x!tk.ptr<i32>, #copies>, tensor<32xi32, #copies>, tensor<32xi32, #copies>) -> tensor<32xi32, #copies>
  tk.return
}

// -----

#copies = #tkw.linear<shape = [32], register = [[1], [16]], lane = [[2], [4], [8]], warp = [[0]]>

// Old values other threads read: both warps hold the tile, and every thread
// reads the scalar atomic's. The updater (warp 0; thread 0 for the scalar)
// writes each old value to the op's scratch at its element's place (the
// tile at bytes 0-127, the scalar at 128: i32 32), a barrier, and every
// thread reads the ones it holds. The buffer ends where that scratch does
// (132 bytes), not at the kernel's 144.
// CHECK-LABEL: func.func @old_values_of_copies
// CHECK: %[[BUF:.*]] = memref.get_global @old_values_of_copies_scratch_i32 : memref<33xi32, #gpu.address_space<workgroup>>
// CHECK: %[[OLDS:.*]]:4 = scf.if %[[WARP0:.*]] -> (i32, i32, i32, i32) {
// CHECK-COUNT-4: llvm.atomicrmw max
// CHECK: scf.if %[[WARP0]] {
// CHECK: memref.store %[[OLDS]]#0, %[[BUF]]
// CHECK-COUNT-3: memref.store %[[OLDS]]
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.load %[[BUF]]
// CHECK: %[[TICKET:.*]] = llvm.atomicrmw add %arg2
// CHECK-NEXT: memref.store %[[TICKET]], %[[BUF]][%c32]
// CHECK: gpu.barrier
// CHECK-NEXT: %[[READ:.*]] = memref.load %[[BUF]][%c32]
// CHECK: llvm.store %[[READ]], %arg2
tk.func @old_values_of_copies(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}, %y: !tk.ptr<i32> {tk.divisibility = 16 : i32}, %c: !tk.ptr<i32>) attributes {tkw.num_warps = 2 : i32, tkw.shared_memory = 144 : i64, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #copies>
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<32x!tk.ptr<i32>, #copies>
  %p = tk.addptr %xs, %r : tensor<32x!tk.ptr<i32>, #copies>, tensor<32xi32, #copies>
  %old = tk.atomic_rmw max, relaxed, %p, %r {tkw.scratch = array<i64: 0, 128>} : (tensor<32x!tk.ptr<i32>, #copies>, tensor<32xi32, #copies>) -> tensor<32xi32, #copies>
  %ys = tk.splat %y : !tk.ptr<i32> -> tensor<32x!tk.ptr<i32>, #copies>
  %q = tk.addptr %ys, %r : tensor<32x!tk.ptr<i32>, #copies>, tensor<32xi32, #copies>
  tk.store %q, %old : tensor<32x!tk.ptr<i32>, #copies>
  %one = arith.constant 1 : i32
  %ticket = tk.atomic_rmw add, relaxed, %c, %one {tkw.scratch = array<i64: 128, 4>} : (!tk.ptr<i32>, i32) -> i32
  tk.store %c, %ticket : !tk.ptr<i32>
  tk.return
}
