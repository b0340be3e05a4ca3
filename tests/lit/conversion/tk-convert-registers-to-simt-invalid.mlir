// RUN: tk-opt %s --split-input-file --verify-diagnostics --tk-convert-registers-to-simt

#blocked = #tkw.linear<shape = [64], register = [[1], [2]], lane = [[4], [8], [16]], warp = [[32]]>
#strided = #tkw.linear<shape = [64], register = [[32], [1]], lane = [[2], [4], [8]], warp = [[16]]>

// A conversion across warps needs the scratch tk-allocate-shared-memory
// gives it.
tk.func @no_scratch() attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #blocked>
  // expected-error @+2 {{a conversion across threads without tkw.scratch (run tk-allocate-shared-memory first)}}
  // expected-error @+1 {{failed to legalize operation 'tkw.convert_layout'}}
  %s = tkw.convert_layout %r : tensor<64xi32, #blocked> -> tensor<64xi32, #strided>
  tk.return
}

// -----

// A kernel without layouts has not been through tk-assign-linear-layouts.
// expected-error @+1 {{the kernel has no layouts (run tk-assign-linear-layouts first)}}
tk.func @no_layouts(%x: !tk.ptr<f32>) {
  tk.return
}

// -----

#acc = #tkw.linear<shape = [8, 8], register = [[0, 1], [1, 0], [2, 0]], lane = [[0, 2], [0, 4], [4, 0]], warp = []>
#a = #tkw.linear<shape = [8, 4], register = [[1, 0], [2, 0], [0, 1], [0, 2]], lane = [[0, 0], [0, 0], [4, 0]], warp = []>
#b = #tkw.linear<shape = [4, 8], register = [[0, 1], [1, 0], [2, 0]], lane = [[0, 2], [0, 4], [0, 0]], warp = []>
#b_lanes = #tkw.linear<shape = [4, 8], register = [[0, 1], [1, 0], [2, 0]], lane = [[0, 4], [0, 2], [0, 0]], warp = []>

// A dot whose b is not held along the product's columns (its lanes
// swapped): no thread holds what its elements need, so both operands go
// through the dot's workgroup memory, which tk-allocate-shared-memory has
// not placed.
tk.func @fma_operand_elsewhere(%x: f16, %y: f16) attributes {tkw.num_warps = 1 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %a = tk.splat %x : f16 -> tensor<8x4xf16, #a>
  %b = tk.splat %y : f16 -> tensor<4x8xf16, #b_lanes>
  %zero = arith.constant dense<0.000000e+00> : tensor<8x8xf32, #acc>
  // expected-error @+2 {{reads an operand through workgroup memory without tkw.scratch}}
  // expected-error @+1 {{failed to legalize operation 'tk.dot'}}
  %c = tk.dot %a, %b, %zero : tensor<8x4xf16, #a> * tensor<4x8xf16, #b_lanes> -> tensor<8x8xf32, #acc>
  tk.return
}

// -----

#acc = #tkw.linear<shape = [8, 8], register = [[0, 1], [1, 0], [2, 0]], lane = [[0, 2], [0, 4], [4, 0]], warp = []>
#a = #tkw.linear<shape = [8, 4], register = [[1, 0], [2, 0], [0, 1], [0, 2]], lane = [[0, 0], [0, 0], [4, 0]], warp = []>
#b = #tkw.linear<shape = [4, 8], register = [[0, 1], [1, 0], [2, 0]], lane = [[0, 2], [0, 4], [0, 0]], warp = []>

// A dot that records a matrix intrinsic needs the backend's unit to emit
// it (tk-opt has none).
tk.func @intrinsic_without_unit(%x: f16, %y: f16) attributes {tkw.num_warps = 1 : i32, tkw.target = "cuda-sm80:warp-size=8", tkw.threads_per_warp = 8 : i32} {
  %a = tk.splat %x : f16 -> tensor<8x4xf16, #a>
  %b = tk.splat %y : f16 -> tensor<4x8xf16, #b>
  %zero = arith.constant dense<0.000000e+00> : tensor<8x8xf32, #acc>
  // expected-error @+1 {{failed to legalize operation 'tk.dot'}}
  %c = tk.dot %a, %b, %zero {tkw.intrinsic = "mma.m16n8k16.f32.f16"} : tensor<8x4xf16, #a> * tensor<4x8xf16, #b> -> tensor<8x8xf32, #acc>
  tk.return
}

// -----

#copies = #tkw.linear<shape = [32], register = [[1], [16]], lane = [[2], [4], [8]], warp = [[0]]>

// Both warps hold each element, and the old values are read: warp 1 needs
// warp 0's, passed through the atomic's scratch, which only
// tk-allocate-shared-memory gives it (`tkw.scratch`).
tk.func @old_values_of_copies(%x: !tk.ptr<i32>) attributes {tkw.num_warps = 2 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %r = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #copies>
  %xs = tk.splat %x : !tk.ptr<i32> -> tensor<32x!tk.ptr<i32>, #copies>
  %p = tk.addptr %xs, %r : tensor<32x!tk.ptr<i32>, #copies>, tensor<32xi32, #copies>
  // expected-error @+1 {{failed to legalize operation 'tk.atomic_rmw'}}
  %old = tk.atomic_rmw max, relaxed, %p, %r : (tensor<32x!tk.ptr<i32>, #copies>, tensor<32xi32, #copies>) -> tensor<32xi32, #copies>
  tk.store %p, %old : tensor<32x!tk.ptr<i32>, #copies>
  tk.return
}
