//===- TkTypes.td - tk types and type constraints -----------*- tablegen -*-===//
//
// The pointer type and the constraints every op uses on its operands: element
// types, tiles, pointer tiles and block pointers.
//
//===----------------------------------------------------------------------===//

#ifndef TK_IR_TKTYPES_TD
#define TK_IR_TKTYPES_TD

include "tk/ir/TkDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def Tk_PtrType : TypeDef<Tk_Dialect, "Ptr"> {
  let mnemonic = "ptr";
  let summary = "pointer to global memory";
  let description = [{
    `!tk.ptr<f32>` points to scalars; tiles of it (`tensor<128x!tk.ptr<f32>>`)
    are the pointer tiles that `tk.load` and `tk.store` gather from and
    scatter to. `!tk.ptr<tensor<64x32xf16>>` is a block pointer, made by
    `tk.make_block_ptr`: a structured 2-D window into a strided tensor.
  }];
  let parameters = (ins "::mlir::Type":$pointeeType);
  let assemblyFormat = "`<` $pointeeType `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True when this is a block pointer (its pointee is a tile).
    bool isBlockPointer() const {
      return ::mlir::isa<::mlir::RankedTensorType>(getPointeeType());
    }
  }];
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

def Tk_Float : AnyTypeOf<[F8E4M3FN, F8E5M2, F16, BF16, F32, F64], "floating-point">;
def Tk_Int : AnyTypeOf<[I1, I8, I16, I32, I64], "integer">;
def Tk_Index : AnyTypeOf<[I32, I64], "32- or 64-bit integer">;

def Tk_ScalarPtr : Type<
    And<[CPred<"::mlir::isa<::tk::PtrType>($_self)">,
         CPred<"!::mlir::cast<::tk::PtrType>($_self).isBlockPointer()">]>,
    "pointer to a scalar", "::tk::PtrType">;
def Tk_BlockPtr : Type<
    And<[CPred<"::mlir::isa<::tk::PtrType>($_self)">,
         CPred<"::mlir::cast<::tk::PtrType>($_self).isBlockPointer()">]>,
    "block pointer", "::tk::PtrType">;

def Tk_Elem : AnyTypeOf<[Tk_Float, Tk_Int, Tk_ScalarPtr], "tk element">;

//===----------------------------------------------------------------------===//
// Tiles
//===----------------------------------------------------------------------===//

// Tiles are the builtin ranked tensors with a static shape. The summary names
// the element types so that an operand error says which tile was expected.
class Tk_TileOf<list<Type> elems> :
    AllOfType<[StaticShapeTensorOf<elems>, RankedTensorOf<elems>],
              "statically shaped tile of " #
                  !interleave(!foreach(t, elems, t.summary), " or "),
              "::mlir::RankedTensorType">;

def Tk_FloatTile : Tk_TileOf<[Tk_Float]>;
def Tk_IntTile : Tk_TileOf<[Tk_Int]>;
def Tk_BoolTile : Tk_TileOf<[I1]>;
def Tk_PtrTile : Tk_TileOf<[Tk_ScalarPtr]>;
def Tk_Tile : Tk_TileOf<[Tk_Float, Tk_Int, Tk_ScalarPtr]>;

def Tk_FloatLike : AnyTypeOf<[Tk_Float, Tk_FloatTile]>;
def Tk_IntLike : AnyTypeOf<[Tk_Int, Tk_IntTile]>;
def Tk_BoolLike : AnyTypeOf<[I1, Tk_BoolTile]>;
def Tk_PtrLike : AnyTypeOf<[Tk_ScalarPtr, Tk_PtrTile]>;
def Tk_Type : AnyTypeOf<[Tk_Elem, Tk_Tile]>;
def Tk_Memory : AnyTypeOf<[Tk_ScalarPtr, Tk_PtrTile, Tk_BlockPtr]>;

#endif // TK_IR_TKTYPES_TD
