// RUN: tk-opt %s --split-input-file --tk-convert-to-loops -verify-diagnostics

// One host thread holds every tile, so the CPU form has no layouts to move a
// tile between: a tkw.convert_layout left in the kernel is refused by name
// (KernelLowering::lowerOp), not lowered as a GPU move.

tk.func @convert_layout(%out: !tk.ptr<f32>) {
  %r = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %x = arith.sitofp %r : tensor<128xi32> to tensor<128xf32>
  // expected-error @below {{'tkw.convert_layout' op tk-convert-to-loops: the CPU form has no layouts to convert between (one thread holds every tile)}}
  %y = tkw.convert_layout %x : tensor<128xf32> -> tensor<128xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %p = tk.addptr %os, %r : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
  tk.store %p, %y : tensor<128x!tk.ptr<f32>>
  tk.return
}
