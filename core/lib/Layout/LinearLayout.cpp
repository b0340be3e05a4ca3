//===- LinearLayout.cpp - layouts as linear maps over GF(2) ---------------===//
//
// tk::LinearLayout keeps its map in flat form: one column per input bit, the
// basis packed into one flat output. Products, compositions, transposes and
// sublayouts repack columns; ranks, inverses, spans and free variables come
// from one Gaussian elimination over GF(2) (XorBasis).
//
//===----------------------------------------------------------------------===//

#include "tk/core/Layout/LinearLayout.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/bit.h"

#include <array>
#include <cassert>
#include <optional>

using namespace tk;
using llvm::StringRef;

namespace {

/// A dimension's size is an int32_t; flat indices and columns are uint64_t
/// and the eliminations record a combination of columns in one uint64_t.
constexpr int32_t kMaxDimLog2 = 30;
constexpr int32_t kMaxTotalLog2 = 63;

uint64_t lowMask(int32_t bits) {
  return bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
}

bool isPowerOf2(int64_t value) {
  return value > 0 && llvm::has_single_bit(uint64_t(value));
}

int32_t log2Of(int64_t powerOf2) {
  return int32_t(llvm::countr_zero(uint64_t(powerOf2)));
}

/// The span of vectors over GF(2) (one bit a coordinate), kept in echelon
/// form with one pivot per leading bit. Each pivot remembers which of the
/// caller's vectors it is the XOR of, so that reducing a vector also says
/// how to build it from them.
class XorBasis {
public:
  /// Adds `vector`, which is the XOR of the caller's vectors in
  /// `combination`. Returns false when it already lies in the span.
  bool insert(uint64_t vector, uint64_t combination) {
    auto [rest, restCombination] = reduce(vector, combination);
    if (rest == 0)
      return false;
    int top = 63 - llvm::countl_zero(rest);
    pivots[top] = rest;
    combinations[top] = restCombination;
    ++numPivots;
    return true;
  }

  /// `vector` less what the span explains: the rest (0 when `vector` lies
  /// in the span) and the caller's vectors whose XOR with the rest is
  /// `vector` (with `combination` XORed in). Only independent vectors, the
  /// ones insert() accepted, appear in it.
  std::pair<uint64_t, uint64_t> reduce(uint64_t vector,
                                       uint64_t combination = 0) const {
    // Top bit down: a pivot only changes bits at or below its own.
    for (int bit = 63; bit >= 0; --bit)
      if ((vector >> bit & 1) && pivots[bit]) {
        vector ^= pivots[bit];
        combination ^= combinations[bit];
      }
    return {vector, combination};
  }

  bool contains(uint64_t vector) const { return reduce(vector).first == 0; }
  int rank() const { return numPivots; }

private:
  std::array<uint64_t, 64> pivots{}, combinations{};
  int numPivots = 0;
};

/// A flat index as one value per dimension (first dimension in the low
/// bits), and back. Values beyond a dimension are cut to its bits.
template <typename Dims>
llvm::SmallVector<uint64_t, 4> unpack(const Dims &dims, uint64_t flat) {
  llvm::SmallVector<uint64_t, 4> values;
  for (const auto &dim : dims) {
    values.push_back(flat & lowMask(dim.log2Size));
    flat >>= dim.log2Size;
  }
  return values;
}

template <typename Dims>
uint64_t pack(const Dims &dims, llvm::ArrayRef<uint64_t> values) {
  uint64_t flat = 0;
  int32_t shift = 0;
  for (auto [dim, value] : llvm::zip_equal(dims, values)) {
    flat |= (value & lowMask(dim.log2Size)) << shift;
    shift += dim.log2Size;
  }
  return flat;
}

/// Why `dims` cannot be a layout's dimensions (sizes powers of two, names
/// unique and not empty, within the limits), or nothing.
std::optional<std::string> dimsProblem(const LinearLayout::DimSizes &dims,
                                       StringRef what) {
  llvm::StringSet<> seen;
  int32_t total = 0;
  for (const auto &[name, size] : dims) {
    if (name.empty())
      return (what + " dimension without a name").str();
    if (!seen.insert(name).second)
      return (what + " dimension '" + name + "' is listed twice").str();
    if (!isPowerOf2(size))
      return (what + " dimension '" + name + "' has size " +
              std::to_string(size) + ", expected a power of two")
          .str();
    if (log2Of(size) > kMaxDimLog2)
      return (what + " dimension '" + name + "' has size " +
              std::to_string(size) + ", more than 2^30")
          .str();
    total += log2Of(size);
  }
  if (total > kMaxTotalLog2)
    return (what + " dimensions have 2^" + std::to_string(total) +
            " elements together, more than 2^63")
        .str();
  return std::nullopt;
}

/// Why `bases` cannot map onto `outDims`, or nothing.
std::optional<std::string> basesProblem(const LinearLayout::BasesT &bases,
                                        const LinearLayout::DimSizes &outDims) {
  if (std::optional<std::string> problem = dimsProblem(outDims, "output"))
    return problem;
  LinearLayout::DimSizes inDims;
  for (const auto &[name, dimBases] : bases) {
    if (dimBases.size() > size_t(kMaxDimLog2))
      return "input dimension '" + name + "' has " +
             std::to_string(dimBases.size()) + " bits, more than 30";
    inDims.emplace_back(name, int32_t(1) << dimBases.size());
  }
  if (std::optional<std::string> problem = dimsProblem(inDims, "input"))
    return problem;
  for (const auto &[name, dimBases] : bases)
    for (auto [bit, basis] : llvm::enumerate(dimBases)) {
      std::string where =
          "basis " + std::to_string(bit) + " of input dimension '" + name + "'";
      if (basis.size() != outDims.size())
        return where + " has " + std::to_string(basis.size()) +
               " values, expected one per output dimension (" +
               std::to_string(outDims.size()) + ")";
      for (auto [value, outDim] : llvm::zip_equal(basis, outDims))
        if (value < 0 || value >= outDim.second)
          return where + " has " + std::to_string(value) + " for '" +
                 outDim.first + "', expected 0 to " +
                 std::to_string(outDim.second - 1);
    }
  return std::nullopt;
}

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// "(dim0 = 3, dim1 = 5)".
template <typename Dims>
std::string describe(const Dims &dims, llvm::ArrayRef<uint64_t> values) {
  std::string text = "(";
  for (auto [index, dim] : llvm::enumerate(dims)) {
    if (index)
      text += ", ";
    text += dim.name + " = " + std::to_string(values[index]);
  }
  return text + ")";
}

} // namespace

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

LinearLayout::LinearLayout(BasesT bases, DimSizes outDims) {
#ifndef NDEBUG
  if (std::optional<std::string> problem = basesProblem(bases, outDims)) {
    llvm::errs() << "tk::LinearLayout: " << *problem << "\n";
    assert(false && "invalid bases: use LinearLayout::create for bases that "
                    "come from data");
  }
#endif
  for (const auto &[name, size] : outDims)
    outputs.push_back({name, log2Of(size)});
  for (const auto &[name, dimBases] : bases) {
    inputs.push_back({name, int32_t(dimBases.size())});
    for (const std::vector<int32_t> &basis : dimBases) {
      llvm::SmallVector<uint64_t, 4> values(basis.begin(), basis.end());
      // Values were checked above; pack() cuts them to their dimension
      // should a release build get bad ones.
      values.resize(outputs.size());
      columns.push_back(pack(outputs, values));
    }
  }
}

llvm::Expected<LinearLayout> LinearLayout::create(BasesT bases,
                                                  DimSizes outDims) {
  if (std::optional<std::string> problem = basesProblem(bases, outDims))
    return makeError(*problem);
  return LinearLayout(std::move(bases), std::move(outDims));
}

LinearLayout LinearLayout::identity1D(int32_t size, StringRef inDim,
                                      StringRef outDim) {
  assert(isPowerOf2(size) && "identity1D of a size not a power of two");
  std::vector<std::vector<int32_t>> bases;
  for (int32_t value = 1; value < size; value *= 2)
    bases.push_back({value});
  return LinearLayout({{inDim.str(), std::move(bases)}},
                      {{outDim.str(), size}});
}

LinearLayout LinearLayout::zeros1D(int32_t size, StringRef inDim,
                                   StringRef outDim, int32_t outDimSize) {
  assert(isPowerOf2(size) && "zeros1D of a size not a power of two");
  return LinearLayout(
      {{inDim.str(), std::vector<std::vector<int32_t>>(log2Of(size), {0})}},
      {{outDim.str(), outDimSize}});
}

//===----------------------------------------------------------------------===//
// Dimensions
//===----------------------------------------------------------------------===//

int LinearLayout::findIn(StringRef name) const {
  for (auto [index, dim] : llvm::enumerate(inputs))
    if (dim.name == name)
      return int(index);
  return -1;
}

int LinearLayout::findOut(StringRef name) const {
  for (auto [index, dim] : llvm::enumerate(outputs))
    if (dim.name == name)
      return int(index);
  return -1;
}

int32_t LinearLayout::inBitOffset(size_t index) const {
  int32_t offset = 0;
  for (size_t i = 0; i < index; ++i)
    offset += inputs[i].log2Size;
  return offset;
}

int32_t LinearLayout::outBitOffset(size_t index) const {
  int32_t offset = 0;
  for (size_t i = 0; i < index; ++i)
    offset += outputs[i].log2Size;
  return offset;
}

std::vector<std::string> LinearLayout::getInDimNames() const {
  std::vector<std::string> names;
  for (const Dim &dim : inputs)
    names.push_back(dim.name);
  return names;
}

std::vector<std::string> LinearLayout::getOutDimNames() const {
  std::vector<std::string> names;
  for (const Dim &dim : outputs)
    names.push_back(dim.name);
  return names;
}

int32_t LinearLayout::getInDimSizeLog2(StringRef name) const {
  int index = findIn(name);
  assert(index >= 0 && "no such input dimension");
  return inputs[index].log2Size;
}

int32_t LinearLayout::getOutDimSizeLog2(StringRef name) const {
  int index = findOut(name);
  assert(index >= 0 && "no such output dimension");
  return outputs[index].log2Size;
}

int32_t LinearLayout::getTotalInDimSizeLog2() const {
  return int32_t(columns.size());
}

int32_t LinearLayout::getTotalOutDimSizeLog2() const {
  return outBitOffset(outputs.size());
}

LinearLayout::DimSizes LinearLayout::getInDims() const {
  DimSizes dims;
  for (const Dim &dim : inputs)
    dims.emplace_back(dim.name, int32_t(1) << dim.log2Size);
  return dims;
}

LinearLayout::DimSizes LinearLayout::getOutDims() const {
  DimSizes dims;
  for (const Dim &dim : outputs)
    dims.emplace_back(dim.name, int32_t(1) << dim.log2Size);
  return dims;
}

LinearLayout::BasesT LinearLayout::getBases() const {
  BasesT bases;
  for (auto [index, dim] : llvm::enumerate(inputs)) {
    std::vector<std::vector<int32_t>> dimBases;
    for (int32_t bit = 0; bit < dim.log2Size; ++bit) {
      llvm::SmallVector<uint64_t, 4> values =
          unpack(outputs, column(index, bit));
      dimBases.emplace_back(values.begin(), values.end());
    }
    bases.emplace_back(dim.name, std::move(dimBases));
  }
  return bases;
}

std::vector<int32_t> LinearLayout::getBasis(StringRef inDim,
                                            int32_t bit) const {
  int index = findIn(inDim);
  assert(index >= 0 && "no such input dimension");
  assert(bit >= 0 && bit < inputs[index].log2Size && "no such bit");
  llvm::SmallVector<uint64_t, 4> values = unpack(outputs, column(index, bit));
  return std::vector<int32_t>(values.begin(), values.end());
}

int32_t LinearLayout::getBasis(StringRef inDim, int32_t bit,
                               StringRef outDim) const {
  int out = findOut(outDim);
  assert(out >= 0 && "no such output dimension");
  return getBasis(inDim, bit)[out];
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

std::vector<std::pair<std::string, int32_t>>
LinearLayout::apply(llvm::ArrayRef<std::pair<StringRef, int32_t>> ins) const {
  uint64_t flatIn = 0;
  for (const auto &[name, value] : ins) {
    int index = findIn(name);
    assert(index >= 0 && "no such input dimension");
    assert(value >= 0 && value < (int32_t(1) << inputs[index].log2Size) &&
           "input value out of range");
    flatIn |= uint64_t(value) << inBitOffset(index);
  }
  llvm::SmallVector<uint64_t, 4> values = unpack(outputs, applyFlat(flatIn));
  std::vector<std::pair<std::string, int32_t>> result;
  for (auto [dim, value] : llvm::zip_equal(outputs, values))
    result.emplace_back(dim.name, int32_t(value));
  return result;
}

uint64_t LinearLayout::applyFlat(uint64_t flatIn) const {
  assert((flatIn & ~lowMask(int32_t(columns.size()))) == 0 &&
         "flat input out of range");
  uint64_t flatOut = 0;
  for (auto [bit, column] : llvm::enumerate(columns))
    if (flatIn >> bit & 1)
      flatOut ^= column;
  return flatOut;
}

/// The rank of the layout's map.
static int rankOf(llvm::ArrayRef<uint64_t> columns) {
  XorBasis basis;
  for (uint64_t column : columns)
    basis.insert(column, 0);
  return basis.rank();
}

bool LinearLayout::isSurjective() const {
  return rankOf(columns) == getTotalOutDimSizeLog2();
}

bool LinearLayout::isInjective() const {
  return rankOf(columns) == int(columns.size());
}

std::vector<std::pair<std::string, int32_t>>
LinearLayout::getFreeVariableMasks() const {
  // The free variables of the elimination that takes the columns in flat
  // order: a column is free when the ones before it already span it.
  XorBasis basis;
  std::vector<std::pair<std::string, int32_t>> masks;
  for (auto [index, dim] : llvm::enumerate(inputs)) {
    int32_t mask = 0;
    for (int32_t bit = 0; bit < dim.log2Size; ++bit)
      if (!basis.insert(column(index, bit), 0))
        mask |= int32_t(1) << bit;
    masks.emplace_back(dim.name, mask);
  }
  return masks;
}

int32_t LinearLayout::getNumConsecutiveInOut() const {
  if (inputs.empty())
    return 1;
  // The first k bits of the first input must step the flat output by 1, 2,
  // 4, ...; then value r of an aligned group lands at base ^ r, which is
  // base + r only when no other bit can set the base's low k bits.
  int32_t k = 0;
  while (k < inputs[0].log2Size && columns[k] == uint64_t(1) << k)
    ++k;
  for (; k > 0; --k) {
    uint64_t low = lowMask(k);
    if (llvm::none_of(llvm::drop_begin(columns, k),
                      [&](uint64_t column) { return column & low; }))
      break;
  }
  return int32_t(1) << k;
}

bool LinearLayout::operator==(const LinearLayout &other) const {
  return inputs == other.inputs && outputs == other.outputs &&
         columns == other.columns;
}

llvm::hash_code tk::hash_value(const LinearLayout &layout) {
  llvm::hash_code hash = llvm::hash_value(layout.getNumInDims());
  for (const auto &[name, size] : layout.getInDims())
    hash = llvm::hash_combine(hash, name, size);
  for (const auto &[name, size] : layout.getOutDims())
    hash = llvm::hash_combine(hash, name, size);
  for (const auto &[name, bases] : layout.getBases())
    for (const std::vector<int32_t> &basis : bases)
      hash = llvm::hash_combine(
          hash, llvm::hash_combine_range(basis.begin(), basis.end()));
  return hash;
}

void LinearLayout::print(llvm::raw_ostream &os) const {
  for (auto [index, dim] : llvm::enumerate(inputs)) {
    os << dim.name << " (" << (int64_t(1) << dim.log2Size) << "):";
    for (int32_t bit = 0; bit < dim.log2Size; ++bit) {
      os << " [";
      llvm::interleaveComma(unpack(outputs, column(index, bit)), os);
      os << "]";
    }
    os << "\n";
  }
  os << "->";
  if (outputs.empty())
    os << " (no outputs)";
  for (auto [index, dim] : llvm::enumerate(outputs))
    os << (index ? ", " : " ") << dim.name << " ("
       << (int64_t(1) << dim.log2Size) << ")";
  os << "\n";
}

std::string LinearLayout::toString() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  return text;
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

LinearLayout LinearLayout::operator*(const LinearLayout &outer) const {
  // Outputs: this's, then outer's new ones; where outer's dimension is also
  // this's, its values go above this's.
  std::vector<Dim> outs = outputs;
  llvm::SmallVector<size_t, 4> outerOutIndex;
  llvm::SmallVector<int32_t, 4> outerOutShift;
  for (const Dim &dim : outer.outputs) {
    int index = findOut(dim.name);
    if (index < 0) {
      outerOutIndex.push_back(outs.size());
      outerOutShift.push_back(0);
      outs.push_back(dim);
      continue;
    }
    outerOutIndex.push_back(index);
    outerOutShift.push_back(outs[index].log2Size);
    outs[index].log2Size += dim.log2Size;
  }
  // Inputs likewise: outer's bits of a shared dimension above this's.
  std::vector<Dim> ins = inputs;
  for (const Dim &dim : outer.inputs) {
    int index = findIn(dim.name);
    if (index < 0)
      ins.push_back(dim);
    else
      ins[index].log2Size += dim.log2Size;
  }
  int32_t totalIn = 0, totalOut = 0;
  for (const Dim &dim : ins) {
    assert(dim.log2Size <= kMaxDimLog2 && "product too large");
    totalIn += dim.log2Size;
  }
  for (const Dim &dim : outs) {
    assert(dim.log2Size <= kMaxDimLog2 && "product too large");
    totalOut += dim.log2Size;
  }
  assert(totalIn <= kMaxTotalLog2 && totalOut <= kMaxTotalLog2 &&
         "product too large");
  (void)totalIn;
  (void)totalOut;

  auto fromThis = [&](uint64_t column) {
    llvm::SmallVector<uint64_t, 4> values = unpack(outputs, column);
    values.resize(outs.size(), 0);
    return pack(outs, values);
  };
  auto fromOuter = [&](uint64_t column) {
    llvm::SmallVector<uint64_t, 4> values(outs.size(), 0);
    for (auto [index, value] : llvm::enumerate(unpack(outer.outputs, column)))
      values[outerOutIndex[index]] = value << outerOutShift[index];
    return pack(outs, values);
  };
  std::vector<uint64_t> cols;
  for (const Dim &dim : ins) {
    if (int index = findIn(dim.name); index >= 0)
      for (int32_t bit = 0; bit < inputs[index].log2Size; ++bit)
        cols.push_back(fromThis(column(index, bit)));
    if (int index = outer.findIn(dim.name); index >= 0)
      for (int32_t bit = 0; bit < outer.inputs[index].log2Size; ++bit)
        cols.push_back(fromOuter(outer.column(index, bit)));
  }
  return LinearLayout(std::move(ins), std::move(outs), std::move(cols));
}

llvm::Expected<LinearLayout>
LinearLayout::compose(const LinearLayout &outer) const {
  llvm::SmallVector<int32_t, 4> shifts;
  for (const Dim &dim : outputs) {
    int index = outer.findIn(dim.name);
    if (index < 0)
      return makeError("compose: the outer layout has no input dimension '" +
                       dim.name + "'");
    if (outer.inputs[index].log2Size < dim.log2Size)
      return makeError(
          "compose: output dimension '" + dim.name + "' has " +
          std::to_string(int64_t(1) << dim.log2Size) +
          " elements, more than the outer layout's input (" +
          std::to_string(int64_t(1) << outer.inputs[index].log2Size) + ")");
    shifts.push_back(outer.inBitOffset(index));
  }
  std::vector<uint64_t> cols;
  for (uint64_t column : columns) {
    uint64_t outerIn = 0;
    for (auto [value, shift] : llvm::zip_equal(unpack(outputs, column), shifts))
      outerIn |= value << shift;
    cols.push_back(outer.applyFlat(outerIn));
  }
  return LinearLayout(inputs, outer.outputs, std::move(cols));
}

llvm::Expected<LinearLayout>
LinearLayout::invertAndCompose(const LinearLayout &other) const {
  // other's outputs in this's packing.
  if (other.outputs.size() != outputs.size())
    return makeError("invertAndCompose: the layouts have " +
                     std::to_string(outputs.size()) + " and " +
                     std::to_string(other.outputs.size()) +
                     " output dimensions, expected the same ones");
  llvm::SmallVector<int32_t, 4> shifts;
  for (const Dim &dim : other.outputs) {
    int index = findOut(dim.name);
    if (index < 0)
      return makeError("invertAndCompose: output dimension '" + dim.name +
                       "' of the other layout is not one of this layout's");
    if (outputs[index].log2Size < dim.log2Size)
      return makeError("invertAndCompose: output dimension '" + dim.name +
                       "' has " + std::to_string(int64_t(1) << dim.log2Size) +
                       " elements in the other layout, more than in this (" +
                       std::to_string(int64_t(1) << outputs[index].log2Size) +
                       ")");
    shifts.push_back(outBitOffset(index));
  }
  // Column j is input bit j; reducing an element names input bits that
  // reach it, never a free variable (they were not inserted).
  XorBasis basis;
  for (auto [bit, column] : llvm::enumerate(columns))
    basis.insert(column, uint64_t(1) << bit);
  std::vector<uint64_t> cols;
  for (auto [index, dim] : llvm::enumerate(other.inputs))
    for (int32_t bit = 0; bit < dim.log2Size; ++bit) {
      llvm::SmallVector<uint64_t, 4> values =
          unpack(other.outputs, other.column(index, bit));
      uint64_t element = 0;
      for (auto [value, shift] : llvm::zip_equal(values, shifts))
        element |= value << shift;
      auto [rest, inputBits] = basis.reduce(element);
      if (rest != 0)
        return makeError("invertAndCompose: this layout holds no element " +
                         describe(other.outputs, values) +
                         ", which the other places at " + dim.name + " = " +
                         std::to_string(int64_t(1) << bit));
      cols.push_back(inputBits);
    }
  return LinearLayout(other.inputs, inputs, std::move(cols));
}

llvm::Expected<LinearLayout> LinearLayout::pseudoinvert() const {
  int rank = rankOf(columns);
  if (rank != getTotalOutDimSizeLog2())
    return makeError("pseudoinvert: the layout reaches 2^" +
                     std::to_string(rank) + " of its 2^" +
                     std::to_string(getTotalOutDimSizeLog2()) +
                     " output elements, expected all (surjective)");
  LinearLayout identity;
  for (const Dim &dim : outputs)
    identity *= identity1D(int32_t(1) << dim.log2Size, dim.name, dim.name);
  return invertAndCompose(identity);
}

llvm::Expected<LinearLayout> LinearLayout::invert() const {
  if (!isInjective())
    return makeError("invert: the layout is not injective (free variables "
                     "in its inputs: it broadcasts)");
  if (!isSurjective())
    return makeError("invert: the layout is not surjective (it does not "
                     "reach every output element)");
  return pseudoinvert();
}

LinearLayout
LinearLayout::transposeIns(llvm::ArrayRef<std::string> order) const {
  assert(order.size() == inputs.size() && "not a permutation of the inputs");
  std::vector<Dim> ins;
  std::vector<uint64_t> cols;
  for (const std::string &name : order) {
    int index = findIn(name);
    assert(index >= 0 && "not a permutation of the inputs");
    ins.push_back(inputs[index]);
    for (int32_t bit = 0; bit < inputs[index].log2Size; ++bit)
      cols.push_back(column(index, bit));
  }
  assert(cols.size() == columns.size() && "not a permutation of the inputs");
  return LinearLayout(std::move(ins), outputs, std::move(cols));
}

LinearLayout
LinearLayout::transposeOuts(llvm::ArrayRef<std::string> order) const {
  assert(order.size() == outputs.size() && "not a permutation of the outputs");
  std::vector<Dim> outs;
  llvm::SmallVector<size_t, 4> from;
  for (const std::string &name : order) {
    int index = findOut(name);
    assert(index >= 0 && "not a permutation of the outputs");
    assert(!llvm::is_contained(from, size_t(index)) &&
           "not a permutation of the outputs");
    outs.push_back(outputs[index]);
    from.push_back(index);
  }
  std::vector<uint64_t> cols;
  for (uint64_t column : columns) {
    llvm::SmallVector<uint64_t, 4> values = unpack(outputs, column);
    llvm::SmallVector<uint64_t, 4> reordered;
    for (size_t index : from)
      reordered.push_back(values[index]);
    cols.push_back(pack(outs, reordered));
  }
  return LinearLayout(inputs, std::move(outs), std::move(cols));
}

/// `newDims` as dimensions, if they can replace dimensions of `totalLog2`
/// bits in a reshape.
static std::optional<std::string>
reshapeProblem(const LinearLayout::DimSizes &newDims, int32_t totalLog2,
               StringRef what) {
  if (std::optional<std::string> problem = dimsProblem(newDims, what))
    return problem;
  int32_t newTotal = 0;
  for (const auto &dim : newDims)
    newTotal += log2Of(dim.second);
  if (newTotal != totalLog2)
    return ("reshape: the new " + what + " dimensions have 2^" +
            llvm::Twine(newTotal) + " elements, expected 2^" +
            llvm::Twine(totalLog2))
        .str();
  return std::nullopt;
}

llvm::Expected<LinearLayout> LinearLayout::reshapeIns(DimSizes newDims) const {
  if (std::optional<std::string> problem =
          reshapeProblem(newDims, getTotalInDimSizeLog2(), "input"))
    return makeError(*problem);
  // Flattening puts the first dimension lowest on both sides, so the flat
  // columns stay as they are: only their grouping changes.
  std::vector<Dim> ins;
  for (const auto &[name, size] : newDims)
    ins.push_back({name, log2Of(size)});
  return LinearLayout(std::move(ins), outputs, columns);
}

llvm::Expected<LinearLayout> LinearLayout::reshapeOuts(DimSizes newDims) const {
  if (std::optional<std::string> problem =
          reshapeProblem(newDims, getTotalOutDimSizeLog2(), "output"))
    return makeError(*problem);
  std::vector<Dim> outs;
  for (const auto &[name, size] : newDims)
    outs.push_back({name, log2Of(size)});
  return LinearLayout(inputs, std::move(outs), columns);
}

LinearLayout
LinearLayout::sublayout(llvm::ArrayRef<std::string> inDims,
                        llvm::ArrayRef<std::string> outDims) const {
  for (const std::string &name : inDims) {
    assert(hasInDim(name) && "no such input dimension");
    (void)name;
  }
  for (const std::string &name : outDims) {
    assert(hasOutDim(name) && "no such output dimension");
    (void)name;
  }
  std::vector<Dim> ins, outs;
  llvm::SmallVector<size_t, 4> kept;
  for (auto [index, dim] : llvm::enumerate(outputs))
    if (llvm::is_contained(outDims, dim.name)) {
      outs.push_back(dim);
      kept.push_back(index);
    }
  std::vector<uint64_t> cols;
  for (auto [index, dim] : llvm::enumerate(inputs)) {
    if (!llvm::is_contained(inDims, dim.name))
      continue;
    ins.push_back(dim);
    for (int32_t bit = 0; bit < dim.log2Size; ++bit) {
      llvm::SmallVector<uint64_t, 4> values =
          unpack(outputs, column(index, bit));
      llvm::SmallVector<uint64_t, 4> projected;
      for (size_t out : kept)
        projected.push_back(values[out]);
      cols.push_back(pack(outs, projected));
    }
  }
  return LinearLayout(std::move(ins), std::move(outs), std::move(cols));
}

bool LinearLayout::sublayoutIsZero(llvm::ArrayRef<std::string> inDims,
                                   llvm::ArrayRef<std::string> outDims) const {
  LinearLayout sub = sublayout(inDims, outDims);
  return llvm::all_of(sub.columns, [](uint64_t column) { return column == 0; });
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

StringRef tk::stringifyConversionKind(ConversionKind kind) {
  switch (kind) {
  case ConversionKind::None:
    return "none";
  case ConversionKind::Registers:
    return "registers";
  case ConversionKind::Shuffles:
    return "shuffles";
  case ConversionKind::SharedMemory:
    return "shared-memory";
  }
  return "unknown";
}

llvm::Expected<ConversionKind> tk::classifyConversion(const LinearLayout &from,
                                                      const LinearLayout &to) {
  const std::array<StringRef, 4> hardware = {kRegisterDim, kLaneDim, kWarpDim,
                                             kBlockDim};
  for (const LinearLayout *layout : {&from, &to})
    for (const std::string &name : layout->getInDimNames())
      if (!llvm::is_contained(hardware, name))
        return makeError("classifyConversion: input dimension '" + name +
                         "' is not one of register, lane, warp, block");
  auto sizeLog2 = [](const LinearLayout &layout, StringRef dim) {
    return layout.hasInDim(dim) ? layout.getInDimSizeLog2(dim) : 0;
  };
  for (StringRef dim : llvm::drop_begin(hardware))
    if (sizeLog2(from, dim) != sizeLog2(to, dim))
      return makeError("classifyConversion: '" + dim + "' has " +
                       llvm::Twine(1 << sizeLog2(from, dim)) + " and " +
                       llvm::Twine(1 << sizeLog2(to, dim)) +
                       " indices in the two layouts, expected the same");
  if (from.getNumOutDims() != to.getNumOutDims())
    return makeError("classifyConversion: the layouts have " +
                     llvm::Twine(from.getNumOutDims()) + " and " +
                     llvm::Twine(to.getNumOutDims()) +
                     " output dimensions, expected the same");
  for (const auto &[name, size] : to.getOutDims())
    if (!from.hasOutDim(name) || from.getOutDimSize(name) != size)
      return makeError("classifyConversion: output dimension '" + name +
                       "' differs between the layouts");
  // Bases as flat outputs in from's order of outputs; a bit a layout lacks
  // (registers beyond its count) is 0.
  LinearLayout toAligned = to.transposeOuts(from.getOutDimNames());
  auto flatBasis = [&](const LinearLayout &layout, StringRef dim,
                       int32_t bit) -> uint64_t {
    if (!layout.hasInDim(dim) || bit >= layout.getInDimSizeLog2(dim))
      return 0;
    // The input with only this bit set, flattened.
    uint64_t flatIn = uint64_t(1) << bit;
    for (const auto &[name, size] : layout.getInDims()) {
      if (name == dim)
        break;
      flatIn <<= log2Of(size);
    }
    return layout.applyFlat(flatIn);
  };
  struct Level {
    ConversionKind kind;
    int numAllowed; // the first dimensions of `hardware` that may differ
  };
  for (Level level :
       {Level{ConversionKind::None, 0}, Level{ConversionKind::Registers, 1},
        Level{ConversionKind::Shuffles, 2},
        Level{ConversionKind::SharedMemory, 3}}) {
    if (level.kind == ConversionKind::None &&
        sizeLog2(from, kRegisterDim) != sizeLog2(to, kRegisterDim))
      continue;
    llvm::ArrayRef<StringRef> allowed(hardware.data(), level.numAllowed);
    XorBasis span;
    for (StringRef dim : allowed)
      for (int32_t bit = 0; bit < sizeLog2(from, dim); ++bit)
        span.insert(flatBasis(from, dim, bit), 0);
    // to(x) must be from(x') with x' = x outside the allowed dimensions:
    // linear in x, so checked on each bit of x.
    bool reaches = llvm::all_of(hardware, [&](StringRef dim) {
      bool isAllowed = llvm::is_contained(allowed, dim);
      for (int32_t bit = 0; bit < sizeLog2(to, dim); ++bit) {
        uint64_t needed = flatBasis(toAligned, dim, bit);
        if (!isAllowed)
          needed ^= flatBasis(from, dim, bit);
        if (!span.contains(needed))
          return false;
      }
      return true;
    });
    if (reaches)
      return level.kind;
  }
  // Either an element `to` needs is nowhere in `from`, or it is only in
  // another block.
  llvm::Expected<LinearLayout> sources = from.invertAndCompose(to);
  if (!sources)
    return makeError("classifyConversion: " +
                     llvm::toString(sources.takeError()));
  return makeError("classifyConversion: the conversion moves elements "
                   "between blocks, which needs distributed shared memory");
}
