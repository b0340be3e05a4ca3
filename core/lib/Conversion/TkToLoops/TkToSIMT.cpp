//===- TkToSIMT.cpp - tile ops to the code of one GPU thread ---*- C++ -*-===//
//
// tk-convert-to-simt and the program its lowering (SIMTKernelLowering)
// writes for: program ids from the hardware, buffers in workgroup memory,
// nests spread over the threads (or over what each thread holds), thread 0,
// barriers and printf. Its warps are the target's: the TargetInfo preset
// names the warp size that lanes, shuffles and per-warp buffers follow, so
// nothing here assumes one.
//
//===----------------------------------------------------------------------===//

#include "SIMTKernelLowering.h"
#include "tk/core/Conversion/Passes.h"

namespace tk {
#define GEN_PASS_DEF_TKCONVERTTOSIMT
#include "tk/core/Conversion/Passes.h.inc"
} // namespace tk

using namespace mlir;
using mlir::tk_to_loops::KernelLowering;
using mlir::tk_to_loops::SIMTKernelLowering;

namespace {

struct ConvertTkToSIMT : public tk::impl::TkConvertToSIMTBase<ConvertTkToSIMT> {
  using TkConvertToSIMTBase::TkConvertToSIMTBase;
  ConvertTkToSIMT(const tk::TkConvertToSIMTOptions &options,
                  std::shared_ptr<const tk::MatrixUnit> matrixUnit,
                  std::shared_ptr<const tk::AsyncCopyUnit> asyncCopy)
      : TkConvertToSIMTBase(options), matrixUnit(std::move(matrixUnit)),
        asyncCopy(std::move(asyncCopy)) {}

  std::shared_ptr<const tk::MatrixUnit> matrixUnit;
  std::shared_ptr<const tk::AsyncCopyUnit> asyncCopy;

  // With target-units, the dialects the registered units emit (NVVM for
  // mma.sync), loaded before the pass runs.
  void getDependentDialects(DialectRegistry &registry) const override {
    TkConvertToSIMTBase::getDependentDialects(registry);
    if (!targetUnits)
      return;
    std::string error;
    if (std::optional<tk::TargetInfo> info =
            tk::TargetInfo::parse(target, error))
      if (std::optional<tk::TargetUnits> units = tk::lookupTargetUnits(*info))
        if (units->dialects)
          units->dialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    KernelLowering::Config config;
    config.fuseLoadsIntoStores = fuseLoadsIntoStores;
    FailureOr<tk::TargetUnits> units = mlir::tk_to_loops::configureForTarget(
        module, getArgument(), target, numWarps, targetUnits,
        {matrixUnit, asyncCopy}, config);
    if (failed(units))
      return signalPassFailure();
    config.numStages = std::max<int64_t>(1, numStages);
    auto lower = [&](tk::FuncOp source, func::FuncOp target) {
      return std::unique_ptr<KernelLowering>(
          new SIMTKernelLowering(source, target, config));
    };
    if (failed(mlir::tk_to_loops::convertKernels(module, config, lower)))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass>
tk::createConvertToSIMTPass(const TkConvertToSIMTOptions &options,
                            std::shared_ptr<const MatrixUnit> matrixUnit,
                            std::shared_ptr<const AsyncCopyUnit> asyncCopy) {
  return std::make_unique<ConvertTkToSIMT>(options, std::move(matrixUnit),
                                           std::move(asyncCopy));
}

//===----------------------------------------------------------------------===//
// The GPU program: the grid from the hardware, workgroup buffers, nests
// spread over the threads, thread 0, barriers, printf
//===----------------------------------------------------------------------===//

namespace mlir::tk_to_loops {

void SIMTKernelLowering::bindGridPosition(unsigned) {
  threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  const gpu::Dimension dims[] = {gpu::Dimension::x, gpu::Dimension::y,
                                 gpu::Dimension::z};
  for (unsigned d = 0; d < 3; ++d) {
    grid[d] = arith::IndexCastUIOp::create(
        b, loc, b.getI32Type(), gpu::BlockIdOp::create(b, loc, dims[d]));
    grid[3 + d] = arith::IndexCastUIOp::create(
        b, loc, b.getI32Type(), gpu::GridDimOp::create(b, loc, dims[d]));
  }
}

Value SIMTKernelLowering::newBuffer(ArrayRef<int64_t> shape, Type elementType,
                                    int64_t alignment) {
  // Every thread of the program sees the same tile: a workgroup-memory
  // global per buffer. (No reuse between buffers whose lifetimes do not
  // overlap yet.)
  MLIRContext *ctx = b.getContext();
  auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get(shape, storageType(elementType),
                              MemRefLayoutAttrInterface(), space);
  std::string name =
      (target.getSymName() + "_tile" + std::to_string(numSharedBuffers++))
          .str();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(target);
    memref::GlobalOp::create(b, loc, name, b.getStringAttr("private"), type,
                             Attribute(), /*constant=*/false,
                             b.getI64IntegerAttr(alignment));
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entryBlock);
  return memref::GetGlobalOp::create(b, loc, type, name);
}

LogicalResult SIMTKernelLowering::visitIndices(
    ArrayRef<int64_t> shape, function_ref<LogicalResult(ArrayRef<Value>)> body,
    bool contiguous, function_ref<void()> afterRun, int64_t maxRun,
    bool publish) {
  if (parallelDepth > 0)
    return forEachIndexSerial(shape, body, afterRun);
  // One flat loop over the tile, thread t taking elements t, t + N, ...:
  // consecutive threads touch consecutive innermost elements. With a run
  // of `width` elements per thread, thread t takes runs t, t + N, ...
  int64_t total = 1;
  for (int64_t size : shape)
    total *= size;
  // The body at `index`, which register `slot` of a resident tile holds.
  auto visitOwned = [&](int64_t slot, ArrayRef<Value> index) {
    ownedSlot = slot;
    ownedIndex.assign(index.begin(), index.end());
    LogicalResult visited = body(index);
    ownedSlot = -1;
    ownedIndex.clear();
    return visited;
  };
  if (contiguous && iterateAsOwner && ownerFragment) {
    // At the positions of the accumulator registers, in register order.
    if (shape != ArrayRef<int64_t>{ownerFragment->m, ownerFragment->n})
      return emitError(loc, passName() + ": a tile in a product's "
                                         "register layout has another shape");
    auto positions = matrixUnit->registerPositions(b, loc, *ownerFragment);
    std::optional<tk::MatrixUnit::RegisterRows> rows =
        matrixUnit->registerRows(*ownerFragment);
    LogicalResult result = success();
    ++parallelDepth;
    for (auto [slot, position] : llvm::enumerate(positions)) {
      auto saved = std::move(elementCache);
      elementCache.clear();
      RowVisit visit(*this, rows, slot, position.first);
      result = visitOwned(slot, {position.first, position.second});
      elementCache = std::move(saved);
      if (failed(result))
        break;
      if (afterRun)
        afterRun();
    }
    --parallelDepth;
    return result;
  }
  if (contiguous && iterateAsOwner) {
    // Straight-line code: the registers of a resident tile are picked by
    // position, which must be a constant.
    // The run of the tile's #tkw.runs layout.
    int64_t run = ownerRun;
    if (run <= 0 || total % (run * numThreads) != 0)
      return emitError(loc, passName() +
                                ": a register-resident tile "
                                "does not spread evenly over the threads");
    LogicalResult result = success();
    ++parallelDepth;
    for (int64_t j = 0; j < total / (run * numThreads); ++j) {
      Value first = arith::MulIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, threadId, constIndex(j * numThreads)),
          constIndex(run));
      for (int64_t lane = 0; lane < run && succeeded(result); ++lane) {
        Value linear =
            lane == 0 ? first
                      : arith::AddIOp::create(b, loc, first, constIndex(lane));
        result = forOneIndex(shape, total, linear, [&](ArrayRef<Value> index) {
          return visitOwned(j * run + lane, index);
        });
      }
      if (afterRun)
        afterRun();
    }
    --parallelDepth;
    return result;
  }
  int64_t width =
      contiguous ? runWidth(shape, total, numThreads, maxRun) : int64_t(1);
  LogicalResult result = success();
  {
    OpBuilder::InsertionGuard guard(b);
    // The loop counts runs; the run's first index is computed in the body,
    // close to the accesses, so that LLVM sees its alignment.
    auto loop = scf::ForOp::create(b, loc, threadId, constIndex(total / width),
                                   constIndex(numThreads));
    b.setInsertionPointToStart(loop.getBody());
    Value start = width == 1
                      ? Value(loop.getInductionVar())
                      : arith::MulIOp::create(b, loc, loop.getInductionVar(),
                                              constIndex(width));
    ++parallelDepth;
    for (int64_t lane = 0; lane < width && succeeded(result); ++lane) {
      Value linear =
          lane == 0 ? start
                    : arith::AddIOp::create(b, loc, start, constIndex(lane));
      result = forOneIndex(shape, total, linear, body);
    }
    if (afterRun)
      afterRun();
    --parallelDepth;
  }
  if (publish)
    barrier();
  return result;
}

LogicalResult SIMTKernelLowering::copyBuffer(Value from, Value to,
                                             ArrayRef<int64_t> shape,
                                             Type elementType, int64_t maxRun,
                                             bool publish) {
  return forEachIndex(
      shape,
      [&](ArrayRef<Value> index) {
        storeBuffer(loadBuffer(from, index, elementType), to, index);
        return success();
      },
      /*contiguous=*/true, nullptr, maxRun, publish);
}

LogicalResult
SIMTKernelLowering::onFirstThread(function_ref<LogicalResult()> body) {
  if (parallelDepth > 0)
    return body();
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      threadId, constIndex(0));
  auto branch = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(branch.thenBlock()->getTerminator());
  auto saved = std::move(elementCache);
  elementCache.clear();
  ++parallelDepth;
  LogicalResult result = body();
  --parallelDepth;
  elementCache = std::move(saved);
  return result;
}

FailureOr<Value>
SIMTKernelLowering::once(Type type, function_ref<FailureOr<Value>()> compute) {
  if (parallelDepth > 0)
    return compute();
  Value slot = allocBuffer({1}, type);
  if (failed(onFirstThread([&]() -> LogicalResult {
        FailureOr<Value> value = compute();
        if (failed(value))
          return failure();
        storeBuffer(*value, slot, {constIndex(0)});
        return success();
      })))
    return failure();
  barrier();
  Value value = loadBuffer(slot, {constIndex(0)}, Type());
  if (isa<LLVM::LLVMPointerType>(type))
    value = LLVM::IntToPtrOp::create(b, loc, ptrType, value);
  // The slot may be written again (in a loop) only after everyone read it.
  barrier();
  return value;
}

void SIMTKernelLowering::barrier() {
  // A barrier right after another one waits for nothing.
  Block *block = b.getInsertionBlock();
  auto point = b.getInsertionPoint();
  if (point != block->begin() && isa<gpu::BarrierOp>(*std::prev(point)))
    return;
  gpu::BarrierOp::create(b, loc);
}

void SIMTKernelLowering::emitPrintf(StringRef format, ValueRange args) {
  gpu::PrintfOp::create(b, loc, format, args);
}

FailureOr<std::optional<StoreLayout>>
SIMTKernelLowering::threadLayoutOfAccess(Operation *access) {
  if (parallelDepth > 0)
    return std::optional<StoreLayout>();
  auto it = storeLayouts.find(access);
  if (it == storeLayouts.end())
    return access->emitOpError(passName() + ": the tile it visits has no "
                                            "thread layout");
  return std::optional<StoreLayout>(it->second);
}

} // namespace mlir::tk_to_loops
