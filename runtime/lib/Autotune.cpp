//===- Autotune.cpp - tk_autotune: pick the fastest configuration ---------===//
//
// Built on the public C API (kernels, launches, events) the way a user
// would time configurations by hand: candidates compile in parallel (the
// runtime compiles concurrently and caches every binary), each is timed as
// rounds of back-to-back launches on the device's default stream, by events
// around each launch, each after a flush of the L2 that keeps the device
// busy while the host enqueues it (a cold cache, as Triton's do_bench, and
// no enqueue latency in the time), and the winner is written atomically to
// TK_CACHE_DIR/autotune, under a key that names the plugin, its compiler
// and every candidate's content, so that the next process skips the timing.
// An SVG bar chart shows throughput per candidate.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/Autotune.h"

#include "tk/tk.h"

#include "tk/core/CompileSupport.h"
#include "tk/runtime/Device.h"
#include "tk/runtime/KernelCache.h"
#include "tk/runtime/KernelSource.h"
#include "tk/runtime/Logging.h"
#include "tk/runtime/Status.h"

#include "spdlog/fmt/fmt.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace tk::runtime;

namespace {

constexpr int kDefaultRepetitions = 20;
constexpr int kRounds = 5;
/// A round lasts at least this long (more launches for short kernels), so
/// that the events' own resolution is small beside it; at most this many
/// launches, fewer where each is timed alone after a cache flush.
constexpr double kMinRoundSeconds = 1e-3;
constexpr int kMaxLaunchesPerRound = 200;
constexpr int kMaxFlushedLaunchesPerRound = 20;
/// Candidates within this fraction of the fastest first timing are timed
/// again, interleaved (at most kMaxFinalists of them, kFinalistRounds
/// rounds each): a single pass in order was seen to pick a candidate that
/// lost by 9% when timed again.
constexpr double kFinalistMargin = 0.05;
constexpr size_t kMaxFinalists = 4;
constexpr int kFinalistRounds = 7;
/// The most candidates one request may list: each is compiled and timed, so
/// more is a mistake (a count read from the wrong place), not a search.
constexpr size_t kMaxCandidates = 65536;
constexpr llvm::StringLiteral kRecordMagic = "tk-autotune 2";

/// tk_compile_options, tk_autotune_candidate and tk_autotune_config as tk.h
/// declared them before min_programs_per_cu: a program built against that
/// header passes arrays laid out so (its request or options struct ends
/// before candidate_size or config_size).
struct CompileOptionsBeforeHint {
  size_t struct_size;
  int32_t num_warps;
  int32_t num_stages;
  const tk_constexpr_value *constexprs;
  size_t num_constexprs;
  const tk_autotune_options *autotune;
};
struct CandidateBeforeHint {
  tk_kernel_source source;
  CompileOptionsBeforeHint options;
  tk_grid grid;
  const char *label;
};
/// tk_compile_options and tk_autotune_candidate as tk.h declared them
/// before source_name.
struct CompileOptionsBeforeSourceName {
  size_t struct_size;
  int32_t num_warps;
  int32_t num_stages;
  const tk_constexpr_value *constexprs;
  size_t num_constexprs;
  const tk_autotune_options *autotune;
  int32_t min_programs_per_cu;
};
struct CandidateBeforeSourceName {
  tk_kernel_source source;
  CompileOptionsBeforeSourceName options;
  tk_grid grid;
  const char *label;
};
static_assert(sizeof(CandidateBeforeSourceName) !=
                      sizeof(tk_autotune_candidate) &&
                  sizeof(CandidateBeforeHint) !=
                      sizeof(CandidateBeforeSourceName),
              "the candidate layouts must be told apart by their size");
struct ConfigBeforeHint {
  int32_t num_warps;
  int32_t num_stages;
  const tk_constexpr_value *constexprs;
  size_t num_constexprs;
  tk_grid grid;
  const char *label;
};

/// Whether a caller's struct of `structSize` bytes holds the field at
/// `offset` of `size` bytes.
bool holds(size_t structSize, size_t offset, size_t size) {
  return structSize >= offset + size;
}

/// The size of one element of a caller's array: `declared` (0: `current`)
/// when its struct holds the size field, else the layout before the hint.
/// `older` are the other sizes earlier headers declared it with.
Status elementSize(bool hasSizeField, size_t declared, size_t current,
                   size_t beforeHint, const char *what, size_t &out,
                   llvm::ArrayRef<size_t> older = {}) {
  out = !hasSizeField ? beforeHint : declared ? declared : current;
  if (out != current && out != beforeHint && !llvm::is_contained(older, out))
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  std::string("autotune: ") + what + " is " +
                      std::to_string(declared) + " bytes; this tk reads " +
                      std::to_string(current) + " (or 0 for the same)");
  return Status::success();
}

/// A candidate of an earlier layout (`Old`) in the current one. The
/// options keep the caller's struct_size, so Kernel::create reads none of
/// the fields the caller's header did not have.
template <typename Old> tk_autotune_candidate upgradeCandidate(const Old &old) {
  tk_autotune_candidate candidate = {};
  candidate.source = old.source;
  std::memcpy(static_cast<void *>(&candidate.options), &old.options,
              sizeof(old.options));
  candidate.grid = old.grid;
  candidate.label = old.label;
  return candidate;
}

/// The request's candidates in the current layout, whichever tk.h the caller
/// was built against; `out` then points at them.
Status readCandidates(const tk_autotune_request &request,
                      std::vector<tk_autotune_candidate> &candidates,
                      tk_autotune_request &out) {
  out = {};
  std::memcpy(static_cast<void *>(&out), &request,
              std::min(request.struct_size, sizeof(out)));
  size_t stride = 0;
  TK_RETURN_IF_ERROR(elementSize(
      holds(request.struct_size, offsetof(tk_autotune_request, candidate_size),
            sizeof(size_t)),
      out.candidate_size, sizeof(tk_autotune_candidate),
      sizeof(CandidateBeforeHint), "candidate_size", stride,
      {sizeof(CandidateBeforeSourceName)}));
  candidates.resize(request.num_candidates);
  for (size_t i = 0; i < request.num_candidates; ++i) {
    if (stride == sizeof(tk_autotune_candidate))
      candidates[i] = request.candidates[i];
    else if (stride == sizeof(CandidateBeforeSourceName))
      candidates[i] =
          upgradeCandidate(reinterpret_cast<const CandidateBeforeSourceName *>(
              request.candidates)[i]);
    else
      candidates[i] = upgradeCandidate(
          reinterpret_cast<const CandidateBeforeHint *>(request.candidates)[i]);
  }
  out.struct_size = sizeof(out);
  out.candidates = candidates.data();
  out.candidate_size = sizeof(tk_autotune_candidate);
  return Status::success();
}

std::string labelOf(const tk_autotune_request &request, size_t i) {
  const char *label = request.candidates[i].label;
  return label && *label ? label : "#" + std::to_string(i);
}

int32_t minProgramsPerCu(const tk_compile_options &options) {
  return holds(options.struct_size,
               offsetof(tk_compile_options, min_programs_per_cu),
               sizeof(int32_t))
             ? options.min_programs_per_cu
             : 0;
}

/// What identifies one candidate's kernel: its source's content (a builder
/// module serialised as the runtime would compile it, so that two builds of
/// different modules under one label are told apart), or "" when the source
/// does not read (its compile fails the same way later).
std::string sourceIdentity(const tk_autotune_candidate &c) {
  PreparedKernel prepared;
  std::vector<tk_constexpr_value> constexprs(
      c.options.constexprs, c.options.constexprs + c.options.num_constexprs);
  llvm::StringRef name = kDefaultSourceName;
  if (c.options.struct_size >=
          offsetof(tk_compile_options, source_name) + sizeof(const char *) &&
      c.options.source_name)
    name = c.options.source_name;
  if (!prepareKernel(c.source, constexprs, prepared, name).isOk())
    return "";
  return std::to_string(llvm::xxh3_64bits(prepared.bytecode)) + "@" +
         prepared.entry;
}

/// The disk record's name: a hash of everything the choice depends on: the
/// key, the device, the plugin (its file's identity, its compiler's version
/// and the target it compiles for: a new compiler may change which candidate
/// is fastest) and each candidate's options and content.
std::string recordName(const tk_autotune_request &request,
                       const tk_device_props &props, const char *backend,
                       llvm::StringRef pluginIdentity) {
  std::string identity = kRecordMagic.str();
  auto add = [&](llvm::StringRef part) {
    identity += std::to_string(part.size()) + ":" + part.str() + ";";
  };
  add(request.key);
  add(backend);
  add(pluginIdentity);
  add(props.name);
  add(props.arch);
  for (size_t i = 0; i < request.num_candidates; ++i) {
    const tk_autotune_candidate &c = request.candidates[i];
    add(labelOf(request, i));
    add(std::to_string(c.options.num_warps) + "," +
        std::to_string(c.options.num_stages) + "," +
        std::to_string(minProgramsPerCu(c.options)));
    for (size_t k = 0; k < c.options.num_constexprs; ++k)
      add(std::string(c.options.constexprs[k].name) + "=" +
          std::to_string(c.options.constexprs[k].value));
    add(sourceIdentity(c));
  }
  char name[32];
  std::snprintf(name, sizeof(name), "%016llx.txt",
                static_cast<unsigned long long>(llvm::xxh3_64bits(identity)));
  return name;
}

std::string recordDirectory() {
  std::string base = KernelCache::getDirectory();
  if (base.empty())
    return {};
  llvm::SmallString<256> path(base);
  llvm::sys::path::append(path, "autotune");
  return std::string(path);
}

/// The recorded winner, if the record exists, parses, and names a candidate
/// of this request by index and label.
std::optional<size_t> readRecord(const std::string &path,
                                 const tk_autotune_request &request) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef, 3> lines;
  (*buffer)->getBuffer().split(lines, '\n', 3, false);
  size_t index = 0;
  if (lines.size() < 3 || lines[0] != kRecordMagic ||
      lines[1].getAsInteger(10, index) || index >= request.num_candidates ||
      lines[2].rtrim("\n") != labelOf(request, index)) {
    getLogger().warn("autotune: ignoring the unreadable record {}", path);
    return std::nullopt;
  }
  return index;
}

/// Writes the record through a temporary in the same folder and a rename,
/// so that a reader never sees half a record.
void writeRecord(const std::string &directory, const std::string &path,
                 const tk_autotune_request &request, size_t best) {
  if (llvm::sys::fs::create_directories(directory))
    return;
  llvm::SmallString<256> temporary;
  int fd = -1;
  if (llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, temporary))
    return;
  std::string record = kRecordMagic.str() + "\n" + std::to_string(best) + "\n" +
                       labelOf(request, best) + "\n";
  // A full disk loses the record (the next run times again), never a half
  // record or a temporary left behind.
  if (tk::writeWholeFile(fd, record) || llvm::sys::fs::rename(temporary, path))
    llvm::sys::fs::remove(temporary);
}

std::string escapeXml(llvm::StringRef text) {
  // LLVM's escaping of & < > " and '.
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::printHTMLEscaped(text, os);
  return out;
}

/// A horizontal bar per candidate: launches per second relative to the
/// fastest (failed candidates get no bar), the winner in another colour.
Status writePlot(const std::string &path, const tk_autotune_request &request,
                 const std::vector<double> &seconds, size_t best) {
  const int barHeight = 22, labelWidth = 260, plotWidth = 420;
  int height = 40 + barHeight * static_cast<int>(seconds.size());
  std::string svg;
  llvm::raw_string_ostream os(svg);
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\""
     << labelWidth + plotWidth + 200 << "\" height=\"" << height
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<text x=\"8\" y=\"18\" font-weight=\"bold\">tk autotune: "
     << escapeXml(request.key) << " (throughput relative to the best)</text>\n";
  for (size_t i = 0; i < seconds.size(); ++i) {
    int y = 30 + barHeight * static_cast<int>(i);
    os << "<text x=\"8\" y=\"" << y + 15 << "\">"
       << escapeXml(labelOf(request, i)) << "</text>\n";
    if (seconds[i] <= 0) {
      os << "<text x=\"" << labelWidth << "\" y=\"" << y + 15
         << "\" fill=\"#a00\">failed</text>\n";
      continue;
    }
    double relative = seconds[best] / seconds[i];
    int width = std::max(1, static_cast<int>(relative * plotWidth));
    os << "<rect x=\"" << labelWidth << "\" y=\"" << y + 3 << "\" width=\""
       << width << "\" height=\"" << barHeight - 6 << "\" fill=\""
       << (i == best ? "#d95f02" : "#1b9e77") << "\"/>\n";
    char text[64];
    std::snprintf(text, sizeof(text), "%.3g us (%.2fx)", seconds[i] * 1e6,
                  relative);
    os << "<text x=\"" << labelWidth + width + 6 << "\" y=\"" << y + 15 << "\">"
       << text << "</text>\n";
  }
  os << "</svg>\n";
  if (std::error_code error = tk::writeWholeFile(path, svg))
    return Status(TK_ERROR_IO, "autotune: cannot write the plot " + path +
                                   ": " + error.message());
  return Status::success();
}

/// Two events of one device, released with the scope.
struct EventPair {
  tk_event start = nullptr, end = nullptr;
  EventPair() = default;
  EventPair(const EventPair &) = delete;
  EventPair &operator=(const EventPair &) = delete;
  ~EventPair() {
    for (tk_event event : {start, end})
      if (event)
        tk_event_release(event);
  }
};

/// The kernel that empties the device's cache before a timed launch: an
/// in-place doubling of a buffer several times the L2's size (as Triton's
/// do_bench zeroes 256 MB before each run). Without it back-to-back
/// launches find part of their inputs in L2 and the ranking of memory-bound
/// candidates can differ from the one a cold-cache timing gives.
constexpr llvm::StringLiteral kFlushKernel = R"(
tk.func @tk_autotune_flush(%x: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                           %n: i32) {
  %pid = tk.program_id 0 : i32
  %block = arith.constant 1024 : i32
  %start = arith.muli %pid, %block : i32
  %range = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %0 = tk.splat %start : i32 -> tensor<1024xi32>
  %offs = arith.addi %0, %range : tensor<1024xi32>
  %1 = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %offs, %1 : tensor<1024xi32>
  %2 = tk.splat %x : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %2, %offs : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %v = tk.load %ptrs, %mask : tensor<1024x!tk.ptr<f32>>
  %twice = arith.addf %v, %v : tensor<1024xf32>
  tk.store %ptrs, %twice, %mask : tensor<1024x!tk.ptr<f32>>
  tk.return
}
)";

/// The flush kernel and its buffer (zeros, so the doubling stays 0).
class CacheFlush {
public:
  ~CacheFlush() {
    if (kernel)
      tk_kernel_release(kernel);
    if (buffer)
      tk_buffer_release(buffer);
  }

  /// Prepares the flush for a device with `l2Bytes` of L2; false (nothing
  /// to flush with) where the device reports no L2 or any step fails, and
  /// the timing then goes without.
  bool init(tk_device device, int64_t l2Bytes) {
    if (l2Bytes <= 0)
      return false;
    int64_t bytes = std::clamp<int64_t>(4 * l2Bytes, 4 << 20, 1 << 30);
    elements = int32_t(bytes / 4 / 1024 * 1024);
    tk_kernel_source source = {TK_SOURCE_TEXT, kFlushKernel.data(),
                               kFlushKernel.size(), "tk_autotune_flush"};
    std::vector<uint8_t> zeros(size_t(elements) * 4, 0);
    bool ready =
        tk_kernel_create(device, &source, nullptr, &kernel) == TK_SUCCESS &&
        tk_buffer_create(device, zeros.size(), &buffer) == TK_SUCCESS &&
        tk_buffer_write(buffer, 0, zeros.data(), zeros.size()) == TK_SUCCESS;
    if (!ready)
      getLogger().debug("autotune: no cache flush between timed launches: {}",
                        tk_last_error());
    return ready;
  }

  /// Enqueues the flush on the default stream.
  Status enqueue() const {
    tk_arg args[] = {tk_arg_buffer(buffer), tk_arg_i32(elements)};
    tk_args packed = {args, 2};
    if (tk_status status =
            tk_launch_async(kernel, {elements / 1024, 1, 1}, &packed, nullptr))
      return Status(status, tk_last_error());
    return Status::success();
  }

private:
  tk_kernel kernel = nullptr;
  tk_buffer buffer = nullptr;
  int32_t elements = 0;
};

/// Times launches on the device, by events, so the host's synchronisation
/// does not count. Where the device reports an L2, each launch is timed
/// alone, after a flush of the cache that also keeps the device busy while
/// the host enqueues the launch (the time is the kernel's from a cold
/// cache, not the latency from an idle queue); a round's figure is the
/// median of its launches. Without a flush, a round is timed as a whole,
/// its start event recorded behind one untimed launch for the same reason.
/// A backend without events (a plugin before ABI 1.2) is timed by the
/// host's clock to the end of a synchronize instead.
class RoundTimer {
public:
  explicit RoundTimer(tk_device device) : device(device) {}

  Status init(int64_t l2Bytes) {
    for (tk_event *event : {&events.start, &events.end}) {
      tk_status status = tk_event_create(device, event);
      if (status == TK_ERROR_UNSUPPORTED)
        onDevice = false;
      else if (status != TK_SUCCESS)
        return Status(status, tk_last_error());
    }
    flushing = onDevice && flush.init(device, l2Bytes);
    return Status::success();
  }

  /// The most launches a round should have.
  int maxLaunchesPerRound() const {
    return flushing ? kMaxFlushedLaunchesPerRound : kMaxLaunchesPerRound;
  }

  /// Seconds per launch over one round of `launches` launches.
  Status time(tk_kernel kernel, tk_grid grid, const tk_args *args, int launches,
              double &seconds) {
    if (flushing) {
      std::vector<double> each(static_cast<size_t>(launches));
      for (double &one : each) {
        TK_RETURN_IF_ERROR(flush.enqueue());
        TK_RETURN_IF_ERROR(timeOnDevice(kernel, grid, args, 1, one));
      }
      std::sort(each.begin(), each.end());
      seconds = each[each.size() / 2];
      return Status::success();
    }
    if (onDevice) {
      if (tk_status status = tk_launch_async(kernel, grid, args, nullptr))
        return Status(status, tk_last_error());
      return timeOnDevice(kernel, grid, args, launches, seconds);
    }
    auto hostStart = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i)
      if (tk_status status = tk_launch_async(kernel, grid, args, nullptr))
        return Status(status, tk_last_error());
    if (tk_status status = tk_synchronize(device))
      return Status(status, tk_last_error());
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            hostStart)
                  .count() /
              launches;
    return Status::success();
  }

private:
  /// `launches` launches between the two events, per launch.
  Status timeOnDevice(tk_kernel kernel, tk_grid grid, const tk_args *args,
                      int launches, double &seconds) {
    if (tk_status status = tk_event_record(events.start, nullptr))
      return Status(status, tk_last_error());
    for (int i = 0; i < launches; ++i)
      if (tk_status status = tk_launch_async(kernel, grid, args, nullptr))
        return Status(status, tk_last_error());
    float ms = 0;
    tk_status status = tk_event_record(events.end, nullptr);
    if (status == TK_SUCCESS)
      status = tk_event_synchronize(events.end);
    if (status == TK_SUCCESS)
      status = tk_event_elapsed_ms(events.start, events.end, &ms);
    if (status != TK_SUCCESS)
      return Status(status, tk_last_error());
    seconds = double(ms) / 1e3 / launches;
    return Status::success();
  }

  tk_device device;
  EventPair events;
  CacheFlush flush;
  bool onDevice = true;
  bool flushing = false;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

/// Median seconds per launch over kRounds rounds, after a warm-up launch
/// that also surfaces launch errors (bad grid, arguments). A round has at
/// least `launchesPerRound` launches, and as many more as fill
/// kMinRoundSeconds by a first short round's measure; `launchesPerRound`
/// returns what was used.
Status timeCandidate(RoundTimer &timer, tk_kernel kernel, tk_grid grid,
                     const tk_args *args, int &launchesPerRound,
                     double &seconds) {
  if (tk_status status = tk_launch(kernel, grid, args))
    return Status(status, tk_last_error());
  double estimate = 0;
  TK_RETURN_IF_ERROR(timer.time(kernel, grid, args, 1, estimate));
  if (estimate > 0)
    launchesPerRound = std::max(
        launchesPerRound, std::min(int(std::ceil(kMinRoundSeconds / estimate)),
                                   timer.maxLaunchesPerRound()));
  std::vector<double> rounds(kRounds);
  for (double &round : rounds)
    TK_RETURN_IF_ERROR(timer.time(kernel, grid, args, launchesPerRound, round));
  seconds = median(rounds);
  return Status::success();
}

} // namespace

std::vector<size_t>
tk::runtime::autotuneFinalists(const std::vector<double> &seconds,
                               const std::vector<bool> &timed) {
  std::vector<size_t> order;
  for (size_t i = 0; i < seconds.size(); ++i)
    if (timed[i])
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return seconds[a] < seconds[b]; });
  std::vector<size_t> finalists;
  for (size_t i : order)
    if (finalists.size() < kMaxFinalists &&
        seconds[i] <= seconds[order.front()] * (1 + kFinalistMargin))
      finalists.push_back(i);
  if (finalists.size() < 2)
    finalists.clear();
  return finalists;
}

namespace {

/// Times the finalists again in kFinalistRounds rounds that visit them in
/// turn (each round starting one further along), so that a drift of the
/// device's clock under its power cap falls on all of them alike rather
/// than on whichever was timed last; `seconds` gets their medians. Each
/// finalist's rounds have the length its first timing chose.
Status retimeFinalists(RoundTimer &timer, const tk_autotune_request &request,
                       const std::vector<tk_kernel> &kernels,
                       const std::vector<size_t> &finalists,
                       const std::vector<int> &launchesPerRound,
                       std::vector<double> &seconds,
                       const std::function<void(size_t)> &progress) {
  std::vector<std::vector<double>> rounds(finalists.size());
  for (int r = 0; r < kFinalistRounds; ++r) {
    for (size_t turn = 0; turn < finalists.size(); ++turn) {
      size_t f = (turn + size_t(r)) % finalists.size();
      size_t i = finalists[f];
      double round = 0;
      TK_RETURN_IF_ERROR(timer.time(kernels[i], request.candidates[i].grid,
                                    request.args, launchesPerRound[i], round));
      rounds[f].push_back(round);
    }
    progress(size_t(r) + 1);
  }
  for (size_t f = 0; f < finalists.size(); ++f)
    seconds[finalists[f]] = median(rounds[f]);
  return Status::success();
}

} // namespace

Status tk::runtime::autotune(tk_device device,
                             const tk_autotune_request *callerRequest,
                             tk_kernel *outKernel,
                             tk_autotune_result *outResult) {
  if (!outKernel)
    return Status(TK_ERROR_INVALID_ARGUMENT, "out_kernel is NULL");
  *outKernel = nullptr;
  if (!callerRequest || callerRequest->struct_size <
                            offsetof(tk_autotune_request, candidate_size))
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "autotune: request is NULL or its struct_size is too small");
  if (!callerRequest->candidates || callerRequest->num_candidates == 0)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "autotune: the request has no candidates");
  if (callerRequest->num_candidates > kMaxCandidates)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  fmt::format("autotune: {} candidates are more than the {} "
                              "one request may list",
                              callerRequest->num_candidates, kMaxCandidates));
  std::vector<tk_autotune_candidate> candidates;
  tk_autotune_request normalized;
  TK_RETURN_IF_ERROR(readCandidates(*callerRequest, candidates, normalized));
  const tk_autotune_request *request = &normalized;
  if (!request->args)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "autotune: the request has no launch arguments (args)");
  if (!request->key || !*request->key)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "autotune: the request needs a key (the shape it is for)");
  if (request->repetitions < 0)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "autotune: repetitions is negative");
  const size_t n = request->num_candidates;
  auto progressOf = [&](const char *stage, size_t total) {
    return [=](size_t done) {
      if (request->progress)
        request->progress(stage, done, total, request->progress_user);
      else
        getLogger().info("autotune {}: {} {}/{}", request->key, stage, done,
                         total);
    };
  };

  tk_device_props props = {};
  props.struct_size = sizeof(props);
  if (tk_status status = tk_device_query(device, &props))
    return Status(status, tk_last_error());
  const char *backend = "?";
  if (tk_status status = tk_backend_name(&backend))
    return Status(status, tk_last_error());
  Device *object = nullptr;
  TK_RETURN_IF_ERROR(Device::fromHandle(device, &object));
  const char *compiler = object->getApi().compiler_version;
  // The target the candidates compile for, not only the device: a winner
  // timed as sm_80 code says nothing about sm_90a code on the same GPU.
  std::string target;
  TK_RETURN_IF_ERROR(object->getPlugin().queryCompileTarget(
      object->getIndex(), props.arch, target));
  std::string pluginIdentity = object->getPlugin().getBuildStamp() + " " +
                               (compiler ? compiler : "") + " " + target;
  std::string directory = recordDirectory();
  std::string record;
  if (!directory.empty()) {
    llvm::SmallString<256> path(directory);
    llvm::sys::path::append(
        path, recordName(*request, props, backend, pluginIdentity));
    record = std::string(path);
  }

  tk_autotune_result result = {};
  if (!record.empty()) {
    if (std::optional<size_t> best = readRecord(record, *request)) {
      const tk_autotune_candidate &c = request->candidates[*best];
      if (tk_status status =
              tk_kernel_create(device, &c.source, &c.options, outKernel))
        return Status(status, tk_last_error());
      result.best = *best;
      result.from_cache = 1;
      getLogger().info("autotune {}: {} (recorded)", request->key,
                       labelOf(*request, *best));
      if (outResult && outResult->struct_size >= sizeof(result)) {
        result.struct_size = sizeof(result);
        *outResult = result;
      }
      return Status::success();
    }
  }

  // Compile every candidate, a few at a time; tk_kernel_create is
  // thread-safe and shares one cache.
  std::vector<tk_kernel> kernels(n, nullptr);
  std::vector<std::string> errors(n);
  std::vector<tk_status> statuses(n, TK_SUCCESS);
  size_t workers = std::max<size_t>(
      1, std::min<size_t>(n, std::thread::hardware_concurrency()));
  size_t compiled = 0;
  for (size_t first = 0; first < n; first += workers) {
    size_t last = std::min(n, first + workers);
    std::vector<std::thread> threads;
    for (size_t i = first; i < last; ++i)
      threads.emplace_back([&, i] {
        const tk_autotune_candidate &c = request->candidates[i];
        statuses[i] =
            tk_kernel_create(device, &c.source, &c.options, &kernels[i]);
        if (statuses[i] != TK_SUCCESS)
          errors[i] = tk_last_error();
      });
    for (std::thread &thread : threads)
      thread.join();
    compiled = last;
    progressOf("compile", n)(compiled);
  }

  std::vector<double> seconds(n, 0.0);
  int repetitions =
      request->repetitions ? request->repetitions : kDefaultRepetitions;
  std::vector<int> launchesPerRound(n, std::max(1, repetitions / kRounds));
  auto releaseAllBut = [&](std::optional<size_t> kept) {
    for (size_t i = 0; i < n; ++i)
      if (kernels[i] && i != kept)
        tk_kernel_release(kernels[i]);
  };
  RoundTimer timer(device);
  if (Status ready = timer.init(props.l2_cache_bytes); !ready.isOk()) {
    releaseAllBut(std::nullopt);
    return ready;
  }
  auto timeProgress = progressOf("time", n);
  std::optional<size_t> best;
  Status firstFailure = Status::success();
  for (size_t i = 0; i < n; ++i) {
    if (statuses[i] == TK_SUCCESS) {
      Status timed =
          timeCandidate(timer, kernels[i], request->candidates[i].grid,
                        request->args, launchesPerRound[i], seconds[i]);
      if (!timed.isOk()) {
        statuses[i] = timed.code();
        errors[i] = timed.message();
        seconds[i] = 0;
      }
    }
    if (statuses[i] != TK_SUCCESS) {
      ++result.failed;
      getLogger().warn("autotune {}: candidate {} failed: {}", request->key,
                       labelOf(*request, i), errors[i]);
      if (firstFailure.isOk())
        firstFailure =
            Status(statuses[i], "autotune: candidate " + labelOf(*request, i) +
                                    " failed: " + errors[i]);
    } else if (!best || seconds[i] < seconds[*best]) {
      best = i;
    }
    timeProgress(i + 1);
  }
  std::vector<bool> timed(n);
  for (size_t i = 0; i < n; ++i)
    timed[i] = statuses[i] == TK_SUCCESS;
  std::vector<size_t> finalists = autotuneFinalists(seconds, timed);
  if (!finalists.empty()) {
    if (Status retimed = retimeFinalists(timer, *request, kernels, finalists,
                                         launchesPerRound, seconds,
                                         progressOf("retime", kFinalistRounds));
        !retimed.isOk()) {
      releaseAllBut(std::nullopt);
      return retimed;
    }
    best = *std::min_element(
        finalists.begin(), finalists.end(),
        [&](size_t a, size_t b) { return seconds[a] < seconds[b]; });
    std::string times;
    for (size_t i : finalists)
      times += (times.empty() ? "" : ", ") + labelOf(*request, i) + " " +
               fmt::format("{:.3g}", seconds[i] * 1e6) + " us";
    getLogger().info("autotune {}: close finalists timed again: {}",
                     request->key, times);
  }
  releaseAllBut(best);
  if (!best)
    return firstFailure;

  if (!record.empty())
    writeRecord(directory, record, *request, *best);
  if (request->plot_path) {
    Status plotted = writePlot(request->plot_path, *request, seconds, *best);
    if (!plotted.isOk()) {
      tk_kernel_release(kernels[*best]);
      return plotted;
    }
  }
  getLogger().info("autotune {}: {} wins, {:.3g} us per launch", request->key,
                   labelOf(*request, *best), seconds[*best] * 1e6);
  *outKernel = kernels[*best];
  result.best = *best;
  result.best_seconds = seconds[*best];
  if (outResult && outResult->struct_size >= sizeof(result)) {
    result.struct_size = sizeof(result);
    *outResult = result;
  }
  return Status::success();
}

Status tk::runtime::createAutotuned(tk_device device,
                                    const tk_kernel_source &source,
                                    const tk_autotune_options &options,
                                    tk_kernel *outKernel) {
  if (options.struct_size < offsetof(tk_autotune_options, config_size))
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "options->autotune->struct_size is too small; set it to "
                  "sizeof(tk_autotune_options)");
  if (!options.configs || options.num_configs == 0)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "options->autotune has no configurations");
  size_t stride = 0;
  TK_RETURN_IF_ERROR(elementSize(
      holds(options.struct_size, offsetof(tk_autotune_options, config_size),
            sizeof(size_t)),
      options.config_size, sizeof(tk_autotune_config), sizeof(ConfigBeforeHint),
      "config_size", stride));
  std::vector<tk_autotune_candidate> candidates(options.num_configs);
  for (size_t i = 0; i < options.num_configs; ++i) {
    // The configuration's fields are a prefix of the current struct in
    // either layout; the hint is 0 in the older one.
    tk_autotune_config config = {};
    std::memcpy(static_cast<void *>(&config),
                reinterpret_cast<const char *>(options.configs) + i * stride,
                stride);
    tk_autotune_candidate &candidate = candidates[i];
    candidate.source = source;
    // The candidate's own options carry no autotune: no recursion.
    candidate.options = {};
    candidate.options.struct_size = sizeof(tk_compile_options);
    candidate.options.num_warps = config.num_warps;
    candidate.options.num_stages = config.num_stages;
    candidate.options.constexprs = config.constexprs;
    candidate.options.num_constexprs = config.num_constexprs;
    candidate.options.min_programs_per_cu = config.min_programs_per_cu;
    candidate.grid = config.grid;
    candidate.label = config.label;
  }
  tk_autotune_request request = {};
  request.struct_size = sizeof(request);
  request.candidates = candidates.data();
  request.num_candidates = candidates.size();
  request.args = options.args;
  request.key = options.key;
  request.repetitions = options.repetitions;
  request.plot_path = options.plot_path;
  request.progress = options.progress;
  request.progress_user = options.progress_user;
  tk_autotune_result result = {};
  result.struct_size = sizeof(result);
  TK_RETURN_IF_ERROR(autotune(device, &request, outKernel, &result));
  if (options.result) {
    size_t size = std::min(options.result->struct_size, sizeof(result));
    if (size < sizeof(size_t))
      size = 0;
    std::memcpy(static_cast<void *>(options.result), &result, size);
    if (size)
      options.result->struct_size = size;
  }
  return Status::success();
}
