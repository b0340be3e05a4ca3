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

tk.func @blocked_tiles() attributes {tkw.target = "cuda-sm80"} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #tkw.blocked<sizePerWarp = [64], warpsPerCTA = [1], order = [0]>>
  // expected-error @below {{tk-allocate-shared-memory: 'tkw.convert_layout' has a tile without a #tkw.linear layout}}
  %s = tkw.convert_layout %r : tensor<64xi32, #tkw.blocked<sizePerWarp = [64], warpsPerCTA = [1], order = [0]>> -> tensor<64xi32, #tkw.blocked<sizePerWarp = [32], warpsPerCTA = [1], order = [0]>>
  tk.return
}
