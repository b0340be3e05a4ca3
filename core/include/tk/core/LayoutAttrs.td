//===- LayoutAttrs.td - how warps share a tile --------------*- tablegen -*-===//
//
// The layout attributes of the warp level: the `encoding` of a tile type says
// which part of the tile each warp of the workgroup holds. Layouts record
// sizes per warp, not per lane (ML-Triton): what a lane holds is decided when
// the backend lowers to SIMT.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_LAYOUTATTRS_TD
#define TK_CORE_LAYOUTATTRS_TD

include "tk/core/WarpDialect.td"
include "mlir/IR/AttrTypeBase.td"

class Tkw_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tkw_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tkw_BlockedLayoutAttr : Tkw_Attr<"BlockedLayout", "blocked"> {
  let summary = "warps hold blocks of sizePerWarp in a warpsPerCTA grid";
  let description = [{
    The warps of a workgroup form a grid of `warpsPerCTA` (its product is the
    number of warps); `order` lists the grid's dimensions from the
    fastest-varying to the slowest, so with `order = [1, 0]` warps 0, 1, 2, 3
    are the first row of the grid. The warp at grid coordinate `c` holds the
    block that starts at `(c[d] * sizePerWarp[d]) mod shape[d]` along each
    dimension `d`, of `min(sizePerWarp[d], shape[d])` elements. Where the
    tile is smaller than `sizePerWarp * warpsPerCTA`, blocks wrap around and
    warps hold copies (a broadcast dimension of size 1 is held whole by
    every warp).

    The seed example: a 256x256 accumulator over 32 warps, square partition:
    ```mlir
    #C = #tkw.blocked<sizePerWarp = [32, 64], warpsPerCTA = [8, 4], order = [1, 0]>
    %c = ... : tensor<256x256xf32, #C>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$sizePerWarp,
                        ArrayRefParameter<"int64_t">:$warpsPerCTA,
                        ArrayRefParameter<"int64_t">:$order);
  let assemblyFormat = [{
    `<` `sizePerWarp` `=` `[` $sizePerWarp `]` `,`
        `warpsPerCTA` `=` `[` $warpsPerCTA `]` `,`
        `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The number of dimensions the layout describes.
    int64_t getRank() const { return getSizePerWarp().size(); }
    /// The number of warps of the workgroup (the product of warpsPerCTA).
    int64_t getNumWarps() const;
  }];
}

def Tkw_DotOperandLayoutAttr : Tkw_Attr<"DotOperandLayout", "dot_operand"> {
  let summary = "the layout of operand a (0) or b (1) of a dot";
  let description = [{
    The operand of a `tk.dot` whose result has the blocked layout `parent`.
    A warp holds the rows of `a` (the columns of `b`) of its block of the
    result and the whole reduction dimension, so warps of one row of the
    grid share the same slice of `a`: with the seed's parent, warps 0-3 all
    hold rows 0-31 of `a`.
    ```mlir
    #A = #tkw.dot_operand<opIdx = 0, parent = #C>
    %a = tk.load %pa : !tk.ptr<tensor<256x32xf16, #A>>
    ```
  }];
  let parameters = (ins "unsigned":$opIdx, "BlockedLayoutAttr":$parent);
  let assemblyFormat = "`<` `opIdx` `=` $opIdx `,` `parent` `=` $parent `>`";
  let genVerifyDecl = 1;
}

def Tkw_SliceLayoutAttr : Tkw_Attr<"SliceLayout", "slice"> {
  let summary = "a parent layout with one dimension removed";
  let description = [{
    The layout of a tile that is `parent` without dimension `dim`: what a
    reduction along `dim` produces and what `tk.expand_dims` at `dim` takes.
    A warp holds what it holds of the parent, less that dimension.
    ```mlir
    #R = #tkw.slice<dim = 1, parent = #C>
    %rows = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32, #R>
    ```
  }];
  let parameters = (ins "unsigned":$dim, "::mlir::Attribute":$parent);
  let assemblyFormat = "`<` `dim` `=` $dim `,` `parent` `=` $parent `>`";
  let genVerifyDecl = 1;
}

#endif // TK_CORE_LAYOUTATTRS_TD
