// RUN: tk-opt %s --split-input-file --tk-convert-to-simt="target=cuda-sm80 num-warps=4" --canonicalize | FileCheck %s

// tk-convert-to-simt follows the thread layouts it is given
// (tk-assign-thread-layouts records them; here they are written by hand).
// The same kernel five times: the loaded row kept whole in workgroup
// memory (written by runs of 4, then of 1), in registers by runs of 4, and
// by runs of 2; then whole in
// workgroup memory again, the store visiting it by runs of 2. A store
// visits its tile as its own layout says: by the runs of the registers it
// reads, any runs otherwise. A reduction of registers needs no split; one
// of workgroup memory is shared as its tkw.split says: in 8 parts meeting
// in memory (a buffer of 8), or a part per thread meeting across warps.

// CHECK-DAG: memref.global "private" @[[SHARED:.*]] : memref<1024xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.global "private" @[[PARTS:.*]] : memref<8xf32, #gpu.address_space<workgroup>>
// The row kept in workgroup memory is written as its #tkw.shared says:
// thread t loads and writes the runs t, t + 128 of 4 elements (a loop of 256
// runs), or, with runs of 1, the elements t, t + 128, ... (a loop of 1024).
// CHECK-LABEL: func.func @shared
// CHECK: memref.get_global @[[SHARED]]
// CHECK: scf.for %[[FIRST:.*]] = %thread_id_x to %c256 step %c128
// CHECK-NEXT: arith.muli %[[FIRST]], %c4
// CHECK-COUNT-4: memref.store
// CHECK: gpu.barrier
tk.func @shared(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %nv = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %r, %nv : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs, %mask {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  %max = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 8, across = "memory">} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  %maxv = tk.splat %max : f32 -> tensor<1024xf32>
  %d = arith.subf %x, %maxv : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %optrs, %d, %mask {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

// CHECK-LABEL: func.func @shared_single
// CHECK: scf.for %[[ELEMENT:.*]] = %thread_id_x to %c1024 step %c128
// CHECK-NOT: arith.muli %[[ELEMENT]]
// CHECK: memref.store
// CHECK-NEXT: }
// CHECK: gpu.barrier
tk.func @shared_single(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                        %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %nv = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %r, %nv : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs, %mask {tkw.layout = #tkw.shared<written = #tkw.runs<width = 1, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  %max = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 8, across = "memory">} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  %maxv = tk.splat %max : f32 -> tensor<1024xf32>
  %d = arith.subf %x, %maxv : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %optrs, %d, %mask {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<1024x!tk.ptr<f32>>
  tk.return
}


// -----

// Thread t's first run starts at element 4t; each thread holds 8 elements
// (two runs), and nothing of the row goes through workgroup memory.
// CHECK: // -----
// CHECK-NOT: memref<1024xf32
// CHECK-LABEL: func.func @runs4
// CHECK: %[[FIRST:.*]] = arith.muli %thread_id_x, %c4 : index
// CHECK: arith.index_cast %[[FIRST]]
// CHECK-COUNT-3: llvm.load
// CHECK: arith.addi %thread_id_x, %c128 : index
tk.func @runs4(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %nv = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %r, %nv : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs, %mask {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<1024x!tk.ptr<f32>>
  %max = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  %maxv = tk.splat %max : f32 -> tensor<1024xf32>
  %d = arith.subf %x, %maxv : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %optrs, %d, %mask {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

// Runs of 2: element 2t first, then 2(t + 128), ... (four runs).
// CHECK: // -----
// CHECK-NOT: memref<1024xf32
// CHECK-LABEL: func.func @runs2
// CHECK: %[[FIRST:.*]] = arith.muli %thread_id_x, %c2 : index
// CHECK: arith.index_cast %[[FIRST]]
// CHECK: llvm.load
// CHECK: arith.addi %thread_id_x, %c128 : index
// CHECK: arith.muli %{{.*}}, %c2 : index
tk.func @runs2(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %nv = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %r, %nv : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs, %mask {tkw.layout = #tkw.runs<width = 2, threads = 128>} : tensor<1024x!tk.ptr<f32>>
  %max = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  %maxv = tk.splat %max : f32 -> tensor<1024xf32>
  %d = arith.subf %x, %maxv : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %optrs, %d, %mask {tkw.layout = #tkw.runs<width = 2, threads = 128>} : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

// The store's runs of 2: thread t stores elements 2t and 2t + 1 first, the
// store's loop stepping by the 128 threads over 512 runs.
// CHECK: // -----
// CHECK-LABEL: func.func @store_runs2
// CHECK: gpu.barrier
// CHECK: scf.for %[[I:.*]] = %thread_id_x to %c512 step %c128
// CHECK: arith.muli %[[I]], %c2 : index
// CHECK-COUNT-2: llvm.store
// CHECK-NOT: llvm.store
// CHECK: }
tk.func @store_runs2(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                     %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %nv = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %r, %nv : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs, %mask {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  %max = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 128, across = "warps">} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  %maxv = tk.splat %max : f32 -> tensor<1024xf32>
  %d = arith.subf %x, %maxv : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %optrs, %d, %mask {tkw.layout = #tkw.runs<width = 2, threads = 128>} : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

// An atomic's runs: single elements (as tk-assign-thread-layouts records),
// thread t adding to elements t, t + 128, ...; and by hand runs of 2,
// thread t adding to 2t and 2t + 1 first, over 512 runs.
// CHECK: // -----
// CHECK-LABEL: func.func @atomic_runs
// CHECK: scf.for %[[I:.*]] = %thread_id_x to %c1024 step %c128
// CHECK-COUNT-1: llvm.atomicrmw add
// CHECK-NOT: llvm.atomicrmw
// CHECK: }
// CHECK: scf.for %[[J:.*]] = %thread_id_x to %c512 step %c128
// CHECK: arith.muli %[[J]], %c2 : index
// CHECK-COUNT-2: llvm.atomicrmw add
// CHECK-NOT: llvm.atomicrmw
// CHECK: }
tk.func @atomic_runs(%p: !tk.ptr<i32> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %s = tk.splat %p : !tk.ptr<i32> -> tensor<1024x!tk.ptr<i32>>
  %ptrs = tk.addptr %s, %r : tensor<1024x!tk.ptr<i32>>, tensor<1024xi32>
  %one = arith.constant dense<1> : tensor<1024xi32>
  %a = tk.atomic_rmw add, relaxed, %ptrs, %one {tkw.layout = #tkw.runs<width = 1, threads = 128>} : (tensor<1024x!tk.ptr<i32>>, tensor<1024xi32>) -> tensor<1024xi32>
  %b = tk.atomic_rmw add, relaxed, %ptrs, %one {tkw.layout = #tkw.runs<width = 2, threads = 128>} : (tensor<1024x!tk.ptr<i32>>, tensor<1024xi32>) -> tensor<1024xi32>
  tk.return
}

// -----

// A product no matrix unit computes (no unit here) is computed a thread per
// element, in the runs its #tkw.shared records: by runs of 4, thread t
// computes the elements 4t to 4t + 3 of the 32x32 result.
// CHECK-LABEL: func.func @fma_dot_runs
// CHECK: scf.for %[[FIRST:.*]] = %thread_id_x to %c256 step %c128
// CHECK-NEXT: arith.muli %[[FIRST]], %c4
// CHECK-COUNT-4: math.fma
// CHECK: gpu.barrier
tk.func @fma_dot_runs(%out: !tk.ptr<f32> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %a = arith.constant dense<1.0> : tensor<32x16xf32>
  %b = arith.constant dense<2.0> : tensor<16x32xf32>
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %c = tk.dot %a, %b, %zero {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<32x16xf32> * tensor<16x32xf32> -> tensor<32x32xf32>
  %sum = tk.reduce(%c : tensor<32x32xf32>) {axis = 1 : i32, tkw.split = #tkw.split<parts = 1, across = "memory">} -> tensor<32xf32> {
  ^bb0(%x: f32, %y: f32):
    %z = arith.addf %x, %y : f32
    tk.reduce.return %z : f32
  }
  %r = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<32x!tk.ptr<f32>>
  %op = tk.addptr %os, %r : tensor<32x!tk.ptr<f32>>, tensor<32xi32>
  tk.store %op, %sum {tkw.layout = #tkw.runs<width = 1, threads = 128>} : tensor<32x!tk.ptr<f32>>
  tk.return
}

// -----

// An assert on a tile checks it as its layout says: by runs of 2 here,
// thread t checking elements 2t and 2t + 1 (a loop of 128 runs).
// CHECK-LABEL: func.func @assert_runs
// CHECK: scf.for %[[FIRST:.*]] = %thread_id_x to %c128 step %c128
// CHECK-NEXT: arith.muli %[[FIRST]], %c2
// CHECK-COUNT-2: gpu.printf
tk.func @assert_runs(%n: i32) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %nv = tk.splat %n : i32 -> tensor<256xi32>
  %ok = arith.cmpi slt, %r, %nv : tensor<256xi32>
  tk.assert %ok, "index out of range" {tkw.layout = #tkw.runs<width = 2, threads = 128>} : tensor<256xi1>
  tk.return
}

// -----

// A tile a loop carries in workgroup memory is written by the runs its
// entry in tkw.iter_layouts records, here 2 f16 (a loop of 512 runs): its
// initial value before the loop, each trip's value into a temporary, and
// the copy of the temporary into the loop's buffer, by the same runs, so
// that each thread copies the elements it wrote. An if's tile result is
// written by the runs its tkw.result_layouts records, here 4, in each
// branch.
// CHECK-LABEL: func.func @carried_runs
// CHECK: scf.for %[[INIT:.*]] = %thread_id_x to %c512 step %c128
// CHECK-NEXT: arith.muli %[[INIT]], %c2
// CHECK-COUNT-2: memref.store
// CHECK-NOT: memref.store
// CHECK: gpu.barrier
// CHECK-NEXT: scf.for {{.*}} : i32 {
// CHECK-NEXT: scf.for %[[TRIP:.*]] = %thread_id_x to %c512 step %c128
// CHECK-NEXT: arith.muli %[[TRIP]], %c2
// CHECK: gpu.barrier
// CHECK-NEXT: scf.for %[[COPY:.*]] = %thread_id_x to %c512 step %c128
// CHECK-NEXT: arith.muli %[[COPY]], %c2
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: arith.addi
// CHECK-NEXT: memref.load
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK-NEXT: scf.for %[[THEN:.*]] = %thread_id_x to %c256 step %c128
// CHECK-NEXT: arith.muli %[[THEN]], %c4
// CHECK: } else {
// CHECK-NEXT: scf.for %[[ELSE:.*]] = %thread_id_x to %c256 step %c128
// CHECK-NEXT: arith.muli %[[ELSE]], %c4
tk.func @carried_runs(%in: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                      %out: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %is = tk.splat %in : !tk.ptr<f16> -> tensor<1024x!tk.ptr<f16>>
  %ip = tk.addptr %is, %r : tensor<1024x!tk.ptr<f16>>, tensor<1024xi32>
  %zero = arith.constant dense<0.0> : tensor<1024xf16>
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<1024xf16>) : i32 {
    %rv = tk.splat %i : i32 -> tensor<1024xi32>
    %p = tk.addptr %ip, %rv : tensor<1024x!tk.ptr<f16>>, tensor<1024xi32>
    %x = tk.load %p : tensor<1024x!tk.ptr<f16>>
    %next = arith.addf %acc, %x : tensor<1024xf16>
    scf.yield %next : tensor<1024xf16>
  } {tkw.iter_layouts = [#tkw.shared<written = #tkw.runs<width = 2, threads = 128>>]}
  %pos = arith.cmpi sgt, %n, %c0 : i32
  %pick = scf.if %pos -> (tensor<1024xf16>) {
    scf.yield %sum : tensor<1024xf16>
  } else {
    %neg = arith.negf %sum : tensor<1024xf16>
    scf.yield %neg : tensor<1024xf16>
  } {tkw.result_layouts = [#tkw.shared<written = #tkw.runs<width = 4, threads = 128>>]}
  %os = tk.splat %out : !tk.ptr<f16> -> tensor<1024x!tk.ptr<f16>>
  %op = tk.addptr %os, %r : tensor<1024x!tk.ptr<f16>>, tensor<1024xi32>
  tk.store %op, %pick {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<1024x!tk.ptr<f16>>
  tk.return
}
