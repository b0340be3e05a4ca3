//===- Passes.td - CPU backend passes -----------------------*- tablegen -*-===//
//
// Passes that only the CPU backend runs.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CPU_PASSES_TD
#define TK_BACKENDS_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def TkCpuAddLaunchWrapper : Pass<"tk-cpu-add-launch-wrapper", "::mlir::ModuleOp"> {
  let summary = "add the <kernel>_tk_launch entry point the CPU driver calls";
  let description = [{
    For every kernel lowered by `tk-convert-to-loops` (a `func.func` with the
    `tk_kernel` attribute), adds

    ```c
    void <kernel>_tk_launch(void **args, int32_t pid_x, int32_t pid_y,
                            int32_t pid_z, int32_t nprog_x, int32_t nprog_y,
                            int32_t nprog_z);
    ```

    where `args[i]` points at argument i's value, as cuLaunchKernel's
    kernelParams. The kernel itself becomes internal so LLVM inlines it into
    the wrapper.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def TkCpuApproximateMath : Pass<"tk-cpu-approximate-math", "::mlir::ModuleOp"> {
  let summary = "replace f32 exp, log, tanh, erf, ... by polynomials";
  let description = [{
    LLVM has no vector exp on x86 without a vector math library, so a loop
    calling `expf` stays scalar. MLIR's polynomial approximations (a few ulp)
    are straight-line arithmetic that vectorises.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

#endif // TK_BACKENDS_CPU_PASSES_TD
