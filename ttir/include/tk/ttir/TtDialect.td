//===- TtDialect.td - Triton's tt dialect, as read by tk ----*- tablegen -*-===//
//
// The subset of Triton's `tt` dialect that tk imports, with the syntax Triton
// 3.6 prints (`kernel.asm["ttir"]`, TRITON_KERNEL_DUMP). These definitions
// exist to parse TTIR without linking Triton; nothing is lowered from them
// but their conversion to tk (tk-convert-tt-to-tk). The enums keep Triton's
// integer values, because attributes left in `attr-dict` (a load's
// `padding`) are printed as those integers.
//
//===----------------------------------------------------------------------===//

#ifndef TK_TTIR_TTDIALECT_TD
#define TK_TTIR_TTDIALECT_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def Tt_Dialect : Dialect {
  let name = "tt";
  let cppNamespace = "::tk::ttir";
  let summary = "Triton's tile IR (TTIR), read to be converted into tk";
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::ub::UBDialect"
  ];
  let useDefaultTypePrinterParser = 1;
}

class Tt_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tt_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Tt_PtrType : TypeDef<Tt_Dialect, "Ptr"> {
  let mnemonic = "ptr";
  let summary = "a pointer to a scalar, or a block pointer to a tensor";
  let parameters = (ins "::mlir::Type":$pointeeType,
                        DefaultValuedParameter<"int", "1">:$addressSpace);
  let assemblyFormat = "`<` $pointeeType (`,` $addressSpace^)? `>`";
}

def Tt_TensorDescType : TypeDef<Tt_Dialect, "TensorDesc"> {
  let mnemonic = "tensordesc";
  let summary = "a tensor descriptor: a global tensor and the block a load "
                "or store of it moves";
  // Triton 3.6 prints the block as `tensor<64x64xf16>`; later Triton as
  // `64x64xf16`. Both parse.
  let parameters = (ins "::mlir::RankedTensorType":$blockType);
  let hasCustomAssemblyFormat = 1;
}


//===----------------------------------------------------------------------===//
// Enums (Triton's cases and values)
//===----------------------------------------------------------------------===//

def Tt_CacheModifier : I32EnumAttr<"CacheModifier", "a load or store's cache hint", [
    I32EnumAttrCase<"None", 1, "none">, I32EnumAttrCase<"CA", 2, "ca">,
    I32EnumAttrCase<"CG", 3, "cg">, I32EnumAttrCase<"WB", 4, "wb">,
    I32EnumAttrCase<"CS", 5, "cs">, I32EnumAttrCase<"WT", 6, "wt">,
    I32EnumAttrCase<"CV", 7, "cv">]> {
  let cppNamespace = "::tk::ttir";
}

def Tt_EvictionPolicy : I32EnumAttr<"EvictionPolicy", "a load or store's eviction hint", [
    I32EnumAttrCase<"Normal", 1, "evict_normal">,
    I32EnumAttrCase<"EvictFirst", 2, "evict_first">,
    I32EnumAttrCase<"EvictLast", 3, "evict_last">]> {
  let cppNamespace = "::tk::ttir";
}

def Tt_PaddingOption : I32EnumAttr<"PaddingOption", "what a block load gives out of bounds", [
    I32EnumAttrCase<"Zero", 1, "zero">, I32EnumAttrCase<"NaN", 2, "nan">]> {
  let cppNamespace = "::tk::ttir";
}

def Tt_RMWOp : I32EnumAttr<"RMWOp", "an atomic read-modify-write", [
    I32EnumAttrCase<"And", 1, "and">, I32EnumAttrCase<"Or", 2, "or">,
    I32EnumAttrCase<"Xor", 3, "xor">, I32EnumAttrCase<"Add", 4, "add">,
    I32EnumAttrCase<"FAdd", 5, "fadd">, I32EnumAttrCase<"Max", 6, "max">,
    I32EnumAttrCase<"Min", 7, "min">, I32EnumAttrCase<"UMax", 8, "umax">,
    I32EnumAttrCase<"UMin", 9, "umin">, I32EnumAttrCase<"Xchg", 10, "exch">]> {
  let cppNamespace = "::tk::ttir";
}

def Tt_MemSemantic : I32EnumAttr<"MemSemantic", "an atomic's ordering", [
    I32EnumAttrCase<"Relaxed", 1, "relaxed">,
    I32EnumAttrCase<"Acquire", 2, "acquire">,
    I32EnumAttrCase<"Release", 3, "release">,
    I32EnumAttrCase<"AcqRel", 4, "acq_rel">]> {
  let cppNamespace = "::tk::ttir";
}

def Tt_MemSyncScope : I32EnumAttr<"MemSyncScope", "an atomic's scope", [
    I32EnumAttrCase<"GPU", 1, "gpu">, I32EnumAttrCase<"CTA", 2, "cta">,
    I32EnumAttrCase<"System", 3, "sys">]> {
  let cppNamespace = "::tk::ttir";
}

def Tt_ProgramDim : I32EnumAttr<"ProgramIDDim", "a grid axis", [
    I32EnumAttrCase<"X", 0, "x">, I32EnumAttrCase<"Y", 1, "y">,
    I32EnumAttrCase<"Z", 2, "z">]> {
  let cppNamespace = "::tk::ttir";
}

def Tt_RoundingMode : I32EnumAttr<"RoundingMode", "a float conversion's rounding", [
    I32EnumAttrCase<"RTZ", 0, "rtz">, I32EnumAttrCase<"RTNE", 1, "rtne">]> {
  let cppNamespace = "::tk::ttir";
}

def Tt_PropagateNan : I32EnumAttr<"PropagateNan", "whether clampf returns NaN inputs", [
    I32EnumAttrCase<"None", 0, "none">, I32EnumAttrCase<"All", 0xFFFF, "all">]> {
  let cppNamespace = "::tk::ttir";
}

def Tt_InputPrecision : I32EnumAttr<"InputPrecision", "how a dot of f32 may use tensor cores", [
    I32EnumAttrCase<"TF32", 0, "tf32">, I32EnumAttrCase<"TF32x3", 1, "tf32x3">,
    I32EnumAttrCase<"IEEE", 2, "ieee">, I32EnumAttrCase<"BF16x3", 3, "bf16x3">,
    I32EnumAttrCase<"BF16x6", 4, "bf16x6">]> {
  let cppNamespace = "::tk::ttir";
}

#endif // TK_TTIR_TTDIALECT_TD
