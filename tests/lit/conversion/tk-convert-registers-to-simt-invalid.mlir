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
