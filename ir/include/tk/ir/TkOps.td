//===- TkOps.td - tk operations ----------------------------*- tablegen -*-===//
//
// Every op of the tile IR (DESIGN.md §2). Verifiers live in lib/TkOps.cpp and
// say what they expected; element-wise arithmetic comes from `arith`/`math`.
//
//===----------------------------------------------------------------------===//

#ifndef TK_IR_TKOPS_TD
#define TK_IR_TKOPS_TD

include "tk/ir/TkDialect.td"
include "tk/ir/TkTypes.td"
include "tk/ir/TkAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

def Tk_FuncOp : Tk_Op<"func", [
    AutomaticAllocationScope, FunctionOpInterface, IsolatedFromAbove]> {
  let summary = "a kernel";
  let description = [{
    The entry of a kernel. Arguments are pointers and scalars; a kernel
    returns nothing. Constexpr parameters, already folded into the body, are
    recorded in the `tk.constexprs` dictionary so that caches and tools can
    tell specialisations apart. An argument may carry `tk.divisibility`.

    ```mlir
    tk.func @add(%x: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
        attributes {tk.constexprs = {BLOCK = 1024 : i32}} {
      tk.return
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region AnyRegion:$body);
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
                                 "::mlir::FunctionType":$type)>];
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    /// The constexpr parameters the kernel was specialised for (may be null).
    ::mlir::DictionaryAttr getConstexprs();
  }];
}

def Tk_ReturnOp : Tk_Op<"return", [Pure, HasParent<"FuncOp">, ReturnLike,
                                    Terminator]> {
  let summary = "end of a kernel";
  let arguments = (ins Variadic<AnyType>:$srcs);
  let assemblyFormat = "attr-dict ($srcs^ `:` type($srcs))?";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Program position
//===----------------------------------------------------------------------===//

class Tk_GridQueryOp<string mnemonic, string what> : Tk_Op<mnemonic, [Pure]> {
  let summary = what;
  let arguments = (ins ConfinedAttr<I32Attr, [IntNonNegative]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "int":$axis), [{
    build($_builder, $_state, $_builder.getI32Type(), axis);
  }]>];
}

def Tk_ProgramIdOp : Tk_GridQueryOp<"program_id",
    "index of this program instance along a grid axis (0, 1 or 2)"> {
  let description = [{
    ```mlir
    %pid = tk.program_id 0 : i32
    ```
  }];
}
def Tk_NumProgramsOp : Tk_GridQueryOp<"num_programs",
    "number of program instances along a grid axis (0, 1 or 2)"> {
  let description = [{
    ```mlir
    %n = tk.num_programs 0 : i32
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

def Tk_MakeRangeOp : Tk_Op<"make_range", [Pure]> {
  let summary = "the tile [start, end) of i32 (Triton's arange)";
  let description = [{
    `end - start` must be a power of two.
    ```mlir
    %r = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    ```
  }];
  let arguments = (ins I32Attr:$start, I32Attr:$end);
  let results = (outs Tk_TileOf<[I32]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tk_SplatOp : Tk_Op<"splat", [Pure]> {
  let summary = "a tile with every element equal to a scalar";
  let description = [{
    ```mlir
    %t = tk.splat %x : f32 -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Tk_Elem:$src);
  let results = (outs Tk_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tk_BroadcastOp : Tk_Op<"broadcast", [Pure]> {
  let summary = "repeat the size-1 dimensions of a tile";
  let description = [{
    ```mlir
    %b = tk.broadcast %x : tensor<1x128xf32> -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins Tk_Tile:$src);
  let results = (outs Tk_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tk_ExpandDimsOp : Tk_Op<"expand_dims", [Pure]> {
  let summary = "insert a dimension of size 1 (`x[:, None]`)";
  let description = [{
    ```mlir
    %c = tk.expand_dims %x {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
    ```
  }];
  let arguments = (ins Tk_Tile:$src, ConfinedAttr<I32Attr, [IntNonNegative]>:$axis);
  let results = (outs Tk_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tk_ReshapeOp : Tk_Op<"reshape", [Pure]> {
  let summary = "the same elements in another shape (row-major order)";
  let description = [{
    ```mlir
    %r = tk.reshape %x : tensor<4x32xf32> -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Tk_Tile:$src);
  let results = (outs Tk_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tk_TransOp : Tk_Op<"trans", [Pure]> {
  let summary = "permute the dimensions of a tile";
  let description = [{
    Result dimension `i` is source dimension `order[i]`.
    ```mlir
    %t = tk.trans %x {order = array<i32: 1, 0>} : tensor<64x32xf16> -> tensor<32x64xf16>
    ```
  }];
  let arguments = (ins Tk_Tile:$src, DenseI32ArrayAttr:$order);
  let results = (outs Tk_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tk_CatOp : Tk_Op<"cat", [Pure, SameTypeOperands]> {
  let summary = "concatenate two tiles along dimension 0";
  let description = [{
    ```mlir
    %c = tk.cat %a, %b : tensor<32x8xf32> -> tensor<64x8xf32>
    ```
  }];
  let arguments = (ins Tk_Tile:$lhs, Tk_Tile:$rhs);
  let results = (outs Tk_Tile:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
  let hasVerifier = 1;
}

def Tk_JoinOp : Tk_Op<"join", [Pure, SameTypeOperands]> {
  let summary = "stack two tiles along a new minor dimension of size 2";
  let description = [{
    ```mlir
    %j = tk.join %a, %b : tensor<64xf32> -> tensor<64x2xf32>
    ```
  }];
  let arguments = (ins Tk_Tile:$lhs, Tk_Tile:$rhs);
  let results = (outs Tk_Tile:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pointers and memory
//===----------------------------------------------------------------------===//

def Tk_AddPtrOp : Tk_Op<"addptr", [Pure, AllTypesMatch<["ptr", "result"]>]> {
  let summary = "pointer plus element offsets, element-wise";
  let description = [{
    Offsets count elements of the pointee, not bytes.
    ```mlir
    %p = tk.addptr %base, %offs : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
    ```
  }];
  let arguments = (ins Tk_PtrLike:$ptr, Tk_IntLike:$offset);
  let results = (outs Tk_PtrLike:$result);
  let assemblyFormat =
      "$ptr `,` $offset attr-dict `:` type($result) `,` type($offset)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

// The TypesMatchWith constraints of tk.load and tk.store let the parser infer
// the result, mask and other types from the pointer's. Their checks live in
// the ops' verifiers (comparator ::tk::CheckedInVerifier), which name the type
// they expected; the size guards only keep ODS from reading an absent operand.
def Tk_LoadOp : Tk_Op<"load", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    TypesMatchWith<"result is the pointee of the pointers", "ptr", "result",
                   "::tk::getLoadedType($_self)", "::tk::CheckedInVerifier()">,
    TypesMatchWith<"mask is an i1 tile of the pointer tile's shape", "ptr", "mask",
                   "::tk::withElementType($_self, ::mlir::IntegerType::get($_self.getContext(), 1))",
                   "($_op.getOperands().size() <= 1) || ::tk::CheckedInVerifier()">,
    TypesMatchWith<"other has the type of the loaded value", "ptr", "other",
                   "::tk::getLoadedType($_self)",
                   "($_op.getOperands().size() <= 2) || ::tk::CheckedInVerifier()">]> {
  let summary = "masked gather from a pointer tile or a block pointer";
  let description = [{
    Lanes where `mask` is false never touch memory; they yield `other`
    (undefined if `other` is absent). A block-pointer load checks the
    dimensions listed in `boundary_check` against the block pointer's shape
    and yields `padding` outside it.
    ```mlir
    %x = tk.load %ptrs, %mask, %other : tensor<128x!tk.ptr<f32>>
    %b = tk.load %bp {boundary_check = array<i32: 0, 1>, padding = #tk.padding<zero>}
        : !tk.ptr<tensor<64x32xf16>>
    ```
  }];
  let arguments = (ins Tk_Memory:$ptr, Optional<Tk_BoolLike>:$mask,
                       Optional<Tk_Type>:$other,
                       DefaultValuedAttr<DenseI32ArrayAttr, "{}">:$boundary_check,
                       OptionalAttr<Tk_PaddingOptionAttr>:$padding,
                       DefaultValuedAttr<BoolAttr, "false">:$is_volatile);
  let results = (outs Tk_Type:$result);
  let assemblyFormat = [{
    $ptr (`,` $mask^)? (`,` $other^)? attr-dict `:` type($ptr)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$ptr, CArg<"::mlir::Value", "{}">:$mask,
                   CArg<"::mlir::Value", "{}">:$other)>,
    OpBuilder<(ins "::mlir::Value":$blockPtr,
                   "::llvm::ArrayRef<int32_t>":$boundaryCheck,
                   "std::optional<::tk::PaddingOption>":$padding)>
  ];
}

def Tk_StoreOp : Tk_Op<"store", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    TypesMatchWith<"value has the pointee type of the pointers", "ptr", "value",
                   "::tk::getLoadedType($_self)", "::tk::CheckedInVerifier()">,
    TypesMatchWith<"mask is an i1 tile of the pointer tile's shape", "ptr", "mask",
                   "::tk::withElementType($_self, ::mlir::IntegerType::get($_self.getContext(), 1))",
                   "($_op.getOperands().size() <= 2) || ::tk::CheckedInVerifier()">]> {
  let summary = "masked scatter to a pointer tile or a block pointer";
  let description = [{
    Lanes where `mask` is false never touch memory.
    ```mlir
    tk.store %ptrs, %x, %mask : tensor<128x!tk.ptr<f32>>
    tk.store %bp, %tile {boundary_check = array<i32: 0>} : !tk.ptr<tensor<64x32xf16>>
    ```
  }];
  let arguments = (ins Tk_Memory:$ptr, Tk_Type:$value,
                       Optional<Tk_BoolLike>:$mask,
                       DefaultValuedAttr<DenseI32ArrayAttr, "{}">:$boundary_check);
  let assemblyFormat = [{
    $ptr `,` $value (`,` $mask^)? attr-dict `:` type($ptr)
  }];
  let hasVerifier = 1;
}

def Tk_MakeBlockPtrOp : Tk_Op<"make_block_ptr", [Pure, AttrSizedOperandSegments]> {
  let summary = "a block pointer: a tile-sized window into a strided tensor";
  let description = [{
    `shape` and `strides` (i64, in elements) describe the whole tensor,
    `offsets` (i32) where the window starts; `order` lists the dimensions
    from the fastest-varying to the slowest.
    ```mlir
    %bp = tk.make_block_ptr %base, [%M, %K], [%sm, %sk], [%o0, %o1]
        {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
    ```
  }];
  let arguments = (ins Tk_ScalarPtr:$base, Variadic<I64>:$shape,
                       Variadic<I64>:$strides, Variadic<I32>:$offsets,
                       DenseI32ArrayAttr:$order);
  let results = (outs Tk_BlockPtr:$result);
  let assemblyFormat = [{
    $base `,` `[` $shape `]` `,` `[` $strides `]` `,` `[` $offsets `]`
    attr-dict `:` qualified(type($base)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Tk_AdvanceOp : Tk_Op<"advance", [Pure, AllTypesMatch<["ptr", "result"]>]> {
  let summary = "move a block pointer's window by element offsets";
  let description = [{
    ```mlir
    %next = tk.advance %bp, [%c0, %c32] : !tk.ptr<tensor<64x32xf16>>
    ```
  }];
  let arguments = (ins Tk_BlockPtr:$ptr, Variadic<I32>:$offsets);
  let results = (outs Tk_BlockPtr:$result);
  let assemblyFormat =
      "$ptr `,` `[` $offsets `]` attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

def Tk_DotOp : Tk_Op<"dot", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "tile matrix product: result = a · b + acc";
  let description = [{
    `a` is MxK, `b` is KxN, `acc` and the result MxN. Allowed input pairs:
    f16·f16 and f8·f8 into f16 or f32, bf16·bf16 and f32·f32 into f32,
    f64·f64 into f64, i8·i8 into i32. `input_precision` says whether fp32
    inputs may use tf32; `tiling` is the compiler hint on how warps split
    the result.
    ```mlir
    %d = tk.dot %a, %b, %c {input_precision = #tk.input_precision<ieee>}
        : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Tk_Tile:$a, Tk_Tile:$b, Tk_Tile:$acc,
                       DefaultValuedAttr<Tk_InputPrecisionAttr,
                                         "::tk::InputPrecision::IEEE">:$input_precision,
                       OptionalAttr<Tk_DotTilingAttr>:$tiling);
  let results = (outs Tk_Tile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` type($a) `*` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
}

class Tk_CombineOp<string mnemonic, list<Trait> traits = []>
    : Tk_Op<mnemonic, !listconcat(traits, [
        Pure, SingleBlock, RecursiveMemoryEffects])> {
  let arguments = (ins Variadic<Tk_Tile>:$srcs,
                       ConfinedAttr<I32Attr, [IntNonNegative]>:$axis);
  let regions = (region SizedRegion<1>:$combineOp);
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let assemblyFormat = [{
    `(` $srcs `:` type($srcs) `)` attr-dict `->` type($results) $combineOp
  }];
}

def Tk_ReduceOp : Tk_CombineOp<"reduce"> {
  let summary = "reduce tiles along an axis with a combiner region";
  let description = [{
    The region takes two values per source (the accumulated, then the new)
    and returns one per source through `tk.reduce.return`. Several sources
    reduce together, as argmax reduces values and indices. Reducing a 1-D
    tile gives scalars.
    ```mlir
    %s = tk.reduce(%x : tensor<64x128xf32>) {axis = 1 : i32} -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      tk.reduce.return %r : f32
    }
    ```
  }];
  let results = (outs Variadic<Tk_Type>:$results);
  let builders = [OpBuilder<(ins "::mlir::ValueRange":$srcs, "int":$axis)>];
  let extraClassDeclaration = [{
    /// The shape of a result: the sources' shape without `axis`.
    static ::llvm::SmallVector<int64_t> reducedShape(
        ::llvm::ArrayRef<int64_t> shape, int axis);
  }];
}

def Tk_ReduceReturnOp : Tk_Op<"reduce.return", [
    Pure, HasParent<"ReduceOp">, ReturnLike, Terminator]> {
  let summary = "the combined values of a reduce step";
  let arguments = (ins Variadic<AnyType>:$results);
  let assemblyFormat = "$results attr-dict `:` type($results)";
}

def Tk_ScanOp : Tk_CombineOp<"scan"> {
  let summary = "inclusive scan of tiles along an axis";
  let description = [{
    Like `tk.reduce` but keeps every partial result; `reverse` scans from
    the end.
    ```mlir
    %c = tk.scan(%x : tensor<128xi32>) {axis = 0 : i32, reverse = false} -> tensor<128xi32> {
    ^bb0(%a: i32, %b: i32):
      %r = arith.addi %a, %b : i32
      tk.scan.return %r : i32
    }
    ```
  }];
  let arguments = (ins Variadic<Tk_Tile>:$srcs,
                       ConfinedAttr<I32Attr, [IntNonNegative]>:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Variadic<Tk_Tile>:$results);
  let builders = [OpBuilder<(ins "::mlir::ValueRange":$srcs, "int":$axis,
                                 "bool":$reverse)>];
}

def Tk_ScanReturnOp : Tk_Op<"scan.return", [
    Pure, HasParent<"ScanOp">, ReturnLike, Terminator]> {
  let summary = "the combined values of a scan step";
  let arguments = (ins Variadic<AnyType>:$results);
  let assemblyFormat = "$results attr-dict `:` type($results)";
}

def Tk_FpToFpOp : Tk_Op<"fp_to_fp", [Pure, SameOperandsAndResultShape]> {
  let summary = "convert between float formats with a rounding mode";
  let description = [{
    The conversions fp8 ↔ fp16/bf16/f32 and between the wider formats.
    Narrowing needs a rounding mode; widening must not have one.
    ```mlir
    %y = tk.fp_to_fp %x {rounding = #tk.rounding<rtne>} : tensor<128xf32> -> tensor<128xf8E4M3FN>
    ```
  }];
  let arguments = (ins Tk_FloatLike:$src, OptionalAttr<Tk_RoundingModeAttr>:$rounding);
  let results = (outs Tk_FloatLike:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

def Tk_AtomicRMWOp : Tk_Op<"atomic_rmw", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "atomic read-modify-write; returns the old values";
  let description = [{
    ```mlir
    %old = tk.atomic_rmw fadd, acq_rel, %ptrs, %vals, %mask
        : (tensor<128x!tk.ptr<f32>>, tensor<128xf32>, tensor<128xi1>) -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Tk_AtomicRMWKind:$kind, Tk_MemSemantic:$sem,
                       Tk_PtrLike:$ptr, Tk_Type:$val, Optional<Tk_BoolLike>:$mask);
  let results = (outs Tk_Type:$result);
  let assemblyFormat = [{
    $kind `,` $sem `,` $ptr `,` $val (`,` $mask^)? attr-dict `:`
    functional-type(operands, $result)
  }];
  let hasVerifier = 1;
}

def Tk_AtomicCASOp : Tk_Op<"atomic_cas", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "atomic compare-and-swap; returns the old values";
  let description = [{
    ```mlir
    %old = tk.atomic_cas acq_rel, %ptr, %cmp, %val
        : (!tk.ptr<i32>, i32, i32) -> i32
    ```
  }];
  let arguments = (ins Tk_MemSemantic:$sem, Tk_PtrLike:$ptr, Tk_Type:$cmp,
                       Tk_Type:$val);
  let results = (outs Tk_Type:$result);
  let assemblyFormat = [{
    $sem `,` $ptr `,` $cmp `,` $val attr-dict `:` functional-type(operands, $result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Debugging
//===----------------------------------------------------------------------===//

def Tk_AssertOp : Tk_Op<"assert", [
    MemoryEffects<[MemWrite]>]> {
  let summary = "device-side check (debug builds)";
  let description = [{
    ```mlir
    tk.assert %ok, "index out of range" : tensor<128xi1>
    ```
  }];
  let arguments = (ins Tk_BoolLike:$condition, StrAttr:$message);
  let assemblyFormat = "$condition `,` $message attr-dict `:` type($condition)";
}

def Tk_PrintOp : Tk_Op<"print", [MemoryEffects<[MemWrite]>]> {
  let summary = "device-side printing (debug builds)";
  let description = [{
    ```mlir
    tk.print "x = " %x : tensor<128xf32>
    ```
  }];
  let arguments = (ins StrAttr:$prefix, Variadic<Tk_Type>:$args);
  let assemblyFormat = "$prefix ($args^ `:` type($args))? attr-dict";
}

#endif // TK_IR_TKOPS_TD
