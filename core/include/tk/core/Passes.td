//===- Passes.td - tk's layout passes -----------------------*- tablegen -*-===//
//
// The tile-level passes every pipeline starts with (loop invariants out,
// block pointers as tiles of pointers, bounds checks), and the layout
// passes of the GPU register pipeline (DESIGN.md §3): assign linear
// layouts, remove conversions, dot operands, pipeline loads, allocate
// shared memory, insert barriers.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_PASSES_TD
#define TK_CORE_PASSES_TD

include "mlir/Pass/PassBase.td"

def TkHoistLoopInvariants
    : Pass<"tk-hoist-loop-invariants", "::tk::FuncOp"> {
  let summary = "move loop invariants out of loops; write constant pointer "
                "steps as splats of scalars";
  let description = [{
    The first pass of every backend's pipeline. The lowerings recognise a
    loop's pointer walk (`p = tk.addptr p, tk.splat(step)`, `step` defined
    outside the loop) and pipeline the loads along it only in that form;
    this pass brings the other spellings of the same walk to it, so that
    code generation does not depend on how a source wrote an invariant:

    - everything that does not depend on the loop (pure, speculatable ops
      whose operands are defined outside it) moves out of it, innermost
      loops first (MLIR's `moveLoopInvariantCode`);
    - the dense splat constant offset of a `tk.addptr`
      (`arith.constant dense<64> : tensor<64x64xi32>`, as Triton's TTIR
      writes a step of stride 1) becomes `tk.splat` of a scalar constant.

    Loads, stores, atomics and prints stay where they are.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TkRewriteBlockPointers
    : Pass<"tk-rewrite-block-pointers", "::tk::FuncOp"> {
  let summary = "block pointers as tiles of pointers, their boundary checks "
                "as masks";
  let description = [{
    The register pipeline's first pass (DESIGN.md §3): its layouts,
    vectorised accesses and pipelined loads work on tiles of pointers.
    Each block pointer becomes the tile of its elements' pointers, carried
    beside its scalars (base, shape, strides, window offsets):

    - `tk.make_block_ptr` builds the tile, base + Σ position × stride (a
      stride of 1 left out, so that AxisFacts sees the contiguity);
    - `tk.advance` adds one uniform step to it (`tk.addptr p, tk.splat`,
      the loop walk tk-pipeline-loads recognises) and the deltas to the
      window offsets;
    - a load or store through it becomes the gather or scatter of the tile,
      its `boundary_check` dimensions as the mask `0 <= position < shape`
      (one unsigned comparison), its `padding` as `other`;
    - `scf.for` carries the pieces as iteration arguments of their own.

    A block pointer that reaches any other op (`scf.if`, `scf.while`, a
    call) is an error at that op.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TkCheckBounds : Pass<"tk-check-bounds", "::tk::FuncOp"> {
  let summary = "check every element a kernel's accesses touch against its "
                "buffer's extent (the bounds-checked launch mode)";
  let description = [{
    What the runtime does to a kernel under `TK_CHECK_BOUNDS=1`
    (`tk::addBoundsChecks`, tk/core/BoundsChecks.h), as a pass for tk-opt:

    - the kernel gets one i64 argument per pointer argument, its extent in
      elements (`<name>.extent`), then `bounds.record`, a `!tk.ptr<i64>`
      with one slot per checked access;
    - each load, store and atomic through pointers that come from an
      argument (by `tk.splat`, `tk.addptr`, shape ops, `arith.select` and
      loops) ANDs its mask with `0 <= offset < extent`, and stores the
      offsets it masked off to its slot;
    - block-pointer loads and stores become the gathers and scatters of the
      same elements, the boundary checks in their masks; a
      compare-and-swap, which has no mask, runs only when every element is
      inside.

    An access whose pointers cannot be traced is an error at that access.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}


def TkAssignLinearLayouts
    : Pass<"tk-assign-linear-layouts", "::tk::FuncOp"> {
  let summary = "give every tile a #tkw.linear layout: which register of "
                "which lane of which warp holds each element";
  let description = [{
    Pass 2 of the register pipeline (DESIGN.md §3), which every GPU backend
    runs. Anchors, in this order:

    - `tk.dot`: the accumulator fragment of the target's first matrix
      intrinsic that takes its element types and divides its shape, tiled
      over the warps (square, or the `tiling` hint) and then over further
      registers, and the dot records the intrinsic (`tkw.intrinsic`).
      Where no intrinsic fits, each thread computes a block of the product
      as square as the threads allow (it holds its rows of a and columns
      of b whole along k), lanes along the columns first. Its operands keep the
      layouts their producers give them: the matrix unit's operand layouts
      are `tk-dot-operand-layouts`'s job.
    - loads, stores and atomics: a coalesced blocked layout (Triton's
      coalescing). Each thread holds a run of consecutive elements along
      the last dimension, as long as `AxisFacts` proves the addresses
      contiguous and aligned, at most the target's vector bytes and no
      more than leaves a thread idle; the lanes, then the warps, follow
      along the last dimension, then the slower ones.

    Every other tile follows along def-use chains: element-wise ops, scans
    and loops keep one layout, a reduction's result is its source's layout
    less the reduced dimension, `expand_dims` inserts a dimension of size 1,
    and a broadcast takes the layout its users want (its source then wants
    that layout less the broadcast dimensions, so nothing moves). A tile no
    anchor reaches gets a blocked layout. Where two layouts meet, a
    `tkw.convert_layout` is inserted, or a tile computed from scalars is
    computed again. The function records `tkw.num_warps`,
    `tkw.threads_per_warp` and `tkw.target`, and the dialect then checks
    every layout against them.
  }];
  let dependentDialects = ["::tk::warp::TkwDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cuda-sm80\"",
           "TargetInfo to choose layouts for: a preset a backend registered "
           "(cuda-sm80, cuda-sm90a, amd-cdna3, amd-cdna2, amd-rdna3, "
           "intel-pvc, intel-dg2 in tk-opt), optionally with overrides">,
    Option<"numWarps", "num-warps", "int64_t", /*default=*/"4",
           "warps per workgroup (a power of two)">
  ];
}

def TkDotOperandLayouts : Pass<"tk-dot-operand-layouts", "::tk::FuncOp"> {
  let summary = "give the operands of each dot the layout its matrix unit "
                "reads them in";
  let description = [{
    Pass 4 of the register pipeline (DESIGN.md §3), after
    `tk-assign-linear-layouts`. For a `tk.dot` whose accumulator is the
    fragment of the intrinsic it records (`tkw.intrinsic`), the operands'
    fragments are that intrinsic's (TargetInfo's `aLayout` and `bLayout`,
    as linear layouts), tiled as the accumulator is: `a` is held by the
    warps that hold its rows of the product, and the warps along the
    product's columns hold copies of it (`b` the other way round); the
    product's further registers along its rows (columns) are `a`'s (`b`'s)
    too, and the reduction dimension repeats in registers after them
    (`tk::getMatrixOperandLayout`). An operand converts to its fragments,
    in registers, where a loop around the dot does not change it
    (attention's q: once, before the loop) or where the conversion keeps
    every element in its thread (attention's p). Any other operand stays in
    the layout it was loaded in: the dot writes it to its own workgroup
    memory and reads each k step's fragments from there just before their
    product (`tk::planDotOperands`), so a thread never holds a whole
    operand in fragments. An operand the intrinsic reads from shared memory
    itself (wgmma's `b`) has no fragment and is left as it is. A dot
    without `tkw.intrinsic` is fused multiply-adds, each thread its own
    elements of the product: `a` converts to the accumulator's layout
    along rows with the whole reduction dimension in each thread's
    registers and copies along columns (`b` the other way round), Triton's
    dot-operand layout of a blocked parent.

    An operand a loop does not change stays in registers only where the
    loop's tiles and its fragments take at most 3/4 of a thread's registers
    (`TargetInfo::registersPerThread`, `tk::estimateLoopTileRegisters`).
    Otherwise (RDNA3's WMMA holds each element of `a` in two lanes) it is
    written into a ring of one slot before the loop (`tkw.local_store`),
    and the dot reads its fragments there each trip, one k step at a time
    (`tkw.local_load`, read in place). `stage-operands=false` keeps such
    operands in registers: the pipeline lowers a kernel so when the slot
    would not fit the device's workgroup memory.
  }];
  let options = [
    Option<"stageOperands", "stage-operands", "bool", /*default=*/"true",
           "write an invariant operand whose fragments the loop's registers "
           "cannot hold to workgroup memory before the loop">,
  ];
  let dependentDialects = ["::tk::warp::TkwDialect"];
}

def TkRemoveLayoutConversions
    : Pass<"tk-remove-layout-conversions", "::tk::FuncOp"> {
  let summary = "compute values in the layout their users want instead of "
                "converting them, where that is cheaper";
  let description = [{
    Pass 3 of the register pipeline (DESIGN.md §3), on #tkw.linear layouts.
    A `tkw.convert_layout` to layout B goes away when what it converts can
    be computed in B from what is already there: ranges, splats, constants,
    element-wise and pointer arithmetic, expand_dims and broadcast (with
    the layout rules of tk-assign-linear-layouts), and loads that are cheap
    to issue in B. As Triton judges, a load is cheap to move when it has
    no more elements than the workgroup has threads (a bias row: copies of
    one element hit the cache), or when B coalesces it no worse than its
    layout does: each warp instruction covers at least as many consecutive
    elements, at the vector width AxisFacts proves. A value that feeds
    another user and is not cheap (a loaded tile, arithmetic on one) is not
    computed twice: the conversion stays. Conversions between equal layouts
    and chains of conversions fold. What the conversions left unused is
    erased.
  }];
  let dependentDialects = ["::tk::warp::TkwDialect"];
}

def TkCooperativeAccumulators
    : Pass<"tk-cooperative-accumulators", "::tk::FuncOp"> {
  let summary = "keep the accumulators of cooperative-matrix dots opaque "
                "across the loops that carry them";
  let description = [{
    After `tk-pipeline-loads`, on a function whose target has opaque
    intrinsics (`MatrixIntrinsic::opaque`: Vulkan's cooperative matrix).
    A `tk.dot` that records one computes into a `#tkw.cooperative_matrix`
    tile whose placement is the layout `tk-assign-linear-layouts` gave it;
    its other users read the placement through a `tkw.convert_layout`
    (through the warp's workgroup memory). An `scf.for` iteration argument
    whose trip yields such a conversion carries the opaque tile instead:
    the body's other users, the loop's users and a non-constant initial
    value convert, a splat constant is retyped. Conversions that undo each
    other fold away, so a matmul's accumulator leaves its matrices once,
    after the loop. A float conversion (`arith.truncf`, `arith.extf`) that is
    all a leaving tile meets happens before it leaves, on the matrices
    (`tkw.matrix_convert`): an f16 result leaves in f16.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::tk::warp::TkwDialect"];
}

def TkPipelineLoads : Pass<"tk-pipeline-loads", "::tk::FuncOp"> {
  let summary = "load the operands of a loop's dots trips ahead: into rings "
                "of workgroup memory by asynchronous copies, or into registers";
  let description = [{
    Pass 5 of the register pipeline (DESIGN.md §3), after
    `tk-dot-operand-layouts`, where `num-stages` is 2 or more.

    **Rings**, where the function's target copies asynchronously
    (`TargetInfo::hasAsyncCopy`): a `tk.load` in an `scf.for` that alone
    feeds operand a or b of a `tk.dot` with a matrix intrinsic (directly or
    through one `tkw.convert_layout`), whose `other` is absent or zero and
    whose runs `tk::getAsyncCopyRun` finds copyable (4 to 16 bytes,
    contiguous, aligned, under one mask value), becomes a `!tkw.ring` of S
    slots laid out by the operand's swizzle (`tk::getOperandSwizzle`): S is
    `num-stages`, or fewer where the loop's rings would not fit the
    target's workgroup memory (at least 2, else the loads stay). Before the
    loop, `tkw.local_alloc` and the copies of trips 0 .. S - 2, one
    `tkw.async_commit` a trip. Each trip waits until its own group is done
    (`tkw.async_wait` with S - 2 pending), starts the copies of the trip
    S - 1 ahead into the slot the previous trip read, and reads its own
    slot where the dot is (`tkw.local_load`); a dot of two ring operands
    becomes one dot per k step of its intrinsic, each reading its blocks
    of the slots. The loop carries the iteration arguments of the trip
    S - 1 ahead (the load's pointers as the trips yield them), the slot it
    reads and the slot it fills. The mask gains `iv < ub`, so a copy past
    the end writes zeros and reads nothing; after the loop a wait for
    every group. The computations cloned for trips ahead must be free of
    side effects and regions, else the load stays. `tk-insert-barriers`
    then orders the copies after the previous trip's reads and the reads
    after the copies they waited for.

    **Registers**, for the loads left: each `tk.load` of pointer tiles
    whose value reaches an operand of a dot in the loop is issued one trip
    early: the loop carries the loaded tile, the trip loads the next
    trip's tile at its start, and a copy before the loop loads the first.
    The next trip's pointers, mask and `other` are the load's own
    computations, cloned with the induction variable one step on and the
    iteration arguments as the trip yields them; the mask gains
    `iv + step < ub`, so the load past the last trip reads nothing. The
    tiles carried ahead are limited to 64 32-bit registers a thread per
    loop (the accumulator needs the rest); loads past that stay where they
    are.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::tk::warp::TkwDialect"];
  let options = [
    Option<"numStages", "num-stages", "int64_t", /*default=*/"2",
           "the kernel's num_stages: below 2, nothing is loaded ahead">
  ];
}

def TkDeferDotWaits : Pass<"tk-defer-dot-waits", "::tk::FuncOp"> {
  let summary = "leave a warpgroup dot's products running until the op that "
                "reads them";
  let description = [{
    After `tk-pipeline-loads`. A `tk.dot` on a warpgroup intrinsic (the
    function's `tkw.target`; wgmma) into an f32 accumulator, without
    scratch (its operands in registers or in ring slots read in place),
    not marked `tkw.pending`, whose first reader in its block is not the
    next op, is marked `tkw.deferred`: its lowering issues the products
    and does not wait. Before the first op that reads it, a
    `tkw.dot_wait` with `pending` = the deferred dots issued after it that
    no earlier wait ended (groups complete in issue order) replaces the
    result for every reader. A deferred dot read only as the accumulator
    of the next deferred dot is not waited for: the next one's wait ends
    both. FlashAttention-3's overlap within a warpgroup: attention whose
    trip issues q k^T, then the previous trip's p v, runs its softmax
    while both compute and waits for p v only at the rescale.
  }];
  let dependentDialects = ["::tk::warp::TkwDialect"];
}

def TkAllocateSharedMemory
    : Pass<"tk-allocate-shared-memory", "::tk::FuncOp"> {
  let summary = "give every buffer of workgroup memory its offset, packed by "
                "liveness, and state the kernel's bytes";
  let description = [{
    Pass 6 of the register pipeline (DESIGN.md §3), on tiles in #tkw.linear
    layouts. The buffers are the scratch of the ops that move data between
    warps (`SharedMemoryAllocation.h`): a `tkw.convert_layout` whose layouts
    differ across warps holds one round of the tile (it converts in a round
    per value of the register bits both layouts give the same coordinates:
    the smallest scratch the two layouts allow, where Triton rounds over
    the tile's repetitions); a `tk.reduce` or `tk.scan`
    whose axis spans warps holds one partial value per warp along it and
    line (a scan: and per chunk of the axis a thread holds in registers
    above the warps' positions). Conversions within a warp (registers, shuffles) need none. Each
    buffer lives while its op runs; buffers whose lives overlap get
    disjoint, 16-byte-aligned offsets, the largest placed first.

    Each op with a buffer records `tkw.scratch = array<i64: offset,
    bytes>`, the function `tkw.shared_memory` (the bytes of all of them).
    A kernel that needs more than the target's workgroup memory is refused
    here, before code generation, with the bytes it needs, the bytes there
    are and its largest buffer.
  }];
  let dependentDialects = ["::tk::warp::TkwDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "TargetInfo spec whose workgroup memory bounds the kernel; empty: "
           "the `tkw.target` of the function">
  ];
}

def TkInsertBarriers : Pass<"tk-insert-barriers", "::tk::FuncOp"> {
  let summary = "place workgroup barriers where one op's shared memory meets "
                "another's, by analysis";
  let description = [{
    Pass 7 of the register pipeline (DESIGN.md §3), after
    `tk-allocate-shared-memory`. An op with `tkw.scratch` writes and reads
    its bytes of workgroup memory while it runs (its own write-then-read
    barrier is its lowering's). Two such ops whose bytes overlap need a
    `gpu.barrier` between them, or a fast warp would overwrite what a slow
    one still reads: this pass places one before the second, and only
    there. It follows control flow: what an `scf.if` branch touched is
    pending after it, and a loop's body meets its own previous trip (a
    conversion alone in a loop gets a barrier before it), iterated to a
    fixed point. An existing `gpu.barrier` clears what is pending.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // TK_CORE_PASSES_TD
