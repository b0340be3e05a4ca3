// RUN: tk-opt %s --split-input-file --tk-assign-linear-layouts="target=cuda-sm80 num-warps=4" --tk-remove-layout-conversions | FileCheck %s
//
// tk-remove-layout-conversions after tk-assign-linear-layouts on 4 warps of
// 32 lanes: what can be computed cheaply in the wanted layout is, and the
// conversion goes; what cannot, or would be computed twice, keeps it.

// The bias row, 64 elements for 128 threads, is loaded directly in the
// accumulator's layout less its rows: its conversion goes, and so does
// the blocked load it replaces. The accumulator still converts to the
// store's coalesced layout: a dot's result cannot be computed again.
// CHECK-DAG: #[[BIAS:linear[0-9]*]] = #tkw.linear<shape = [1, 64], register = {{\[\[}}0, 1], [0, 16], [0, 32]], lane = {{\[\[}}0, 2], [0, 4], [0, 0], [0, 0], [0, 0]], warp = {{\[\[}}0, 8], [0, 0]]>
// CHECK-LABEL: tk.func @dot_bias
// CHECK: tk.dot
// CHECK-NOT: tkw.convert_layout
// CHECK: %[[ROW:.+]] = tk.load {{.*}} : tensor<1x64x!tk.ptr<f32>, #[[BIAS]]>
// CHECK-NEXT: tk.broadcast %[[ROW]] : tensor<1x64xf32, #[[BIAS]]>
// CHECK: tkw.convert_layout
// CHECK-NOT: tkw.convert_layout
// CHECK: tk.return
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

// -----

// 1024 elements loaded one a lane: loaded four a lane from 4-byte-aligned
// addresses, each warp instruction would cover 1 element where it covers
// 32 now. The conversion stays.
// CHECK-LABEL: tk.func @unaligned
// CHECK: tkw.convert_layout
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

// The loaded tile also feeds the store in its own layout: loading and
// adding again for the other store would do the work twice. The
// conversion stays.
// CHECK-LABEL: tk.func @two_stores
// CHECK: tk.load
// CHECK-NEXT: %[[SUM:.+]] = arith.addf
// CHECK-NEXT: tkw.convert_layout %[[SUM]]
// CHECK-NOT: tk.load
// CHECK: tk.return
tk.func @two_stores(%x: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %y: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %z: !tk.ptr<f32>) {
  %range = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %2 = tk.splat %x : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %3 = tk.addptr %2, %range : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %xv = tk.load %3 : tensor<1024x!tk.ptr<f32>>
  %d = arith.addf %xv, %xv : tensor<1024xf32>
  %4 = tk.splat %y : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %5 = tk.addptr %4, %range : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %5, %d : tensor<1024x!tk.ptr<f32>>
  %6 = tk.splat %z : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %7 = tk.addptr %6, %range : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %7, %d : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

// A histogram: the atomic adds one element a run, and its pointers, which
// no thread can hand another, come from the bins. The bins were assigned
// 16-byte vectors; loaded an element a lane instead, in the atomic's layout,
// a warp still reads whole 128-byte lines, so they are loaded there and
// nothing converts.
// CHECK-LABEL: tk.func @histogram
// CHECK: %[[BINS:.+]] = tk.load %{{.*}} : tensor<256x!tk.ptr<i32>, #[[ATOMIC:linear[0-9]*]]>
// CHECK: %[[PTRS:.+]] = tk.addptr %{{.*}}, %[[BINS]] : tensor<256x!tk.ptr<i32>, #[[ATOMIC]]>
// CHECK-NOT: tkw.convert_layout
// CHECK: tk.atomic_rmw add, relaxed, %[[PTRS]]
tk.func @histogram(%x: !tk.ptr<i32> {tk.divisibility = 16 : i32}, %hist: !tk.ptr<i32> {tk.divisibility = 16 : i32}) {
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<256x!tk.ptr<i32>>
  %px = tk.addptr %xs, %r : tensor<256x!tk.ptr<i32>>, tensor<256xi32>
  %bins = tk.load %px : tensor<256x!tk.ptr<i32>>
  %hs = tk.splat %hist : !tk.ptr<i32> -> tensor<256x!tk.ptr<i32>>
  %ph = tk.addptr %hs, %bins : tensor<256x!tk.ptr<i32>>, tensor<256xi32>
  %one = arith.constant dense<1> : tensor<256xi32>
  %old = tk.atomic_rmw add, relaxed, %ph, %one : (tensor<256x!tk.ptr<i32>>, tensor<256xi32>) -> tensor<256xi32>
  tk.return
}

// -----

// A transpose's mask, (rows < m) & (cols < n), feeds the load in the
// load's layout and, turned, the store in the store's: it is computed
// again there, seven ops from its ranges (add, expand, compare, broadcast,
// and), rather than converted. Only the data tile converts.
// CHECK-LABEL: tk.func @transpose_mask
// CHECK-NOT: tkw.convert_layout
// CHECK: tk.load
// CHECK-NOT: tkw.convert_layout
// CHECK: tkw.convert_layout {{.*}} : tensor<64x64xf32
// CHECK-NOT: tkw.convert_layout
// CHECK: tk.store
tk.func @transpose_mask(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %m: i32 {tk.divisibility = 16 : i32}, %n: i32 {tk.divisibility = 16 : i32}) {
  %c64 = arith.constant 64 : i32
  %p0 = tk.program_id 0 : i32
  %p1 = tk.program_id 1 : i32
  %row0 = arith.muli %p0, %c64 : i32
  %col0 = arith.muli %p1, %c64 : i32
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %row0s = tk.splat %row0 : i32 -> tensor<64xi32>
  %col0s = tk.splat %col0 : i32 -> tensor<64xi32>
  %rows = arith.addi %row0s, %r : tensor<64xi32>
  %cols = arith.addi %col0s, %r : tensor<64xi32>
  %rowc = tk.expand_dims %rows {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %colr = tk.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %ms = tk.splat %m : i32 -> tensor<64x1xi32>
  %ns = tk.splat %n : i32 -> tensor<1x64xi32>
  %rowin = arith.cmpi slt, %rowc, %ms : tensor<64x1xi32>
  %colin = arith.cmpi slt, %colr, %ns : tensor<1x64xi32>
  %rowinb = tk.broadcast %rowin : tensor<64x1xi1> -> tensor<64x64xi1>
  %colinb = tk.broadcast %colin : tensor<1x64xi1> -> tensor<64x64xi1>
  %mask = arith.andi %rowinb, %colinb : tensor<64x64xi1>
  %ns2 = tk.splat %n : i32 -> tensor<64x1xi32>
  %inrow = arith.muli %rowc, %ns2 : tensor<64x1xi32>
  %inrowb = tk.broadcast %inrow : tensor<64x1xi32> -> tensor<64x64xi32>
  %colb = tk.broadcast %colr : tensor<1x64xi32> -> tensor<64x64xi32>
  %inoff = arith.addi %inrowb, %colb : tensor<64x64xi32>
  %pin0 = tk.splat %in : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %pin = tk.addptr %pin0, %inoff : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  %tile = tk.load %pin, %mask : tensor<64x64x!tk.ptr<f32>>
  %turned = tk.trans %tile {order = array<i32: 1, 0>} : tensor<64x64xf32> -> tensor<64x64xf32>
  %tmask = tk.trans %mask {order = array<i32: 1, 0>} : tensor<64x64xi1> -> tensor<64x64xi1>
  %colc = tk.expand_dims %cols {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %rowr = tk.expand_dims %rows {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %ms2 = tk.splat %m : i32 -> tensor<64x1xi32>
  %outrow = arith.muli %colc, %ms2 : tensor<64x1xi32>
  %outrowb = tk.broadcast %outrow : tensor<64x1xi32> -> tensor<64x64xi32>
  %rowb = tk.broadcast %rowr : tensor<1x64xi32> -> tensor<64x64xi32>
  %outoff = arith.addi %outrowb, %rowb : tensor<64x64xi32>
  %pout0 = tk.splat %out : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %pout = tk.addptr %pout0, %outoff : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  tk.store %pout, %turned, %tmask : tensor<64x64x!tk.ptr<f32>>
  tk.return
}

// -----

// A row at a stride known only at run time is loaded and stored an element
// a lane; the weights, 16-byte aligned, were assigned 16-byte vectors. An
// element a lane still fills a warp's 128-byte lines, so the weights load
// in the row's layout and neither the product nor its store converts.
// CHECK-LABEL: tk.func @scaled_row
// CHECK: %[[ROW:.+]] = tk.load %{{.*}} : tensor<1024x!tk.ptr<f32>, #[[L:linear[0-9]*]]>
// CHECK: %[[W:.+]] = tk.load %{{.*}} : tensor<1024x!tk.ptr<f32>, #[[L]]>
// CHECK-NOT: tkw.convert_layout
// CHECK: tk.store
tk.func @scaled_row(%x: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %w: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %stride: i32) {
  %row = tk.program_id 0 : i32
  %offset = arith.muli %row, %stride : i32
  %xrow = tk.addptr %x, %offset : !tk.ptr<f32>, i32
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %xs = tk.splat %xrow : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %px = tk.addptr %xs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %xv = tk.load %px : tensor<1024x!tk.ptr<f32>>
  %ws = tk.splat %w : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %pw = tk.addptr %ws, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %wv = tk.load %pw : tensor<1024x!tk.ptr<f32>>
  %y = arith.mulf %xv, %wv : tensor<1024xf32>
  tk.store %px, %y : tensor<1024x!tk.ptr<f32>>
  tk.return
}
