//===- RegistersToSIMT.cpp - tiles in registers to one thread's code ------===//
//
// tk-convert-registers-to-simt (Passes.td says what it does): the type
// conversion, the helpers every pattern family shares, the kernel's
// signature and grid queries, and the pass that applies the families'
// patterns (Elementwise.cpp, LoadStore.cpp, Reduce.cpp, ConvertLayout.cpp)
// with scf's structural conversions.
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"

#include "tk/core/Analysis/SharedMemoryAllocation.h"
#include "tk/core/Conversion/Passes.h"
#include "tk/core/Conversion/ScalarOps.h"
#include "tk/core/Layout.h"
#include "tk/core/TargetInfo.h"
#include "tk/core/WarpDialect.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

#include <map>

namespace tk {
#define GEN_PASS_DEF_TKCONVERTREGISTERSTOSIMT
#include "tk/core/Conversion/Passes.h.inc"
} // namespace tk

using namespace mlir;

namespace tk::simt {

//===----------------------------------------------------------------------===//
// Types and positions
//===----------------------------------------------------------------------===//

const LinearLayout *getLinearLayout(Type type) {
  auto tile = dyn_cast_or_null<RankedTensorType>(type);
  if (!tile)
    return nullptr;
  auto layout = dyn_cast_or_null<warp::LinearLayoutAttr>(tile.getEncoding());
  return layout ? &layout.getLinearLayout() : nullptr;
}

RegisterTypeConverter::RegisterTypeConverter(MLIRContext *context,
                                             unsigned globalAddressSpace,
                                             int64_t warpSize, int64_t numWarps,
                                             bool broadcastWarpIndex)
    : globalAddressSpace(globalAddressSpace), warpSize(warpSize),
      numWarps(numWarps), broadcastWarpIndex(broadcastWarpIndex) {
  // Later conversions are tried first: scalars stay as they are.
  addConversion([](Type type) -> std::optional<Type> {
    if (isa<RankedTensorType, tk::PtrType>(type))
      return std::nullopt;
    return type;
  });
  // A ring is the element of the scratch buffer where it starts.
  addConversion([context](warp::RingType) -> Type {
    return IntegerType::get(context, 32);
  });
  addConversion([context, globalAddressSpace](tk::PtrType type) -> Type {
    if (isa<RankedTensorType>(type.getPointeeType()))
      return nullptr; // block pointers: not lowered here
    return LLVM::LLVMPointerType::get(context, globalAddressSpace);
  });
  addConversion([this, context](RankedTensorType type,
                                SmallVectorImpl<Type> &results)
                    -> std::optional<LogicalResult> {
    Type element = convertType(type.getElementType());
    if (!element)
      return failure();
    // A cooperative-matrix tile is the warp's matrices, one value each.
    if (auto opaque =
            dyn_cast_or_null<warp::CooperativeMatrixAttr>(type.getEncoding())) {
      results.append(opaque.getNumMatrices(),
                     warp::MatrixType::get(context, opaque.getRows(),
                                           opaque.getCols(), element, "acc"));
      return success();
    }
    const LinearLayout *layout = getLinearLayout(type);
    if (!layout)
      return failure();
    results.append(layout->getInDimSize(kRegisterDim), element);
    return success();
  });
}

ThreadPosition ThreadPosition::get(OpBuilder &b, Location loc,
                                   const RegisterTypeConverter &converter) {
  // At the start of the function: every lane is active there (the
  // broadcast's precondition), and CSE leaves one computation a kernel.
  OpBuilder::InsertionGuard guard(b);
  Operation *scope = b.getInsertionBlock()->getParentOp();
  while (!scope->hasTrait<OpTrait::IsIsolatedFromAbove>())
    scope = scope->getParentOp();
  b.setInsertionPointToStart(&scope->getRegion(0).front());

  int64_t warpSize = converter.getWarpSize();
  Type i32 = b.getI32Type();
  Value id = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  id = arith::IndexCastUIOp::create(b, loc, i32, id);
  Value mask = arith::ConstantIntOp::create(b, loc, i32, warpSize - 1);
  Value shift =
      arith::ConstantIntOp::create(b, loc, i32, llvm::Log2_64(warpSize));
  Value warp = arith::ShRUIOp::create(b, loc, id, shift);
  if (converter.getBroadcastWarpIndex() && converter.getNumWarps() > 1)
    warp = gpu::SubgroupBroadcastOp::create(
        b, loc, warp, arith::ConstantIntOp::create(b, loc, i32, 0),
        gpu::BroadcastType::specific_lane);
  return {arith::AndIOp::create(b, loc, id, mask), warp};
}

SmallVector<int32_t> registerCoordinates(const LinearLayout &layout,
                                         int32_t reg) {
  SmallVector<int32_t> coordinates;
  for (auto &[dim, value] : layout.apply({{kRegisterDim, reg}}))
    coordinates.push_back(value);
  return coordinates;
}

ThreadCoordinates::ThreadCoordinates(OpBuilder &b, Location loc,
                                     const LinearLayout &layout,
                                     const ThreadPosition &thread)
    : layout(layout) {
  Type i32 = b.getI32Type();
  std::vector<std::string> outs = layout.getOutDimNames();
  for (const std::string &out : outs) {
    Value part = arith::ConstantIntOp::create(b, loc, i32, 0);
    int32_t bits = 0;
    for (auto [dim, index] :
         {std::pair{kLaneDim, thread.lane}, {kWarpDim, thread.warp}}) {
      if (!layout.hasInDim(dim))
        continue;
      for (int32_t bit = 0; bit < layout.getInDimSizeLog2(dim); ++bit) {
        int32_t basis = layout.getBasis(dim, bit, out);
        if (basis == 0)
          continue;
        // ((index >> bit) & 1) * basis
        Value shifted = arith::ShRUIOp::create(
            b, loc, index, arith::ConstantIntOp::create(b, loc, i32, bit));
        Value one = arith::AndIOp::create(
            b, loc, shifted, arith::ConstantIntOp::create(b, loc, i32, 1));
        Value term = arith::MulIOp::create(
            b, loc, one, arith::ConstantIntOp::create(b, loc, i32, basis));
        part = arith::XOrIOp::create(b, loc, part, term);
        bits |= basis;
      }
    }
    threadPart.push_back(part);
    threadBits.push_back(bits);
  }
}

Value xorConstant(OpBuilder &b, Location loc, Value thread, int64_t threadBits,
                  int64_t constant) {
  Type type = thread.getType();
  int64_t overlap = constant & threadBits, rest = constant & ~threadBits;
  if (overlap)
    thread = arith::XOrIOp::create(
        b, loc, thread, arith::ConstantIntOp::create(b, loc, type, overlap));
  // Disjoint non-negative bits: the sum wraps in neither sense, which a
  // backend may use to split an address into a base and an offset.
  if (rest)
    thread = arith::AddIOp::create(
        b, loc, thread, arith::ConstantIntOp::create(b, loc, type, rest),
        arith::IntegerOverflowFlags::nsw | arith::IntegerOverflowFlags::nuw);
  return thread;
}

Value ThreadCoordinates::get(OpBuilder &b, Location loc, int32_t reg,
                             unsigned dim) const {
  return xorConstant(b, loc, threadPart[dim], threadBits[dim],
                     registerCoordinates(layout, reg)[dim]);
}

std::pair<Value, int64_t> ThreadCoordinates::getThreadFlat(OpBuilder &b,
                                                           Location loc) const {
  Type i32 = b.getI32Type();
  Value flat = arith::ConstantIntOp::create(b, loc, i32, 0);
  int64_t bits = 0;
  int32_t shift = 0;
  std::vector<std::string> outs = layout.getOutDimNames();
  for (unsigned dim = 0; dim < outs.size(); ++dim) {
    Value coordinate = threadPart[dim];
    if (shift)
      coordinate = arith::ShLIOp::create(
          b, loc, coordinate, arith::ConstantIntOp::create(b, loc, i32, shift));
    flat = arith::OrIOp::create(b, loc, flat, coordinate);
    bits |= int64_t(threadBits[dim]) << shift;
    shift += layout.getOutDimSizeLog2(outs[dim]);
  }
  return {flat, bits};
}

int64_t ThreadCoordinates::getConstantFlat(int32_t reg, int32_t origin) const {
  SmallVector<int32_t> constants = registerCoordinates(layout, reg);
  int64_t flat = origin;
  int32_t shift = 0;
  std::vector<std::string> outs = layout.getOutDimNames();
  for (unsigned dim = 0; dim < outs.size(); ++dim) {
    flat ^= int64_t(constants[dim]) << shift;
    shift += layout.getOutDimSizeLog2(outs[dim]);
  }
  return flat;
}

Value ThreadCoordinates::getFlat(OpBuilder &b, Location loc, int32_t reg,
                                 int32_t origin) const {
  // The thread's part is the same for every register (CSE shares it).
  auto [thread, bits] = getThreadFlat(b, loc);
  return xorConstant(b, loc, thread, bits, getConstantFlat(reg, origin));
}

std::optional<SmallVector<int32_t>>
mapRegisters(const LinearLayout &from, const LinearLayout &to,
             function_ref<SmallVector<int32_t>(ArrayRef<int32_t>)> project) {
  // Lanes and warps must reach the same coordinates on both sides.
  for (StringRef dim : {kLaneDim, kWarpDim}) {
    int32_t fromBits = from.hasInDim(dim) ? from.getInDimSizeLog2(dim) : 0;
    int32_t toBits = to.hasInDim(dim) ? to.getInDimSizeLog2(dim) : 0;
    if (fromBits != toBits)
      return std::nullopt;
    for (int32_t bit = 0; bit < toBits; ++bit) {
      SmallVector<int32_t> toBasis, fromBasis;
      for (auto &[name, value] : to.apply({{dim, 1 << bit}}))
        toBasis.push_back(value);
      for (auto &[name, value] : from.apply({{dim, 1 << bit}}))
        fromBasis.push_back(value);
      if (project(toBasis) != fromBasis)
        return std::nullopt;
    }
  }
  std::map<SmallVector<int32_t>, int32_t> holder;
  int32_t fromRegisters = from.getInDimSize(kRegisterDim);
  for (int32_t reg = fromRegisters - 1; reg >= 0; --reg)
    holder[registerCoordinates(from, reg)] = reg;
  SmallVector<int32_t> map;
  for (int32_t reg = 0; reg < to.getInDimSize(kRegisterDim); ++reg) {
    auto it = holder.find(project(registerCoordinates(to, reg)));
    if (it == holder.end())
      return std::nullopt;
    map.push_back(it->second);
  }
  return map;
}

Writers getWriters(OpBuilder &b, Location loc, Type type,
                   const ThreadPosition &thread) {
  if (const LinearLayout *layout = getLinearLayout(type))
    return {isFirstHolder(b, loc, *layout, thread),
            getFreeMask(*layout, kRegisterDim)};
  Value id = arith::OrIOp::create(b, loc, thread.lane, thread.warp);
  return {arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq, id,
              arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0)),
          0};
}

void guarded(OpBuilder &b, Location loc, Value condition,
             function_ref<void(OpBuilder &)> body) {
  if (!condition)
    return body(b);
  auto branch = scf::IfOp::create(b, loc, condition, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(branch.thenBlock()->getTerminator());
  body(b);
}

int32_t getFreeMask(const LinearLayout &layout, StringRef dim) {
  for (auto &[name, mask] : layout.getFreeVariableMasks())
    if (name == dim)
      return mask;
  return 0;
}

Value isFirstHolder(OpBuilder &b, Location loc, const LinearLayout &layout,
                    const ThreadPosition &thread) {
  Type i32 = b.getI32Type();
  Value condition;
  for (auto [dim, index] :
       {std::pair{kLaneDim, thread.lane}, {kWarpDim, thread.warp}}) {
    int32_t mask = getFreeMask(layout, dim);
    if (!mask)
      continue;
    Value bits = arith::AndIOp::create(
        b, loc, index, arith::ConstantIntOp::create(b, loc, i32, mask));
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, bits,
                              arith::ConstantIntOp::create(b, loc, i32, 0));
    condition =
        condition ? arith::AndIOp::create(b, loc, condition, first) : first;
  }
  return condition;
}

Value shuffleXor(OpBuilder &b, Location loc, Value value, int64_t offset,
                 int64_t warpSize) {
  return shuffle(b, loc, value,
                 arith::ConstantIntOp::create(b, loc, b.getI32Type(), offset),
                 warpSize, gpu::ShuffleMode::XOR);
}

Value shuffle(OpBuilder &b, Location loc, Value value, Value lane,
              int64_t warpSize, gpu::ShuffleMode mode) {
  Type type = value.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  Type i32 = b.getI32Type();
  Value width = arith::ConstantIntOp::create(b, loc, i32, warpSize);
  auto shuffle32 = [&](Value word) {
    return gpu::ShuffleOp::create(b, loc, word, lane, width, mode)
        .getShuffleResult();
  };
  if (type == i32 || type.isF32())
    return shuffle32(value);
  // Narrow floats cross as f32: widening is exact, and the 16-bit integer
  // detour costs compilers that vectorise a subgroup (lavapipe) dearly.
  if (type.isF16() || type.isBF16()) {
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    return arith::TruncFOp::create(b, loc, type, shuffle32(wide));
  }
  Type asInt = b.getIntegerType(bits);
  Value word = isa<FloatType>(type)
                   ? Value(arith::BitcastOp::create(b, loc, asInt, value))
                   : value;
  Value result;
  if (bits < 32) {
    Value wide = arith::ExtUIOp::create(b, loc, i32, word);
    result = arith::TruncIOp::create(b, loc, asInt, shuffle32(wide));
  } else {
    // 64 bits: the two halves.
    Type i64 = b.getI64Type();
    Value low = arith::TruncIOp::create(b, loc, i32, word);
    Value high = arith::TruncIOp::create(
        b, loc, i32,
        arith::ShRUIOp::create(b, loc, word,
                               arith::ConstantIntOp::create(b, loc, i64, 32)));
    Value lowResult = arith::ExtUIOp::create(b, loc, i64, shuffle32(low));
    Value highResult = arith::ShLIOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, i64, shuffle32(high)),
        arith::ConstantIntOp::create(b, loc, i64, 32));
    result = arith::OrIOp::create(b, loc, lowResult, highResult);
  }
  return isa<FloatType>(type)
             ? Value(arith::BitcastOp::create(b, loc, type, result))
             : result;
}

Type storageType(Type elementType) {
  if (elementType.isInteger(1))
    return IntegerType::get(elementType.getContext(), 8);
  // Pointers cross as their 64-bit addresses (a loop's pointer walk handed
  // to a loop whose loads take another layout, say).
  if (isa<tk::PtrType, LLVM::LLVMPointerType>(elementType))
    return IntegerType::get(elementType.getContext(), 64);
  return elementType;
}

/// The name of kernel `kernel`'s scratch buffer of `type`.
static std::string scratchName(StringRef kernel, Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << kernel << "_scratch_" << type;
  return name;
}

Value getScratchBuffer(OpBuilder &b, Location loc, Operation *op,
                       Type elementType) {
  Type stored = storageType(elementType);
  StringRef kernel;
  if (auto func = op->getParentOfType<func::FuncOp>())
    kernel = func.getSymName();
  else if (auto func = op->getParentOfType<tk::FuncOp>())
    kernel = func.getSymName();
  auto module = op->getParentOfType<ModuleOp>();
  auto global =
      module.lookupSymbol<memref::GlobalOp>(scratchName(kernel, stored));
  if (!global)
    return {};
  return memref::GetGlobalOp::create(b, loc, global.getType(),
                                     global.getSymName());
}

FailureOr<SmallVector<Value>> combine(OpBuilder &b, Location loc,
                                      Region &region, ValueRange accumulated,
                                      ValueRange next) {
  Block &body = region.front();
  IRMapping mapping;
  unsigned n = accumulated.size();
  for (unsigned i = 0; i < n; ++i) {
    mapping.map(body.getArgument(i), accumulated[i]);
    mapping.map(body.getArgument(n + i), next[i]);
  }
  for (Operation &op : body.without_terminator()) {
    if (op.getNumResults() != 1 || op.getNumRegions() != 0 ||
        !isa<arith::ArithDialect, math::MathDialect>(op.getDialect()))
      return op.emitOpError("tk-convert-registers-to-simt: a combiner may "
                            "use only arith and math ops");
    SmallVector<Value> operands;
    for (Value operand : op.getOperands())
      operands.push_back(mapping.lookupOrDefault(operand));
    FailureOr<Value> result =
        emitScalarOp(b, loc, &op, operands, [](Type type) { return type; });
    if (failed(result))
      return failure();
    mapping.map(op.getResult(0), *result);
  }
  SmallVector<Value> results;
  for (Value result : body.getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(result));
  return results;
}

//===----------------------------------------------------------------------===//
// The kernel and its grid
//===----------------------------------------------------------------------===//

namespace {

/// tk.func -> func.func, pointers as global !llvm.ptr aligned to their
/// divisibility; the grid position comes from the hardware.
struct FuncLowering : OpConversionPattern<tk::FuncOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tk::FuncOp kernel, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FunctionType type = kernel.getFunctionType();
    TypeConverter::SignatureConversion signature(type.getNumInputs());
    for (auto [i, input] : llvm::enumerate(type.getInputs())) {
      Type converted = getTypeConverter()->convertType(input);
      if (!converted || isa<RankedTensorType>(input))
        return rewriter.notifyMatchFailure(kernel, "a tile argument");
      signature.addInputs(i, converted);
    }
    auto func = func::FuncOp::create(
        rewriter, kernel.getLoc(), kernel.getSymName(),
        rewriter.getFunctionType(signature.getConvertedTypes(), {}));
    func->setAttr(tk::kLoweredKernelAttrName, rewriter.getUnitAttr());
    for (unsigned i = 0; i < type.getNumInputs(); ++i)
      if (auto divisibility =
              kernel.getArgAttrOfType<IntegerAttr>(i, "tk.divisibility"))
        if (isa<tk::PtrType>(type.getInput(i)))
          func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                          rewriter.getI64IntegerAttr(divisibility.getInt()));
    rewriter.inlineRegionBefore(kernel.getBody(), func.getBody(), func.end());
    if (failed(rewriter.convertRegionTypes(&func.getBody(), *getTypeConverter(),
                                           &signature)))
      return failure();
    rewriter.eraseOp(kernel);
    return success();
  }
};

struct ReturnLowering : OpConversionPattern<tk::ReturnOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tk::ReturnOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<func::ReturnOp>(op);
    return success();
  }
};

template <typename GridOp, typename GPUOp>
struct GridQueryLowering : OpConversionPattern<GridOp> {
  using OpConversionPattern<GridOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GridOp op, typename GridOp::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    static constexpr gpu::Dimension dims[] = {
        gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z};
    Value index = GPUOp::create(rewriter, op.getLoc(), dims[op.getAxis()]);
    rewriter.replaceOpWithNewOp<arith::IndexCastUIOp>(op, op.getType(), index);
    return success();
  }
};

/// Declares each kernel's scratch buffers, one per element type its
/// scratch ops move, each as long as the furthest scratch of that type
/// reaches (its ops' `tkw.scratch` offset plus size; at most
/// `tkw.shared_memory`): the offsets of tk-allocate-shared-memory index
/// them, so the barriers tk-insert-barriers placed by those offsets order
/// every reuse. Where a backend keeps the buffers apart (SPIR-V's Workgroup
/// variables do not alias), a type that only a small scratch moves costs
/// only that much.
LogicalResult
declareScratchBuffers(tk::FuncOp kernel, const TargetInfo &target,
                      SmallVectorImpl<memref::GlobalOp> &buffers) {
  auto bytes = kernel->getAttrOfType<IntegerAttr>(
      warp::TkwDialect::kSharedMemoryAttrName);
  if (!bytes || bytes.getInt() == 0)
    return success();
  llvm::MapVector<Type, int64_t> extents;
  int64_t alignment = 16;
  WalkResult walk = kernel.walk([&](Operation *op) {
    auto scratch = op->getAttrOfType<DenseI64ArrayAttr>(
        warp::TkwDialect::kScratchAttrName);
    if (!scratch)
      return WalkResult::advance();
    alignment = std::max(alignment, getSharedAlignment(op));
    int64_t end =
        scratch.size() == 2 ? scratch[0] + scratch[1] : bytes.getInt();
    auto reach = [&](Type element) {
      int64_t &extent = extents[storageType(element)];
      extent = std::max(extent, end);
    };
    if (auto ring = dyn_cast<warp::LocalAllocOp>(op)) {
      reach(ring.getType().getElementType());
      return WalkResult::advance();
    }
    // An atomic passes its old values, never its pointers.
    if (isa<tk::AtomicRMWOp, tk::AtomicCASOp>(op)) {
      reach(getElementTypeOrSelf(op->getResult(0)));
      return WalkResult::advance();
    }
    // A dot's scratch holds its operands; its accumulator never crosses
    // threads. A cooperative-matrix dot's operands may wait in words.
    ValueRange moved = op->getOperands();
    if (auto dot = dyn_cast<tk::DotOp>(op)) {
      moved = op->getOperands().take_front(2);
      if (isa_and_nonnull<warp::CooperativeMatrixAttr>(
              warp::getLayout(dot.getType()))) {
        llvm::Expected<DotOperandPlan> plan = planDotOperands(dot, &target);
        if (!plan) {
          llvm::consumeError(plan.takeError());
        } else if (Type words = getCooperativeOperandWords(dot, *plan)) {
          reach(words);
          return WalkResult::advance();
        }
      }
    }
    for (Value operand : moved)
      if (auto tile = dyn_cast<RankedTensorType>(operand.getType()))
        reach(tile.getElementType());
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  OpBuilder b(kernel);
  auto workgroup = gpu::AddressSpaceAttr::get(kernel.getContext(),
                                              gpu::AddressSpace::Workgroup);
  for (auto [type, extent] : extents) {
    auto word = dyn_cast<VectorType>(type);
    int64_t elementBytes =
        word ? word.getNumElements() * word.getElementTypeBitWidth() / 8
             : std::max<int64_t>(type.getIntOrFloatBitWidth() / 8, 1);
    auto memref =
        MemRefType::get({int64_t(llvm::divideCeil(
                            std::min(extent, bytes.getInt()), elementBytes))},
                        type, MemRefLayoutAttrInterface{}, workgroup);
    buffers.push_back(memref::GlobalOp::create(
        b, kernel.getLoc(), scratchName(kernel.getSymName(), type),
        b.getStringAttr("private"), memref, Attribute{},
        /*constant=*/false, b.getI64IntegerAttr(alignment)));
  }
  return success();
}

struct ConvertRegistersToSIMT
    : public tk::impl::TkConvertRegistersToSIMTBase<ConvertRegistersToSIMT> {
  using TkConvertRegistersToSIMTBase::TkConvertRegistersToSIMTBase;
  ConvertRegistersToSIMT(std::shared_ptr<const MatrixUnit> matrixUnit,
                         std::shared_ptr<const AsyncCopyUnit> asyncCopy)
      : matrixUnit(std::move(matrixUnit)), asyncCopy(std::move(asyncCopy)) {}

  /// With `units`, the dialects the registered units emit, which the pass
  /// cannot load while it runs.
  void getDependentDialects(DialectRegistry &registry) const override {
    TkConvertRegistersToSIMTBase::getDependentDialects(registry);
    if (std::optional<TargetUnits> registered = registeredUnits(units))
      if (registered->dialects)
        registered->dialects(registry);
  }

  /// The units registered for preset `preset` (no overrides), if any.
  static std::optional<TargetUnits> registeredUnits(StringRef preset) {
    if (preset.empty())
      return std::nullopt;
    std::string error;
    std::optional<TargetInfo> info = TargetInfo::parse(preset, error);
    return info ? lookupTargetUnits(*info) : std::nullopt;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    SmallVector<tk::FuncOp> kernels(module.getOps<tk::FuncOp>());
    if (kernels.empty())
      return;
    // Every kernel of a module is compiled for one target.
    tk::FuncOp first = kernels.front();
    auto warpSize = first->getAttrOfType<IntegerAttr>(
        warp::TkwDialect::kThreadsPerWarpAttrName);
    auto numWarps =
        first->getAttrOfType<IntegerAttr>(warp::TkwDialect::kNumWarpsAttrName);
    std::string spec = warp::getTargetSpec(first, "");
    if (!warpSize || !numWarps || spec.empty()) {
      first.emitError("tk-convert-registers-to-simt: the kernel has no "
                      "layouts (run tk-assign-linear-layouts first)");
      return signalPassFailure();
    }
    std::string error;
    std::optional<TargetInfo> info = TargetInfo::parse(spec, error);
    if (!info) {
      first.emitError("tk-convert-registers-to-simt: ") << error;
      return signalPassFailure();
    }
    // The backend's units, or tk-opt's registered ones.
    std::shared_ptr<const MatrixUnit> matrix = matrixUnit;
    std::shared_ptr<const AsyncCopyUnit> copies = asyncCopy;
    if (!units.empty()) {
      if (info->preset != units) {
        first.emitError("tk-convert-registers-to-simt: units=")
            << units << " are not for the kernels' target preset '"
            << info->preset << "'";
        return signalPassFailure();
      }
      std::optional<TargetUnits> registered = lookupTargetUnits(*info);
      if (!registered) {
        first.emitError("tk-convert-registers-to-simt: units: no units are "
                        "registered for preset '")
            << units
            << "' (its backend has none or was not built, or this program "
               "registers none: tk-opt registers every built backend's)";
        return signalPassFailure();
      }
      matrix = registered->matrixUnit;
      copies = registered->asyncCopy;
    }
    SmallVector<memref::GlobalOp> scratchBuffers;
    for (tk::FuncOp kernel : kernels)
      if (failed(declareScratchBuffers(kernel, *info, scratchBuffers)))
        return signalPassFailure();

    RegisterTypeConverter converter(context, info->globalAddressSpace,
                                    warpSize.getInt(), numWarps.getInt(),
                                    info->broadcastWarpIndex);
    RewritePatternSet patterns(context);
    patterns.add<FuncLowering, ReturnLowering,
                 GridQueryLowering<tk::ProgramIdOp, gpu::BlockIdOp>,
                 GridQueryLowering<tk::NumProgramsOp, gpu::GridDimOp>>(
        converter, context);
    populateElementwisePatterns(converter, patterns);
    AccessPlans plans;
    module.walk([&](Operation *op) {
      if (isa<tk::LoadOp, tk::StoreOp>(op))
        plans[op] = getAccessPlan(op);
    });
    populateLoadStorePatterns(converter, patterns, plans);
    populateReducePatterns(converter, patterns);
    populateScanPatterns(converter, patterns);
    populateDebugPatterns(converter, patterns);
    populateConvertLayoutPatterns(converter, patterns,
                                  info->workgroupVectorBytes);
    auto shared = std::make_shared<const TargetInfo>(*info);
    populateCooperativeMatrixPatterns(converter, patterns, shared);
    populateDotPatterns(converter, patterns, matrix, shared);
    AsyncCopyRuns runs = getAsyncCopyRuns(module);
    populateRingPatterns(converter, patterns, copies, matrix, runs,
                         info->workgroupVectorBytes);

    ConversionTarget target(*context);
    target.addIllegalDialect<tk::TkDialect, warp::TkwDialect>();
    // What cooperative-matrix tiles lower to, for the backend to take.
    target.addLegalOp<warp::MatrixSplatOp, warp::MatrixLoadOp,
                      warp::MatrixStoreOp, warp::MatrixConvertOp,
                      warp::MatrixElementwiseOp, warp::MatrixMultiplyAddOp>();
    target.addLegalDialect<gpu::GPUDialect, LLVM::LLVMDialect,
                           memref::MemRefDialect>();
    target.addLegalOp<ModuleOp>();
    // What a backend's matrix unit emits (NVVM's mma.sync) is its own.
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    // Narrow float scalars are computed in f32, as tiles are.
    target.addDynamicallyLegalDialect<arith::ArithDialect, math::MathDialect>(
        [&](Operation *op) {
          return converter.isLegal(op) && !computesInF32(op);
        });
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp func) {
      return converter.isSignatureLegal(func.getFunctionType());
    });
    target.addLegalOp<func::ReturnOp>();
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyFullConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    foldExactNarrowRoundTrips(module);
    // A buffer no code reads (a type whose scratch ops all moved their
    // tiles otherwise: by shuffles, in place) still counts against the
    // device's workgroup memory (the SPIR-V module declares it), so it
    // goes.
    for (memref::GlobalOp buffer : scratchBuffers)
      if (SymbolTable::symbolKnownUseEmpty(buffer, module))
        buffer.erase();
  }

  /// The backend's unit that emits matrix intrinsics (may be null).
  std::shared_ptr<const MatrixUnit> matrixUnit;
  /// The backend's unit that copies asynchronously (may be null).
  std::shared_ptr<const AsyncCopyUnit> asyncCopy;
};

} // namespace
} // namespace tk::simt

std::unique_ptr<Pass> tk::createConvertRegistersToSIMTPass(
    std::shared_ptr<const MatrixUnit> matrixUnit,
    std::shared_ptr<const AsyncCopyUnit> asyncCopy) {
  return std::make_unique<simt::ConvertRegistersToSIMT>(std::move(matrixUnit),
                                                        std::move(asyncCopy));
}
