// RUN: tk-opt %s --tk-assign-linear-layouts="target=cuda-sm80 num-warps=4" --tk-dot-operand-layouts --tk-pipeline-loads="num-stages=3" | FileCheck %s
// RUN: tk-opt %s --tk-assign-linear-layouts="target=cuda-sm80 num-warps=4" --tk-dot-operand-layouts --tk-pipeline-loads="num-stages=3" --tk-allocate-shared-memory --tk-insert-barriers | FileCheck %s --check-prefix=BARRIERS
// RUN: tk-opt %s --tk-assign-linear-layouts="target=cuda-sm80:shared-memory=20000 num-warps=4" --tk-dot-operand-layouts --tk-pipeline-loads="num-stages=5" | FileCheck %s --check-prefix=FIT
// RUN: tk-opt %s --tk-assign-linear-layouts="target=cuda-sm80:shared-memory=12000 num-warps=4" --tk-dot-operand-layouts --tk-pipeline-loads="num-stages=3" | FileCheck %s --check-prefix=NOFIT
// RUN: tk-opt %s --tk-assign-linear-layouts="target=cuda-sm90a num-warps=4" --tk-dot-operand-layouts --tk-pipeline-loads="num-stages=3" --tk-allocate-shared-memory | FileCheck %s --check-prefix=WGMMA
// RUN: sed -e 's/scf.yield %%na, %%nb, %%sum/scf.yield %%na, %%nb, %%d/' -e '/%%sum = arith.addf/d' %s | tk-opt --tk-assign-linear-layouts="target=cuda-sm90a num-warps=4" --tk-dot-operand-layouts --tk-pipeline-loads="num-stages=3" --tk-allocate-shared-memory --tk-insert-barriers | FileCheck %s --check-prefix=RUNNING
// RUN: sed -e 's/scf.yield %%na, %%nb, %%sum/scf.yield %%na, %%nb, %%d/' -e '/%%sum = arith.addf/d' %s | tk-opt --tk-assign-linear-layouts="target=cuda-sm90a num-warps=4" --tk-dot-operand-layouts --tk-pipeline-loads="num-stages=3" --tk-allocate-shared-memory | sed -e 's/<4, \[/<3, [/g' -e 's/arith.constant 4 : i32/arith.constant 3 : i32/g' | not tk-opt --tk-insert-barriers 2>&1 | FileCheck %s --check-prefix=RACE
// RUN: sed -e 's/%k: i32 {tk.divisibility = 16 : i32}/%k: i32/' %s | tk-opt --tk-assign-linear-layouts="target=cuda-sm80 num-warps=4" --tk-dot-operand-layouts --tk-pipeline-loads="num-stages=3" | FileCheck %s --check-prefix=ANYK
//
// tk-pipeline-loads on a target with asynchronous copies (cp.async): the
// K loop of tk-pipeline-loads.mlir, with K a multiple of 16 so that the
// mask of a's last trip is constant over 16-byte runs. Both operand loads
// become rings of num_stages = 3 slots in the operands' swizzles: trips 0
// and 1 are copied before the loop (masked by 0 < n, 1 < n); each trip
// waits for its own group, copies the trip two ahead into the slot the
// previous trip read ((read + 2) % 3: the loop carries that trip's
// pointers and the slot it reads), and the dot, one per k step of mma's 16,
// reads its blocks of this trip's slots just before its products. The
// bias load feeds no dot and stays.

// On sm_90a the dot's four warps are one warpgroup: it takes wgmma
// (tk-assign-linear-layouts), whose operands are read through matrix
// descriptors, so the rings are laid out as those read them (#tkw.nvmma:
// a's 32 f16 of k fill 64-byte atoms, b's 64 columns 128-byte ones), at
// 1024-byte aligned offsets, and the dot reads whole slots in place:
// one dot, not one per k step.
// WGMMA-LABEL: tk.func @matmul_k_loop
// WGMMA: %[[RA:.+]] = tkw.local_alloc {tkw.scratch = array<i64: 0, 12288>} : <3, [64, 32], f16, #tkw.nvmma<swizzle = 64, order = [1, 0]>>
// WGMMA: %[[RB:.+]] = tkw.local_alloc {tkw.scratch = array<i64: 12288, 12288>} : <3, [32, 64], f16, #tkw.nvmma<swizzle = 128, order = [1, 0]>>
// WGMMA: scf.for
// WGMMA: %[[A:.+]] = tkw.local_load %[[RA]][%[[R:[a-z0-9_]+]]]
// WGMMA-NEXT: %[[B:.+]] = tkw.local_load %[[RB]][%[[R]]]
// WGMMA-NEXT: tk.dot %[[A]], %[[B]], %{{.+}} {tkw.intrinsic = "wgmma.m64nNk16.f32.f16"}
// WGMMA-NOT: tk.dot

// Where the loop yields the product itself (no bias), the warpgroup dot's
// products run on into the next trip (Triton's asynchronous wgmma): the
// dot is marked tkw.pending = 1 (each trip waits for the previous trip's
// products only), the rings get a fourth slot so that a trip fills the
// slot read two trips before (three stages still in flight: the fill is
// (read + 2) % 4), and the loop goes under `0 < n`, where the product's
// last group is waited for (tkw.dot_wait) before anything else runs.
// tk-insert-barriers keeps one barrier a trip: the running products of the
// previous trip read slot read - 1, not the slot this trip fills.
// RUNNING: tkw.local_alloc {tkw.scratch = array<i64: 0, 16384>} : <4, [64, 32], f16, #tkw.nvmma
// RUNNING: tkw.local_alloc {tkw.scratch = array<i64: 16384, 16384>} : <4, [32, 64], f16, #tkw.nvmma
// RUNNING: tkw.async_commit
// RUNNING: tkw.async_commit
// RUNNING: %[[RUNS:.+]] = arith.cmpi slt, %{{.+}}, %[[N:[^ ]+]] : i32
// RUNNING-NEXT: %[[ALL:.+]]:6 = scf.if %[[RUNS]]
// RUNNING-NEXT: %[[LOOP:.+]]:6 = scf.for
// RUNNING-NEXT: tkw.async_wait pending = 1
// RUNNING: %[[TWO:.+]] = arith.constant 2 : i32
// RUNNING: %[[SUM:.+]] = arith.addi %{{.+}}, %[[TWO]] : i32
// RUNNING: %[[FILL:.+]] = arith.remui %[[SUM]], %c4_i32 : i32
// RUNNING-NOT: gpu.barrier
// RUNNING: gpu.barrier
// RUNNING-NEXT: tkw.async_copy %{{.+}} into %{{.+}}[%[[FILL]]]
// RUNNING-NOT: gpu.barrier
// RUNNING: tk.dot %{{.+}}, %{{.+}}, %{{.+}} {tkw.intrinsic = "wgmma.m64nNk16.f32.f16", tkw.pending = 1 : i64}
// RUNNING-NOT: gpu.barrier
// RUNNING: scf.yield
// RUNNING-NEXT: }
// RUNNING-NEXT: %[[DONE:.+]] = tkw.dot_wait %[[LOOP]]#2 pending = 0
// RUNNING-NEXT: scf.yield %[[LOOP]]#0, %[[LOOP]]#1, %[[DONE]],
// RUNNING-NEXT: } else {
// RUNNING-NEXT: scf.yield
// RUNNING-NEXT: }
// RUNNING-NEXT: tkw.async_wait pending = 0
// RUNNING: tk.store %{{.+}}, %{{.+}}

// With a slot fewer the fill is the slot the previous trip's running
// products may still read, and no barrier can order that.
// RACE: error: 'tkw.async_copy' op tk-insert-barriers: writes workgroup memory that a dot's running products (tkw.pending) may still read

// CHECK-LABEL: tk.func @matmul_k_loop
// CHECK: %[[RA:.+]] = tkw.local_alloc : <3, [64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]>>
// CHECK: %[[RB:.+]] = tkw.local_alloc : <3, [32, 64], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>
// CHECK: %[[RUNS0:.+]] = arith.cmpi slt, %{{.+}}, %[[N:[^ ]+]] : i32
// CHECK: %[[ON0:.+]] = tk.splat %[[RUNS0]] : i1 -> tensor<64x32xi1
// CHECK: %[[MASK0:.+]] = arith.andi %{{.+}}, %[[ON0]]
// CHECK: tkw.async_copy %{{.+}}, %[[MASK0]] into %[[RA]][%[[S0:.+]]] :
// CHECK: tkw.async_copy %{{.+}} into %[[RB]][%[[S0]]] :
// CHECK-NEXT: tkw.async_commit
// CHECK: tkw.async_copy %{{.+}} into %[[RA]][%[[S1:.+]]] :
// CHECK: tkw.async_copy %{{.+}} into %[[RB]][%[[S1]]] :
// CHECK-NEXT: tkw.async_commit
// CHECK-NOT: tkw.async_copy
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %[[N]] step %[[STEP:[^ ]+]] iter_args({{.*}}, %[[AHEAD_B:[^ ]+]] = %{{[^,]+}}, %[[AHEAD_A:[^ ]+]] = %{{[^,]+}}, %[[READ:[^ ]+]] = %{{[^)]+}})
// CHECK-NEXT: tkw.async_wait pending = 1
// CHECK-DAG: %[[TWO:.+]] = arith.constant 2 : i32
// CHECK-DAG: %[[THREE:.+]] = arith.constant 3 : i32
// CHECK: %[[SUM:.+]] = arith.addi %[[READ]], %[[TWO]] : i32
// CHECK-NEXT: %[[FILL:.+]] = arith.remui %[[SUM]], %[[THREE]] : i32
// CHECK: arith.cmpi slt, %{{.+}}, %[[N]] : i32
// CHECK: tkw.async_copy %[[AHEAD_A]], %{{.+}} into %[[RA]][%[[FILL]]]
// CHECK: tkw.async_copy %[[AHEAD_B]], %{{.+}} into %[[RB]][%[[FILL]]]
// CHECK-NEXT: tkw.async_commit
// CHECK: tk.addptr %[[AHEAD_B]],
// CHECK: tk.addptr %[[AHEAD_A]],
// CHECK: tk.load %{{.+}} : tensor<64x64x!tk.ptr<f32>
// CHECK: %[[A0:.+]] = tkw.local_load %[[RA]][%[[READ]]] {offsets = array<i64: 0, 0>} : {{.+}} -> tensor<64x16xf16
// CHECK-NEXT: %[[B0:.+]] = tkw.local_load %[[RB]][%[[READ]]] {offsets = array<i64: 0, 0>} : {{.+}} -> tensor<16x64xf16
// CHECK-NEXT: %[[D0:.+]] = tk.dot %[[A0]], %[[B0]], %{{[^ ]+}} {tkw.intrinsic = "mma.m16n8k16.f32.f16"}
// CHECK-NEXT: %[[A1:.+]] = tkw.local_load %[[RA]][%[[READ]]] {offsets = array<i64: 0, 16>}
// CHECK-NEXT: %[[B1:.+]] = tkw.local_load %[[RB]][%[[READ]]] {offsets = array<i64: 16, 0>}
// CHECK-NEXT: tk.dot %[[A1]], %[[B1]], %[[D0]]
// CHECK-NOT: tk.dot
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: tkw.async_wait pending = 0

// With K of any size the mask of a's last trip may cut a 16-byte run: the
// rings stay, and the copies test each run's masks when they run
// (tk-convert-registers-to-simt).
// ANYK: %[[RA:.+]] = tkw.local_alloc : <3, [64, 32], f16
// ANYK: %[[RB:.+]] = tkw.local_alloc : <3, [32, 64], f16
// ANYK: scf.for
// ANYK: tkw.async_copy %{{.+}}, %{{.+}} into %[[RA]]
// ANYK: tkw.async_copy %{{.+}} into %[[RB]]
// ANYK: tkw.local_load %[[RA]]

// num_stages is an upper bound: with 20000 bytes, two slots of both rings
// (8192 bytes a slot) fit, not five; with 12000 not two, and the loads stay
// on the register form, one trip ahead.
// FIT: tkw.local_alloc : <2, [64, 32]
// FIT: tkw.local_alloc : <2, [32, 64]
// FIT: tkw.async_wait pending = 0
// NOFIT-NOT: tkw.local_alloc
// NOFIT: scf.for
// NOFIT-NOT: tkw.{{(local|async)}}
// NOFIT: tk.dot

// The rings live across the loop. One barrier a trip, after the wait and
// before the copies: it orders them after the previous trip's reads of the
// slot they fill, and this trip's reads after the copies it waited for.
// The reads need none after this trip's copies (another slot: (r + 2) % 3
// differs from r), nor after each other; the prologue's two trips fill
// slots 0 and 1.
// BARRIERS: tkw.local_alloc {tkw.scratch = array<i64: 0, 12288>}
// BARRIERS: tkw.local_alloc {tkw.scratch = array<i64: 12288, 12288>}
// BARRIERS-NOT: gpu.barrier
// BARRIERS: scf.for
// BARRIERS-NEXT: tkw.async_wait pending = 1
// BARRIERS: gpu.barrier
// BARRIERS-NEXT: tkw.async_copy
// BARRIERS-NOT: gpu.barrier
// BARRIERS: scf.yield
// BARRIERS: tkw.async_wait pending = 0
// BARRIERS-NEXT: gpu.barrier
// BARRIERS-NEXT: tkw.convert_layout

tk.func @matmul_k_loop(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %b: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %bias: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %c: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32, %k: i32 {tk.divisibility = 16 : i32}) {
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
  %br = arith.muli %krows, %c64k : tensor<32x1xi32>
  %brb = tk.broadcast %br : tensor<32x1xi32> -> tensor<32x64xi32>
  %bcb = tk.broadcast %cols : tensor<1x64xi32> -> tensor<32x64xi32>
  %boff = arith.addi %brb, %bcb : tensor<32x64xi32>
  %pb0 = tk.splat %b : !tk.ptr<f16> -> tensor<32x64x!tk.ptr<f16>>
  %pb = tk.addptr %pb0, %boff : tensor<32x64x!tk.ptr<f16>>, tensor<32x64xi32>
  %cr = arith.muli %rows, %c64 : tensor<64x1xi32>
  %crb = tk.broadcast %cr : tensor<64x1xi32> -> tensor<64x64xi32>
  %ccb = tk.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %coff = arith.addi %crb, %ccb : tensor<64x64xi32>
  %pbias0 = tk.splat %bias : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %pbias = tk.addptr %pbias0, %coff : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  %stepa = arith.constant dense<32> : tensor<64x32xi32>
  %stepb = arith.constant dense<2048> : tensor<32x64xi32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %zf = arith.constant dense<0.0> : tensor<64x32xf16>
  %zfb = arith.constant dense<0.0> : tensor<32x64xf16>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32s = arith.constant 32 : i32
  %res:3 = scf.for %i = %c0 to %n step %c1 iter_args(%qa = %pa, %qb = %pb, %acc = %zero) -> (tensor<64x32x!tk.ptr<f16>>, tensor<32x64x!tk.ptr<f16>>, tensor<64x64xf32>) : i32 {
    %done = arith.muli %i, %c32s : i32
    %left = arith.subi %k, %done : i32
    %lefta = tk.splat %left : i32 -> tensor<1x32xi32>
    %ina = arith.cmpi slt, %kcols, %lefta : tensor<1x32xi32>
    %maska = tk.broadcast %ina : tensor<1x32xi1> -> tensor<64x32xi1>
    %av = tk.load %qa, %maska, %zf : tensor<64x32x!tk.ptr<f16>>
    %leftb = tk.splat %left : i32 -> tensor<32x1xi32>
    %inb = arith.cmpi slt, %krows, %leftb : tensor<32x1xi32>
    %maskb = tk.broadcast %inb : tensor<32x1xi1> -> tensor<32x64xi1>
    %bv = tk.load %qb, %maskb, %zfb : tensor<32x64x!tk.ptr<f16>>
    %biasv = tk.load %pbias : tensor<64x64x!tk.ptr<f32>>
    %d = tk.dot %av, %bv, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    %sum = arith.addf %d, %biasv : tensor<64x64xf32>
    %na = tk.addptr %qa, %stepa : tensor<64x32x!tk.ptr<f16>>, tensor<64x32xi32>
    %nb = tk.addptr %qb, %stepb : tensor<32x64x!tk.ptr<f16>>, tensor<32x64xi32>
    scf.yield %na, %nb, %sum : tensor<64x32x!tk.ptr<f16>>, tensor<32x64x!tk.ptr<f16>>, tensor<64x64xf32>
  }
  %pc0 = tk.splat %c : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %pc = tk.addptr %pc0, %coff : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  tk.store %pc, %res#2 : tensor<64x64x!tk.ptr<f32>>
  tk.return
}
