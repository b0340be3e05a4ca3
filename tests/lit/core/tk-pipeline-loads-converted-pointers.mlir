// RUN: tk-opt %s --tk-assign-linear-layouts="target=cuda-sm90a num-warps=4" --tk-dot-operand-layouts --tk-pipeline-loads="num-stages=2" | FileCheck %s
//
// The loop's k and v pointers start from the offsets the f32 store after
// the loop also uses, so they reach the loop through a conversion from the
// store's layout (the offsets take the store's). A conversion moves values
// between threads, not between coordinates: AxisFacts sees through it, the
// copies are proven contiguous and aligned, and both loads fill rings read
// in place by the products (before, neither did, and both loads stayed in
// registers a trip ahead).

// CHECK-LABEL: tk.func @attention_loop_shared_offsets
// CHECK: tkw.convert_layout {{.+}} : tensor<64x64x!tk.ptr<f16>
// CHECK: %[[RK:.+]] = tkw.local_alloc : <2, [64, 64], f16, #tkw.nvmma<swizzle = 128, order = [1, 0]>>
// CHECK: %[[RV:.+]] = tkw.local_alloc : <2, [64, 64], f16, #tkw.nvmma<swizzle = 128, order = [1, 0]>>
// CHECK: scf.for
// CHECK: tkw.local_load %[[RK]]
// CHECK: tk.dot
// CHECK: tkw.local_load %[[RV]]
// CHECK: tk.dot
// CHECK: scf.yield

tk.func @attention_loop_shared_offsets(%q: !tk.ptr<f16> {tk.divisibility = 16 : i32},
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
  %pzero = arith.constant dense<0.000000e+00> : tensor<64x64xf16>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %o:4 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %pp = %pzero, %pk = %k0, %pv = %v0) -> (tensor<64x64xf32>, tensor<64x64xf16>, tensor<64x64x!tk.ptr<f16>>, tensor<64x64x!tk.ptr<f16>>) : i32 {
    %kt = tk.load %pk : tensor<64x64x!tk.ptr<f16>>
    %vt = tk.load %pv : tensor<64x64x!tk.ptr<f16>>
    %ktt = tk.trans %kt {order = array<i32: 1, 0>} : tensor<64x64xf16> -> tensor<64x64xf16>
    %s = tk.dot %qt, %ktt, %zero : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %e = math.exp2 %s : tensor<64x64xf32>
    %p = arith.truncf %e : tensor<64x64xf32> to tensor<64x64xf16>
    %d = tk.dot %pp, %vt, %acc : tensor<64x64xf16> * tensor<64x64xf16> -> tensor<64x64xf32>
    %nk = tk.addptr %pk, %step : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
    %nv = tk.addptr %pv, %step : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
    scf.yield %d, %p, %nk, %nv : tensor<64x64xf32>, tensor<64x64xf16>, tensor<64x64x!tk.ptr<f16>>, tensor<64x64x!tk.ptr<f16>>
  }
  %so = tk.splat %out : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %po = tk.addptr %so, %offs : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  tk.store %po, %o#0 : tensor<64x64x!tk.ptr<f32>>
  tk.return
}
