//===- WarpDialect.td - the warp-level dialect tkw ----------*- tablegen -*-===//
//
// The dialect declaration shared by the layout attributes and the warp-level
// ops; `tkw` is to `tk` what Triton's `ttg` is to `tt`.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_WARPDIALECT_TD
#define TK_CORE_WARPDIALECT_TD

include "mlir/IR/OpBase.td"

def Tkw_Dialect : Dialect {
  let name = "tkw";
  let cppNamespace = "::tk::warp";
  let summary = "Layouts and ops of tk's warp and intrinsic levels";
  let description = [{
    Layout attributes, used as the `encoding` of tile types, say how the
    warps of a workgroup share a tile (`#tkw.blocked`, `#tkw.dot_operand`,
    `#tkw.slice`), or, as one linear layout, which register of which lane
    of which warp holds each element (`#tkw.linear`, the layouts of the
    register pipeline of DESIGN.md §3); the thread layouts (`#tkw.shared`, `#tkw.runs`,
    `#tkw.accumulator`, `#tkw.rows`, `#tkw.operand`) say where a tile lives
    in the code of one GPU thread, and also how the threads visit a stored
    tile; `#tkw.split` says how they share a reduction. The ops are what
    the warp and intrinsic levels need on top of `tk`: an explicit layout
    change, the warp's index, and the extraction and glueing of sub-tiles.
  }];
  let dependentDialects = ["::tk::TkDialect", "::mlir::arith::ArithDialect"];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasConstantMaterializer = 0;
  let extraClassDeclaration = [{
    /// Function attribute: the number of warps of a workgroup (i32).
    static constexpr llvm::StringLiteral kNumWarpsAttrName = "tkw.num_warps";
    /// Function attribute: the lanes of a warp on the target (i32), set by
    /// tk-assign-layouts and, on a GPU program, by tk-assign-thread-layouts:
    /// thread t of the thread layouts is lane t mod this of warp t / this.
    static constexpr llvm::StringLiteral kThreadsPerWarpAttrName =
        "tkw.threads_per_warp";
    /// Function attribute: the TargetInfo spec the layouts were chosen for.
    static constexpr llvm::StringLiteral kTargetAttrName = "tkw.target";
    /// Function attribute: the level of the IR, "warp" after
    /// tk-distribute-to-warps and "intrinsic" after tk-match-target-size; a
    /// function without it is at the workgroup level.
    static constexpr llvm::StringLiteral kLevelAttrName = "tkw.level";
    /// Op attribute on a `tk.dot` of the intrinsic level: the name of the
    /// matrix intrinsic (TargetInfo) it has the size of.
    static constexpr llvm::StringLiteral kIntrinsicAttrName = "tkw.intrinsic";
    /// Op attribute: the thread layout of the tile the op defines
    /// (#tkw.shared, #tkw.runs, #tkw.accumulator, #tkw.rows; #tkw.operand
    /// on a tkw.convert_layout of a dot operand); on a tk.store
    /// of a tile, how its threads visit the tile it writes (#tkw.runs,
    /// #tkw.accumulator), which its fused loads and element-wise chains
    /// follow.
    static constexpr llvm::StringLiteral kLayoutAttrName = "tkw.layout";
    /// Loop attribute: the thread layouts of its iteration arguments (and
    /// results), `unit` for none: on a GPU, #tkw.accumulator and #tkw.rows
    /// for those held in registers, #tkw.shared<written = #tkw.runs> for a
    /// tile carried in workgroup memory (its initial value and each trip's
    /// value are written there by those runs).
    static constexpr llvm::StringLiteral kIterLayoutsAttrName =
        "tkw.iter_layouts";
    /// Loop attribute: where its held accumulators are after the loop,
    /// result by result: #tkw.accumulator (still in the registers, read
    /// there by stores, by a later loop holding it alike and by its
    /// tkw.convert_layout to workgroup memory), `unit` for a result that is
    /// not a held accumulator. On an scf.if of a GPU program: each tile
    /// result's buffer and the runs each branch writes it by
    /// (#tkw.shared<written = #tkw.runs>), `unit` for the other results.
    static constexpr llvm::StringLiteral kResultLayoutsAttrName =
        "tkw.result_layouts";
    /// Op attribute on a `tk.dot` whose product the matrix unit holds in
    /// registers: the number #tkw.accumulator and #tkw.rows refer to.
    static constexpr llvm::StringLiteral kProductAttrName = "tkw.product";
    /// Op attribute on a held `tk.dot`: how the matrix unit holds its
    /// accumulator (#tkw.held), where the unit states it.
    static constexpr llvm::StringLiteral kHeldAttrName = "tkw.held";
    /// Op attribute on a `tk.dot` of a warpgroup intrinsic that reads its
    /// operands from ring slots in place (i64): how many of its groups of
    /// products may still run when the dot's op ends (tk-pipeline-loads
    /// sets 1 in a loop; a `tkw.dot_wait` after the loop waits for the
    /// last). Its reads of the slots end only at that later wait.
    static constexpr llvm::StringLiteral kPendingAttrName = "tkw.pending";
    /// Op attribute on a `tk.load` in a loop: the ring of workgroup slots
    /// its async copies fill trips ahead (#tkw.ring).
    static constexpr llvm::StringLiteral kRingAttrName = "tkw.ring";
    /// Op attribute on a `tk.reduce` of a GPU program that does not reduce
    /// registers: how its threads share the lines (#tkw.split).
    static constexpr llvm::StringLiteral kSplitAttrName = "tkw.split";
    /// Function attribute of a GPU program: the layout conversions
    /// (tkw.convert_layout) tk-assign-thread-layouts placed in it.
    static constexpr llvm::StringLiteral kConversionsAttrName =
        "tkw.conversions";
    /// Function attribute: the bytes of workgroup memory the kernel's
    /// buffers need together (tk-allocate-shared-memory).
    static constexpr llvm::StringLiteral kSharedMemoryAttrName =
        "tkw.shared_memory";
    /// Op attribute: the op's scratch buffer in workgroup memory, as
    /// `array<i64: offset, bytes>` (tk-allocate-shared-memory).
    static constexpr llvm::StringLiteral kScratchAttrName = "tkw.scratch";
    /// Function attribute: the threads of a program the thread layouts
    /// were assigned for (0: the CPU form, one thread).
    static constexpr llvm::StringLiteral kThreadsAttrName = "tkw.threads";
    /// Module attribute: why the register pipeline did not lower the
    /// module, which tk-convert-to-simt lowered instead
    /// (tk::SIMTLowering::registerPipeline).
    static constexpr llvm::StringLiteral kRegisterPipelineAttrName =
        "tkw.register_pipeline";
  }];
}

class Tkw_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tkw_Dialect, mnemonic, traits>;

#endif // TK_CORE_WARPDIALECT_TD
