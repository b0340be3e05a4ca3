//===- Passes.td - the TTIR reader's pass -------------------*- tablegen -*-===//

#ifndef TK_TTIR_PASSES_TD
#define TK_TTIR_PASSES_TD

include "mlir/Pass/PassBase.td"

def TkConvertTtToTk : Pass<"tk-convert-tt-to-tk", "::mlir::ModuleOp"> {
  let summary = "convert Triton's TTIR (the tt dialect) into tk";
  let description = [{
    Rewrites every `tt.func` into a `tk.func` and every `tt` op into its tk
    equivalent, keeping each op's location (Triton's Python line):

    - one to one: `get_program_id`/`get_num_programs` (x, y, z become 0, 1,
      2), `make_range`, `splat`, `broadcast`, `expand_dims`, `reshape`,
      `trans`, `cat`, `join`, `addptr`, `load`/`store` (mask, other,
      boundary check, padding), `make_tensor_ptr`/`advance` (tk's block
      pointers), `dot`, `reduce`, `scan`, `atomic_rmw`, `atomic_cas`,
      `fp_to_fp`, `print`, `assert`;
    - into `arith`/`math`: `bitcast`, `clampf` (max then min, NaN-propagating
      or not as `propagateNan` says), `precise_sqrt`, `precise_divf`,
      `mulhiui` (the high half of the double-width product),
      `extern_elementwise` of the common libdevice and OCML math functions,
      `ub.poison` (zero, one of the values poison may take);
    - `split` as two reductions over the last axis of size 2 that keep the
      first and the second element.

    Types follow: `!tt.ptr<T>` becomes `!tk.ptr<T>`, in tensors and block
    pointers too. `tt.divisibility` becomes `tk.divisibility` and the
    arguments' location names (`loc("x_ptr"(...))`) become `tk.arg_names`.
    Cache and eviction hints are dropped: tk decides caching per target.

    What tk cannot run is an error at the op, naming it: calls to functions
    Triton did not inline, pointer/integer casts, atomics of system scope,
    `bf16x3` dots, hex printing, unknown extern functions, and `cf` control
    flow.
  }];
  let dependentDialects = ["::tk::TkDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

#endif // TK_TTIR_PASSES_TD
