//===- TileBuffers.h - which tiles of a kernel get a buffer -----*- C++ -*-===//
//
// The one decision tk-convert-to-loops makes before it lowers a kernel:
// which element-wise tiles get a buffer on the program's stack where they
// are defined, and which are recomputed, element by element, inside the
// loop nest of each reader (TkToLoops.cpp describes the approach). Also
// which pointer tiles a loop walks by one scalar offset. KernelLowering
// derives from this class. Private to this folder.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_TKTOLOOPS_TILEBUFFERS_H_
#define TK_CORE_CONVERSION_TKTOLOOPS_TILEBUFFERS_H_

#include "tk/core/Conversion/ScalarOps.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

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

/// The run that fills 16 bytes with elements of `type` (4 to 8): how many
/// innermost elements a nest visits together, so that LLVM can merge them
/// into one vector access.
inline int64_t runOf(Type type) {
  if (!type.isIntOrFloat())
    return 4;
  return std::clamp<int64_t>(128 / std::max(8u, type.getIntOrFloatBitWidth()),
                             4, 8);
}

//===----------------------------------------------------------------------===//
// TileBuffers
//===----------------------------------------------------------------------===//

/// Which element-wise tiles of one tk.func get a buffer (analyze), and the
/// queries the lowering shares.
class TileBuffers {
public:
  struct Config {
    /// A load may be computed inside the nest of the store that consumes it
    /// (tk-convert-to-loops' fuse-loads-into-stores).
    bool fuseLoadsIntoStores = true;
  };

  TileBuffers(tk::FuncOp source, const Config &config)
      : source(source), fuseLoadsIntoStores(config.fuseLoadsIntoStores) {}

  /// Decides, once, which element-wise tiles get a buffer (`materialized`):
  /// a tile used twice, used in another region or through a broadcast, or
  /// a load that a write before its reader could overtake. The others are
  /// recomputed by their readers.
  void analyze();

  /// The scalar step of a pointer tile that iteration argument `i` of
  /// `loop` advances by the same splat each trip (`p = addptr(p,
  /// splat(step))` at the yield), from a start that reads no memory and no
  /// buffer the loop rewrites; null otherwise. The loop then carries one
  /// offset instead of the tile.
  Value pointerWalkStep(scf::ForOp loop, unsigned i);

  /// The pass, for its messages.
  static llvm::StringRef passName() { return "tk-convert-to-loops"; }

protected:
  /// True for a tile computed from scalars with integer arithmetic and
  /// shape ops only: recomputing it anywhere costs a few instructions and
  /// reads no memory, so it never gets a buffer.
  bool isCheap(Value value);

  tk::FuncOp source;
  bool fuseLoadsIntoStores;
  /// Element-wise tiles that get a buffer at their definition (the others
  /// are recomputed by their readers).
  llvm::DenseSet<Operation *> materialized;

private:
  void analyzeRegion(Region &region);
  void analyzeOp(Operation *op);

  bool analyzed = false;
  DenseMap<Value, bool> cheap;
};

} // namespace mlir::tk_to_loops

#endif // TK_CORE_CONVERSION_TKTOLOOPS_TILEBUFFERS_H_
