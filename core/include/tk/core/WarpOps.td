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
include "tk/core/WarpTypes.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tkw_Tile : AllOfType<[AnyStaticShapeTensor, AnyRankedTensor],
                         "statically shaped tile", "::mlir::RankedTensorType">;

def Tkw_ConvertLayoutOp : Tkw_Op<"convert_layout", [Pure]> {
  let summary = "move a tile from one layout to another";
  let description = [{
    The same tile in another layout: both types have the same shape.
    tk-assign-linear-layouts places these ops where two layouts meet, so
    that they can be counted, removed where computing in the wanted layout
    is cheaper (tk-remove-layout-conversions), and lowered explicitly from
    the two layouts (a register permutation, shuffles, or a round trip
    through the op's workgroup memory, `tkw.scratch`), never hidden in
    another op's lowering.
    ```mlir
    %b = tkw.convert_layout %a : tensor<128x64xf32, #linear> -> tensor<128x64xf32, #linear1>
    ```
  }];
  let arguments = (ins Tkw_Tile:$src);
  let results = (outs Tkw_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}




def Tkw_LocalAllocOp : Tkw_Op<"local_alloc", [MemoryEffects<[MemAlloc]>]> {
  let summary = "a ring of slots in workgroup memory";
  let description = [{
    The ring lives from here to its last use (across the whole of a loop
    that uses it); `tk-allocate-shared-memory` records its place as
    `tkw.scratch = array<i64: offset, bytes>`.
    ```mlir
    %ring = tkw.local_alloc : !tkw.ring<2, [128, 32], f16, #sw>
    ```
  }];
  let results = (outs Tkw_RingType:$ring);
  let assemblyFormat = "attr-dict `:` type($ring)";
}

def Tkw_AsyncCopyOp : Tkw_Op<"async_copy"> {
  let summary = "start copying a tile from global memory into a slot";
  let description = [{
    Each thread starts copying the elements its registers of `ptr` point
    to (in runs AxisFacts proves contiguous and aligned, of 4, 8 or 16
    bytes) into slot `slot` (i32) of `ring`, where the slot's layout puts
    them. Where `mask` is false the element is written as zero. The copy
    is the backend's (cp.async); it completes at a later
    `tkw.async_wait`, after which a barrier publishes it.
    ```mlir
    tkw.async_copy %ptrs, %mask into %ring[%slot]
        : !tkw.ring<2, [128, 32], f16, #sw>,
          tensor<128x32x!tk.ptr<f16>, #linear>, tensor<128x32xi1, #linear>
    ```
  }];
  let arguments = (ins Tkw_Tile:$ptr, Optional<Tkw_Tile>:$mask,
                       Tkw_RingType:$ring, I32:$slot);
  let assemblyFormat = [{
    $ptr (`,` $mask^)? `into` $ring `[` $slot `]` attr-dict `:` type($ring)
    `,` type($ptr) (`,` type($mask)^)?
  }];
  let hasVerifier = 1;
}

def Tkw_AsyncCommitOp : Tkw_Op<"async_commit"> {
  let summary = "close the group of copies this thread started";
  let assemblyFormat = "attr-dict";
}

def Tkw_AsyncWaitOp : Tkw_Op<"async_wait"> {
  let summary = "wait until at most `pending` groups of copies are in flight";
  let description = [{
    The thread's own copies; a barrier after it makes every thread's
    completed copies visible (`tk-insert-barriers` places one before the
    reads of a ring).
    ```mlir
    tkw.async_wait pending = 1
    ```
  }];
  let arguments = (ins I64Attr:$pending);
  let assemblyFormat = "`pending` `=` $pending attr-dict";
}

def Tkw_LocalStoreOp : Tkw_Op<"local_store"> {
  let summary = "write a tile from registers into a slot";
  let description = [{
    Each element of `value` is written into slot `slot` (i32) of `ring`,
    where the slot's layout puts it, by the first thread that holds it.
    tk-dot-operand-layouts writes so, before a loop, a dot operand the loop
    does not change and whose fragments the loop's registers cannot hold
    besides its other tiles; the dot reads it back each trip with
    `tkw.local_load`. `tk-insert-barriers` orders the write and the reads.
    ```mlir
    tkw.local_store %q into %ring[%slot]
        : tensor<128x64xf16, #linear>, !tkw.ring<1, [128, 64], f16, #sw>
    ```
  }];
  let arguments = (ins Tkw_Tile:$value, Tkw_RingType:$ring, I32:$slot);
  let assemblyFormat = [{
    $value `into` $ring `[` $slot `]` attr-dict `:` type($value) `,`
    type($ring)
  }];
  let hasVerifier = 1;
}

def Tkw_LocalLoadOp : Tkw_Op<"local_load"> {
  let summary = "read a slot of a ring, or a block of one, into registers";
  let description = [{
    The tile in slot `slot` (i32) of `ring`, in the result's layout; with
    `offsets`, the block of the result's shape that starts there (each
    offset a multiple of the block's size along its dimension), so that a
    dot can read one k step's operands at a time.
    ```mlir
    %a = tkw.local_load %ring[%slot]
        : !tkw.ring<3, [128, 32], f16, #sw> -> tensor<128x32xf16, #linear>
    %a1 = tkw.local_load %ring[%slot] {offsets = array<i64: 0, 16>}
        : !tkw.ring<3, [128, 32], f16, #sw> -> tensor<128x16xf16, #linear1>
    ```
  }];
  let arguments = (ins Tkw_RingType:$ring, I32:$slot,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$offsets);
  let results = (outs Tkw_Tile:$result);
  let assemblyFormat =
      "$ring `[` $slot `]` attr-dict `:` type($ring) `->` type($result)";
  let hasVerifier = 1;
}

def Tkw_DotWaitOp : Tkw_Op<"dot_wait", [AllTypesMatch<["input", "result"]>]> {
  let summary = "wait until at most `pending` groups of a dot's products run";
  let description = [{
    `input` is the accumulator of a `tk.dot` marked `tkw.pending`, whose
    last groups of products may still be running; `result` is the same
    tile once at most `pending` groups are (wgmma.wait_group). Only the
    result may be read: the registers of a running product are not.
    ```mlir
    %done = tkw.dot_wait %acc pending = 0 : tensor<128x256xf32, #linear>
    ```
  }];
  let arguments = (ins Tkw_Tile:$input, I64Attr:$pending);
  let results = (outs Tkw_Tile:$result);
  let assemblyFormat =
      "$input `pending` `=` $pending attr-dict `:` type($input)";
}

def Tkw_Matrix : Type<CPred<"::llvm::isa<::tk::warp::MatrixType>($_self)">,
                       "cooperative matrix", "::tk::warp::MatrixType">;

def Tkw_MatrixSplatOp : Tkw_Op<"matrix_splat", [Pure]> {
  let summary = "a cooperative matrix whose every element is `value`";
  let description = [{
    ```mlir
    %zero = tkw.matrix_splat %c0 : f32 -> !tkw.matrix<16, 16, f32, "acc">
    ```
  }];
  let arguments = (ins AnyType:$value);
  let results = (outs Tkw_Matrix:$result);
  let assemblyFormat =
      "$value attr-dict `:` type($value) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Tkw_MatrixLoadOp : Tkw_Op<"matrix_load",
                              [MemoryEffects<[MemRead]>]> {
  let summary = "load a cooperative matrix from memory, row by row";
  let description = [{
    The matrix whose first row starts at `buffer[index]` and whose rows
    are `stride` of the buffer's elements apart; with `column_major`, its
    columns. The buffer's element may be wider than the matrix's (16-byte
    words of f16): the offsets count the buffer's elements. A stride of 0
    repeats one row (column) in every row (column): a broadcast vector.
    ```mlir
    %a = tkw.matrix_load %words[%i] stride = 2
        : memref<512xvector<4xi32>, 3> -> !tkw.matrix<16, 16, f16, "a">
    %rows = tkw.matrix_load %scratch[%r] stride = 0 column_major
        : memref<64xf32, 3> -> !tkw.matrix<16, 16, f32, "acc">
    ```
  }];
  let arguments = (ins AnyMemRef:$buffer, Index:$index, I64Attr:$stride,
                       UnitAttr:$column_major);
  let results = (outs Tkw_Matrix:$result);
  let assemblyFormat = [{
    $buffer `[` $index `]` `stride` `=` $stride (`column_major` $column_major^)?
    attr-dict `:` type($buffer) `->` qualified(type($result))
  }];
}

def Tkw_MatrixStoreOp : Tkw_Op<"matrix_store",
                               [MemoryEffects<[MemWrite]>]> {
  let summary = "store a cooperative matrix to memory, row by row";
  let description = [{
    `tkw.matrix_load`'s inverse.
    ```mlir
    tkw.matrix_store %acc, %scratch[%i] stride = 16
        : !tkw.matrix<16, 16, f32, "acc">, memref<4096xf32, 3>
    ```
  }];
  let arguments = (ins Tkw_Matrix:$value, AnyMemRef:$buffer, Index:$index,
                       I64Attr:$stride);
  let assemblyFormat = [{
    $value `,` $buffer `[` $index `]` `stride` `=` $stride attr-dict `:`
    qualified(type($value)) `,` type($buffer)
  }];
}

def Tkw_MatrixConvertOp : Tkw_Op<"matrix_convert", [Pure]> {
  let summary = "a cooperative matrix in another float type, in place";
  let description = [{
    Each element of `source` rounded (or widened) to the result's float
    type, where the implementation holds it: the matrix does not leave
    its lanes. Same rows, columns and use.
    ```mlir
    %h = tkw.matrix_convert %acc : !tkw.matrix<16, 16, f32, "acc">
        -> !tkw.matrix<16, 16, f16, "acc">
    ```
  }];
  let arguments = (ins Tkw_Matrix:$source);
  let results = (outs Tkw_Matrix:$result);
  let assemblyFormat = [{
    $source attr-dict `:` qualified(type($source)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Tkw_MatrixElementwiseKind : I32EnumAttr<"MatrixElementwiseKind",
    "a float operation cooperative matrices apply element by element", [
      I32EnumAttrCase<"addf", 0>, I32EnumAttrCase<"subf", 1>,
      I32EnumAttrCase<"mulf", 2>, I32EnumAttrCase<"divf", 3>]> {
  let cppNamespace = "::tk::warp";
}

def Tkw_MatrixElementwiseOp : Tkw_Op<"matrix_elementwise",
    [Pure, AllTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "a float operation on two cooperative matrices, in place";
  let description = [{
    `lhs` `kind` `rhs` for each element, where the implementation holds
    it: a scaled or biased accumulator does not leave its lanes. Both
    matrices have the result's type, of a float element.
    ```mlir
    %scaled = tkw.matrix_elementwise mulf %acc, %alpha
        : !tkw.matrix<16, 16, f32, "acc">
    ```
  }];
  let arguments = (ins Tkw_MatrixElementwiseKind:$kind, Tkw_Matrix:$lhs,
                       Tkw_Matrix:$rhs);
  let results = (outs Tkw_Matrix:$result);
  let assemblyFormat = [{
    $kind $lhs `,` $rhs attr-dict `:` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Tkw_MatrixMultiplyAddOp : Tkw_Op<"matrix_multiply_add",
    [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "a x b + acc on cooperative matrices";
  let description = [{
    `a` (m x k, use `a`) times `b` (k x n, use `b`) plus `acc` (m x n, use
    `acc`), in the accumulator's type.
    ```mlir
    %d = tkw.matrix_multiply_add %a, %b, %c : !tkw.matrix<16, 16, bf16, "a">,
        !tkw.matrix<16, 16, bf16, "b"> -> !tkw.matrix<16, 16, f32, "acc">
    ```
  }];
  let arguments = (ins Tkw_Matrix:$a, Tkw_Matrix:$b, Tkw_Matrix:$acc);
  let results = (outs Tkw_Matrix:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` qualified(type($a)) `,`
    qualified(type($b)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

#endif // TK_CORE_WARPOPS_TD
