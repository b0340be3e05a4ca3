//===- Builder.h - Triton-style C++ builder for tk kernels ------*- C++ -*-===//
//
// Writes tk kernels from C++ the way Triton writes them from Python: values
// are `Tile`s with arithmetic operators, numpy broadcasting, masked loads and
// stores, reductions and loops. Misuse never throws or aborts: the builder
// records the first error and `finish()` returns failure with its message.
//
//===----------------------------------------------------------------------===//

#ifndef TK_IR_BUILDER_H_
#define TK_IR_BUILDER_H_

#include "tk/ir/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace tk {

class KernelBuilder;
class Operand;

//===----------------------------------------------------------------------===//
// Tile
//===----------------------------------------------------------------------===//

/// A value of a kernel under construction: a scalar, a tile
/// (`tensor<128xf32>`), a pointer, a pointer tile or a block pointer. A Tile
/// is a handle (a builder and an `mlir::Value`), cheap to copy. A
/// default-constructed Tile, or one returned by a call that failed, is
/// *empty*: every operation on it is a no-op that yields another empty Tile.
///
/// Operators build ops through the Tile's builder. C++ leaves the order in
/// which the two operands of `a + b` (or the arguments of a call) are
/// evaluated unspecified, so where the order of the generated ops matters
/// (golden text), build each operand that creates ops in its own statement.
class Tile {
public:
  Tile() = default;
  Tile(KernelBuilder *builder, mlir::Value value)
      : builder_(builder), value_(value) {}

  /// False for an empty Tile. (`!tile` is the logical not of a tile.)
  bool valid() const { return builder_ && value_; }
  KernelBuilder *builder() const { return builder_; }
  mlir::Value value() const { return value_; }
  /// The MLIR type: `f32`, `tensor<64x32xf16>`, `!tk.ptr<f32>`, ...
  mlir::Type type() const;
  /// The element type of a tile, or the type of a scalar (a pointer type
  /// for pointers and pointer tiles).
  mlir::Type dtype() const;
  /// The shape of a tile; empty for scalars and block pointers.
  llvm::ArrayRef<int64_t> shape() const;
  int64_t rank() const { return static_cast<int64_t>(shape().size()); }

  bool isTile() const;
  bool isScalar() const { return valid() && !isTile(); }
  bool isFloat() const;
  bool isInt() const;
  bool isBool() const;
  /// A pointer or a tile of pointers (not a block pointer).
  bool isPointer() const;
  bool isBlockPointer() const;

  /// `x[:, None]`: a size-1 dimension inserted at axis 1.
  Tile col() const;
  /// `x[None, :]`: a size-1 dimension inserted at axis 0.
  Tile row() const;
  /// `x.to(dtype)`: KernelBuilder::cast.
  Tile to(mlir::Type dtype) const;
  /// The transpose of a 2-D tile.
  Tile trans() const;
  /// Attaches `name` to the value (as a NameLoc) so that printing with
  /// `OpPrintingFlags::printNameLocAsPrefix` shows `%name`; returns *this.
  Tile named(llvm::StringRef name) const;

  Tile &operator+=(const Operand &rhs);
  Tile &operator-=(const Operand &rhs);
  Tile &operator*=(const Operand &rhs);
  Tile &operator/=(const Operand &rhs);
  Tile &operator%=(const Operand &rhs);
  Tile &operator&=(const Operand &rhs);
  Tile &operator|=(const Operand &rhs);
  Tile &operator^=(const Operand &rhs);

private:
  KernelBuilder *builder_ = nullptr;
  mlir::Value value_;
};

//===----------------------------------------------------------------------===//
// Operand
//===----------------------------------------------------------------------===//

/// An operand of an operator or of a builder call: a Tile or a C++ number.
/// As in Triton, a number takes the dtype of the tile it meets (`x * 2` with
/// an f16 `x` multiplies by an f16 constant; `ptr + 4` offsets by an i32);
/// a floating-point number never meets an integer tile silently.
class Operand {
public:
  Operand(const Tile &tile) : kind_(Kind::Tile), tile_(tile) {}
  template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  Operand(T value) : kind_(Kind::Int), int_(static_cast<int64_t>(value)) {}
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Operand(T value) : kind_(Kind::Float), float_(static_cast<double>(value)) {}

  bool isTile() const { return kind_ == Kind::Tile; }
  bool isIntLiteral() const { return kind_ == Kind::Int; }
  bool isFloatLiteral() const { return kind_ == Kind::Float; }
  const Tile &tile() const { return tile_; }
  int64_t intValue() const { return int_; }
  /// The literal as a double (integers converted).
  double floatValue() const {
    return kind_ == Kind::Int ? static_cast<double>(int_) : float_;
  }
  /// The builder of the tile, or null for a number.
  KernelBuilder *builder() const { return tile_.builder(); }

private:
  enum class Kind { Tile, Int, Float };
  Kind kind_;
  Tile tile_;
  int64_t int_ = 0;
  double float_ = 0.0;
};

/// Element-wise arithmetic with Triton's broadcasting; the op follows the
/// dtype (`arith.addf` / `arith.addi`, `divf` / `divsi`, `remf` / `remsi`).
/// `pointer + integer` (and `pointer - integer`) is `tk.addptr`.
Tile operator+(const Operand &lhs, const Operand &rhs);
Tile operator-(const Operand &lhs, const Operand &rhs);
Tile operator*(const Operand &lhs, const Operand &rhs);
Tile operator/(const Operand &lhs, const Operand &rhs);
Tile operator%(const Operand &lhs, const Operand &rhs);
/// Bitwise on integers, logical on i1 tiles (`arith.andi/ori/xori`).
Tile operator&(const Operand &lhs, const Operand &rhs);
Tile operator|(const Operand &lhs, const Operand &rhs);
Tile operator^(const Operand &lhs, const Operand &rhs);
/// `arith.shli` / `arith.shrsi`.
Tile operator<<(const Operand &lhs, const Operand &rhs);
Tile operator>>(const Operand &lhs, const Operand &rhs);
/// Comparisons give i1: `arith.cmpf` (ordered; `!=` is `une`) or signed
/// `arith.cmpi`.
Tile operator<(const Operand &lhs, const Operand &rhs);
Tile operator<=(const Operand &lhs, const Operand &rhs);
Tile operator>(const Operand &lhs, const Operand &rhs);
Tile operator>=(const Operand &lhs, const Operand &rhs);
Tile operator==(const Operand &lhs, const Operand &rhs);
Tile operator!=(const Operand &lhs, const Operand &rhs);
/// `arith.negf`, or `0 - x` for integers.
Tile operator-(const Tile &x);
/// Logical not: flips an i1 tile; `x == 0` for integers.
Tile operator!(const Tile &x);
/// Bitwise not of an integer tile.
Tile operator~(const Tile &x);

//===----------------------------------------------------------------------===//
// KernelBuilder
//===----------------------------------------------------------------------===//

/// Options of KernelBuilder::dot.
struct DotOptions {
  /// Whether fp32 inputs may use tf32 (`tl.dot(input_precision=...)`).
  InputPrecision inputPrecision = InputPrecision::IEEE;
  /// ML-Triton's hint on how warps split the result.
  std::optional<DotTiling> tiling;
  /// The accumulator dtype when no accumulator is given; null picks i32 for
  /// i8 inputs, f64 for f64 and f32 otherwise.
  mlir::Type accType;
};

/// Builds one `tk.func` inside a fresh module, Triton style:
///
/// ```c++
///   tk::KernelBuilder k(ctx, "vector_add");
///   tk::Tile x = k.argPtr("x", k.f32(), /*divisibility=*/16);
///   tk::Tile out = k.argPtr("out", k.f32(), 16);
///   tk::Tile n = k.argI32("n");
///   int64_t block = k.constexpr_("BLOCK", 1024);
///   tk::Tile start = k.programId(0) * block;
///   tk::Tile offs = start + k.arange(0, block);
///   tk::Tile mask = offs < n;
///   tk::Tile v = k.load(x + offs, mask);
///   k.store(out + offs, v, mask);
///   auto module = k.finish();
///   if (failed(module)) llvm::errs() << k.error();
/// ```
///
/// The first misuse (shapes that cannot broadcast, mixed dtypes, a load from
/// a non-pointer, ...) is recorded with a message; later calls do nothing and
/// return empty Tiles, and `finish()` fails with that message. `finish()`
/// also runs the MLIR verifier, so it never hands out an invalid module.
///
/// Tiles point back at their builder: a KernelBuilder cannot be copied or
/// moved, and its Tiles are dead once `finish()` has been called.
class KernelBuilder {
public:
  /// Starts kernel `name`; loads tk, arith, math and scf into `ctx`.
  KernelBuilder(mlir::MLIRContext *ctx, llvm::StringRef name);
  ~KernelBuilder();
  KernelBuilder(const KernelBuilder &) = delete;
  KernelBuilder &operator=(const KernelBuilder &) = delete;

  mlir::MLIRContext *getContext() const { return ctx_; }

  //===--------------------------------------------------------------------===//
  // Types
  //===--------------------------------------------------------------------===//

  mlir::Type i1() const;
  mlir::Type i8() const;
  mlir::Type i16() const;
  mlir::Type i32() const;
  mlir::Type i64() const;
  mlir::Type f16() const;
  mlir::Type bf16() const;
  mlir::Type f32() const;
  mlir::Type f64() const;
  mlir::Type f8e4m3() const;
  mlir::Type f8e5m2() const;
  /// `!tk.ptr<pointee>`.
  mlir::Type ptrTo(mlir::Type pointee) const;
  /// `tensor<shape x dtype>`.
  mlir::RankedTensorType tileOf(llvm::ArrayRef<int64_t> shape,
                                mlir::Type dtype) const;

  //===--------------------------------------------------------------------===//
  // Arguments and constexprs
  //===--------------------------------------------------------------------===//

  /// Appends a kernel argument named `name` (recorded in `tk.arg_names`). A
  /// nonzero `divisibility` becomes the `tk.divisibility` argument attribute.
  Tile arg(llvm::StringRef name, mlir::Type type, unsigned divisibility = 0);
  /// A `!tk.ptr<pointee>` argument.
  Tile argPtr(llvm::StringRef name, mlir::Type pointee,
              unsigned divisibility = 0);
  Tile argI32(llvm::StringRef name, unsigned divisibility = 0);
  Tile argI64(llvm::StringRef name, unsigned divisibility = 0);
  Tile argF32(llvm::StringRef name);

  /// Records constexpr `name` in `tk.constexprs` (as i32 when it fits, else
  /// i64) and returns `value` for use in the body.
  int64_t constexpr_(llvm::StringRef name, int64_t value);
  double constexprFloat(llvm::StringRef name, double value);
  bool constexprBool(llvm::StringRef name, bool value);

  //===--------------------------------------------------------------------===//
  // Grid, ranges and constants
  //===--------------------------------------------------------------------===//

  /// `tl.program_id(axis)`.
  Tile programId(int axis);
  /// `tl.num_programs(axis)`.
  Tile numPrograms(int axis);
  /// `tl.arange(start, end)`: an i32 tile; `end - start` a power of two.
  Tile arange(int32_t start, int32_t end);
  /// A scalar constant of `dtype` (`value` may also be a scalar Tile, cast).
  Tile constant(const Operand &value, mlir::Type dtype);
  /// `tl.full(shape, value, dtype)`; a scalar when `shape` is empty.
  Tile full(llvm::ArrayRef<int64_t> shape, const Operand &value,
            mlir::Type dtype);
  /// `tl.zeros(shape, dtype)`.
  Tile zeros(llvm::ArrayRef<int64_t> shape, mlir::Type dtype);

  //===--------------------------------------------------------------------===//
  // Shape ops
  //===--------------------------------------------------------------------===//

  /// A tile of `shape` filled with the scalar `x` (`tk.splat`).
  Tile splat(const Tile &x, llvm::ArrayRef<int64_t> shape);
  /// numpy broadcasting of `x` to `shape` (splat, expand_dims, broadcast).
  Tile broadcastTo(const Tile &x, llvm::ArrayRef<int64_t> shape);
  /// Inserts a size-1 dimension at `axis` (`x[:, None]` is axis 1).
  Tile expandDims(const Tile &x, int axis);
  Tile reshape(const Tile &x, llvm::ArrayRef<int64_t> shape);
  /// Permutes dimensions; an empty `order` reverses them.
  Tile trans(const Tile &x, llvm::ArrayRef<int32_t> order = {});
  /// Concatenates along dimension 0.
  Tile cat(const Tile &a, const Tile &b);
  /// Stacks along a new minor dimension of size 2.
  Tile join(const Tile &a, const Tile &b);

  //===--------------------------------------------------------------------===//
  // Element-wise arithmetic and math
  //===--------------------------------------------------------------------===//

  /// The operators, as named calls.
  Tile add(const Operand &lhs, const Operand &rhs);
  Tile sub(const Operand &lhs, const Operand &rhs);
  Tile mul(const Operand &lhs, const Operand &rhs);
  Tile div(const Operand &lhs, const Operand &rhs);
  /// `arith.divf` with `fastmath<afn>`: backends may divide approximately
  /// (CUDA: `div.approx.f32`, 2 ulp for divisors of magnitude up to 2^126),
  /// as Triton's `/` on f32 does (`div.full.f32`). For scaling by a sum
  /// (softmax's denominator). Float operands only.
  Tile fastDiv(const Operand &lhs, const Operand &rhs);
  Tile rem(const Operand &lhs, const Operand &rhs);
  Tile bitAnd(const Operand &lhs, const Operand &rhs);
  Tile bitOr(const Operand &lhs, const Operand &rhs);
  Tile bitXor(const Operand &lhs, const Operand &rhs);
  Tile shl(const Operand &lhs, const Operand &rhs);
  Tile shr(const Operand &lhs, const Operand &rhs);
  Tile lt(const Operand &lhs, const Operand &rhs);
  Tile le(const Operand &lhs, const Operand &rhs);
  Tile gt(const Operand &lhs, const Operand &rhs);
  Tile ge(const Operand &lhs, const Operand &rhs);
  Tile eq(const Operand &lhs, const Operand &rhs);
  Tile ne(const Operand &lhs, const Operand &rhs);
  Tile neg(const Tile &x);
  Tile logicalNot(const Tile &x);
  Tile bitNot(const Tile &x);

  /// `tl.maximum` / `tl.minimum`: `arith.maxnumf`/`minnumf` (NaN loses, as
  /// Triton's default), `arith.maxsi`/`minsi` on integers.
  Tile maximum(const Operand &lhs, const Operand &rhs);
  Tile minimum(const Operand &lhs, const Operand &rhs);
  /// `tl.cdiv`: `(a + b - 1) / b` on integers.
  Tile cdiv(const Operand &a, const Operand &b);
  /// `tl.where`: `arith.select` after broadcasting all three.
  Tile where(const Tile &cond, const Operand &a, const Operand &b);
  /// `tl.fma`: `math.fma` (a * b + c, rounded once) after broadcasting all
  /// three; float tiles of one dtype.
  Tile fma(const Tile &a, const Operand &b, const Operand &c);
  /// Whether the float additions, subtractions and multiplications built
  /// from here on carry `fastmath<contract>`: a product and the sum it feeds
  /// may then round once, as one fused multiply-add (Triton's
  /// `enable_fp_fusion`, nvcc's `--fmad=true`). Off by default: without it
  /// every op rounds on its own, as MLIR's arith says.
  void setFloatContraction(bool allowed) { contractFloats_ = allowed; }

  /// `math` dialect functions of float tiles.
  Tile exp(const Tile &x);
  Tile exp2(const Tile &x);
  /// `math.exp` with `fastmath<afn>`: backends may use the hardware's
  /// approximation (CUDA: a multiplication by log2(e) and `ex2.approx.f32`),
  /// as Triton's `tl.exp` does.
  Tile fastExp(const Tile &x);
  /// `math.exp2` with `fastmath<afn>`: backends may use the hardware's
  /// approximation (CUDA: `ex2.approx.ftz.f32`, 2 ulp, subnormal results
  /// flushed to zero), as Triton's `tl.exp2` does. For exponentials whose
  /// results are only summed and scaled (softmax, attention).
  Tile fastExp2(const Tile &x);
  Tile log(const Tile &x);
  Tile log2(const Tile &x);
  Tile sqrt(const Tile &x);
  Tile rsqrt(const Tile &x);
  Tile sin(const Tile &x);
  Tile cos(const Tile &x);
  Tile tanh(const Tile &x);
  Tile erf(const Tile &x);
  Tile floor(const Tile &x);
  Tile ceil(const Tile &x);
  /// `math.absf` or `math.absi`.
  Tile abs(const Tile &x);

  /// Converts to element type `dtype` (a tile type's element type is used):
  /// extsi/trunci (extui from i1), sitofp (uitofp from i1), fptosi
  /// (`x != 0` to i1), extf/truncf (through f32 between f16 and bf16), and
  /// `tk.fp_to_fp` (rtne) when an fp8 type is involved.
  Tile cast(const Tile &x, mlir::Type dtype);
  /// Reinterprets the bits (`arith.bitcast`); widths must match.
  Tile bitcast(const Tile &x, mlir::Type dtype);
  /// `tk.fp_to_fp`; narrowing without a rounding mode rounds to nearest even.
  Tile fpToFp(const Tile &x, mlir::Type dtype,
              std::optional<RoundingMode> rounding = std::nullopt);

  //===--------------------------------------------------------------------===//
  // Memory
  //===--------------------------------------------------------------------===//

  /// `tl.load(ptr, mask, other)`: the mask broadcasts with the pointers;
  /// `other` (a number or a tile of the pointee dtype) fills masked lanes.
  Tile load(const Tile &ptr, const Tile &mask = Tile(),
            std::optional<Operand> other = std::nullopt);
  /// `tl.store(ptr, value, mask)`: the value (a number or a tile of the
  /// pointee dtype) and the mask broadcast to the pointers' shape.
  void store(const Tile &ptr, const Operand &value, const Tile &mask = Tile());

  /// `tl.make_block_ptr(base, shape, strides, offsets, block_shape, order)`.
  /// Shape and strides become i64, offsets i32; numbers are allowed.
  Tile makeBlockPtr(const Tile &base, llvm::ArrayRef<Operand> shape,
                    llvm::ArrayRef<Operand> strides,
                    llvm::ArrayRef<Operand> offsets,
                    llvm::ArrayRef<int64_t> blockShape,
                    llvm::ArrayRef<int32_t> order);
  /// `tl.advance(blockPtr, offsets)`.
  Tile advance(const Tile &blockPtr, llvm::ArrayRef<Operand> offsets);
  /// `tl.load(blockPtr, boundary_check, padding_option)`.
  Tile loadBlock(const Tile &blockPtr,
                 llvm::ArrayRef<int32_t> boundaryCheck = {},
                 std::optional<PaddingOption> padding = std::nullopt);
  /// `tl.store(blockPtr, value, boundary_check)`.
  void storeBlock(const Tile &blockPtr, const Operand &value,
                  llvm::ArrayRef<int32_t> boundaryCheck = {});

  /// `tl.atomic_*`: returns the old values. The value and the mask broadcast
  /// to the pointers' shape.
  Tile atomicRMW(AtomicRMWKind kind, const Tile &ptr, const Operand &value,
                 const Tile &mask = Tile(),
                 MemSemantic sem = MemSemantic::AcqRel);
  /// `add` or `fadd` after the dtype.
  Tile atomicAdd(const Tile &ptr, const Operand &value,
                 const Tile &mask = Tile(),
                 MemSemantic sem = MemSemantic::AcqRel);
  Tile atomicCAS(const Tile &ptr, const Operand &cmp, const Operand &value,
                 MemSemantic sem = MemSemantic::AcqRel);

  //===--------------------------------------------------------------------===//
  // Dot, reductions, scans
  //===--------------------------------------------------------------------===//

  /// `tl.dot(a, b, acc)`: MxK times KxN plus the MxN accumulator (zeros of
  /// `options.accType` when `acc` is empty).
  Tile dot(const Tile &a, const Tile &b, const Tile &acc = Tile(),
           const DotOptions &options = DotOptions());

  /// Builds a combine step from (accumulated, new) scalars; runs inside the
  /// combiner region, so it may use any element-wise operation.
  using Combiner = llvm::function_ref<Tile(Tile acc, Tile next)>;
  /// The same for several sources reduced together (argmax: value, index).
  using MultiCombiner = llvm::function_ref<llvm::SmallVector<Tile>(
      llvm::ArrayRef<Tile> acc, llvm::ArrayRef<Tile> next)>;

  /// `tl.reduce(x, axis, combine)`; reducing a 1-D tile gives a scalar.
  Tile reduce(const Tile &x, int axis, Combiner combine);
  llvm::SmallVector<Tile> reduce(llvm::ArrayRef<Tile> srcs, int axis,
                                 MultiCombiner combine);
  /// `tl.sum` (integers narrower than 32 bits are summed as i32, floats
  /// narrower than 32 bits as f32: the result has that type), `tl.max`,
  /// `tl.min`. `keepDims` keeps the reduced axis with size 1.
  Tile sum(const Tile &x, int axis, bool keepDims = false);
  Tile max(const Tile &x, int axis, bool keepDims = false);
  Tile min(const Tile &x, int axis, bool keepDims = false);
  /// `tl.max(x, axis, return_indices=True)`: the maximum and its i32 index;
  /// ties go to the lowest index.
  std::pair<Tile, Tile> argmax(const Tile &x, int axis);
  std::pair<Tile, Tile> argmin(const Tile &x, int axis);

  /// `tl.associative_scan(x, axis, combine, reverse)` (inclusive).
  Tile scan(const Tile &x, int axis, Combiner combine, bool reverse = false);
  llvm::SmallVector<Tile> scan(llvm::ArrayRef<Tile> srcs, int axis,
                               MultiCombiner combine, bool reverse = false);
  /// `tl.cumsum` / `tl.cumprod`, accumulated as sum is (narrow integers as
  /// i32, narrow floats as f32).
  Tile cumsum(const Tile &x, int axis, bool reverse = false);
  Tile cumprod(const Tile &x, int axis, bool reverse = false);

  //===--------------------------------------------------------------------===//
  // Control flow and debugging
  //===--------------------------------------------------------------------===//

  /// The body of a loop: receives the induction variable and the carried
  /// values, returns the carried values of the next iteration.
  using LoopBody = llvm::function_ref<llvm::SmallVector<Tile>(
      Tile iv, llvm::ArrayRef<Tile> carried)>;

  /// `for iv in range(lb, ub, step)` as `scf.for` carrying `initArgs`;
  /// returns the final carried values. Bounds are i32 (i64 when one is).
  llvm::SmallVector<Tile> forLoop(const Operand &lb, const Operand &ub,
                                  const Operand &step,
                                  llvm::ArrayRef<Tile> initArgs, LoopBody body);
  /// A loop that carries nothing.
  void forLoop(const Operand &lb, const Operand &ub, const Operand &step,
               llvm::function_ref<void(Tile iv)> body);
  /// `if cond:` on a scalar i1, as `scf.if` without results.
  void ifThen(const Tile &cond, llvm::function_ref<void()> body);

  /// `tl.device_assert(cond, message)`.
  void deviceAssert(const Tile &cond, llvm::StringRef message);
  /// `tl.device_print(prefix, args...)`.
  void print(llvm::StringRef prefix, llvm::ArrayRef<Tile> args = {});

  //===--------------------------------------------------------------------===//
  // Errors and the result
  //===--------------------------------------------------------------------===//

  /// True while no error was recorded and finish() was not called.
  bool ok() const { return error_.empty() && !finished_; }
  /// The first error (a builder misuse or the verifier's diagnostics), or
  /// empty.
  llvm::StringRef error() const { return error_; }
  /// Records `message` unless an error is already recorded; later calls
  /// become no-ops.
  void emitError(const llvm::Twine &message);

  /// Adds `tk.return`, the argument and kernel attributes, and verifies.
  /// Fails with the recorded error or the verifier's diagnostics (both in
  /// `error()`); on success hands out the module holding the kernel. Call it
  /// once.
  mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>> finish();

  //===--------------------------------------------------------------------===//
  // Escape hatches
  //===--------------------------------------------------------------------===//

  /// The location given to new ops (unknown by default).
  void setLocation(mlir::Location loc) { loc_ = loc; }
  mlir::Location getLocation() const { return loc_; }
  /// The OpBuilder, positioned where the next op goes, for ops the builder
  /// does not wrap.
  mlir::OpBuilder &getOpBuilder() { return b_; }
  /// The kernel being built.
  FuncOp getFunc() const { return func_; }
  /// Wraps a value built through getOpBuilder().
  Tile wrap(mlir::Value value) { return Tile(this, value); }

private:
  enum class BinaryOp : int;

  Tile binary(BinaryOp op, const Operand &lhs, const Operand &rhs);
  Tile unaryMath(llvm::StringRef what, const Tile &x,
                 mlir::Value (*create)(mlir::OpBuilder &, mlir::Location,
                                       mlir::Value));
  /// Checks that `x` is a non-empty Tile of this builder.
  bool check(const Tile &x, llvm::StringRef what);
  /// Resolves `op` next to the Tile `like`: a Tile is returned as is, a
  /// number becomes a constant of `like`'s dtype (i32 beside pointers) and
  /// shape.
  Tile resolve(const Operand &op, const Tile &like, llvm::StringRef what);
  /// A constant holding the number `op`, of type `type` (scalar or tile).
  Tile literal(const Operand &op, mlir::Type type, llvm::StringRef what);
  /// Brings `a` and `b` to one shape (numpy rules).
  bool broadcastPair(Tile &a, Tile &b, llvm::StringRef what);
  Tile broadcastImpl(const Tile &x, llvm::ArrayRef<int64_t> shape,
                     llvm::StringRef what);
  /// Brings a bound or index to integer scalar `type` (i32 or i64).
  Tile toIndex(const Operand &op, mlir::Type type, llvm::StringRef what);
  Tile reduceWith(const Tile &x, int axis, bool keepDims, llvm::StringRef what,
                  Combiner combine);
  std::pair<Tile, Tile> argReduce(const Tile &x, int axis, bool isMax);
  /// What sum and cumsum accumulate `x` in: i32 for narrower integers, f32
  /// for narrower floats, `x` itself otherwise.
  Tile widenForSum(const Tile &x);
  Tile wrapResult(mlir::Operation *op) { return Tile(this, op->getResult(0)); }

  mlir::MLIRContext *ctx_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  FuncOp func_;
  mlir::Block *entry_ = nullptr;
  mlir::OpBuilder b_;
  mlir::Location loc_;
  llvm::SmallVector<std::string> argNames_;
  llvm::SmallVector<unsigned> argDivisibility_;
  llvm::SmallVector<mlir::NamedAttribute> constexprs_;
  std::string error_;
  bool finished_ = false;
  bool contractFloats_ = false;
};

} // namespace tk

#endif // TK_IR_BUILDER_H_
