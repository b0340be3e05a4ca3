// RUN: tk-opt %s --split-input-file -verify-diagnostics
//
// The dialect refuses a #tkw.cooperative_matrix whose placement does not
// hold whole matrices (a lane or low register leaving its matrix, a higher
// register moving within one), and a conversion of such a tile to any
// layout but its placement.

#placement = #tkw.linear<shape = [16, 16], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [1, 0], [2, 0], [4, 0], [8, 0]], warp = []>

tk.func @valid() {
  %c = arith.constant dense<0.0> : tensor<16x16xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #placement>>
  %placed = tkw.convert_layout %c : tensor<16x16xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #placement>> -> tensor<16x16xf32, #placement>
  tk.return
}

// -----

#wide = #tkw.linear<shape = [16, 32], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 16], [1, 0], [2, 0], [4, 0], [8, 0]], warp = [[0, 8]]>

tk.func @lane_leaves_its_matrix() {
  // expected-error @below {{lane bit 0 of the placement leaves its matrix}}
  %c = arith.constant dense<0.0> : tensor<16x32xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #wide>>
  tk.return
}

// -----

#two = #tkw.linear<shape = [16, 32], register = [[0, 1], [0, 2], [0, 4], [1, 0]], lane = [[0, 8], [0, 16], [2, 0], [4, 0], [8, 0]], warp = []>

tk.func @register_moves_within_a_matrix() {
  // expected-error @below {{register bit 3 of the placement moves within a matrix}}
  %c = arith.constant dense<0.0> : tensor<16x32xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #two>>
  tk.return
}

// -----

#placement = #tkw.linear<shape = [16, 16], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [1, 0], [2, 0], [4, 0], [8, 0]], warp = []>
#other = #tkw.linear<shape = [16, 16], register = [[1, 0], [2, 0], [4, 0]], lane = [[8, 0], [0, 1], [0, 2], [0, 4], [0, 8]], warp = []>

tk.func @converts_elsewhere() {
  %c = arith.constant dense<0.0> : tensor<16x16xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #placement>>
  // expected-error @below {{expected a #tkw.cooperative_matrix tile to convert to or from its placement}}
  %placed = tkw.convert_layout %c : tensor<16x16xf32, #tkw.cooperative_matrix<rows = 16, cols = 16, placement = #placement>> -> tensor<16x16xf32, #other>
  tk.return
}
