// RUN: tk-opt %s --split-input-file --tk-check-bounds | FileCheck %s

// A masked load and an unmasked store: each gets an extent argument for its
// buffer, its mask ANDed with 0 <= offset < extent, and a store of the
// offsets it masked off to its slot of the record (slot 0, then slot 1).

// CHECK-LABEL: tk.func @copy
// CHECK-SAME:    (%[[X:.+]]: !tk.ptr<f32>, %[[Y:.+]]: !tk.ptr<f32>, %[[N:.+]]: i32, %[[XE:.+]]: i64, %[[YE:.+]]: i64, %[[REC:.+]]: !tk.ptr<i64>)
// CHECK-SAME:    tk.arg_names = ["arg0", "arg1", "arg2", "arg0.extent", "arg1.extent", "bounds.record"]
// CHECK:       arith.extsi %{{.+}} : tensor<128xi32> to tensor<128xi64>
// CHECK-NEXT:  %[[OFF:.+]] = arith.addi %{{.+}}, %{{.+}} : tensor<128xi64>
// CHECK:       %[[XEXT:.+]] = tk.splat %[[XE]] : i64 -> tensor<128xi64>
// CHECK:       %[[GE:.+]] = arith.cmpi sge, %[[OFF]]
// CHECK:       %[[LT:.+]] = arith.cmpi slt, %[[OFF]], %[[XEXT]]
// CHECK:       %[[IN:.+]] = arith.andi %[[GE]], %[[LT]]
// CHECK:       %[[OUT:.+]] = arith.xori %[[IN]]
// CHECK:       %[[LOADMASK:.+]] = arith.andi %[[MASK:.+]], %[[IN]]
// CHECK:       %[[HIT:.+]] = arith.andi %[[MASK]], %[[OUT]]
// CHECK:       %[[SLOT0:.+]] = tk.addptr %[[REC]], %{{.+}} : !tk.ptr<i64>, i32
// CHECK:       %[[SLOTS0:.+]] = tk.splat %[[SLOT0]] : !tk.ptr<i64> -> tensor<128x!tk.ptr<i64>>
// CHECK:       tk.store %[[SLOTS0]], %[[OFF]], %[[HIT]] : tensor<128x!tk.ptr<i64>>
// CHECK:       %[[V:.+]] = tk.load %{{.+}}, %[[LOADMASK]] : tensor<128x!tk.ptr<f32>>
// CHECK:       tk.splat %[[YE]] : i64 -> tensor<128xi64>
// CHECK:       %[[C1:.+]] = arith.constant 1 : i32
// CHECK:       tk.addptr %[[REC]], %[[C1]] : !tk.ptr<i64>, i32
// CHECK:       tk.store %{{.+}}, %[[V]], %{{.+}} : tensor<128x!tk.ptr<f32>>
tk.func @copy(%x: !tk.ptr<f32>, %y: !tk.ptr<f32>, %n: i32) {
  %pid = tk.program_id 0 : i32
  %c128 = arith.constant 128 : i32
  %start = arith.muli %pid, %c128 : i32
  %r = tk.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  %s = tk.splat %start : i32 -> tensor<128xi32>
  %offs = arith.addi %s, %r : tensor<128xi32>
  %ns = tk.splat %n : i32 -> tensor<128xi32>
  %mask = arith.cmpi slt, %offs, %ns : tensor<128xi32>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %xp = tk.addptr %xs, %offs : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
  %v = tk.load %xp, %mask : tensor<128x!tk.ptr<f32>>
  %ys = tk.splat %y : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %yp = tk.addptr %ys, %offs : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
  tk.store %yp, %v : tensor<128x!tk.ptr<f32>>
  tk.return
}

// -----

// A pointer walk carried by a loop, by a uniform step: the loop carries
// one i64, the distance walked, and the offsets inside are those the walk
// started from plus it (no tile of offsets crosses the loop).

// CHECK-LABEL: tk.func @walk
// CHECK:       scf.for {{.+}} iter_args(%{{.+}} = %{{.+}}, %[[P:.+]] = %{{.+}}, %[[W:.+]] = %{{.+}}) -> (tensor<64xf32>, tensor<64x!tk.ptr<f32>>, i64)
// CHECK:         %[[WS:.+]] = tk.splat %[[W]] : i64 -> tensor<64xi64>
// CHECK:         %[[O:.+]] = arith.addi %{{.+}}, %[[WS]] : tensor<64xi64>
// CHECK:         arith.cmpi slt, %[[O]]
// CHECK:         tk.load %[[P]], %{{.+}} : tensor<64x!tk.ptr<f32>>
// CHECK:         %[[NW:.+]] = arith.addi %[[W]], %{{.+}} : i64
// CHECK:         scf.yield %{{.+}}, %{{.+}}, %[[NW]]
tk.func @walk(%p: !tk.ptr<f32>, %out: !tk.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tk.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %ps = tk.splat %p : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  %ptrs = tk.addptr %ps, %r : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %c64 = arith.constant 64 : i32
  %step = tk.splat %c64 : i32 -> tensor<64xi32>
  %acc, %last = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero, %q = %ptrs) -> (tensor<64xf32>, tensor<64x!tk.ptr<f32>>) : i32 {
    %x = tk.load %q : tensor<64x!tk.ptr<f32>>
    %sum = arith.addf %a, %x : tensor<64xf32>
    %nq = tk.addptr %q, %step : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
    scf.yield %sum, %nq : tensor<64xf32>, tensor<64x!tk.ptr<f32>>
  }
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  %op = tk.addptr %os, %r : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
  tk.store %op, %acc : tensor<64x!tk.ptr<f32>>
  tk.return
}

// -----

// A pointer tile updated by anything but a uniform step carries its
// offsets whole.

// CHECK-LABEL: tk.func @gather_walk
// CHECK:       scf.for {{.+}} iter_args(%[[P:.+]] = %{{.+}}, %[[O:.+]] = %{{.+}}) -> (tensor<64x!tk.ptr<f32>>, tensor<64xi64>)
// CHECK:         arith.cmpi slt, %[[O]]
// CHECK:         %[[NO:.+]] = arith.addi %[[O]], %{{.+}} : tensor<64xi64>
// CHECK:         scf.yield %{{.+}}, %[[NO]]
tk.func @gather_walk(%p: !tk.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tk.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %ps = tk.splat %p : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  %ptrs = tk.addptr %ps, %r : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%q = %ptrs) -> (tensor<64x!tk.ptr<f32>>) : i32 {
    %x = tk.load %q : tensor<64x!tk.ptr<f32>>
    %nq = tk.addptr %q, %r : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
    scf.yield %nq : tensor<64x!tk.ptr<f32>>
  }
  tk.return
}

// -----

// A block-pointer load becomes the gather of the same elements: the
// boundary check on dimension 0 and the buffer's extent in its mask, the
// padding as `other`.

// CHECK-LABEL: tk.func @block
// CHECK-NOT:   tk.load {{.+}} : !tk.ptr<tensor
// CHECK:       %[[PTRS:.+]] = tk.addptr %{{.+}}, %{{.+}} : tensor<16x8x!tk.ptr<f32>>, tensor<16x8xi64>
// CHECK:       tk.load %[[PTRS]], %{{.+}}, %{{.+}} : tensor<16x8x!tk.ptr<f32>>
tk.func @block(%p: !tk.ptr<f32>, %out: !tk.ptr<f32>, %m: i64, %k: i64) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i64
  %bp = tk.make_block_ptr %p, [%m, %k], [%k, %c1], [%c0, %c0] {order = array<i32: 1, 0>} : !tk.ptr<f32> -> !tk.ptr<tensor<16x8xf32>>
  %v = tk.load %bp {boundary_check = array<i32: 0>, padding = #tk.padding<zero>} : !tk.ptr<tensor<16x8xf32>>
  %ob = tk.make_block_ptr %out, [%m, %k], [%k, %c1], [%c0, %c0] {order = array<i32: 1, 0>} : !tk.ptr<f32> -> !tk.ptr<tensor<16x8xf32>>
  tk.store %ob, %v : !tk.ptr<tensor<16x8xf32>>
  tk.return
}

