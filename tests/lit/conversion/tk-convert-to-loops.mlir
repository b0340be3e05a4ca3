// RUN: tk-opt %s --tk-convert-to-loops --split-input-file | FileCheck %s
// RUN: tk-opt %s --tk-convert-to-loops=fuse-loads-into-stores=false \
// RUN:   --split-input-file | FileCheck %s --check-prefix=NOFUSE

// A masked vector add: the loads fuse into the store, which is versioned on
// its mask. When every lane is on (for `start + range < n`, when the last
// lane is, checked in i64 so that nothing wraps) one loop runs without
// branches; otherwise the loads and the store sit under scf.if on the mask
// (masked-off lanes never touch memory).
// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[X:.*]]: !llvm.ptr, %[[Y:.*]]: !llvm.ptr, %[[O:.*]]: !llvm.ptr, %[[N:.*]]: i32, %[[PX:.*]]: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32)
// CHECK-SAME: attributes {tk_kernel}
// CHECK-NOT: memref.alloca
// CHECK: %[[START:.*]] = arith.muli %[[PX]]
// CHECK: %[[START64:.*]] = arith.extsi %[[START]] : i32 to i64
// CHECK: %[[LAST:.*]] = arith.addi %[[START64]], %{{.*}} : i64
// CHECK: %[[N64:.*]] = arith.extsi %[[N]] : i32 to i64
// CHECK: %[[ALL:.*]] = arith.cmpi slt, %[[LAST]], %[[N64]] : i64
// CHECK: scf.if %[[ALL]] {
// CHECK: scf.for
// CHECK-NOT: scf.if
// CHECK: llvm.getelementptr %[[X]]
// CHECK-NEXT: llvm.load
// CHECK: llvm.load
// CHECK: arith.addf
// CHECK-NEXT: llvm.store
// CHECK: } else {
// CHECK: scf.for
// CHECK: llvm.getelementptr %[[X]]
// CHECK: scf.if
// CHECK-NEXT: llvm.load
// CHECK: scf.if
// CHECK-NEXT: llvm.load
// CHECK: arith.addf
// CHECK: scf.if
// CHECK-NEXT: llvm.store
// CHECK-NOT: scf.for
// CHECK: return
// Without fusion each load fills a buffer first.
// NOFUSE-LABEL: func.func @add
// NOFUSE-COUNT-2: memref.alloca
// NOFUSE-COUNT-3: scf.for
tk.func @add(%x: !tk.ptr<f32>, %y: !tk.ptr<f32>, %o: !tk.ptr<f32>, %n: i32) {
  %pid = tk.program_id 0 : i32
  %c = arith.constant 64 : i32
  %s = arith.muli %pid, %c : i32
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %ss = tk.splat %s : i32 -> tensor<64xi32>
  %offs = arith.addi %ss, %r : tensor<64xi32>
  %ns = tk.splat %n : i32 -> tensor<64xi32>
  %m = arith.cmpi slt, %offs, %ns : tensor<64xi32>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  %xp = tk.addptr %xs, %offs : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
  %xv = tk.load %xp, %m : tensor<64x!tk.ptr<f32>>
  %ys = tk.splat %y : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  %yp = tk.addptr %ys, %offs : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
  %yv = tk.load %yp, %m : tensor<64x!tk.ptr<f32>>
  %sum = arith.addf %xv, %yv : tensor<64xf32>
  %os = tk.splat %o : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  %op = tk.addptr %os, %offs : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
  tk.store %op, %sum, %m : tensor<64x!tk.ptr<f32>>
  tk.return
}

// -----

// Any other cheap mask is and-reduced to decide the version; here the lanes
// are strided, so the last lane being on says nothing about the others.
// CHECK-LABEL: func.func @strided
// CHECK: %[[ALL:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (i1)
// CHECK: %[[LANE:.*]] = arith.cmpi ugt
// CHECK: %[[AND:.*]] = arith.andi %[[ACC]], %[[LANE]]
// CHECK: scf.yield %[[AND]]
// CHECK: scf.if %[[ALL]] {
// CHECK: scf.for
// CHECK-NOT: scf.if
// CHECK: llvm.store
// CHECK: } else {
// CHECK: scf.for
// CHECK: scf.if
// CHECK-NEXT: llvm.store
tk.func @strided(%o: !tk.ptr<f32>, %n: i32, %v: f32) {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %c2 = arith.constant dense<2> : tensor<64xi32>
  %offs = arith.muli %r, %c2 : tensor<64xi32>
  %ns = tk.splat %n : i32 -> tensor<64xi32>
  %m = arith.cmpi ugt, %ns, %offs : tensor<64xi32>
  %os = tk.splat %o : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  %op = tk.addptr %os, %offs : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
  %vs = tk.splat %v : f32 -> tensor<64xf32>
  tk.store %op, %vs, %m : tensor<64x!tk.ptr<f32>>
  tk.return
}

// -----

// A tile used twice gets a buffer; a reduction along the innermost axis
// keeps 16 partial accumulators and combines them as a tree.
// CHECK-LABEL: func.func @rowmax
// CHECK-DAG: memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// CHECK-DAG: memref.alloca() {alignment = 64 : i64} : memref<128xf32>
// CHECK: arith.maximumf
// CHECK: llvm.store
tk.func @rowmax(%x: !tk.ptr<f32>, %o: !tk.ptr<f32>) {
  %r = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %xp = tk.addptr %xs, %r : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
  %v = tk.load %xp : tensor<128x!tk.ptr<f32>>
  %mx = tk.reduce(%v : tensor<128xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.maximumf %a, %b : f32
    tk.reduce.return %s : f32
  }
  %ms = tk.splat %mx : f32 -> tensor<128xf32>
  %d = arith.subf %v, %ms : tensor<128xf32>
  %os = tk.splat %o : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %op = tk.addptr %os, %r : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
  tk.store %op, %d : tensor<128x!tk.ptr<f32>>
  tk.return
}

// -----

// tk.dot: f16 inputs widened to f32, i-k-j loops with an fma.
// CHECK-LABEL: func.func @dot
// CHECK: memref<16x16xf32>
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: math.fma
tk.func @dot(%a: !tk.ptr<f16>, %o: !tk.ptr<f32>) {
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %as = tk.splat %a : !tk.ptr<f16> -> tensor<256x!tk.ptr<f16>>
  %ap = tk.addptr %as, %r : tensor<256x!tk.ptr<f16>>, tensor<256xi32>
  %v = tk.load %ap : tensor<256x!tk.ptr<f16>>
  %m = tk.reshape %v : tensor<256xf16> -> tensor<16x16xf16>
  %z = arith.constant dense<0.0> : tensor<16x16xf32>
  %d = tk.dot %m, %m, %z : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
  %f = tk.reshape %d : tensor<16x16xf32> -> tensor<256xf32>
  %os = tk.splat %o : !tk.ptr<f32> -> tensor<256x!tk.ptr<f32>>
  %op = tk.addptr %os, %r : tensor<256x!tk.ptr<f32>>, tensor<256xi32>
  tk.store %op, %f : tensor<256x!tk.ptr<f32>>
  tk.return
}
