// RUN: tk-opt %s --allow-unregistered-dialect --split-input-file --tk-convert-to-loops -verify-diagnostics

// An op of no registered dialect (tk-opt --allow-unregistered-dialect) is an
// error naming it: it has no dialect to ask about, which used to crash the
// lowering.

tk.func @tile_op(%out: !tk.ptr<f32>) {
  %r = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  // expected-error @below {{'foo.bar' op tk-convert-to-loops}}
  %x = "foo.bar"(%r) : (tensor<128xi32>) -> tensor<128xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %p = tk.addptr %os, %r : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
  tk.store %p, %x : tensor<128x!tk.ptr<f32>>
  tk.return
}

// -----

tk.func @scalar_op(%out: !tk.ptr<f32>, %n: i32) {
  // expected-error @below {{the lowering supports tk, arith, math and scf ops here, not this one}}
  %x = "foo.baz"(%n) : (i32) -> f32
  tk.store %out, %x : !tk.ptr<f32>
  tk.return
}
