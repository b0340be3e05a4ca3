// RUN: tk-opt %s --split-input-file --tk-drop-layouts -verify-diagnostics

// Layouts carry the split of a tile over several warps.
// expected-error @+1 {{tk-drop-layouts: the kernel runs on 4 warps}}
tk.func @four_warps(%p: !tk.ptr<f32>) attributes {tkw.num_warps = 4 : i32} {
  tk.return
}

// -----

// Sub-tiles of an intrinsic-level dot have no layout-free lowering.
#blocked = #tkw.blocked<sizePerWarp = [16, 16], warpsPerCTA = [1, 1], order = [1, 0]>
tk.func @extract(%p: !tk.ptr<f32>) attributes {tkw.num_warps = 1 : i32} {
  %ps = tk.splat %p : !tk.ptr<f32> -> tensor<16x16x!tk.ptr<f32>, #blocked>
  %x = tk.load %ps : tensor<16x16x!tk.ptr<f32>, #blocked>
  // expected-error @+1 {{tk-drop-layouts: sub-tiles of matrix intrinsics}}
  %y = tkw.extract %x [0, 8] : tensor<16x16xf32, #blocked> -> tensor<16x8xf32, #blocked>
  tk.return
}
