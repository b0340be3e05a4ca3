//===- Passes.td - tk conversion passes ---------------------*- tablegen -*-===//
//
// Conversions that take tile ops out of the tk dialect: to the loop nests
// of one host thread (the CPU backend), and from the register pipeline's
// layouts to the code of one GPU thread (every GPU backend).
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_PASSES_TD
#define TK_CORE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def TkConvertToLoops : Pass<"tk-convert-to-loops", "::mlir::ModuleOp"> {
  let summary = "lower tile ops to scalar loop nests over stack buffers (CPU)";
  let description = [{
    Rewrites every `tk.func` into a `func.func` that computes its tiles with
    `scf.for` loop nests over scalars, for one host thread a program.
    Pointers become `!llvm.ptr` and memory accesses `llvm.load` /
    `llvm.store` / `llvm.atomicrmw` under `scf.if` on the mask, so masked-off
    lanes never touch memory.

    Element-wise tile ops (arith, math, splat, make_range, broadcast,
    expand_dims, trans, reshape, addptr, loads) are not given buffers: each
    is recomputed, element by element, inside the loop of the op that
    consumes it (a store, a reduction, a dot operand, a loop-carried value).
    A tile is kept in a stack buffer (`memref.alloca` at function entry) only
    when it is used twice, used in another region, replicated by a
    broadcast, produced by a reduction, scan or dot, or is a load that a
    write could overtake. A load may fuse into the store that consumes it
    (`fuse-loads-into-stores`, on by default): each lane still reads before
    it writes, but lanes are interleaved, so a program whose store overwrites
    what *another lane* of the same tile loads sees the new value. On a GPU
    such a program races between warps anyway; turn the option off to read
    every tile completely before any lane is written.

    The kernel gets six trailing i32 arguments: program ids x, y, z and
    numbers of programs x, y, z.

    `tk.reduce` uses 16 partial accumulators along the innermost axis so
    that LLVM can vectorise it without reassociating floats; `tk.dot` is an
    i-k-j loop nest whose inner loop runs along contiguous rows (f16/bf16
    inputs are widened; an f16 accumulator is kept in f32 and rounded once).
  }];
  let options = [
    Option<"fuseLoadsIntoStores", "fuse-loads-into-stores", "bool",
           /*default=*/"true",
           "compute loaded tiles inside the loop of the store that uses them">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
}

def TkExpandFp8 : Pass<"tk-expand-fp8"> {
  let summary = "write conversions to and from fp8 as integer arithmetic on "
                "their bits";
  let description = [{
    No target computes on fp8 (f8E4M3FN, f8E5M2) and LLVM has no such type:
    tiles of it move as bytes (tk::getMemoryType) and are computed in f32.
    This pass, which every backend that declares fp8 runs after lowering
    tiles to scalars and before its conversion to LLVM, rewrites what is
    left: `arith.truncf` to fp8 (to nearest, ties to even; past the largest
    finite value, infinity for f8E5M2 and NaN for f8E4M3FN, as APFloat
    converts), `arith.extf` from fp8 (exactly), conversions between fp8 and
    integers (through f32) and fp8 constants, as
    integer arithmetic on the bits and `arith.bitcast`s that LLVM's type
    converter makes i8. Scalars only: the lowerings convert fp8 element by
    element.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TkRemoveDeadLoopValues : Pass<"tk-remove-dead-loop-values"> {
  let summary = "drop the values a loop carries that nothing reads: what an "
                "iteration argument feeds only feeds its own next value";
  let description = [{
    After `tk-convert-registers-to-simt` a loop carries every register of its
    tiles; a tile of pointers whose loads use only the first pointer of each
    contiguous run still advances every pointer each trip, each an
    iteration argument whose only reader is its own increment. LLVM's dead
    code elimination removes such cycles of phis; SPIR-V consumers need not
    (NVIDIA's Vulkan driver kept the 42 dead 64-bit pointers of a 256x128
    matmul in registers). For each `scf.for` result that nothing uses, where
    everything its iteration argument reaches in the body is free of memory
    effects and regions and reaches the terminator only as that same
    argument's next value, the argument is yielded unchanged and the ops
    that computed its next value are erased; the canonicalizer then drops
    the argument. Innermost loops first, until nothing changes.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def TkConvertRegistersToSIMT
    : Pass<"tk-convert-registers-to-simt", "::mlir::ModuleOp"> {
  let summary = "lower tiles in #tkw.linear layouts to the registers of one "
                "GPU thread";
  let description = [{
    Pass 8 of the register pipeline (DESIGN.md §3), after
    `tk-allocate-shared-memory` and `tk-insert-barriers`. A tile becomes
    the values its layout gives each thread, one per register (a 1:N type
    conversion), and every op works on the registers a thread holds:
    arith and math once per register; `make_range` from each register's
    coordinate (the layout applied to register, lane and warp); `splat`,
    `expand_dims` and `broadcast` by reusing registers; loads and stores in
    runs of registers that AxisFacts proves contiguous, aligned and under
    one mask value, one branch a run, only the first holder of a broadcast
    element storing it; `tk.reduce` within a thread, then butterfly
    `gpu.shuffle`s over the lane bits along the axis, then through its
    scratch across warps; `tkw.convert_layout` as a register permutation
    where every element stays in its thread, else through its scratch in
    rounds; `tk.dot` on the operands tk-dot-operand-layouts gave it, as
    fused multiply-adds in each thread (f32 for narrow floats), or, where
    it records a matrix intrinsic, one intrinsic per accumulator fragment
    and step of k, steps outermost, that the backend's MatrixUnit emits
    from the fragments' registers (`emitFragmentProduct`; tk-opt has no
    unit). An operand not in its fragments (`tk::planDotOperands`) is
    first written by the threads that hold it to the dot's scratch, in a
    swizzled layout, in vectors of up to 16 bytes where the layouts keep
    registers consecutive; after a barrier each step reads its fragments
    from there, by the unit's matrix loads where their rows fit
    (`loadMatrices`: ldmatrix), else in vectors; `tk.scan` by
    recursive doubling over the bits of the position along its axis, lowest
    first: a register bit in the thread, a lane bit by one shuffle, the
    warps' bits (consecutive, only registers above them) through its
    scratch, the lower positions always the combiner's first operand. `scf`
    ops carry the registers of their tiles. A `!tkw.ring` is the element of
    the scratch buffer where its first slot starts: `tkw.async_copy` copies
    each run of a thread's pointers (`tk::getAsyncCopyRun`) with the
    backend's AsyncCopyUnit, a masked-off run as zeros, only the first
    holder of a broadcast element copying it; `tkw.async_commit` and
    `tkw.async_wait` are the unit's; `tkw.local_load` reads a slot, or an
    aligned block of one, as the dot reads its scratch (by matrix loads
    where they fit).

    The scratch of each op is at its `tkw.scratch` offset in one workgroup
    `memref.global` per element type of the kernel's `tkw.shared_memory`
    bytes; the barriers between ops are those `tk-insert-barriers` placed.
    Program ids come from `gpu.block_id`; the output is one `func.func` of
    scalars, `scf`, `memref` (workgroup memory) and `gpu` ops (barriers,
    shuffles, thread ids), which each backend takes on to its own dialect.
    An op it has no pattern for makes it fail: the backends then refuse
    the kernel as unsupported on the target, with the op named.

    A backend hands the pass its units in C++. tk-opt runs it with the
    units a backend registered for a preset (`units=<preset>`,
    tk::registerTargetUnits), which must be the kernels' target preset:
    the pass then gives what the backend's pipeline gives (each backend's
    `passes-in-tk-opt.tk` checks that).
  }];
  let options = [
    Option<"units", "units", "std::string", /*default=*/"\"\"",
           "the preset whose registered matrix and async copy units to use "
           "(empty: none)">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::gpu::GPUDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // TK_CORE_CONVERSION_PASSES_TD
