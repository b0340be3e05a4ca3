//===- TkAttrs.td - tk enum attributes ----------------------*- tablegen -*-===//
//
// The enumerations ops carry: dot precision and tiling hint, atomic kinds and
// memory semantics, rounding modes, block-pointer padding.
//
//===----------------------------------------------------------------------===//

#ifndef TK_IR_TKATTRS_TD
#define TK_IR_TKATTRS_TD

include "tk/ir/TkDialect.td"
include "mlir/IR/EnumAttr.td"

// Enums that sit in an op's attribute dictionary print as `#tk.padding<zero>`
// (hence the `<` `>` format); the atomic kind and memory semantic are part of
// the op syntax (`tk.atomic_rmw fadd, acq_rel, ...`) and print bare: they are
// plain integer enum attributes (an EnumAttr would print with extra spaces).

def Tk_InputPrecision : I32EnumAttr<"InputPrecision",
    "how a dot treats fp32 inputs", [
      I32EnumAttrCase<"IEEE", 0, "ieee">,
      I32EnumAttrCase<"TF32", 1, "tf32">,
      I32EnumAttrCase<"TF32x3", 2, "tf32x3">]> {
  let cppNamespace = "::tk";
  let genSpecializedAttr = 0;
}
def Tk_InputPrecisionAttr : EnumAttr<Tk_Dialect, Tk_InputPrecision, "input_precision"> {
  let assemblyFormat = "`<` $value `>`";
}

// ML-Triton's tiling hint: how the warps of a workgroup split a dot's result.
def Tk_DotTiling : I32EnumAttr<"DotTiling", "how warps partition a dot", [
      I32EnumAttrCase<"Square", 0, "square">,
      I32EnumAttrCase<"Horizontal", 1, "horizontal">,
      I32EnumAttrCase<"Vertical", 2, "vertical">]> {
  let cppNamespace = "::tk";
  let genSpecializedAttr = 0;
}
def Tk_DotTilingAttr : EnumAttr<Tk_Dialect, Tk_DotTiling, "tiling"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tk_AtomicRMWKind : I32EnumAttr<"AtomicRMWKind", "atomic read-modify-write", [
      I32EnumAttrCase<"Add", 0, "add">,
      I32EnumAttrCase<"FAdd", 1, "fadd">,
      I32EnumAttrCase<"Max", 2, "max">,
      I32EnumAttrCase<"Min", 3, "min">,
      I32EnumAttrCase<"UMax", 4, "umax">,
      I32EnumAttrCase<"UMin", 5, "umin">,
      I32EnumAttrCase<"And", 6, "and">,
      I32EnumAttrCase<"Or", 7, "or">,
      I32EnumAttrCase<"Xor", 8, "xor">,
      I32EnumAttrCase<"Xchg", 9, "xchg">]> {
  let cppNamespace = "::tk";
  let genSpecializedAttr = 1;
}

def Tk_MemSemantic : I32EnumAttr<"MemSemantic", "memory ordering of an atomic", [
      I32EnumAttrCase<"Relaxed", 0, "relaxed">,
      I32EnumAttrCase<"Acquire", 1, "acquire">,
      I32EnumAttrCase<"Release", 2, "release">,
      I32EnumAttrCase<"AcqRel", 3, "acq_rel">]> {
  let cppNamespace = "::tk";
  let genSpecializedAttr = 1;
}

def Tk_RoundingMode : I32EnumAttr<"RoundingMode", "float rounding mode", [
      I32EnumAttrCase<"RTNE", 0, "rtne">,
      I32EnumAttrCase<"RTZ", 1, "rtz">]> {
  let cppNamespace = "::tk";
  let genSpecializedAttr = 0;
}
def Tk_RoundingModeAttr : EnumAttr<Tk_Dialect, Tk_RoundingMode, "rounding"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tk_PaddingOption : I32EnumAttr<"PaddingOption",
    "value of out-of-bounds elements of a block load", [
      I32EnumAttrCase<"Zero", 0, "zero">,
      I32EnumAttrCase<"NaN", 1, "nan">]> {
  let cppNamespace = "::tk";
  let genSpecializedAttr = 0;
}
def Tk_PaddingOptionAttr : EnumAttr<Tk_Dialect, Tk_PaddingOption, "padding"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // TK_IR_TKATTRS_TD
