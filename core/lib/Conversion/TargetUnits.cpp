//===- TargetUnits.cpp - the backends' units, for tools ---------*- C++ -*-===//
//
// The registry of the matrix and async copy units each backend gives its
// presets, for the programs that run tk-convert-registers-to-simt outside a
// backend's pipeline (tk-opt's `units=<preset>`).
//
//===----------------------------------------------------------------------===//

#include "tk/core/Conversion/Passes.h"

#include "llvm/ADT/StringMap.h"

#include <mutex>

namespace {

struct UnitsRegistry {
  std::mutex mutex;
  llvm::StringMap<tk::TargetUnitsFn> makers;
};

UnitsRegistry &registry() {
  static UnitsRegistry instance;
  return instance;
}

} // namespace

void tk::registerTargetUnits(llvm::StringRef preset, TargetUnitsFn make) {
  UnitsRegistry &units = registry();
  std::lock_guard<std::mutex> lock(units.mutex);
  units.makers[preset] = make;
}

std::optional<tk::TargetUnits> tk::lookupTargetUnits(const TargetInfo &target) {
  TargetUnitsFn make = nullptr;
  {
    UnitsRegistry &units = registry();
    std::lock_guard<std::mutex> lock(units.mutex);
    make = units.makers.lookup(target.preset);
  }
  if (!make)
    return std::nullopt;
  return make(target);
}
