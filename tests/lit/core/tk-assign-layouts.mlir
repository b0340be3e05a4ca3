// RUN: tk-opt %s --split-input-file --tk-assign-layouts="target=cuda-sm80 num-warps=32" | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: tk-opt %s --split-input-file --tk-assign-layouts="target=amd-cdna3 num-warps=8" | FileCheck %s --check-prefixes=CHECK,CDNA3
// RUN: tk-opt %s --split-input-file --tk-assign-layouts="target=intel-pvc num-warps=32" | FileCheck %s --check-prefixes=CHECK,PVC

// tk-assign-layouts on warps of 32 (sm80, mma m16n8k16), 64 (CDNA3, mfma
// 32x32x8) and 16 lanes (PVC, dpas 8x16x16). Each case is a module of its
// own so that the layout aliases (#blocked, #dot_op, #slice) restart; the
// aliases print before the kernel, so a check of `tk.func @name` marks a case.

// The seed example: a 256x256 GEMM. A square partition of 32 warps gives
// warpsPerCTA [8, 4] and sizePerWarp [32, 64]; a and b get dot-operand
// layouts of it, through the loop and into the block pointers.

// SM80: #[[C:blocked]] = #tkw.blocked<sizePerWarp = [32, 64], warpsPerCTA = [8, 4], order = [1, 0]>
// CDNA3: #[[C:blocked]] = #tkw.blocked<sizePerWarp = [64, 128], warpsPerCTA = [4, 2], order = [1, 0]>
// PVC: #[[C:blocked]] = #tkw.blocked<sizePerWarp = [32, 64], warpsPerCTA = [8, 4], order = [1, 0]>
// CHECK: #[[A:dot_op]] = #tkw.dot_operand<opIdx = 0, parent = #[[C]]>
// CHECK: #[[B:dot_op1]] = #tkw.dot_operand<opIdx = 1, parent = #[[C]]>
// CHECK: tk.func @seed_gemm
// SM80-SAME: attributes {tkw.num_warps = 32 : i32, tkw.target = "cuda-sm80", tkw.threads_per_warp = 32 : i32}
// CDNA3-SAME: attributes {tkw.num_warps = 8 : i32, tkw.target = "amd-cdna3", tkw.threads_per_warp = 64 : i32}
// PVC-SAME: attributes {tkw.num_warps = 32 : i32, tkw.target = "intel-pvc", tkw.threads_per_warp = 16 : i32}
// CHECK: tk.make_block_ptr {{.*}} -> !tk.ptr<tensor<256x32xf16, #[[A]]>>
// CHECK: tk.make_block_ptr {{.*}} -> !tk.ptr<tensor<32x256xf16, #[[B]]>>
// CHECK: arith.constant dense<0.000000e+00> : tensor<256x256xf32, #[[C]]>
// CHECK: scf.for {{.*}} -> (tensor<256x256xf32, #[[C]]>, !tk.ptr<tensor<256x32xf16, #[[A]]>>, !tk.ptr<tensor<32x256xf16, #[[B]]>>)
// CHECK: tk.load {{.*}} : !tk.ptr<tensor<256x32xf16, #[[A]]>>
// CHECK: tk.load {{.*}} : !tk.ptr<tensor<32x256xf16, #[[B]]>>
// CHECK: tk.dot {{.*}} : tensor<256x32xf16, #[[A]]> * tensor<32x256xf16, #[[B]]> -> tensor<256x256xf32, #[[C]]>
// CHECK: tk.advance {{.*}} : !tk.ptr<tensor<256x32xf16, #[[A]]>>
// CHECK: tk.store {{.*}} : !tk.ptr<tensor<256x256xf32, #[[C]]>>
// CHECK-NOT: tkw.convert_layout
tk.func @seed_gemm(%a: !tk.ptr<f16>, %b: !tk.ptr<f16>, %c: !tk.ptr<f32>, %M: i64, %N: i64, %K: i64) {
  %pid_m = tk.program_id 0 : i32
  %pid_n = tk.program_id 1 : i32
  %c256 = arith.constant 256 : i32
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %c4096 = arith.constant 4096 : i32
  %c1 = arith.constant 1 : i64
  %om = arith.muli %pid_m, %c256 : i32
  %on = arith.muli %pid_n, %c256 : i32
  %pa = tk.make_block_ptr %a, [%M, %K], [%K, %c1], [%om, %c0] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<256x32xf16>>
  %pb = tk.make_block_ptr %b, [%K, %N], [%N, %c1], [%c0, %on] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<32x256xf16>>
  %zero = arith.constant dense<0.0> : tensor<256x256xf32>
  %res:3 = scf.for %k = %c0 to %c4096 step %c32 iter_args(%acc = %zero, %ia = %pa, %ib = %pb) -> (tensor<256x256xf32>, !tk.ptr<tensor<256x32xf16>>, !tk.ptr<tensor<32x256xf16>>) : i32 {
    %ta = tk.load %ia : !tk.ptr<tensor<256x32xf16>>
    %tb = tk.load %ib : !tk.ptr<tensor<32x256xf16>>
    %d = tk.dot %ta, %tb, %acc : tensor<256x32xf16> * tensor<32x256xf16> -> tensor<256x256xf32>
    %na = tk.advance %ia, [%c0, %c32] : !tk.ptr<tensor<256x32xf16>>
    %nb = tk.advance %ib, [%c32, %c0] : !tk.ptr<tensor<32x256xf16>>
    scf.yield %d, %na, %nb : tensor<256x256xf32>, !tk.ptr<tensor<256x32xf16>>, !tk.ptr<tensor<32x256xf16>>
  }
  %pc = tk.make_block_ptr %c, [%M, %N], [%N, %c1], [%om, %on] {order = array<i32: 1, 0>} : !tk.ptr<f32> -> !tk.ptr<tensor<256x256xf32>>
  tk.store %pc, %res#0 : !tk.ptr<tensor<256x256xf32>>
  tk.return
}

// -----

// Attention: a dot whose result feeds a reduction is split by rows (the
// FlashAttention-2 partition) even without a hint, so the row max stays in
// a warp; the second dot carries the hint. Propagation runs forward from
// the roots first, so qk, the softmax and p keep the accumulator layout and
// a single convert moves p (f16) into the operand layout of the second dot.

// SM80: #[[C:blocked]] = #tkw.blocked<sizePerWarp = [16, 16], warpsPerCTA = [8, 4], order = [1, 0]>
// CDNA3: #[[C:blocked]] = #tkw.blocked<sizePerWarp = [32, 32], warpsPerCTA = [4, 2], order = [1, 0]>
// PVC: #[[C:blocked]] = #tkw.blocked<sizePerWarp = [8, 32], warpsPerCTA = [16, 2], order = [1, 0]>
// CHECK: #[[A:dot_op]] = #tkw.dot_operand<opIdx = 0, parent = #[[C]]>
// CHECK: #[[B:dot_op1]] = #tkw.dot_operand<opIdx = 1, parent = #[[C]]>
// CHECK: #[[ROW:slice]] = #tkw.slice<dim = 1, parent = #[[C]]>
// CHECK: tk.func @attention
// CHECK: %[[Q:.*]] = tk.load {{.*}} : !tk.ptr<tensor<128x64xf16, #[[A]]>>
// CHECK: scf.for
// CHECK: %[[K:.*]] = tk.load {{.*}} : !tk.ptr<tensor<64x64xf16, #[[B]]>>
// CHECK: %[[QK:.*]] = tk.dot %[[Q]], %[[K]], {{.*}} -> tensor<128x64xf32, #[[C]]>
// CHECK: tk.reduce(%[[QK]] : tensor<128x64xf32, #[[C]]>) {axis = 1 : i32} -> tensor<128xf32, #[[ROW]]>
// CHECK: tk.expand_dims {{.*}} : tensor<128xf32, #[[ROW]]> -> tensor<128x1xf32, #[[C]]>
// CHECK: math.exp {{.*}} : tensor<128x64xf32, #[[C]]>
// CHECK: %[[P:.*]] = arith.truncf {{.*}} : tensor<128x64xf32, #[[C]]> to tensor<128x64xf16, #[[C]]>
// CHECK: %[[PA:.*]] = tkw.convert_layout %[[P]] : tensor<128x64xf16, #[[C]]> -> tensor<128x64xf16, #[[A]]>
// CHECK: tk.dot %[[PA]], {{.*}} {tiling = #tk.tiling<horizontal>} : tensor<128x64xf16, #[[A]]> * tensor<64x64xf16, #[[B]]> -> tensor<128x64xf32, #[[C]]>
// CHECK-NOT: tkw.convert_layout
tk.func @attention(%q: !tk.ptr<f16>, %k: !tk.ptr<f16>, %v: !tk.ptr<f16>, %o: !tk.ptr<f32>, %L: i64, %D: i64) {
  %pid = tk.program_id 0 : i32
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %c1 = arith.constant 1 : i64
  %n = arith.constant 1024 : i32
  %om = arith.muli %pid, %c128 : i32
  %pq = tk.make_block_ptr %q, [%L, %D], [%D, %c1], [%om, %c0] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<128x64xf16>>
  %tq = tk.load %pq : !tk.ptr<tensor<128x64xf16>>
  %pk = tk.make_block_ptr %k, [%D, %L], [%c1, %D], [%c0, %c0] {order = array<i32: 0, 1>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x64xf16>>
  %pv = tk.make_block_ptr %v, [%L, %D], [%D, %c1], [%c0, %c0] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x64xf16>>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %r:3 = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %zero, %ik = %pk, %iv = %pv) -> (tensor<128x64xf32>, !tk.ptr<tensor<64x64xf16>>, !tk.ptr<tensor<64x64xf16>>) : i32 {
    %tk = tk.load %ik : !tk.ptr<tensor<64x64xf16>>
    %qk = tk.dot %tq, %tk, %zero : tensor<128x64xf16> * tensor<64x64xf16> -> tensor<128x64xf32>
    %m = tk.reduce(%qk : tensor<128x64xf32>) {axis = 1 : i32} -> tensor<128xf32> {
    ^bb0(%x: f32, %y: f32):
      %mx = arith.maximumf %x, %y : f32
      tk.reduce.return %mx : f32
    }
    %m2 = tk.expand_dims %m {axis = 1 : i32} : tensor<128xf32> -> tensor<128x1xf32>
    %mb = tk.broadcast %m2 : tensor<128x1xf32> -> tensor<128x64xf32>
    %s = arith.subf %qk, %mb : tensor<128x64xf32>
    %e = math.exp %s : tensor<128x64xf32>
    %p = arith.truncf %e : tensor<128x64xf32> to tensor<128x64xf16>
    %tv = tk.load %iv : !tk.ptr<tensor<64x64xf16>>
    %d = tk.dot %p, %tv, %acc {tiling = #tk.tiling<horizontal>} : tensor<128x64xf16> * tensor<64x64xf16> -> tensor<128x64xf32>
    %nk = tk.advance %ik, [%c0, %c64] : !tk.ptr<tensor<64x64xf16>>
    %nv = tk.advance %iv, [%c64, %c0] : !tk.ptr<tensor<64x64xf16>>
    scf.yield %d, %nk, %nv : tensor<128x64xf32>, !tk.ptr<tensor<64x64xf16>>, !tk.ptr<tensor<64x64xf16>>
  }
  %po = tk.make_block_ptr %o, [%L, %D], [%D, %c1], [%om, %c0] {order = array<i32: 1, 0>} : !tk.ptr<f32> -> !tk.ptr<tensor<128x64xf32>>
  tk.store %po, %r#0 : !tk.ptr<tensor<128x64xf32>>
  tk.return
}

// -----

// Softmax has no dot: the reduction is the root and splits rows across
// warps, keeping at least a lane's worth of elements in each warp, so every
// warp reduces whole rows.

// SM80: #[[X:blocked]] = #tkw.blocked<sizePerWarp = [2, 128], warpsPerCTA = [32, 1], order = [1, 0]>
// CDNA3: #[[X:blocked]] = #tkw.blocked<sizePerWarp = [8, 128], warpsPerCTA = [8, 1], order = [1, 0]>
// PVC: #[[X:blocked]] = #tkw.blocked<sizePerWarp = [2, 128], warpsPerCTA = [32, 1], order = [1, 0]>
// CHECK: #[[ROW:slice]] = #tkw.slice<dim = 1, parent = #[[X]]>
// CHECK: tk.func @softmax
// CHECK: tk.load {{.*}} : tensor<64x128x!tk.ptr<f32>, #[[X]]>
// CHECK: tk.reduce({{.*}} : tensor<64x128xf32, #[[X]]>) {axis = 1 : i32} -> tensor<64xf32, #[[ROW]]>
// CHECK: tk.broadcast {{.*}} : tensor<64x1xf32, #[[X]]> -> tensor<64x128xf32, #[[X]]>
// CHECK: math.exp {{.*}} : tensor<64x128xf32, #[[X]]>
// CHECK: tk.store {{.*}} : tensor<64x128x!tk.ptr<f32>, #[[X]]>
// CHECK-NOT: tkw.convert_layout
tk.func @softmax(%in: !tk.ptr<f32>, %out: !tk.ptr<f32>) {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %c = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %r2 = tk.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %c128 = arith.constant dense<128> : tensor<64x1xi32>
  %rows = arith.muli %r2, %c128 : tensor<64x1xi32>
  %rb = tk.broadcast %rows : tensor<64x1xi32> -> tensor<64x128xi32>
  %c2 = tk.expand_dims %c {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %cb = tk.broadcast %c2 : tensor<1x128xi32> -> tensor<64x128xi32>
  %offs = arith.addi %rb, %cb : tensor<64x128xi32>
  %ins = tk.splat %in : !tk.ptr<f32> -> tensor<64x128x!tk.ptr<f32>>
  %inp = tk.addptr %ins, %offs : tensor<64x128x!tk.ptr<f32>>, tensor<64x128xi32>
  %x = tk.load %inp : tensor<64x128x!tk.ptr<f32>>
  %m = tk.reduce(%x : tensor<64x128xf32>) {axis = 1 : i32} -> tensor<64xf32> {
  ^bb0(%a: f32, %b: f32):
    %mx = arith.maximumf %a, %b : f32
    tk.reduce.return %mx : f32
  }
  %m2 = tk.expand_dims %m {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
  %mb = tk.broadcast %m2 : tensor<64x1xf32> -> tensor<64x128xf32>
  %s = arith.subf %x, %mb : tensor<64x128xf32>
  %e = math.exp %s : tensor<64x128xf32>
  %sum = tk.reduce(%e : tensor<64x128xf32>) {axis = 1 : i32} -> tensor<64xf32> {
  ^bb0(%a: f32, %b: f32):
    %ad = arith.addf %a, %b : f32
    tk.reduce.return %ad : f32
  }
  %s2 = tk.expand_dims %sum {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
  %sb = tk.broadcast %s2 : tensor<64x1xf32> -> tensor<64x128xf32>
  %y = arith.divf %e, %sb : tensor<64x128xf32>
  %outs = tk.splat %out : !tk.ptr<f32> -> tensor<64x128x!tk.ptr<f32>>
  %outp = tk.addptr %outs, %offs : tensor<64x128x!tk.ptr<f32>>, tensor<64x128xi32>
  tk.store %outp, %y : tensor<64x128x!tk.ptr<f32>>
  tk.return
}

// -----

// No root at all: every tile gets rows across warps.

// SM80: #[[L:blocked]] = #tkw.blocked<sizePerWarp = [32], warpsPerCTA = [32], order = [0]>
// CDNA3: #[[L:blocked]] = #tkw.blocked<sizePerWarp = [128], warpsPerCTA = [8], order = [0]>
// PVC: #[[L:blocked]] = #tkw.blocked<sizePerWarp = [32], warpsPerCTA = [32], order = [0]>
// CHECK: tk.func @vector_add
// CHECK: tk.make_range {{.*}} : tensor<1024xi32, #[[L]]>
// CHECK: arith.addf {{.*}} : tensor<1024xf32, #[[L]]>
// CHECK: tk.store {{.*}} : tensor<1024x!tk.ptr<f32>, #[[L]]>
// CHECK-NOT: tkw.convert_layout
tk.func @vector_add(%x: !tk.ptr<f32>, %y: !tk.ptr<f32>, %out: !tk.ptr<f32>, %n: i32) {
  %pid = tk.program_id 0 : i32
  %block = arith.constant 1024 : i32
  %start = arith.muli %pid, %block : i32
  %range = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %starts = tk.splat %start : i32 -> tensor<1024xi32>
  %offs = arith.addi %starts, %range : tensor<1024xi32>
  %ns = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %offs, %ns : tensor<1024xi32>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %xp = tk.addptr %xs, %offs : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %xv = tk.load %xp, %mask : tensor<1024x!tk.ptr<f32>>
  %ys = tk.splat %y : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %yp = tk.addptr %ys, %offs : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %yv = tk.load %yp, %mask : tensor<1024x!tk.ptr<f32>>
  %sum = arith.addf %xv, %yv : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %op = tk.addptr %os, %offs : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %op, %sum, %mask : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

// The vertical hint splits the columns first; no block is made smaller than
// the target's intrinsic (n = 8 for mma, 32 for mfma 32x32, 16 for dpas).

// SM80: #[[C:blocked]] = #tkw.blocked<sizePerWarp = [32, 8], warpsPerCTA = [2, 16], order = [1, 0]>
// CDNA3: #[[C:blocked]] = #tkw.blocked<sizePerWarp = [32, 32], warpsPerCTA = [2, 4], order = [1, 0]>
// PVC: #[[C:blocked]] = #tkw.blocked<sizePerWarp = [16, 16], warpsPerCTA = [4, 8], order = [1, 0]>
// CHECK: tk.func @vertical
// CHECK: tk.dot {{.*}} -> tensor<64x128xf32, #[[C]]>
tk.func @vertical(%out: !tk.ptr<f32>) {
  %a = arith.constant dense<1.0> : tensor<64x32xf16>
  %b = arith.constant dense<1.0> : tensor<32x128xf16>
  %c = arith.constant dense<0.0> : tensor<64x128xf32>
  %d = tk.dot %a, %b, %c {tiling = #tk.tiling<vertical>} : tensor<64x32xf16> * tensor<32x128xf16> -> tensor<64x128xf32>
  %o = tk.splat %out : !tk.ptr<f32> -> tensor<64x128x!tk.ptr<f32>>
  tk.store %o, %d : tensor<64x128x!tk.ptr<f32>>
  tk.return
}
