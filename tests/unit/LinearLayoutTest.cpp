//===- LinearLayoutTest.cpp - tk::LinearLayout against enumeration --------===//
//
// Every operation of tk::LinearLayout is checked against brute force on
// small shapes: layouts drawn at random (fixed seeds) are enumerated index by
// index, and each result is compared with what the definitions give from the
// operands' bases, computed without the class's algebra
// (LinearLayoutTestSupport.h). The presets are checked in
// LayoutPresetsTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "LinearLayoutTestSupport.h"

#include "tk/core/Layout/LayoutPresets.h"
#include "tk/core/Layout/LinearLayout.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/bit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <tuple>

namespace {

using namespace tk::test;
using tk::ConversionKind;
using tk::LinearLayout;

//===----------------------------------------------------------------------===//
// Random layouts
//===----------------------------------------------------------------------===//

/// Layouts drawn from a fixed seed: random bases, or built from columns to
/// be invertible, surjective, injective or vectorised.
struct Gen {
  explicit Gen(unsigned seed) : rng(seed) {}
  std::mt19937 rng;

  int uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  }
  bool coin(double p) { return std::bernoulli_distribution(p)(rng); }

  /// `count` distinct names of `pool`, in random order, of 2^0..2^maxLog2.
  DimSizes dims(std::vector<std::string> pool, int count, int maxLog2) {
    std::shuffle(pool.begin(), pool.end(), rng);
    DimSizes result;
    for (int i = 0; i < count; ++i)
      result.emplace_back(pool[i], 1 << uniform(0, maxLog2));
    return result;
  }

  /// `bits` bits over `names` in order, split at random.
  DimSizes split(int bits, const std::vector<std::string> &names) {
    std::vector<int> logs(names.size(), 0);
    for (int i = 0; i < bits; ++i)
      ++logs[uniform(0, int(names.size()) - 1)];
    DimSizes result;
    for (size_t i = 0; i < names.size(); ++i)
      result.emplace_back(names[i], 1 << logs[i]);
    return result;
  }

  std::vector<std::string> names(std::vector<std::string> pool, int count) {
    std::shuffle(pool.begin(), pool.end(), rng);
    pool.resize(count);
    return pool;
  }

  LinearLayout random(const DimSizes &ins, const DimSizes &outs,
                      double zero = 0.2) {
    LinearLayout::BasesT bases;
    for (const auto &[name, size] : ins) {
      std::vector<std::vector<int32_t>> dimBases;
      for (int32_t bit = 1; bit < size; bit *= 2) {
        std::vector<int32_t> basis;
        bool isZero = coin(zero);
        for (const auto &out : outs)
          basis.push_back(isZero ? 0 : uniform(0, out.second - 1));
        dimBases.push_back(basis);
      }
      bases.emplace_back(name, dimBases);
    }
    return take(LinearLayout::create(bases, outs));
  }

  /// A layout whose columns (flat outputs, one per input bit) are `columns`.
  static LinearLayout fromColumns(const DimSizes &ins, const DimSizes &outs,
                                  const std::vector<int64_t> &columns) {
    LinearLayout::BasesT bases;
    size_t next = 0;
    for (const auto &[name, size] : ins) {
      std::vector<std::vector<int32_t>> dimBases;
      for (int32_t bit = 1; bit < size; bit *= 2) {
        Coord value = toNamed(columns[next++], outs);
        std::vector<int32_t> basis;
        for (const auto &out : outs)
          basis.push_back(value[out.first]);
        dimBases.push_back(basis);
      }
      bases.emplace_back(name, dimBases);
    }
    EXPECT_EQ(next, columns.size());
    return take(LinearLayout::create(bases, outs));
  }

  /// The columns of a random invertible n x n matrix over GF(2).
  std::vector<int64_t> invertibleColumns(int n) {
    std::vector<int64_t> columns;
    for (int i = 0; i < n; ++i)
      columns.push_back(int64_t(1) << i);
    std::shuffle(columns.begin(), columns.end(), rng);
    for (int step = 0; n > 1 && step < 3 * n; ++step) {
      int a = uniform(0, n - 1), b = uniform(0, n - 1);
      if (a != b)
        columns[a] ^= columns[b];
    }
    return columns;
  }

  int64_t combination(const std::vector<int64_t> &columns) {
    int64_t value = 0;
    for (int64_t column : columns)
      if (coin(0.5))
        value ^= column;
    return value;
  }

  enum Family { Random, Invertible, Surjective, Injective, Vectorised };
  static constexpr int kNumFamilies = 5;

  /// A layout of `family` over inputs named from `inPool`, outputs from
  /// `outPool`.
  LinearLayout layout(int family, const std::vector<std::string> &inPool,
                      const std::vector<std::string> &outPool) {
    int numIns = uniform(1, std::min<int>(3, inPool.size()));
    int numOuts = uniform(1, std::min<int>(2, outPool.size()));
    if (family == Random)
      return random(dims(inPool, numIns, 3), dims(outPool, numOuts, 4));
    DimSizes outs = dims(outPool, numOuts, 4);
    int bits = 0;
    for (const auto &out : outs)
      bits += llvm::countr_zero(uint32_t(out.second));
    std::vector<int64_t> columns = invertibleColumns(bits);
    if (family == Surjective)
      for (int extra = uniform(1, 3); extra > 0; --extra)
        columns.insert(columns.begin() + uniform(0, int(columns.size())),
                       combination(columns));
    if (family == Injective) {
      std::shuffle(columns.begin(), columns.end(), rng);
      columns.resize(uniform(0, bits));
    }
    if (family == Vectorised) {
      // The first input's low bits step the flat output 1, 2, 4, ...; the
      // other columns are random and often clear of those bits.
      int width = uniform(0, std::min(bits, 3));
      columns.clear();
      for (int i = 0; i < width; ++i)
        columns.push_back(int64_t(1) << i);
      for (int extra = uniform(0, 5); extra > 0; --extra)
        columns.push_back(
            (int64_t(uniform(0, (1 << bits) - 1)) << uniform(0, 2)) &
            ((int64_t(1) << bits) - 1));
      std::vector<std::string> ins = names(inPool, numIns);
      DimSizes inDims = split(int(columns.size()) - width, ins);
      inDims[0].second <<= width;
      return fromColumns(inDims, outs, columns);
    }
    return fromColumns(split(int(columns.size()), names(inPool, numIns)), outs,
                       columns);
  }
};

const std::vector<std::string> kInPool = {"a", "b", "c"};
const std::vector<std::string> kOutPool = {"x", "y", "z"};
constexpr int kSeeds = 300;

/// Runs `check` on layouts of every family for kSeeds seeds.
void forEachLayout(
    const std::function<void(Gen &, const LinearLayout &)> &check,
    unsigned salt = 0) {
  for (int seed = 0; seed < kSeeds; ++seed)
    for (int family = 0; family < Gen::kNumFamilies; ++family) {
      Gen gen(seed * 7919 + family * 31 + salt);
      LinearLayout layout = gen.layout(family, kInPool, kOutPool);
      SCOPED_TRACE("seed " + std::to_string(seed) + " family " +
                   std::to_string(family) + "\n" + layout.toString());
      check(gen, layout);
    }
}

//===----------------------------------------------------------------------===//
// Construction and queries
//===----------------------------------------------------------------------===//

TEST(LinearLayoutTest, KeepsWhatItIsBuiltFrom) {
  LinearLayout layout({{"register", {{0, 1}, {8, 0}}},
                       {"lane", {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}},
                       {"warp", {}}},
                      {{"dim0", 16}, {"dim1", 8}});
  EXPECT_EQ(layout.getInDimNames(),
            (std::vector<std::string>{"register", "lane", "warp"}));
  EXPECT_EQ(layout.getOutDimNames(),
            (std::vector<std::string>{"dim0", "dim1"}));
  EXPECT_EQ(layout.getInDimSize("register"), 4);
  EXPECT_EQ(layout.getInDimSizeLog2("lane"), 5);
  EXPECT_EQ(layout.getInDimSize("warp"), 1);
  EXPECT_EQ(layout.getOutDimSize("dim0"), 16);
  EXPECT_EQ(layout.getOutDimSizeLog2("dim1"), 3);
  EXPECT_EQ(layout.getTotalInDimSize(), 128);
  EXPECT_EQ(layout.getTotalOutDimSizeLog2(), 7);
  EXPECT_EQ(layout.getBasis("lane", 2), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(layout.getBasis("register", 1, "dim0"), 8);
  EXPECT_EQ(layout.getBases()[1].second[4], (std::vector<int32_t>{4, 0}));
  EXPECT_EQ(
      layout.apply({{"register", 3}, {"lane", 5}}),
      (std::vector<std::pair<std::string, int32_t>>{{"dim0", 9}, {"dim1", 3}}));
  EXPECT_EQ(layout.toString(), "register (4): [0, 1] [8, 0]\n"
                               "lane (32): [0, 2] [0, 4] [1, 0] [2, 0] [4, 0]\n"
                               "warp (1):\n"
                               "-> dim0 (16), dim1 (8)\n");
  EXPECT_EQ(LinearLayout().toString(), "-> (no outputs)\n");
}

TEST(LinearLayoutTest, CreateSaysWhatIsWrong) {
  auto problem = [](LinearLayout::BasesT bases, DimSizes outs) {
    return errorOf(LinearLayout::create(std::move(bases), std::move(outs)));
  };
  EXPECT_NE(problem({{"r", {{1}}}}, {{"x", 3}}).find("power of two"),
            std::string::npos);
  EXPECT_NE(problem({{"r", {{4}}}}, {{"x", 4}}).find("expected 0 to 3"),
            std::string::npos);
  EXPECT_NE(problem({{"r", {{1, 0}}}}, {{"x", 4}}).find("one per output"),
            std::string::npos);
  EXPECT_NE(problem({{"r", {{1}}}, {"r", {}}}, {{"x", 4}}).find("twice"),
            std::string::npos);
  EXPECT_NE(problem({{"r", {{-1}}}}, {{"x", 4}}).find("expected 0 to 3"),
            std::string::npos);
  EXPECT_NE(problem({}, {{"x", 4}, {"x", 2}}).find("twice"), std::string::npos);
  EXPECT_TRUE(bool(LinearLayout::create({{"r", {{3}, {0}}}}, {{"x", 4}})));
}

TEST(LinearLayoutTest, BuildersAndEquality) {
  LinearLayout identity = LinearLayout::identity1D(8, "lane", "dim1");
  expectMap(identity, [](const Coord &in) {
    return Coord{{"dim1", lookup(in, "lane")}};
  });
  EXPECT_TRUE(identity.isInvertible());
  LinearLayout zeros = LinearLayout::zeros1D(4, "warp", "dim0");
  expectMap(zeros, [](const Coord &) { return Coord{{"dim0", 0}}; });
  EXPECT_EQ(zeros.getOutDimSize("dim0"), 1);
  EXPECT_EQ(LinearLayout::zeros1D(4, "warp", "dim0", 8).getOutDimSize("dim0"),
            8);
  EXPECT_EQ(LinearLayout::empty().getNumInDims(), 0u);
  EXPECT_TRUE(LinearLayout::empty().isInvertible());

  EXPECT_EQ(identity, LinearLayout({{"lane", {{1}, {2}, {4}}}}, {{"dim1", 8}}));
  EXPECT_NE(identity, LinearLayout({{"lane", {{1}, {4}, {2}}}}, {{"dim1", 8}}));
  EXPECT_NE(identity,
            LinearLayout({{"lane", {{1}, {2}, {4}}}}, {{"dim1", 16}}));
  EXPECT_NE(identity, LinearLayout::identity1D(8, "lane", "dim0"));
  LinearLayout twoDims({{"a", {{1, 0}}}, {"b", {{0, 1}}}},
                       {{"x", 2}, {"y", 2}});
  EXPECT_NE(twoDims, twoDims.transposeIns({"b", "a"}));
  EXPECT_EQ(twoDims, twoDims.transposeIns({"b", "a"}).transposeIns({"a", "b"}));

  // Equal layouts hash alike (they are uniqued as #tkw.linear); these
  // unequal ones differ in one basis, one size, one name or one order.
  EXPECT_EQ(
      hash_value(identity),
      hash_value(LinearLayout({{"lane", {{1}, {2}, {4}}}}, {{"dim1", 8}})));
  for (const LinearLayout &other :
       {LinearLayout({{"lane", {{1}, {4}, {2}}}}, {{"dim1", 8}}),
        LinearLayout({{"lane", {{1}, {2}, {4}}}}, {{"dim1", 16}}),
        LinearLayout::identity1D(8, "lane", "dim0"),
        LinearLayout::identity1D(8, "warp", "dim1")})
    EXPECT_NE(hash_value(identity), hash_value(other)) << other.toString();
  EXPECT_NE(hash_value(twoDims), hash_value(twoDims.transposeIns({"b", "a"})));
}

TEST(LinearLayoutTest, ApplyIsTheXorOfTheBases) {
  forEachLayout([](Gen &, const LinearLayout &layout) {
    Table table = tabulate(layout);
    for (int64_t flat = 0; flat < table.numInputs(); ++flat) {
      Coord in = table.input(flat);
      ASSERT_EQ(applied(layout, in), table.images[flat]);
      ASSERT_EQ(int64_t(layout.applyFlat(flat)),
                fromNamed(table.images[flat], table.outs));
    }
  });
}

TEST(LinearLayoutTest, InjectiveSurjectiveAgainstEnumeration) {
  std::array<int, 4> seen{};
  forEachLayout([&](Gen &, const LinearLayout &layout) {
    Table table = tabulate(layout);
    std::set<int64_t> image = imageOf(table);
    bool injective = int64_t(image.size()) == table.numInputs();
    bool surjective = int64_t(image.size()) == totalSize(table.outs);
    EXPECT_EQ(layout.isInjective(), injective);
    EXPECT_EQ(layout.isSurjective(), surjective);
    EXPECT_EQ(layout.isInvertible(), injective && surjective);
    ++seen[injective * 2 + surjective];
  });
  // Every combination occurred often enough to matter.
  for (int count : seen)
    EXPECT_GE(count, 20);
}

TEST(LinearLayoutTest, FreeVariablesAgainstEnumeration) {
  forEachLayout([](Gen &, const LinearLayout &layout) {
    Table table = tabulate(layout);
    // Flat bit p is free when some index using only lower flat bits has the
    // same image as the index with only bit p.
    int64_t position = 0;
    for (const auto &[name, mask] : layout.getFreeVariableMasks()) {
      int32_t expected = 0;
      for (int32_t bit = 0; (int64_t(1) << bit) < layout.getInDimSize(name);
           ++bit, ++position) {
        const Coord &target = table.images[int64_t(1) << position];
        for (int64_t lower = 0; lower < (int64_t(1) << position); ++lower)
          if (table.images[lower] == target) {
            expected |= 1 << bit;
            break;
          }
      }
      EXPECT_EQ(mask, expected) << name;
    }
  });
}

TEST(LinearLayoutTest, ConsecutiveInOutAgainstEnumeration) {
  std::map<int32_t, int> widths;
  forEachLayout([&](Gen &, const LinearLayout &layout) {
    Table table = tabulate(layout);
    // The widest aligned run of the first input that lands on consecutive
    // flat outputs, in order, from every index.
    int32_t expected = 1;
    std::string first = table.ins[0].first;
    for (int32_t width = 2; width <= table.ins[0].second; width *= 2) {
      bool consecutive = true;
      for (int64_t flat = 0; flat < table.numInputs() && consecutive; ++flat) {
        Coord in = table.input(flat);
        if (in[first] % width)
          continue;
        int64_t base = fromNamed(table(in), table.outs);
        for (int32_t step = 1; step < width && consecutive; ++step) {
          Coord next = in;
          next[first] += step;
          consecutive = fromNamed(table(next), table.outs) == base + step;
        }
      }
      if (consecutive)
        expected = width;
    }
    EXPECT_EQ(layout.getNumConsecutiveInOut(), expected);
    ++widths[expected];
  });
  EXPECT_GE(widths[1], 20);
  EXPECT_GE(widths[2], 10);
  EXPECT_GE(widths[4], 20);
  EXPECT_GE(widths[8], 5);
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

TEST(LinearLayoutTest, ProductAgainstEnumeration) {
  for (int seed = 0; seed < 400; ++seed) {
    Gen gen(seed);
    LinearLayout lhs = gen.random(gen.dims(kInPool, gen.uniform(1, 2), 3),
                                  gen.dims(kOutPool, gen.uniform(1, 2), 3));
    LinearLayout rhs = gen.random(gen.dims(kInPool, gen.uniform(1, 2), 3),
                                  gen.dims(kOutPool, gen.uniform(1, 2), 3));
    SCOPED_TRACE(lhs.toString() + "times\n" + rhs.toString());
    LinearLayout product = lhs * rhs;
    Table left = tabulate(lhs), right = tabulate(rhs);
    // Dimensions: lhs's, then rhs's new ones; shared ones multiply.
    auto combine = [](const DimSizes &a, const DimSizes &b) {
      DimSizes result = a;
      for (const auto &dim : b) {
        auto found =
            std::find_if(result.begin(), result.end(),
                         [&](const auto &d) { return d.first == dim.first; });
        if (found == result.end())
          result.push_back(dim);
        else
          found->second *= dim.second;
      }
      return result;
    };
    ASSERT_EQ(product.getInDims(), combine(left.ins, right.ins));
    ASSERT_EQ(product.getOutDims(), combine(left.outs, right.outs));
    expectMap(product, [&](const Coord &in) {
      Coord lhsIn, rhsIn;
      for (const auto &[name, size] : left.ins)
        lhsIn[name] = lookup(in, name) % size;
      // A shared input's high bits are rhs's.
      for (const auto &dim : right.ins) {
        const std::string &name = dim.first;
        rhsIn[name] = lhs.hasInDim(name)
                          ? lookup(in, name) / lhs.getInDimSize(name)
                          : lookup(in, name);
      }
      Coord out;
      for (const auto &[name, value] : left(lhsIn))
        out[name] = value;
      for (const auto &[name, value] : right(rhsIn))
        out[name] |=
            lhs.hasOutDim(name) ? value * lhs.getOutDimSize(name) : value;
      return out;
    });
  }
  // rhs's bits above lhs's: 4 registers of 8 lanes, consecutive in dim1.
  LinearLayout rows = LinearLayout::identity1D(4, "register", "dim1") *
                      LinearLayout::identity1D(8, "lane", "dim1");
  EXPECT_EQ(rows.apply({{"register", 1}, {"lane", 2}})[0].second, 9);
}

TEST(LinearLayoutTest, ComposeAgainstEnumeration) {
  for (int seed = 0; seed < 400; ++seed) {
    Gen gen(seed);
    LinearLayout inner = gen.random(gen.dims(kInPool, gen.uniform(1, 3), 3),
                                    gen.dims({"x", "y"}, gen.uniform(1, 2), 3));
    // outer takes inner's outputs (as large or larger), maybe one more.
    DimSizes outerIns;
    for (const auto &[name, size] : inner.getOutDims())
      outerIns.emplace_back(name, size << gen.uniform(0, 1));
    if (gen.coin(0.3))
      outerIns.emplace_back("z", 2);
    std::shuffle(outerIns.begin(), outerIns.end(), gen.rng);
    LinearLayout outer =
        gen.random(outerIns, gen.dims({"p", "q"}, gen.uniform(1, 2), 4));
    SCOPED_TRACE(inner.toString() + "then\n" + outer.toString());
    LinearLayout composed = take(inner.compose(outer));
    Table first = tabulate(inner), second = tabulate(outer);
    ASSERT_EQ(composed.getInDims(), first.ins);
    ASSERT_EQ(composed.getOutDims(), second.outs);
    expectMap(composed, [&](const Coord &in) { return second(first(in)); });
  }
  LinearLayout inner = LinearLayout::identity1D(8, "r", "x");
  EXPECT_NE(errorOf(inner.compose(LinearLayout::identity1D(8, "y", "p")))
                .find("no input dimension 'x'"),
            std::string::npos);
  EXPECT_NE(errorOf(inner.compose(LinearLayout::identity1D(4, "x", "p")))
                .find("more than the outer"),
            std::string::npos);
}

TEST(LinearLayoutTest, InvertAgainstEnumeration) {
  int inverted = 0;
  forEachLayout([&](Gen &, const LinearLayout &layout) {
    Table table = tabulate(layout);
    std::set<int64_t> image = imageOf(table);
    bool invertible = int64_t(image.size()) == table.numInputs() &&
                      int64_t(image.size()) == totalSize(table.outs);
    llvm::Expected<LinearLayout> inverse = layout.invert();
    ASSERT_EQ(bool(inverse), invertible);
    if (!inverse) {
      llvm::consumeError(inverse.takeError());
      return;
    }
    ++inverted;
    EXPECT_EQ(inverse->getInDims(), table.outs);
    EXPECT_EQ(inverse->getOutDims(), table.ins);
    for (int64_t flat = 0; flat < table.numInputs(); ++flat)
      ASSERT_EQ(applied(*inverse, table.images[flat]), table.input(flat));
    EXPECT_EQ(take(inverse->invert()), layout);
  });
  EXPECT_GE(inverted, 100);
}

TEST(LinearLayoutTest, InvertAndComposeAgainstEnumeration) {
  int composed = 0, refused = 0;
  forEachLayout([&](Gen &gen, const LinearLayout &layout) {
    // `other` over the same outputs, reordered, some of them smaller.
    DimSizes outs = layout.getOutDims();
    std::shuffle(outs.begin(), outs.end(), gen.rng);
    for (auto &out : outs)
      if (gen.coin(0.3))
        out.second = std::max(1, out.second / 2);
    Table mine = tabulate(layout);
    std::set<int64_t> image = imageOf(mine);
    LinearLayout other =
        gen.coin(0.5)
            ? gen.random(gen.dims({"u", "v"}, gen.uniform(1, 2), 3), outs)
            // Within the image: this layout after some map into its inputs.
            : take(gen.random(gen.dims({"u", "v"}, gen.uniform(1, 2), 3),
                              layout.getInDims())
                       .compose(layout));
    SCOPED_TRACE("other\n" + other.toString());
    Table theirs = tabulate(other);
    bool held = true;
    for (const Coord &element : theirs.images)
      held &= image.count(fromNamed(element, mine.outs)) > 0;
    llvm::Expected<LinearLayout> sources = layout.invertAndCompose(other);
    ASSERT_EQ(bool(sources), held);
    if (!sources) {
      ++refused;
      EXPECT_NE(llvm::toString(sources.takeError()).find("holds no element"),
                std::string::npos);
      return;
    }
    ++composed;
    ASSERT_EQ(sources->getInDims(), theirs.ins);
    ASSERT_EQ(sources->getOutDims(), mine.ins);
    // this(C(x)) == other(x), and C never sets a free variable.
    auto masks = layout.getFreeVariableMasks();
    for (int64_t flat = 0; flat < theirs.numInputs(); ++flat) {
      Coord source = applied(*sources, theirs.input(flat));
      Coord element = mine(source), wanted = theirs.images[flat];
      for (const auto &[name, value] : element)
        ASSERT_EQ(value, lookup(wanted, name)) << name;
      for (const auto &[name, mask] : masks)
        ASSERT_EQ(source[name] & mask, 0) << name;
    }
  });
  EXPECT_GE(composed, 150);
  EXPECT_GE(refused, 50);
}

TEST(LinearLayoutTest, PseudoinvertAgainstEnumeration) {
  int inverted = 0;
  forEachLayout([&](Gen &, const LinearLayout &layout) {
    Table table = tabulate(layout);
    bool surjective = int64_t(imageOf(table).size()) == totalSize(table.outs);
    llvm::Expected<LinearLayout> inverse = layout.pseudoinvert();
    ASSERT_EQ(bool(inverse), surjective);
    if (!inverse) {
      EXPECT_NE(llvm::toString(inverse.takeError()).find("surjective"),
                std::string::npos);
      return;
    }
    ++inverted;
    for (int64_t flat = 0; flat < totalSize(table.outs); ++flat) {
      Coord element = toNamed(flat, table.outs);
      ASSERT_EQ(table(applied(*inverse, element)), element);
    }
  });
  EXPECT_GE(inverted, 150);
}

TEST(LinearLayoutTest, TransposeAgainstEnumeration) {
  forEachLayout([](Gen &gen, const LinearLayout &layout) {
    std::vector<std::string> ins = layout.getInDimNames();
    std::vector<std::string> outs = layout.getOutDimNames();
    std::shuffle(ins.begin(), ins.end(), gen.rng);
    std::shuffle(outs.begin(), outs.end(), gen.rng);
    Table table = tabulate(layout);
    LinearLayout transposed = layout.transposeIns(ins).transposeOuts(outs);
    EXPECT_EQ(transposed.getInDimNames(), ins);
    EXPECT_EQ(transposed.getOutDimNames(), outs);
    expectMap(transposed, [&](const Coord &in) { return table(in); });
  });
}

TEST(LinearLayoutTest, ReshapeAgainstEnumeration) {
  forEachLayout([](Gen &gen, const LinearLayout &layout) {
    Table table = tabulate(layout);
    DimSizes newIns = gen.split(layout.getTotalInDimSizeLog2(),
                                gen.names({"p", "q", "s"}, gen.uniform(1, 3)));
    DimSizes newOuts = gen.split(layout.getTotalOutDimSizeLog2(),
                                 gen.names({"m", "n"}, gen.uniform(1, 2)));
    LinearLayout reshaped =
        take(take(layout.reshapeIns(newIns)).reshapeOuts(newOuts));
    EXPECT_EQ(reshaped.getInDims(), newIns);
    EXPECT_EQ(reshaped.getOutDims(), newOuts);
    // Flatten (first dimension fastest) and split again on both sides.
    expectMap(reshaped, [&](const Coord &in) {
      Coord old = toNamed(fromNamed(in, newIns), table.ins);
      return toNamed(fromNamed(table(old), table.outs), newOuts);
    });
  });
  LinearLayout layout = LinearLayout::identity1D(16, "r", "x");
  EXPECT_NE(errorOf(layout.reshapeIns({{"p", 4}, {"q", 2}})).find("2^3"),
            std::string::npos);
  EXPECT_NE(errorOf(layout.reshapeOuts({{"m", 6}})).find("power of two"),
            std::string::npos);
}

TEST(LinearLayoutTest, SublayoutAgainstEnumeration) {
  int zero = 0, nonzero = 0;
  forEachLayout([&](Gen &gen, const LinearLayout &layout) {
    std::vector<std::string> ins = gen.names(
        layout.getInDimNames(), gen.uniform(0, int(layout.getNumInDims())));
    std::vector<std::string> outs = gen.names(
        layout.getOutDimNames(), gen.uniform(0, int(layout.getNumOutDims())));
    Table table = tabulate(layout);
    LinearLayout sub = layout.sublayout(ins, outs);
    // Dimensions keep the layout's order.
    DimSizes subIns, subOuts;
    for (const auto &dim : table.ins)
      if (llvm::is_contained(ins, dim.first))
        subIns.push_back(dim);
    for (const auto &dim : table.outs)
      if (llvm::is_contained(outs, dim.first))
        subOuts.push_back(dim);
    ASSERT_EQ(sub.getInDims(), subIns);
    ASSERT_EQ(sub.getOutDims(), subOuts);
    bool allZero = true;
    expectMap(sub, [&](const Coord &in) {
      Coord out;
      for (const auto &dim : subOuts) {
        out[dim.first] = lookup(table(in), dim.first);
        allZero &= out[dim.first] == 0;
      }
      return out;
    });
    EXPECT_EQ(layout.sublayoutIsZero(ins, outs), allZero);
    ++(allZero ? zero : nonzero);
  });
  EXPECT_GE(zero, 50);
  EXPECT_GE(nonzero, 50);
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

/// What a conversion must move, by its definition: for each index of `to`,
/// where in `from` its element is (same index, same thread, same warp,
/// anywhere), or nothing when an element is not in `from`.
std::optional<ConversionKind> bruteConversion(const LinearLayout &from,
                                              const LinearLayout &to) {
  Table source = tabulate(from), target = tabulate(to);
  std::set<std::tuple<int32_t, int32_t, int64_t>> inThread;
  std::set<std::pair<int32_t, int64_t>> inWarp;
  std::set<int64_t> anywhere;
  for (int64_t flat = 0; flat < source.numInputs(); ++flat) {
    Coord in = source.input(flat);
    int64_t element = fromNamed(source.images[flat], source.outs);
    inThread.insert({lookup(in, "lane"), lookup(in, "warp"), element});
    inWarp.insert({lookup(in, "warp"), element});
    anywhere.insert(element);
  }
  bool sameRegisters =
      from.getInDimSize("register") == to.getInDimSize("register");
  int level = 0;
  for (int64_t flat = 0; flat < target.numInputs(); ++flat) {
    Coord in = target.input(flat);
    int64_t element = fromNamed(target.images[flat], source.outs);
    if (!anywhere.count(element))
      return std::nullopt;
    if (sameRegisters && fromNamed(source(in), source.outs) == element)
      continue;
    if (inThread.count({lookup(in, "lane"), lookup(in, "warp"), element}))
      level = std::max(level, 1);
    else if (inWarp.count({lookup(in, "warp"), element}))
      level = std::max(level, 2);
    else
      level = 3;
  }
  return ConversionKind(level);
}

TEST(LinearLayoutTest, ConversionKindAgainstEnumeration) {
  std::map<std::string, int> seen;
  for (int seed = 0; seed < 300; ++seed)
    for (int mode = 0; mode < 6; ++mode) {
      Gen gen(seed * 13 + mode);
      DimSizes outs = gen.dims({"x", "y"}, gen.uniform(1, 2), 3);
      // Hardware dimensions over outputs `outs`: random columns (which
      // often miss elements; always for mode 5, whose `to` is random),
      // invertible, or surjective with copies.
      int family = mode == 5 ? 0 : gen.uniform(0, 2);
      int outBits = 0;
      for (const auto &out : outs)
        outBits += llvm::countr_zero(uint32_t(out.second));
      std::vector<int64_t> columns;
      if (family == 0)
        for (int i = gen.uniform(1, 8); i > 0; --i)
          columns.push_back(gen.uniform(0, (1 << outBits) - 1));
      else
        columns = gen.invertibleColumns(outBits);
      if (family == 2)
        for (int extra = gen.uniform(1, 3); extra > 0; --extra)
          columns.insert(columns.begin() + gen.uniform(0, int(columns.size())),
                         gen.combination(columns));
      DimSizes ins =
          gen.split(int(columns.size()), {"register", "lane", "warp"});
      LinearLayout from = Gen::fromColumns(ins, outs, columns);
      // `to` keeps lanes and warps and mixes bases as the mode says.
      std::vector<int64_t> regs, lanes, warps;
      size_t next = 0;
      for (auto [list, dim] :
           {std::pair{&regs, 0}, std::pair{&lanes, 1}, std::pair{&warps, 2}})
        for (int32_t bit = 1; bit < ins[dim].second; bit *= 2)
          list->push_back(columns[next++]);
      auto mixed = [&](std::vector<int64_t> base,
                       const std::vector<int64_t> &with) {
        for (int64_t &column : base)
          column ^= gen.combination(with);
        return base;
      };
      std::vector<int64_t> all = regs;
      all.insert(all.end(), lanes.begin(), lanes.end());
      std::vector<int64_t> regsAndLanes = all;
      all.insert(all.end(), warps.begin(), warps.end());
      std::vector<int64_t> toRegs = regs, toLanes = lanes, toWarps = warps;
      if (mode == 1) {
        std::shuffle(toRegs.begin(), toRegs.end(), gen.rng);
        if (gen.coin(0.5))
          toRegs.push_back(gen.combination(regs));
      } else if (mode == 2) {
        toRegs = mixed(toRegs, regsAndLanes);
        toLanes = mixed(toLanes, regsAndLanes);
        toWarps = mixed(toWarps, regs);
      } else if (mode == 3) {
        toRegs = mixed(toRegs, all);
        toLanes = mixed(toLanes, all);
        toWarps = mixed(toWarps, all);
      } else if (mode == 4 && !lanes.empty() && !warps.empty()) {
        std::swap(toLanes[gen.uniform(0, int(lanes.size()) - 1)],
                  toWarps[gen.uniform(0, int(warps.size()) - 1)]);
      } else if (mode == 5) {
        for (auto *list : {&toRegs, &toLanes, &toWarps})
          for (int64_t &column : *list)
            column = gen.uniform(0, (1 << outBits) - 1);
      }
      std::vector<int64_t> toColumns = toRegs;
      toColumns.insert(toColumns.end(), toLanes.begin(), toLanes.end());
      toColumns.insert(toColumns.end(), toWarps.begin(), toWarps.end());
      DimSizes toIns = ins;
      toIns[0].second = 1 << toRegs.size();
      // Outputs listed the other way round: matched by name.
      LinearLayout to = Gen::fromColumns(toIns, outs, toColumns);
      std::vector<std::string> reversed = to.getOutDimNames();
      std::reverse(reversed.begin(), reversed.end());
      to = to.transposeOuts(reversed);
      SCOPED_TRACE("from\n" + from.toString() + "to\n" + to.toString());
      std::optional<ConversionKind> expected = bruteConversion(from, to);
      llvm::Expected<ConversionKind> kind = tk::classifyConversion(from, to);
      if (!expected) {
        ASSERT_FALSE(bool(kind));
        EXPECT_NE(llvm::toString(kind.takeError()).find("holds no element"),
                  std::string::npos);
        ++seen["error"];
        continue;
      }
      ASSERT_TRUE(bool(kind)) << llvm::toString(kind.takeError());
      EXPECT_EQ(*kind, *expected)
          << tk::stringifyConversionKind(*expected).str();
      ++seen[tk::stringifyConversionKind(*kind).str()];
    }
  for (const char *kind :
       {"none", "registers", "shuffles", "shared-memory", "error"})
    EXPECT_GE(seen[kind], 40) << kind;
}

TEST(LinearLayoutTest, ConversionKindOfKnownLayouts) {
  LinearLayout mma = tk::mmaSyncM16N8AccumulatorLayout();
  auto kind = [](const LinearLayout &from, const LinearLayout &to) {
    return take(tk::classifyConversion(from, to));
  };
  EXPECT_EQ(kind(mma, mma), ConversionKind::None);
  // mma.sync's accumulator is a blocked layout of pairs.
  LinearLayout blocked =
      take(tk::blockedLayout({16, 8}, {1, 2}, {8, 4}, {1, 1}, {1, 0}));
  EXPECT_EQ(blocked, mma);
  // Its registers' order swapped: within threads.
  LinearLayout swapped = take(
      LinearLayout::create({{"register", {{8, 0}, {0, 1}}},
                            {"lane", {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}},
                            {"warp", {}}},
                           {{"dim0", 16}, {"dim1", 8}}));
  EXPECT_EQ(kind(mma, swapped), ConversionKind::Registers);
  // Lanes along columns first: shuffles.
  LinearLayout columnMajor =
      take(tk::blockedLayout({16, 8}, {2, 1}, {4, 8}, {1, 1}, {0, 1}));
  EXPECT_EQ(kind(mma, columnMajor), ConversionKind::Shuffles);
  // wgmma's rows over four warps against warps over columns: shared memory.
  LinearLayout wgmma = take(tk::wgmmaM64AccumulatorLayout(32));
  LinearLayout warpColumns =
      take(tk::blockedLayout({64, 32}, {1, 4}, {32, 1}, {1, 4}, {1, 0}));
  EXPECT_EQ(kind(wgmma, warpColumns), ConversionKind::SharedMemory);
  EXPECT_EQ(kind(warpColumns, warpColumns), ConversionKind::None);
  // Copies in more registers: the same elements, but not the same layout.
  LinearLayout doubled = mma * LinearLayout::zeros1D(2, "register", "dim0");
  EXPECT_EQ(kind(mma, doubled), ConversionKind::Registers);
  EXPECT_EQ(kind(doubled, mma), ConversionKind::Registers);
  // Elements of another block need distributed shared memory: no kind.
  LinearLayout blocks = LinearLayout::identity1D(4, "register", "dim0") *
                        LinearLayout::identity1D(2, "block", "dim0");
  LinearLayout swappedBlocks = take(LinearLayout::create(
      {{"register", {{2}, {4}}}, {"block", {{1}}}}, {{"dim0", 8}}));
  EXPECT_NE(errorOf(tk::classifyConversion(blocks, swappedBlocks))
                .find("between blocks"),
            std::string::npos);
  // The dimensions must match.
  EXPECT_NE(errorOf(tk::classifyConversion(mma, wgmma)).find("'warp'"),
            std::string::npos);
  EXPECT_NE(errorOf(tk::classifyConversion(
                        mma, LinearLayout::identity1D(128, "offset", "dim0")))
                .find("'offset'"),
            std::string::npos);
}

} // namespace
