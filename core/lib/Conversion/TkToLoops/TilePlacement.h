//===- TilePlacement.h - where each tile of a kernel lives ------*- C++ -*-===//
//
// The thread layouts of a kernel's tiles, decided before any op is lowered
// (the accumulators held across loop trips by tk-hold-accumulators,
// HoldAccumulators.cpp; the values per row of held products kept in
// registers by tk-hold-rows, HoldRows.cpp; every other tile around them by
// tk-assign-thread-layouts, AssignThreadLayouts.cpp) and read back by the
// loop lowering (KernelLowering, which derives from this class): a tile is
// recomputed by each reader (no layout), kept whole in workgroup memory
// (#tkw.shared; the stack on the CPU), or, on a GPU, kept in its threads'
// registers: by runs of the flat tile (#tkw.runs), at a held product's
// accumulator registers (#tkw.accumulator), or one value per row of such a
// product (#tkw.rows); and which dot operands the async copies load trips
// ahead, into rings of workgroup slots (#tkw.ring, decided by
// tk-pipeline-operands, PipelineOperands.cpp). Private to this folder.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_TKTOLOOPS_TILEPLACEMENT_H_
#define TK_CORE_CONVERSION_TKTOLOOPS_TILEPLACEMENT_H_

#include "tk/core/Conversion/Passes.h"
#include "tk/core/Conversion/ScalarOps.h"
#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>

namespace mlir::tk_to_loops {

//===----------------------------------------------------------------------===//
// Classification of tk ops
//===----------------------------------------------------------------------===//

inline bool isTile(Type type) { return isa<RankedTensorType>(type); }

inline bool isBlockPtr(Type type) {
  auto ptr = dyn_cast<tk::PtrType>(type);
  return ptr && ptr.isBlockPointer();
}

using tk::isNarrowFloat;

/// True for ops computed element by element without storage: their element
/// at index I is a function of their operands' elements at an index derived
/// from I.
inline bool isElementwiseLike(Operation *op) {
  if (op->getNumResults() != 1 || !isTile(op->getResult(0).getType()))
    return false;
  if (isa<tk::SplatOp, tk::MakeRangeOp, tk::BroadcastOp, tk::ExpandDimsOp,
          tk::ReshapeOp, tk::TransOp, tk::CatOp, tk::JoinOp, tk::AddPtrOp,
          tk::LoadOp, tk::FpToFpOp>(op))
    return true;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return isa<SplatElementsAttr>(constant.getValue());
  if (isa_and_present<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return OpTrait::hasElementwiseMappableTraits(op);
  return false;
}

/// Element-wise ops that keep the index of their tile operands (no
/// broadcast, reshape or transpose in between).
inline bool keepsIndex(Operation *op) {
  return op->getNumResults() == 1 && op->getNumRegions() == 0 &&
         (isa_and_present<arith::ArithDialect, math::MathDialect>(
              op->getDialect()) ||
          isa<tk::FpToFpOp>(op)) &&
         isTile(op->getResult(0).getType()) &&
         llvm::all_of(op->getOperands(), [&](Value operand) {
           return !isTile(operand.getType()) ||
                  cast<RankedTensorType>(operand.getType()).getShape() ==
                      cast<RankedTensorType>(op->getResult(0).getType())
                          .getShape();
         });
}

/// True when `op` may run more than once in a program: it is in a loop.
inline bool insideLoop(Operation *op) {
  return op->getParentOfType<scf::ForOp>() ||
         op->getParentOfType<scf::WhileOp>();
}

/// True when an op may write memory a load could read (tk stores, atomics,
/// prints), looking inside nested regions.
inline bool mayWriteMemory(Operation *op) {
  bool writes = false;
  op->walk([&](Operation *nested) {
    if (isa<tk::StoreOp, tk::AtomicRMWOp, tk::AtomicCASOp>(nested))
      writes = true;
  });
  return writes;
}

/// The most elements of one register-resident tile a GPU thread holds.
constexpr int64_t kMaxOwnedElements = 64;

/// The run of innermost elements each thread takes when `numThreads` threads
/// spread a tile of `shape` (`total` elements) a run at a time: the widest
/// power of two up to `maxRun` that divides the rows and gives every thread
/// the same number of runs.
inline int64_t runWidth(ArrayRef<int64_t> shape, int64_t total,
                        int64_t numThreads, int64_t maxRun) {
  int64_t width = 1;
  if (shape.empty())
    return width;
  while (width < maxRun && shape.back() % (width * 2) == 0 &&
         total % (width * 2 * numThreads) == 0)
    width *= 2;
  return width;
}

/// The run that fills 16 bytes with elements of `type` (4 to 8): what the
/// threads take at a time where they write a tile to workgroup memory.
inline int64_t runOf(Type type) {
  if (!type.isIntOrFloat())
    return 4;
  return std::clamp<int64_t>(128 / std::max(8u, type.getIntOrFloatBitWidth()),
                             4, 8);
}

/// How the threads of a GPU program visit the tile a tk.store writes (its
/// `tkw.layout`): at the accumulator registers of held product `product`
/// (#tkw.accumulator), or, without one, by runs of `run` elements
/// (#tkw.runs: thread t visits the runs t, t + N, ... of the flat tile).
struct StoreLayout {
  tk::DotOp product;
  int64_t run = 0;
};

/// A dot operand's conversion to the matrix unit's layout (#tkw.operand):
/// the first product that reads it, which operand, the layout it is
/// written in (the unit's operandLayout, as recorded), and the threads that
/// write it there (operandWriters; none for a ring's slot, which async
/// copies fill).
struct OperandConversion {
  tk::DotOp product;
  unsigned operand = 0;
  tk::SharedLayout layout;
  std::optional<StoreLayout> written;
};

/// The `#tkw.operand` recording `layout` as operand `operand` of the product
/// numbered `product`, written by `written` (null: a ring's slot).
tk::warp::OperandLayoutAttr operandLayoutAttr(MLIRContext *ctx, int64_t product,
                                              unsigned operand,
                                              const tk::SharedLayout &layout,
                                              Attribute written = {});
/// The layout an `#tkw.operand` spells out.
tk::SharedLayout sharedLayoutOf(tk::warp::OperandLayoutAttr attr);

/// True for a `tkw.convert_layout` to a held product's operand layout
/// (#tkw.operand).
inline bool isOperandConversion(Operation *op) {
  return isa_and_present<tk::warp::ConvertLayoutOp>(op) &&
         isa_and_present<tk::warp::OperandLayoutAttr>(
             op->getAttr(tk::warp::TkwDialect::kLayoutAttrName));
}

/// Operand `index` (0: A, 1: B) of `dot` as the program computes it: the
/// tile its conversion to the unit's operand layout converts, if it has one.
inline Value operandTile(tk::DotOp dot, unsigned index) {
  Value operand = dot->getOperand(index);
  if (Operation *def = operand.getDefiningOp(); isOperandConversion(def))
    return def->getOperand(0);
  return operand;
}

/// True when two held products lay out their accumulator registers and
/// operands alike (their element types and shapes match).
inline bool sameLayout(const tk::MatrixUnit::HeldProduct &x,
                       const tk::MatrixUnit::HeldProduct &y) {
  return x.a == y.a && x.b == y.b && x.accumulator == y.accumulator &&
         x.m == y.m && x.n == y.n && x.k == y.k && x.tf32 == y.tf32 &&
         x.kMajorB == y.kMajorB && x.rowsAcrossWarps == y.rowsAcrossWarps &&
         x.numThreads == y.numThreads;
}

//===----------------------------------------------------------------------===//
// TilePlacement
//===----------------------------------------------------------------------===//

/// The thread layouts of one tk.func: decided (place) or read from the
/// attributes tk-assign-thread-layouts wrote (read), and written there
/// (write). The queries are shared with the lowering.
class TilePlacement {
public:
  /// What the pass decided: the CPU form (numThreads 0) or a GPU program.
  struct Config {
    bool fuseLoadsIntoStores = true;
    /// 0 on the CPU; the threads of a GPU workgroup otherwise.
    int64_t numThreads = 0;
    /// The lanes of a warp (the target's); 1 on the CPU.
    int64_t warpSize = 1;
    const tk::MatrixUnit *matrixUnit = nullptr;
    const tk::AsyncCopyUnit *asyncCopy = nullptr;
    int64_t numStages = 1;
    /// The LLVM address space of pointers to global memory (the target's).
    unsigned globalAddressSpace = 0;
    /// The pass deciding or lowering, for its messages (static storage);
    /// empty: the lowering's.
    llvm::StringRef pass;
  };

  TilePlacement(tk::FuncOp source, const Config &config)
      : source(source), pass(config.pass),
        fuseLoadsIntoStores(config.fuseLoadsIntoStores),
        numThreads(config.numThreads), warpSize(config.warpSize),
        matrixUnit(config.matrixUnit), asyncCopy(config.asyncCopy),
        numStages(config.numStages) {}

  /// GPU with a matrix unit only: the loop-carried accumulators the unit
  /// keeps in registers across trips (chooseHeldAccumulator), the first
  /// decision (tk-hold-accumulators, HoldAccumulators.cpp): where every
  /// other tile lives depends on them.
  void placeHeldAccumulators();
  /// Records them: each held dot numbered as a product (recordProduct, in
  /// program order) and each loop holding one given `tkw.iter_layouts`,
  /// `#tkw.accumulator` at its held arguments.
  void writeHeldAccumulators();
  /// True when a loop of the kernel records a held accumulator.
  bool hasHeldAccumulators();
  /// Reads the held accumulators recorded in `tkw.iter_layouts`; fails,
  /// naming the loop, on one this lowering cannot hold (no such product,
  /// one the unit does not hold, or a product that does not update the
  /// accumulator alone).
  LogicalResult readHeldAccumulators();
  /// GPU with a matrix unit only: the 1-D tiles of one value per row of a
  /// held product kept in the registers of the lanes holding the row
  /// (chooseRowResident: attention's running max and sum), the second
  /// decision (tk-hold-rows, HoldRows.cpp), around the held accumulators
  /// placed or read.
  void placeRowResident();
  /// Records them as `#tkw.rows<product>`: `tkw.layout` on the op defining
  /// such a tile, `tkw.iter_layouts` of a loop carrying one; a product not
  /// numbered yet gets the next number (recordProduct). What an earlier run
  /// recorded is replaced.
  void writeRowResident();
  /// Reads the row-resident tiles recorded as `#tkw.rows`; fails, naming
  /// the op, on a product the unit does not hold or a tile that is not 1-D.
  LogicalResult readRowResident();
  /// Decides the layout of every other tile of the kernel, around the held
  /// accumulators and row-resident tiles placed or read, and places the
  /// layout conversions this needs in the kernel (placeConversions).
  void place();
  /// Records the decisions as attributes of the kernel's ops (`tkw.layout`
  /// on an op, `tkw.iter_layouts` on a loop, `tkw.product` on a held dot,
  /// `tkw.threads` on the function).
  void write();
  /// GPU with an async copy unit and num_stages > 1 only: the operand
  /// loads of the held products of a loop with a held accumulator that can
  /// be issued trips ahead (canPrefetch), each with the first (product,
  /// operand) it feeds. Decided on layouts placed or read.
  void placeRings();
  /// Records the rings as `tkw.ring` on their loads (numbering a product
  /// that has no `tkw.product` yet).
  void writeRings();
  /// True when the kernel carries the attributes `write` records.
  bool isPlaced() const;
  /// For the decisions taken before tk-assign-thread-layouts: fails, naming
  /// `pass`, when the kernel's thread layouts are already assigned (the
  /// others were decided around what `pass` would decide).
  LogicalResult refuseIfPlaced(StringRef pass);
  /// Reads the decisions back from the attributes; fails, naming the op,
  /// where they do not fit this lowering (another thread count, a product
  /// the unit does not hold, a layout of the wrong kind).
  LogicalResult read();

protected:
  bool onThreads() const { return numThreads > 0; }
  /// Numbers `dot` as held product `id` (`tkw.product`), with the layout
  /// the unit holds it in (`tkw.held`).
  void recordProduct(tk::DotOp dot, int64_t id);
  /// Records on every dot the unit computes without holding it how the
  /// unit spreads it over the threads (`tkw.held`, emittedLayoutOf, without
  /// a `tkw.product`).
  void recordEmittedLayouts();
  /// Checks the `tkw.held` of a dot without a `tkw.product` against
  /// emittedLayoutOf: fails, naming the dot, where it differs, or is
  /// missing where the unit states one.
  LogicalResult checkEmittedLayout(tk::DotOp dot);
  /// The dot recorded as held product `id` (`tkw.product`), checked against
  /// the matrix unit; fails, naming `op`, where there is none or the unit
  /// does not hold it.
  FailureOr<tk::DotOp> recordedProduct(Operation *op, int64_t id);
  /// The dot numbered `tkw.product` `id`, or null.
  tk::DotOp numberedProduct(int64_t id);
  /// Reports that the thread layout `layout` recorded on `op` does not fit
  /// (`why`), naming the pass; interrupts the reading walk.
  WalkResult refuseLayout(Operation *op, Attribute layout, StringRef why);
  /// The pass deciding or lowering, for its messages.
  llvm::StringRef passName() const {
    if (!pass.empty())
      return pass;
    return onThreads() ? "tk-convert-to-simt" : "tk-convert-to-loops";
  }

  // --- the decisions ------------------------------------------------------
  /// What every decision after the held accumulators starts from, once:
  /// the tiles kept whole (analyzeRegion) and, on a GPU, those kept in
  /// their threads' registers (chooseRegisterResident).
  void analyze();
  bool analyzed = false;
  void analyzeRegion(Region &region);
  void analyzeOp(Operation *op);
  /// True for a load whose only readers are held products in the loop
  /// right after it, as operands the unit lays out (FlashAttention's q):
  /// the lowering writes it into that layout once before the loop, straight
  /// from memory, so a stored copy would only take workgroup memory.
  bool laidOutBeforeLoop(Operation *op);
  /// GPU only: un-stores arithmetic tiles that every user can recompute
  /// from stored or cheap tiles (see the definition).
  void preferRecomputing(Region &region);
  bool isCheap(Value value);
  /// GPU only: the tiles kept in their threads' registers instead of
  /// workgroup memory, and their layouts (see the definition).
  void chooseRegisterResident(Region &region);
  /// GPU only: the 1-D tiles of one value per row of a held product kept
  /// in the registers of the threads holding the row, and the dots whose
  /// rows they follow (see the definition).
  void chooseRowResident(Region &region);
  /// The dot whose held registers `reduce` combines along rows
  /// (lowerRowReduceOfHeld), or null.
  tk::DotOp heldRowsOf(tk::ReduceOp reduce);
  /// The sorted distinct row offsets (RegisterRows) of `product`'s
  /// registers; empty when the unit does not describe its rows.
  SmallVector<int64_t> rowOffsets(const tk::MatrixUnit::HeldProduct &product);
  /// True when `tile` (1-D) can be evaluated at rows only: it is row
  /// resident or cheap, or an element-wise function of such tiles; the
  /// layouts of the row-resident tiles it reads go to `layouts`.
  bool readableByRows(Value tile, SmallVectorImpl<tk::DotOp> &layouts);
  /// True when every read of `tile` (1-D, row-resident or computed from
  /// such tiles) happens at a row of registers holding `offsets`: another
  /// row-resident tile, a loop's next value of one, or `tile[:, None]`
  /// read where a product's registers are visited (readInFragments).
  bool readAtRows(Value tile, ArrayRef<int64_t> offsets);
  /// True when every read of the 2-D `tile` happens while the registers of
  /// a held product whose rows are among `offsets` are visited: a resident
  /// tile in such a product's layout, a row reduction of one, the rescale
  /// of a loop's held accumulator, a store of a held loop result.
  bool readInFragments(Value tile, ArrayRef<int64_t> offsets);
  /// The held accumulator's dot a store of `value` writes from registers
  /// (what heldRoot finds at the store), or null.
  tk::DotOp heldStoreDot(Value value);
  /// True when the matrix unit can keep `dot`'s product in registers for
  /// its readers and describes their rows (readByOwners then decides
  /// whether the readers allow it; a loop's yield does not).
  bool holdsForReaders(tk::DotOp dot);
  /// The layouts (residentLayout values) of the resident tiles evaluating
  /// `value` reads, through element-wise ops that are not stored.
  void collectLayouts(Value value, llvm::SmallPtrSetImpl<Operation *> &out);
  /// True when every use of `tile` reads it, directly or through
  /// index-preserving element-wise ops in `block`, at the indices the
  /// reading thread holds in `layout` (null: runs; else a dot's
  /// accumulator): a store, a dot operand, a reduction (of the whole tile
  /// for runs, along rows for an accumulator) of 32-bit values, or a
  /// resident tile of the same layout.
  bool readByOwners(Value tile, Block *block, Operation *layout);
  /// The run width of a register-resident tile of `shape`; 0 when the
  /// threads cannot hold it (uneven, or more than kMaxOwnedElements each).
  int64_t ownedRun(ArrayRef<int64_t> shape) const;

  // --- queries the lowering shares ----------------------------------------
  /// The step of iteration argument `i` when `loop` walks it: the value
  /// yielded is `tk.addptr` of the argument by `tk.splat` of the step, in
  /// the loop's body, and the start is read steadily on every trip (a walk
  /// of an enclosing loop, a tile with storage the loop does not also
  /// carry later, or a cheap tile). Null otherwise.
  Value pointerWalkStep(scf::ForOp loop, unsigned i);
  /// A load of a dot operand that `loop` can issue trips ahead: its
  /// address and mask depend only on the induction variable, pointer walks
  /// with steps fixed outside the loop, pure scalar ops and values from
  /// outside, and nothing in the loop writes memory; `runBytes` is the
  /// widest copy the async copy unit takes that divides its rows.
  bool canPrefetch(scf::ForOp loop, tk::LoadOp load, ArrayRef<Value> walkSteps,
                   int64_t &runBytes);
  /// Fills heldLoopResults for the loops with held accumulators
  /// (onlyStoredFromRegisters, or unused), those that record none when
  /// `recorded`.
  void placeHeldLoopResults(bool recorded);
  /// GPU with a matrix unit that lays out its operands in workgroup memory:
  /// moves each operand of a held product into that layout with an explicit
  /// `tkw.convert_layout` (#tkw.operand), which the product then reads:
  /// right before the product, or once before the product's loop for a
  /// tile the loop does not compute (attention's q), shared by the later
  /// products laid out alike. Not an A the unit takes from the registers of
  /// another product (takesRegisterA). Counted in `conversions`.
  void placeOperandConversions();
  /// The threads that write operand conversion `convert`'s tile into the
  /// unit's layout: the owners of the registers it is computed from, or
  /// runs of up to 16 bytes of the tile read (operandReadThrough);
  /// std::nullopt for a ring's slot, which async copies fill
  /// (filledByRing).
  std::optional<StoreLayout> operandWriters(Operation *convert);
  /// The tile the threads read to write the dot operand `tile` into the
  /// unit's layout: the source of a transpose the program does not keep
  /// (attention's k^T: the reads then run along its rows), else `tile`.
  Value operandReadThrough(Value tile);
  /// True when the ring of a load (#tkw.ring) fills the slot operand
  /// conversion `convert` names: its async copies write the tile.
  bool filledByRing(Operation *convert);
  /// After read(): every operand conversion names the writers
  /// operandWriters gives.
  LogicalResult checkOperandWrites();
  /// True when the unit takes `dot`'s A straight from the registers of the
  /// product it is computed from (attention's probabilities).
  bool takesRegisterA(tk::DotOp dot,
                      const tk::MatrixUnit::HeldProduct &product);
  /// GPU only: how the threads visit the tile each tk.store writes
  /// (storeLayouts), recorded as its `tkw.layout`. A store of a held loop
  /// result (heldStoreDot) or of a tile computed from a register-resident
  /// one (residentOwner) visits in that tile's layout; any other by runs of
  /// up to 4 elements (runWidth), which is what the store's loop and its
  /// fused loads then use. An atomic on a tile visits single elements
  /// (#tkw.runs of width 1): each is its own read-modify-write; so does an
  /// assert on one (each failing element reports itself).
  void placeStoreLayouts();
  /// The layout a store must visit its tile in, or std::nullopt when it is
  /// free to take any runs (nothing it reads lives in registers).
  std::optional<StoreLayout> ownersStoreLayout(tk::StoreOp store);
  /// The layout of the first register-resident tile (residentOwner) that
  /// evaluating `reads` in turn reads; std::nullopt if none. Null reads
  /// (an absent mask) are skipped.
  std::optional<StoreLayout> layoutOfRegistersRead(ArrayRef<Value> reads);
  /// GPU only: which thread computes and writes which element of each
  /// element-wise tile kept whole in workgroup memory (sharedWrites),
  /// recorded as the `written` of its #tkw.shared: the threads holding the
  /// registers it is computed from (ownersOfWrites), or runs of up to 16
  /// bytes (runOf), as wide as spread it evenly (runWidth); a product the
  /// threads compute, single elements.
  void placeSharedWrites();
  /// GPU only: the runs by which the threads write each tile a region
  /// keeps in a buffer of its own (carriedWrites): a loop's iteration
  /// argument carried in workgroup memory (carriedInBuffer: its initial
  /// value before the loop, each trip's value at the yield) and an scf.if's
  /// tile result (each branch's value); runs of up to 16 bytes (runOf), as
  /// wide as spread the tile evenly (runWidth). Recorded as the `written`
  /// of the #tkw.shared in the loop's `tkw.iter_layouts`, the if's
  /// `tkw.result_layouts`.
  void placeCarriedWrites();
  /// True when `loop` carries iteration argument `i` in a buffer of
  /// workgroup memory (of the stack on the CPU): a tile that is neither a
  /// pointer walk nor held in registers (an accumulator, a row tile), as
  /// KernelLowering::lowerFor carries it.
  bool carriedInBuffer(scf::ForOp loop, unsigned i);
  /// Reads `layout`, recorded for `tile` (an iteration argument of `op`,
  /// or a result of the scf.if `op`), into carriedWrites; false, with an
  /// error naming `op`, where it is not #tkw.shared written by runs that
  /// spread the tile.
  bool readCarriedWrites(Operation *op, Value tile, Attribute layout);
  /// After read(): every tile a GPU program carries in a buffer records
  /// its writers, and none of the values written there is computed from
  /// registers (whose owners would write it instead).
  LogicalResult checkCarriedWrites();
  /// GPU with a matrix unit only: the tiles a product leaves in workgroup
  /// memory in a type wider than theirs (f32 for an f16 or bf16 product):
  /// the conversion of a held product to #tkw.shared and a product the
  /// unit computes without holding it. The unit writes the wide values
  /// where its registers are; the threads then round them into the tile by
  /// runs of up to 16 bytes (narrowingWrites), recorded as the `written` of
  /// the op's #tkw.shared.
  void placeNarrowingWrites();
  /// The product whose accumulator `op` (a tkw.convert_layout to
  /// #tkw.shared, a dot) rounds into a narrower tile; null where the tile
  /// is the accumulator's type, or `op` is neither.
  tk::DotOp narrowedProduct(Operation *op);
  /// After read(): the ops narrowedProduct names, and no others, record
  /// the runs that round their tile.
  LogicalResult checkNarrowingWrites();
  /// The runs by which the threads write a tile of `type` to workgroup
  /// memory where nothing they read is in registers: up to 16 bytes
  /// (runOf), as wide as spread the tile evenly (runWidth).
  int64_t writeRun(RankedTensorType type) const {
    return runWidth(type.getShape(), type.getNumElements(), numThreads,
                    runOf(type.getElementType()));
  }
  /// Why `runs` cannot be how the threads visit a tile of `type` (another
  /// thread count, runs that do not spread it in whole runs); empty if it
  /// can.
  StringRef runsMisfit(tk::warp::RunsLayoutAttr runs, RankedTensorType type);
  /// The ops whose tile is written to workgroup memory as it is computed:
  /// element-wise ones (materialized, neither register- nor row-resident)
  /// and the dots no matrix unit computes (computedByThreads).
  bool writesShared(Operation *op);
  /// GPU only: `dot` is computed by the threads, a loop of FMAs per result
  /// element, where no matrix unit takes it (nor holds it).
  bool computedByThreads(tk::DotOp dot);
  /// The layout `op`'s tile must be written in, or std::nullopt when the
  /// threads are free to take any runs (nothing it reads lives in
  /// registers).
  std::optional<StoreLayout> ownersOfWrites(Operation *op);
  /// Reads `written`, the writers a #tkw.shared records on `op`, into
  /// sharedWrites; false, with an error naming it, where they cannot write
  /// the tile.
  bool readSharedWrites(Operation *op, Attribute written);
  /// After read(): every element-wise tile a GPU program writes to
  /// workgroup memory records its writers, the registers' owners where it
  /// is computed from registers.
  LogicalResult checkSharedWrites();
  /// Advances where `op`, recorded as `recorded`, visits its tile where the
  /// registers it reads are (`owners`), or by runs where it reads none;
  /// otherwise an error naming both (`ownersAre`), or saying it reads no
  /// registers (`readsNone`), and interrupts.
  WalkResult refuseUnlessOwners(Operation *op, const StoreLayout &recorded,
                                const std::optional<StoreLayout> &owners,
                                StringRef ownersAre, StringRef readsNone);
  /// The register-resident tile (residentLayout) that evaluating `value`
  /// reads first, through element-wise ops that are not stored, as
  /// KernelLowering::ownedRead finds it; null if none.
  Operation *residentOwner(Value value);
  /// GPU only: how the threads share each tk.reduce that does not reduce
  /// registers (splits, chooseSplit), and each tk.scan (a line per thread,
  /// serially: #tkw.split<parts = 1, across = "memory">), recorded as its
  /// `tkw.split`.
  void placeSplits();
  /// True when a source of `reduce` is computed from register-resident
  /// tiles: the registers' layout splits it (lowerReduceOfOwned,
  /// lowerRowReduceOfHeld).
  bool reducesRegisters(tk::ReduceOp reduce);
  /// The split SIMTKernelLowering::lowerReduce takes for `reduce`: a warp's
  /// lanes per row of a 2-D tile where the rows are whole warps of 32-bit
  /// values; a part per thread with shuffles for a whole 1-D tile; otherwise as
  /// many parts as leave a thread per (part, line), combined in memory.
  tk::warp::SplitLayoutAttr chooseSplit(tk::ReduceOp reduce);
  /// Why `split` cannot share `op` (a reduction or a scan) over this
  /// program's threads; empty when it can.
  StringRef splitMisfit(Operation *op, tk::warp::SplitLayoutAttr split);
  /// After read(): every reduction of a GPU program that does not reduce
  /// registers has its split, and none that does; every scan has its split.
  LogicalResult checkSplits();
  /// The `tkw.layout` recording `layout` (its product by `tkw.product`).
  Attribute storeLayoutAttr(const StoreLayout &layout);
  /// The conversion of operand `index` of `dot` to the unit's layout, if
  /// it reads one.
  const OperandConversion *operandConversion(tk::DotOp dot,
                                             unsigned index) const {
    auto it = operandConversions.find(dot->getOperand(index).getDefiningOp());
    return it == operandConversions.end() ? nullptr : &it->second;
  }
  /// Reads a dot operand's recorded conversion (#tkw.operand) into
  /// operandConversions; false, with an error naming it, where the unit
  /// does not lay out the product's operands or something else reads it.
  bool readOperandConversion(Operation *op, tk::warp::OperandLayoutAttr layout);
  /// Reads the recorded layout of a store, an atomic or an assert on a tile
  /// into storeLayouts; false, with an error naming it, for one no such
  /// access of that tile visits in.
  bool readStoreLayout(Operation *access, Attribute layout);
  /// After read(): every store of a tile and every atomic and assert on one
  /// has its layout, and a store of registers visits them where they are.
  LogicalResult checkStoreLayouts();
  /// Moves each tile the matrix unit computes in registers but whose readers
  /// need it whole in workgroup memory there with an explicit
  /// `tkw.convert_layout` (its result `#tkw.shared`), which those readers
  /// then read: a held accumulator's loop result read other than from its
  /// registers (not in heldLoopResults, yet used), placed after the loop,
  /// and the result of a held product that is neither kept in registers
  /// (residentLayout) nor a held accumulator's update, placed after the dot
  /// (convertedDots). Counted in `conversions`.
  void placeConversions();
  /// The product of `dot` as the matrix unit would hold it, when it does.
  std::optional<tk::MatrixUnit::HeldProduct> heldProduct(tk::DotOp dot);
  /// The product of `dot` described for the matrix unit, held or not.
  tk::MatrixUnit::HeldProduct describeProduct(tk::DotOp dot);
  /// How the matrix unit spreads `dot` over the threads when it computes it
  /// without holding it (MatrixUnit::emittedLayout), or nothing: a dot it
  /// holds, does not take (an FMA loop then, one thread an element), or a
  /// unit that states none.
  std::optional<tk::HeldLayout> emittedLayoutOf(tk::DotOp dot);
  /// When every use of `tile` is operand `operand` of a product the unit
  /// holds, all alike (attention's k^T and v, shared by the products of
  /// several row groups), that product: one copy in its layout serves them
  /// all.
  std::optional<tk::MatrixUnit::HeldProduct>
  heldOperandLayout(Value tile, unsigned operand);
  /// The dot that updates iteration argument `i` of `loop` in registers
  /// (heldIterArgs; null inside a distributed nest).
  tk::DotOp heldAccumulatorDot(scf::ForOp loop, unsigned i);
  /// The dot that can update iteration argument `i` of `loop` in registers
  /// (its only use, after element-wise ops of its shape, yielded as is),
  /// null otherwise.
  tk::DotOp chooseHeldAccumulator(scf::ForOp loop, unsigned i);
  /// True when every use of the held loop result `tile` (in `product`'s
  /// registers) is, through element-wise ops of its own shape that are not
  /// stored themselves, the value of a tk.store, or is the first value of
  /// an accumulator a later loop holds alike (a main loop's product handed
  /// to its tail), or is the loop result's conversion to workgroup memory
  /// (`tkw.convert_layout`, placeConversions): those read the held
  /// registers directly.
  bool onlyStoredFromRegisters(Value tile,
                               const tk::MatrixUnit::HeldProduct &product);
  /// The first value `isRoot` accepts among `value` and, through
  /// index-keeping element-wise ops that are not stored, the tiles it is
  /// computed from; null if none.
  Value findThroughIndexKeeping(Value value, function_ref<bool(Value)> isRoot);

  tk::FuncOp source;
  llvm::StringRef pass;
  bool fuseLoadsIntoStores;
  /// 0 on the CPU; the threads of a GPU program otherwise.
  int64_t numThreads;
  /// The lanes of a GPU warp (the target's warp, wave or subgroup size):
  /// shuffles span them; 1 on the CPU.
  int64_t warpSize;
  const tk::MatrixUnit *matrixUnit;
  /// The backend's async copies (cp.async), if any, and the depth of the
  /// rings they fill.
  const tk::AsyncCopyUnit *asyncCopy;
  int64_t numStages;
  /// Set by the lowering while it emits code (null and 0 while placing):
  /// gpu.thread_id x, given to held products, and the nesting of
  /// distributed loops and thread-0 regions (only nests at depth 0 are
  /// spread over threads, and only there are products held).
  Value threadId;
  int parallelDepth = 0;

  /// Element-wise tiles that get storage at their definition (the others
  /// are recomputed by their readers): in workgroup memory unless
  /// residentLayout or rowLayout keep them in registers.
  llvm::DenseSet<Operation *> materialized;
  DenseMap<Value, bool> cheap;
  /// Tiles kept in registers (chooseRegisterResident), by defining op, with
  /// their layout: null for runs (thread t owns the runs t, t + N, ... of
  /// ownedRun(shape) elements; register j * run + l holds element
  /// (t + N * j) * run + l), else the dot whose accumulator layout they
  /// share (register i holds the element at the unit's position i).
  DenseMap<Operation *, Operation *> residentLayout;
  /// The run width of each tile kept by runs (from its #tkw.runs layout).
  DenseMap<Operation *, int64_t> residentRun;
  /// Row-resident tiles (chooseRowResident): 1-D tiles with one value per
  /// row of a held product (FlashAttention's running max and sum), by
  /// value, with the dot whose product's rows they follow. Each thread
  /// keeps the values of the rows it holds, one register per row offset
  /// (MatrixUnit::RegisterRows), like the lanes sharing the row.
  DenseMap<Value, tk::DotOp> rowLayout;
  /// Loop-carried accumulators the matrix unit keeps in registers, by
  /// iteration argument, with the dot that updates them.
  DenseMap<Value, tk::DotOp> heldIterArgs;
  /// Results of those loops, with the dot: all stay in the registers after
  /// the loop, read there by stores, by later loops holding them alike and
  /// by their tkw.convert_layout (placeConversions) for other readers.
  DenseMap<Value, tk::DotOp> heldLoopResults;
  /// The operand of a held product a ring of numStages slots holds, loaded
  /// trips ahead (#tkw.ring).
  struct Ring {
    tk::DotOp dot;
    unsigned operand = 0;
  };
  /// Loads of dot operands filled trips ahead (placeRings), by load.
  DenseMap<Operation *, Ring> rings;
  /// The tkw.convert_layout ops placeConversions placed.
  int64_t conversions = 0;
  /// Conversions of dot operands to the unit's layout (#tkw.operand), by
  /// op.
  DenseMap<Operation *, OperandConversion> operandConversions;
  /// GPU only: how the threads visit the tile of each tk.store of a tile,
  /// and of each atomic on one (placeStoreLayouts, or read from its
  /// `tkw.layout`).
  DenseMap<Operation *, StoreLayout> storeLayouts;
  /// GPU only: how the threads compute and write each element-wise tile
  /// kept in workgroup memory (placeSharedWrites, or read from the
  /// `written` of its #tkw.shared).
  DenseMap<Operation *, StoreLayout> sharedWrites;
  /// GPU only: the run width by which the threads write the buffer of each
  /// tile a region carries (placeCarriedWrites, or read from the `written`
  /// of its #tkw.shared), by iteration argument or scf.if result.
  DenseMap<Value, int64_t> carriedWrites;
  /// GPU only: the run width by which the threads round each product's
  /// wider accumulator into its tile (placeNarrowingWrites, or read from
  /// the `written` of the op's #tkw.shared), by conversion or dot.
  DenseMap<Operation *, int64_t> narrowingWrites;
  /// GPU only: how the threads share each tk.reduce that does not reduce
  /// registers, and each tk.scan (placeSplits, or read from its
  /// `tkw.split`).
  DenseMap<Operation *, tk::warp::SplitLayoutAttr> splits;
  /// The dots numbered `tkw.product`, read once by recordedProduct (reads
  /// come before any numbering is written).
  std::optional<DenseMap<int64_t, tk::DotOp>> numberedProducts;
  /// Held products whose result a tkw.convert_layout right after the dot
  /// moves from the unit's registers to workgroup memory (#tkw.accumulator
  /// on the dot, its only reader the conversion).
  llvm::DenseSet<Operation *> convertedDots;
};

/// Fills the thread count, warp size and address space of `config` from
/// the TargetInfo preset `target` for `numWarps` warps, and points it to
/// the units the pass runs with, which it returns: `given` (a backend's,
/// handed over in C++), or with `targetUnits` the ones registered for
/// `target` (tk::registerTargetUnits). Fails, naming `pass`, for a missing
/// or unknown preset, a workgroup it cannot have, or units it lacks. The
/// caller keeps the result alive while `config` is used.
FailureOr<tk::TargetUnits>
configureForTarget(ModuleOp module, StringRef pass, StringRef target,
                   int64_t numWarps, bool targetUnits, tk::TargetUnits given,
                   TilePlacement::Config &config);

} // namespace mlir::tk_to_loops

#endif // TK_CORE_CONVERSION_TKTOLOOPS_TILEPLACEMENT_H_
