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
    `#tkw.slice`). The ops are what the warp and intrinsic levels need on top
    of `tk`: an explicit layout change, the warp's index, and the extraction
    and glueing of sub-tiles.
  }];
  let dependentDialects = ["::tk::TkDialect", "::mlir::arith::ArithDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasConstantMaterializer = 0;
  let extraClassDeclaration = [{
    /// Function attribute: the number of warps of a workgroup (i32).
    static constexpr llvm::StringLiteral kNumWarpsAttrName = "tkw.num_warps";
    /// Function attribute: the lanes of a warp on the target (i32).
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
  }];
}

class Tkw_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tkw_Dialect, mnemonic, traits>;

#endif // TK_CORE_WARPDIALECT_TD
