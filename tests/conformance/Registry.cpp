//===- Registry.cpp - the suite's cases, in report order ------------------===//
//
// One list of every ConformanceCase: the seed kernels first (the order of
// DESIGN.md §6), then the feature families, then every configuration the
// GPU benchmark may time. Fixtures are appended only when
// asked for, so the matrix never shows them by accident.
//
//===----------------------------------------------------------------------===//

#include "cases/Cases.h"

using namespace tk::conformance;

std::vector<ConformanceCase> tk::conformance::getCases(bool includeFixtures) {
  std::vector<ConformanceCase> cases;
  addSeedCases(cases);
  addMatmulCases(cases);
  addReductionCases(cases);
  addScanCases(cases);
  addElementwiseCases(cases);
  addAtomicCases(cases);
  addBlockPointerCases(cases);
  addAttentionCases(cases);
  addFp8Cases(cases);
  addBenchCases(cases);
  addTtirCases(cases);
  if (includeFixtures)
    addFixtureCases(cases);
  return cases;
}
