// RUN: tk-opt %s --split-input-file --tk-distribute-to-warps -verify-diagnostics

// A reduction along a dimension split across warps needs shared memory.
#blocked = #tkw.blocked<sizePerWarp = [64, 32], warpsPerCTA = [1, 4], order = [1, 0]>
#slice = #tkw.slice<dim = 1, parent = #blocked>
tk.func @cross_warp_reduce(%p: !tk.ptr<f32>) attributes {tkw.num_warps = 4 : i32} {
  %ps = tk.splat %p : !tk.ptr<f32> -> tensor<64x128x!tk.ptr<f32>, #blocked>
  %x = tk.load %ps : tensor<64x128x!tk.ptr<f32>, #blocked>
  // expected-error @+1 {{cannot be distributed to warps: dimension 1 is split across warps}}
  %s = tk.reduce(%x : tensor<64x128xf32, #blocked>) {axis = 1 : i32} -> tensor<64xf32, #slice> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    tk.reduce.return %r : f32
  }
  tk.return
}

// -----

// Operands whose layouts give a warp different elements than the result.
#rows = #tkw.blocked<sizePerWarp = [16, 64], warpsPerCTA = [4, 1], order = [1, 0]>
#cols = #tkw.blocked<sizePerWarp = [64, 16], warpsPerCTA = [1, 4], order = [1, 0]>
tk.func @mismatch(%p: !tk.ptr<f32>) attributes {tkw.num_warps = 4 : i32} {
  %ps = tk.splat %p : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>, #rows>
  %offs = arith.constant dense<1> : tensor<64x64xi32, #cols>
  // expected-error @+1 {{warp 0 holds a block of the operands that does not match}}
  %q = tk.addptr %ps, %offs : tensor<64x64x!tk.ptr<f32>, #rows>, tensor<64x64xi32, #cols>
  tk.return
}

// -----

// A tile without a layout.
tk.func @no_layout(%p: !tk.ptr<f32>) attributes {tkw.num_warps = 4 : i32} {
  // expected-error @+1 {{has no layout; run tk-assign-layouts first}}
  %ps = tk.splat %p : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  tk.return
}

// -----

// expected-error @+1 {{run tk-assign-layouts first}}
tk.func @no_num_warps(%p: !tk.ptr<f32>) {
  tk.return
}
