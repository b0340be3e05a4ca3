// RUN: tk-opt %s --tk-convert-tt-to-tk --split-input-file | FileCheck %s
//
// Each tt op as Triton 3.6 prints it, and the tk (or arith/math) it becomes.

// CHECK-LABEL: tk.func @kernel(
// CHECK-SAME: %{{.*}}: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %{{.*}}: i32 {tk.divisibility = 16 : i32}, %{{.*}}: f32)
// CHECK-SAME: attributes {tk.arg_names = ["x_ptr", "n", "scale"]}
// CHECK: tk.program_id 1 : i32
// CHECK: tk.num_programs 2 : i32
// CHECK: %[[R:.*]] = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
// CHECK: %[[P:.*]] = tk.splat %{{.*}} : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
// CHECK: %[[Q:.*]] = tk.addptr %[[P]], %[[R]] : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
// CHECK: %[[X:.*]] = tk.load %[[Q]], %{{.*}}, %{{.*}} : tensor<128x!tk.ptr<f32>>
// CHECK: tk.load %[[Q]] {is_volatile = true} : tensor<128x!tk.ptr<f32>>
// CHECK: tk.store %[[Q]], %[[X]], %{{.*}} : tensor<128x!tk.ptr<f32>>
// CHECK: tk.return
tt.func public @kernel(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("x_ptr"), %n: i32 {tt.divisibility = 16 : i32} loc("n"), %scale: f32 loc("scale")) attributes {noinline = false} {
  %pid = tt.get_program_id y : i32
  %num = tt.get_num_programs z : i32
  %offs = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %lim = tt.splat %n : i32 -> tensor<128xi32>
  %mask = arith.cmpi slt, %offs, %lim : tensor<128xi32>
  %base = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
  %ptrs = tt.addptr %base, %offs : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
  %zero = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %x = tt.load %ptrs, %mask, %zero cacheModifier = ca evictionPolicy = evict_last : tensor<128x!tt.ptr<f32>>
  %y = tt.load %ptrs {isVolatile = true} : tensor<128x!tt.ptr<f32>>
  tt.store %ptrs, %x, %mask cacheModifier = cs : tensor<128x!tt.ptr<f32>>
  tt.return
}

// -----

// CHECK-LABEL: tk.func @shapes(
// CHECK: tk.expand_dims %{{.*}} {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
// CHECK: tk.broadcast %{{.*}} : tensor<32x1xi32> -> tensor<32x16xi32>
// CHECK: tk.trans %{{.*}} {order = array<i32: 1, 0>} : tensor<32x16xi32> -> tensor<16x32xi32>
// CHECK: tk.reshape %{{.*}} : tensor<16x32xi32> -> tensor<512xi32>
// CHECK: tk.cat %{{.*}}, %{{.*}} : tensor<32xi32> -> tensor<64xi32>
// CHECK: %[[J:.*]] = tk.join %{{.*}}, %{{.*}} : tensor<32x16xi32> -> tensor<32x16x2xi32>
// The two halves of a split: reductions over the last axis keeping the
// first, then the second element.
// CHECK: tk.reduce(%[[J]] : tensor<32x16x2xi32>) {axis = 2 : i32} -> tensor<32x16xi32>
// CHECK-NEXT: ^bb0(%[[A:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: tk.reduce.return %[[A]] : i32
// CHECK: tk.reduce(%[[J]] : tensor<32x16x2xi32>) {axis = 2 : i32} -> tensor<32x16xi32>
// CHECK-NEXT: ^bb0(%{{.*}}: i32, %[[B:.*]]: i32):
// CHECK-NEXT: tk.reduce.return %[[B]] : i32
tt.func public @shapes() {
  %x = arith.constant dense<1> : tensor<32xi32>
  %0 = tt.expand_dims %x {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %1 = tt.broadcast %0 : tensor<32x1xi32> -> tensor<32x16xi32>
  %2 = tt.trans %1 {order = array<i32: 1, 0>} : tensor<32x16xi32> -> tensor<16x32xi32>
  %3 = tt.reshape %2 allow_reorder : tensor<16x32xi32> -> tensor<512xi32>
  %4 = tt.cat %x, %x : tensor<32xi32> -> tensor<64xi32>
  %5 = tt.join %1, %1 : tensor<32x16xi32> -> tensor<32x16x2xi32>
  %6, %7 = tt.split %5 : tensor<32x16x2xi32> -> tensor<32x16xi32>
  tt.return
}

// -----

// CHECK-LABEL: tk.func @compute(
// Triton's tf32 means something for f32 inputs only.
// CHECK: tk.dot %{{.*}} {input_precision = #tk.input_precision<tf32>} : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
// CHECK: tk.dot %{{.*}} : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
// CHECK: tk.reduce(%{{.*}} : tensor<16x16xf32>) {axis = 1 : i32} -> tensor<16xf32>
// CHECK: arith.maxnumf
// CHECK: tk.reduce.return
// CHECK: tk.scan(%{{.*}} : tensor<16xf32>) {axis = 0 : i32, reverse = true} -> tensor<16xf32>
// CHECK: tk.scan.return
// CHECK: tk.fp_to_fp %{{.*}} {rounding = #tk.rounding<rtne>} : tensor<16xf32> -> tensor<16xf8E4M3FN>
// CHECK: tk.fp_to_fp %{{.*}} : tensor<16xf8E4M3FN> -> tensor<16xf32>
// CHECK: arith.bitcast %{{.*}} : tensor<16xf32> to tensor<16xi32>
// CHECK: %[[LO:.*]] = arith.maximumf %{{.*}}, %{{.*}} : tensor<16xf32>
// CHECK: arith.minimumf %[[LO]], %{{.*}} : tensor<16xf32>
// CHECK: %[[LO2:.*]] = arith.maxnumf %{{.*}}, %{{.*}} : tensor<16xf32>
// CHECK: arith.minnumf %[[LO2]], %{{.*}} : tensor<16xf32>
// The precise forms stay precise (no fastmath).
// CHECK: math.sqrt %{{[^ ]*}} : tensor<16xf32>
// CHECK: arith.divf %{{[^ ]*}}, %{{[^ ]*}} : tensor<16xf32>
// mulhiui: widen, multiply, take the high half.
// CHECK: %[[XW:.*]] = arith.extui %{{.*}} : tensor<16xi32> to tensor<16xi64>
// CHECK: %[[YW:.*]] = arith.extui %{{.*}} : tensor<16xi32> to tensor<16xi64>
// CHECK: %[[PW:.*]] = arith.muli %[[XW]], %[[YW]] : tensor<16xi64>
// CHECK: %[[C32:.*]] = arith.constant dense<32> : tensor<16xi64>
// CHECK: %[[HI:.*]] = arith.shrui %[[PW]], %[[C32]] : tensor<16xi64>
// CHECK: arith.trunci %[[HI]] : tensor<16xi64> to tensor<16xi32>
// CHECK: math.exp %{{.*}} : tensor<16xf32>
// CHECK: math.log1p %{{.*}} : tensor<16xf32>
// CHECK: math.powf %{{.*}}, %{{.*}} : tensor<16xf32>
// CHECK: math.erf %{{.*}} : f64
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : tensor<16xf32>
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %{{.*}}, %{{.*}} : tensor<16xf32>
// CHECK: arith.extui %[[NAN]] : tensor<16xi1> to tensor<16xi32>
// ub.poison is zero, one of the values poison may be.
// CHECK: arith.constant dense<0.000000e+00> : tensor<16xf32>
// Triton's own f32 exp, divide and sqrt are its fast forms: afn in tk.
// CHECK: math.exp %{{.*}} fastmath<afn> : tensor<16xf32>
// CHECK: arith.divf %{{.*}}, %{{.*}} fastmath<afn> : tensor<16xf32>
// CHECK: math.sqrt %{{.*}} fastmath<afn> : tensor<16xf32>
// CHECK: arith.divf %{{.*}}, %{{.*}} : f64
tt.func public @compute(%d: f64) {
  %a = arith.constant dense<1.0> : tensor<16x16xf32>
  %h = arith.constant dense<1.0> : tensor<16x16xf16>
  %v = arith.constant dense<1.0> : tensor<16xf32>
  %i = arith.constant dense<7> : tensor<16xi32>
  %0 = tt.dot %a, %a, %a, inputPrecision = tf32 : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
  %1 = tt.dot %h, %h, %a, inputPrecision = tf32 : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32>
  %2 = "tt.reduce"(%1) <{axis = 1 : i32}> ({
  ^bb0(%l: f32, %r: f32):
    %m = arith.maxnumf %l, %r : f32
    tt.reduce.return %m : f32
  }) : (tensor<16x16xf32>) -> tensor<16xf32>
  %3 = "tt.scan"(%2) <{axis = 0 : i32, reverse = true}> ({
  ^bb0(%l: f32, %r: f32):
    %s = arith.addf %l, %r : f32
    tt.scan.return %s : f32
  }) : (tensor<16xf32>) -> tensor<16xf32>
  %4 = tt.fp_to_fp %3, rounding = rtne : tensor<16xf32> -> tensor<16xf8E4M3FN>
  %5 = tt.fp_to_fp %4 : tensor<16xf8E4M3FN> -> tensor<16xf32>
  %6 = tt.bitcast %5 : tensor<16xf32> -> tensor<16xi32>
  %7 = tt.clampf %v, %v, %v, propagateNan = all : tensor<16xf32>
  %8 = tt.clampf %v, %v, %v, propagateNan = none : tensor<16xf32>
  %9 = tt.precise_sqrt %v : tensor<16xf32>
  %10 = tt.precise_divf %v, %v : tensor<16xf32>
  %11 = tt.mulhiui %i, %i : tensor<16xi32>
  %12 = tt.extern_elementwise %v {libname = "", libpath = "", pure = true, symbol = "__nv_expf"} : (tensor<16xf32>) -> tensor<16xf32>
  %13 = tt.extern_elementwise %v {libname = "", libpath = "", pure = true, symbol = "__ocml_log1p_f32"} : (tensor<16xf32>) -> tensor<16xf32>
  %14 = tt.extern_elementwise %v, %v {libname = "", libpath = "", pure = true, symbol = "__nv_powf"} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %15 = tt.extern_elementwise %d {libname = "", libpath = "", pure = true, symbol = "__nv_erf"} : (f64) -> f64
  %16 = tt.extern_elementwise %v, %v, %v {libname = "", libpath = "", pure = true, symbol = "__nv_fmaf"} : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %17 = tt.extern_elementwise %v {libname = "", libpath = "", pure = true, symbol = "__nv_isnanf"} : (tensor<16xf32>) -> tensor<16xi32>
  %18 = ub.poison : tensor<16xf32>
  %19 = math.exp %v : tensor<16xf32>
  %20 = arith.divf %v, %v : tensor<16xf32>
  %21 = math.sqrt %v : tensor<16xf32>
  %22 = arith.divf %d, %d : f64
  tt.return
}

// -----

// CHECK-LABEL: tk.func @memory(
// CHECK: %[[BP:.*]] = tk.make_block_ptr %{{.*}}, [%{{.*}}, %{{.*}}], [%{{.*}}, %{{.*}}], [%{{.*}}, %{{.*}}] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
// CHECK: %[[NEXT:.*]] = tk.advance %[[BP]], [%{{.*}}, %{{.*}}] : !tk.ptr<tensor<64x32xf16>>
// CHECK: %[[T:.*]] = tk.load %[[NEXT]] {boundary_check = array<i32: 0, 1>, padding = #tk.padding<nan>} : !tk.ptr<tensor<64x32xf16>>
// CHECK: tk.store %[[NEXT]], %[[T]] {boundary_check = array<i32: 1>} : !tk.ptr<tensor<64x32xf16>>
// CHECK: tk.atomic_rmw xchg, acq_rel, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x!tk.ptr<f32>>, tensor<8xf32>, tensor<8xi1>) -> tensor<8xf32>
// CHECK: tk.atomic_rmw fadd, relaxed, %{{.*}}, %{{.*}} : (tensor<8x!tk.ptr<f32>>, tensor<8xf32>) -> tensor<8xf32>
// CHECK: tk.atomic_cas acquire, %{{.*}}, %{{.*}}, %{{.*}} : (!tk.ptr<i32>, i32, i32) -> i32
// CHECK: tk.print "x = " %{{.*}} : tensor<8xf32>
// CHECK: tk.assert %{{.*}}, "in range" : tensor<8xi1>
tt.func public @memory(%base: !tt.ptr<f16>, %m: i64, %k: i64, %o: i32, %out: !tt.ptr<f32>, %lock: !tt.ptr<i32>, %c: i32) {
  %ptrs = tt.splat %out : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
  %vals = arith.constant dense<1.0> : tensor<8xf32>
  %mask = arith.constant dense<true> : tensor<8xi1>
  %c1 = arith.constant 1 : i64
  %bp = tt.make_tensor_ptr %base, [%m, %k], [%k, %c1], [%o, %o] {order = array<i32: 1, 0>} : <tensor<64x32xf16>>
  %next = tt.advance %bp, [%o, %o] : <tensor<64x32xf16>>
  %t = tt.load %next {boundaryCheck = array<i32: 0, 1>, padding = 2 : i32} : !tt.ptr<tensor<64x32xf16>>
  tt.store %next, %t {boundaryCheck = array<i32: 1>} : !tt.ptr<tensor<64x32xf16>>
  %old = tt.atomic_rmw exch, acq_rel, gpu, %ptrs, %vals, %mask : (tensor<8x!tt.ptr<f32>>, tensor<8xf32>, tensor<8xi1>) -> tensor<8xf32>
  %sum = tt.atomic_rmw fadd, relaxed, cta, %ptrs, %vals : (tensor<8x!tt.ptr<f32>>, tensor<8xf32>) -> tensor<8xf32>
  %was = tt.atomic_cas acquire, gpu, %lock, %c, %c : (!tt.ptr<i32>, i32, i32) -> i32
  tt.print "x = " {hex = false, isSigned = array<i32: 0>} : %vals : tensor<8xf32>
  tt.assert %mask, "in range" : tensor<8xi1>
  tt.return
}

// -----

// Tensor descriptors are block pointers at offset zero, row-major, whose
// loads and stores check every bound; Triton 3.6 prints the block as a tensor
// type, later Triton without one. tl.assume's hint is dropped.
// CHECK-LABEL: tk.func @descriptors(
// CHECK-NOT: llvm.intr.assume
// CHECK: %[[M:.*]] = arith.extsi %arg1 : i32 to i64
// CHECK-NEXT: %[[K:.*]] = arith.extsi %arg2 : i32 to i64
// CHECK: %[[Z:.*]] = arith.constant 0 : i32
// CHECK: %[[D:.*]] = tk.make_block_ptr %{{.*}}, [%[[M]], %[[K]]], [%{{.*}}, %{{.*}}], [%[[Z]], %[[Z]]] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<16x32xf16>>
// CHECK: scf.for {{.*}} iter_args(%[[IT:.*]] = %[[D]], %{{.*}} = %{{.*}}) -> (!tk.ptr<tensor<16x32xf16>>, tensor<16x32xf16>)
// CHECK: %[[AT:.*]] = tk.advance %[[IT]], [%{{.*}}, %{{.*}}] : !tk.ptr<tensor<16x32xf16>>
// CHECK: tk.load %[[AT]] {boundary_check = array<i32: 0, 1>, padding = #tk.padding<zero>} : !tk.ptr<tensor<16x32xf16>>
// CHECK: %[[OUT:.*]] = tk.make_block_ptr {{.*}} : !tk.ptr<f16> -> !tk.ptr<tensor<16x32xf16>>
// CHECK: %[[STORE_AT:.*]] = tk.advance %[[OUT]], [%{{.*}}, %{{.*}}] : !tk.ptr<tensor<16x32xf16>>
// CHECK: tk.store %[[STORE_AT]], %{{.*}} {boundary_check = array<i32: 0, 1>} : !tk.ptr<tensor<16x32xf16>>
tt.func public @descriptors(%arg0: !tt.ptr<f16>, %arg1: i32, %arg2: i32, %out: !tt.ptr<f16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %c0_i32 = arith.constant 0 : i32
  %c1_i64 = arith.constant 1 : i64
  %c8_i32 = arith.constant 8 : i32
  %positive = arith.cmpi sgt, %arg2, %c0_i32 : i32
  llvm.intr.assume %positive : i1
  %cst = arith.constant dense<0.000000e+00> : tensor<16x32xf16>
  %0 = arith.extsi %arg2 : i32 to i64
  %tdesc = tt.make_tensor_descriptor %arg0, [%arg1, %arg2], [%0, %c1_i64] : <f16>, <tensor<16x32xf16>>
  %tdesc_out, %sum_out = scf.for %i = %c0 to %c10 step %c1 iter_args(%ptr_iter = %tdesc, %sum_iter = %cst) -> (!tt.tensordesc<tensor<16x32xf16>>, tensor<16x32xf16>) {
    %cast_i = arith.index_cast %i : index to i32
    %load = tt.descriptor_load %ptr_iter[%c8_i32, %cast_i] : !tt.tensordesc<tensor<16x32xf16>> -> tensor<16x32xf16>
    %sum = arith.addf %sum_iter, %load : tensor<16x32xf16>
    scf.yield %ptr_iter, %sum : !tt.tensordesc<tensor<16x32xf16>>, tensor<16x32xf16>
  }
  %odesc = tt.make_tensor_descriptor %out, [%arg1, %arg2], [%0, %c1_i64] : !tt.ptr<f16>, !tt.tensordesc<16x32xf16>
  tt.descriptor_store %odesc[%c8_i32, %c0_i32], %sum_out : !tt.tensordesc<16x32xf16>, tensor<16x32xf16>
  tt.return
}

// -----

// A descriptor padded with NaN pads the loads that see it.
// CHECK-LABEL: tk.func @nan_padding(
// CHECK: %[[NAN:.*]] = tk.make_block_ptr {{.*}} : !tk.ptr<f16> -> !tk.ptr<tensor<16x32xf16>>
// CHECK: %[[NAN_AT:.*]] = tk.advance %[[NAN]]
// CHECK: tk.load %[[NAN_AT]] {boundary_check = array<i32: 0, 1>, padding = #tk.padding<nan>}
tt.func public @nan_padding(%out: !tt.ptr<f16>, %n: i32, %s: i64) {
  %c0_i32 = arith.constant 0 : i32
  %c1_i64 = arith.constant 1 : i64
  %ndesc = tt.make_tensor_descriptor %out, [%n, %n], [%s, %c1_i64] {padding = 2 : i32} : <f16>, <16x32xf16>
  %nan = tt.descriptor_load %ndesc[%c0_i32, %c0_i32] : !tt.tensordesc<16x32xf16> -> tensor<16x32xf16>
  tt.descriptor_store %ndesc[%c0_i32, %c0_i32], %nan : !tt.tensordesc<16x32xf16>, tensor<16x32xf16>
  tt.return
}

// -----

// A descriptor made on the host: Triton 3.6 writes its shape (i32) and strides
// (i64) after it, and tk takes the base in its place, as Triton's launchers
// without TMA pass it; the five arguments are named after the descriptor. A
// launch checks TensorDescriptor's alignment (a 16-byte base, strides of 16
// bytes) and tk's innermost extent of 16 bytes; the innermost stride is 1, as
// TMA and TensorDescriptor have it.
// CHECK-LABEL: tk.func @host_descriptor(
// CHECK-SAME: %[[BASE:[a-z0-9]+]]: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %[[ROWS:[a-z0-9]+]]: i32, %[[COLS:[a-z0-9]+]]: i32 {tk.divisibility = 8 : i32}, %[[S0:[a-z0-9]+]]: i64 {tk.divisibility = 8 : i32}, %{{.*}}: i64, %{{.*}}: i32)
// CHECK-SAME: tk.arg_names = ["Q", "Q_shape0", "Q_shape1", "Q_stride0", "Q_stride1", "i"]
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: %[[R:.*]] = arith.extsi %[[ROWS]] : i32 to i64
// CHECK: %[[C:.*]] = arith.extsi %[[COLS]] : i32 to i64
// CHECK: %[[D:.*]] = tk.make_block_ptr %[[BASE]], [%[[R]], %[[C]]], [%[[S0]], %[[ONE]]]
// CHECK: tk.advance %[[D]]
tt.func public @host_descriptor(%Q: !tt.tensordesc<tensor<16x32xf16>> loc("Q"), %Q_0: i32 loc("Q"), %Q_1: i32 loc("Q"), %Q_2: i64 loc("Q"), %Q_3: i64 loc("Q"), %i: i32 loc("i")) {
  %t = tt.descriptor_load %Q[%i, %i] : !tt.tensordesc<tensor<16x32xf16>> -> tensor<16x32xf16>
  tt.descriptor_store %Q[%i, %i], %t : !tt.tensordesc<tensor<16x32xf16>>, tensor<16x32xf16>
  tt.return
}

// -----

// A load or store may leave out the block's leading dimensions of 1.
// CHECK-LABEL: tk.func @rank_reducing(
// CHECK: %[[T:.*]] = tk.load %{{.*}} : !tk.ptr<tensor<1x32xf16>>
// CHECK: %[[R:.*]] = tk.reshape %[[T]] : tensor<1x32xf16> -> tensor<32xf16>
// CHECK: %[[S:.*]] = tk.reshape %[[R]] : tensor<32xf16> -> tensor<1x32xf16>
// CHECK: tk.store %{{.*}}, %[[S]] {boundary_check = array<i32: 0, 1>} : !tk.ptr<tensor<1x32xf16>>
tt.func public @rank_reducing(%p: !tt.ptr<f16>, %n: i32, %s: i64, %i: i32) {
  %c1_i64 = arith.constant 1 : i64
  %d = tt.make_tensor_descriptor %p, [%n, %n], [%s, %c1_i64] : <f16>, <tensor<1x32xf16>>
  %t = tt.descriptor_load %d[%i, %i] : !tt.tensordesc<tensor<1x32xf16>> -> tensor<32xf16>
  tt.descriptor_store %d[%i, %i], %t : !tt.tensordesc<tensor<1x32xf16>>, tensor<32xf16>
  tt.return
}

// -----

// Triton compiles with enable_fp_fusion on: the float additions,
// subtractions and multiplications take `contract`, so that a product and
// the sum it feeds may round once; a division does not.
// CHECK-LABEL: tk.func @fused(
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : tensor<16xf32>
// CHECK: arith.subf %[[P]], %{{.*}} fastmath<contract> : tensor<16xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<contract> : tensor<16xf32>
// CHECK: arith.divf %{{.*}}, %{{.*}} : tensor<16xf32>
tt.func public @fused(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %scale: f32) {
  %offs = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %base = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
  %ptrs = tt.addptr %base, %offs : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
  %x = tt.load %ptrs : tensor<16x!tt.ptr<f32>>
  %s = tt.splat %scale : f32 -> tensor<16xf32>
  %p = arith.mulf %x, %s : tensor<16xf32>
  %d = arith.subf %p, %x : tensor<16xf32>
  %e = arith.addf %d, %s : tensor<16xf32>
  %q = arith.divf %e, %s : tensor<16xf32>
  tt.store %ptrs, %q : tensor<16x!tt.ptr<f32>>
  tt.return
}
