// RUN: tk-opt --tk-convert-tt-to-tk %S/../../ttir/corpus/attention_forward/kernel.ttir --mlir-print-debuginfo | FileCheck %s
// RUN: not tk-opt --tk-convert-tt-to-tk %s 2>&1 | FileCheck %s --check-prefix=LOCATION
// RUN: tk-opt --from ttir %S/../../ttir/corpus/vector_add/kernel.ttir --canonicalize | FileCheck %s --check-prefix=FROM
// RUN: not tk-opt --from=triton %s 2>&1 | FileCheck %s --check-prefix=BAD-FROM
//
// TTIR Triton 3.6 wrote (the corpus' FlashAttention forward) imports whole,
// each op keeping its location: the line of the Python source.

// CHECK: tk.func @attention_forward(
// CHECK-SAME: tk.arg_names = ["q_ptr", "k_ptr", "v_ptr", "o_ptr", "sm_scale", "stride_h", "stride_m", "N_CTX"]
// CHECK: scf.for
// CHECK: tk.dot
// CHECK: tk.reduce
// CHECK: math.exp2
// CHECK: tk.dot
// CHECK: tk.store
// CHECK-DAG: loc("{{.*}}make_corpus.py":{{[0-9]+}}:{{[0-9]+}})

// `--from ttir` converts first, then runs the other passes.
// FROM: tk.func @vector_add(
// FROM: tk.store

// BAD-FROM: tk-opt: --from triton: expected tk or ttir

// An error points at the Python line Triton recorded.
// LOCATION: kernel.py:12:9: error: 'tt.atomic_rmw' cannot be imported into tk: tk's atomics are device-wide; this one is of system scope
tt.func public @k(%p: !tt.ptr<f32>, %v: f32) {
  %0 = tt.atomic_rmw fadd, relaxed, sys, %p, %v : (!tt.ptr<f32>, f32) -> f32 loc(#loc1)
  tt.return
}
#loc = loc("kernel.py":12:9)
#loc1 = loc("old"(#loc))
