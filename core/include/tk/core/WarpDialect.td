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
  let summary = "Layouts and ops of tk's GPU register pipeline";
  let description = [{
    Layout attributes, used as the `encoding` of tile types, say as one
    linear layout which register of which lane of which warp holds each
    element (`#tkw.linear`, DESIGN.md §3); `#tkw.swizzled` and
    `#tkw.nvmma` say where the elements of a buffer of workgroup memory lie.
    The ops are what the pipeline needs on top of `tk`: an explicit layout
    change, and the rings of workgroup slots that asynchronous copies fill
    (`tkw.local_alloc`, `tkw.async_copy`, `tkw.local_load`, ...).
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
    /// tk-assign-linear-layouts.
    static constexpr llvm::StringLiteral kThreadsPerWarpAttrName =
        "tkw.threads_per_warp";
    /// Function attribute: the TargetInfo spec the layouts were chosen for.
    static constexpr llvm::StringLiteral kTargetAttrName = "tkw.target";
    /// Op attribute on a `tk.dot`: the name of the matrix intrinsic
    /// (TargetInfo) its products run on (tk-dot-operand-layouts).
    static constexpr llvm::StringLiteral kIntrinsicAttrName = "tkw.intrinsic";
    /// Op attribute on a `tk.dot` of a warpgroup intrinsic that reads its
    /// operands from ring slots in place (i64): how many of its groups of
    /// products may still run when the dot's op ends (tk-pipeline-loads
    /// sets 1 in a loop; a `tkw.dot_wait` after the loop waits for the
    /// last). Its reads of the slots end only at that later wait.
    static constexpr llvm::StringLiteral kPendingAttrName = "tkw.pending";
    /// Unit op attribute on a `tk.dot` of a warpgroup intrinsic without
    /// scratch: its products are left running when the op ends, and a
    /// `tkw.dot_wait` later in its block waits for them before any reader
    /// (tk-defer-dot-waits). Its reads of ring slots end at that wait.
    static constexpr llvm::StringLiteral kDeferredAttrName = "tkw.deferred";
    /// Function attribute: the bytes of workgroup memory the kernel's
    /// buffers need together (tk-allocate-shared-memory).
    static constexpr llvm::StringLiteral kSharedMemoryAttrName =
        "tkw.shared_memory";
    /// Op attribute: the op's scratch buffer in workgroup memory, as
    /// `array<i64: offset, bytes>` (tk-allocate-shared-memory).
    static constexpr llvm::StringLiteral kScratchAttrName = "tkw.scratch";
  }];
}

class Tkw_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tkw_Dialect, mnemonic, traits>;

#endif // TK_CORE_WARPDIALECT_TD
