//===- LinearLayout.h - layouts as linear maps over GF(2) -------*- C++ -*-===//
//
// tk::LinearLayout maps the bits of named hardware indices (register, lane,
// warp, block; or a shared-memory offset) to the bits of named tile
// coordinates, linearly over GF(2). Every layout codegen needs is one
// (DESIGN §3): blocked memory layouts, slices, broadcasts, matrix-unit
// fragments and swizzled shared memory. One algebra (product, compose,
// invert, transpose, reshape, sublayouts) answers which hardware index holds
// an element, how many consecutive registers are contiguous, and what a
// conversion between two layouts moves.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_LAYOUT_LINEARLAYOUT_H_
#define TK_CORE_LAYOUT_LINEARLAYOUT_H_

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tk {

/// The input dimensions GPU layouts use, in order of scope: a thread's
/// registers, the lanes of a warp, the warps of a workgroup, the workgroups
/// of a cluster. Shared-memory layouts have one input dimension, `offset`.
inline constexpr llvm::StringLiteral kRegisterDim("register");
inline constexpr llvm::StringLiteral kLaneDim("lane");
inline constexpr llvm::StringLiteral kWarpDim("warp");
inline constexpr llvm::StringLiteral kBlockDim("block");
inline constexpr llvm::StringLiteral kOffsetDim("offset");

/// A linear map over GF(2) from named input dimensions to named output
/// dimensions, each a power of two in size.
///
/// Every bit of every input dimension has a basis vector: one value per
/// output dimension. The image of an input index is, per output dimension,
/// the XOR of the bases of the index's set bits. A zero basis is a
/// broadcast: the indices that differ in that bit hold the same element.
///
/// Example: mma.sync's 16 x 8 accumulator (PTX ISA, "Matrix Fragments for
/// mma.m16n8k16") is
///
///   register: [0, 1] [8, 0]
///   lane:     [0, 2] [0, 4] [1, 0] [2, 0] [4, 0]
///   -> dim0 (16), dim1 (8)
///
/// so register 3 (bits 0, 1) of lane 5 (bits 0, 2) holds row 8 ^ 1 = 9,
/// column 1 ^ 2 = 3: the PTX ISA's c3 of groupID 1, threadID_in_group 1.
///
/// Convention for flattening. Wherever dimensions are flattened into one
/// index (flat inputs and outputs, reshapeIns, reshapeOuts,
/// getNumConsecutiveInOut), the first-listed dimension takes the least
/// significant bits: it varies fastest. For a (dim0, dim1) tile stored
/// row-major, dim1 varies fastest, so list it first before flattening
/// (transposeOuts({"dim1", "dim0"})). Tile layouts built by the presets list
/// their output dimensions in the standard order dim0, dim1, ...
///
/// Limits: a dimension has at most 2^30 elements; all input dimensions
/// together, and all output dimensions together, at most 2^63.
///
/// Errors. Operations whose success depends on the layouts' contents or on
/// sizes computed from data (create, compose, invert, invertAndCompose,
/// pseudoinvert, reshapeIns, reshapeOuts, classifyConversion) return
/// llvm::Expected with a message that says what was expected. Naming a
/// dimension the layout does not have, passing an index out of range, or
/// breaking the size limits in a product or a builder is a programmer error
/// and asserts.
class LinearLayout {
public:
  /// For each input dimension, in order, one basis per bit (bit 0 first);
  /// each basis has one value per output dimension, in order.
  using BasesT =
      std::vector<std::pair<std::string, std::vector<std::vector<int32_t>>>>;
  /// Named dimension sizes, in order.
  using DimSizes = std::vector<std::pair<std::string, int32_t>>;

  /// The empty layout: no input and no output dimensions. Its only input,
  /// the empty index, maps to the empty coordinate.
  LinearLayout() = default;

  /// A layout from its bases and its output dimensions' sizes (stated, so
  /// that a layout need not reach every output). Asserts that the bases fit
  /// (one value per output dimension, each below that dimension's size,
  /// sizes powers of two, names unique); use create() for bases that come
  /// from data.
  LinearLayout(BasesT bases, DimSizes outDims);

  /// As the constructor, but says what is wrong instead of asserting.
  static llvm::Expected<LinearLayout> create(BasesT bases, DimSizes outDims);

  /// The identity from `inDim` onto `outDim`, both of `size` (a power of
  /// two).
  static LinearLayout identity1D(int32_t size, llvm::StringRef inDim,
                                 llvm::StringRef outDim);
  /// Every one of the `size` indices of `inDim` maps to 0 of `outDim`
  /// (a broadcast: all hold the same elements), `outDim` of `outDimSize`.
  static LinearLayout zeros1D(int32_t size, llvm::StringRef inDim,
                              llvm::StringRef outDim, int32_t outDimSize = 1);
  /// The empty layout.
  static LinearLayout empty() { return LinearLayout(); }

  //===--------------------------------------------------------------------===//
  // Dimensions
  //===--------------------------------------------------------------------===//

  size_t getNumInDims() const { return inputs.size(); }
  size_t getNumOutDims() const { return outputs.size(); }
  std::vector<std::string> getInDimNames() const;
  std::vector<std::string> getOutDimNames() const;
  bool hasInDim(llvm::StringRef name) const { return findIn(name) >= 0; }
  bool hasOutDim(llvm::StringRef name) const { return findOut(name) >= 0; }
  /// Sizes of a named dimension (which must exist).
  int32_t getInDimSizeLog2(llvm::StringRef name) const;
  int32_t getInDimSize(llvm::StringRef name) const {
    return int32_t(1) << getInDimSizeLog2(name);
  }
  int32_t getOutDimSizeLog2(llvm::StringRef name) const;
  int32_t getOutDimSize(llvm::StringRef name) const {
    return int32_t(1) << getOutDimSizeLog2(name);
  }
  /// Bits (and elements) of all input or all output dimensions together.
  int32_t getTotalInDimSizeLog2() const;
  int64_t getTotalInDimSize() const {
    return int64_t(1) << getTotalInDimSizeLog2();
  }
  int32_t getTotalOutDimSizeLog2() const;
  int64_t getTotalOutDimSize() const {
    return int64_t(1) << getTotalOutDimSizeLog2();
  }
  /// The dimensions with their sizes, in order.
  DimSizes getInDims() const;
  DimSizes getOutDims() const;
  /// The bases, as the constructor takes them.
  BasesT getBases() const;
  /// The basis of bit `bit` of `inDim`: one value per output dimension.
  std::vector<int32_t> getBasis(llvm::StringRef inDim, int32_t bit) const;
  /// Its value in `outDim`.
  int32_t getBasis(llvm::StringRef inDim, int32_t bit,
                   llvm::StringRef outDim) const;

  //===--------------------------------------------------------------------===//
  // Queries
  //===--------------------------------------------------------------------===//

  /// The output coordinate of an input index, one value per output
  /// dimension in order. Input dimensions not named are 0; each value must
  /// be below its dimension's size.
  std::vector<std::pair<std::string, int32_t>>
  apply(llvm::ArrayRef<std::pair<llvm::StringRef, int32_t>> ins) const;
  /// apply() on flattened indices (first-listed dimension least
  /// significant, on both sides).
  uint64_t applyFlat(uint64_t flatIn) const;

  /// Every output coordinate is the image of some input index.
  bool isSurjective() const;
  /// No two input indices have the same image (no broadcast).
  bool isInjective() const;
  /// Both: a bijection; invert() succeeds.
  bool isInvertible() const { return isSurjective() && isInjective(); }

  /// For each input dimension, in order, the mask of its bits that are free
  /// variables: bits whose basis is zero or the XOR of bases of earlier bits
  /// (earlier in the flattened order: lower bits of the same dimension, all
  /// bits of earlier dimensions). Flipping such a bit reaches an element
  /// already reachable without it, so these are the broadcast bits; the
  /// other bits form a basis of the image. With registers listed first, a
  /// copy held in two registers of one thread marks the register bit, a copy
  /// held by two lanes the lane bit.
  std::vector<std::pair<std::string, int32_t>> getFreeVariableMasks() const;

  /// The vector width: the largest 2^k such that, in every index, the
  /// 2^k consecutive values of the first input dimension starting at a
  /// multiple of 2^k map to 2^k consecutive flat outputs, in increasing
  /// order. That is, the first k bases of the first input dimension are
  /// the flat outputs 1, 2, 4, ... and no other basis touches the low k
  /// flat output bits. The flat output puts the first-listed output
  /// dimension in the low bits (see the class comment): transpose the
  /// outputs into memory order, fastest first, before asking.
  int32_t getNumConsecutiveInOut() const;

  /// Same dimensions (names, order and sizes) and same bases.
  bool operator==(const LinearLayout &other) const;
  bool operator!=(const LinearLayout &other) const { return !(*this == other); }

  /// The bases, one input dimension a line, then the output dimensions.
  std::string toString() const;
  void print(llvm::raw_ostream &os) const;

  //===--------------------------------------------------------------------===//
  // Operations
  //===--------------------------------------------------------------------===//

  /// The product of two layouts, `this` inside `outer`. Input dimensions:
  /// this's, then outer's that this lacks; a dimension both have gets
  /// outer's bits above this's. Output dimensions: this's, then outer's that
  /// this lacks; a dimension both have is the product of both sizes, with
  /// outer's values shifted above this's. So identity1D(4, "register",
  /// "dim1") * identity1D(8, "lane", "dim1") gives each lane 4 consecutive
  /// elements of a 32-element dim1. Asserts that the result stays within
  /// the size limits.
  LinearLayout operator*(const LinearLayout &outer) const;
  LinearLayout &operator*=(const LinearLayout &outer) {
    return *this = *this * outer;
  }

  /// `this`, then `outer`: x -> outer(this(x)). Each output dimension of
  /// `this` must be an input dimension of `outer`, no larger; outer's
  /// other input dimensions are 0. The result has this's inputs and
  /// outer's outputs.
  llvm::Expected<LinearLayout> compose(const LinearLayout &outer) const;

  /// The inverse of an invertible layout (inputs and outputs swapped), or
  /// an error saying which it is not.
  llvm::Expected<LinearLayout> invert() const;

  /// The layout C from other's inputs to this's inputs with this(C(x)) =
  /// other(x) for every x: for a conversion from `this` to `other`, which
  /// index of `this` holds the element `other` places at x. Both must have
  /// the same output dimensions (any order), other's no larger than this's,
  /// and `this` must hold every element `other` places (an error names the
  /// first it lacks). Where `this` holds an element at several indices (a
  /// broadcast), C picks the one whose free variables
  /// (getFreeVariableMasks) are all 0.
  llvm::Expected<LinearLayout>
  invertAndCompose(const LinearLayout &other) const;

  /// A right inverse of a surjective layout: from its outputs to the input
  /// with free variables 0 that maps to them (invert() when invertible).
  llvm::Expected<LinearLayout> pseudoinvert() const;

  /// The same map with the input (output) dimensions listed in `order`, a
  /// permutation of their names. Asserts that it is one.
  LinearLayout transposeIns(llvm::ArrayRef<std::string> order) const;
  LinearLayout transposeOuts(llvm::ArrayRef<std::string> order) const;

  /// The same map with the inputs (outputs) flattened and split again into
  /// `newDims`, first-listed dimension least significant on both sides. The
  /// sizes must be powers of two whose product is the old total.
  llvm::Expected<LinearLayout> reshapeIns(DimSizes newDims) const;
  llvm::Expected<LinearLayout> reshapeOuts(DimSizes newDims) const;

  /// The restriction to the input dimensions `inDims` (the others held at
  /// 0), projected onto the output dimensions `outDims`; both keep this
  /// layout's order. Asserts that the names exist.
  LinearLayout sublayout(llvm::ArrayRef<std::string> inDims,
                         llvm::ArrayRef<std::string> outDims) const;
  /// True when sublayout(inDims, outDims) maps everything to 0: those
  /// inputs never change those outputs.
  bool sublayoutIsZero(llvm::ArrayRef<std::string> inDims,
                       llvm::ArrayRef<std::string> outDims) const;

private:
  /// A dimension: its name and the log2 of its size.
  struct Dim {
    std::string name;
    int32_t log2Size = 0;
    bool operator==(const Dim &other) const {
      return name == other.name && log2Size == other.log2Size;
    }
  };

  LinearLayout(std::vector<Dim> ins, std::vector<Dim> outs,
               std::vector<uint64_t> columns)
      : inputs(std::move(ins)), outputs(std::move(outs)),
        columns(std::move(columns)) {}

  int findIn(llvm::StringRef name) const;
  int findOut(llvm::StringRef name) const;
  /// The first flat bit of input (output) dimension `index`.
  int32_t inBitOffset(size_t index) const;
  int32_t outBitOffset(size_t index) const;
  /// The column of bit `bit` of input dimension `index`.
  uint64_t column(size_t index, int32_t bit) const {
    return columns[inBitOffset(index) + bit];
  }

  std::vector<Dim> inputs, outputs;
  /// One column per input bit, in flattened order: the basis as a flat
  /// output (first-listed output dimension in the low bits).
  std::vector<uint64_t> columns;
};

/// A hash of the dimensions and bases, for uniquing layouts (as the
/// parameter of #tkw.linear).
llvm::hash_code hash_value(const LinearLayout &layout);

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     const LinearLayout &layout) {
  layout.print(os);
  return os;
}

/// What a conversion between two layouts of one tile must move.
enum class ConversionKind {
  /// Nothing: every index holds the same element in both.
  None,
  /// Registers within each thread: every thread already holds what it
  /// needs.
  Registers,
  /// Across the lanes of each warp (warp shuffles): every warp already
  /// holds what it needs.
  Shuffles,
  /// Across warps, through a shared-memory round trip.
  SharedMemory,
};

llvm::StringRef stringifyConversionKind(ConversionKind kind);

/// What converting a tile from layout `from` to layout `to` must move. Both
/// map register, lane, warp and (optionally) block to the same output
/// dimensions with the same sizes; lane, warp and block have the same size
/// in both (a missing one has size 1), registers may differ.
///
/// A conversion needs no more than level L when every index x of `to` finds
/// the element to(x) in `from` at an index that differs from x only in the
/// dimensions below L: with C = from.invertAndCompose(to), when C can be
/// chosen, within from's broadcasts, to keep x's lane and warp (Registers)
/// or warp (Shuffles). This is checked on the bases, not by enumeration:
/// for the dimensions D allowed to differ, each basis to(e) of a bit in D,
/// and to(e) XOR from(e) for a bit e outside D, must lie in the span of
/// from's bases in D. None further requires equal register counts.
///
/// An error when `from` does not hold every element `to` needs, when the
/// dimensions do not match, or when the conversion would cross blocks
/// (workgroups of a cluster), which no kind covers.
llvm::Expected<ConversionKind> classifyConversion(const LinearLayout &from,
                                                  const LinearLayout &to);

} // namespace tk

#endif // TK_CORE_LAYOUT_LINEARLAYOUT_H_
