// RUN: tk-opt %s --split-input-file --verify-diagnostics
//
// The verifiers of !tkw.ring, #tkw.swizzled, #tkw.nvmma and the ops that fill and read
// a ring.

tk.func @bad_swizzle() {
  // expected-error @+2 {{vec must be a positive power of two, not 3}}
  // expected-error @+1 {{failed to parse Tkw_RingType parameter 'layout'}}
  %r = tkw.local_alloc : !tkw.ring<2, [64, 32], f16, #tkw.swizzled<vec = 3, perPhase = 1, maxPhase = 8, order = [1, 0]>>
  tk.return
}

// -----

tk.func @no_slots() {
  // expected-error @+1 {{a ring has at least one slot, not 0}}
  %r = tkw.local_alloc : !tkw.ring<0, [64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>
  tk.return
}

// -----

tk.func @rank() {
  // expected-error @+1 {{the layout orders 2 dimensions; the slot has 3}}
  %r = tkw.local_alloc : !tkw.ring<2, [4, 64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>
  tk.return
}

// -----

tk.func @pointee(%base: !tk.ptr<f32>, %s: i32) {
  %p = tk.splat %base : !tk.ptr<f32> -> tensor<64x32x!tk.ptr<f32>>
  %r = tkw.local_alloc : !tkw.ring<2, [64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>
  // expected-error @+1 {{copies pointers to 'f16', not '!tk.ptr<f32>'}}
  tkw.async_copy %p into %r[%s] : !tkw.ring<2, [64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>, tensor<64x32x!tk.ptr<f32>>
  tk.return
}

// -----

tk.func @copy_shape(%base: !tk.ptr<f16>, %s: i32) {
  %p = tk.splat %base : !tk.ptr<f16> -> tensor<32x32x!tk.ptr<f16>>
  %r = tkw.local_alloc : !tkw.ring<2, [64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>
  // expected-error @+1 {{a pointer tile of shape [32, 32] does not match the slots' [64, 32]}}
  tkw.async_copy %p into %r[%s] : !tkw.ring<2, [64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>, tensor<32x32x!tk.ptr<f16>>
  tk.return
}

// -----

tk.func @mask(%base: !tk.ptr<f16>, %v: i32, %s: i32) {
  %p = tk.splat %base : !tk.ptr<f16> -> tensor<64x32x!tk.ptr<f16>>
  %m = tk.splat %v : i32 -> tensor<64x32xi32>
  %r = tkw.local_alloc : !tkw.ring<2, [64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>
  // expected-error @+1 {{the mask must be i1 of the pointers' shape and layout}}
  tkw.async_copy %p, %m into %r[%s] : !tkw.ring<2, [64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>, tensor<64x32x!tk.ptr<f16>>, tensor<64x32xi32>
  tk.return
}

// -----

tk.func @read_type(%s: i32) {
  %r = tkw.local_alloc : !tkw.ring<2, [64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>
  // expected-error @+1 {{reads 'f16', not 'f32'}}
  %t = tkw.local_load %r[%s] : !tkw.ring<2, [64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>> -> tensor<64x32xf32>
  tk.return
}

// -----

tk.func @nvmma_swizzle() {
  // expected-error @+2 {{swizzle must be 32, 64 or 128 bytes, not 48}}
  // expected-error @+1 {{failed to parse Tkw_RingType parameter 'layout'}}
  %r = tkw.local_alloc : !tkw.ring<2, [64, 32], f16, #tkw.nvmma<swizzle = 48, order = [1, 0]>>
  tk.return
}

// -----

tk.func @nvmma_atom_wider_than_slot() {
  // expected-error @+1 {{atoms of 64 elements are wider than the tile's 32}}
  %r = tkw.local_alloc : !tkw.ring<2, [64, 32], f16, #tkw.nvmma<swizzle = 128, order = [1, 0]>>
  tk.return
}

// -----

tk.func @store_type(%v: f32, %s: i32) {
  %t = tk.splat %v : f32 -> tensor<64x32xf32>
  %r = tkw.local_alloc : !tkw.ring<1, [64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>
  // expected-error @+1 {{writes 'f32' into slots of 'f16'}}
  tkw.local_store %t into %r[%s] : tensor<64x32xf32>, !tkw.ring<1, [64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>
  tk.return
}

// -----

tk.func @store_shape(%v: f16, %s: i32) {
  %t = tk.splat %v : f16 -> tensor<32x32xf16>
  %r = tkw.local_alloc : !tkw.ring<1, [64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>
  // expected-error @+1 {{a tile of shape [32, 32] does not match the slots' [64, 32]}}
  tkw.local_store %t into %r[%s] : tensor<32x32xf16>, !tkw.ring<1, [64, 32], f16, #tkw.swizzled<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>
  tk.return
}
