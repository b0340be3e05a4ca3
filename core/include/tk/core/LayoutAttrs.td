//===- LayoutAttrs.td - where a tile's elements are ---------*- tablegen -*-===//
//
// The layout attributes of the GPU register pipeline (DESIGN.md §3): the
// `encoding` of a tile type says which register of which lane of which
// warp holds each element (#tkw.linear); the layouts of workgroup memory
// say where each element of a buffer lies (#tkw.swizzled, #tkw.nvmma).
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_LAYOUTATTRS_TD
#define TK_CORE_LAYOUTATTRS_TD

include "tk/core/WarpDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/TensorEncoding.td"

class Tkw_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tkw_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tkw_LinearLayoutAttr
    : Tkw_Attr<"LinearLayout", "linear",
               [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "which register of which lane of which warp holds each "
                "element of a tile";
  let description = [{
    A `tk::LinearLayout` as the encoding of a tile type: the bits of a
    thread's register index, of its lane and of its warp map, linearly over
    GF(2), to the bits of the tile's coordinates. Each bit has a basis, one
    coordinate per tile dimension; the element an index holds is the XOR of
    the bases of its set bits. A zero basis is a broadcast: the indices that
    differ in that bit hold the same element. `shape` is the tile's, so the
    layout of a tile of another shape is another layout.

    The dialect verifies that the layout is one: the bases have one
    coordinate per dimension, each inside its dimension; every dimension is
    a power of two; every element is held by some index (the layout is
    surjective); the tile type has the layout's shape; and, on a function
    with `tkw.threads_per_warp` and `tkw.num_warps`, that every layout in it
    has that many lanes and warps.

    mma.sync's 16x8 accumulator for one warp (lane 4g + t holds row g,
    columns 2t and 2t + 1 in registers 0 and 1, and row g + 8 in registers
    2 and 3):
    ```mlir
    #acc = #tkw.linear<shape = [16, 8], register = [[0, 1], [8, 0]],
        lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>
    %c = ... : tensor<16x8xf32, #acc>
    ```
  }];
  let parameters = (ins AttrParameter<"::tk::LinearLayout",
                                      "register, lane, warp -> dim0, dim1, ...",
                                      "const ::tk::LinearLayout &">
                        :$linearLayout);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The tile's shape: the sizes of the output dimensions dim0, dim1, ...
    llvm::SmallVector<int64_t> getShape() const;
    int64_t getRank() const { return getLinearLayout().getNumOutDims(); }
    /// The sizes of the register, lane and warp dimensions.
    int64_t getNumRegisters() const;
    int64_t getNumLanes() const;
    int64_t getNumWarps() const;
  }];
}

def Tkw_CooperativeMatrixAttr
    : Tkw_Attr<"CooperativeMatrix", "cooperative_matrix",
               [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "a tile held as matrices whose elements the implementation "
                "places among a warp's lanes";
  let description = [{
    The one opaque layout (DESIGN.md §3): Vulkan's cooperative matrices
    (VK_KHR_cooperative_matrix) leave which invocation holds which element
    of a `rows` x `cols` matrix to the driver. A tile in this layout is a
    set of such matrices, one per `rows` x `cols` block: `placement` says
    which warp holds which block, and where each element lies once the
    block has left through workgroup memory (its lanes and lowest
    registers span one block; higher registers and warps move by whole
    blocks). A thread holds one value per matrix, not per element, so the
    tile converts only to and from `placement` (`tkw.convert_layout`),
    through the warp's workgroup memory.
    ```mlir
    #acc = #tkw.cooperative_matrix<rows = 16, cols = 16, placement =
        #tkw.linear<shape = [16, 16], register = [[0, 1], [0, 2], [0, 4]],
                    lane = [[0, 8], [1, 0], [2, 0], [4, 0], [8, 0]],
                    warp = []>>
    ```
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$cols,
                        "LinearLayoutAttr":$placement);
  let assemblyFormat = [{
    `<` `rows` `=` $rows `,` `cols` `=` $cols `,` `placement` `=`
    qualified($placement) `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The registers of `placement` one matrix spans (its lowest).
    int64_t getRegistersPerMatrix() const;
    /// The matrices each warp holds.
    int64_t getNumMatrices() const;
  }];
}

def Tkw_SwizzledSharedAttr : Tkw_Attr<"SwizzledShared", "swizzled"> {
  let summary = "how a tile lies in workgroup memory: rows of vectors, "
                "XOR-swizzled by row";
  let description = [{
    Triton's SwizzledShared encoding: `order` lists the dimensions fastest
    first; the element at offset `row * cols + c` is `(row, c ^ s(row))`
    with `s(row) = (vec * ((row / perPhase) % maxPhase)) % cols`, so that
    the rows of `perPhase` share a phase and `maxPhase` phases spread a
    column of 16-byte vectors over the banks. As a linear layout (input
    `offset`) it is `tk::swizzledSharedLayout`. The layout of the slots of
    a `!tkw.ring`.
    ```mlir
    #tkw.swizzled<vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]>
    ```
  }];
  let parameters = (ins "int64_t":$vec, "int64_t":$perPhase,
                        "int64_t":$maxPhase,
                        ArrayRefParameter<"int64_t">:$order);
  let assemblyFormat = [{
    `<` `vec` `=` $vec `,` `perPhase` `=` $perPhase `,`
        `maxPhase` `=` $maxPhase `,` `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// A tile of `shape` in this layout: offset -> dim0, dim1, ...
    llvm::Expected<::tk::LinearLayout>
    getLinearLayout(llvm::ArrayRef<int64_t> shape) const;
  }];
}

def Tkw_NvmmaSharedAttr : Tkw_Attr<"NvmmaShared", "nvmma"> {
  let summary = "how a tile lies in workgroup memory for NVIDIA's matrix "
                "descriptors";
  let description = [{
    Triton's NVMMAShared encoding, the layout wgmma reads through matrix
    descriptors: `order` lists the two dimensions fastest first; the
    fastest is cut into atoms of `swizzle` bytes (32, 64 or 128), each
    column of atoms stored whole, row after row, and the 16-byte vectors of
    a row XOR-swizzled as the hardware swizzles address bits 4.. by bits
    7... As a linear layout (input `offset`) it is `tk::nvmmaSharedLayout`.
    The layout of the slots of a `!tkw.ring` that a warpgroup dot reads.
    ```mlir
    #tkw.nvmma<swizzle = 128, order = [1, 0]>
    ```
  }];
  let parameters = (ins "int64_t":$swizzle, ArrayRefParameter<"int64_t">:$order);
  let assemblyFormat = [{
    `<` `swizzle` `=` $swizzle `,` `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// A tile of `shape` and `elementBytes` wide elements in this layout:
    /// offset -> dim0, dim1.
    llvm::Expected<::tk::LinearLayout>
    getLinearLayout(llvm::ArrayRef<int64_t> shape, int64_t elementBytes) const;
  }];
}

#endif // TK_CORE_LAYOUTATTRS_TD
