//===- TkDialect.td - the tk tile dialect -------------------*- tablegen -*-===//
//
// The dialect declaration shared by the type, attribute and op definitions.
//
//===----------------------------------------------------------------------===//

#ifndef TK_IR_TKDIALECT_TD
#define TK_IR_TKDIALECT_TD

include "mlir/IR/OpBase.td"

def Tk_Dialect : Dialect {
  let name = "tk";
  let cppNamespace = "::tk";
  let summary = "A backend-neutral tile IR in Triton's block programming model";
  let description = [{
    A kernel is a `tk.func` whose body works on statically shaped tiles
    (`tensor<128x64xf16>`) of scalars or of pointers (`!tk.ptr<f32>`). Program
    ids, ranges, masked loads and stores, dot and reductions follow Triton's
    semantics so that a Triton program maps onto tk one op to one op.
    Element-wise arithmetic, math and control flow reuse `arith`, `math` and
    `scf`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect"
  ];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    /// Argument attribute: the argument (a pointer or an integer) is a
    /// multiple of this power of two. Feeds vectorisation.
    static constexpr llvm::StringLiteral kDivisibilityAttrName = "tk.divisibility";
    /// Function attribute: the constexpr parameters the kernel was
    /// specialised for, a dictionary from name to integer, float or bool.
    static constexpr llvm::StringLiteral kConstexprsAttrName = "tk.constexprs";
    /// Function attribute: the source names of the arguments, one string per
    /// argument, so diagnostics and constexpr values can name them.
    static constexpr llvm::StringLiteral kArgNamesAttrName = "tk.arg_names";
  }];
}

class Tk_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tk_Dialect, mnemonic, traits>;

#endif // TK_IR_TKDIALECT_TD
