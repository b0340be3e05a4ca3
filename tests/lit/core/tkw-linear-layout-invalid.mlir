// RUN: tk-opt %s --split-input-file -verify-diagnostics
//
// The dialect refuses a #tkw.linear that is not a tile's layout: bases out
// of their dimension, a size that is not a power of two, elements no index
// holds, a tile of another shape, and lanes or warps other than the
// function's.

tk.func @basis_outside_the_tile() {
  // expected-error @below {{invalid linear layout}}
  %c = arith.constant dense<0.0> : tensor<4xf32, #tkw.linear<shape = [4], register = [[1], [4]], lane = [], warp = []>>
  tk.return
}

// -----

// expected-error @below {{invalid linear layout}}
tk.func @size_not_a_power_of_two(%c: tensor<6xf32, #tkw.linear<shape = [6], register = [[1], [2]], lane = [], warp = []>>) {
  tk.return
}

// -----

tk.func @basis_of_the_wrong_rank() {
  // expected-error @below {{invalid linear layout}}
  %c = arith.constant dense<0.0> : tensor<4x4xf32, #tkw.linear<shape = [4, 4], register = [[1], [2]], lane = [], warp = []>>
  tk.return
}

// -----

// Two register bits both reach column 1: column 2 and 3 are held by no one.
tk.func @not_surjective() {
  // expected-error @below {{expected every element of the tile to be held by some register, lane and warp; this layout reaches 2 of 4}}
  %c = arith.constant dense<0.0> : tensor<4xf32, #tkw.linear<shape = [4], register = [[1], [1]], lane = [], warp = []>>
  tk.return
}

// -----

tk.func @another_shape() {
  // expected-error @below {{expected a tile of the layout's shape [8], not [4]}}
  %c = arith.constant dense<0.0> : tensor<4xf32, #tkw.linear<shape = [8], register = [[1], [2], [4]], lane = [], warp = []>>
  tk.return
}

// -----

tk.func @missing_lanes() {
  // expected-error @below {{expected 'lane'}}
  %c = arith.constant dense<0.0> : tensor<4xf32, #tkw.linear<shape = [4], register = [[1], [2]], warp = []>>
  tk.return
}

// -----

tk.func @lanes_of_another_target() attributes {tkw.threads_per_warp = 32 : i32} {
  // expected-error @below {{a tile's layout has 2 lanes where 'tkw.threads_per_warp' of the function says 32}}
  %c = arith.constant dense<0.0> : tensor<4xf32, #tkw.linear<shape = [4], register = [[1]], lane = [[2]], warp = []>>
  tk.return
}

// -----

tk.func @warps_of_another_workgroup(%p: !tk.ptr<f32>) attributes {tkw.num_warps = 4 : i32} {
  // expected-error @below {{a tile's layout has 2 warps where 'tkw.num_warps' of the function says 4}}
  %r = tk.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32, #tkw.linear<shape = [4], register = [[1], [2]], lane = [], warp = [[0]]>>
  tk.return
}
