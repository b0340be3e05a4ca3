// RUN: tk-opt %s | tk-opt | FileCheck %s
// RUN: tk-opt %s --emit-bytecode | tk-opt | FileCheck %s
// RUN: tk-opt %s --mlir-print-op-generic | tk-opt | FileCheck %s
//
// One kernel per op family of the tile IR (DESIGN.md §2). Each goes through
// the custom syntax, through bytecode and through the generic form, and must
// print back as written.

// CHECK-LABEL: tk.func @grid()
// CHECK-NEXT:    %[[PID:.+]] = tk.program_id 0 : i32
// CHECK-NEXT:    %[[N:.+]] = tk.num_programs 2 : i32
// CHECK-NEXT:    tk.print "pid " %[[PID]], %[[N]] : i32, i32
// CHECK-NEXT:    tk.return
tk.func @grid() {
  %pid = tk.program_id 0 : i32
  %n = tk.num_programs 2 : i32
  tk.print "pid " %pid, %n : i32, i32
  tk.return
}

// CHECK-LABEL: tk.func @shapes(
// CHECK-SAME:      %[[X:.+]]: f32, %[[P:.+]]: !tk.ptr<f16>)
// CHECK:         %[[R:.+]] = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
// CHECK:         tk.make_range {end = 64 : i32, start = -64 : i32} : tensor<128xi32>
// CHECK:         %[[S:.+]] = tk.splat %[[X]] : f32 -> tensor<1x64xf32>
// CHECK:         %[[B:.+]] = tk.broadcast %[[S]] : tensor<1x64xf32> -> tensor<32x64xf32>
// CHECK:         tk.expand_dims %[[R]] {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
// CHECK:         tk.reshape %[[B]] : tensor<32x64xf32> -> tensor<2048xf32>
// CHECK:         tk.trans %[[B]] {order = array<i32: 1, 0>} : tensor<32x64xf32> -> tensor<64x32xf32>
// CHECK:         tk.cat %[[B]], %[[B]] : tensor<32x64xf32> -> tensor<64x64xf32>
// CHECK:         tk.join %[[R]], %[[R]] : tensor<128xi32> -> tensor<128x2xi32>
// CHECK:         tk.splat %[[P]] : !tk.ptr<f16> -> tensor<128x!tk.ptr<f16>>
tk.func @shapes(%x: f32, %p: !tk.ptr<f16>) {
  %r = tk.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  %centred = tk.make_range {start = -64 : i32, end = 64 : i32} : tensor<128xi32>
  %s = tk.splat %x : f32 -> tensor<1x64xf32>
  %b = tk.broadcast %s : tensor<1x64xf32> -> tensor<32x64xf32>
  %e = tk.expand_dims %r {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %rs = tk.reshape %b : tensor<32x64xf32> -> tensor<2048xf32>
  %t = tk.trans %b {order = array<i32: 1, 0>} : tensor<32x64xf32> -> tensor<64x32xf32>
  %c = tk.cat %b, %b : tensor<32x64xf32> -> tensor<64x64xf32>
  %j = tk.join %r, %r : tensor<128xi32> -> tensor<128x2xi32>
  %ps = tk.splat %p : !tk.ptr<f16> -> tensor<128x!tk.ptr<f16>>
  tk.return
}

// CHECK-LABEL: tk.func @memory(
// CHECK-SAME:      %[[P:.+]]: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %[[N:.+]]: i32)
// CHECK-SAME:      attributes {tk.arg_names = ["x", "n"], tk.constexprs = {BLOCK = 128 : i32, EVEN = false, SCALE = 5.000000e-01 : f32}}
// CHECK:         %[[R:.+]] = tk.make_range
// CHECK:         %[[PS:.+]] = tk.splat %[[P]] : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
// CHECK:         %[[PTRS:.+]] = tk.addptr %[[PS]], %[[R]] : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
// CHECK:         %[[SP:.+]] = tk.addptr %[[P]], %[[N]] : !tk.ptr<f32>, i32
// CHECK:         %[[M:.+]] = arith.cmpi slt
// CHECK:         %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<128xf32>
// CHECK:         %[[A:.+]] = tk.load %[[PTRS]] : tensor<128x!tk.ptr<f32>>
// CHECK:         tk.load %[[PTRS]], %[[M]] : tensor<128x!tk.ptr<f32>>
// CHECK:         %[[C:.+]] = tk.load %[[PTRS]], %[[M]], %[[ZERO]] {is_volatile = true} : tensor<128x!tk.ptr<f32>>
// CHECK:         %[[D:.+]] = tk.load %[[SP]] : !tk.ptr<f32>
// CHECK:         tk.store %[[PTRS]], %[[A]] : tensor<128x!tk.ptr<f32>>
// CHECK:         tk.store %[[PTRS]], %[[C]], %[[M]] : tensor<128x!tk.ptr<f32>>
// CHECK:         tk.store %[[SP]], %[[D]] : !tk.ptr<f32>
tk.func @memory(%p: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tk.arg_names = ["x", "n"],
                tk.constexprs = {BLOCK = 128 : i32, EVEN = false, SCALE = 0.5 : f32}} {
  %r = tk.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  %ps = tk.splat %p : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %ptrs = tk.addptr %ps, %r : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
  %sp = tk.addptr %p, %n : !tk.ptr<f32>, i32
  %ns = tk.splat %n : i32 -> tensor<128xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<128xi32>
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %a = tk.load %ptrs : tensor<128x!tk.ptr<f32>>
  %b = tk.load %ptrs, %m : tensor<128x!tk.ptr<f32>>
  %c = tk.load %ptrs, %m, %zero {is_volatile = true} : tensor<128x!tk.ptr<f32>>
  %d = tk.load %sp : !tk.ptr<f32>
  tk.store %ptrs, %a : tensor<128x!tk.ptr<f32>>
  tk.store %ptrs, %c, %m : tensor<128x!tk.ptr<f32>>
  tk.store %sp, %d : !tk.ptr<f32>
  tk.return
}

// CHECK-LABEL: tk.func @block_ptrs(
// CHECK-SAME:      %[[BASE:[^:]+]]: !tk.ptr<f16>, %[[M:[^:]+]]: i64, %[[K:[^:]+]]: i64, %[[SM:[^:]+]]: i64, %[[SK:[^:]+]]: i64)
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : i32
// CHECK-DAG:     %[[C32:.+]] = arith.constant 32 : i32
// CHECK:         %[[BP:.+]] = tk.make_block_ptr %[[BASE]], [%[[M]], %[[K]]], [%[[SM]], %[[SK]]], [%[[C0]], %[[C0]]] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
// CHECK:         %[[NEXT:.+]] = tk.advance %[[BP]], [%[[C0]], %[[C32]]] : !tk.ptr<tensor<64x32xf16>>
// CHECK:         %[[T:.+]] = tk.load %[[BP]] {boundary_check = array<i32: 0, 1>, padding = #tk.padding<zero>} : !tk.ptr<tensor<64x32xf16>>
// CHECK:         %[[U:.+]] = tk.load %[[NEXT]] {boundary_check = array<i32: 1>, padding = #tk.padding<nan>} : !tk.ptr<tensor<64x32xf16>>
// CHECK:         tk.load %[[NEXT]] {boundary_check = array<i32: 0>} : !tk.ptr<tensor<64x32xf16>>
// CHECK:         tk.store %[[NEXT]], %[[T]] {boundary_check = array<i32: 0>} : !tk.ptr<tensor<64x32xf16>>
// CHECK:         tk.store %[[BP]], %[[U]] : !tk.ptr<tensor<64x32xf16>>
tk.func @block_ptrs(%base: !tk.ptr<f16>, %M: i64, %K: i64, %sm: i64, %sk: i64) {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %bp = tk.make_block_ptr %base, [%M, %K], [%sm, %sk], [%c0, %c0] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
  %next = tk.advance %bp, [%c0, %c32] : !tk.ptr<tensor<64x32xf16>>
  %t = tk.load %bp {boundary_check = array<i32: 0, 1>, padding = #tk.padding<zero>} : !tk.ptr<tensor<64x32xf16>>
  %u = tk.load %next {boundary_check = array<i32: 1>, padding = #tk.padding<nan>} : !tk.ptr<tensor<64x32xf16>>
  %v = tk.load %next {boundary_check = array<i32: 0>} : !tk.ptr<tensor<64x32xf16>>
  tk.store %next, %t {boundary_check = array<i32: 0>} : !tk.ptr<tensor<64x32xf16>>
  tk.store %bp, %u : !tk.ptr<tensor<64x32xf16>>
  tk.return
}

// CHECK-LABEL: tk.func @dot_ops()
// CHECK-DAG:     %[[A:.+]] = arith.constant dense<1.000000e+00> : tensor<64x32xf16>
// CHECK-DAG:     %[[B:.+]] = arith.constant dense<2.000000e+00> : tensor<32x64xf16>
// CHECK-DAG:     %[[ACC:.+]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
// CHECK-DAG:     %[[FA:.+]] = arith.constant dense<1.000000e+00> : tensor<64x32xf32>
// CHECK-DAG:     %[[FB:.+]] = arith.constant dense<2.000000e+00> : tensor<32x64xf32>
// CHECK-DAG:     %[[IA:.+]] = arith.constant dense<1> : tensor<64x32xi8>
// CHECK-DAG:     %[[IB:.+]] = arith.constant dense<2> : tensor<32x64xi8>
// CHECK-DAG:     %[[IACC:.+]] = arith.constant dense<0> : tensor<64x64xi32>
// CHECK:         %[[EA:.+]] = tk.fp_to_fp %[[A]] {rounding = #tk.rounding<rtne>} : tensor<64x32xf16> -> tensor<64x32xf8E4M3FN>
// CHECK:         %[[EB:.+]] = tk.fp_to_fp %[[B]] {rounding = #tk.rounding<rtne>} : tensor<32x64xf16> -> tensor<32x64xf8E5M2>
// CHECK:         %[[D0:.+]] = tk.dot %[[A]], %[[B]], %[[ACC]] : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
// CHECK:         %[[D1:.+]] = tk.dot %[[FA]], %[[FB]], %[[D0]] {input_precision = #tk.input_precision<tf32>, tiling = #tk.tiling<horizontal>} : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>
// CHECK:         %[[D2:.+]] = tk.dot %[[FA]], %[[FB]], %[[D1]] {input_precision = #tk.input_precision<tf32x3>, tiling = #tk.tiling<square>} : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>
// CHECK:         tk.dot %[[IA]], %[[IB]], %[[IACC]] {tiling = #tk.tiling<vertical>} : tensor<64x32xi8> * tensor<32x64xi8> -> tensor<64x64xi32>
// CHECK:         tk.dot %[[EA]], %[[EB]], %[[D2]] : tensor<64x32xf8E4M3FN> * tensor<32x64xf8E5M2> -> tensor<64x64xf32>
tk.func @dot_ops() {
  %a = arith.constant dense<1.0> : tensor<64x32xf16>
  %b = arith.constant dense<2.0> : tensor<32x64xf16>
  %acc = arith.constant dense<0.0> : tensor<64x64xf32>
  %fa = arith.constant dense<1.0> : tensor<64x32xf32>
  %fb = arith.constant dense<2.0> : tensor<32x64xf32>
  %ia = arith.constant dense<1> : tensor<64x32xi8>
  %ib = arith.constant dense<2> : tensor<32x64xi8>
  %iacc = arith.constant dense<0> : tensor<64x64xi32>
  %ea = tk.fp_to_fp %a {rounding = #tk.rounding<rtne>} : tensor<64x32xf16> -> tensor<64x32xf8E4M3FN>
  %eb = tk.fp_to_fp %b {rounding = #tk.rounding<rtne>} : tensor<32x64xf16> -> tensor<32x64xf8E5M2>
  %d0 = tk.dot %a, %b, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
  %d1 = tk.dot %fa, %fb, %d0 {input_precision = #tk.input_precision<tf32>, tiling = #tk.tiling<horizontal>} : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>
  %d2 = tk.dot %fa, %fb, %d1 {input_precision = #tk.input_precision<tf32x3>, tiling = #tk.tiling<square>} : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>
  %d3 = tk.dot %ia, %ib, %iacc {tiling = #tk.tiling<vertical>} : tensor<64x32xi8> * tensor<32x64xi8> -> tensor<64x64xi32>
  %d4 = tk.dot %ea, %eb, %d2 : tensor<64x32xf8E4M3FN> * tensor<32x64xf8E5M2> -> tensor<64x64xf32>
  tk.return
}

// CHECK-LABEL: tk.func @reductions(
// CHECK:         %[[X:.+]] = tk.splat %{{.+}} : f32 -> tensor<64x128xf32>
// CHECK:         %[[IDX:.+]] = tk.broadcast %{{.+}} : tensor<1x128xi32> -> tensor<64x128xi32>
// CHECK:         %[[V:.+]] = tk.splat %{{.+}} : f32 -> tensor<128xf32>
// CHECK:         tk.reduce(%[[X]] : tensor<64x128xf32>) {axis = 1 : i32} -> tensor<64xf32> {
// CHECK-NEXT:    ^bb0(%[[L:.+]]: f32, %[[R:.+]]: f32):
// CHECK-NEXT:      %[[SUM:.+]] = arith.addf %[[L]], %[[R]] : f32
// CHECK-NEXT:      tk.reduce.return %[[SUM]] : f32
// CHECK-NEXT:    }
// CHECK:         %{{.+}}:2 = tk.reduce(%[[X]], %[[IDX]] : tensor<64x128xf32>, tensor<64x128xi32>) {axis = 0 : i32} -> tensor<128xf32>, tensor<128xi32> {
// CHECK-NEXT:    ^bb0(%[[AV:.+]]: f32, %[[AI:.+]]: i32, %[[BV:.+]]: f32, %[[BI:.+]]: i32):
// CHECK-NEXT:      %[[GT:.+]] = arith.cmpf ogt, %[[BV]], %[[AV]] : f32
// CHECK-NEXT:      %[[MV:.+]] = arith.select %[[GT]], %[[BV]], %[[AV]] : f32
// CHECK-NEXT:      %[[MI:.+]] = arith.select %[[GT]], %[[BI]], %[[AI]] : i32
// CHECK-NEXT:      tk.reduce.return %[[MV]], %[[MI]] : f32, i32
// CHECK-NEXT:    }
// CHECK:         tk.reduce(%[[V]] : tensor<128xf32>) {axis = 0 : i32} -> f32 {
// CHECK:           arith.maximumf
// CHECK:           tk.reduce.return %{{.+}} : f32
tk.func @reductions(%x0: f32) {
  %x = tk.splat %x0 : f32 -> tensor<64x128xf32>
  %rr = tk.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  %r2 = tk.expand_dims %rr {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %idx = tk.broadcast %r2 : tensor<1x128xi32> -> tensor<64x128xi32>
  %v = tk.splat %x0 : f32 -> tensor<128xf32>
  %s = tk.reduce(%x : tensor<64x128xf32>) {axis = 1 : i32} -> tensor<64xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    tk.reduce.return %r : f32
  }
  %m, %i = tk.reduce(%x, %idx : tensor<64x128xf32>, tensor<64x128xi32>) {axis = 0 : i32} -> tensor<128xf32>, tensor<128xi32> {
  ^bb0(%av: f32, %ai: i32, %bv: f32, %bi: i32):
    %gt = arith.cmpf ogt, %bv, %av : f32
    %mv = arith.select %gt, %bv, %av : f32
    %mi = arith.select %gt, %bi, %ai : i32
    tk.reduce.return %mv, %mi : f32, i32
  }
  %total = tk.reduce(%v : tensor<128xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %b : f32
    tk.reduce.return %r : f32
  }
  tk.return
}

// CHECK-LABEL: tk.func @scans()
// CHECK:         %[[X:.+]] = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
// CHECK:         %[[Y:.+]] = arith.constant dense<1.500000e+00> : tensor<8x128xf32>
// CHECK:         tk.scan(%[[X]] : tensor<128xi32>) {axis = 0 : i32} -> tensor<128xi32> {
// CHECK-NEXT:    ^bb0(%[[L:.+]]: i32, %[[R:.+]]: i32):
// CHECK-NEXT:      %[[S:.+]] = arith.addi %[[L]], %[[R]] : i32
// CHECK-NEXT:      tk.scan.return %[[S]] : i32
// CHECK-NEXT:    }
// CHECK:         tk.scan(%[[Y]] : tensor<8x128xf32>) {axis = 1 : i32, reverse = true} -> tensor<8x128xf32> {
// CHECK:           arith.mulf
// CHECK:           tk.scan.return %{{.+}} : f32
tk.func @scans() {
  %x = tk.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  %y = arith.constant dense<1.5> : tensor<8x128xf32>
  %c = tk.scan(%x : tensor<128xi32>) {axis = 0 : i32} -> tensor<128xi32> {
  ^bb0(%a: i32, %b: i32):
    %r = arith.addi %a, %b : i32
    tk.scan.return %r : i32
  }
  %d = tk.scan(%y : tensor<8x128xf32>) {axis = 1 : i32, reverse = true} -> tensor<8x128xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.mulf %a, %b : f32
    tk.scan.return %r : f32
  }
  tk.return
}

// CHECK-LABEL: tk.func @atomics(
// CHECK-SAME:      %{{[^:]+}}: !tk.ptr<f32>, %[[Q:[^:]+]]: !tk.ptr<i32>, %[[V:[^:]+]]: i32)
// CHECK:         %[[PTRS:.+]] = tk.addptr
// CHECK:         %[[VALS:.+]] = arith.constant dense<1.000000e+00> : tensor<128xf32>
// CHECK:         %[[M:.+]] = arith.constant dense<true> : tensor<128xi1>
// CHECK:         tk.atomic_rmw fadd, acq_rel, %[[PTRS]], %[[VALS]], %[[M]] : (tensor<128x!tk.ptr<f32>>, tensor<128xf32>, tensor<128xi1>) -> tensor<128xf32>
// CHECK:         %[[OLD:.+]] = tk.atomic_rmw add, relaxed, %[[Q]], %[[V]] : (!tk.ptr<i32>, i32) -> i32
// CHECK:         tk.atomic_rmw max, acquire, %[[PTRS]], %[[VALS]] : (tensor<128x!tk.ptr<f32>>, tensor<128xf32>) -> tensor<128xf32>
// CHECK:         tk.atomic_rmw xchg, release, %[[Q]], %[[V]] : (!tk.ptr<i32>, i32) -> i32
// CHECK:         tk.atomic_cas acq_rel, %[[Q]], %[[V]], %[[OLD]] : (!tk.ptr<i32>, i32, i32) -> i32
tk.func @atomics(%p: !tk.ptr<f32>, %q: !tk.ptr<i32>, %v: i32) {
  %r = tk.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  %ps = tk.splat %p : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %ptrs = tk.addptr %ps, %r : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
  %vals = arith.constant dense<1.0> : tensor<128xf32>
  %m = arith.constant dense<true> : tensor<128xi1>
  %o0 = tk.atomic_rmw fadd, acq_rel, %ptrs, %vals, %m : (tensor<128x!tk.ptr<f32>>, tensor<128xf32>, tensor<128xi1>) -> tensor<128xf32>
  %o1 = tk.atomic_rmw add, relaxed, %q, %v : (!tk.ptr<i32>, i32) -> i32
  %o2 = tk.atomic_rmw max, acquire, %ptrs, %vals : (tensor<128x!tk.ptr<f32>>, tensor<128xf32>) -> tensor<128xf32>
  %o3 = tk.atomic_rmw xchg, release, %q, %v : (!tk.ptr<i32>, i32) -> i32
  %o4 = tk.atomic_cas acq_rel, %q, %v, %o1 : (!tk.ptr<i32>, i32, i32) -> i32
  tk.return
}

// CHECK-LABEL: tk.func @conversions(
// CHECK-SAME:      %[[E:[^:]+]]: f8E5M2)
// CHECK:         %[[X:.+]] = arith.constant dense<1.000000e+00> : tensor<128xf32>
// CHECK:         %[[H:.+]] = arith.constant dense<1.000000e+00> : tensor<128xf16>
// CHECK:         %[[A:.+]] = tk.fp_to_fp %[[X]] {rounding = #tk.rounding<rtne>} : tensor<128xf32> -> tensor<128xf8E4M3FN>
// CHECK:         tk.fp_to_fp %[[H]] {rounding = #tk.rounding<rtz>} : tensor<128xf16> -> tensor<128xf8E5M2>
// CHECK:         tk.fp_to_fp %[[A]] : tensor<128xf8E4M3FN> -> tensor<128xf32>
// CHECK:         tk.fp_to_fp %[[E]] : f8E5M2 -> bf16
// CHECK:         tk.fp_to_fp %[[H]] {rounding = #tk.rounding<rtne>} : tensor<128xf16> -> tensor<128xbf16>
// CHECK:         tk.fp_to_fp %[[E]] {rounding = #tk.rounding<rtz>} : f8E5M2 -> f8E4M3FN
tk.func @conversions(%e: f8E5M2) {
  %x = arith.constant dense<1.0> : tensor<128xf32>
  %h = arith.constant dense<1.0> : tensor<128xf16>
  %a = tk.fp_to_fp %x {rounding = #tk.rounding<rtne>} : tensor<128xf32> -> tensor<128xf8E4M3FN>
  %b = tk.fp_to_fp %h {rounding = #tk.rounding<rtz>} : tensor<128xf16> -> tensor<128xf8E5M2>
  %c = tk.fp_to_fp %a : tensor<128xf8E4M3FN> -> tensor<128xf32>
  %d = tk.fp_to_fp %e : f8E5M2 -> bf16
  %f = tk.fp_to_fp %h {rounding = #tk.rounding<rtne>} : tensor<128xf16> -> tensor<128xbf16>
  %g = tk.fp_to_fp %e {rounding = #tk.rounding<rtz>} : f8E5M2 -> f8E4M3FN
  tk.return
}

// CHECK-LABEL: tk.func @debug(
// CHECK:         %[[OK:.+]] = arith.cmpi slt
// CHECK:         %[[X:.+]] = arith.constant dense<1.000000e+00> : tensor<128xf32>
// CHECK:         tk.assert %[[OK]], "index out of range" : tensor<128xi1>
// CHECK:         tk.print "x = " %[[X]] : tensor<128xf32>
// CHECK:         tk.print "x, n = " %[[X]], %{{.+}} : tensor<128xf32>, i32
// CHECK:         tk.print "hello"{{$}}
tk.func @debug(%n: i32) {
  %r = tk.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  %ns = tk.splat %n : i32 -> tensor<128xi32>
  %ok = arith.cmpi slt, %r, %ns : tensor<128xi32>
  %x = arith.constant dense<1.0> : tensor<128xf32>
  tk.assert %ok, "index out of range" : tensor<128xi1>
  tk.print "x = " %x : tensor<128xf32>
  tk.print "x, n = " %x, %n : tensor<128xf32>, i32
  tk.print "hello"
  tk.return
}

// CHECK-LABEL: tk.func @loops(
// CHECK:         %[[PTRS:.+]] = tk.addptr
// CHECK:         %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<64xf32>
// CHECK:         %[[FOR:.+]]:2 = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[ZERO]], %[[Q:.+]] = %[[PTRS]]) -> (tensor<64xf32>, tensor<64x!tk.ptr<f32>>) : i32 {
// CHECK-NEXT:      %[[X:.+]] = tk.load %[[Q]] : tensor<64x!tk.ptr<f32>>
// CHECK-NEXT:      %[[SUM:.+]] = arith.addf %[[ACC]], %[[X]] : tensor<64xf32>
// CHECK-NEXT:      %[[OFF:.+]] = tk.splat %{{.+}} : i32 -> tensor<64xi32>
// CHECK-NEXT:      %[[NQ:.+]] = tk.addptr %[[Q]], %[[OFF]] : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
// CHECK-NEXT:      scf.yield %[[SUM]], %[[NQ]] : tensor<64xf32>, tensor<64x!tk.ptr<f32>>
// CHECK-NEXT:    }
// CHECK-NEXT:    tk.store %[[PTRS]], %[[FOR]]#0 : tensor<64x!tk.ptr<f32>>
tk.func @loops(%p: !tk.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %step = arith.constant 64 : i32
  %r = tk.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  %ps = tk.splat %p : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  %ptrs = tk.addptr %ps, %r : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %acc, %last = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero, %q = %ptrs) -> (tensor<64xf32>, tensor<64x!tk.ptr<f32>>) : i32 {
    %x = tk.load %q : tensor<64x!tk.ptr<f32>>
    %sum = arith.addf %a, %x : tensor<64xf32>
    %off = tk.splat %step : i32 -> tensor<64xi32>
    %nq = tk.addptr %q, %off : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
    scf.yield %sum, %nq : tensor<64xf32>, tensor<64x!tk.ptr<f32>>
  }
  tk.store %ptrs, %acc : tensor<64x!tk.ptr<f32>>
  tk.return
}
