//===- Harness.cpp - the conformance suite's cells and runner -------------===//
//
// Opens each backend through the runtime (tk::runtime::PluginLoader), reads
// its declared capabilities, compiles each (case, dtype, configuration) once
// and runs the cells. Backends are driven through the runtime's C++ objects
// rather than the process-wide C API selection (TK_BACKEND), so that one
// process can fill every column of the matrix.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"
#include "Fp8Bits.h"

#include "tk/runtime/Buffer.h"
#include "tk/runtime/Device.h"
#include "tk/runtime/Kernel.h"
#include "tk/runtime/PluginLoader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sys/mman.h>
#include <unistd.h>

using namespace tk::conformance;
namespace rt = tk::runtime;

//===----------------------------------------------------------------------===//
// Dtypes
//===----------------------------------------------------------------------===//

namespace {
struct DTypeInfo {
  DType dtype;
  const char *name;
  size_t bytes;
  uint32_t bit;
};
const DTypeInfo kDTypes[] = {
    {DType::I1, "i1", 1, TK_DTYPE_BIT_I1},
    {DType::I8, "i8", 1, TK_DTYPE_BIT_I8},
    {DType::I16, "i16", 2, TK_DTYPE_BIT_I16},
    {DType::I32, "i32", 4, TK_DTYPE_BIT_I32},
    {DType::I64, "i64", 8, TK_DTYPE_BIT_I64},
    {DType::F16, "f16", 2, TK_DTYPE_BIT_F16},
    {DType::BF16, "bf16", 2, TK_DTYPE_BIT_BF16},
    {DType::F32, "f32", 4, TK_DTYPE_BIT_F32},
    {DType::F64, "f64", 8, TK_DTYPE_BIT_F64},
    {DType::F8E4M3, "f8e4m3", 1, TK_DTYPE_BIT_F8E4M3},
    {DType::F8E5M2, "f8e5m2", 1, TK_DTYPE_BIT_F8E5M2},
};

const DTypeInfo &info(DType dtype) { return kDTypes[static_cast<int>(dtype)]; }

// GCC and Clang convert to _Float16 with round-to-nearest-even. Rounding
// double -> f16 directly (not through f32) avoids double rounding.
uint16_t toF16Bits(double value) {
  _Float16 h = _Float16(value);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

double fromF16Bits(uint16_t bits) { return double(tk_f16_to_f32(bits)); }

/// fp8 (DType::F8E4M3 or F8E5M2) by its bits (Fp8Bits.h).
uint8_t encodeFp8(DType dtype, double value) {
  return toFp8Bits(dtype == DType::F8E4M3, value);
}

double decodeFp8(DType dtype, uint8_t bits) {
  return fromFp8Bits(dtype == DType::F8E4M3, bits);
}

/// bf16 from a double: through f32 when f32 holds the value exactly is
/// exact; otherwise f32 rounding first could round twice, so round the
/// double's own bits when they matter. Values in the suite come from f32
/// computations or are f32-exact, so the f32 path is enough.
uint16_t toBF16FromDouble(double value) { return tk_f32_to_bf16(float(value)); }

int64_t wrapInt(double value, unsigned bits) {
  if (!std::isfinite(value))
    return 0;
  int64_t whole = static_cast<int64_t>(std::trunc(value));
  if (bits >= 64)
    return whole;
  uint64_t mask = (uint64_t(1) << bits) - 1;
  uint64_t low = uint64_t(whole) & mask;
  // Sign-extend from `bits`.
  if (low >> (bits - 1))
    low |= ~mask;
  return int64_t(low);
}
} // namespace

llvm::StringRef tk::conformance::dtypeName(DType dtype) {
  return info(dtype).name;
}

std::optional<DType> tk::conformance::parseDType(llvm::StringRef name) {
  for (const DTypeInfo &entry : kDTypes)
    if (name == entry.name)
      return entry.dtype;
  return std::nullopt;
}

size_t tk::conformance::dtypeBytes(DType dtype) { return info(dtype).bytes; }
uint32_t tk::conformance::dtypeBit(DType dtype) { return info(dtype).bit; }

bool tk::conformance::isFloat(DType dtype) { return dtype >= DType::F16; }

double tk::conformance::roundTo(DType dtype, double value) {
  switch (dtype) {
  case DType::I1:
    return value != 0 ? 1 : 0;
  case DType::I8:
    return double(wrapInt(value, 8));
  case DType::I16:
    return double(wrapInt(value, 16));
  case DType::I32:
    return double(wrapInt(value, 32));
  case DType::I64:
    return double(wrapInt(value, 64));
  case DType::F16:
    return fromF16Bits(toF16Bits(value));
  case DType::BF16:
    return double(tk_bf16_to_f32(toBF16FromDouble(value)));
  case DType::F32:
    return double(float(value));
  case DType::F64:
    return value;
  case DType::F8E4M3:
  case DType::F8E5M2:
    return decodeFp8(dtype, encodeFp8(dtype, value));
  }
  return value;
}

double tk::conformance::epsilonOf(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return 0x1p-10;
  case DType::BF16:
    return 0x1p-7;
  case DType::F32:
    return 0x1p-23;
  case DType::F64:
    return 0x1p-52;
  case DType::F8E4M3:
    return 0x1p-3;
  case DType::F8E5M2:
    return 0x1p-2;
  default:
    return 0;
  }
}

/// The distance between a float dtype's subnormals (0 for integers).
static double subnormalSpacing(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return 0x1p-24;
  case DType::BF16:
    return 0x1p-133;
  case DType::F32:
    return 0x1p-149;
  case DType::F8E4M3:
    return 0x1p-9;
  case DType::F8E5M2:
    return 0x1p-16;
  default:
    return 0; // f64's is below any double difference that matters
  }
}

Tolerance tk::conformance::epsTolerance(DType dtype, double rtolEps,
                                        double floorEps) {
  double eps = epsilonOf(dtype);
  return {rtolEps * eps, floorEps * eps, subnormalSpacing(dtype)};
}

Tolerance tk::conformance::defaultTolerance(DType dtype) {
  return epsTolerance(dtype, 1);
}

std::string Shape::label() const {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? "x" : "") + std::to_string(dims[i]);
  if (!variantName.empty())
    text += "/" + variantName;
  return text;
}

const char *tk::conformance::statusName(CellStatus status) {
  switch (status) {
  case CellStatus::Pass:
    return "PASS";
  case CellStatus::Fail:
    return "FAIL";
  case CellStatus::Unsupported:
    return "UNSUPPORTED";
  case CellStatus::NoDevice:
    return "NO_DEVICE";
  case CellStatus::XFail:
    return "XFAIL";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Target: one backend
//===----------------------------------------------------------------------===//

namespace tk::conformance {

/// One backend of the matrix: its plugin, device 0 when it has one, the
/// capabilities it declares, and the kernels its supplier made.
class Target {
public:
  Target(std::string name, KernelSupplier supplier)
      : name(std::move(name)), supplier(std::move(supplier)) {
    open();
  }

  ~Target() {
    for (auto &entry : kernels)
      if (entry.second.kernel)
        (void)rt::Kernel::release(entry.second.kernel);
  }

  std::string name;
  /// RunOptions::guardPages.
  bool guardPages = false;
  /// RunOptions::numStages.
  int32_t numStages = 0;
  /// Why the backend cannot be used at all (plugin missing or broken).
  rt::Status openStatus;
  rt::Plugin *plugin = nullptr;
  std::unique_ptr<rt::Device> device;
  tk_capabilities caps = {};

  bool hasDevice() const { return device != nullptr; }

  /// The reason the backend's declaration rules out the cell, or "".
  std::string unsupportedReason(const ConformanceCase &kase, DType dtype) {
    if (!caps.known)
      return ""; // capabilities unknown: run and let the result speak
    std::string missing;
    uint32_t dtypes = dtypeBit(dtype) | kase.needs.dtypes;
    for (const DTypeInfo &entry : kDTypes)
      if ((dtypes & entry.bit) && !(caps.dtypes & entry.bit))
        missing += std::string(missing.empty() ? "" : ", ") + entry.name;
    if (!missing.empty())
      return name + " declares no support for " + missing;
    if ((kase.needs.fp8 || dtype == DType::F8E4M3 || dtype == DType::F8E5M2) &&
        !caps.fp8)
      return name + " declares no fp8 support";
    if ((caps.atomics & kase.needs.atomics) != kase.needs.atomics)
      return name + " declares no support for some atomics the kernel uses " +
             "(needs mask 0x" + llvm::utohexstr(kase.needs.atomics) +
             ", has 0x" + llvm::utohexstr(caps.atomics) + ")";
    return "";
  }

  /// The kernel of the cell, made by the supplier on first use.
  SuppliedKernel &getKernel(const ConformanceCase &kase, DType dtype,
                            const Shape &shape) {
    std::string key = kernelKey(kase, dtype, shape);
    auto it = kernels.find(key);
    if (it != kernels.end())
      return it->second;
    CompileSettings settings = cellSettings(kase, dtype, shape, numStages);
    SuppliedKernel &out = kernels[key];
    if (!supplier) {
      out.error = "the harness was given no kernel supplier";
      out.code = TK_ERROR_INTERNAL;
      return out;
    }
    out = supplier(KernelRequest{kase, dtype, shape, key, settings, name,
                                 *plugin, device.get()});
    return out;
  }

private:
  void open() {
    rt::PluginLoader loader;
    openStatus = loader.open(name, &plugin);
    if (!openStatus.isOk())
      return;
    rt::Status init = plugin->initialize();
    if (!init.isOk() && init.code() != TK_ERROR_NO_DEVICE) {
      openStatus = init;
      return;
    }
    caps.struct_size = sizeof(caps);
    rt::Status declared = plugin->queryCapabilities(0, caps);
    if (!declared.isOk()) {
      openStatus = declared;
      return;
    }
    if (init.isOk()) {
      rt::Status made = rt::Device::create(*plugin, 0, device);
      if (!made.isOk())
        openStatus = made;
    }
  }

  KernelSupplier supplier;
  std::map<std::string, SuppliedKernel> kernels;
};

} // namespace tk::conformance

//===----------------------------------------------------------------------===//
// CellRun
//===----------------------------------------------------------------------===//

CellRun::CellRun(Target &target, const ConformanceCase &kase, DType dtype,
                 const Shape &shape, tk_kernel kernel)
    : target_(target), case_(kase), dtype_(dtype), shape_(shape),
      kernel_(kernel) {
  result_.kernel = kase.name;
  result_.dtype = dtypeName(dtype).str();
  result_.shape = shape.label();
  result_.backend = target.name;
}

CellRun::~CellRun() {
  for (Array &array : arrays_) {
    if (array.buffer)
      (void)rt::Buffer::release(array.buffer);
    if (array.mapping)
      munmap(array.mapping, array.mappingBytes);
  }
}

rt::Status CellRun::allocate(size_t bytes, Array &array) {
  if (!target_.guardPages)
    return rt::Buffer::create(*target_.device, bytes, &array.buffer);
  // [guard][data pages, the buffer at their end][guard]
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t aligned = (bytes + 15) / 16 * 16;
  const size_t dataBytes = (aligned + page - 1) / page * page;
  array.mappingBytes = dataBytes + 2 * page;
  void *mapping = mmap(nullptr, array.mappingBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED)
    return rt::Status(TK_ERROR_OUT_OF_MEMORY,
                      "guard pages: mmap of " +
                          std::to_string(array.mappingBytes) + " bytes failed");
  array.mapping = mapping;
  char *base = static_cast<char *>(mapping);
  if (mprotect(base, page, PROT_NONE) != 0 ||
      mprotect(base + page + dataBytes, page, PROT_NONE) != 0)
    return rt::Status(TK_ERROR_INTERNAL, "guard pages: mprotect failed");
  return rt::Buffer::wrap(*target_.device, base + page + dataBytes - aligned,
                          bytes, &array.buffer);
}

void CellRun::fail(const std::string &message) {
  if (failed_)
    return;
  failed_ = true;
  result_.status = CellStatus::Fail;
  result_.message = message;
}

bool CellRun::checkStatus(tk_status code, const std::string &what) {
  if (code == TK_SUCCESS)
    return true;
  fail(what + ": " + tk_status_string(code) + ": " + tk_last_error());
  return false;
}

std::vector<double> CellRun::random(size_t count, double lo, double hi,
                                    DType dtype, uint32_t seed) const {
  std::vector<double> values(count);
  uint32_t state = seed * 2654435761u + 1;
  for (double &v : values) {
    state = state * 1664525u + 1013904223u; // Numerical Recipes LCG
    double unit = double(state >> 8) / double(1u << 24);
    v = lo + unit * (hi - lo);
    v = isFloat(dtype) ? roundTo(dtype, v) : std::floor(v);
  }
  return values;
}

namespace {
void encode(DType dtype, double value, uint8_t *out) {
  switch (dtype) {
  case DType::I1:
  case DType::I8: {
    int8_t v = int8_t(wrapInt(value, 8));
    std::memcpy(out, &v, 1);
    return;
  }
  case DType::I16: {
    int16_t v = int16_t(wrapInt(value, 16));
    std::memcpy(out, &v, 2);
    return;
  }
  case DType::I32: {
    int32_t v = int32_t(wrapInt(value, 32));
    std::memcpy(out, &v, 4);
    return;
  }
  case DType::I64: {
    int64_t v = wrapInt(value, 64);
    std::memcpy(out, &v, 8);
    return;
  }
  case DType::F16: {
    uint16_t v = toF16Bits(value);
    std::memcpy(out, &v, 2);
    return;
  }
  case DType::BF16: {
    uint16_t v = toBF16FromDouble(value);
    std::memcpy(out, &v, 2);
    return;
  }
  case DType::F32: {
    float v = float(value);
    std::memcpy(out, &v, 4);
    return;
  }
  case DType::F64:
    std::memcpy(out, &value, 8);
    return;
  case DType::F8E4M3:
  case DType::F8E5M2:
    *out = encodeFp8(dtype, value);
    return;
  }
}

double decode(DType dtype, const uint8_t *in) {
  switch (dtype) {
  case DType::I1:
  case DType::I8: {
    int8_t v;
    std::memcpy(&v, in, 1);
    return v;
  }
  case DType::I16: {
    int16_t v;
    std::memcpy(&v, in, 2);
    return v;
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, in, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, in, 8);
    return double(v);
  }
  case DType::F16: {
    uint16_t v;
    std::memcpy(&v, in, 2);
    return fromF16Bits(v);
  }
  case DType::BF16: {
    uint16_t v;
    std::memcpy(&v, in, 2);
    return tk_bf16_to_f32(v);
  }
  case DType::F32: {
    float v;
    std::memcpy(&v, in, 4);
    return v;
  }
  case DType::F64: {
    double v;
    std::memcpy(&v, in, 8);
    return v;
  }
  case DType::F8E4M3:
  case DType::F8E5M2:
    return decodeFp8(dtype, *in);
  }
  return 0;
}
} // namespace

tk_arg CellRun::input(DType dtype, const std::vector<double> &values) {
  tk_arg arg = output(dtype, values.size());
  if (failed_)
    return arg;
  std::vector<uint8_t> bytes(values.size() * dtypeBytes(dtype));
  for (size_t i = 0; i < values.size(); ++i)
    encode(dtype, values[i], &bytes[i * dtypeBytes(dtype)]);
  rt::Status status =
      arrays_.back().buffer->write(0, bytes.data(), bytes.size());
  if (!status.isOk())
    fail("buffer write: " + status.message());
  return arg;
}

tk_arg CellRun::output(DType dtype, size_t count, std::optional<double> fill) {
  Array array;
  array.dtype = dtype;
  array.count = count;
  if (!failed_) {
    // At least one element: a zero-sized allocation is not what a kernel
    // with a masked-off tail expects to be handed.
    size_t elements = std::max<size_t>(count, 1);
    size_t bytes = elements * dtypeBytes(dtype);
    rt::Status status = allocate(bytes, array);
    if (!status.isOk()) {
      array.buffer = nullptr;
      fail("buffer create: " + status.message());
    } else {
      // The sentinel: NaN compares unequal to every float the reference
      // can want; 0xA5 bytes are an integer no case's reference holds.
      std::vector<uint8_t> filled(bytes, 0xA5);
      if (fill || isFloat(dtype))
        for (size_t i = 0; i < elements; ++i)
          encode(dtype, fill ? *fill : NAN, &filled[i * dtypeBytes(dtype)]);
      status = array.buffer->write(0, filled.data(), filled.size());
      if (!status.isOk())
        fail("buffer write: " + status.message());
    }
  }
  arrays_.push_back(array);
  return tk_arg_buffer(array.buffer ? array.buffer->toHandle() : nullptr);
}

std::vector<double> CellRun::read(const tk_arg &arg) {
  for (Array &array : arrays_) {
    if (!array.buffer || array.buffer->toHandle() != arg.value.buffer)
      continue;
    std::vector<uint8_t> bytes(array.count * dtypeBytes(array.dtype));
    std::vector<double> values(array.count);
    rt::Status status = array.buffer->read(0, bytes.data(), bytes.size());
    if (!status.isOk()) {
      fail("buffer read: " + status.message());
      return values;
    }
    for (size_t i = 0; i < array.count; ++i)
      values[i] = decode(array.dtype, &bytes[i * dtypeBytes(array.dtype)]);
    return values;
  }
  fail("read of a buffer this cell did not create");
  return {};
}

bool CellRun::launch(tk_grid grid, const std::vector<tk_arg> &args) {
  if (failed_)
    return false;
  rt::Kernel *kernel = nullptr;
  rt::Status status = rt::Kernel::fromHandle(kernel_, &kernel);
  tk_args packed = {args.data(), args.size()};
  if (status.isOk())
    status = kernel->launch(grid, &packed, /*stream=*/nullptr);
  if (status.isOk())
    status = kernel->getDevice().synchronize();
  if (!status.isOk()) {
    fail(std::string("launch: ") + rt::getStatusName(status.code()) + ": " +
         status.message());
    return false;
  }
  return true;
}

int CellRun::computeUnits() const {
  return std::max(1, target_.device->getProps().compute_units);
}

int CellRun::occupancy() {
  rt::Kernel *kernel = nullptr;
  int programs = 1;
  if (rt::Kernel::fromHandle(kernel_, &kernel).isOk())
    (void)kernel->getOccupancy(&programs);
  return std::max(1, programs);
}

void CellRun::check(llvm::StringRef what, const std::vector<double> &got,
                    const std::vector<double> &want, Tolerance tol,
                    const std::vector<double> *bound) {
  if (failed_)
    return;
  compared_ = true;
  if (got.size() != want.size() || (bound && bound->size() != want.size())) {
    fail((what + ": got " + llvm::Twine(got.size()) + " elements, want " +
          llvm::Twine(want.size()))
             .str());
    return;
  }
  // The output's scale, which the absolute floor is a fraction of.
  double scale = 0;
  for (double w : want)
    if (std::isfinite(w))
      scale = std::max(scale, std::fabs(w));
  double maxError = 0;
  int64_t first = -1;
  for (size_t i = 0; i < want.size(); ++i) {
    double error = std::fabs(got[i] - want[i]);
    if (std::isnan(got[i]) != std::isnan(want[i]))
      error = INFINITY;
    else if (std::isnan(want[i]) || got[i] == want[i])
      error = 0; // equal infinities, or NaN where NaN is expected
    maxError = std::max(maxError, error);
    // An infinity or NaN expected allows nothing but itself (rtol times it
    // would be NaN, and no error passes that).
    double magnitude = std::isfinite(want[i]) ? std::fabs(want[i]) : 0;
    double allowed = tol.rtol * magnitude + tol.floor * scale + tol.atol +
                     (bound ? (*bound)[i] : 0.0);
    if (first < 0 && !(error <= allowed))
      first = int64_t(i);
    if (error > 0)
      result_.toleranceUsed = std::max(
          result_.toleranceUsed, allowed > 0 ? error / allowed : INFINITY);
  }
  result_.maxError = std::max(result_.maxError, maxError);
  if (first < 0)
    return;
  char text[256];
  std::snprintf(text, sizeof(text), "%s[%lld] = %.9g, want %.9g",
                what.str().c_str(), (long long)first, got[first], want[first]);
  failed_ = true;
  result_.status = CellStatus::Fail;
  result_.firstMismatch = first;
  result_.mismatch = text;
  char summary[512];
  std::snprintf(summary, sizeof(summary),
                "%s: max error %.3g (rtol %.3g, floor %.3g of scale %.3g%s); "
                "first mismatch %s",
                what.str().c_str(), maxError, tol.rtol, tol.floor, scale,
                bound ? ", plus the element's bound" : "", text);
  result_.message = summary;
}

//===----------------------------------------------------------------------===//
// runSuite
//===----------------------------------------------------------------------===//

std::vector<std::string> tk::conformance::findBackends() {
  std::vector<std::string> names;
  for (const rt::PluginFile &file : rt::PluginLoader().findPlugins())
    names.push_back(file.name);
  return names;
}

static bool selected(const std::vector<std::string> &filter,
                     llvm::StringRef name) {
  return filter.empty() || llvm::is_contained(filter, name);
}

static const ExpectedFailure *findExpectedFailure(const CellResult &cell) {
  auto matches = [](const char *pattern, const std::string &value) {
    return llvm::StringRef(pattern) == "*" || value == pattern;
  };
  for (const ExpectedFailure &entry : getExpectedFailures())
    if (matches(entry.backend, cell.backend) &&
        matches(entry.kernel, cell.kernel) && matches(entry.dtype, cell.dtype))
      return &entry;
  return nullptr;
}

std::string tk::conformance::kernelKey(const ConformanceCase &kase, DType dtype,
                                       const Shape &shape) {
  return kase.name + "/" + dtypeName(dtype).str() + "/" +
         (kase.configKey ? kase.configKey(dtype, shape) : "");
}

CompileSettings tk::conformance::cellSettings(const ConformanceCase &kase,
                                              DType dtype, const Shape &shape,
                                              int32_t numStages) {
  CompileSettings settings =
      kase.settings ? kase.settings(dtype, shape) : CompileSettings();
  if (settings.numStages == 0)
    settings.numStages = numStages;
  return settings;
}

std::string tk::conformance::packageEntry(const std::string &kernelKey) {
  std::string entry = kernelKey;
  for (char &c : entry)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      c = '_';
  while (!entry.empty() && entry.back() == '_')
    entry.pop_back();
  return entry;
}

bool tk::conformance::matchesKernelPattern(llvm::StringRef pattern,
                                           llvm::StringRef name) {
  return pattern.consume_back("*") ? name.starts_with(pattern)
                                   : name == pattern;
}

std::vector<PlannedCell>
tk::conformance::planCells(const std::vector<ConformanceCase> &cases,
                           const RunOptions &options) {
  std::vector<PlannedCell> plan;
  for (const ConformanceCase &kase : cases) {
    if (!selected(options.kernels, kase.name))
      continue;
    for (DType dtype : kase.dtypes) {
      if (!selected(options.dtypes, dtypeName(dtype)))
        continue;
      for (const Shape &shape : kase.shapes)
        plan.push_back({&kase, dtype, &shape});
    }
  }
  if (options.shardCount > 1) {
    auto sharded = [&](llvm::StringRef kernel) {
      return options.shardOnly.empty() ||
             llvm::any_of(options.shardOnly, [&](llvm::StringRef pattern) {
               return matchesKernelPattern(pattern, kernel);
             });
    };
    std::vector<PlannedCell> shard;
    size_t position = 0; // among the cells the shard divides
    for (const PlannedCell &cell : plan)
      if (!sharded(cell.kase->name) ||
          position++ % options.shardCount == options.shardIndex)
        shard.push_back(cell);
    plan = std::move(shard);
  }
  return plan;
}

/// Runs one cell of `kase` on `target`.
static CellResult runCell(Target &target, const ConformanceCase &kase,
                          DType dtype, const Shape &shape) {
  CellResult result;
  result.kernel = kase.name;
  result.dtype = dtypeName(dtype).str();
  result.shape = shape.label();
  result.backend = target.name;
  if (!target.openStatus.isOk()) {
    result.status = CellStatus::Fail;
    result.message = "backend unusable: " + target.openStatus.message();
    return result;
  }
  std::string unsupported = target.unsupportedReason(kase, dtype);
  if (!unsupported.empty()) {
    result.status = CellStatus::Unsupported;
    result.message = unsupported;
    return result;
  }
  SuppliedKernel &compiled = target.getKernel(kase, dtype, shape);
  if (!compiled.error.empty()) {
    // A backend that refuses the kernel as unsupported names what its
    // device lacks (workgroup memory, an instruction for a type); any
    // other compile error is a failure.
    result.status = compiled.code == TK_ERROR_UNSUPPORTED
                        ? CellStatus::Unsupported
                        : CellStatus::Fail;
    result.message = "compile: " + compiled.error;
    return result;
  }
  if (!target.hasDevice()) {
    result.status = CellStatus::NoDevice;
    result.message = "compiled; the binary passes " + target.name +
                     "'s validate (no device to run it)";
    return result;
  }
  CellRun run(target, kase, dtype, shape, compiled.kernel->toHandle());
  kase.run(run);
  if (!run.failed() && !run.compared())
    run.fail("the case compared no result with its reference");
  return run.result();
}

std::vector<CellResult> tk::conformance::runSuite(const RunOptions &options) {
  std::vector<std::string> backends = options.backends;
  if (backends.empty() || llvm::is_contained(backends, "all"))
    backends = findBackends();
  std::vector<ConformanceCase> cases = getCases(options.includeFixtures);

  std::vector<PlannedCell> plan = planCells(cases, options);

  std::vector<CellResult> results;
  size_t total = plan.size() * backends.size(), index = 0;
  for (const std::string &backend : backends) {
    Target target(backend, options.supplier);
    target.guardPages = options.guardPages;
    target.numStages = options.numStages;
    for (const PlannedCell &cell : plan) {
      auto start = std::chrono::steady_clock::now();
      CellResult result = runCell(target, *cell.kase, cell.dtype, *cell.shape);
      result.seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      if (const ExpectedFailure *known = findExpectedFailure(result)) {
        if (result.status == CellStatus::Fail) {
          result.status = CellStatus::XFail;
          result.message = std::string(known->reason) +
                           " (observed: " + result.message + ")";
        } else if (result.status == CellStatus::Pass) {
          result.message = "unexpectedly passes: remove its XFAIL entry (" +
                           std::string(known->reason) + ")";
        }
      }
      results.push_back(result);
      if (options.progress)
        options.progress(++index, total, results.back());
    }
  }
  return results;
}
