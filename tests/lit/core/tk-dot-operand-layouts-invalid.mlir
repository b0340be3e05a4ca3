// RUN: tk-opt %s --split-input-file --tk-dot-operand-layouts -verify-diagnostics
//
// What tk-dot-operand-layouts refuses: a dot that records an intrinsic its
// function's target does not have, or a target it cannot know.

#acc = #tkw.linear<shape = [16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>
tk.func @unknown_intrinsic() attributes {tkw.target = "cuda-sm80"} {
  %a = arith.constant dense<0.0> : tensor<16x16xf16>
  %b = arith.constant dense<0.0> : tensor<16x8xf16>
  %c = arith.constant dense<0.0> : tensor<16x8xf32, #acc>
  // expected-error @below {{tk-dot-operand-layouts: cuda-sm80 has no matrix intrinsic "mfma.f32.32x32x8f16"}}
  %d = tk.dot %a, %b, %c {tkw.intrinsic = "mfma.f32.32x32x8f16"} : tensor<16x16xf16> * tensor<16x8xf16> -> tensor<16x8xf32, #acc>
  tk.return
}

// -----

#acc = #tkw.linear<shape = [16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>
tk.func @no_target() {
  %a = arith.constant dense<0.0> : tensor<16x16xf16>
  %b = arith.constant dense<0.0> : tensor<16x8xf16>
  %c = arith.constant dense<0.0> : tensor<16x8xf32, #acc>
  // expected-error @below {{tk-dot-operand-layouts: the dot records an intrinsic but the function records no tkw.target}}
  %d = tk.dot %a, %b, %c {tkw.intrinsic = "mma.m16n8k16.f32.f16"} : tensor<16x16xf16> * tensor<16x8xf16> -> tensor<16x8xf32, #acc>
  tk.return
}
