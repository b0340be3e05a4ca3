//===- Rings.cpp - rings of workgroup memory, filled asynchronously -------===//
//
// A `!tkw.ring` is the element of the kernel's scratch buffer where its
// first slot starts (an i32; tk-allocate-shared-memory placed it). Each
// thread copies the runs of its registers of a pointer tile into a slot
// with the backend's AsyncCopyUnit (cp.async), a masked-off run as zeros
// and a run partly masked element by element, or writes a tile from its
// registers (tkw.local_store), and reads a slot back into registers as
// SharedTileReader reads any tile.
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"

#include "tk/core/Analysis/AsyncCopies.h"
#include "tk/core/Analysis/MaskBounds.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/WarpDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace tk::simt {

namespace {

/// The ring's slot layout, or the op's error.
FailureOr<LinearLayout> getSlotLayout(Operation *op, warp::RingType ring) {
  llvm::Expected<LinearLayout> slot = ring.getSlotLayout();
  if (!slot)
    return op->emitOpError("tk-convert-registers-to-simt: ")
           << llvm::toString(slot.takeError());
  return std::move(*slot);
}

/// What a pattern needs to reach slot `slot` of ring `ring` (both
/// converted): the kernel's scratch buffer, the thread's position and the
/// slot's first element.
struct OpenSlot {
  Value buffer;
  ThreadPosition thread;
  Value base;
};

/// The slot an op of a ring (its ring and slot operands converted in
/// `adaptor`) reaches, or the op's error.
template <typename RingOp, typename Adaptor>
FailureOr<OpenSlot> openSlot(ConversionPatternRewriter &rewriter, RingOp op,
                             Adaptor adaptor,
                             const RegisterTypeConverter &converter) {
  Location loc = op.getLoc();
  warp::RingType type = op.getRing().getType();
  Value buffer = getScratchBuffer(rewriter, loc, op, type.getElementType());
  if (!buffer)
    return op.emitOpError("tk-convert-registers-to-simt: no scratch "
                          "buffer for the ring");
  ThreadPosition thread = ThreadPosition::get(rewriter, loc, converter);
  return OpenSlot{buffer, thread,
                  getSlotBase(rewriter, loc, type, adaptor.getRing().front(),
                              adaptor.getSlot().front())};
}

struct LocalAllocLowering : OpConversionPattern<warp::LocalAllocOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(warp::LocalAllocOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto scratch = op->getAttrOfType<DenseI64ArrayAttr>(
        warp::TkwDialect::kScratchAttrName);
    int64_t bytes = std::max<int64_t>(
        op.getType().getElementType().getIntOrFloatBitWidth() / 8, 1);
    if (!scratch || scratch[0] % bytes)
      return op.emitOpError("tk-convert-registers-to-simt: a ring without an "
                            "aligned tkw.scratch (run "
                            "tk-allocate-shared-memory first)");
    rewriter.replaceOpWithNewOp<arith::ConstantIntOp>(op, rewriter.getI32Type(),
                                                      scratch[0] / bytes);
    return success();
  }
};

struct AsyncCopyLowering : OpConversionPattern<warp::AsyncCopyOp> {
  AsyncCopyLowering(const TypeConverter &converter, MLIRContext *context,
                    std::shared_ptr<const AsyncCopyUnit> unit,
                    const AsyncCopyRuns &runs)
      : OpConversionPattern(converter, context), unit(std::move(unit)),
        runs(runs) {}

  LogicalResult
  matchAndRewrite(warp::AsyncCopyOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto found = runs.find(op);
    AsyncCopyPlan plan = found == runs.end() ? AsyncCopyPlan{} : found->second;
    const AsyncCopyRun &run = plan.run;
    int64_t width = run.width;
    warp::RingType ring = op.getRing().getType();
    int64_t bytes = ring.getElementType().getIntOrFloatBitWidth() / 8;
    if (!unit || width == 0 || !unit->supportsBytes(width * bytes))
      return op.emitOpError("tk-convert-registers-to-simt: no asynchronous "
                            "copy of these runs on this target");
    const LinearLayout *source = getLinearLayout(op.getPtr().getType());
    FailureOr<LinearLayout> slot = getSlotLayout(op, ring);
    if (!source || failed(slot))
      return failure();
    llvm::Expected<LinearLayout> toOffset = slot->invert();
    llvm::Expected<LinearLayout> written =
        toOffset ? source->compose(*toOffset) : toOffset.takeError();
    if (!written)
      return op.emitOpError("tk-convert-registers-to-simt: ")
             << llvm::toString(written.takeError());
    Location loc = op.getLoc();
    FailureOr<OpenSlot> open = openSlot(
        rewriter, op, adaptor, *getTypeConverter<RegisterTypeConverter>());
    if (failed(open))
      return failure();
    auto [buffer, thread, base] = *open;
    ThreadCoordinates writeThread(rewriter, loc, *written, thread);
    ValueRange pointers = adaptor.getPtr();
    ValueRange mask = adaptor.getMask();
    int32_t copies = getFreeMask(*source, kRegisterDim);
    Value writer = isFirstHolder(rewriter, loc, *source, thread);
    // Copies each run: all of it, none of it (zeros), or under its masks.
    enum class Runs { In, Off, Tested };
    auto copyRuns = [&](OpBuilder &b, Runs runs) {
      Type i32 = b.getI32Type();
      Value full = arith::ConstantIntOp::create(b, loc, i32, width * bytes);
      Value none = arith::ConstantIntOp::create(b, loc, i32, 0);
      for (int64_t reg = 0; reg < int64_t(pointers.size()); reg += width) {
        if (reg & copies)
          continue;
        Value at = toIndex(b, loc,
                           arith::AddIOp::create(
                               b, loc, base, writeThread.getFlat(b, loc, reg)));
        if (runs != Runs::Tested) {
          unit->copy(b, loc, buffer, at, pointers[reg], width * bytes,
                     runs == Runs::In ? Value() : none);
          continue;
        }
        if (run.maskUniform) {
          Value read = arith::SelectOp::create(b, loc, mask[reg], full, none);
          unit->copy(b, loc, buffer, at, pointers[reg], width * bytes, read);
          continue;
        }
        // A run wholly in or out is one copy; a run partly in (the edge of a
        // size of any divisibility) is loaded element by element, the
        // elements out as zeros, and stored.
        Value all = combineMasks(b, loc, mask, reg, width, /*all=*/true);
        Value any = combineMasks(b, loc, mask, reg, width, /*all=*/false);
        Value partly = arith::XOrIOp::create(b, loc, all, any);
        auto branch =
            scf::IfOp::create(b, loc, partly, /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(branch.thenBlock()->getTerminator());
        Type element = ring.getElementType();
        SmallVector<Value> values = loadEachUnderMask(
            b, loc, element, pointers, mask, reg, width,
            [&](OpBuilder &e, int64_t) {
              return arith::ConstantOp::create(e, loc, e.getZeroAttr(element));
            });
        for (auto [i, value] : llvm::enumerate(values)) {
          Value offset =
              i == 0
                  ? at
                  : arith::AddIOp::create(
                        b, loc, at, arith::ConstantIndexOp::create(b, loc, i));
          memref::StoreOp::create(b, loc, toStorage(b, loc, value), buffer,
                                  ValueRange{offset});
        }
        b.setInsertionPoint(branch.elseBlock()->getTerminator());
        unit->copy(b, loc, buffer, at, pointers[reg], width * bytes,
                   arith::SelectOp::create(b, loc, all, full, none));
      }
    };
    // Where the whole tile is in (or out, with `test`), its runs are
    // copied (or zero-filled) without a test of their own; `otherwise`
    // copies them else.
    auto unless = [&](OpBuilder &b, Value test, Runs runs,
                      function_ref<void(OpBuilder &)> otherwise) {
      if (!test)
        return otherwise(b);
      auto whole = scf::IfOp::create(b, loc, rewriter.getRemappedValue(test),
                                     /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(whole.thenBlock()->getTerminator());
      copyRuns(b, runs);
      b.setInsertionPoint(whole.elseBlock()->getTerminator());
      otherwise(b);
    };
    auto copy = [&](OpBuilder &b) {
      if (mask.empty())
        return copyRuns(b, Runs::In);
      if (run.maskUniform)
        return copyRuns(b, Runs::Tested);
      // Only the tiles at a size's edge test their runs.
      unless(b, plan.wholeTileIn, Runs::In, [&](OpBuilder &b) {
        unless(b, plan.wholeTileOff, Runs::Off,
               [&](OpBuilder &b) { copyRuns(b, Runs::Tested); });
      });
    };
    if (!writer) {
      copy(rewriter);
    } else {
      auto branch = scf::IfOp::create(rewriter, loc, writer, false);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&branch.getThenRegion().front());
      copy(rewriter);
    }
    rewriter.eraseOp(op);
    return success();
  }

  std::shared_ptr<const AsyncCopyUnit> unit;
  const AsyncCopyRuns &runs;
};

/// tkw.async_commit and tkw.async_wait: the unit's own.
template <typename Op> struct AsyncGroupLowering : OpConversionPattern<Op> {
  AsyncGroupLowering(const TypeConverter &converter, MLIRContext *context,
                     std::shared_ptr<const AsyncCopyUnit> unit)
      : OpConversionPattern<Op>(converter, context), unit(std::move(unit)) {}

  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!unit)
      return op.emitOpError("tk-convert-registers-to-simt: no asynchronous "
                            "copies on this target");
    if constexpr (std::is_same_v<Op, warp::AsyncWaitOp>)
      unit->wait(rewriter, op.getLoc(), op.getPending());
    else
      unit->commit(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }

  std::shared_ptr<const AsyncCopyUnit> unit;
};

/// Each element the thread holds first, into the slot where its layout
/// puts it, in vectors where both layouts keep registers consecutive.
struct LocalStoreLowering : OpConversionPattern<warp::LocalStoreOp> {
  LocalStoreLowering(const TypeConverter &converter, MLIRContext *context,
                     int64_t vectorBytes)
      : OpConversionPattern(converter, context), vectorBytes(vectorBytes) {}

  LogicalResult
  matchAndRewrite(warp::LocalStoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const LinearLayout *layout = getLinearLayout(op.getValue().getType());
    warp::RingType ring = op.getRing().getType();
    FailureOr<LinearLayout> slot = getSlotLayout(op, ring);
    if (!layout || failed(slot))
      return rewriter.notifyMatchFailure(op, "a tile without a layout");
    Location loc = op.getLoc();
    FailureOr<OpenSlot> open = openSlot(
        rewriter, op, adaptor, *getTypeConverter<RegisterTypeConverter>());
    if (failed(open))
      return failure();
    auto [buffer, thread, base] = *open;
    if (failed(writeTileToWorkgroup(rewriter, loc, op, adaptor.getValue(),
                                    *layout, *slot, buffer, base, thread,
                                    vectorBytes)))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }

  int64_t vectorBytes;
};

struct LocalLoadLowering : OpConversionPattern<warp::LocalLoadOp> {
  LocalLoadLowering(const TypeConverter &converter, MLIRContext *context,
                    std::shared_ptr<const MatrixUnit> matrixUnit,
                    int64_t vectorBytes)
      : OpConversionPattern(converter, context),
        matrixUnit(std::move(matrixUnit)), vectorBytes(vectorBytes) {}

  LogicalResult
  matchAndRewrite(warp::LocalLoadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const LinearLayout *layout = getLinearLayout(op.getType());
    warp::RingType ring = op.getRing().getType();
    FailureOr<LinearLayout> slot = getSlotLayout(op, ring);
    if (!layout || failed(slot))
      return rewriter.notifyMatchFailure(op, "a tile without a layout");
    Location loc = op.getLoc();
    if (isReadInPlace(op)) {
      // Its dots read the slot themselves; no register is ever read.
      Value unread =
          LLVM::PoisonOp::create(rewriter, loc, ring.getElementType());
      rewriter.replaceOpWithMultiple(
          op, {SmallVector<Value>(layout->getInDimSize(kRegisterDim), unread)});
      return success();
    }
    FailureOr<OpenSlot> open = openSlot(
        rewriter, op, adaptor, *getTypeConverter<RegisterTypeConverter>());
    if (failed(open))
      return failure();
    auto [buffer, thread, base] = *open;
    // The widest matrix loads that fit (four 8x8 matrices, else two, one),
    // else vectors.
    int32_t registers = layout->getInDimSize(kRegisterDim);
    std::optional<SharedTileReader> reader;
    int32_t group = 1;
    for (int32_t matrices : {8, 4, 2, 1}) {
      if (matrices > registers)
        continue;
      FailureOr<SharedTileReader> attempt = SharedTileReader::create(
          rewriter, loc, op, buffer, base, *layout, *slot, matrices,
          matrixUnit.get(), thread, op.getOffsets(), vectorBytes);
      if (failed(attempt))
        return failure();
      reader.emplace(std::move(*attempt));
      group = matrices;
      if (reader->readsMatrices())
        break;
    }
    if (!reader->readsMatrices())
      group = registers;
    SmallVector<Value> values;
    SmallVector<int32_t> chunk;
    for (int32_t reg = 0; reg < registers; ++reg) {
      chunk.push_back(reg);
      if (int32_t(chunk.size()) == group || reg + 1 == registers) {
        llvm::append_range(values, reader->read(rewriter, loc, chunk));
        chunk.clear();
      }
    }
    rewriter.replaceOpWithMultiple(op, {values});
    return success();
  }

  std::shared_ptr<const MatrixUnit> matrixUnit;
  int64_t vectorBytes;
};

} // namespace

Value getSlotBase(OpBuilder &b, Location loc, warp::RingType type, Value ring,
                  Value slot) {
  int64_t elements = 1;
  for (int64_t size : type.getShape())
    elements *= size;
  Value size = arith::ConstantIntOp::create(b, loc, b.getI32Type(), elements);
  return arith::AddIOp::create(b, loc, ring,
                               arith::MulIOp::create(b, loc, slot, size));
}

AsyncCopyRuns getAsyncCopyRuns(ModuleOp module) {
  AsyncCopyRuns runs;
  module.walk([&](warp::AsyncCopyOp op) {
    llvm::Expected<LinearLayout> slot = op.getRing().getType().getSlotLayout();
    if (!slot) {
      llvm::consumeError(slot.takeError());
      return;
    }
    AsyncCopyPlan &plan = runs[op];
    plan.run = getAsyncCopyRun(op.getPtr(), op.getMask(), *slot);
    if (plan.run.width == 0 || plan.run.maskUniform || !op.getMask())
      return;
    OpBuilder b(op);
    plan.wholeTileIn = buildWholeMaskTest(b, op.getLoc(), op.getMask());
    plan.wholeTileOff = buildWholeMaskOffTest(b, op.getLoc(), op.getMask());
  });
  return runs;
}

void populateRingPatterns(RegisterTypeConverter &converter,
                          RewritePatternSet &patterns,
                          std::shared_ptr<const AsyncCopyUnit> asyncCopy,
                          std::shared_ptr<const MatrixUnit> matrixUnit,
                          const AsyncCopyRuns &runs, int64_t vectorBytes) {
  MLIRContext *context = patterns.getContext();
  patterns.add<LocalAllocLowering>(converter, context);
  patterns.add<AsyncCopyLowering>(converter, context, asyncCopy, runs);
  patterns.add<AsyncGroupLowering<warp::AsyncCommitOp>,
               AsyncGroupLowering<warp::AsyncWaitOp>>(converter, context,
                                                      asyncCopy);
  patterns.add<LocalStoreLowering>(converter, context, vectorBytes);
  patterns.add<LocalLoadLowering>(converter, context, std::move(matrixUnit),
                                  vectorBytes);
}

} // namespace tk::simt
