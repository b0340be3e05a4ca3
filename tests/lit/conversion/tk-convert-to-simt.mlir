// RUN: tk-opt %s --tk-convert-to-simt="target=cuda-sm80 num-warps=4" \
// RUN:   --split-input-file | FileCheck %s

// A GPU program reads its grid position from the hardware (no trailing
// arguments); the store's loop is spread over the 128 threads. A program
// whose tile is all in bounds (decided once, in O(1), from the usual bounds
// mask) runs the loop without guards, each thread taking runs of
// consecutive elements (here 2: 256 elements, 128 threads) whose loads all
// come before the run's stores, so that LLVM can merge them into vector
// accesses; the others keep every load and store under the mask.
// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[X:.*]]: !llvm.ptr {llvm.align = 16 : i64}, %[[Y:.*]]: !llvm.ptr {llvm.align = 16 : i64}, %[[O:.*]]: !llvm.ptr {llvm.align = 16 : i64}, %[[N:.*]]: i32)
// CHECK-SAME: attributes {tk_kernel}
// CHECK-DAG: %[[TID:.*]] = gpu.thread_id x
// CHECK-DAG: gpu.block_id x
// CHECK: %[[FULL:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK: scf.if %[[FULL]] {
// CHECK: scf.for %[[I:.*]] = %[[TID]] to %{{.*}} step %{{.*}} {
// CHECK: arith.muli %[[I]], %{{.*}} : index
// CHECK-COUNT-4: llvm.load
// CHECK-NOT: scf.if
// CHECK: llvm.store
// CHECK-NOT: scf.if
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: } else {
// CHECK: scf.for %{{.*}} = %[[TID]] to
// CHECK: scf.if %{{.*}} -> (f32)
// CHECK-NEXT: llvm.load
// CHECK: scf.if %{{.*}} -> (f32)
// CHECK-NEXT: llvm.load
// CHECK: scf.if %{{[0-9]+}} {
// CHECK-NEXT: llvm.store
// CHECK: gpu.barrier
tk.func @add(%x: !tk.ptr<f32> {tk.divisibility = 16 : i32},
             %y: !tk.ptr<f32> {tk.divisibility = 16 : i32},
             %o: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32) {
  %pid = tk.program_id 0 : i32
  %c = arith.constant 256 : i32
  %s = arith.muli %pid, %c : i32
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %sv = tk.splat %s : i32 -> tensor<256xi32>
  %offs = arith.addi %sv, %r : tensor<256xi32>
  %nv = tk.splat %n : i32 -> tensor<256xi32>
  %mask = arith.cmpi slt, %offs, %nv : tensor<256xi32>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<256x!tk.ptr<f32>>
  %xp = tk.addptr %xs, %offs : tensor<256x!tk.ptr<f32>>, tensor<256xi32>
  %ys = tk.splat %y : !tk.ptr<f32> -> tensor<256x!tk.ptr<f32>>
  %yp = tk.addptr %ys, %offs : tensor<256x!tk.ptr<f32>>, tensor<256xi32>
  %os = tk.splat %o : !tk.ptr<f32> -> tensor<256x!tk.ptr<f32>>
  %op = tk.addptr %os, %offs : tensor<256x!tk.ptr<f32>>, tensor<256xi32>
  %a = tk.load %xp, %mask : tensor<256x!tk.ptr<f32>>
  %b = tk.load %yp, %mask : tensor<256x!tk.ptr<f32>>
  %sum = arith.addf %a, %b : tensor<256xf32>
  tk.store %op, %sum, %mask : tensor<256x!tk.ptr<f32>>
  tk.return
}

// -----

// A row sum: 128 threads, one output, so a part per thread (8 strided
// elements each); every warp combines its 32 parts with 5 butterfly
// shuffles, lane 0 of each warp writes the warp's value to workgroup memory,
// and after one barrier every thread combines the 4 warps' values in order.
// Each reduction has buffers of its own, so only one in a loop waits after
// reading (the next trip would overwrite them under a slow reader).
// CHECK: memref.global "private" @rowsum_tile0 : memref<4xf32, #gpu.address_space<workgroup>> {alignment = 16 : i64}
// CHECK-LABEL: func.func @rowsum
// Every thread takes part (all 32 lanes of each warp reach the shuffles).
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[STEP:.*]] = arith.constant 128 : index
// CHECK-NEXT: %[[PARTS:.*]] = arith.constant 128 : index
// CHECK-NEXT: scf.for %{{.*}} = %[[TID]] to %[[PARTS]] step %[[STEP]]
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.addf
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK: scf.if
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.load
// CHECK-NOT: gpu.barrier
tk.func @rowsum(%x: !tk.ptr<f32>, %o: !tk.ptr<f32>) {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %xp = tk.addptr %xs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %v = tk.load %xp : tensor<1024x!tk.ptr<f32>>
  %s = tk.reduce(%v : tensor<1024xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    tk.reduce.return %t : f32
  }
  tk.store %o, %s : !tk.ptr<f32>
  tk.return
}

// -----

// Column sums of a 16x8 tile: 8 outputs, 16 parts each (16 x 8 = 128
// threads), then a tree of 4 halvings in workgroup memory, each behind a
// barrier, and the 8 results copied out of part 0.
// CHECK: memref.global "private" @colsum_tile0 : memref<16x8xf32, #gpu.address_space<workgroup>>
// CHECK: memref.global "private" @colsum_tile1 : memref<8xf32, #gpu.address_space<workgroup>>
// CHECK-LABEL: func.func @colsum
// CHECK-NOT: gpu.shuffle
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK-COUNT-4: gpu.barrier
tk.func @colsum(%x: !tk.ptr<f32>, %o: !tk.ptr<f32>) {
  %r = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %xp = tk.addptr %xs, %r : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
  %v = tk.load %xp : tensor<128x!tk.ptr<f32>>
  %m = tk.reshape %v : tensor<128xf32> -> tensor<16x8xf32>
  %s = tk.reduce(%m : tensor<16x8xf32>) {axis = 0 : i32} -> tensor<8xf32> {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    tk.reduce.return %t : f32
  }
  %c = tk.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %os = tk.splat %o : !tk.ptr<f32> -> tensor<8x!tk.ptr<f32>>
  %op = tk.addptr %os, %c : tensor<8x!tk.ptr<f32>>, tensor<8xi32>
  tk.store %op, %s : tensor<8x!tk.ptr<f32>>
  tk.return
}

// -----

// A scalar atomic happens once per program: thread 0 runs it and publishes
// the old value through workgroup memory.
// CHECK-LABEL: func.func @counter
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : index
// CHECK: scf.if %[[FIRST]]
// CHECK: llvm.atomicrmw add
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: memref.load
// CHECK: gpu.barrier
tk.func @counter(%p: !tk.ptr<i32>, %o: !tk.ptr<i32>) {
  %one = arith.constant 1 : i32
  %old = tk.atomic_rmw add, acq_rel, %p, %one : (!tk.ptr<i32>, i32) -> i32
  tk.store %o, %old : !tk.ptr<i32>
  tk.return
}

// -----

// Where every reader visits a tile at the indices its own thread owns (here
// a run of 2 elements for each of 128 threads), the tile stays in registers:
// x and exp(x - max) take no workgroup memory (only a value per warp for
// each reduction), each thread loads its elements once, computes their
// exponentials once, combines them, then shuffles across the warp.
// CHECK-NOT: memref<256xf32
// CHECK-LABEL: func.func @softmax_row
// CHECK-NOT: scf.for
// CHECK-COUNT-2: llvm.load
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK-COUNT-2: math.exp
// CHECK-NOT: math.exp
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK-COUNT-2: llvm.store
tk.func @softmax_row(%x: !tk.ptr<f32>, %o: !tk.ptr<f32>) {
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<256x!tk.ptr<f32>>
  %xp = tk.addptr %xs, %r : tensor<256x!tk.ptr<f32>>, tensor<256xi32>
  %v = tk.load %xp : tensor<256x!tk.ptr<f32>>
  %m = tk.reduce(%v : tensor<256xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.maximumf %a, %b : f32
    tk.reduce.return %t : f32
  }
  %ms = tk.splat %m : f32 -> tensor<256xf32>
  %d = arith.subf %v, %ms : tensor<256xf32>
  %e = math.exp %d : tensor<256xf32>
  %s = tk.reduce(%e : tensor<256xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    tk.reduce.return %t : f32
  }
  %ss = tk.splat %s : f32 -> tensor<256xf32>
  %y = arith.divf %e, %ss : tensor<256xf32>
  %os = tk.splat %o : !tk.ptr<f32> -> tensor<256x!tk.ptr<f32>>
  %op = tk.addptr %os, %r : tensor<256x!tk.ptr<f32>>, tensor<256xi32>
  tk.store %op, %y : tensor<256x!tk.ptr<f32>>
  tk.return
}

// -----

// On a GPU, exp(x - max) (read by the sum and by the division) is
// recomputed by both instead of taking a second 16384-element tile of
// workgroup memory; x, a load with two users, stays stored.
// CHECK: memref.global "private" @softmax_wide_row_tile0 : memref<16384xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: memref<16384xf32
// CHECK-LABEL: func.func @softmax_wide_row
// CHECK: math.exp
// CHECK: llvm.store
tk.func @softmax_wide_row(%x: !tk.ptr<f32>, %o: !tk.ptr<f32>) {
  %r = tk.make_range {end = 16384 : i32, start = 0 : i32} : tensor<16384xi32>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<16384x!tk.ptr<f32>>
  %xp = tk.addptr %xs, %r : tensor<16384x!tk.ptr<f32>>, tensor<16384xi32>
  %v = tk.load %xp : tensor<16384x!tk.ptr<f32>>
  %m = tk.reduce(%v : tensor<16384xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.maximumf %a, %b : f32
    tk.reduce.return %t : f32
  }
  %ms = tk.splat %m : f32 -> tensor<16384xf32>
  %d = arith.subf %v, %ms : tensor<16384xf32>
  %e = math.exp %d : tensor<16384xf32>
  %s = tk.reduce(%e : tensor<16384xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    tk.reduce.return %t : f32
  }
  %ss = tk.splat %s : f32 -> tensor<16384xf32>
  %y = arith.divf %e, %ss : tensor<16384xf32>
  %os = tk.splat %o : !tk.ptr<f32> -> tensor<16384x!tk.ptr<f32>>
  %op = tk.addptr %os, %r : tensor<16384x!tk.ptr<f32>>, tensor<16384xi32>
  tk.store %op, %y : tensor<16384x!tk.ptr<f32>>
  tk.return
}

// -----

// x - max(x, 1)[:, None]: the row maxima have storage of their own (the
// reduction's), so their expand_dims is read through the broadcast at the
// moved index instead of being copied into a 64x1 tile first.
// CHECK-DAG: memref.global "private" @center_rows_tile{{[0-9]+}} : memref<64x64xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.global "private" @center_rows_tile{{[0-9]+}} : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: memref<64x1xf32
// CHECK-LABEL: func.func @center_rows
tk.func @center_rows(%x: !tk.ptr<f32>, %o: !tk.ptr<f32>) {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %row = tk.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %col = tk.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %c64 = arith.constant dense<64> : tensor<64x1xi32>
  %rows = arith.muli %row, %c64 : tensor<64x1xi32>
  %rb = tk.broadcast %rows : tensor<64x1xi32> -> tensor<64x64xi32>
  %cb = tk.broadcast %col : tensor<1x64xi32> -> tensor<64x64xi32>
  %offs = arith.addi %rb, %cb : tensor<64x64xi32>
  %sx = tk.splat %x : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %px = tk.addptr %sx, %offs : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  %v = tk.load %px : tensor<64x64x!tk.ptr<f32>>
  %m = tk.reduce(%v : tensor<64x64xf32>) {axis = 1 : i32} -> tensor<64xf32> {
  ^bb0(%lhs: f32, %rhs: f32):
    %mx = arith.maximumf %lhs, %rhs : f32
    tk.reduce.return %mx : f32
  }
  %mc = tk.expand_dims %m {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
  %mb = tk.broadcast %mc : tensor<64x1xf32> -> tensor<64x64xf32>
  %d = arith.subf %v, %mb : tensor<64x64xf32>
  %so = tk.splat %o : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %po = tk.addptr %so, %offs : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  tk.store %po, %d : tensor<64x64x!tk.ptr<f32>>
  tk.return
}
