// RUN: tk-opt %s --tk-assign-linear-layouts="target=cuda-sm90a num-warps=4" --tk-dot-operand-layouts --tk-pipeline-loads="num-stages=3" --tk-allocate-shared-memory --tk-insert-barriers | FileCheck %s
//
// An attention loop on sm_90a (4 warps, one warpgroup): both products take
// wgmma (tk-assign-linear-layouts; b of the scores is k transposed). a of
// each is in registers (tk-dot-operand-layouts): q, which the loop does
// not change, converts once before the loop to the register fragments of
// wgmma's a, the scores' own accumulator layout here (head dim = block n =
// 64); the probabilities are in them already, and nothing converts them.
// k and v become rings in the nvmma layouts the descriptors read (k's
// transposed slot in its own dimensions: d contiguous, K-major for the
// scores), and both dots read them in place: no dot has scratch.

// CHECK-LABEL: tk.func @attention_loop
// CHECK: tk.load
// CHECK: %[[Q:.+]] = tkw.convert_layout %{{.+}} -> tensor<64x64xf16, #[[FRAGMENTS:linear[0-9]*]]>
// CHECK: %[[RK:.+]] = tkw.local_alloc {tkw.scratch = array<i64: 0, 24576>} : <3, [64, 64], f16, #tkw.nvmma<swizzle = 128, order = [1, 0]>>
// CHECK: %[[RV:.+]] = tkw.local_alloc {tkw.scratch = array<i64: 24576, 24576>} : <3, [64, 64], f16, #tkw.nvmma<swizzle = 128, order = [1, 0]>>
// CHECK: scf.for
// CHECK: %[[K:.+]] = tkw.local_load %[[RK]][%[[SLOT:[a-z0-9_]+]]]
// CHECK-NEXT: %[[KT:.+]] = tk.trans %[[K]]
// CHECK-NEXT: %[[S:.+]] = tk.dot %[[Q]], %[[KT]], %{{.+}} {tkw.intrinsic = "wgmma.m64nNk16.f32.f16"} : tensor<64x64xf16, #[[FRAGMENTS]]> * tensor<64x64xf16, #{{.+}}> -> tensor<64x64xf32, #[[FRAGMENTS]]>
// CHECK-NOT: tkw.convert_layout
// CHECK: %[[P:.+]] = arith.truncf %{{.+}} : tensor<64x64xf32, #[[FRAGMENTS]]> to tensor<64x64xf16, #[[FRAGMENTS]]>
// CHECK-NEXT: %[[V:.+]] = tkw.local_load %[[RV]][%[[SLOT]]]
// CHECK-NEXT: tk.dot %[[P]], %[[V]], %{{.+}} {tkw.intrinsic = "wgmma.m64nNk16.f32.f16"} : tensor<64x64xf16, #[[FRAGMENTS]]>
// CHECK-NOT: tkw.scratch
// CHECK: scf.yield

tk.func @attention_loop(%q: !tk.ptr<f16> {tk.divisibility = 16 : i32},
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
  %o:3 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %pk = %k0, %pv = %v0) -> (tensor<64x64xf32>, tensor<64x64x!tk.ptr<f16>>, tensor<64x64x!tk.ptr<f16>>) : i32 {
    %kt = tk.load %pk : tensor<64x64x!tk.ptr<f16>>
    %vt = tk.load %pv : tensor<64x64x!tk.ptr<f16>>
    %ktt = tk.trans %kt {order = array<i32: 1, 0>} : tensor<64x64xf16> -> tensor<64x64xf16>
    %s = tk.dot %qt, %ktt, %zero : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %e = math.exp2 %s : tensor<64x64xf32>
    %p = arith.truncf %e : tensor<64x64xf32> to tensor<64x64xf16>
    %d = tk.dot %p, %vt, %acc : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %nk = tk.addptr %pk, %step : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
    %nv = tk.addptr %pv, %step : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
    scf.yield %d, %nk, %nv : tensor<64x64xf32>, tensor<64x64x!tk.ptr<f16>>, tensor<64x64x!tk.ptr<f16>>
  }
  %so = tk.splat %out : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %orows = arith.muli %row, %stride : tensor<64x1xi32>
  %orowb = tk.broadcast %orows : tensor<64x1xi32> -> tensor<64x64xi32>
  %ocolb = tk.broadcast %col : tensor<1x64xi32> -> tensor<64x64xi32>
  %ooffs = arith.addi %orowb, %ocolb : tensor<64x64xi32>
  %po = tk.addptr %so, %ooffs : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  tk.store %po, %o#0 : tensor<64x64x!tk.ptr<f32>>
  tk.return
}
