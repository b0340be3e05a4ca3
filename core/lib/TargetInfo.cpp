//===- TargetInfo.cpp - target presets and their parsing ------------------===//
//
// The registry of presets (each backend registers its own, from
// backends/<name>/compiler/TargetInfo.cpp), the checks of their matrix
// fragments, and the `name[:key=value]...` spec that pass options use to
// pick one.
//
//===----------------------------------------------------------------------===//

#include "tk/core/TargetInfo.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

using namespace tk;

namespace {

using ET = MatrixElementType;

bool isElementType(mlir::Type type, ET expected, bool allowTF32) {
  switch (expected) {
  case ET::F16:
    return type.isF16();
  case ET::BF16:
    return type.isBF16();
  case ET::TF32:
    return allowTF32 && type.isF32();
  case ET::F32:
    return type.isF32();
  case ET::F64:
    return type.isF64();
  case ET::I8:
    return type.isInteger(8);
  case ET::I32:
    return type.isInteger(32);
  case ET::F8E4M3:
    return llvm::isa<mlir::Float8E4M3FNType>(type);
  case ET::F8E5M2:
    return llvm::isa<mlir::Float8E5M2Type>(type);
  }
  return false;
}

} // namespace

llvm::StringRef tk::stringifyMatrixElementType(MatrixElementType type) {
  switch (type) {
  case ET::F16:
    return "f16";
  case ET::BF16:
    return "bf16";
  case ET::TF32:
    return "tf32";
  case ET::F32:
    return "f32";
  case ET::F64:
    return "f64";
  case ET::I8:
    return "i8";
  case ET::I32:
    return "i32";
  case ET::F8E4M3:
    return "f8E4M3FN";
  case ET::F8E5M2:
    return "f8E5M2";
  }
  return "?";
}

bool MatrixIntrinsic::takes(mlir::Type a, mlir::Type b, mlir::Type acc,
                            bool allowTF32) const {
  return isElementType(a, aType, allowTF32) &&
         isElementType(b, bType, allowTF32) &&
         isElementType(acc, accType, /*allowTF32=*/false);
}

std::optional<std::string>
TargetInfo::workgroupProblem(int64_t numWarps) const {
  if (numWarps <= 0 || !llvm::isPowerOf2_64(numWarps))
    return "num-warps must be a positive power of two, not " +
           std::to_string(numWarps);
  if (numWarps * warpSize > maxThreadsPerBlock)
    return std::to_string(numWarps) + " warps of " + std::to_string(warpSize) +
           " lanes exceed the " + std::to_string(maxThreadsPerBlock) +
           " threads a workgroup of " + name + " may have";
  return std::nullopt;
}

int64_t tk::getSubgroupsForWarps(int64_t numWarps, int64_t subgroupSize,
                                 int64_t maxThreadsPerBlock) {
  numWarps = std::max<int64_t>(numWarps, 1);
  if (subgroupSize <= 0 || subgroupSize >= 32)
    return numWarps;
  return std::max(numWarps, std::min(numWarps * (32 / subgroupSize),
                                     maxThreadsPerBlock / subgroupSize));
}

llvm::SmallVector<const MatrixIntrinsic *>
TargetInfo::findIntrinsics(mlir::Type a, mlir::Type b, mlir::Type acc,
                           bool allowTF32, MatrixScope scope) const {
  llvm::SmallVector<const MatrixIntrinsic *> found;
  for (const MatrixIntrinsic &intrinsic : intrinsics)
    if (intrinsic.scope == scope && intrinsic.takes(a, b, acc, allowTF32))
      found.push_back(&intrinsic);
  return found;
}

const MatrixIntrinsic *TargetInfo::findIntrinsic(llvm::StringRef key) const {
  for (const MatrixIntrinsic &intrinsic : intrinsics)
    if (intrinsic.key() == key)
      return &intrinsic;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Fragments
//===----------------------------------------------------------------------===//

FragmentLayout FragmentLayout::transposed() const {
  auto swapped = [](std::array<int64_t, 2> pair) {
    return std::array<int64_t, 2>{pair[1], pair[0]};
  };
  return FragmentLayout::of(swapped(sizePerLane), swapped(lanesPerWarp),
                            {1 - order[0], 1 - order[1]},
                            swapped(warpsPerFragment));
}

llvm::Expected<MatrixIntrinsic> MatrixIntrinsic::transposedForm() const {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError("%s has no transposed form: %s",
                                   name.c_str(), why.str().c_str());
  };
  if (transposed)
    return fail("it is one");
  if (scope != MatrixScope::Warp || m != n || aType != bType || !aLayout ||
      !bLayout)
    return fail("only a square warp intrinsic whose lanes hold both "
                "operands has one");
  // Exchanging the operands leaves each lane's fragments where they are
  // only where b's fragment is a's transposed.
  llvm::Expected<LinearLayout> a = aLayout->toLinearLayout(m, k);
  llvm::Expected<LinearLayout> b = bLayout->transposed().toLinearLayout(n, k);
  llvm::Expected<LinearLayout> acc = accLayout.toLinearLayout(m, n);
  llvm::Expected<LinearLayout> accT =
      accLayout.transposed().toLinearLayout(n, m);
  if (!a || !b || !acc || !accT) {
    std::string why;
    for (llvm::Expected<LinearLayout> *layout : {&a, &b, &acc, &accT})
      if (!*layout)
        why = llvm::toString(layout->takeError());
    return fail(why);
  }
  if (*a != *b)
    return fail("b's fragment is not a's transposed");
  // The transposed accumulator holds (c, r) in the register, lane and warp
  // that hold (r, c): each basis with its coordinates exchanged.
  LinearLayout::BasesT expected = acc->getBases();
  for (auto &[inDim, bases] : expected)
    for (std::vector<int32_t> &basis : bases)
      std::swap(basis[0], basis[1]);
  if (accT->getBases() != expected)
    return fail("the accumulator's repeats do not transpose");
  MatrixIntrinsic form = *this;
  form.transposed = true;
  form.aLayout = bLayout->transposed();
  form.bLayout = aLayout->transposed();
  form.accLayout = accLayout.transposed();
  return form;
}

llvm::SmallVector<std::array<int64_t, 2>>
FragmentLayout::elementsOf(int64_t warp, int64_t lane, int64_t rows,
                           int64_t cols) const {
  // Coordinates in a grid walked with order[0] fastest.
  auto coordinates = [&](int64_t linear, const std::array<int64_t, 2> &grid) {
    std::array<int64_t, 2> at{};
    at[order[0]] = linear % grid[order[0]];
    at[order[1]] = linear / grid[order[0]] % grid[order[1]];
    return at;
  };
  std::array<int64_t, 2> laneAt = coordinates(lane, lanesPerWarp);
  std::array<int64_t, 2> warpAt = coordinates(warp, warpsPerFragment);
  // The warp's block of the fragment, its lanes' tile and the tile's repeats
  // over the block.
  std::array<int64_t, 2> extent = {rows, cols}, share{}, start{}, tile{},
                         repeats{};
  for (int d = 0; d < 2; ++d) {
    share[d] = std::max<int64_t>(1, extent[d] / warpsPerFragment[d]);
    start[d] = laneAt[d] * sizePerLane[d];
    tile[d] = sizePerLane[d] * lanesPerWarp[d];
    repeats[d] = std::max<int64_t>(1, share[d] / tile[d]);
  }
  llvm::SmallVector<std::array<int64_t, 2>> held;
  // Repeats rows first (mma.sync's a2, a3 are a0, a1 eight rows down), the
  // elements of a block with order[0] fastest.
  for (int64_t rc = 0; rc < repeats[1]; ++rc)
    for (int64_t rr = 0; rr < repeats[0]; ++rr)
      for (int64_t slow = 0; slow < sizePerLane[order[1]]; ++slow)
        for (int64_t fast = 0; fast < sizePerLane[order[0]]; ++fast) {
          std::array<int64_t, 2> inBlock{};
          inBlock[order[0]] = fast;
          inBlock[order[1]] = slow;
          std::array<int64_t, 2> repeat = {rr, rc};
          std::array<int64_t, 2> at{};
          for (int d = 0; d < 2; ++d)
            at[d] = (warpAt[d] * share[d] +
                     (repeat[d] * tile[d] + start[d] + inBlock[d]) % share[d]) %
                    extent[d];
          held.push_back(at);
        }
  return held;
}

int64_t FragmentLayout::elementsPerLane(int64_t rows, int64_t cols) const {
  return static_cast<int64_t>(elementsOf(0, 0, rows, cols).size());
}

llvm::Expected<LinearLayout>
FragmentLayout::toLinearLayout(int64_t rows, int64_t cols) const {
  auto fail = [&](const std::string &why) {
    return llvm::createStringError(
        "the %lldx%lld fragment is not a linear layout: %s", (long long)rows,
        (long long)cols, why.c_str());
  };
  int64_t registers = elementsPerLane(rows, cols);
  for (int64_t size : {rows, cols, registers, numLanes(), numWarps()})
    if (size <= 0 || !llvm::isPowerOf2_64(uint64_t(size)))
      return fail("a size of " + std::to_string(size) + ", not a power of two");
  // Linear maps are fixed by the images of the one-bit indices.
  auto bases = [&](int64_t count, auto element) {
    std::vector<std::vector<int32_t>> out;
    for (int64_t bit = 1; bit < count; bit <<= 1) {
      std::array<int64_t, 2> at = element(bit);
      out.push_back({int32_t(at[0]), int32_t(at[1])});
    }
    return out;
  };
  llvm::SmallVector<std::array<int64_t, 2>> first =
      elementsOf(0, 0, rows, cols);
  LinearLayout::BasesT all = {
      {std::string(kRegisterDim),
       bases(registers, [&](int64_t r) { return first[r]; })},
      {std::string(kLaneDim),
       bases(numLanes(),
             [&](int64_t l) { return elementsOf(0, l, rows, cols)[0]; })},
      {std::string(kWarpDim), bases(numWarps(), [&](int64_t w) {
         return elementsOf(w, 0, rows, cols)[0];
       })}};
  llvm::Expected<LinearLayout> layout = LinearLayout::create(
      std::move(all), {{"dim0", int32_t(rows)}, {"dim1", int32_t(cols)}});
  if (!layout)
    return layout.takeError();
  // The one-bit images fix a linear map; the placement must be that map.
  for (int64_t warp = 0; warp < numWarps(); ++warp)
    for (int64_t lane = 0; lane < numLanes(); ++lane) {
      llvm::SmallVector<std::array<int64_t, 2>> held =
          elementsOf(warp, lane, rows, cols);
      for (int64_t r = 0; r < int64_t(held.size()); ++r) {
        auto at = layout->apply({{kRegisterDim, int32_t(r)},
                                 {kLaneDim, int32_t(lane)},
                                 {kWarpDim, int32_t(warp)}});
        if (at[0].second != held[r][0] || at[1].second != held[r][1])
          return fail(
              "register " + std::to_string(r) + " of lane " +
              std::to_string(lane) + " of warp " + std::to_string(warp) +
              " holds (" + std::to_string(held[r][0]) + ", " +
              std::to_string(held[r][1]) + "), not the XOR of its bits'");
      }
    }
  return layout;
}

/// The first problem of `intrinsic`'s fragments on `target`'s warp.
static std::optional<std::string>
fragmentProblem(const TargetInfo &target, const MatrixIntrinsic &intrinsic) {
  int64_t warps = intrinsic.scope == MatrixScope::Warpgroup ? 4 : 1;
  struct Operand {
    const char *name;
    const FragmentLayout *layout;
    int64_t rows, cols;
    bool isAccumulator;
  };
  auto layoutOf = [](const std::optional<FragmentLayout> &layout) {
    return layout ? &*layout : nullptr;
  };
  for (const Operand &operand : {Operand{"a", layoutOf(intrinsic.aLayout),
                                         intrinsic.m, intrinsic.k, false},
                                 Operand{"b", layoutOf(intrinsic.bLayout),
                                         intrinsic.k, intrinsic.n, false},
                                 Operand{"accumulator", &intrinsic.accLayout,
                                         intrinsic.m, intrinsic.n, true}}) {
    if (!operand.layout)
      continue;
    const FragmentLayout &layout = *operand.layout;
    std::string where =
        target.name + " " + intrinsic.name + " " + operand.name + ": ";
    if (layout.numLanes() != target.warpSize)
      return where + std::to_string(layout.numLanes()) +
             " lanes, but a warp has " + std::to_string(target.warpSize);
    if (layout.numWarps() != warps)
      return where + std::to_string(layout.numWarps()) +
             " warps, but the intrinsic's scope has " + std::to_string(warps);
    // The lanes' tiles repeat and wrap over power-of-two operands, so every
    // element is held; an accumulator must also be held once only (a copy
    // would be a second, diverging sum).
    if (!operand.isAccumulator)
      continue;
    std::vector<int> holders(operand.rows * operand.cols, 0);
    for (int64_t warp = 0; warp < warps; ++warp)
      for (int64_t lane = 0; lane < target.warpSize; ++lane)
        for (auto [row, col] :
             layout.elementsOf(warp, lane, operand.rows, operand.cols))
          ++holders[row * operand.cols + col];
    for (size_t i = 0; i < holders.size(); ++i)
      if (holders[i] != 1)
        return where + std::to_string(holders[i]) + " lanes hold element (" +
               std::to_string(i / operand.cols) + ", " +
               std::to_string(i % operand.cols) + ")";
  }
  return std::nullopt;
}

std::optional<std::string> tk::verifyFragments(const TargetInfo &target) {
  for (const MatrixIntrinsic &intrinsic : target.intrinsics)
    if (std::optional<std::string> problem = fragmentProblem(target, intrinsic))
      return problem;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The registry of presets
//===----------------------------------------------------------------------===//

namespace {

struct PresetRegistry {
  std::mutex mutex;
  /// By name and alias: the preset's name and how it is made.
  std::map<std::string, std::pair<std::string, TargetPresetFn>, std::less<>>
      byName;
  std::set<std::string> names;

  static PresetRegistry &get() {
    static PresetRegistry registry;
    return registry;
  }
};

} // namespace

void tk::registerTargetPreset(llvm::StringRef name,
                              llvm::ArrayRef<llvm::StringRef> aliases,
                              TargetPresetFn make) {
  PresetRegistry &registry = PresetRegistry::get();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.names.insert(name.str());
  registry.byName[name.str()] = {name.str(), make};
  for (llvm::StringRef alias : aliases)
    registry.byName[alias.str()] = {name.str(), make};
}

std::vector<std::string> tk::registeredTargetPresets() {
  PresetRegistry &registry = PresetRegistry::get();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return {registry.names.begin(), registry.names.end()};
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {

/// Keeps of `info`'s intrinsics those `keys` names (comma-separated, or
/// `none`); the problem where a key names none of them.
std::optional<std::string> keepIntrinsics(TargetInfo &info,
                                          llvm::StringRef keys) {
  llvm::SmallVector<llvm::StringRef> named;
  if (keys != "none")
    keys.split(named, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef key : named)
    if (!info.findIntrinsic(key)) {
      llvm::SmallVector<std::string> known;
      for (const MatrixIntrinsic &intrinsic : info.intrinsics)
        known.push_back(intrinsic.key());
      return "target override 'intrinsics' names '" + key.str() +
             "', which the preset does not have; it has: " +
             (known.empty() ? std::string("none") : llvm::join(known, ", "));
    }
  llvm::erase_if(info.intrinsics, [&](const MatrixIntrinsic &intrinsic) {
    return !llvm::is_contained(named, intrinsic.key());
  });
  return std::nullopt;
}

} // namespace

FragmentLayout tk::getOpaquePlacement(int64_t m, int64_t n, int64_t warpSize) {
  int64_t run = std::max<int64_t>(1, m * n / warpSize);
  int64_t lanesAlongRow = std::max<int64_t>(1, n / run);
  run = std::min(run, n);
  return FragmentLayout::of({1, run}, {warpSize / lanesAlongRow, lanesAlongRow},
                            {1, 0});
}

std::optional<TargetInfo> TargetInfo::parse(llvm::StringRef spec,
                                            std::string &error) {
  auto [presetName, rest] = spec.trim().split(':');
  TargetPresetFn make = nullptr;
  std::string preset;
  {
    PresetRegistry &registry = PresetRegistry::get();
    std::lock_guard<std::mutex> lock(registry.mutex);
    auto found = registry.byName.find(presetName);
    if (found != registry.byName.end())
      std::tie(preset, make) = found->second;
  }
  if (!make) {
    std::vector<std::string> known = registeredTargetPresets();
    error = "unknown target '" + presetName.str() + "'; known: " +
            (known.empty() ? std::string("none (no backend registered its "
                                         "presets)")
                           : llvm::join(known, ", "));
    return std::nullopt;
  }
  std::optional<TargetInfo> info = make();
  while (!rest.empty()) {
    llvm::StringRef item;
    std::tie(item, rest) = rest.split(':');
    auto [key, valueText] = item.split('=');
    if (key == "intrinsics") {
      if (std::optional<std::string> problem = keepIntrinsics(*info, valueText))
        return error = *problem, std::nullopt;
      continue;
    }
    int64_t value = 0;
    if (valueText.getAsInteger(10, value) || value <= 0) {
      error =
          "target override '" + item.str() + "' must be key=<positive integer>";
      return std::nullopt;
    }
    int64_t *field =
        llvm::StringSwitch<int64_t *>(key)
            .Case("warp-size", &info->warpSize)
            .Case("max-threads", &info->maxThreadsPerBlock)
            .Case("registers", &info->registersPerCU)
            .Case("thread-registers", &info->registersPerThread)
            .Case("shared-memory", &info->sharedMemoryPerBlock)
            .Case("shared-memory-banks", &info->sharedMemoryBanks)
            .Case("vector-bytes", &info->maxVectorLoadBytes)
            .Case("workgroup-vector-bytes", &info->workgroupVectorBytes)
            .Default(nullptr);
    if (!field) {
      error = "unknown target override '" + key.str() +
              "'; known: warp-size, max-threads, registers, "
              "thread-registers, shared-memory, "
              "shared-memory-banks, vector-bytes, workgroup-vector-bytes, "
              "intrinsics";
      return std::nullopt;
    }
    *field = value;
  }
  // Where an opaque intrinsic's accumulator lies once read back is tk's
  // choice, so it follows the warp size.
  for (MatrixIntrinsic &intrinsic : info->intrinsics)
    if (intrinsic.opaque)
      intrinsic.accLayout =
          getOpaquePlacement(intrinsic.m, intrinsic.n, info->warpSize);
  // An intrinsic's fragments are fixed by the hardware's warp: an override
  // of the warp size leaves only those that still fit it (none, usually).
  llvm::erase_if(info->intrinsics, [&](const MatrixIntrinsic &intrinsic) {
    return fragmentProblem(*info, intrinsic).has_value();
  });
  info->name = spec.trim().str();
  info->preset = std::move(preset);
  return info;
}
