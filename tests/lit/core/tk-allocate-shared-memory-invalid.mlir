// RUN: tk-opt %s --split-input-file --tk-allocate-shared-memory -verify-diagnostics
//
// What tk-allocate-shared-memory refuses: a kernel whose target it cannot
// know, and a layout change between tiles that are not in #tkw.linear
// layouts (the per-warp layouts say nothing of lanes).

// expected-error @below {{tk-allocate-shared-memory: no target: pass `target=` or run tk-assign-linear-layouts first (it records tkw.target)}}
tk.func @no_target() {
  tk.return
}

// -----

tk.func @swizzled_tiles(%v: i32) attributes {tkw.target = "cuda-sm80"} {
  %r = tk.splat %v : i32 -> tensor<8x8xi32, #tkw.swizzled<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>>
  // expected-error @below {{tk-allocate-shared-memory: 'tkw.convert_layout' has a tile without a #tkw.linear layout}}
  %s = tkw.convert_layout %r : tensor<8x8xi32, #tkw.swizzled<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>> -> tensor<8x8xi32, #tkw.swizzled<vec = 2, perPhase = 1, maxPhase = 1, order = [1, 0]>>
  tk.return
}
