// RUN: tk-opt %s --split-input-file --verify-diagnostics --tk-rewrite-block-pointers

// A block pointer chosen by an scf.if: the pass rewrites them through
// loops only, and says which op it stopped at.

tk.func @chosen(%x: !tk.ptr<f32>, %y: !tk.ptr<f32>, %m: i64, %c: i1) {
  %c0 = arith.constant 0 : i32
  %a = tk.make_block_ptr %x, [%m], [%m], [%c0] {order = array<i32: 0>} : !tk.ptr<f32> -> !tk.ptr<tensor<16xf32>>
  %b = tk.make_block_ptr %y, [%m], [%m], [%c0] {order = array<i32: 0>} : !tk.ptr<f32> -> !tk.ptr<tensor<16xf32>>
  %p = scf.if %c -> !tk.ptr<tensor<16xf32>> {
    // expected-error @+1 {{'scf.yield' op takes a block pointer; tk-rewrite-block-pointers rewrites them through tk.advance, tk.load, tk.store and scf.for only}}
    scf.yield %a : !tk.ptr<tensor<16xf32>>
  } else {
    scf.yield %b : !tk.ptr<tensor<16xf32>>
  }
  %v = tk.load %p : !tk.ptr<tensor<16xf32>>
  tk.store %b, %v : !tk.ptr<tensor<16xf32>>
  tk.return
}
