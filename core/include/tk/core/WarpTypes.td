//===- WarpTypes.td - types of the warp dialect -------------*- tablegen -*-===//
//
// Workgroup memory as a value: the rings of slots that asynchronous copies
// fill ahead of the loop trips that read them (DESIGN.md §3, pass 5); and
// the matrices of a cooperative-matrix unit, whose elements the
// implementation places among a subgroup's lanes.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_WARPTYPES_TD
#define TK_CORE_WARPTYPES_TD

include "tk/core/WarpDialect.td"
include "mlir/IR/AttrTypeBase.td"

class Tkw_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Tkw_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Tkw_RingType : Tkw_Type<"Ring", "ring"> {
  let summary = "slots of workgroup memory, each holding one tile";
  let description = [{
    `slots` buffers of a tile of `shape` and `elementType`, one after
    another in workgroup memory, each laid out by `layout` (a
    `#tkw.swizzled`, or a `#tkw.nvmma` where a warpgroup dot reads
    the slots in place). `tkw.local_alloc` makes one; `tkw.async_copy` fills a
    slot from global memory and `tkw.local_load` reads one into registers.
    Where it lies is `tk-allocate-shared-memory`'s decision, from the
    ring's live range. Triton's `!ttg.memdesc`, for rings only.
    ```mlir
    !tkw.ring<2, [128, 32], f16, #tkw.swizzled<vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]>>
    ```
  }];
  let parameters = (ins "int64_t":$slots, ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::Attribute":$layout);
  let assemblyFormat =
      "`<` $slots `,` `[` $shape `]` `,` $elementType `,` $layout `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// One slot's size in bytes (i1 kept as i8).
    int64_t getSlotBytes() const;
    /// The slot's layout as offset -> dim0, dim1, ...
    llvm::Expected<::tk::LinearLayout> getSlotLayout() const;
  }];
}

def Tkw_MatrixType : Tkw_Type<"Matrix", "matrix"> {
  let summary = "one matrix of a cooperative-matrix unit";
  let description = [{
    A `rows` x `cols` matrix of `elementType` held by a subgroup, each
    element in a lane the implementation chooses (Vulkan's
    `VK_KHR_cooperative_matrix`): the values a `#tkw.cooperative_matrix`
    tile lowers to, one a matrix. `use` is the operand of a product it can
    be: `a`, `b` or `acc`. Unlike `!gpu.mma_matrix`, any element type a
    device's unit may list, bf16 included; integers carry their signedness
    (`si8`), which the product needs.
    ```mlir
    !tkw.matrix<16, 16, bf16, "a">
    ```
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$cols,
                        "::mlir::Type":$elementType,
                        StringRefParameter<"a, b or acc">:$use);
  let assemblyFormat = "`<` $rows `,` $cols `,` $elementType `,` $use `>`";
  let genVerifyDecl = 1;
}

#endif // TK_CORE_WARPTYPES_TD
