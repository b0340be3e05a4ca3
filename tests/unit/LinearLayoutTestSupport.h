//===- LinearLayoutTestSupport.h - layouts by enumeration -------*- C++ -*-===//
//
// The brute force the layout tests compare tk::LinearLayout with: a layout
// enumerated index by index from its bases, named coordinates, and the
// flattening convention (first dimension fastest) written out again.
//
//===----------------------------------------------------------------------===//

#ifndef TK_TESTS_UNIT_LINEARLAYOUTTESTSUPPORT_H_
#define TK_TESTS_UNIT_LINEARLAYOUTTESTSUPPORT_H_

#include "tk/core/Layout/LinearLayout.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tk::test {

using Coord = std::map<std::string, int32_t>;
using DimSizes = LinearLayout::DimSizes;

/// Unwraps an Expected, failing the test with its message.
template <typename T> T take(llvm::Expected<T> value) {
  if (!value) {
    ADD_FAILURE() << llvm::toString(value.takeError());
    return T();
  }
  return std::move(*value);
}

/// The message of an error that must come.
template <typename T> std::string errorOf(llvm::Expected<T> value) {
  if (value) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return llvm::toString(value.takeError());
}

inline int32_t lookup(const Coord &coord, const std::string &name) {
  auto found = coord.find(name);
  return found == coord.end() ? 0 : found->second;
}

inline int64_t totalSize(const DimSizes &dims) {
  int64_t total = 1;
  for (const auto &dim : dims)
    total *= dim.second;
  return total;
}

/// A flat index as named values and back, first dimension fastest (the
/// class's documented convention, written out again here).
inline Coord toNamed(int64_t flat, const DimSizes &dims) {
  Coord coord;
  for (const auto &[name, size] : dims) {
    coord[name] = int32_t(flat % size);
    flat /= size;
  }
  return coord;
}

inline int64_t fromNamed(const Coord &coord, const DimSizes &dims) {
  int64_t flat = 0, stride = 1;
  for (const auto &[name, size] : dims) {
    flat += lookup(coord, name) * stride;
    stride *= size;
  }
  return flat;
}

/// A layout enumerated from its bases: the image of every input index, each
/// the XOR of the bases of its set bits.
struct Table {
  DimSizes ins, outs;
  std::vector<Coord> images;
  const Coord &operator()(const Coord &in) const {
    return images[fromNamed(in, ins)];
  }
  int64_t numInputs() const { return int64_t(images.size()); }
  Coord input(int64_t flat) const { return toNamed(flat, ins); }
};

inline Table tabulate(const LinearLayout &layout) {
  Table table{layout.getInDims(), layout.getOutDims(), {}};
  LinearLayout::BasesT bases = layout.getBases();
  for (int64_t flat = 0; flat < totalSize(table.ins); ++flat) {
    Coord in = toNamed(flat, table.ins), out;
    for (const auto &dim : table.outs)
      out[dim.first] = 0;
    for (const auto &[inDim, dimBases] : bases)
      for (size_t bit = 0; bit < dimBases.size(); ++bit)
        if (lookup(in, inDim) >> bit & 1)
          for (size_t o = 0; o < table.outs.size(); ++o)
            out[table.outs[o].first] ^= dimBases[bit][o];
    table.images.push_back(out);
  }
  return table;
}

/// layout.apply() on named values, as named values.
inline Coord applied(const LinearLayout &layout, const Coord &in) {
  std::vector<std::pair<llvm::StringRef, int32_t>> args;
  for (const auto &[name, value] : in)
    if (layout.hasInDim(name))
      args.emplace_back(name, value);
  Coord out;
  for (const auto &[name, value] : layout.apply(args))
    out[name] = value;
  return out;
}

/// Checks `layout` against `expected` at every input index.
inline void expectMap(const LinearLayout &layout,
                      const std::function<Coord(const Coord &)> &expected) {
  Table table = tabulate(layout);
  int failures = 0;
  for (int64_t flat = 0; flat < table.numInputs() && failures < 5; ++flat) {
    Coord in = table.input(flat);
    Coord want = expected(in);
    if (applied(layout, in) != want || table.images[flat] != want) {
      ++failures;
      std::string text;
      for (const auto &[name, value] : in)
        text += name + "=" + std::to_string(value) + " ";
      ADD_FAILURE() << "at " << text << "\n" << layout.toString();
    }
  }
}

inline std::set<int64_t> imageOf(const Table &table) {
  std::set<int64_t> image;
  for (const Coord &out : table.images)
    image.insert(fromNamed(out, table.outs));
  return image;
}

/// A tile layout from its register, lane and warp bases, over output
/// dimensions dim0, dim1, ... of `shape`.
inline LinearLayout tile(std::vector<std::vector<int32_t>> registers,
                         std::vector<std::vector<int32_t>> lanes,
                         std::vector<std::vector<int32_t>> warps,
                         std::vector<int32_t> shape) {
  LinearLayout::DimSizes outs;
  for (size_t dim = 0; dim < shape.size(); ++dim)
    outs.push_back({"dim" + std::to_string(dim), shape[dim]});
  return LinearLayout({{"register", std::move(registers)},
                       {"lane", std::move(lanes)},
                       {"warp", std::move(warps)}},
                      outs);
}

} // namespace tk::test

#endif // TK_TESTS_UNIT_LINEARLAYOUTTESTSUPPORT_H_
