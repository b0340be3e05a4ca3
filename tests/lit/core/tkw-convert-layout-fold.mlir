// RUN: tk-opt %s --canonicalize | FileCheck %s
//
// tkw.convert_layout between two equal types is the identity, folded away,
// unless it carries a thread layout (tkw.layout): at the thread level the
// layouts are attributes, not encodings, and the op is the move itself (a
// held accumulator written to workgroup memory after its loop).

// CHECK-LABEL: tk.func @identity
// CHECK: %[[X:.*]] = arith.sitofp
// CHECK-NOT: tkw.convert_layout
// CHECK: tk.store %{{.*}}, %[[X]]
tk.func @identity(%out: !tk.ptr<f32>) {
  %r = tk.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %x = arith.sitofp %r : tensor<4xi32> to tensor<4xf32>
  %s = tk.splat %out : !tk.ptr<f32> -> tensor<4x!tk.ptr<f32>>
  %p = tk.addptr %s, %r : tensor<4x!tk.ptr<f32>>, tensor<4xi32>
  %y = tkw.convert_layout %x : tensor<4xf32> -> tensor<4xf32>
  tk.store %p, %y : tensor<4x!tk.ptr<f32>>
  tk.return
}
