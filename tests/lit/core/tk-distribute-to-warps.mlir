// RUN: tk-opt %s --split-input-file --tk-assign-layouts="target=cuda-sm80 num-warps=32" --tk-distribute-to-warps | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: tk-opt %s --split-input-file --tk-assign-layouts="target=amd-cdna3 num-warps=8" --tk-distribute-to-warps | FileCheck %s --check-prefixes=CHECK,CDNA3
// RUN: tk-opt %s --split-input-file --tk-assign-layouts="target=intel-pvc num-warps=32" --tk-distribute-to-warps | FileCheck %s --check-prefixes=CHECK,PVC

// tk-distribute-to-warps after the layouts of tk-assign-layouts, on warps
// of 32 (sm80), 64 (CDNA3) and 16 lanes (PVC). Warp ids run along the last
// dimension of the warp grid first (order = [1, 0]).

// The seed GEMM: each warp computes its 32x64 block of C (64x128 with the 8
// warps of CDNA3) from the 32x32 rows of A that its grid row shares and the
// 32x64 columns of B that its grid column shares; the block pointers start
// at the warp's offsets, functions of the program id and the warp id.

// CHECK: tk.func @seed_gemm
// CHECK-SAME: tkw.level = "warp"
// CHECK: %[[W:.*]] = tkw.warp_id : i32
// SM80: %[[ROW:.*]] = arith.divui %[[W]], %c4_i32 : i32
// SM80: %[[ROWOFF:.*]] = arith.muli %[[ROW]], %c32_i32 : i32
// SM80: %[[COL:.*]] = arith.remui %[[W]], %c4_i32 : i32
// SM80: %[[COLOFF:.*]] = arith.muli %[[COL]], %c64_i32 : i32
// CDNA3: %[[ROW:.*]] = arith.divui %[[W]], %c2_i32 : i32
// CDNA3: %[[ROWOFF:.*]] = arith.muli %[[ROW]], %c64_i32 : i32
// CDNA3: %[[COL:.*]] = arith.remui %[[W]], %c2_i32 : i32
// CDNA3: %[[COLOFF:.*]] = arith.muli %[[COL]], %c128_i32 : i32
// PVC: %[[ROW:.*]] = arith.divui %[[W]], %c4_i32 : i32
// PVC: %[[ROWOFF:.*]] = arith.muli %[[ROW]], %c32_i32 : i32
// PVC: %[[COL:.*]] = arith.remui %[[W]], %c4_i32 : i32
// PVC: %[[COLOFF:.*]] = arith.muli %[[COL]], %c64_i32 : i32
// CHECK: %[[PM:.*]] = arith.muli %{{.*}}, %c256_i32
// CHECK: %[[PN:.*]] = arith.muli %{{.*}}, %c256_i32
// CHECK: %[[AROW:.*]] = arith.addi %[[PM]], %[[ROWOFF]] : i32
// SM80: tk.make_block_ptr %arg0, {{.*}}, [%[[AROW]], %c0_i32] {{.*}} -> !tk.ptr<tensor<32x32xf16, #dot_op>>
// CDNA3: tk.make_block_ptr %arg0, {{.*}}, [%[[AROW]], %c0_i32] {{.*}} -> !tk.ptr<tensor<64x32xf16, #dot_op>>
// PVC: tk.make_block_ptr %arg0, {{.*}}, [%[[AROW]], %c0_i32] {{.*}} -> !tk.ptr<tensor<32x32xf16, #dot_op>>
// CHECK: %[[BCOL:.*]] = arith.addi %[[PN]], %[[COLOFF]] : i32
// SM80: tk.make_block_ptr %arg1, {{.*}}, [%c0_i32, %[[BCOL]]] {{.*}} -> !tk.ptr<tensor<32x64xf16, #dot_op1>>
// CDNA3: tk.make_block_ptr %arg1, {{.*}}, [%c0_i32, %[[BCOL]]] {{.*}} -> !tk.ptr<tensor<32x128xf16, #dot_op1>>
// PVC: tk.make_block_ptr %arg1, {{.*}}, [%c0_i32, %[[BCOL]]] {{.*}} -> !tk.ptr<tensor<32x64xf16, #dot_op1>>
// SM80: arith.constant dense<0.000000e+00> : tensor<32x64xf32, #blocked>
// CDNA3: arith.constant dense<0.000000e+00> : tensor<64x128xf32, #blocked>
// CHECK: scf.for
// SM80: tk.dot {{.*}} : tensor<32x32xf16, #dot_op> * tensor<32x64xf16, #dot_op1> -> tensor<32x64xf32, #blocked>
// CDNA3: tk.dot {{.*}} : tensor<64x32xf16, #dot_op> * tensor<32x128xf16, #dot_op1> -> tensor<64x128xf32, #blocked>
// PVC: tk.dot {{.*}} : tensor<32x32xf16, #dot_op> * tensor<32x64xf16, #dot_op1> -> tensor<32x64xf32, #blocked>
// CHECK: tk.advance %{{.*}}, [%c0_i32, %c32_i32{{.*}}]
// CHECK: %[[CROW:.*]] = arith.addi %[[PM]], %[[ROWOFF]] : i32
// CHECK: %[[CCOL:.*]] = arith.addi %[[PN]], %[[COLOFF]] : i32
// CHECK: %[[PC:.*]] = tk.make_block_ptr %arg2, {{.*}}, [%[[CROW]], %[[CCOL]]]
// SM80: tk.store %[[PC]], {{.*}} : !tk.ptr<tensor<32x64xf32, #blocked>>
// CDNA3: tk.store %[[PC]], {{.*}} : !tk.ptr<tensor<64x128xf32, #blocked>>
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

// A GEMM on pointer tiles (the Triton tutorial's form): each range becomes
// the warp's part of it, a smaller range plus the warp's offset, and the
// pointer arithmetic built on it follows.

// CHECK: tk.func @matmul_ptrs
// CHECK: %[[W:.*]] = tkw.warp_id : i32
// CHECK-NOT: tkw.convert_layout
// SM80: %[[R:.*]] = tk.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #slice>
// CDNA3: %[[R:.*]] = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #slice>
// PVC: %[[R:.*]] = tk.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #slice>
// CHECK: %[[OFF:.*]] = tk.splat %{{.*}} : i32 -> tensor<{{16|32}}xi32, #slice>
// CHECK: arith.addi %[[R]], %[[OFF]]
// SM80: tk.load {{.*}} : tensor<16x32x!tk.ptr<f16>, #dot_op>
// SM80: tk.load {{.*}} : tensor<32x32x!tk.ptr<f16>, #dot_op1>
// SM80: tk.dot {{.*}} : tensor<16x32xf16, #dot_op> * tensor<32x32xf16, #dot_op1> -> tensor<16x32xf32, #blocked>
// CDNA3: tk.dot {{.*}} : tensor<32x32xf16, #dot_op> * tensor<32x64xf16, #dot_op1> -> tensor<32x64xf32, #blocked>
// PVC: tk.dot {{.*}} : tensor<16x32xf16, #dot_op> * tensor<32x32xf16, #dot_op1> -> tensor<16x32xf32, #blocked>
// SM80: tk.store {{.*}} : tensor<16x32x!tk.ptr<f32>, #blocked>
// CDNA3: tk.store {{.*}} : tensor<32x64x!tk.ptr<f32>, #blocked>
tk.func @matmul_ptrs(%a: !tk.ptr<f16>, %b: !tk.ptr<f16>, %c: !tk.ptr<f32>, %M: i32, %N: i32, %sam: i32, %sbk: i32, %scm: i32) {
  %pid = tk.program_id 0 : i32
  %c128 = arith.constant 128 : i32
  %om = arith.muli %pid, %c128 : i32
  %rm0 = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %oms = tk.splat %om : i32 -> tensor<128xi32>
  %rm = arith.addi %oms, %rm0 : tensor<128xi32>
  %rn = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %rk = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  // a_ptrs = a + rm[:, None] * sam + rk[None, :]
  %am = tk.expand_dims %rm {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %sams = tk.splat %sam : i32 -> tensor<128x1xi32>
  %amo = arith.muli %am, %sams : tensor<128x1xi32>
  %amb = tk.broadcast %amo : tensor<128x1xi32> -> tensor<128x32xi32>
  %ak = tk.expand_dims %rk {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %akb = tk.broadcast %ak : tensor<1x32xi32> -> tensor<128x32xi32>
  %aoff = arith.addi %amb, %akb : tensor<128x32xi32>
  %as = tk.splat %a : !tk.ptr<f16> -> tensor<128x32x!tk.ptr<f16>>
  %ap = tk.addptr %as, %aoff : tensor<128x32x!tk.ptr<f16>>, tensor<128x32xi32>
  // b_ptrs = b + rk[:, None] * sbk + rn[None, :]
  %bk = tk.expand_dims %rk {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %sbks = tk.splat %sbk : i32 -> tensor<32x1xi32>
  %bko = arith.muli %bk, %sbks : tensor<32x1xi32>
  %bkb = tk.broadcast %bko : tensor<32x1xi32> -> tensor<32x128xi32>
  %bn = tk.expand_dims %rn {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %bnb = tk.broadcast %bn : tensor<1x128xi32> -> tensor<32x128xi32>
  %boff = arith.addi %bkb, %bnb : tensor<32x128xi32>
  %bs = tk.splat %b : !tk.ptr<f16> -> tensor<32x128x!tk.ptr<f16>>
  %bp = tk.addptr %bs, %boff : tensor<32x128x!tk.ptr<f16>>, tensor<32x128xi32>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %c1024 = arith.constant 1024 : i32
  %bstep = arith.muli %sbk, %c32 : i32
  %r:3 = scf.for %k = %c0 to %c1024 step %c32 iter_args(%acc = %zero, %pa = %ap, %pb = %bp) -> (tensor<128x128xf32>, tensor<128x32x!tk.ptr<f16>>, tensor<32x128x!tk.ptr<f16>>) : i32 {
    %ta = tk.load %pa : tensor<128x32x!tk.ptr<f16>>
    %tb = tk.load %pb : tensor<32x128x!tk.ptr<f16>>
    %d = tk.dot %ta, %tb, %acc : tensor<128x32xf16> * tensor<32x128xf16> -> tensor<128x128xf32>
    %sa = tk.splat %c32 : i32 -> tensor<128x32xi32>
    %na = tk.addptr %pa, %sa : tensor<128x32x!tk.ptr<f16>>, tensor<128x32xi32>
    %sb = tk.splat %bstep : i32 -> tensor<32x128xi32>
    %nb = tk.addptr %pb, %sb : tensor<32x128x!tk.ptr<f16>>, tensor<32x128xi32>
    scf.yield %d, %na, %nb : tensor<128x128xf32>, tensor<128x32x!tk.ptr<f16>>, tensor<32x128x!tk.ptr<f16>>
  }
  // c_ptrs = c + rm[:, None] * scm + rn[None, :], mask = rm[:, None] < M & rn[None, :] < N
  %cm = tk.expand_dims %rm {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %scms = tk.splat %scm : i32 -> tensor<128x1xi32>
  %cmo = arith.muli %cm, %scms : tensor<128x1xi32>
  %cmb = tk.broadcast %cmo : tensor<128x1xi32> -> tensor<128x128xi32>
  %cn = tk.expand_dims %rn {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %cnb = tk.broadcast %cn : tensor<1x128xi32> -> tensor<128x128xi32>
  %coff = arith.addi %cmb, %cnb : tensor<128x128xi32>
  %cs = tk.splat %c : !tk.ptr<f32> -> tensor<128x128x!tk.ptr<f32>>
  %cp = tk.addptr %cs, %coff : tensor<128x128x!tk.ptr<f32>>, tensor<128x128xi32>
  %Ms = tk.splat %M : i32 -> tensor<128x1xi32>
  %mm = arith.cmpi slt, %cm, %Ms : tensor<128x1xi32>
  %mmb = tk.broadcast %mm : tensor<128x1xi1> -> tensor<128x128xi1>
  %Ns = tk.splat %N : i32 -> tensor<1x128xi32>
  %nm = arith.cmpi slt, %cn, %Ns : tensor<1x128xi32>
  %nmb = tk.broadcast %nm : tensor<1x128xi1> -> tensor<128x128xi1>
  %mask = arith.andi %mmb, %nmb : tensor<128x128xi1>
  tk.store %cp, %r#0, %mask : tensor<128x128x!tk.ptr<f32>>
  tk.return
}

// -----

// Softmax: warps own whole rows, so both reductions stay inside a warp and
// each warp reduces its 2 (8 with CDNA3's 8 warps) rows.

// CHECK: tk.func @softmax
// SM80: arith.constant dense<128> : tensor<2x1xi32, #blocked>
// SM80: tk.reduce({{.*}} : tensor<2x128xf32, #blocked>) {axis = 1 : i32} -> tensor<2xf32, #slice>
// CDNA3: tk.reduce({{.*}} : tensor<8x128xf32, #blocked>) {axis = 1 : i32} -> tensor<8xf32, #slice>
// PVC: tk.reduce({{.*}} : tensor<2x128xf32, #blocked>) {axis = 1 : i32} -> tensor<2xf32, #slice>
// SM80: tk.store {{.*}} : tensor<2x128x!tk.ptr<f32>, #blocked>
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

// Vector add: the range splits over the warps; the offset of warp w is
// w * 32 (w * 128 with 8 warps).

// CHECK: tk.func @vector_add
// CHECK: %[[W:.*]] = tkw.warp_id : i32
// SM80: %[[OFF:.*]] = arith.muli %[[W]], %c32_i32 : i32
// CDNA3: %[[OFF:.*]] = arith.muli %[[W]], %c128_i32 : i32
// PVC: %[[OFF:.*]] = arith.muli %[[W]], %c32_i32 : i32
// SM80: %[[R:.*]] = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #blocked>
// CDNA3: %[[R:.*]] = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #blocked>
// PVC: %[[R:.*]] = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #blocked>
// CHECK: %[[S:.*]] = tk.splat %[[OFF]]
// CHECK: arith.addi %[[R]], %[[S]]
// SM80: tk.store {{.*}} : tensor<32x!tk.ptr<f32>, #blocked>
// CDNA3: tk.store {{.*}} : tensor<128x!tk.ptr<f32>, #blocked>
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
