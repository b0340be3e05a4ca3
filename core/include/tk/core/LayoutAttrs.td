//===- LayoutAttrs.td - how warps share a tile --------------*- tablegen -*-===//
//
// The layout attributes of the warp level: the `encoding` of a tile type says
// which part of the tile each warp of the workgroup holds. Layouts record
// sizes per warp, not per lane (ML-Triton): what a lane holds is decided when
// the backend lowers to SIMT.
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

def Tkw_BlockedLayoutAttr : Tkw_Attr<"BlockedLayout", "blocked"> {
  let summary = "warps hold blocks of sizePerWarp in a warpsPerCTA grid";
  let description = [{
    The warps of a workgroup form a grid of `warpsPerCTA` (its product is the
    number of warps); `order` lists the grid's dimensions from the
    fastest-varying to the slowest, so with `order = [1, 0]` warps 0, 1, 2, 3
    are the first row of the grid. The warp at grid coordinate `c` holds the
    block that starts at `(c[d] * sizePerWarp[d]) mod shape[d]` along each
    dimension `d`, of `min(sizePerWarp[d], shape[d])` elements. Where the
    tile is smaller than `sizePerWarp * warpsPerCTA`, blocks wrap around and
    warps hold copies (a broadcast dimension of size 1 is held whole by
    every warp).

    The seed example: a 256x256 accumulator over 32 warps, square partition:
    ```mlir
    #C = #tkw.blocked<sizePerWarp = [32, 64], warpsPerCTA = [8, 4], order = [1, 0]>
    %c = ... : tensor<256x256xf32, #C>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$sizePerWarp,
                        ArrayRefParameter<"int64_t">:$warpsPerCTA,
                        ArrayRefParameter<"int64_t">:$order);
  let assemblyFormat = [{
    `<` `sizePerWarp` `=` `[` $sizePerWarp `]` `,`
        `warpsPerCTA` `=` `[` $warpsPerCTA `]` `,`
        `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The number of dimensions the layout describes.
    int64_t getRank() const { return getSizePerWarp().size(); }
    /// The number of warps of the workgroup (the product of warpsPerCTA).
    int64_t getNumWarps() const;
  }];
}

def Tkw_DotOperandLayoutAttr : Tkw_Attr<"DotOperandLayout", "dot_operand"> {
  let summary = "the layout of operand a (0) or b (1) of a dot";
  let description = [{
    The operand of a `tk.dot` whose result has the blocked layout `parent`.
    A warp holds the rows of `a` (the columns of `b`) of its block of the
    result and the whole reduction dimension, so warps of one row of the
    grid share the same slice of `a`: with the seed's parent, warps 0-3 all
    hold rows 0-31 of `a`.
    ```mlir
    #A = #tkw.dot_operand<opIdx = 0, parent = #C>
    %a = tk.load %pa : !tk.ptr<tensor<256x32xf16, #A>>
    ```
  }];
  let parameters = (ins "unsigned":$opIdx, "BlockedLayoutAttr":$parent);
  let assemblyFormat = "`<` `opIdx` `=` $opIdx `,` `parent` `=` $parent `>`";
  let genVerifyDecl = 1;
}

def Tkw_SliceLayoutAttr : Tkw_Attr<"SliceLayout", "slice"> {
  let summary = "a parent layout with one dimension removed";
  let description = [{
    The layout of a tile that is `parent` without dimension `dim`: what a
    reduction along `dim` produces and what `tk.expand_dims` at `dim` takes.
    A warp holds what it holds of the parent, less that dimension.
    ```mlir
    #R = #tkw.slice<dim = 1, parent = #C>
    %rows = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32, #R>
    ```
  }];
  let parameters = (ins "unsigned":$dim, "::mlir::Attribute":$parent);
  let assemblyFormat = "`<` `dim` `=` $dim `,` `parent` `=` $parent `>`";
  let genVerifyDecl = 1;
}

def Tkw_FragmentLayoutAttr : Tkw_Attr<"FragmentLayout", "fragment"> {
  let summary = "an operand of a matrix intrinsic as the lanes hold it";
  let description = [{
    The lane level: operand `opIdx` (0: a, 1: b, 2: the accumulator) of the
    matrix intrinsic `intrinsic`, as the target's TargetInfo states the
    hardware's fragment (`tk::FragmentLayout`). The fragment is split into a
    `warpsPerFragment` grid of blocks, one a warp (`[1, 1]` for one warp);
    in its block each lane holds `sizePerLane` elements, the lanes form a
    `lanesPerWarp` grid (its product is the warp size), both grids walked
    with `order[0]` the fastest dimension. Where the lanes cover less than
    the block their tile repeats over it (the lane's later registers, rows
    first); where they cover more it wraps and lanes hold copies.
    `tk-match-target-size` gives the pieces of a split dot these layouts,
    so that the dump shows which lane holds what. mma.sync m16n8k16's
    accumulator, c0 and c1 of lane 4g + t at row g, columns 2t and 2t + 1,
    c2 and c3 eight rows down:
    ```mlir
    #acc = #tkw.fragment<"mma.m16n8k16.f32.f16", opIdx = 2,
        sizePerLane = [1, 2], lanesPerWarp = [8, 4],
        warpsPerFragment = [1, 1], order = [1, 0]>
    ```
  }];
  let parameters = (ins StringRefParameter<>:$intrinsic, "unsigned":$opIdx,
                        ArrayRefParameter<"int64_t">:$sizePerLane,
                        ArrayRefParameter<"int64_t">:$lanesPerWarp,
                        ArrayRefParameter<"int64_t">:$warpsPerFragment,
                        ArrayRefParameter<"int64_t">:$order);
  let assemblyFormat = [{
    `<` $intrinsic `,` `opIdx` `=` $opIdx `,`
        `sizePerLane` `=` `[` $sizePerLane `]` `,`
        `lanesPerWarp` `=` `[` $lanesPerWarp `]` `,`
        `warpsPerFragment` `=` `[` $warpsPerFragment `]` `,`
        `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The lanes of a warp (the product of lanesPerWarp).
    int64_t getNumLanes() const;
  }];
}

//===----------------------------------------------------------------------===//
// The register level: one linear layout (DESIGN.md §3)
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// The thread level: where a tile lives in a GPU program
//===----------------------------------------------------------------------===//
// tk-assign-thread-layouts records one of these as `tkw.layout` on the op
// that defines a tile (on a loop, `tkw.iter_layouts` for its iteration
// arguments and `tkw.result_layouts` for where its held accumulators are
// after it), and tk-convert-to-simt / tk-convert-to-loops lower each tile
// as its layout says. A tile without one is recomputed by each reader.

def Tkw_SharedLayoutAttr : Tkw_Attr<"SharedLayout", "shared"> {
  let summary = "a tile kept whole in workgroup memory";
  let description = [{
    The tile is computed once into a row-major buffer of workgroup memory
    (of the stack on the CPU), the elements spread over the threads; after
    the barrier that publishes it, any thread reads any element.

    On an element-wise op of a GPU program, `written` says which thread
    computes and writes which element, as a store's layout does: by runs
    (`#tkw.runs`: runs of up to 16 bytes where they spread the tile evenly),
    or, for a tile computed from registers, by the threads holding them
    (`#tkw.runs` of a register-resident tile, `#tkw.accumulator` of a held
    product). The same runs say who writes the other tiles a GPU program
    keeps whole:
    - a tile a loop carries in workgroup memory (its entry in the loop's
      `tkw.iter_layouts`): its initial value before the loop and, at each
      yield, the trip's value (through a temporary the same threads write,
      where it is not in a buffer of its own);
    - an scf.if's tile result (its entry in the if's `tkw.result_layouts`):
      each branch's value;
    - a product the matrix unit accumulates in a wider type than its tile
      (f32 for f16 or bf16): the unit's registers write the wide values
      where they are, then these runs round them into the tile (on the
      `tk.dot` the unit computes without holding it, or on the
      `tkw.convert_layout` of a held one).
    Without it (the CPU, a held product's conversion of its own type) the
    writers are those of the tile's source.
    ```mlir
    %e = math.exp %x {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>}
    %r = scf.for ... iter_args(%acc = %z) -> (tensor<128xf32>) ...
        {tkw.iter_layouts = [#tkw.shared<written = #tkw.runs<width = 1, threads = 128>>]}
    ```
  }];
  let parameters = (ins OptionalParameter<"::mlir::Attribute">:$written);
  let assemblyFormat = "(`<` `written` `=` $written^ `>`)?";
  let builders = [AttrBuilder<(ins), [{ return $_get($_ctxt, Attribute()); }]>];
  let genVerifyDecl = 1;
}

def Tkw_RunsLayoutAttr : Tkw_Attr<"RunsLayout", "runs"> {
  let summary = "a tile in its threads' registers, by runs of the flat tile";
  let description = [{
    Thread `t` of the program's `threads` holds the runs `t`, `t + threads`,
    `t + 2 * threads`, ... of `width` consecutive elements of the row-major
    tile, in registers: element `(t + threads * j) * width + l` is its
    register `j * width + l`. Consecutive lanes hold consecutive runs, so a
    warp's loads and stores coalesce, and a run of 16 bytes is one vector
    access. Triton's blocked layout with sizePerThread = [1, ..., width]
    and lanes, then warps, along the flat tile. On a `tk.store` it says how
    the threads visit the tile they write (and the loads and element-wise
    ops fused into the store), there in a loop over the runs: the runs of
    the registers the store reads, or any that spread the tile evenly.
    ```mlir
    %x = tk.load %p {tkw.layout = #tkw.runs<width = 4, threads = 128>}
    tk.store %q, %y {tkw.layout = #tkw.runs<width = 4, threads = 128>}
    ```
  }];
  let parameters = (ins "int64_t":$width, "int64_t":$threads);
  let assemblyFormat = "`<` `width` `=` $width `,` `threads` `=` $threads `>`";
  let genVerifyDecl = 1;
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

def Tkw_RingLayoutAttr : Tkw_Attr<"RingLayout", "ring"> {
  let summary = "a dot operand loaded trips ahead into a ring of slots";
  let description = [{
    Software pipelining over `num_stages`: the load is a `tk.dot` operand
    in a loop, and the backend's async copies (cp.async) issue it
    `stages - 1` trips ahead of the trip that reads it, into a ring of
    `stages` slots of workgroup memory. A slot holds the tile as operand
    `operand` (0: A, 1: B) of the product numbered `product` (the held
    `tk.dot` marked `tkw.product`), in that operand's layout when the
    matrix unit lays out its operands, row-major otherwise. Recorded on the
    load as `tkw.ring`, beside its `tkw.layout`, by `tk-pipeline-operands`.
    ```mlir
    %a = tk.load %pa {tkw.ring = #tkw.ring<stages = 4, product = 0, operand = 0>}
    ```
  }];
  let parameters = (ins "int64_t":$stages, "int64_t":$product,
                        "int64_t":$operand);
  let assemblyFormat = "`<` `stages` `=` $stages `,` `product` `=` $product "
                       "`,` `operand` `=` $operand `>`";
  let genVerifyDecl = 1;
}

def Tkw_OperandLayoutAttr : Tkw_Attr<"OperandLayout", "operand"> {
  let summary = "a tile in workgroup memory as a held product's operand";
  let description = [{
    The tile written into workgroup memory in the layout the matrix unit
    reads operand `operand` (0: A, 1: B) of held product `product` from, for
    that product and every product laid out alike that reads it. The layout
    is the unit's (tk::MatrixUnit::operandLayout), spelled out as Triton's
    shared encodings are: the tile is cut into tiles of `tile` elements,
    stored one after another, consecutive along dimension `tilesAlong`
    first; within one, lines run along dimension `contiguous`, each cut into
    chunks of `vec` elements, chunk j of line i stored at chunk
    j ^ ((i / perPhase) % maxPhase); the buffer is aligned to `align` bytes.
    mma.sync's layout is one tile of swizzled 16-byte chunks, wgmma's 128-byte
    swizzle tiles of 64 columns (or its 8x8 core matrices), MFMA's, WMMA's
    and DPAS's one K-major tile in chunks of what a lane reads.

    The result layout of the `tkw.convert_layout` that moves a dot operand
    there; a conversion outside the product's loop (attention's q) is done
    once, before it. `written` says which thread moves which element, as a
    #tkw.shared's does: the threads holding the registers the tile is in
    (`#tkw.runs` of a register-resident tile, `#tkw.accumulator` of a held
    product), or runs of up to 16 bytes of the tile the conversion reads,
    row-major; where that tile is a transpose the program does not keep
    (attention's k^T), of the transpose's source, so that the reads run
    along its rows. A ring (`#tkw.ring`) that async copies fill in that
    layout has done the move already: its conversion only names the slot,
    and has no `written`. `tk-convert-to-simt` writes and copies the tile at
    the offsets this layout gives, by those writers, and refuses a layout
    that is not the unit's, or writers it would not take.
    ```mlir
    %b = tkw.convert_layout %t {tkw.layout = #tkw.operand<product = 0,
        operand = 1, tile = [64, 64], tilesAlong = 1, contiguous = 1,
        vec = 8, perPhase = 1, maxPhase = 8, align = 128,
        written = #tkw.runs<width = 8, threads = 128>>}
    ```
  }];
  let parameters = (ins "int64_t":$product, "int64_t":$operand,
                        ArrayRefParameter<"int64_t">:$tile,
                        "int64_t":$tilesAlong, "int64_t":$contiguous,
                        "int64_t":$vec, "int64_t":$perPhase,
                        "int64_t":$maxPhase, "int64_t":$align,
                        OptionalParameter<"::mlir::Attribute">:$written);
  let assemblyFormat = [{
    `<` `product` `=` $product `,` `operand` `=` $operand `,`
        `tile` `=` `[` $tile `]` `,` `tilesAlong` `=` $tilesAlong `,`
        `contiguous` `=` $contiguous `,` `vec` `=` $vec `,`
        `perPhase` `=` $perPhase `,` `maxPhase` `=` $maxPhase `,`
        `align` `=` $align (`,` `written` `=` $written^)? `>`
  }];
  let genVerifyDecl = 1;
}

def Tkw_SplitLayoutAttr : Tkw_Attr<"SplitLayout", "split"> {
  let summary = "how the threads of a GPU program share a reduction or a "
                "scan";
  let description = [{
    A `tk.reduce` combines each line of its source along the axis. Each
    line is cut into `parts` interleaved parts (part p takes the elements
    p, p + parts, ... of the line), each combined by one thread in a
    strided walk, so that neighbouring threads read neighbouring elements;
    the parts then meet `across`:
    - `"lanes"`: a line's parts are the lanes of one warp (`parts` is the
      warp size), combined by butterfly shuffles of that width, the warps
      taking the lines in turn (a row reduction of a 2-D tile: softmax's
      and attention's rows);
    - `"warps"`: one line, a part per thread (`parts` is the thread count):
      each warp combines its lanes by shuffles and the warps' values meet
      in workgroup memory (a whole 1-D tile);
    - `"memory"`: the (part, line) pairs spread over the threads, the parts
      then combined as a tree in workgroup memory.
    Recorded on the reduce as `tkw.split` by `tk-assign-thread-layouts`. A
    reduction of registers (a source with `#tkw.runs` or `#tkw.accumulator`)
    has none: their layout says which thread combines which elements. A
    `tk.scan` records one too, and takes only a line per thread, scanned
    serially: `#tkw.split<parts = 1, across = "memory">`.
    ```mlir
    %m = tk.reduce(%x : tensor<64x128xf32>)
        {axis = 1 : i32, tkw.split = #tkw.split<parts = 32, across = "lanes">}
    ```
  }];
  let parameters = (ins "int64_t":$parts, StringRefParameter<>:$across);
  let assemblyFormat =
      "`<` `parts` `=` $parts `,` `across` `=` $across `>`";
  let genVerifyDecl = 1;
}

def Tkw_AccumulatorLayoutAttr
    : Tkw_Attr<"AccumulatorLayout", "accumulator"> {
  let summary = "a tile in the registers of a held product's accumulator";
  let description = [{
    The tile is laid out as the accumulator of the `tk.dot` marked
    `tkw.product = product`, which the backend's matrix unit keeps in
    registers: each thread holds the elements at its accumulator registers'
    positions (the unit's fragment, e.g. mma.sync's `#tkw.fragment` with
    `opIdx = 2`). The dot itself and the tiles computed element-wise from
    its result that its readers visit register by register (attention's
    scores and their exponentials) have this layout; a `tk.store` with it
    is done by the threads holding the registers, at their positions.
  }];
  let parameters = (ins "int64_t":$product);
  let assemblyFormat = "`<` `product` `=` $product `>`";
}

def Tkw_HeldLayoutAttr : Tkw_Attr<"HeldLayout", "held"> {
  let summary = "how a matrix unit holds a product's accumulator";
  let description = [{
    What `#tkw.accumulator` means for one product, as the backend's matrix
    unit states it (tk::HeldLayout): the product is cut into tiles of one
    instruction's accumulator (`tile`), each held by a group of
    `groupThreads` threads as `fragment` says. Tiles go to groups in
    blocks (group g at (g / groups[1], g % groups[1]) holding
    `tilesPerGroup` tiles, rows then columns) or, `cyclic`, in turn (group
    g holding tiles g, g + G, ... in row-major order). Recorded on a held
    `tk.dot` as `tkw.held`. mma.sync on 4 warps, a 64x64 f32 accumulator,
    each warp a 16x64 block:
    ```mlir
    tkw.held = #tkw.held<#tkw.fragment<"mma.m16n8k16.f32.f16", opIdx = 2,
        sizePerLane = [1, 2], lanesPerWarp = [8, 4],
        warpsPerFragment = [1, 1], order = [1, 0]>,
        tile = [16, 8], groupThreads = 32, groups = [4, 1],
        tilesPerGroup = [1, 8], cyclic = false>
    ```
  }];
  let parameters = (ins "FragmentLayoutAttr":$fragment,
                        ArrayRefParameter<"int64_t">:$tile,
                        "int64_t":$groupThreads,
                        ArrayRefParameter<"int64_t">:$groups,
                        ArrayRefParameter<"int64_t">:$tilesPerGroup,
                        "bool":$cyclic);
  let assemblyFormat = [{
    `<` $fragment `,` `tile` `=` `[` $tile `]` `,`
        `groupThreads` `=` $groupThreads `,` `groups` `=` `[` $groups `]` `,`
        `tilesPerGroup` `=` `[` $tilesPerGroup `]` `,` `cyclic` `=` $cyclic `>`
  }];
}

def Tkw_RowsLayoutAttr : Tkw_Attr<"RowsLayout", "rows"> {
  let summary = "a 1-D tile of one value per row of a held product";
  let description = [{
    A 1-D tile with one value per row of the accumulator of held product
    `product` (attention's running max and sum): each thread keeps, in
    registers, the values of the rows its accumulator registers are in, as
    the lanes sharing a row do.
  }];
  let parameters = (ins "int64_t":$product);
  let assemblyFormat = "`<` `product` `=` $product `>`";
}

#endif // TK_CORE_LAYOUTATTRS_TD
