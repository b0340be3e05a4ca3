// RUN: tk-opt %s --tk-convert-tt-to-tk --split-input-file --verify-diagnostics
//
// What tk cannot run is refused at the op, naming it and why.

tt.func private @helper(%x: i32) -> i32 {
  tt.return %x : i32
}
tt.func public @calls(%x: i32) {
  // expected-error @+1 {{'tt.call' cannot be imported into tk: tk kernels have no calls; 'helper' was kept out of line}}
  %0 = tt.call @helper(%x) : (i32) -> i32
  tt.return
}

// -----

tt.func public @int_to_ptr(%x: i64) {
  // expected-error @+1 {{'tt.int_to_ptr' cannot be imported into tk: tk has no casts from integers to pointers}}
  %0 = tt.int_to_ptr %x : i64 -> !tt.ptr<f32>
  tt.return
}

// -----

tt.func public @system_atomic(%p: !tt.ptr<f32>, %v: f32) {
  // expected-error @+1 {{'tt.atomic_rmw' cannot be imported into tk: tk's atomics are device-wide; this one is of system scope}}
  %0 = tt.atomic_rmw fadd, relaxed, sys, %p, %v : (!tt.ptr<f32>, f32) -> f32
  tt.return
}

// -----

tt.func public @bf16x3() {
  %a = arith.constant dense<1.0> : tensor<16x16xf32>
  // expected-error @+1 {{'tt.dot' cannot be imported into tk: tk's f32 dots are ieee, tf32 or tf32x3, not bf16x3}}
  %0 = tt.dot %a, %a, %a, inputPrecision = bf16x3 : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
  tt.return
}

// -----

tt.func public @hex(%x: i32) {
  // expected-error @+1 {{'tt.print' cannot be imported into tk: tk.print prints decimal, not hex}}
  tt.print "x = " {hex = true, isSigned = array<i32: 1>} : %x : i32
  tt.return
}

// -----

tt.func public @unknown_extern(%x: f32) {
  // expected-error @+1 {{'tt.extern_elementwise' cannot be imported into tk: tk maps libdevice's and OCML's common math functions onto its own, and '__nv_j0f' is not one of them}}
  %0 = tt.extern_elementwise %x {libname = "", libpath = "", pure = true, symbol = "__nv_j0f"} : (f32) -> f32
  tt.return
}

// -----

tt.func public @branches(%c: i1) {
  // expected-error @+1 {{'cf.cond_br' cannot be imported into tk: tk kernels use structured control flow (scf)}}
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  tt.return
^bb2:
  tt.return
}

// -----

// expected-error @+1 {{'tt.func' cannot be imported into tk: it uses a pointer of address space 3; tk's pointers are to global memory (1)}}
tt.func public @shared(%p: !tt.ptr<f32, 3>) {
  tt.return
}

// -----

tt.func public @wide_mulhi(%x: i64) {
  // expected-error @+1 {{'tt.mulhiui' cannot be imported into tk: tk imports mulhiui of integers up to 32 bits, not 64-bit}}
  %0 = tt.mulhiui %x, %x : i64
  tt.return
}

// -----

tt.func public @while_loop(%n: i32) {
  %c0 = arith.constant 0 : i32
  // expected-error @+1 {{'scf.while' cannot be imported into tk: tk kernels loop with scf.for and branch with scf.if}}
  %r = scf.while (%i = %c0) : (i32) -> i32 {
    %go = arith.cmpi slt, %i, %n : i32
    scf.condition(%go) %i : i32
  } do {
  ^bb0(%j: i32):
    scf.yield %j : i32
  }
  tt.return
}

// -----

// expected-error @+1 {{'tt.func' @declared is a declaration without a body; tk imports kernels, which have one}}
tt.func public @declared(%x: !tt.ptr<f32> {tt.divisibility = 16 : i32})

// -----

tt.func public @nan_padding_through_a_loop(%p: !tt.ptr<f16>, %n: i32, %c1: i64) {
  %c0 = arith.constant 0 : index
  %c1i = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %d = tt.make_tensor_descriptor %p, [%n, %n], [%c1, %c1] {padding = 2 : i32} : <f16>, <tensor<16x32xf16>>
  scf.for %i = %c0 to %c1i step %c1i iter_args(%it = %d) -> (!tt.tensordesc<tensor<16x32xf16>>) {
    // expected-error @+1 {{'tt.descriptor_load' cannot be imported into tk: a descriptor padded with NaN reaches this load through a loop or branch; tk pads only where it sees the descriptor}}
    %t = tt.descriptor_load %it[%z, %z] : !tt.tensordesc<tensor<16x32xf16>> -> tensor<16x32xf16>
    scf.yield %it : !tt.tensordesc<tensor<16x32xf16>>
  }
  tt.return
}

// -----

// expected-error @+1 {{'tt.func' cannot be imported into tk: argument 0 is a tensor descriptor made on the host without the shape (i32) and strides (i64) Triton 3.6 writes after it}}
tt.func public @host_descriptor_alone(%desc: !tt.tensordesc<tensor<16x32xf16>>, %i: i32) {
  %t = tt.descriptor_load %desc[%i, %i] : !tt.tensordesc<tensor<16x32xf16>> -> tensor<16x32xf16>
  tt.return
}
