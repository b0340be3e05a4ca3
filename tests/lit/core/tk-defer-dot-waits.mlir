// RUN: tk-opt %s --split-input-file --tk-assign-linear-layouts="target=cuda-sm90a num-warps=4" --tk-dot-operand-layouts --tk-pipeline-loads="num-stages=2" --tk-defer-dot-waits | FileCheck %s
// RUN: tk-opt %s --split-input-file --tk-assign-linear-layouts="target=cuda-sm90a num-warps=4" --tk-dot-operand-layouts --tk-pipeline-loads="num-stages=2" --tk-defer-dot-waits --tk-allocate-shared-memory --tk-insert-barriers | FileCheck %s --check-prefix=BARRIERS
//
// Attention in FlashAttention-3's order on sm_90a: a trip issues its
// scores, then the previous trip's p v (both wgmma, a in registers, k and
// v read in place from rings: no scratch), then the softmax of its scores
// and a rescale of p v. Neither product is waited for where it is issued:
// the softmax waits for the scores and leaves p v running (pending = 1),
// the rescale waits for p v (pending = 0). The p v after the loop reads
// v from its scratch (a load outside a loop is no ring) and waits at once.

//
// tk-insert-barriers: the products read their slots until their waits, so
// the next trip's copies into the slots this trip read need the barrier at
// the top of the trip (after the waits), and the products one after the
// copies they read have landed; none between the two products.

// BARRIERS-LABEL: tk.func @overlapped_attention
// BARRIERS: scf.for
// BARRIERS: gpu.barrier
// BARRIERS-NEXT: tkw.async_copy
// BARRIERS: gpu.barrier
// BARRIERS-NEXT: tk.dot {{.+}}tkw.deferred
// BARRIERS-NOT: gpu.barrier
// BARRIERS: tk.dot {{.+}}tkw.deferred
// BARRIERS-NOT: gpu.barrier
// BARRIERS: scf.yield

// CHECK-LABEL: tk.func @overlapped_attention
// CHECK: scf.for
// CHECK: %[[S:.+]] = tk.dot %{{.+}} {tkw.deferred, tkw.intrinsic = "wgmma.m64nNk16.f32.f16"}
// CHECK-NOT: tkw.dot_wait
// CHECK: %[[PV:.+]] = tk.dot %{{.+}} {tkw.deferred, tkw.intrinsic = "wgmma.m64nNk16.f32.f16"}
// CHECK-NEXT: %[[SW:.+]] = tkw.dot_wait %[[S]] pending = 1
// CHECK-NEXT: math.exp2 %[[SW]]
// CHECK: %[[PVW:.+]] = tkw.dot_wait %[[PV]] pending = 0
// CHECK-NEXT: arith.mulf %[[PVW]]
// CHECK: scf.yield
// CHECK: tk.dot
// CHECK-NOT: tkw.deferred
// CHECK-NOT: tkw.dot_wait
// CHECK: tk.return

tk.func @overlapped_attention(%q: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                              %k: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                              %v: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                              %out: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                              %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %row = tk.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %col = tk.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %stride = arith.constant dense<64> : tensor<64x1xi32>
  %rows = arith.muli %row, %stride : tensor<64x1xi32>
  %rowb = tk.broadcast %rows : tensor<64x1xi32> -> tensor<64x64xi32>
  %colb = tk.broadcast %col : tensor<1x64xi32> -> tensor<64x64xi32>
  %offs = arith.addi %rowb, %colb : tensor<64x64xi32>
  %sq = tk.splat %q : !tk.ptr<f16> -> tensor<64x64x!tk.ptr<f16>>
  %pq = tk.addptr %sq, %offs : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  %qt = tk.load %pq : tensor<64x64x!tk.ptr<f16>>
  %kp = tk.splat %k : !tk.ptr<f16> -> tensor<64x64x!tk.ptr<f16>>
  %k0 = tk.addptr %kp, %offs : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  %vp = tk.splat %v : !tk.ptr<f16> -> tensor<64x64x!tk.ptr<f16>>
  %v0 = tk.addptr %vp, %offs : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  %step = arith.constant dense<4096> : tensor<64x64xi32>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %pzero = arith.constant dense<0.000000e+00> : tensor<64x64xf16>
  %half = arith.constant dense<5.000000e-01> : tensor<64x64xf32>
  %o:4 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %pzero, %pk = %k0, %pv = %v0) -> (tensor<64x64xf32>, tensor<64x64xf16>, tensor<64x64x!tk.ptr<f16>>, tensor<64x64x!tk.ptr<f16>>) : i32 {
    %kt = tk.load %pk : tensor<64x64x!tk.ptr<f16>>
    %ktt = tk.trans %kt {order = array<i32: 1, 0>} : tensor<64x64xf16> -> tensor<64x64xf16>
    %s = tk.dot %qt, %ktt, %zero : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %vt = tk.load %pv : tensor<64x64x!tk.ptr<f16>>
    %d = tk.dot %p, %vt, %acc : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %e = math.exp2 %s : tensor<64x64xf32>
    %pn = arith.truncf %e : tensor<64x64xf32> to tensor<64x64xf16>
    %scaled = arith.mulf %d, %half : tensor<64x64xf32>
    %nk = tk.addptr %pk, %step : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
    %nv = tk.addptr %pv, %step : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
    scf.yield %scaled, %pn, %nk, %nv : tensor<64x64xf32>, tensor<64x64xf16>, tensor<64x64x!tk.ptr<f16>>, tensor<64x64x!tk.ptr<f16>>
  }
  %vp1 = tk.splat %v : !tk.ptr<f16> -> tensor<64x64x!tk.ptr<f16>>
  %v1 = tk.addptr %vp1, %offs : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  %vlast = tk.load %v1 : tensor<64x64x!tk.ptr<f16>>
  %last = tk.dot %o#1, %vlast, %o#0 : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
  %so = tk.splat %out : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %orows = arith.muli %row, %stride : tensor<64x1xi32>
  %orowb = tk.broadcast %orows : tensor<64x1xi32> -> tensor<64x64xi32>
  %ocolb = tk.broadcast %col : tensor<1x64xi32> -> tensor<64x64xi32>
  %ooffs = arith.addi %orowb, %ocolb : tensor<64x64xi32>
  %po = tk.addptr %so, %ooffs : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  tk.store %po, %last : tensor<64x64x!tk.ptr<f32>>
  tk.return
}

// -----

// Two products on one accumulator, each reading its own k block in place
// (a in registers): the second chains on the first's running registers, so only
// the loop's yield waits, for the second (which ends both). A product read
// by the very next op is left as it was: deferring it would gain nothing.

// CHECK-LABEL: tk.func @chained_products
// CHECK: scf.for
// CHECK: %[[D1:.+]] = tk.dot %{{.+}} {tkw.deferred, tkw.intrinsic = "wgmma.m64nNk16.f32.f16"}
// CHECK-NOT: tkw.dot_wait
// CHECK: %[[D2:.+]] = tk.dot %{{.+}}, %{{.+}}, %[[D1]] {tkw.deferred, tkw.intrinsic = "wgmma.m64nNk16.f32.f16"}
// CHECK-NOT: tkw.dot_wait
// CHECK: %[[W:.+]] = tkw.dot_wait %[[D2]] pending = 0
// CHECK-NEXT: scf.yield %[[W]]
// CHECK: %[[S:.+]] = tk.dot %{{.+}} {tkw.intrinsic = "wgmma.m64nNk16.f32.f16"}
// CHECK-NEXT: math.exp2 %[[S]]

tk.func @chained_products(%q: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                          %k: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                          %out: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                          %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %row = tk.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %col = tk.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %stride = arith.constant dense<64> : tensor<64x1xi32>
  %rows = arith.muli %row, %stride : tensor<64x1xi32>
  %rowb = tk.broadcast %rows : tensor<64x1xi32> -> tensor<64x64xi32>
  %colb = tk.broadcast %col : tensor<1x64xi32> -> tensor<64x64xi32>
  %offs = arith.addi %rowb, %colb : tensor<64x64xi32>
  %sq = tk.splat %q : !tk.ptr<f16> -> tensor<64x64x!tk.ptr<f16>>
  %pq = tk.addptr %sq, %offs : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  %qt = tk.load %pq : tensor<64x64x!tk.ptr<f16>>
  %sixteen = arith.constant dense<16> : tensor<64x64xi32>
  %pq2 = tk.addptr %pq, %sixteen : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  %qt2 = tk.load %pq2 : tensor<64x64x!tk.ptr<f16>>
  %kp = tk.splat %k : !tk.ptr<f16> -> tensor<64x64x!tk.ptr<f16>>
  %k0 = tk.addptr %kp, %offs : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  %step = arith.constant dense<4096> : tensor<64x64xi32>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %koffs = arith.addi %offs, %step : tensor<64x64xi32>
  %k1 = tk.addptr %kp, %koffs : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  %o:3 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %pk = %k0, %pk1 = %k1) -> (tensor<64x64xf32>, tensor<64x64x!tk.ptr<f16>>, tensor<64x64x!tk.ptr<f16>>) : i32 {
    %kt = tk.load %pk : tensor<64x64x!tk.ptr<f16>>
    %ktt = tk.trans %kt {order = array<i32: 1, 0>} : tensor<64x64xf16> -> tensor<64x64xf16>
    %d1 = tk.dot %qt, %ktt, %acc : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %kt1 = tk.load %pk1 : tensor<64x64x!tk.ptr<f16>>
    %ktt1 = tk.trans %kt1 {order = array<i32: 1, 0>} : tensor<64x64xf16> -> tensor<64x64xf16>
    %d2 = tk.dot %qt2, %ktt1, %d1 : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %nk = tk.addptr %pk, %step : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
    %nk1 = tk.addptr %pk1, %step : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
    scf.yield %d2, %nk, %nk1 : tensor<64x64xf32>, tensor<64x64x!tk.ptr<f16>>, tensor<64x64x!tk.ptr<f16>>
  }
  %s = tk.dot %qt, %qt2, %o#0 : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
  %e = math.exp2 %s : tensor<64x64xf32>
  %so = tk.splat %out : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %orows = arith.muli %row, %stride : tensor<64x1xi32>
  %orowb = tk.broadcast %orows : tensor<64x1xi32> -> tensor<64x64xi32>
  %ocolb = tk.broadcast %col : tensor<1x64xi32> -> tensor<64x64xi32>
  %ooffs = arith.addi %orowb, %ocolb : tensor<64x64xi32>
  %po = tk.addptr %so, %ooffs : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  tk.store %po, %e : tensor<64x64x!tk.ptr<f32>>
  tk.return
}
