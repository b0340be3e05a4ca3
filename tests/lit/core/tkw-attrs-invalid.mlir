// RUN: tk-opt %s --split-input-file -verify-diagnostics
//
// The ring a load's async copies fill (#tkw.ring) is checked where it is
// written: on a tk.load, at least 2 stages, operand 0 (A) or 1 (B).

tk.func @ring_on_a_store(%p: !tk.ptr<f32>, %v: f32) {
  // expected-error @below {{'tkw.ring' must be a #tkw.ring layout on a tk.load}}
  tk.store %p, %v {tkw.ring = #tkw.ring<stages = 3, product = 0, operand = 0>} : !tk.ptr<f32>
  tk.return
}

// -----

tk.func @one_stage(%p: !tk.ptr<f32>) {
  // expected-error @below {{a ring has at least 2 stages, not 1}}
  %x = tk.load %p {tkw.ring = #tkw.ring<stages = 1, product = 0, operand = 0>} : !tk.ptr<f32>
  tk.return
}

// -----

tk.func @third_operand(%p: !tk.ptr<f32>) {
  // expected-error @below {{operand must be 0 (A) or 1 (B), not 2}}
  %x = tk.load %p {tkw.ring = #tkw.ring<stages = 2, product = 0, operand = 2>} : !tk.ptr<f32>
  tk.return
}

// -----

// A tile in workgroup memory is written by runs or by a held product's
// registers (#tkw.shared's `written`), nothing else.
tk.func @shared_written_by_a_split(%p: !tk.ptr<f32>) {
  %r = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  // expected-error @below {{a shared tile is written by runs (#tkw.runs) or by a held product's registers (#tkw.accumulator), not #tkw.split<parts = 1, across = "memory">}}
  %x = arith.sitofp %r {tkw.layout = #tkw.shared<written = #tkw.split<parts = 1, across = "memory">>} : tensor<128xi32> to tensor<128xf32>
  tk.return
}
