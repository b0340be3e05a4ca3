//===- TtOps.td - the tt ops tk imports ---------------------*- tablegen -*-===//
//
// Each op has Triton 3.6's name, attribute names and printed syntax, so that
// TTIR Triton wrote parses unchanged. Types are checked once the op is tk
// (tk's verifiers say what they expected); here the definitions only carry
// what the syntax needs to infer (a load's result from its pointer). Ops
// Triton has and tk cannot run (gather, histogram, inline assembly, scaled
// dots, descriptor gathers and scatters) are not defined: the reader names
// them as unsupported when the parser meets them.
//
//===----------------------------------------------------------------------===//

#ifndef TK_TTIR_TTOPS_TD
#define TK_TTIR_TTOPS_TD

include "tk/ttir/TtDialect.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

def Tt_FuncOp : Tt_Op<"func", [
    AutomaticAllocationScope, FunctionOpInterface, IsolatedFromAbove]> {
  let summary = "a Triton kernel or helper function";
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region AnyRegion:$body);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() {
      return isExternal() ? nullptr : &getBody();
    }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
  }];
}

def Tt_ReturnOp : Tt_Op<"return", [Pure, HasParent<"FuncOp">, ReturnLike,
                                    Terminator]> {
  let arguments = (ins Variadic<AnyType>:$srcs);
  let assemblyFormat = "attr-dict ($srcs^ `:` type($srcs))?";
}

def Tt_CallOp : Tt_Op<"call"> {
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyType>:$operands);
  let results = (outs Variadic<AnyType>);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Program position and shapes
//===----------------------------------------------------------------------===//

def Tt_GetProgramIdOp : Tt_Op<"get_program_id", [Pure]> {
  let arguments = (ins Tt_ProgramDim:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

def Tt_GetNumProgramsOp : Tt_Op<"get_num_programs", [Pure]> {
  let arguments = (ins Tt_ProgramDim:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

def Tt_MakeRangeOp : Tt_Op<"make_range", [Pure]> {
  let arguments = (ins I32Attr:$start, I32Attr:$end);
  let results = (outs AnyType:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

class Tt_UnaryShapeOp<string mnemonic> : Tt_Op<mnemonic, [Pure]> {
  let results = (outs AnyType:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
}

def Tt_SplatOp : Tt_UnaryShapeOp<"splat"> { let arguments = (ins AnyType:$src); }
def Tt_BroadcastOp : Tt_UnaryShapeOp<"broadcast"> { let arguments = (ins AnyType:$src); }
def Tt_ExpandDimsOp : Tt_UnaryShapeOp<"expand_dims"> {
  let arguments = (ins AnyType:$src, I32Attr:$axis);
}
def Tt_TransOp : Tt_UnaryShapeOp<"trans"> {
  let arguments = (ins AnyType:$src, DenseI32ArrayAttr:$order);
}
def Tt_BitcastOp : Tt_UnaryShapeOp<"bitcast"> { let arguments = (ins AnyType:$src); }
def Tt_IntToPtrOp : Tt_UnaryShapeOp<"int_to_ptr"> { let arguments = (ins AnyType:$src); }
def Tt_PtrToIntOp : Tt_UnaryShapeOp<"ptr_to_int"> { let arguments = (ins AnyType:$src); }

def Tt_ReshapeOp : Tt_Op<"reshape", [Pure]> {
  let arguments = (ins AnyType:$src, UnitAttr:$allow_reorder,
                       UnitAttr:$efficient_layout);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $src (`allow_reorder` $allow_reorder^)? (`efficient_layout` $efficient_layout^)?
    attr-dict `:` type($src) `->` type($result)
  }];
}

class Tt_PairOp<string mnemonic> : Tt_Op<mnemonic, [Pure, SameTypeOperands]> {
  let arguments = (ins AnyType:$lhs, AnyType:$rhs);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
}
def Tt_CatOp : Tt_PairOp<"cat">;
def Tt_JoinOp : Tt_PairOp<"join">;

def Tt_SplitOp : Tt_Op<"split", [Pure, AllTypesMatch<["outLHS", "outRHS"]>]> {
  let arguments = (ins AnyType:$src);
  let results = (outs AnyType:$outLHS, AnyType:$outRHS);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($outLHS)";
}

//===----------------------------------------------------------------------===//
// Pointers and memory
//===----------------------------------------------------------------------===//

def Tt_AddPtrOp : Tt_Op<"addptr", [Pure, AllTypesMatch<["ptr", "result"]>]> {
  let arguments = (ins AnyType:$ptr, AnyType:$offset);
  let results = (outs AnyType:$result);
  let assemblyFormat =
      "$ptr `,` $offset attr-dict `:` type($result) `,` type($offset)";
}

def Tt_LoadOp : Tt_Op<"load", [
    AttrSizedOperandSegments,
    TypesMatchWith<"result is the pointee", "ptr", "result",
                   "::tk::ttir::getPointeeType($_self)">,
    TypesMatchWith<"mask is i1 of the pointee's shape", "ptr", "mask",
                   "::tk::ttir::getMaskType($_self)",
                   "($_op.getOperands().size() <= 1) || std::equal_to<>()">,
    TypesMatchWith<"other is the pointee", "ptr", "other",
                   "::tk::ttir::getPointeeType($_self)",
                   "($_op.getOperands().size() <= 2) || std::equal_to<>()">]> {
  let arguments = (ins AnyType:$ptr, Optional<AnyType>:$mask,
                       Optional<AnyType>:$other,
                       DefaultValuedAttr<DenseI32ArrayAttr, "{}">:$boundaryCheck,
                       OptionalAttr<Tt_PaddingOption>:$padding,
                       DefaultValuedAttr<Tt_CacheModifier,
                                         "::tk::ttir::CacheModifier::None">:$cache,
                       DefaultValuedAttr<Tt_EvictionPolicy,
                                         "::tk::ttir::EvictionPolicy::Normal">:$evict,
                       DefaultValuedAttr<BoolAttr, "false">:$isVolatile);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $ptr (`,` $mask^)? (`,` $other^)?
    oilist(`cacheModifier` `=` $cache | `evictionPolicy` `=` $evict)
    attr-dict `:` type($ptr)
  }];
}

def Tt_StoreOp : Tt_Op<"store", [
    TypesMatchWith<"value is the pointee", "ptr", "value",
                   "::tk::ttir::getPointeeType($_self)">,
    TypesMatchWith<"mask is i1 of the pointee's shape", "ptr", "mask",
                   "::tk::ttir::getMaskType($_self)",
                   "($_op.getOperands().size() <= 2) || std::equal_to<>()">]> {
  let arguments = (ins AnyType:$ptr, AnyType:$value, Optional<AnyType>:$mask,
                       DefaultValuedAttr<DenseI32ArrayAttr, "{}">:$boundaryCheck,
                       DefaultValuedAttr<Tt_CacheModifier,
                                         "::tk::ttir::CacheModifier::None">:$cache,
                       DefaultValuedAttr<Tt_EvictionPolicy,
                                         "::tk::ttir::EvictionPolicy::Normal">:$evict);
  let assemblyFormat = [{
    $ptr `,` $value (`,` $mask^)?
    oilist(`cacheModifier` `=` $cache | `evictionPolicy` `=` $evict)
    attr-dict `:` type($ptr)
  }];
}

def Tt_MakeTensorPtrOp : Tt_Op<"make_tensor_ptr", [
    Pure, SameVariadicOperandSize,
    TypesMatchWith<"base points at the block's element type", "result", "base",
                   "::tk::ttir::getBlockBaseType($_self)">]> {
  let arguments = (ins AnyType:$base, Variadic<I64>:$shape,
                       Variadic<I64>:$strides, Variadic<I32>:$offsets,
                       DenseI32ArrayAttr:$order);
  // The block pointer's own type: Triton prints it without `!tt.ptr`.
  let results = (outs Tt_PtrType:$result);
  let assemblyFormat = [{
    $base `,` `[` $shape `]` `,` `[` $strides `]` `,` `[` $offsets `]`
    attr-dict `:` type($result)
  }];
}

// Tensor descriptors (tl.make_tensor_descriptor, and its loads and stores):
// a block pointer at offset zero whose loads and stores check every bound.
def Tt_MakeTensorDescOp : Tt_Op<"make_tensor_descriptor", [
    Pure, SameVariadicOperandSize]> {
  let arguments = (ins Tt_PtrType:$base, Variadic<I32>:$shape,
                       Variadic<I64>:$strides,
                       OptionalAttr<Tt_PaddingOption>:$padding);
  let results = (outs Tt_TensorDescType:$result);
  let assemblyFormat = [{
    $base `,` `[` $shape `]` `,` `[` $strides `]` attr-dict `:` type($base)
    `,` type($result)
  }];
}

def Tt_DescriptorLoadOp : Tt_Op<"descriptor_load"> {
  let arguments = (ins Tt_TensorDescType:$desc, Variadic<I32>:$indices,
                       DefaultValuedAttr<Tt_CacheModifier,
                                         "::tk::ttir::CacheModifier::None">:$cache,
                       DefaultValuedAttr<Tt_EvictionPolicy,
                                         "::tk::ttir::EvictionPolicy::Normal">:$evict);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $desc `[` $indices `]`
    oilist(`cacheModifier` `=` $cache | `evictionPolicy` `=` $evict)
    attr-dict `:` qualified(type($desc)) `->` type($result)
  }];
}

def Tt_DescriptorStoreOp : Tt_Op<"descriptor_store"> {
  let arguments = (ins Tt_TensorDescType:$desc, AnyRankedTensor:$src,
                       Variadic<I32>:$indices);
  let assemblyFormat = [{
    $desc `[` $indices `]` `,` $src attr-dict `:` qualified(type($desc)) `,`
    type($src)
  }];
}

def Tt_AdvanceOp : Tt_Op<"advance", [Pure, AllTypesMatch<["ptr", "result"]>]> {
  let arguments = (ins Tt_PtrType:$ptr, Variadic<I32>:$offsets);
  let results = (outs Tt_PtrType:$result);
  let assemblyFormat = "$ptr `,` `[` $offsets `]` attr-dict `:` type($result)";
}

def Tt_AtomicRMWOp : Tt_Op<"atomic_rmw"> {
  let arguments = (ins Tt_RMWOp:$atomic_rmw_op, AnyType:$ptr, AnyType:$val,
                       Optional<AnyType>:$mask, Tt_MemSemantic:$sem,
                       Tt_MemSyncScope:$scope);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $atomic_rmw_op `,` $sem `,` $scope `,` $ptr `,` $val (`,` $mask^)? attr-dict
    `:` functional-type(operands, $result)
  }];
}

def Tt_AtomicCASOp : Tt_Op<"atomic_cas"> {
  let arguments = (ins AnyType:$ptr, AnyType:$cmp, AnyType:$val,
                       Tt_MemSemantic:$sem, Tt_MemSyncScope:$scope);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $sem `,` $scope `,` $ptr `,` $cmp `,` $val attr-dict
    `:` functional-type(operands, $result)
  }];
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

def Tt_DotOp : Tt_Op<"dot", [Pure, AllTypesMatch<["c", "d"]>]> {
  let arguments = (ins AnyType:$a, AnyType:$b, AnyType:$c,
                       DefaultValuedAttr<Tt_InputPrecision,
                                         "::tk::ttir::InputPrecision::IEEE">:$inputPrecision,
                       DefaultValuedAttr<I32Attr, "0">:$maxNumImpreciseAcc);
  let results = (outs AnyType:$d);
  let assemblyFormat = [{
    $a `,` $b `,` $c (`,` `inputPrecision` `=` $inputPrecision^)? attr-dict `:`
    type($a) `*` type($b) `->` type($d)
  }];
}

// Triton prints reduce and scan in the generic form.
def Tt_ReduceOp : Tt_Op<"reduce", [Pure, SingleBlock, RecursiveMemoryEffects]> {
  let arguments = (ins Variadic<AnyType>:$srcs, I32Attr:$axis);
  let results = (outs Variadic<AnyType>:$result);
  let regions = (region SizedRegion<1>:$combineOp);
}

def Tt_ReduceReturnOp : Tt_Op<"reduce.return", [
    Pure, HasParent<"ReduceOp">, ReturnLike, Terminator]> {
  let arguments = (ins Variadic<AnyType>:$result);
  let assemblyFormat = "$result attr-dict `:` type($result)";
}

def Tt_ScanOp : Tt_Op<"scan", [Pure, SingleBlock, RecursiveMemoryEffects]> {
  let arguments = (ins Variadic<AnyType>:$srcs, I32Attr:$axis, BoolAttr:$reverse);
  let results = (outs Variadic<AnyType>:$result);
  let regions = (region SizedRegion<1>:$combineOp);
}

def Tt_ScanReturnOp : Tt_Op<"scan.return", [
    Pure, HasParent<"ScanOp">, ReturnLike, Terminator]> {
  let arguments = (ins Variadic<AnyType>:$result);
  let assemblyFormat = "$result attr-dict `:` type($result)";
}

def Tt_FpToFpOp : Tt_Op<"fp_to_fp", [Pure]> {
  let arguments = (ins AnyType:$src, OptionalAttr<Tt_RoundingMode>:$rounding);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $src attr-dict (`,` `rounding` `=` $rounding^)? `:` type($src) `->` type($result)
  }];
}

def Tt_ClampFOp : Tt_Op<"clampf", [Pure, SameOperandsAndResultType]> {
  let arguments = (ins AnyType:$x, AnyType:$min, AnyType:$max,
                       Tt_PropagateNan:$propagateNan);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $x `,` $min `,` $max `,` `propagateNan` `=` $propagateNan attr-dict `:` type($result)
  }];
}

def Tt_PreciseSqrtOp : Tt_Op<"precise_sqrt", [Pure, SameOperandsAndResultType]> {
  let arguments = (ins AnyType:$x);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

class Tt_BinaryOp<string mnemonic> : Tt_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let arguments = (ins AnyType:$x, AnyType:$y);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$x `,` $y attr-dict `:` type($x)";
}
def Tt_PreciseDivFOp : Tt_BinaryOp<"precise_divf">;
def Tt_MulhiUIOp : Tt_BinaryOp<"mulhiui">;

def Tt_ExternElementwiseOp : Tt_Op<"extern_elementwise"> {
  let arguments = (ins Variadic<AnyType>:$srcs, StrAttr:$libname,
                       StrAttr:$libpath, StrAttr:$symbol, BoolAttr:$pure);
  let results = (outs AnyType:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, $result)";
}

//===----------------------------------------------------------------------===//
// Debugging
//===----------------------------------------------------------------------===//

def Tt_PrintOp : Tt_Op<"print", [MemoryEffects<[MemWrite]>]> {
  let arguments = (ins StrAttr:$prefix, BoolAttr:$hex, Variadic<AnyType>:$args,
                       DenseI32ArrayAttr:$isSigned);
  let assemblyFormat = "$prefix attr-dict (`:` $args^ `:` type($args))?";
}

def Tt_AssertOp : Tt_Op<"assert", [MemoryEffects<[MemWrite]>]> {
  let arguments = (ins AnyType:$condition, StrAttr:$message);
  let assemblyFormat = "$condition `,` $message attr-dict `:` type($condition)";
}

#endif // TK_TTIR_TTOPS_TD
