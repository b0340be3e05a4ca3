// RUN: tk-opt %s --split-input-file --tk-check-bounds --verify-diagnostics

// A pointer chosen by an scf.if is not followed out of it (arith.select is):
// the access through it cannot name one buffer, and is refused there.

tk.func @pointer_from_if(%x: !tk.ptr<f32>, %y: !tk.ptr<f32>, %c: i1) {
  %p = scf.if %c -> !tk.ptr<f32> {
    scf.yield %x : !tk.ptr<f32>
  } else {
    scf.yield %y : !tk.ptr<f32>
  }
  %v = arith.constant 1.0 : f32
  // expected-error @+1 {{bounds checking: the pointers of this store do not come from one argument}}
  tk.store %p, %v : !tk.ptr<f32>
  tk.return
}

// -----

// arith.select between pointers into two buffers: an access through it
// could not name one.

tk.func @select_two_buffers(%x: !tk.ptr<f32>, %y: !tk.ptr<f32>, %c: i1) {
  // expected-error @+1 {{bounds checking: this op mixes pointers into 'arg0' and 'arg1'}}
  %p = arith.select %c, %x, %y : !tk.ptr<f32>
  %v = arith.constant 1.0 : f32
  tk.store %p, %v : !tk.ptr<f32>
  tk.return
}
