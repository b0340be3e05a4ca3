// RUN: tk-opt %s --split-input-file --tk-assign-linear-layouts="target=cuda-sm80 num-warps=4" | FileCheck %s
//
// tk-assign-linear-layouts on 4 warps of 32 lanes: memory ops take Triton's
// coalesced blocked layout, as wide as AxisFacts proves; the rest follows.
// Each case is a module of its own, so the #linear aliases restart.

// 1024 f32 over 128 threads: 16 bytes (4 elements) a thread, the 32 lanes
// and then the 4 warps along the tile, the rest in registers (bit 9).
// Every tile of the kernel has it; nothing converts.
// CHECK: #[[L:linear]] = #tkw.linear<shape = [1024], register = {{\[\[}}1], [2], [512]], lane = {{\[\[}}4], [8], [16], [32], [64]], warp = {{\[\[}}128], [256]]>
// CHECK-LABEL: tk.func @vector_add
// CHECK-SAME: tkw.num_warps = 4 : i32, tkw.target = "cuda-sm80", tkw.threads_per_warp = 32 : i32
// CHECK: tk.make_range {{.*}} : tensor<1024xi32, #[[L]]>
// CHECK: tk.load {{.*}} : tensor<1024x!tk.ptr<f32>, #[[L]]>
// CHECK: arith.addf {{.*}} : tensor<1024xf32, #[[L]]>
// CHECK: tk.store {{.*}} : tensor<1024x!tk.ptr<f32>, #[[L]]>
// CHECK-NOT: tkw.convert_layout
tk.func @vector_add(%x: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %y: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32) {
  %pid = tk.program_id 0 : i32
  %c1024 = arith.constant 1024 : i32
  %start = arith.muli %pid, %c1024 : i32
  %range = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %0 = tk.splat %start : i32 -> tensor<1024xi32>
  %offs = arith.addi %0, %range : tensor<1024xi32>
  %1 = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %offs, %1 : tensor<1024xi32>
  %2 = tk.splat %x : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %3 = tk.addptr %2, %offs : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %xv = tk.load %3, %mask : tensor<1024x!tk.ptr<f32>>
  %sum = arith.addf %xv, %xv : tensor<1024xf32>
  %4 = tk.splat %y : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %5 = tk.addptr %4, %offs : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %5, %sum, %mask : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

// %x has no tk.divisibility: its addresses are 4-byte aligned only, so its
// load moves one element a thread; the store through the aligned %y moves
// four, and the loaded tile converts. The range is computed again in the
// store's layout rather than converted.
// CHECK-DAG: #[[STORE:linear]] = #tkw.linear<shape = [1024], register = {{\[\[}}1], [2], [512]], lane = {{\[\[}}4], [8], [16], [32], [64]], warp = {{\[\[}}128], [256]]>
// CHECK-DAG: #[[LOAD:linear1]] = #tkw.linear<shape = [1024], register = {{\[\[}}128], [256], [512]], lane = {{\[\[}}1], [2], [4], [8], [16]], warp = {{\[\[}}32], [64]]>
// CHECK-LABEL: tk.func @unaligned
// CHECK: tk.make_range {{.*}} : tensor<1024xi32, #[[STORE]]>
// CHECK: tk.make_range {{.*}} : tensor<1024xi32, #[[LOAD]]>
// CHECK: %[[X:.+]] = tk.load {{.*}} : tensor<1024x!tk.ptr<f32>, #[[LOAD]]>
// CHECK: %[[MOVED:.+]] = tkw.convert_layout %[[X]] : tensor<1024xf32, #[[LOAD]]> -> tensor<1024xf32, #[[STORE]]>
// CHECK: tk.store {{.*}}, %[[MOVED]] : tensor<1024x!tk.ptr<f32>, #[[STORE]]>
tk.func @unaligned(%x: !tk.ptr<f32>, %y: !tk.ptr<f32> {tk.divisibility = 16 : i32}) {
  %range = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %2 = tk.splat %x : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %3 = tk.addptr %2, %range : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %xv = tk.load %3 : tensor<1024x!tk.ptr<f32>>
  %4 = tk.splat %y : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %5 = tk.addptr %4, %range : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %5, %xv : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

// A pointer walked by 256 f16 (512 bytes) a trip keeps the start's 16-byte
// alignment (AxisFacts of the loop's walk): 2 elements a thread, all the
// 256 elements leave for 128 threads. The f32 store agrees.
// CHECK: #[[L:linear]] = #tkw.linear<shape = [256], register = {{\[\[}}1]], lane = {{\[\[}}2], [4], [8], [16], [32]], warp = {{\[\[}}64], [128]]>
// CHECK-LABEL: tk.func @walk
// CHECK: scf.for {{.*}} -> (tensor<256xf32, #[[L]]>, tensor<256x!tk.ptr<f16>, #[[L]]>)
// CHECK: tk.load {{.*}} : tensor<256x!tk.ptr<f16>, #[[L]]>
// CHECK-NOT: tkw.convert_layout
tk.func @walk(%x: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %y: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32) {
  %range = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %p0 = tk.splat %x : !tk.ptr<f16> -> tensor<256x!tk.ptr<f16>>
  %p = tk.addptr %p0, %range : tensor<256x!tk.ptr<f16>>, tensor<256xi32>
  %c256 = arith.constant 256 : i32
  %step = tk.splat %c256 : i32 -> tensor<256xi32>
  %zero = arith.constant dense<0.0> : tensor<256xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %q = %p) -> (tensor<256xf32>, tensor<256x!tk.ptr<f16>>) : i32 {
    %v = tk.load %q : tensor<256x!tk.ptr<f16>>
    %w = arith.extf %v : tensor<256xf16> to tensor<256xf32>
    %a = arith.addf %acc, %w : tensor<256xf32>
    %next = tk.addptr %q, %step : tensor<256x!tk.ptr<f16>>, tensor<256xi32>
    scf.yield %a, %next : tensor<256xf32>, tensor<256x!tk.ptr<f16>>
  }
  %o0 = tk.splat %y : !tk.ptr<f32> -> tensor<256x!tk.ptr<f32>>
  %o = tk.addptr %o0, %range : tensor<256x!tk.ptr<f32>>, tensor<256xi32>
  tk.store %o, %r#0 : tensor<256x!tk.ptr<f32>>
  tk.return
}

// -----

// Walked by one f16 (2 bytes) a trip, the loads are 2-byte aligned: one
// element a thread. The loop's result converts to the store's layout.
// CHECK-DAG: #[[STORE:linear]] = #tkw.linear<shape = [256], register = {{\[\[}}1]], lane = {{\[\[}}2], [4], [8], [16], [32]], warp = {{\[\[}}64], [128]]>
// CHECK-DAG: #[[LOAD:linear1]] = #tkw.linear<shape = [256], register = {{\[\[}}128]], lane = {{\[\[}}1], [2], [4], [8], [16]], warp = {{\[\[}}32], [64]]>
// CHECK-LABEL: tk.func @walk_by_one
// CHECK: scf.for {{.*}} -> (tensor<256xf32, #[[LOAD]]>, tensor<256x!tk.ptr<f16>, #[[LOAD]]>)
// CHECK: tkw.convert_layout {{.*}} : tensor<256xf32, #[[LOAD]]> -> tensor<256xf32, #[[STORE]]>
tk.func @walk_by_one(%x: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %y: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32) {
  %range = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %p0 = tk.splat %x : !tk.ptr<f16> -> tensor<256x!tk.ptr<f16>>
  %p = tk.addptr %p0, %range : tensor<256x!tk.ptr<f16>>, tensor<256xi32>
  %c1i = arith.constant 1 : i32
  %step = tk.splat %c1i : i32 -> tensor<256xi32>
  %zero = arith.constant dense<0.0> : tensor<256xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %q = %p) -> (tensor<256xf32>, tensor<256x!tk.ptr<f16>>) : i32 {
    %v = tk.load %q : tensor<256x!tk.ptr<f16>>
    %w = arith.extf %v : tensor<256xf16> to tensor<256xf32>
    %a = arith.addf %acc, %w : tensor<256xf32>
    %next = tk.addptr %q, %step : tensor<256x!tk.ptr<f16>>, tensor<256xi32>
    scf.yield %a, %next : tensor<256xf32>, tensor<256x!tk.ptr<f16>>
  }
  %o0 = tk.splat %y : !tk.ptr<f32> -> tensor<256x!tk.ptr<f32>>
  %o = tk.addptr %o0, %range : tensor<256x!tk.ptr<f32>>, tensor<256xi32>
  tk.store %o, %r#0 : tensor<256x!tk.ptr<f32>>
  tk.return
}

// -----

// A row softmax step, 4 x 256 f32: 4 elements a thread, 32 lanes and 2
// warps along a row, 2 warps and then a register over the rows. The row
// maximum is the tile's layout less dimension 1: its lane bits now hold
// copies. Broadcast back, it takes the layout x - max wants, so no
// conversion is needed anywhere.
// CHECK-DAG: #[[ROW:linear]] = #tkw.linear<shape = [4], register = {{\[\[}}2]], lane = {{\[\[}}0], [0], [0], [0], [0]], warp = {{\[\[}}0], [1]]>
// CHECK-DAG: #[[COLUMN:linear2]] = #tkw.linear<shape = [4, 1], register = {{\[\[}}2, 0]], lane = {{\[\[}}0, 0], [0, 0], [0, 0], [0, 0], [0, 0]], warp = {{\[\[}}0, 0], [1, 0]]>
// CHECK-DAG: #[[TILE:linear4]] = #tkw.linear<shape = [4, 256], register = {{\[\[}}0, 1], [0, 2], [2, 0]], lane = {{\[\[}}0, 4], [0, 8], [0, 16], [0, 32], [0, 64]], warp = {{\[\[}}0, 128], [1, 0]]>
// CHECK-LABEL: tk.func @row_softmax
// CHECK: %[[X:.+]] = tk.load {{.*}} : tensor<4x256x!tk.ptr<f32>, #[[TILE]]>
// CHECK: tk.reduce(%[[X]] : tensor<4x256xf32, #[[TILE]]>) {axis = 1 : i32} -> tensor<4xf32, #[[ROW]]>
// CHECK: tk.expand_dims {{.*}} : tensor<4xf32, #[[ROW]]> -> tensor<4x1xf32, #[[COLUMN]]>
// CHECK: %[[MAX:.+]] = tk.broadcast {{.*}} : tensor<4x1xf32, #[[COLUMN]]> -> tensor<4x256xf32, #[[TILE]]>
// CHECK: arith.subf %[[X]], %[[MAX]] : tensor<4x256xf32, #[[TILE]]>
// CHECK-NOT: tkw.convert_layout
tk.func @row_softmax(%x: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %y: !tk.ptr<f32> {tk.divisibility = 16 : i32}) {
  %rows = tk.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %cols = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %c256 = arith.constant 256 : i32
  %r0 = tk.expand_dims %rows {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
  %s = tk.splat %c256 : i32 -> tensor<4x1xi32>
  %r1 = arith.muli %r0, %s : tensor<4x1xi32>
  %c0 = tk.expand_dims %cols {axis = 0 : i32} : tensor<256xi32> -> tensor<1x256xi32>
  %rb = tk.broadcast %r1 : tensor<4x1xi32> -> tensor<4x256xi32>
  %cb = tk.broadcast %c0 : tensor<1x256xi32> -> tensor<4x256xi32>
  %offs = arith.addi %rb, %cb : tensor<4x256xi32>
  %px = tk.splat %x : !tk.ptr<f32> -> tensor<4x256x!tk.ptr<f32>>
  %p = tk.addptr %px, %offs : tensor<4x256x!tk.ptr<f32>>, tensor<4x256xi32>
  %v = tk.load %p : tensor<4x256x!tk.ptr<f32>>
  %m = tk.reduce(%v : tensor<4x256xf32>) {axis = 1 : i32} -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    %t = arith.maxnumf %a, %b : f32
    tk.reduce.return %t : f32
  }
  %me = tk.expand_dims %m {axis = 1 : i32} : tensor<4xf32> -> tensor<4x1xf32>
  %mb = tk.broadcast %me : tensor<4x1xf32> -> tensor<4x256xf32>
  %d = arith.subf %v, %mb : tensor<4x256xf32>
  %py = tk.splat %y : !tk.ptr<f32> -> tensor<4x256x!tk.ptr<f32>>
  %q = tk.addptr %py, %offs : tensor<4x256x!tk.ptr<f32>>, tensor<4x256xi32>
  tk.store %q, %d : tensor<4x256x!tk.ptr<f32>>
  tk.return
}

// -----

// A #tkw.linear already in the IR is kept, and the values computed from it
// follow it, though it is not the blocked layout the pass would choose.
// CHECK: #[[KEPT:linear]] = #tkw.linear<shape = [128], register = [], lane = {{\[\[}}1], [2], [4], [8], [16]], warp = {{\[\[}}32], [64]]>
// CHECK-LABEL: tk.func @kept
// CHECK: tk.make_range {{.*}} : tensor<128xi32, #[[KEPT]]>
// CHECK: arith.addi {{.*}} : tensor<128xi32, #[[KEPT]]>
// CHECK-NOT: tkw.convert_layout
tk.func @kept(%y: !tk.ptr<i32>) {
  %r = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #tkw.linear<shape = [128], register = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64]]>>
  %s = arith.addi %r, %r : tensor<128xi32, #tkw.linear<shape = [128], register = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64]]>>
  %m = tk.reduce(%s : tensor<128xi32, #tkw.linear<shape = [128], register = [], lane = [[1], [2], [4], [8], [16]], warp = [[32], [64]]>>) {axis = 0 : i32} -> i32 {
  ^bb0(%a: i32, %b: i32):
    %t = arith.addi %a, %b : i32
    tk.reduce.return %t : i32
  }
  tk.store %y, %m : !tk.ptr<i32>
  tk.return
}

// -----

// A tile loaded transposed (attention's k: d down the rows, keys `stride`
// apart along the columns) runs down its columns: AxisFacts proves 64
// consecutive f16 along dim 0 and nothing along dim 1, so a thread's first
// registers are 8 consecutive rows of a column (16 bytes) and the lanes go
// down the columns first, as Triton's coalescing orders them.
// CHECK: #[[T:linear[0-9]*]] = #tkw.linear<shape = [64, 64], register = {{\[\[}}1, 0], [2, 0], [4, 0], [0, 16], [0, 32]], lane = {{\[\[}}8, 0], [16, 0], [32, 0], [0, 1], [0, 2]], warp = {{\[\[}}0, 4], [0, 8]]>
// CHECK-LABEL: tk.func @transposed_load
// CHECK: tk.load {{.*}} : tensor<64x64x!tk.ptr<f16>, #[[T]]>
tk.func @transposed_load(%k: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %stride: i32 {tk.divisibility = 16 : i32}, %out: !tk.ptr<f16> {tk.divisibility = 16 : i32}) {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %d = tk.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %n = tk.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %s = tk.splat %stride : i32 -> tensor<1x64xi32>
  %keys = arith.muli %n, %s : tensor<1x64xi32>
  %db = tk.broadcast %d : tensor<64x1xi32> -> tensor<64x64xi32>
  %kb = tk.broadcast %keys : tensor<1x64xi32> -> tensor<64x64xi32>
  %off = arith.addi %db, %kb : tensor<64x64xi32>
  %base = tk.splat %k : !tk.ptr<f16> -> tensor<64x64x!tk.ptr<f16>>
  %p = tk.addptr %base, %off : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  %x = tk.load %p : tensor<64x64x!tk.ptr<f16>>
  %c64 = arith.constant dense<64> : tensor<64x1xi32>
  %rows = arith.muli %d, %c64 : tensor<64x1xi32>
  %rb = tk.broadcast %rows : tensor<64x1xi32> -> tensor<64x64xi32>
  %cb = tk.broadcast %n : tensor<1x64xi32> -> tensor<64x64xi32>
  %ooff = arith.addi %rb, %cb : tensor<64x64xi32>
  %obase = tk.splat %out : !tk.ptr<f16> -> tensor<64x64x!tk.ptr<f16>>
  %q = tk.addptr %obase, %ooff : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  tk.store %q, %x : tensor<64x64x!tk.ptr<f16>>
  tk.return
}

// -----

// A join pairs each thread's elements of a and b in a new lowest register
// bit, and the reshape reads the pairs as the woven tile in the same
// registers (Triton's interleave): the store's coalesced layout is the
// reshape's, and nothing converts.
// CHECK: #[[HALF:linear]] = #tkw.linear<shape = [256], register = {{\[\[}}1]], lane = {{\[\[}}2], [4], [8], [16], [32]], warp = {{\[\[}}64], [128]]>
// CHECK: #[[PAIRS:linear1]] = #tkw.linear<shape = [256, 2], register = {{\[\[}}0, 1], [1, 0]], lane = {{\[\[}}2, 0], [4, 0], [8, 0], [16, 0], [32, 0]], warp = {{\[\[}}64, 0], [128, 0]]>
// CHECK: #[[WOVEN:linear2]] = #tkw.linear<shape = [512], register = {{\[\[}}1], [2]], lane = {{\[\[}}4], [8], [16], [32], [64]], warp = {{\[\[}}128], [256]]>
// CHECK-LABEL: tk.func @interleave
// CHECK: tk.join {{.*}} : tensor<256xf32, #[[HALF]]> -> tensor<256x2xf32, #[[PAIRS]]>
// CHECK: tk.reshape {{.*}} : tensor<256x2xf32, #[[PAIRS]]> -> tensor<512xf32, #[[WOVEN]]>
// CHECK: tk.store {{.*}} : tensor<512x!tk.ptr<f32>, #[[WOVEN]]>
// CHECK-NOT: tkw.convert_layout
tk.func @interleave(%a: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %b: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %y: !tk.ptr<f32> {tk.divisibility = 16 : i32}) {
  %range = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %as = tk.splat %a : !tk.ptr<f32> -> tensor<256x!tk.ptr<f32>>
  %ap = tk.addptr %as, %range : tensor<256x!tk.ptr<f32>>, tensor<256xi32>
  %av = tk.load %ap : tensor<256x!tk.ptr<f32>>
  %bs = tk.splat %b : !tk.ptr<f32> -> tensor<256x!tk.ptr<f32>>
  %bp = tk.addptr %bs, %range : tensor<256x!tk.ptr<f32>>, tensor<256xi32>
  %bv = tk.load %bp : tensor<256x!tk.ptr<f32>>
  %j = tk.join %av, %bv : tensor<256xf32> -> tensor<256x2xf32>
  %w = tk.reshape %j : tensor<256x2xf32> -> tensor<512xf32>
  %wide = tk.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32>
  %ys = tk.splat %y : !tk.ptr<f32> -> tensor<512x!tk.ptr<f32>>
  %yp = tk.addptr %ys, %wide : tensor<512x!tk.ptr<f32>>, tensor<512xi32>
  tk.store %yp, %w : tensor<512x!tk.ptr<f32>>
  tk.return
}
