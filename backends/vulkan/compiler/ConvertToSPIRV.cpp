//===- ConvertToSPIRV.cpp - the SIMT form to a Vulkan SPIR-V module -------===//
//
// Why MLIR's SPIR-V dialect rather than LLVM 22's SPIR-V backend: the
// backend has no physical-storage-buffer address space for Vulkan (its
// inttoptr of a 64-bit address miscompiles or aborts), and tk kernels take
// raw device addresses. MLIR's dialect has PhysicalStorageBuffer64 pointers,
// upstream patterns for arith, math, scf, gpu and memref, a serializer and
// the passes that lower entry-point ABI and deduce capabilities.
//
// What tk-convert-registers-to-simt leaves that upstream does not convert is
// written here: llvm pointers become 64-bit integers (addresses) that each
// load, store and atomic turns into a typed PhysicalStorageBuffer pointer with
// OpConvertUToPtr and an Aligned access, as Vulkan requires; workgroup
// memref.globals become Workgroup variables; the kernel's arguments are
// read from one block, in the order and at the offsets the loader packs
// them: the push constants, or a buffer they give the address of where the
// block is larger than every device's push constants.
//
//===----------------------------------------------------------------------===//

#include "compiler/ConvertToSPIRV.h"
#include "compiler/AccurateTrig.h"
#include "compiler/CooperativeMatrixToSPIRV.h"
#include "tk/core/LoopGuard.h"
#include "tk/core/WarpDialect.h"

#include "mlir/Conversion/ArithToSPIRV/ArithToSPIRV.h"
#include "mlir/Conversion/FuncToSPIRV/FuncToSPIRV.h"
#include "mlir/Conversion/GPUToSPIRV/GPUToSPIRV.h"
#include "mlir/Conversion/IndexToSPIRV/IndexToSPIRV.h"
#include "mlir/Conversion/MathToSPIRV/MathToSPIRV.h"
#include "mlir/Conversion/MemRefToSPIRV/MemRefToSPIRV.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToSPIRV/SCFToSPIRV.h"
#include "mlir/Conversion/UBToSPIRV/UBToSPIRV.h"
#include "mlir/Conversion/VectorToSPIRV/VectorToSPIRV.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/SPIRV/Transforms/SPIRVConversion.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace tk::vulkan {

namespace {

constexpr const char *kArgumentsVariable = "__tk_arguments";

/// The SPIR-V environment of a Vulkan device with `features`: SPIR-V 1.5
/// (Vulkan 1.2) at most, 1.6 with cooperative matrices, the capabilities tk's
/// lowering may need where the device has them. spirv-update-vce keeps only
/// those the kernel uses.
spirv::TargetEnvAttr targetEnvironment(MLIRContext *context,
                                       const DeviceFeatures &features,
                                       int64_t threadsPerBlock) {
  using spirv::Capability;
  using spirv::Extension;
  SmallVector<Capability> capabilities = {
      Capability::Shader,
      Capability::Int64,
      Capability::PhysicalStorageBufferAddresses,
      Capability::GroupNonUniform,
      Capability::GroupNonUniformShuffle,
      Capability::GroupNonUniformBallot,
  };
  if (features.float16)
    capabilities.append(
        {Capability::Float16, Capability::StorageBuffer16BitAccess});
  if (features.int16)
    capabilities.append(
        {Capability::Int16, Capability::StorageBuffer16BitAccess});
  if (features.int8)
    capabilities.append(
        {Capability::Int8, Capability::StorageBuffer8BitAccess});
  if (features.float64)
    capabilities.push_back(Capability::Float64);
  if (features.int64Atomics)
    capabilities.push_back(Capability::Int64Atomics);
  if (features.float32AtomicAdd)
    capabilities.push_back(Capability::AtomicFloat32AddEXT);
  SmallVector<Extension> extensions = {
      Extension::SPV_KHR_physical_storage_buffer,
      Extension::SPV_KHR_8bit_storage,
      Extension::SPV_KHR_16bit_storage,
      Extension::SPV_KHR_storage_buffer_storage_class,
  };
  if (features.float32AtomicAdd)
    extensions.push_back(Extension::SPV_EXT_shader_atomic_float_add);
  // MLIR's SPIR-V dialect takes SPV_KHR_cooperative_matrix from SPIR-V 1.6
  // (Vulkan 1.3) on.
  spirv::Version version = spirv::Version::V_1_5;
  if (!features.cooperativeMatrix.empty()) {
    version = spirv::Version::V_1_6;
    capabilities.push_back(Capability::CooperativeMatrixKHR);
    extensions.push_back(Extension::SPV_KHR_cooperative_matrix);
  }
  // bf16 matrices (bf16 scalars stay 16-bit integers: the capability's
  // arithmetic is not what tk's bf16 rounding is written in).
  if (hasBFloat16CooperativeMatrix(features.cooperativeMatrix)) {
    capabilities.append({Capability::BFloat16TypeKHR,
                         Capability::BFloat16CooperativeMatrixKHR});
    extensions.push_back(Extension::SPV_KHR_bfloat16);
  }
  auto triple =
      spirv::VerCapExtAttr::get(version, capabilities, extensions, context);
  Builder b(context);
  auto limits = spirv::ResourceLimitsAttr::get(
      context, /*max_compute_shared_memory_size=*/0,
      /*max_compute_workgroup_invocations=*/threadsPerBlock,
      b.getI32ArrayAttr({int32_t(threadsPerBlock), 1, 1}),
      features.subgroupSize, features.subgroupSize, features.subgroupSize,
      ArrayAttr(), ArrayAttr());
  return spirv::TargetEnvAttr::get(triple, limits, spirv::ClientAPI::Vulkan);
}

/// Bytes of a scalar or vector type in memory (i1 takes a byte).
int64_t byteSize(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.getNumElements() * byteSize(vector.getElementType());
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

/// The semantics of an atomic of LLVM's `ordering` on device memory.
spirv::MemorySemantics semanticsOf(LLVM::AtomicOrdering ordering) {
  switch (ordering) {
  case LLVM::AtomicOrdering::not_atomic:
  case LLVM::AtomicOrdering::unordered:
  case LLVM::AtomicOrdering::monotonic:
    return spirv::MemorySemantics::None;
  case LLVM::AtomicOrdering::acquire:
    return spirv::MemorySemantics::Acquire |
           spirv::MemorySemantics::UniformMemory;
  case LLVM::AtomicOrdering::release:
    return spirv::MemorySemantics::Release |
           spirv::MemorySemantics::UniformMemory;
  default:
    return spirv::MemorySemantics::AcquireRelease |
           spirv::MemorySemantics::UniformMemory;
  }
}

/// The storage class of a memref's memory space: tk-convert-registers-to-simt
/// marks shared tiles with the gpu dialect's workgroup space, which upstream's
/// Vulkan map (numeric spaces) does not read.
std::optional<spirv::StorageClass> storageClassOf(Attribute space) {
  if (auto gpuSpace = dyn_cast_or_null<gpu::AddressSpaceAttr>(space)) {
    switch (gpuSpace.getValue()) {
    case gpu::AddressSpace::Workgroup:
      return spirv::StorageClass::Workgroup;
    case gpu::AddressSpace::Private:
      return spirv::StorageClass::Function;
    case gpu::AddressSpace::Global:
      return spirv::StorageClass::StorageBuffer;
    }
  }
  return spirv::mapMemorySpaceToVulkanStorageClass(space);
}

//===----------------------------------------------------------------------===//
// Patterns for what upstream leaves
//===----------------------------------------------------------------------===//

/// A PhysicalStorageBuffer pointer to `element` at 64-bit `address`.
Value pointerTo(OpBuilder &b, Location loc, Value address, Type element) {
  auto type = spirv::PointerType::get(
      element, spirv::StorageClass::PhysicalStorageBuffer);
  return spirv::ConvertUToPtrOp::create(b, loc, type, address);
}

/// The Aligned operand of an access to `stored`: the llvm op's alignment,
/// or the type's size where it gives none.
IntegerAttr alignmentOf(OpBuilder &b, std::optional<uint64_t> alignment,
                        Type stored) {
  int64_t bytes = alignment.value_or(0);
  return b.getI32IntegerAttr(bytes ? bytes : byteSize(stored));
}

spirv::MemoryAccessAttr aligned(OpBuilder &b) {
  return spirv::MemoryAccessAttr::get(b.getContext(),
                                      spirv::MemoryAccess::Aligned);
}

/// `value` sign-extended to `to` as zero extension, xor and subtract of the
/// sign bit, without OpSConvert: Mesa 22.3's lavapipe (Debian 12) evaluates
/// a signed comparison of an OpSConvert result wrongly (`sext(5) > 1023` is
/// true), which turned every masked softmax into its unmasked path.
Value signExtend(OpBuilder &b, Location loc, Value value, IntegerType to) {
  unsigned fromWidth = value.getType().getIntOrFloatBitWidth();
  Value wide = spirv::UConvertOp::create(b, loc, to, value);
  Value sign = spirv::ConstantOp::create(
      b, loc, to,
      b.getIntegerAttr(
          to, llvm::APInt::getOneBitSet(to.getWidth(), fromWidth - 1)));
  Value flipped = spirv::BitwiseXorOp::create(b, loc, wide, sign);
  return spirv::ISubOp::create(b, loc, flipped, sign);
}

/// llvm.getelementptr %p[%i] : T  ->  p + i * sizeof(T), in 64 bits.
struct GEPLowering : OpConversionPattern<LLVM::GEPOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LLVM::GEPOp gep, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type element = gep.getElemType();
    if (gep.getIndices().size() != 1 ||
        !(element.isIntOrFloat() || isa<VectorType>(element)))
      return rewriter.notifyMatchFailure(
          gep, "only one index over a scalar or vector element");
    Location loc = gep.getLoc();
    Type i64 = rewriter.getI64Type();
    // p + index * size + constant * size. An index x + c that does not wrap
    // (nsw) gives x and c: p + x * size is then shared by every c, and
    // + c * size folds into the access's immediate offset (LLVM proves the
    // same from ranges on the other backends; a SPIR-V compiler may not see
    // through the sign extension below).
    Value index;
    int64_t constant = 0;
    if (auto attr = dyn_cast<IntegerAttr>(gep.getIndices()[0])) {
      constant = attr.getInt();
    } else {
      index = adaptor.getDynamicIndices()[0];
      if (auto add = gep.getDynamicIndices()[0].getDefiningOp<arith::AddIOp>())
        if (bitEnumContainsAll(add.getOverflowFlags(),
                               arith::IntegerOverflowFlags::nsw))
          if (std::optional<int64_t> c = getConstantIntValue(add.getRhs()))
            if (Value x = rewriter.getRemappedValue(add.getLhs())) {
              index = x;
              constant = *c;
            }
    }
    int64_t size = byteSize(element);
    Value address = adaptor.getBase();
    if (index) {
      if (index.getType() != i64)
        index = signExtend(rewriter, loc, index, rewriter.getI64Type());
      address = spirv::IAddOp::create(
          rewriter, loc, address,
          spirv::IMulOp::create(
              rewriter, loc, index,
              spirv::ConstantOp::create(rewriter, loc, i64,
                                        rewriter.getI64IntegerAttr(size))));
    }
    if (constant)
      address = spirv::IAddOp::create(
          rewriter, loc, address,
          spirv::ConstantOp::create(
              rewriter, loc, i64, rewriter.getI64IntegerAttr(constant * size)));
    rewriter.replaceOp(gep, address);
    return success();
  }
};

struct LoadLowering : OpConversionPattern<LLVM::LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LLVM::LoadOp load, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (load.getOrdering() != LLVM::AtomicOrdering::not_atomic)
      return rewriter.notifyMatchFailure(load, "atomic loads");
    Type result = getTypeConverter()->convertType(load.getType());
    if (!result)
      return rewriter.notifyMatchFailure(load, "unsupported type");
    Location loc = load.getLoc();
    bool boolean = load.getType().isInteger(1);
    Type stored = boolean ? rewriter.getI8Type() : result;
    Value pointer = pointerTo(rewriter, loc, adaptor.getAddr(), stored);
    Value value = spirv::LoadOp::create(
        rewriter, loc, stored, pointer, aligned(rewriter),
        alignmentOf(rewriter, load.getAlignment(), stored));
    if (boolean) {
      Value zero = spirv::ConstantOp::create(rewriter, loc, stored,
                                             rewriter.getI8IntegerAttr(0));
      value = spirv::INotEqualOp::create(rewriter, loc, value, zero);
    }
    rewriter.replaceOp(load, value);
    return success();
  }
};

struct StoreLowering : OpConversionPattern<LLVM::StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LLVM::StoreOp store, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (store.getOrdering() != LLVM::AtomicOrdering::not_atomic)
      return rewriter.notifyMatchFailure(store, "atomic stores");
    Location loc = store.getLoc();
    Value value = adaptor.getValue();
    if (store.getValue().getType().isInteger(1)) {
      Type i8 = rewriter.getI8Type();
      Value one = spirv::ConstantOp::create(rewriter, loc, i8,
                                            rewriter.getI8IntegerAttr(1));
      Value zero = spirv::ConstantOp::create(rewriter, loc, i8,
                                             rewriter.getI8IntegerAttr(0));
      value = spirv::SelectOp::create(rewriter, loc, value, one, zero);
    }
    Value pointer =
        pointerTo(rewriter, loc, adaptor.getAddr(), value.getType());
    rewriter.replaceOpWithNewOp<spirv::StoreOp>(
        store, pointer, value, aligned(rewriter),
        alignmentOf(rewriter, store.getAlignment(), value.getType()));
    return success();
  }
};

struct AtomicRMWLowering : OpConversionPattern<LLVM::AtomicRMWOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LLVM::AtomicRMWOp rmw, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = rmw.getLoc();
    Value value = adaptor.getVal();
    Type type = value.getType();
    Value pointer = pointerTo(rewriter, loc, adaptor.getPtr(), type);
    auto scope = spirv::Scope::Device;
    spirv::MemorySemantics semantics = semanticsOf(rmw.getOrdering());
    Value result;
    switch (rmw.getBinOp()) {
#define TK_SPIRV_ATOMIC(kind, Op)                                              \
  case LLVM::AtomicBinOp::kind:                                                \
    result = spirv::Op::create(rewriter, loc, type, pointer, scope, semantics, \
                               value);                                         \
    break;
      TK_SPIRV_ATOMIC(add, AtomicIAddOp)
      TK_SPIRV_ATOMIC(sub, AtomicISubOp)
      TK_SPIRV_ATOMIC(max, AtomicSMaxOp)
      TK_SPIRV_ATOMIC(min, AtomicSMinOp)
      TK_SPIRV_ATOMIC(umax, AtomicUMaxOp)
      TK_SPIRV_ATOMIC(umin, AtomicUMinOp)
      TK_SPIRV_ATOMIC(_and, AtomicAndOp)
      TK_SPIRV_ATOMIC(_or, AtomicOrOp)
      TK_SPIRV_ATOMIC(_xor, AtomicXorOp)
      TK_SPIRV_ATOMIC(xchg, AtomicExchangeOp)
      TK_SPIRV_ATOMIC(fadd, EXTAtomicFAddOp)
#undef TK_SPIRV_ATOMIC
    default:
      return rmw.emitError("tk-vulkan: atomic_rmw ")
             << LLVM::stringifyAtomicBinOp(rmw.getBinOp())
             << " has no SPIR-V form";
    }
    rewriter.replaceOp(rmw, result);
    return success();
  }
};

/// llvm.cmpxchg gives {old, success}; SPIR-V's OpAtomicCompareExchange gives
/// the old value, success is old == expected.
struct CmpXchgLowering : OpConversionPattern<LLVM::AtomicCmpXchgOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LLVM::AtomicCmpXchgOp cas, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = cas.getLoc();
    Value expected = adaptor.getCmp();
    Type type = expected.getType();
    if (!isa<IntegerType>(type))
      return rewriter.notifyMatchFailure(cas, "integer compare-exchange only");
    Value pointer = pointerTo(rewriter, loc, adaptor.getPtr(), type);
    Value old = spirv::AtomicCompareExchangeOp::create(
        rewriter, loc, type, pointer, spirv::Scope::Device,
        semanticsOf(cas.getSuccessOrdering()),
        semanticsOf(cas.getFailureOrdering()), adaptor.getVal(), expected);
    Value exchanged = spirv::IEqualOp::create(rewriter, loc, old, expected);
    Type structType = getTypeConverter()->convertType(cas.getType());
    if (!structType)
      return rewriter.notifyMatchFailure(cas, "result type");
    rewriter.replaceOpWithNewOp<spirv::CompositeConstructOp>(
        cas, structType, ValueRange{old, exchanged});
    return success();
  }
};

struct ExtractValueLowering : OpConversionPattern<LLVM::ExtractValueOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LLVM::ExtractValueOp extract, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(extract.getType());
    if (!type)
      return rewriter.notifyMatchFailure(extract, "result type");
    SmallVector<int32_t> position(extract.getPosition().begin(),
                                  extract.getPosition().end());
    rewriter.replaceOpWithNewOp<spirv::CompositeExtractOp>(
        extract, type, adaptor.getContainer(),
        rewriter.getI32ArrayAttr(position));
    return success();
  }
};

/// The constant position of an llvm.extractelement or insertelement: the
/// register lowering moves runs as vectors at constant lanes.
std::optional<int32_t> constantPosition(Value position) {
  APInt value;
  if (!matchPattern(position, m_ConstantInt(&value)))
    return std::nullopt;
  return static_cast<int32_t>(value.getZExtValue());
}

struct ExtractElementLowering : OpConversionPattern<LLVM::ExtractElementOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LLVM::ExtractElementOp extract, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<int32_t> position = constantPosition(extract.getPosition());
    Type type = getTypeConverter()->convertType(extract.getType());
    if (!position || !type)
      return rewriter.notifyMatchFailure(extract, "a constant position");
    rewriter.replaceOpWithNewOp<spirv::CompositeExtractOp>(
        extract, type, adaptor.getVector(),
        rewriter.getI32ArrayAttr({*position}));
    return success();
  }
};

struct InsertElementLowering : OpConversionPattern<LLVM::InsertElementOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LLVM::InsertElementOp insert, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<int32_t> position = constantPosition(insert.getPosition());
    if (!position)
      return rewriter.notifyMatchFailure(insert, "a constant position");
    rewriter.replaceOpWithNewOp<spirv::CompositeInsertOp>(
        insert, adaptor.getValue(), adaptor.getVector(),
        ArrayRef<int32_t>{*position});
    return success();
  }
};

struct PoisonLowering : OpConversionPattern<LLVM::PoisonOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LLVM::PoisonOp poison, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(poison.getType());
    if (!type)
      return rewriter.notifyMatchFailure(poison, "type");
    rewriter.replaceOpWithNewOp<spirv::UndefOp>(poison, type);
    return success();
  }
};

/// Addresses are integers here: the casts disappear.
template <typename CastOp>
struct AddressCastLowering : OpConversionPattern<CastOp> {
  using OpConversionPattern<CastOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CastOp cast, typename CastOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getArg();
    Type i64 = rewriter.getI64Type();
    if (input.getType() != i64)
      input = spirv::UConvertOp::create(rewriter, cast.getLoc(), i64, input);
    Type result = this->getTypeConverter()->convertType(cast.getType());
    if (result != i64)
      input = spirv::UConvertOp::create(rewriter, cast.getLoc(), result, input);
    rewriter.replaceOp(cast, input);
    return success();
  }
};

struct ZeroLowering : OpConversionPattern<LLVM::ZeroOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LLVM::ZeroOp zero, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(zero.getType());
    if (!type || !type.isIntOrFloat())
      return rewriter.notifyMatchFailure(zero, "scalar zero only");
    rewriter.replaceOpWithNewOp<spirv::ConstantOp>(zero, type,
                                                   rewriter.getZeroAttr(type));
    return success();
  }
};

/// arith.extsi through signExtend (the lavapipe bug above).
struct ExtSILowering : OpConversionPattern<arith::ExtSIOp> {
  ExtSILowering(const TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(arith::ExtSIOp ext, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto from = dyn_cast<IntegerType>(ext.getIn().getType());
    auto to = dyn_cast<IntegerType>(ext.getType());
    if (!from || !to || from.getWidth() < 8)
      return rewriter.notifyMatchFailure(ext, "scalar integers of a byte on");
    rewriter.replaceOp(ext,
                       signExtend(rewriter, ext.getLoc(), adaptor.getIn(), to));
    return success();
  }
};

/// A math op GLSL.std.450 has, where upstream's patterns do not map it
/// (exp2 and log2, which FlashAttention's online softmax uses).
template <typename MathOp, typename GLOp>
struct GLLowering : OpConversionPattern<MathOp> {
  using OpConversionPattern<MathOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MathOp op, typename MathOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = this->getTypeConverter()->convertType(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "unsupported type");
    rewriter.replaceOpWithNewOp<GLOp>(op, type, adaptor.getOperands());
    return success();
  }
};

/// arith.maxnumf and arith.minnumf (a NaN operand loses) in four
/// instructions: b where a < b (for min, b < a) or a is NaN, else a.
/// Upstream's form is GLSL's FMax or FMin, whose result is undefined for a
/// NaN operand, then a test and a select for each operand: five, and NVIDIA's
/// Vulkan compiler keeps them all (a softmax's row maxima cost it 11%). With
/// `nnan`, upstream's bare FMax or FMin is left to it.
template <typename Op, bool isMax>
struct NumberMinMaxLowering : OpConversionPattern<Op> {
  NumberMinMaxLowering(const TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern<Op>(converter, context, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (arith::bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::nnan))
      return rewriter.notifyMatchFailure(op, "no NaN: upstream's bare form");
    Type type = this->getTypeConverter()->convertType(op.getType());
    if (!type || !isa<FloatType>(getElementTypeOrSelf(type)))
      return rewriter.notifyMatchFailure(op, "floats only");
    Location loc = op.getLoc();
    Value a = adaptor.getLhs(), b = adaptor.getRhs();
    Value less = isMax ? spirv::FOrdLessThanOp::create(rewriter, loc, a, b)
                       : spirv::FOrdLessThanOp::create(rewriter, loc, b, a);
    Value nan = spirv::IsNanOp::create(rewriter, loc, a);
    Value takeB = spirv::LogicalOrOp::create(rewriter, loc, less, nan);
    rewriter.replaceOpWithNewOp<spirv::SelectOp>(op, takeB, b, a);
    return success();
  }
};

/// A bf16 constant as the integer of its bits.
struct BF16ConstantLowering : OpConversionPattern<arith::ConstantOp> {
  BF16ConstantLowering(const TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(arith::ConstantOp constant, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto value = dyn_cast<FloatAttr>(constant.getValue());
    if (!value || !value.getType().isBF16())
      return rewriter.notifyMatchFailure(constant, "scalar bf16 only");
    Type i16 = rewriter.getI16Type();
    rewriter.replaceOpWithNewOp<spirv::ConstantOp>(
        constant, i16,
        rewriter.getIntegerAttr(i16, value.getValue().bitcastToAPInt()));
    return success();
  }
};

/// llvm.intr.assume is a hint SPIR-V has no use for.
struct AssumeLowering : OpConversionPattern<LLVM::AssumeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LLVM::AssumeOp assume, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.eraseOp(assume);
    return success();
  }
};

/// A workgroup memref.global: a Workgroup variable.
struct GlobalLowering : OpConversionPattern<memref::GlobalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::GlobalOp global, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(global.getType());
    auto pointer = dyn_cast_or_null<spirv::PointerType>(type);
    if (!pointer ||
        pointer.getStorageClass() != spirv::StorageClass::Workgroup ||
        global.getInitialValue())
      return rewriter.notifyMatchFailure(global,
                                         "uninitialised workgroup memory only");
    rewriter.replaceOpWithNewOp<spirv::GlobalVariableOp>(
        global, TypeAttr::get(type), global.getSymNameAttr(),
        FlatSymbolRefAttr());
    return success();
  }
};

struct GetGlobalLowering : OpConversionPattern<memref::GetGlobalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::GetGlobalOp get, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(get.getType());
    if (!type)
      return rewriter.notifyMatchFailure(get, "unsupported memref");
    rewriter.replaceOpWithNewOp<spirv::AddressOfOp>(get, type,
                                                    get.getNameAttr());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Guards each scf.for with results that may run no trip by an scf.if
/// that returns the loop's inits instead. MLIR 22's scf.for to SPIR-V
/// returns a loop's results through variables only its body stores, so a
/// loop that runs no trip returns undefined values (llvm-project issue
/// 211981, fixed upstream after 22 by pull request 206280); scf.if stores
/// its results in both branches.
void guardZeroTripLoops(Operation *root) {
  SmallVector<scf::ForOp> loops;
  root->walk([&](scf::ForOp loop) {
    std::optional<APInt> trips = loop.getStaticTripCount();
    if (loop.getNumResults() != 0 && !(trips && !trips->isZero()))
      loops.push_back(loop);
  });
  for (scf::ForOp loop : loops) {
    OpBuilder b(loop);
    tk::guardByFirstTrip(b, loop);
  }
}

struct ConvertToSPIRVPass
    : PassWrapper<ConvertToSPIRVPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConvertToSPIRVPass)

  ConvertToSPIRVPass(std::string entry, int64_t threadsPerBlock,
                     DeviceFeatures features, KernelInterface *interface)
      : entry(std::move(entry)), threadsPerBlock(threadsPerBlock),
        features(features), interface(interface) {}

  StringRef getArgument() const override {
    return "tk-vulkan-convert-to-spirv";
  }

  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<spirv::SPIRVDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func) {
      module.emitError("tk-vulkan: no function '") << entry << "' to convert";
      return signalPassFailure();
    }
    for (Operation &op : module.getBody()->getOperations())
      if (isa<func::FuncOp, LLVM::LLVMFuncOp>(op) && &op != func.getOperation())
        if (!cast<SymbolOpInterface>(op).isDeclaration() ||
            !isa<LLVM::LLVMFuncOp>(op)) {
          op.emitError("tk-vulkan: a module converts one kernel and nothing "
                       "else");
          return signalPassFailure();
        }
    spirv::TargetEnvAttr environment =
        targetEnvironment(context, features, threadsPerBlock);

    // The spirv.module that receives the kernel and its workgroup memory.
    OpBuilder b(context);
    b.setInsertionPointToStart(module.getBody());
    auto spirvModule = spirv::ModuleOp::create(
        b, module.getLoc(), spirv::AddressingModel::PhysicalStorageBuffer64,
        spirv::MemoryModel::GLSL450);
    spirvModule->setAttr(spirv::getTargetEnvAttrName(), environment);
    Block *body = spirvModule.getBody();
    for (Operation &op :
         llvm::make_early_inc_range(module.getBody()->getOperations()))
      if (isa<memref::GlobalOp>(op) || &op == func.getOperation()) {
        op.remove();
        body->push_back(&op);
      }
    if (failed(readArgumentsFromPushConstants(func, body)))
      return signalPassFailure();
    func->setAttr(spirv::getEntryPointABIAttrName(),
                  spirv::getEntryPointABIAttr(context,
                                              {int32_t(threadsPerBlock), 1, 1},
                                              int(features.subgroupSize)));
    interface->sharedMemoryBytes = 0;
    for (auto global : body->getOps<memref::GlobalOp>()) {
      MemRefType type = global.getType();
      interface->sharedMemoryBytes +=
          type.getNumElements() * byteSize(type.getElementType());
    }

    // bf16 conversions as integer arithmetic on the 16 bits (what is left
    // of bf16 after arith-emulate-unsupported-floats: loads, stores,
    // extf and truncf).
    {
      RewritePatternSet expand(context);
      arith::populateExpandBFloat16Patterns(expand);
      if (failed(applyPatternsGreedily(spirvModule, std::move(expand))))
        return signalPassFailure();
    }

    // GLSL.std.450 has no erf: MLIR's polynomial approximations write erf
    // and erfc in the arith and math ops it has.
    {
      RewritePatternSet approximations(context);
      populatePolynomialApproximateErfPattern(approximations);
      populatePolynomialApproximateErfcPattern(approximations);
      if (failed(applyPatternsGreedily(spirvModule, std::move(approximations))))
        return signalPassFailure();
    }
    // GLSL.std.450's Sin and Cos promise no accuracy, and NVIDIA's miss the
    // conformance bound near their zeros: tk's own, on every device.
    expandAccurateSinCos(spirvModule);

    // memref spaces as storage classes, then one conversion of everything.
    spirv::MemorySpaceToStorageClassConverter spaces(storageClassOf);
    spirv::convertMemRefTypesAndAttrs(spirvModule, spaces);

    SPIRVConversionOptions options;
    options.emulateLT32BitScalarTypes = false;
    // bf16 values are kept as i16.
    options.emulateUnsupportedFloatTypes = true;
    SPIRVTypeConverter converter(environment, options);
    // bf16 values are their 16 bits (SPIR-V has no bf16 type).
    converter.addConversion([](BFloat16Type type) -> Type {
      return IntegerType::get(type.getContext(), 16);
    });
    // So do vectors of bf16: with bf16 cooperative matrices the environment
    // has SPV_KHR_bfloat16's type, which upstream would keep in vectors.
    converter.addConversion([&](VectorType type) -> std::optional<Type> {
      if (!type.getElementType().isBF16())
        return std::nullopt;
      return converter.convertType(
          type.clone(IntegerType::get(type.getContext(), 16)));
    });
    // Workgroup buffers of bf16 hold the 16 bits too (upstream's memref
    // conversion does not consult the bf16 rule above).
    converter.addConversion([&](MemRefType type) -> std::optional<Type> {
      if (!type.getElementType().isBF16())
        return std::nullopt;
      return converter.convertType(
          type.clone(IntegerType::get(type.getContext(), 16)));
    });
    converter.addConversion([](LLVM::LLVMPointerType type) -> Type {
      return IntegerType::get(type.getContext(), 64);
    });
    converter.addConversion([&](LLVM::LLVMStructType type) -> Type {
      SmallVector<Type> members;
      for (Type member : type.getBody()) {
        Type converted = converter.convertType(member);
        if (!converted)
          return nullptr;
        members.push_back(converted);
      }
      return spirv::StructType::get(members);
    });
    guardZeroTripLoops(spirvModule);
    std::unique_ptr<ConversionTarget> target =
        SPIRVConversionTarget::get(environment);
    target->addIllegalDialect<warp::TkwDialect>();
    RewritePatternSet patterns(context);
    ScfToSPIRVContext scfContext;
    arith::populateArithToSPIRVPatterns(converter, patterns);
    populateMathToSPIRVPatterns(converter, patterns);
    populateSCFToSPIRVPatterns(converter, scfContext, patterns);
    populateGPUToSPIRVPatterns(converter, patterns);
    // Cooperative-matrix tiles' matrices (tk-convert-registers-to-simt's
    // !tkw.matrix) as KHR cooperative matrices.
    if (!features.cooperativeMatrix.empty())
      populateCooperativeMatrixToSPIRVPatterns(converter, patterns);
    // A cooperative-matrix dot's operands are packed into 16-byte words
    // (getCooperativeOperandWords): vector.from_elements and bitcasts.
    populateVectorToSPIRVPatterns(converter, patterns);
    populateMemRefToSPIRVPatterns(converter, patterns);
    populateFuncToSPIRVPatterns(converter, patterns);
    populateBuiltinFuncToSPIRVPatterns(converter, patterns);
    ub::populateUBToSPIRVConversionPatterns(converter, patterns);
    index::populateIndexToSPIRVPatterns(converter, patterns);
    patterns
        .add<GEPLowering, LoadLowering, StoreLowering, AtomicRMWLowering,
             CmpXchgLowering, ExtractValueLowering, ExtractElementLowering,
             InsertElementLowering, PoisonLowering,
             AddressCastLowering<LLVM::IntToPtrOp>,
             AddressCastLowering<LLVM::PtrToIntOp>, ZeroLowering,
             AssumeLowering, GlobalLowering, GetGlobalLowering, ExtSILowering,
             BF16ConstantLowering, GLLowering<math::Exp2Op, spirv::GLExp2Op>,
             GLLowering<math::Log2Op, spirv::GLLog2Op>,
             NumberMinMaxLowering<arith::MaxNumFOp, /*isMax=*/true>,
             NumberMinMaxLowering<arith::MinNumFOp, /*isMax=*/false>>(converter,
                                                                      context);
    if (failed(applyPartialConversion(spirvModule, *target,
                                      std::move(patterns)))) {
      spirvModule.emitError("tk-vulkan: the kernel holds an operation "
                            "without a SPIR-V form (see above)");
      return signalPassFailure();
    }
    // The casts between addresses and pointers fold away in pairs; one that
    // stays is a value of a type SPIR-V cannot hold.
    SmallVector<UnrealizedConversionCastOp> casts, remaining;
    spirvModule.walk(
        [&](UnrealizedConversionCastOp cast) { casts.push_back(cast); });
    reconcileUnrealizedCasts(casts, &remaining);
    if (!remaining.empty()) {
      remaining.front().emitError("tk-vulkan: a value of type ")
          << remaining.front().getOperand(0).getType()
          << " has no SPIR-V form here";
      return signalPassFailure();
    }
    // Whatever is left outside (declarations such as printf's) goes.
    for (Operation &op :
         llvm::make_early_inc_range(module.getBody()->getOperations()))
      if (&op != spirvModule.getOperation())
        op.erase();
  }

  /// Replaces the kernel's arguments with loads from one argument block,
  /// recording its layout in `interface`: the push constants where the
  /// block fits kGuaranteedPushConstantBytes, otherwise a buffer whose
  /// address is the one push constant (each launch writes the block there).
  LogicalResult readArgumentsFromPushConstants(func::FuncOp func, Block *body) {
    MLIRContext *context = func.getContext();
    OpBuilder b(context);
    Location loc = func.getLoc();
    SmallVector<Type> members;
    SmallVector<spirv::StructType::OffsetInfo> offsets;
    uint32_t offset = 0;
    interface->argOffsets.clear();
    for (BlockArgument argument : func.getArguments()) {
      Type type = argument.getType();
      Type member;
      if (isa<LLVM::LLVMPointerType>(type))
        member = b.getI64Type();
      else if (type.isInteger(32) || type.isInteger(64) || type.isF32() ||
               type.isF64())
        member = type;
      else
        return func.emitError("tk-vulkan: argument ")
               << argument.getArgNumber() << " of type " << type
               << " cannot be passed as a kernel argument";
      uint32_t size = byteSize(member);
      offset = llvm::alignTo(offset, size);
      interface->argOffsets.push_back(offset);
      members.push_back(member);
      offsets.push_back(offset);
      offset += size;
    }
    uint32_t blockBytes = llvm::alignTo(offset, 4);
    bool inBuffer = blockBytes > kGuaranteedPushConstantBytes;
    interface->pushConstantBytes = inBuffer ? 8 : blockBytes;
    interface->argumentBufferBytes = inBuffer ? blockBytes : 0;
    if (members.empty())
      return success();

    auto blockDecoration = spirv::StructType::StructDecorationInfo(
        spirv::Decoration::Block, UnitAttr::get(context));
    auto block =
        spirv::StructType::get(members, offsets, {}, {blockDecoration});
    // What the push constants hold: the block, or the buffer's address.
    auto pushed = inBuffer ? spirv::StructType::get({b.getI64Type()}, {0}, {},
                                                    {blockDecoration})
                           : block;
    auto pushedPointer =
        spirv::PointerType::get(pushed, spirv::StorageClass::PushConstant);
    b.setInsertionPointToStart(body);
    spirv::GlobalVariableOp::create(b, loc, TypeAttr::get(pushedPointer),
                                    b.getStringAttr(kArgumentsVariable),
                                    FlatSymbolRefAttr());
    Block &entryBlock = func.getBody().front();
    b.setInsertionPointToStart(&entryBlock);
    auto index = [&](int64_t i) -> Value {
      return spirv::ConstantOp::create(b, loc, b.getI32Type(),
                                       b.getI32IntegerAttr(i));
    };
    Value base =
        spirv::AddressOfOp::create(b, loc, pushedPointer, kArgumentsVariable);
    spirv::StorageClass storage = spirv::StorageClass::PushConstant;
    if (inBuffer) {
      Value field = spirv::AccessChainOp::create(
          b, loc,
          spirv::PointerType::get(b.getI64Type(),
                                  spirv::StorageClass::PushConstant),
          base, ValueRange{index(0)});
      Value address =
          spirv::LoadOp::create(b, loc, b.getI64Type(), field,
                                spirv::MemoryAccessAttr(), IntegerAttr());
      storage = spirv::StorageClass::PhysicalStorageBuffer;
      base = spirv::ConvertUToPtrOp::create(
          b, loc, spirv::PointerType::get(block, storage), address);
    }
    for (auto [i, argument] : llvm::enumerate(func.getArguments())) {
      Value field = spirv::AccessChainOp::create(
          b, loc, spirv::PointerType::get(members[i], storage), base,
          ValueRange{index(i)});
      // Vulkan requires a physical-storage access to say its alignment;
      // each member sits at its natural one.
      Value value = inBuffer ? spirv::LoadOp::create(
                                   b, loc, members[i], field,
                                   spirv::MemoryAccessAttr::get(
                                       context, spirv::MemoryAccess::Aligned),
                                   b.getI32IntegerAttr(byteSize(members[i])))
                             : spirv::LoadOp::create(b, loc, members[i], field,
                                                     spirv::MemoryAccessAttr(),
                                                     IntegerAttr());
      if (value.getType() != argument.getType())
        value = UnrealizedConversionCastOp::create(b, loc, argument.getType(),
                                                   value)
                    .getResult(0);
      argument.replaceAllUsesWith(value);
    }
    llvm::BitVector all(func.getNumArguments(), true);
    if (failed(func.eraseArguments(all)))
      return failure();
    return success();
  }

  std::string entry;
  int64_t threadsPerBlock;
  DeviceFeatures features;
  KernelInterface *interface;
};

} // namespace

std::unique_ptr<Pass> createConvertToSPIRVPass(std::string entry,
                                               int64_t threadsPerBlock,
                                               DeviceFeatures features,
                                               KernelInterface *interface) {
  return std::make_unique<ConvertToSPIRVPass>(std::move(entry), threadsPerBlock,
                                              features, interface);
}

} // namespace tk::vulkan
