//===- Atomics.cpp - atomic add, max and compare-and-swap -----------------===//
//
// Contended atomics from many programs: a histogram (atomic add of 1 into
// bins), a running maximum per bucket (atomic max) whose returned old values
// must never exceed the final maximum, slot claiming with compare-and-
// swap, where exactly one lane may win each slot, and old values that
// threads other than the updater read: a ticket per program from a scalar
// atomic add, and counts into bins from a tile smaller than the program's
// threads, whose copies read the old values.
//
//===----------------------------------------------------------------------===//

#include "Cases.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace tk;
using namespace tk::conformance;

namespace {
constexpr int64_t kAtomicsBlock = 256;
const std::vector<Shape> kAtomicsSizes = {shape({1, 1}), shape({1000, 7}),
                                          shape({20000, 64}), shape({5000, 1})};
} // namespace

void tk::conformance::addAtomicCases(std::vector<ConformanceCase> &cases) {
  {
    ConformanceCase c;
    c.name = "atomic_histogram";
    c.summary = "hist[x[i]] += 1 with atomic add; shape n x bins";
    c.needs.atomics = TK_ATOMIC_BIT_ADD;
    c.dtypes = {DType::I32, DType::I64};
    c.shapes = kAtomicsSizes;
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      KernelBuilder k(ctx, "atomic_histogram");
      mlir::Type type = toMLIR(ctx, dtype);
      Tile x = k.argPtr("x", k.i32(), 16);
      Tile hist = k.argPtr("hist", type, 16);
      Tile n = k.argI32("n");
      Tile start = k.programId(0) * kAtomicsBlock;
      Tile offs = start + k.arange(0, kAtomicsBlock);
      Tile mask = offs < n;
      Tile bins = k.load(x + offs, mask, 0);
      k.atomicAdd(hist + bins, 1, mask);
      return finishKernel(k, error);
    });
    c.run = [](CellRun &r) {
      int64_t n = r.dim(0), bins = r.dim(1);
      std::vector<double> x = r.random(n, 0, double(bins), DType::I32, 81);
      tk_arg dx = r.input(DType::I32, x);
      tk_arg hist = r.output(r.dtype(), bins, 0);
      r.launch({cdiv(n, kAtomicsBlock), 1, 1},
               {dx, hist, tk_arg_i32(int32_t(n))});
      std::vector<double> want(bins, 0);
      for (double v : x)
        want[int64_t(v)] += 1;
      r.check("hist", r.read(hist), want, {});
    };
    cases.push_back(std::move(c));
  }

  {
    ConformanceCase c;
    c.name = "atomic_max";
    c.summary = "out[i % buckets] = max(...) with atomic max; old values";
    c.needs.atomics = TK_ATOMIC_BIT_MAX;
    c.dtypes = {DType::I32, DType::I64, DType::F32};
    c.shapes = kAtomicsSizes;
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      KernelBuilder k(ctx, "atomic_max");
      mlir::Type type = toMLIR(ctx, dtype);
      Tile x = k.argPtr("x", type, 16);
      Tile out = k.argPtr("out", type, 16);
      Tile old = k.argPtr("old", type, 16);
      Tile n = k.argI32("n"), buckets = k.argI32("buckets");
      Tile start = k.programId(0) * kAtomicsBlock;
      Tile offs = start + k.arange(0, kAtomicsBlock);
      Tile mask = offs < n;
      Tile v = k.load(x + offs, mask);
      Tile bucket = offs % buckets;
      Tile previous = k.atomicRMW(AtomicRMWKind::Max, out + bucket, v, mask);
      k.store(old + offs, previous, mask);
      return finishKernel(k, error);
    });
    c.run = [](CellRun &r) {
      int64_t n = r.dim(0), buckets = r.dim(1);
      DType t = r.dtype();
      std::vector<double> x = r.random(n, -1e6, 1e6, t, 82);
      tk_arg dx = r.input(t, x);
      tk_arg out = r.output(t, buckets, -2e6);
      tk_arg old = r.output(t, n);
      r.launch(
          {cdiv(n, kAtomicsBlock), 1, 1},
          {dx, out, old, tk_arg_i32(int32_t(n)), tk_arg_i32(int32_t(buckets))});
      std::vector<double> want(buckets, -2e6);
      for (int64_t i = 0; i < n; ++i)
        want[i % buckets] = std::max(want[i % buckets], x[i]);
      r.check("out", r.read(out), want, {});
      // Each returned old value is one the bucket held when that lane's
      // max landed: the initial value or an element of the bucket, never
      // above the final maximum; and since every element is above the
      // initial value, exactly one lane of each bucket saw the initial one.
      std::vector<double> got = r.read(old);
      if (r.failed())
        return;
      std::vector<std::vector<double>> held(buckets);
      for (int64_t i = 0; i < n; ++i)
        held[i % buckets].push_back(x[i]);
      for (std::vector<double> &values : held)
        llvm::sort(values);
      std::vector<double> valid(n), sawInitial(buckets, 0);
      for (int64_t i = 0; i < n; ++i) {
        const std::vector<double> &values = held[i % buckets];
        bool initial = got[i] == -2e6;
        bool element =
            std::binary_search(values.begin(), values.end(), got[i]) &&
            got[i] <= want[i % buckets];
        sawInitial[i % buckets] += initial;
        // A value the bucket never held fails against NaN.
        valid[i] = initial || element ? got[i] : NAN;
      }
      r.check("old (a value the bucket held)", got, valid, {});
      // Buckets past n hold no element and saw no lane.
      std::vector<double> one(buckets);
      for (int64_t b = 0; b < buckets; ++b)
        one[b] = b < n ? 1 : 0;
      r.check("lanes per bucket that saw the initial value", sawInitial, one,
              {});
    };
    cases.push_back(std::move(c));
  }

  {
    ConformanceCase c;
    c.name = "atomic_cas";
    c.summary = "lane i claims slot i % slots with CAS(-1 -> i); one winner";
    c.needs.atomics = TK_ATOMIC_BIT_CAS;
    c.dtypes = {DType::I32, DType::I64};
    c.shapes = kAtomicsSizes;
    c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                   const Shape &, std::string *error) {
      KernelBuilder k(ctx, "atomic_cas");
      mlir::Type type = toMLIR(ctx, dtype);
      Tile slots = k.argPtr("slots", type, 16);
      Tile old = k.argPtr("old", type, 16);
      Tile n = k.argI32("n"), count = k.argI32("count");
      Tile start = k.programId(0) * kAtomicsBlock;
      Tile offs = start + k.arange(0, kAtomicsBlock);
      Tile mask = offs < n;
      // Lanes past n target a slot of their own past `count`, whose claim
      // the host ignores: CAS has no mask.
      Tile inRange = offs % count;
      Tile spare = count + offs;
      Tile slot = k.where(mask, inRange, spare);
      Tile id = offs.to(type);
      Tile previous = k.atomicCAS(slots + slot, -1, id);
      k.store(old + offs, previous, mask);
      return finishKernel(k, error);
    });
    c.run = [](CellRun &r) {
      int64_t n = r.dim(0), count = r.dim(1);
      DType t = r.dtype();
      int64_t padded = cdiv(n, kAtomicsBlock) * kAtomicsBlock;
      tk_arg slots = r.output(t, count + padded, -1);
      tk_arg old = r.output(t, n, -2);
      r.launch(
          {cdiv(n, kAtomicsBlock), 1, 1},
          {slots, old, tk_arg_i32(int32_t(n)), tk_arg_i32(int32_t(count))});
      std::vector<double> got = r.read(slots), olds = r.read(old);
      if (r.failed())
        return;
      // Slot s holds the one lane whose CAS saw -1; every other lane of the
      // slot saw that winner's id.
      std::vector<double> wantOld(n);
      for (int64_t i = 0; i < n; ++i) {
        double winner = got[i % count];
        wantOld[i] = winner == double(i) ? -1 : winner;
      }
      std::vector<double> slotOf(count), wantSlot(count);
      for (int64_t s = 0; s < count; ++s) {
        slotOf[s] = got[s];
        // The winner must be a lane of the slot.
        bool valid =
            got[s] >= 0 && got[s] < double(n) && int64_t(got[s]) % count == s;
        wantSlot[s] = valid ? got[s] : -3;
      }
      r.check("slots (a lane of the slot)", slotOf, wantSlot, {});
      r.check("old (-1 for the winner only)", olds, wantOld, {});
    };
    cases.push_back(std::move(c));
  }

  {
    ConformanceCase c;
    c.name = "atomic_old_values";
    c.summary = "a ticket per program (scalar atomic add, its old value "
                "stored by every thread) and 64 counts into 16 bins (old "
                "values read where 128 threads hold the tile twice)";
    c.needs.atomics = TK_ATOMIC_BIT_ADD;
    c.dtypes = {DType::I32};
    c.shapes = {shape({1}), shape({7}), shape({100})};
    c.build = TK_KERNEL_BUILDER(
        [](mlir::MLIRContext *ctx, DType, const Shape &, std::string *error) {
          KernelBuilder k(ctx, "atomic_old_values");
          Tile counter = k.argPtr("counter", k.i32(), 16);
          Tile bins = k.argPtr("bins", k.i32(), 16);
          Tile olds = k.argPtr("olds", k.i32(), 16);
          Tile tickets = k.argPtr("tickets", k.i32(), 16);
          Tile r = k.arange(0, 64);
          Tile offs = k.programId(0) * 64 + r;
          Tile ticket = k.atomicAdd(counter, 1);
          k.store(tickets + offs, k.splat(ticket, {64}));
          Tile old = k.atomicAdd(bins + (r & 15), 1);
          k.store(olds + offs, old);
          return finishKernel(k, error);
        });
    c.run = [](CellRun &r) {
      int64_t programs = r.dim(0);
      tk_arg counter = r.output(DType::I32, 1, 0);
      tk_arg bins = r.output(DType::I32, 16, 0);
      tk_arg olds = r.output(DType::I32, programs * 64, -1);
      tk_arg tickets = r.output(DType::I32, programs * 64, -1);
      r.launch({int32_t(programs), 1, 1}, {counter, bins, olds, tickets});
      r.check("counter", r.read(counter), {double(programs)}, {});
      r.check("bins", r.read(bins), std::vector<double>(16, 4.0 * programs),
              {});
      // Every thread of a program stored its ticket; the tickets are
      // 0 .. programs - 1 in some order.
      std::vector<double> got = r.read(tickets), same(got.size()),
                          drawn(programs), order(programs);
      for (int64_t p = 0; p < programs; ++p) {
        for (int64_t i = 0; i < 64; ++i)
          same[p * 64 + i] = got[p * 64];
        drawn[p] = got[p * 64];
        order[p] = double(p);
      }
      r.check("tickets", got, same, {});
      std::sort(drawn.begin(), drawn.end());
      r.check("tickets drawn", drawn, order, {});
      // Each bin's old values, over all programs, are 0 .. 4 programs - 1.
      std::vector<double> old = r.read(olds), sorted, want;
      for (int64_t bin = 0; bin < 16; ++bin) {
        std::vector<double> of;
        for (int64_t p = 0; p < programs; ++p)
          for (int64_t i = bin; i < 64; i += 16)
            of.push_back(old[p * 64 + i]);
        std::sort(of.begin(), of.end());
        for (size_t v = 0; v < of.size(); ++v) {
          sorted.push_back(of[v]);
          want.push_back(double(v));
        }
      }
      r.check("old values by bin", sorted, want, {});
    };
    cases.push_back(std::move(c));
  }
}
