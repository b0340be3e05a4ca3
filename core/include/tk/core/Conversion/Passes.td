//===- Passes.td - tk conversion passes ---------------------*- tablegen -*-===//
//
// Conversions that take tile ops out of the tk dialect. Shared by the
// backends that generate LLVM IR from scalar loop nests (the CPU backend, and
// any backend's single-lane reference path).
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
    The GPU form of the same lowering is `tk-convert-to-simt`.
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

def TkHoldAccumulators : Pass<"tk-hold-accumulators", "::mlir::ModuleOp"> {
  let summary = "keep loop-carried dot accumulators in the matrix unit's "
                "registers";
  let description = [{
    The first thread-level decision, on which the others depend: for every
    `scf.for` of every `tk.func`, the iteration arguments that the
    backend's matrix unit keeps in its accumulator registers across trips
    (a matmul's K loop; attention's output, rescaled in place). An argument
    is held when its one use is a `tk.dot`'s accumulator in the loop's
    body, reached through element-wise ops of its own shape and type at
    most, the dot's result is yielded as the argument's next value and read
    by nothing else, and the unit holds the product with an accumulator of
    the argument's element type (a narrower one is rounded after every
    trip, which registers would skip). Each held dot is numbered as a
    product (`tkw.product`, with the unit's statement of its registers in
    `tkw.held`) and its loop records `#tkw.accumulator<product>` at the
    argument in `tkw.iter_layouts`.

    `tk-assign-thread-layouts` holds these accumulators and no others, and
    decides where each loop's results go after it; `tk-hold-rows` (next)
    decides around them which values per row stay in registers. Without a
    matrix unit (`tk-opt` gives the target's with `target-units=true`, none
    otherwise) nothing is held. A kernel whose thread layouts are already
    assigned is refused.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "the TargetInfo spec (a registered preset) whose warp size the "
           "threads form warps of; required">,
    Option<"numWarps", "num-warps", "int64_t", /*default=*/"4",
           "warps of a workgroup (a power of two)">,
    Option<"targetUnits", "target-units", "bool", /*default=*/"false",
           "take the matrix and async copy units the target's backend "
           "registered (tk::registerTargetUnits: tk-opt registers every "
           "built backend's); a backend's pipeline hands over its own">
  ];
  let dependentDialects = ["::tk::warp::TkwDialect"];
}

def TkHoldRows : Pass<"tk-hold-rows", "::mlir::ModuleOp"> {
  let summary = "keep one value per row of a held product in the registers "
                "of the lanes holding the row";
  let description = [{
    The second thread-level decision, after `tk-hold-accumulators`: the 1-D
    tiles of one value per row of a product the matrix unit computes in
    registers (FlashAttention's running max and sum) that stay in the
    registers of the lanes holding the row, one register per row a thread
    holds, instead of workgroup memory with a barrier on every write. They
    are the row reductions of such a product with a commutative combiner
    (max, sum: every lane holding the row then computes the same value), the
    loop-carried tiles updated from them and the element-wise tiles of
    those, provided every read is at a row of the same offsets (another such
    tile, `m[:, None]` read at the product's registers). Each is recorded as
    `#tkw.rows<product>`: `tkw.layout` on the op defining it, and at the
    argument in its loop's `tkw.iter_layouts` for a loop-carried one; a
    product not numbered by `tk-hold-accumulators` gets the next number
    (`tkw.product`, with the unit's `tkw.held`).

    `tk-assign-thread-layouts` (next) keeps these tiles in registers and no
    others. Without a matrix unit (`tk-opt` gives the target's with
    `target-units=true`, none otherwise) nothing is kept. A kernel whose
    thread layouts are already assigned is refused.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "the TargetInfo spec (a registered preset) whose warp size the "
           "threads form warps of; required">,
    Option<"numWarps", "num-warps", "int64_t", /*default=*/"4",
           "warps of a workgroup (a power of two)">,
    Option<"targetUnits", "target-units", "bool", /*default=*/"false",
           "take the matrix and async copy units the target's backend "
           "registered (tk::registerTargetUnits: tk-opt registers every "
           "built backend's); a backend's pipeline hands over its own">
  ];
  let dependentDialects = ["::tk::warp::TkwDialect"];
}

def TkAssignThreadLayouts
    : Pass<"tk-assign-thread-layouts", "::mlir::ModuleOp"> {
  let summary = "decide where each tile lives in the code of one thread";
  let description = [{
    The thread level of the layout framework: for every tile of every
    `tk.func`, where the loop lowering that follows (`tk-convert-to-simt`,
    or `tk-convert-to-loops` for `target=cpu`) keeps it, recorded as
    `tkw.layout` on the op that defines it:

    - none: an element-wise tile (arith, math, splat, make_range, shape
      ops, addptr, loads) is recomputed, element by element, by each op
      that reads it;
    - `#tkw.shared`: kept whole in workgroup memory (the stack on the
      CPU): tiles read twice, in another region, through a broadcast, or
      loads a write could overtake, and the results of dots, reductions and
      scans the unit does not hold;
    - `#tkw.runs<width, threads>`: in the registers of its threads, thread
      t holding the runs t, t + threads, ... of the flat tile, where every
      reader visits it at the indices its own thread holds (element-wise
      chains into stores, whole-tile reductions, dot operands);
    - `#tkw.accumulator<product>`: in the registers of a held product's
      accumulator (the `tk.dot` with `tkw.product`), for the product and
      what is computed from it register by register (attention's scores);
    - `#tkw.rows<product>`: one value per row of a held product, in the
      registers of the threads holding the row (attention's running max
      and sum): the tiles `tk-hold-rows` recorded, and no others.

    A loop records its iteration arguments' layouts in `tkw.iter_layouts`:
    `#tkw.accumulator` for the accumulators `tk-hold-accumulators` chose to
    keep in the matrix unit's registers across trips (read from there: this
    pass holds no others), `#tkw.rows` for the row tiles `tk-hold-rows`
    recorded;
    and, in `tkw.result_layouts`, where each held accumulator is after the
    loop: `#tkw.accumulator`, in its registers. Where a tile moves from one
    layout to another, the move is an explicit op, counted on the function
    (`tkw.conversions`): a tile the matrix unit computes in its registers
    but whose readers need it whole in workgroup memory is moved there by a
    `tkw.convert_layout` with `tkw.layout = #tkw.shared`, which those
    readers read instead. That is a held accumulator's loop result read
    other than from the registers (by stores, and a later loop holding it
    alike), converted right after the loop, and a held product's result
    that is neither kept in registers for its readers nor a held
    accumulator's update (`#tkw.accumulator` on the dot), converted right
    after the dot. Where the unit reads its operands from workgroup memory
    in a layout of its own (mma.sync's swizzled chunks, wgmma's core
    matrices, the matrix cores' fragments), each operand of a held product
    gets there by a `tkw.convert_layout` with `tkw.layout =
    #tkw.operand<product, operand, ...>`, which spells out the unit's layout
    (MatrixUnit::operandLayout: tiles, contiguous dimension, swizzled
    chunks, alignment) and the threads that write it there (its `written`:
    the owners of the registers the tile is in, or runs of up to 16 bytes
    of the tile read), and which the product reads: right before
    it, or once before its loop for a tile the loop does not compute
    (attention's q), read by the later products laid out alike too; an A
    the unit takes from another product's registers has none. A dot the
    unit computes without holding it records how the unit spreads it over
    the threads (MatrixUnit::emittedLayout: the instruction's tiles dealt to
    warps in turn) as `tkw.held`, with no `tkw.product`; the lowering refuses
    one that records another layout, or none. On a GPU every `tk.store` of a tile records how its
    threads visit the tile (and what is fused into it) as its own
    `tkw.layout`: the layout of the registers it reads (`#tkw.accumulator`
    for a held loop result, the runs of a register-resident tile), or
    `#tkw.runs` of up to 4 elements, as wide as divides the tile evenly over
    the threads. Every `tk.reduce` that does not reduce registers records
    how the threads share its lines as `tkw.split` (`#tkw.split<parts,
    across>`): a warp's lanes per row of a 2-D tile, a part per thread
    meeting across warps for a whole 1-D tile, or parts meeting in
    workgroup memory. Every `tk.scan` records its split too, a line per
    thread (`#tkw.split<parts = 1, across = "memory">`), and every atomic on
    a tile its runs (`#tkw.runs` of single elements). Every tile a GPU
    program writes to workgroup memory names its writers as the `written` of
    its `#tkw.shared` (see #tkw.shared): an element-wise tile kept whole, a
    product the threads compute, a tile a loop carries in workgroup memory
    (in `tkw.iter_layouts`), an scf.if's tile result (in the if's
    `tkw.result_layouts`), and a product rounded from the unit's wider
    accumulator. The function records the thread count as `tkw.threads`
    and, on a GPU, the warp size as `tkw.threads_per_warp`.
    The lowering reads these layouts and fails, naming the op, on one that
    does not fit it; run on a kernel without them, it decides them itself
    the same way.
    Held products need the backend's matrix unit: `tk-opt` gives none
    unless `target-units=true` (the units the target's backend registered),
    so otherwise only `#tkw.shared` and `#tkw.runs` appear. Which operands are
    loaded trips ahead is `tk-pipeline-operands`' decision, made next.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "the TargetInfo spec (a registered preset) whose warp size the "
           "threads form warps of; `cpu` for tk-convert-to-loops; required">,
    Option<"numWarps", "num-warps", "int64_t", /*default=*/"4",
           "warps of a workgroup (a power of two)">,
    Option<"targetUnits", "target-units", "bool", /*default=*/"false",
           "take the matrix and async copy units the target's backend "
           "registered (tk::registerTargetUnits: tk-opt registers every "
           "built backend's); a backend's pipeline hands over its own">,
    Option<"fuseLoadsIntoStores", "fuse-loads-into-stores", "bool",
           /*default=*/"true",
           "compute loaded tiles inside the loop of the store that uses them">
  ];
  let dependentDialects = ["::tk::warp::TkwDialect"];
}

def TkPipelineOperands : Pass<"tk-pipeline-operands", "::mlir::ModuleOp"> {
  let summary = "choose the dot operands loaded trips ahead, over num-stages";
  let description = [{
    Software pipelining, decided on the thread layouts
    `tk-assign-thread-layouts` recorded (it runs after it): in a loop that
    carries an accumulator the matrix unit holds, the loads of the held
    products' operands that the backend's async copies can issue trips
    ahead (their addresses and masks follow the loop's pointer walks and
    induction variable; nothing in the loop writes memory) each get
    `tkw.ring = #tkw.ring<stages, product, operand>`: a ring of
    `num-stages` workgroup slots the copies fill `num-stages - 1` trips
    ahead, holding operand `operand` (0: A, 1: B) of the held product
    numbered `product`, in its layout when the unit lays out operands. A
    load several products read is copied once, into the ring of the first.
    The conversion to the unit's layout (`#tkw.operand`) of an operand a
    ring fills loses its `written`: the async copies write it, not the
    threads. `tk-convert-to-simt` follows the rings (and refuses one it
    cannot fill). Without the backend's async copy unit (tk-opt gives none unless
    `target-units=true`) or
    with `num-stages` 1, nothing is pipelined.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "the TargetInfo spec the thread layouts were assigned for; "
           "required">,
    Option<"numWarps", "num-warps", "int64_t", /*default=*/"4",
           "warps of a workgroup (a power of two)">,
    Option<"targetUnits", "target-units", "bool", /*default=*/"false",
           "take the matrix and async copy units the target's backend "
           "registered (tk::registerTargetUnits: tk-opt registers every "
           "built backend's); a backend's pipeline hands over its own">,
    Option<"numStages", "num-stages", "int64_t", /*default=*/"1",
           "the slots of each ring: operands are loaded this many trips "
           "ahead, minus one">
  ];
  let dependentDialects = ["::tk::warp::TkwDialect"];
}

def TkConvertToSIMT : Pass<"tk-convert-to-simt", "::mlir::ModuleOp"> {
  let summary = "lower tile ops to the code of one GPU thread (SIMT)";
  let description = [{
    The GPU form of `tk-convert-to-loops` (same element-wise recomputation
    and masks), following the held accumulators `tk-hold-accumulators`
    recorded, the rows `tk-hold-rows` recorded and the thread layouts
    `tk-assign-thread-layouts` recorded around them (deciding what a kernel
    lacks itself, the same way): every
    `tk.func`
    becomes a `func.func` run by each of the
    `num-warps` x warp-size threads of a workgroup, the warp size (8, 16,
    32, 64) being the `target` TargetInfo's. Program ids come from
    `gpu.block_id` / `gpu.grid_dim` (no trailing arguments); every
    top-level loop nest is spread over the threads (`gpu.thread_id`
    strided, consecutive threads on consecutive innermost elements so
    global accesses coalesce) and followed by a `gpu.barrier`; tile buffers
    are `memref.global`s in workgroup memory.

    Reductions across lanes are butterfly `gpu.shuffle`s over exactly one
    warp (offsets from half the warp size down to 1); across warps, lane 0
    of each warp writes one value to workgroup memory and, after one
    barrier, every thread combines them (lib/Conversion/TkToLoops/
    Reductions.cpp is the one place that lowers reductions). Scans run one thread per scanned line, and
    `tk.dot` uses the backend's `tk::MatrixUnit` when one is given (see
    Passes.h) and an FMA loop per output element otherwise; with an
    `tk::AsyncCopyUnit` and `num-stages` > 1 the dot operands whose loads
    have a ring (`#tkw.ring`, from `tk-pipeline-operands`; decided here
    when the kernel has no thread layouts) are loaded `num-stages - 1`
    trips ahead. Work that must happen once per
    program (scalar atomics, prints, dense constants) runs on thread 0 and
    is broadcast through workgroup memory.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "the TargetInfo spec (a registered preset, see tk-assign-layouts) "
           "whose warp size the threads form warps of; required">,
    Option<"numWarps", "num-warps", "int64_t", /*default=*/"4",
           "warps of a workgroup (a power of two)">,
    Option<"targetUnits", "target-units", "bool", /*default=*/"false",
           "take the matrix and async copy units the target's backend "
           "registered (tk::registerTargetUnits: tk-opt registers every "
           "built backend's); a backend's pipeline hands over its own">,
    Option<"numStages", "num-stages", "int64_t", /*default=*/"1",
           "with an async copy unit: the operand tiles of a dot in a loop "
           "are loaded this many trips ahead, minus one">,
    Option<"fuseLoadsIntoStores", "fuse-loads-into-stores", "bool",
           /*default=*/"true",
           "compute loaded tiles inside the loop of the store that uses them">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::tk::warp::TkwDialect"
  ];
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
    Program ids come from `gpu.block_id`, the output is the form of
    `tk-convert-to-simt`. Ops it has no pattern for (reverse scans,
    atomics, block pointers, prints) make it fail: the backends then use
    `tk-convert-to-simt` for the kernel.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::gpu::GPUDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def TkShareWorkgroupMemory
    : Pass<"tk-share-workgroup-memory", "::mlir::ModuleOp"> {
  let summary = "let tile buffers whose lives do not overlap share "
                "workgroup memory";
  let description = [{
    `tk-convert-to-simt` gives every tile that needs storage a workgroup
    `memref.global` of its own, for the whole kernel. This pass runs on its
    output and merges buffers of one memref type whose lives, measured in
    the kernel's top-level ops, do not overlap. A buffer's life runs from
    the first to the last top-level op that reaches it, and a loop or `if`
    counts as one op, so a buffer used anywhere in a loop is live for the
    whole loop.

    A buffer takes over another's memory only after a `gpu.barrier` at the
    top level that follows the other's last use; where there is none, one is
    inserted before the new buffer's first use. That way no thread writes the
    memory while another still reads the old tile. A buffer reached by
    anything but `memref.load` and `memref.store` keeps its own memory.

    This matters on devices with little workgroup memory (Vulkan on
    lavapipe: 32 KB), where it decides whether a kernel fits.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // TK_CORE_CONVERSION_PASSES_TD
