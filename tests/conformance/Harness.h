//===- Harness.h - the conformance suite's cases, cells and runner -*- C++
//-*-===//
//
// The conformance matrix runs every kernel of the suite over dtypes and shapes
// on every backend and gives each cell (kernel x dtype x shape x backend) one
// status. A case is written once: a builder function (tk::KernelBuilder), a
// run function that launches it on device buffers, and a host reference in
// double compared with per-dtype tolerances. The harness owns everything
// else: backends opened through the runtime's plugin loader, the declared
// capabilities that make a cell UNSUPPORTED, the XFAIL list, and one kernel
// per (case, dtype, block configuration).
//
// Where the kernels come from is a KernelSupplier. tk-conformance compiles
// them (HarnessCompile.cpp: builder or TTIR, through the plugin; compile and
// validate for backends without hardware, NO_DEVICE) and can write them all
// into one package. tk-conformance-run, the same suite built without the
// compiler (TK_CONFORMANCE_RUN_ONLY: no builder code, linked against
// libtk_runtime.so), loads them from that package (PackageSupply.cpp): the
// column of a GPU machine that carries no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef TK_TESTS_CONFORMANCE_HARNESS_H_
#define TK_TESTS_CONFORMANCE_HARNESS_H_

#include "tk/runtime/Status.h"
#include "tk/tk.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tk::runtime {
class Buffer;
class Device;
class Kernel;
class Plugin;
} // namespace tk::runtime

namespace tk::conformance {

//===----------------------------------------------------------------------===//
// Dtypes and tolerances
//===----------------------------------------------------------------------===//

/// The element types of the matrix (those of tk_dtype_bit).
enum class DType { I1, I8, I16, I32, I64, F16, BF16, F32, F64, F8E4M3, F8E5M2 };

llvm::StringRef dtypeName(DType dtype);
std::optional<DType> parseDType(llvm::StringRef name);
size_t dtypeBytes(DType dtype);
/// The dtype's bit of tk_capabilities.dtypes.
uint32_t dtypeBit(DType dtype);
bool isFloat(DType dtype);
/// `value` as `dtype` holds it: floats rounded to nearest even, integers
/// truncated toward zero and wrapped to the width (two's complement).
double roundTo(DType dtype, double value);
/// The distance from 1 to the next value of a float dtype (0 for integers).
double epsilonOf(DType dtype);

/// A result element passes when
///
///   |got - want| <= rtol * |want| + floor * scale + atol + bound[i]
///
/// where `scale` is the largest |want| of the output being checked and
/// `bound[i]` an optional per-element error bound the case derives (the
/// rounding of an f32 sum, say). The absolute floor is a fraction of the
/// output's own scale, never of eps alone, so an output of small values
/// (softmax's, ~1e-3) is not passed by zeros; `atol` is only ever the
/// spacing of the dtype's subnormals, where relative error means nothing.
struct Tolerance {
  double rtol = 0;
  /// Absolute slack in units of the output's scale (cancellation).
  double floor = 0;
  double atol = 0;
};

/// `rtol` and `floor` in units of `dtype`'s epsilon, with the dtype's
/// subnormal spacing as `atol` (exact, {0, 0, 0}, for integers).
Tolerance epsTolerance(DType dtype, double rtolEps, double floorEps = 0);

/// What one operation computed in f32 and rounded once to `dtype` may be off
/// by: half an ulp, at most eps / 2 relative (eps leaves room for the f32
/// computation's own error); exact for integers. No floor: a case with
/// cancellation adds the floor it needs.
Tolerance defaultTolerance(DType dtype);

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

/// One problem size of a case: `dims` are what the case reads them as (n,
/// rows x cols, M x N x K, ...); `variant` selects a flavour (an axis, a
/// transposed operand) that `variantName` names in reports.
struct Shape {
  std::vector<int64_t> dims;
  int variant = 0;
  std::string variantName;

  int64_t operator[](size_t i) const { return dims[i]; }
  /// "37x100" or "37x100/axis1".
  std::string label() const;
};

/// What a backend must declare for the case to run. The dtype of the cell is
/// always required; `dtypes` adds others (the i32 result of an i8 matmul).
struct Requirements {
  uint32_t dtypes = 0;  // tk_dtype_bit
  uint32_t atomics = 0; // tk_atomic_bit
  bool fp8 = false;
};

using KernelModule = mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>;
class CellRun;

/// Compile options of a cell's kernel (tk_compile_options; 0: the
/// backend's default): the configurations the benchmarks tune to, which the
/// default 4 warps and 3 stages would leave untested.
struct CompileSettings {
  int32_t numWarps = 0;
  int32_t numStages = 0;
  int32_t minProgramsPerCu = 0;
  /// Arguments folded into the kernel (tk_compile_options.constexprs).
  std::vector<std::pair<std::string, int64_t>> constexprs = {};
};

struct ConformanceCase {
  std::string name;
  /// One line on what the case checks, for the reports.
  std::string summary;
  Requirements needs;
  std::vector<DType> dtypes;
  std::vector<Shape> shapes;
  /// Cells of one dtype whose keys are equal share one compiled kernel; the
  /// key names the block configuration the shape picks ("" by default: one
  /// kernel per dtype).
  std::function<std::string(DType, const Shape &)> configKey;
  /// Builds the kernel of the cell (its error into `error` on failure).
  std::function<KernelModule(mlir::MLIRContext *ctx, DType dtype,
                             const Shape &shape, std::string *error)>
      build;
  /// Instead of `build`: the kernel as the text of Triton's TTIR, created
  /// through TK_SOURCE_TTIR (the C API's importer); its error into `error`.
  std::function<mlir::FailureOr<std::string>(std::string *error)> ttir;
  /// The cell's compile options (null: the defaults). Cells whose settings
  /// differ need different configKeys.
  std::function<CompileSettings(DType, const Shape &)> settings;
  /// Launches the compiled kernel (CellRun::kernel) and compares with the
  /// host reference through CellRun::check.
  std::function<void(CellRun &run)> run;
  /// A deliberately wrong kernel, kept to test the suite itself; registered
  /// only with --include-fixtures.
  bool fixture = false;
};

/// Every case of the suite, fixtures last (see Registry.cpp).
std::vector<ConformanceCase> getCases(bool includeFixtures);

/// The kernel of a cell: cells of one case and dtype whose configKeys are
/// equal share it ("matmul/f16/64x64").
std::string kernelKey(const ConformanceCase &kase, DType dtype,
                      const Shape &shape);
/// The name of that kernel in a package of the suite's kernels: the key
/// with every character other than a letter, a digit or '_' made '_'
/// ("matmul_f16_64x64"), an identifier every backend takes as an entry.
std::string packageEntry(const std::string &kernelKey);

/// A known failure: cells matching (backend, kernel, dtype; "*" matches
/// everything) that fail are XFAIL with `reason`. The list lives in
/// XFail.cpp, in one place.
struct ExpectedFailure {
  const char *backend;
  const char *kernel;
  const char *dtype;
  const char *reason;
};
llvm::ArrayRef<ExpectedFailure> getExpectedFailures();

//===----------------------------------------------------------------------===//
// Cells
//===----------------------------------------------------------------------===//

enum class CellStatus { Pass, Fail, Unsupported, NoDevice, XFail };
const char *statusName(CellStatus status);

struct CellResult {
  std::string kernel;
  std::string dtype;
  std::string shape;
  std::string backend;
  CellStatus status = CellStatus::Pass;
  /// Why (FAIL, UNSUPPORTED, XFAIL) or what was checked (NO_DEVICE).
  std::string message;
  /// FAIL by comparison: the largest |got - want| and the first element
  /// outside the tolerance (-1 when none was compared).
  double maxError = 0;
  /// The largest |got - want| / allowed over the elements compared: how
  /// much of its tolerance the cell used (a PASS is below 1; near 1 says
  /// the tolerance is tight, near 0 that it is loose or the answer exact).
  double toleranceUsed = 0;
  int64_t firstMismatch = -1;
  std::string mismatch; // "out[3] = 2.5, want 1.5"
  double seconds = 0;
};

class Target;

/// The state of one cell while its case runs: device buffers, the launch,
/// and the comparison that decides PASS or FAIL. A failure (a tk call, a
/// mismatch) is recorded once; later calls do nothing, so run functions need
/// not check every step.
class CellRun {
public:
  CellRun(Target &target, const ConformanceCase &kase, DType dtype,
          const Shape &shape, tk_kernel kernel);
  ~CellRun();
  CellRun(const CellRun &) = delete;
  CellRun &operator=(const CellRun &) = delete;

  DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  int64_t dim(size_t i) const { return shape_[i]; }
  tk_kernel kernel() const { return kernel_; }
  bool failed() const { return failed_; }
  /// Whether check() ran: a case that compares nothing does not PASS.
  bool compared() const { return compared_; }

  /// Deterministic values in [lo, hi), rounded to `dtype` (integers: whole
  /// numbers), so references see exactly the kernel's inputs.
  std::vector<double> random(size_t count, double lo, double hi, DType dtype,
                             uint32_t seed) const;

  /// A device buffer holding `values` converted to `dtype`.
  tk_arg input(DType dtype, const std::vector<double> &values);
  /// A device buffer of `count` elements of `dtype` for the kernel to
  /// write. Without `fill` it holds a sentinel (NaN for floats, 0xA5 bytes
  /// for integers), so an element the kernel fails to write fails the
  /// check; with one (a histogram's zeros, a gap that must survive), each
  /// element is `fill`.
  tk_arg output(DType dtype, size_t count,
                std::optional<double> fill = std::nullopt);
  /// The elements of the buffer of `arg` as doubles.
  std::vector<double> read(const tk_arg &arg);

  /// Launches the kernel and waits; false (and the cell FAILs) on error.
  bool launch(tk_grid grid, const std::vector<tk_arg> &args);
  /// Compute units and programs per unit, for persistent kernels.
  int computeUnits() const;
  int occupancy();

  /// Compares `got` with `want` element-wise; the cell FAILs at the first
  /// element outside `tol` (plus `bound[i]` when given), naming `what`.
  void check(llvm::StringRef what, const std::vector<double> &got,
             const std::vector<double> &want, Tolerance tol,
             const std::vector<double> *bound = nullptr);
  /// Records a failure with `message`.
  void fail(const std::string &message);

  CellResult &result() { return result_; }

private:
  struct Array {
    runtime::Buffer *buffer = nullptr;
    DType dtype;
    size_t count = 0;
    /// With guard pages: the mapping the buffer wraps, unmapped after it.
    void *mapping = nullptr;
    size_t mappingBytes = 0;
  };
  /// Makes `array.buffer` of `bytes`: the device's own memory, or with
  /// guard pages host memory whose end abuts a PROT_NONE page.
  runtime::Status allocate(size_t bytes, Array &array);
  bool checkStatus(tk_status code, const std::string &what);

  Target &target_;
  const ConformanceCase &case_;
  DType dtype_;
  const Shape &shape_;
  tk_kernel kernel_;
  std::vector<Array> arrays_;
  CellResult result_;
  bool failed_ = false;
  bool compared_ = false;
};

//===----------------------------------------------------------------------===//
// Running the suite
//===----------------------------------------------------------------------===//

/// The compile settings of a cell's kernel: the case's, with `numStages`
/// (RunOptions::numStages) where the case sets none.
CompileSettings cellSettings(const ConformanceCase &kase, DType dtype,
                             const Shape &shape, int32_t numStages);

/// What a backend is asked for: the kernel of one cell, compiled with
/// `settings` (the case's, with RunOptions::numStages applied).
struct KernelRequest {
  const ConformanceCase &kase;
  DType dtype;
  const Shape &shape;
  std::string key;
  CompileSettings settings;
  std::string backend;
  runtime::Plugin &plugin;
  /// Null for a backend without a device: the kernel is compiled and
  /// validated only (NO_DEVICE).
  runtime::Device *device;
};

/// The kernel a supplier made for a request: loaded on the device (the
/// harness releases it), or, without a device, `validated`; otherwise the
/// error, where TK_ERROR_UNSUPPORTED is the backend saying the device cannot
/// hold the kernel (the cell is UNSUPPORTED, not FAIL).
struct SuppliedKernel {
  runtime::Kernel *kernel = nullptr;
  bool validated = false;
  std::string error;
  tk_status code = TK_SUCCESS;
};

using KernelSupplier = std::function<SuppliedKernel(const KernelRequest &)>;

/// Kernels from a package tk-conformance --write-package wrote (its
/// refusals beside it, `<path>.refused`), created through TK_SOURCE_PACKAGE
/// as libtk_runtime.so does. False with the reason when the file cannot be
/// read or is not a package.
bool makePackageSupplier(const std::string &path, KernelSupplier &out,
                         std::string &error);

#ifndef TK_CONFORMANCE_RUN_ONLY
/// Kernels built by their cases and compiled by the backend's plugin
/// (HarnessCompile.cpp).
KernelSupplier makeCompilingSupplier();
#endif

struct RunOptions {
  /// Backend names; empty or "all": every plugin on the search path.
  std::vector<std::string> backends;
  /// Only these kernels / dtypes (empty: all).
  std::vector<std::string> kernels;
  std::vector<std::string> dtypes;
  bool includeFixtures = false;
  /// Host-memory backends only (cpu): every buffer ends against a PROT_NONE
  /// page (to the 16 bytes kernels may assume of alignment) and follows
  /// one, so a masked-off lane that touches memory outside its buffer
  /// faults instead of passing unseen.
  bool guardPages = false;
  /// Only every `shardCount`-th cell, from cell `shardIndex` (0-based) of
  /// the selection in its fixed order: a stated part of a column whose
  /// cells are slow to check (make test's rocm and xe columns).
  size_t shardIndex = 0, shardCount = 1;
  /// With a shard: only the cells of these kernels (a name ending in '*'
  /// stands for every kernel it prefixes) are divided, counted among
  /// themselves; every other cell of the selection runs. Empty: all are.
  std::vector<std::string> shardOnly;
  /// num_stages for the cells whose case does not set it (0: the
  /// backend's default), so that a column exercises the pipelining of
  /// loops the suite's kernels leave unpipelined.
  int32_t numStages = 0;
  /// Called after each cell with its 1-based number and the total.
  std::function<void(size_t index, size_t total, const CellResult &)> progress;
  /// Where the kernels come from (required).
  KernelSupplier supplier;
};

/// One cell of a selection: a case, a dtype, a shape.
struct PlannedCell {
  const ConformanceCase *kase;
  DType dtype;
  const Shape *shape;
};

/// Whether kernel `name` is one `pattern` names: the name itself, or with a
/// trailing '*' every name it prefixes (RunOptions::shardOnly).
bool matchesKernelPattern(llvm::StringRef pattern, llvm::StringRef name);

/// The cells of `cases` that `options` selects (kernels, dtypes, shard), in
/// the suite's fixed order.
std::vector<PlannedCell> planCells(const std::vector<ConformanceCase> &cases,
                                   const RunOptions &options);

/// Names of the backend plugins found on the search path (TK_BACKEND_PATH,
/// then the folder of libtk).
std::vector<std::string> findBackends();

/// Runs the selected cells. Never aborts on a failing kernel: compile
/// errors, launch errors and mismatches are FAIL cells with their message.
std::vector<CellResult> runSuite(const RunOptions &options);

#ifndef TK_CONFORMANCE_RUN_ONLY
/// Compiles the kernel of every cell `options` selects, once per kernel key,
/// for each of `targets` ("cuda:sm_90a", "cpu", as tk-compile --target
/// takes them) into one package at `path`, each kernel under its
/// packageEntry. A kernel a target refuses is left out and its refusal
/// written to `<path>.refused`, so the runner reports its cells as the
/// compiling column would (UNSUPPORTED where the device cannot hold it,
/// or where the backend declares no support; FAIL otherwise): whether a
/// refusal is a failure is the column's to say, on the device. Both files
/// are written whole or not at all. Prints a line per kernel on stderr.
/// Returns false with `error` when nothing could be written.
bool writeCellPackage(const RunOptions &options,
                      const std::vector<std::string> &targets,
                      const std::string &path, std::string &error);
#endif

//===----------------------------------------------------------------------===//
// Reports (Report.cpp)
//===----------------------------------------------------------------------===//

/// The matrix as text: kernels x backends, each cell "PASS 12/12" or the
/// worst status with its counts.
std::string formatTable(const std::vector<CellResult> &results);
/// The same table in GitHub Markdown, then the non-passing cells.
std::string formatMarkdown(const std::vector<CellResult> &results);
std::string formatJson(const std::vector<CellResult> &results);
/// A self-contained page: the matrix coloured by status, each cell's
/// dtype/shape sub-cells, failures expandable to their error.
std::string formatHtml(const std::vector<CellResult> &results);

} // namespace tk::conformance

#endif // TK_TESTS_CONFORMANCE_HARNESS_H_
