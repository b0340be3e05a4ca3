//===- WarpOps.td - ops of the warp and intrinsic levels ----*- tablegen -*-===//
//
// What the warp-level IR adds to tk: an explicit layout change, the warp's
// index, and sub-tile extraction and glueing for the intrinsic level.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_WARPOPS_TD
#define TK_CORE_WARPOPS_TD

include "tk/core/WarpDialect.td"
include "tk/core/LayoutAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tkw_Tile : AllOfType<[AnyStaticShapeTensor, AnyRankedTensor],
                         "statically shaped tile", "::mlir::RankedTensorType">;

def Tkw_ConvertLayoutOp : Tkw_Op<"convert_layout", [Pure]> {
  let summary = "move a tile from one layout to another";
  let description = [{
    The same tile in another layout. At the workgroup level both types have
    the same shape; after `tk-distribute-to-warps` each side is the warp's
    share in its own layout, so the shapes may differ and the move crosses
    warps (through shared memory). Where both layouts give every warp the
    same elements the move stays inside the warp. tk-assign-layouts places
    these ops where two layouts meet so that they can be counted and
    lowered explicitly, never hidden in another op's lowering.

    At the thread level (`tk-assign-thread-layouts`), where layouts are
    attributes rather than type encodings, both types are the same and the
    op's `tkw.layout` names where its result lives (`#tkw.shared`: the
    matrix unit's registers of a held accumulator after its loop, or of a
    held product, written to workgroup memory; `#tkw.operand`: a held
    product's operand written to workgroup memory in the layout the unit
    reads it in); such an op is not folded away.
    ```mlir
    %b = tkw.convert_layout %a : tensor<128x64xf32, #C> -> tensor<128x64xf32, #A>
    ```
  }];
  let arguments = (ins Tkw_Tile:$src);
  let results = (outs Tkw_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tkw_WarpIdOp : Tkw_Op<"warp_id", [Pure]> {
  let summary = "index of this warp within the workgroup";
  let description = [{
    The linear index, in [0, tkw.num_warps), of the warp (wave, subgroup)
    running this code; what `gpu.subgroup_id` is to MLIR's GPU dialect.
    ```mlir
    %w = tkw.warp_id : i32
    ```
  }];
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Tkw_ExtractOp : Tkw_Op<"extract", [Pure]> {
  let summary = "a sub-tile of a tile at static offsets";
  let description = [{
    The block of the result's shape that starts at `offsets` (in elements)
    of the source; it feeds intrinsics that want smaller tiles than the
    values around them.
    ```mlir
    %a01 = tkw.extract %a [0, 16] : tensor<32x32xf16, #A> -> tensor<16x16xf16, #A>
    ```
  }];
  let arguments = (ins Tkw_Tile:$src, DenseI64ArrayAttr:$offsets);
  let results = (outs Tkw_Tile:$result);
  let assemblyFormat =
      "$src $offsets attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tkw_GlueOp : Tkw_Op<"glue", [Pure]> {
  let summary = "a tile made of equally shaped sub-tiles, row-major";
  let description = [{
    The inverse of `tkw.extract`: the pieces, all of one type, fill the
    result's grid of blocks in row-major order.
    ```mlir
    %c = tkw.glue %c0, %c1 : tensor<16x8xf32, #C>, tensor<16x8xf32, #C>
        -> tensor<16x16xf32, #C>
    ```
  }];
  let arguments = (ins Variadic<Tkw_Tile>:$pieces);
  let results = (outs Tkw_Tile:$result);
  let assemblyFormat =
      "$pieces attr-dict `:` type($pieces) `->` type($result)";
  let hasVerifier = 1;
}

#endif // TK_CORE_WARPOPS_TD
