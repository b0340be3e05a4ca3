// RUN: tk-opt %s --split-input-file --tk-assign-linear-layouts="target=cuda-sm80 num-warps=4" -verify-diagnostics
// RUN: not tk-opt %s --tk-assign-linear-layouts="target=tpu-v9" 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not tk-opt %s --tk-assign-linear-layouts="num-warps=3" 2>&1 | FileCheck %s --check-prefix=WARPS
//
// What tk-assign-linear-layouts refuses: a tile in another layout system
// (it would be mixed with this one's), a target no backend registered, a
// workgroup that is not a power of two of warps.

// TARGET: tk-assign-linear-layouts: {{.*}}tpu-v9
// WARPS: tk-assign-linear-layouts: {{.*}}3

// expected-error @below {{tk-assign-linear-layouts: a tile already has the layout #tkw.swizzled<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>, which is not #tkw.linear}}
tk.func @swizzled_tile(%x: !tk.ptr<f32>, %v: i32) {
  %r = tk.splat %v : i32 -> tensor<8x8xi32, #tkw.swizzled<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>>
  tk.return
}
