//===- bench_cuda.cpp - CUDA backend throughput and launch overhead -------===//
//
// Prints one JSON object with tk's figures on the GPU: vector add (2^28
// fp32), softmax (fp32, 1024 / 4096 / 16384 columns), matmul (fp16 and
// bf16 at 4096^3, 8192^3 and the decode shape 16x8192x8192, each with the
// tile configuration tk_autotune picks for it), fused attention forward
// (fp16, B4 H32 N4096, head dims 64 and 128), and the host cost of
// tk_launch_async against a raw cuLaunchKernel of the same cubin. Kernel
// times are tk events (CUDA events) around one launch on the default stream,
// the median of >= 20 runs after a warm-up, each run after a kernel over
// 256 MB that flushes L2 and keeps the GPU busy while the launch is enqueued
// (Triton's do_bench zeroes a 256 MB buffer the same way). Matmul and
// attention multiply standard normal inputs, like the peers' torch.randn;
// the decode shape also tries split-K. tests/bench/cuda_ratios.py divides these
// by the peers' figures taken in the same command
// (.device/triton_reference.py). A benchmark, not a test: it checks results
// once and asserts no speed.
//
//   tk-bench-cuda --cubin vector_add.cubin > tk_cuda.json
//
//===----------------------------------------------------------------------===//

#include "BuildCommit.h"
#include "SeedKernels.h"
#include "tk/tk.h"

#include "mlir/IR/MLIRContext.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "tk-bench-cuda: %s\n", message.c_str());
  std::exit(1);
}

void check(tk_status status, const char *what) {
  if (status != TK_SUCCESS)
    die(std::string(what) + ": " + tk_status_string(status) + ": " +
        tk_last_error());
}

/// The few driver entry points the benchmark uses beside tk: a raw module
/// launch for the overhead reference, and a device-to-device copy for the
/// memory ceiling softmax is read against. tk's plugin has made the primary
/// context current on this thread by then, and tk's default stream is the
/// driver's (stream 0).
struct Driver {
  using CUresult = int;
  CUresult (*moduleLoadData)(void **, const void *) = nullptr;
  CUresult (*moduleGetFunction)(void **, void *, const char *) = nullptr;
  CUresult (*launchKernel)(void *, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, void *, void **,
                           void **) = nullptr;
  CUresult (*ctxSynchronize)() = nullptr;
  CUresult (*memcpyDtoDAsync)(uint64_t, uint64_t, size_t, void *) = nullptr;

  void open() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      die("cannot open libcuda.so.1: this benchmark needs an NVIDIA GPU");
    auto sym = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(lib, name));
      if (!fn)
        die(std::string("libcuda.so.1 lacks ") + name);
    };
    sym(moduleLoadData, "cuModuleLoadData");
    sym(moduleGetFunction, "cuModuleGetFunction");
    sym(launchKernel, "cuLaunchKernel");
    sym(ctxSynchronize, "cuCtxSynchronize");
    sym(memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  }
  void ok(CUresult result, const char *what) {
    if (result != 0)
      die(std::string(what) + " failed with CUresult " +
          std::to_string(result));
  }
};

Driver driver;
constexpr int kRuns = 25;
/// The threads an sm_90 SM holds (tk_device_props has no field for it):
/// the occupancy hints the softmax candidates try are counted in programs
/// the SM's threads and registers hold.
constexpr int kThreadsPerSM = 2048;

/// `count` standard normal values (Box-Muller over splitmix64, seeded),
/// rounded to fp16 or bf16: the inputs the peers' script draws with
/// torch.randn. A product's power draw, and with it the clock the GPU
/// holds, depends on the data, so tk's kernels multiply the same kind.
std::vector<uint16_t> randomNormalHalves(size_t count, uint64_t seed,
                                         bool bf16) {
  uint64_t state = seed;
  auto next = [&] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return double((z ^ (z >> 31)) >> 11) * 0x1p-53; // [0, 1)
  };
  std::vector<uint16_t> values(count);
  for (size_t i = 0; i < count; i += 2) {
    double radius = std::sqrt(-2 * std::log(1 - next()));
    double angle = 2 * M_PI * next();
    float pair[2] = {float(radius * std::cos(angle)),
                     float(radius * std::sin(angle))};
    for (size_t j = 0; j < 2 && i + j < count; ++j)
      values[i + j] = bf16 ? tk_f32_to_bf16(pair[j]) : tk_f32_to_f16(pair[j]);
  }
  return values;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// The device every benchmark runs on (set once in main).
tk_device benchDevice = nullptr;

/// Work enqueued before each timed run: the vector add seed in place over
/// 256 MB, which reads and writes more than L2 holds (set up in main).
struct L2Flush {
  static constexpr int64_t kElements = int64_t(64) << 20; // f32: 256 MB
  tk_kernel kernel = nullptr;
  tk_buffer buffer = nullptr;
  void enqueue() const {
    tk_arg args[] = {tk_arg_buffer(buffer), tk_arg_buffer(buffer),
                     tk_arg_buffer(buffer), tk_arg_i32(int32_t(kElements))};
    tk_args packed = {args, 4};
    check(tk_launch_async(kernel, {int32_t(kElements / 1024), 1, 1}, &packed,
                          nullptr),
          "tk_launch_async (L2 flush)");
  }
} l2Flush;

/// Milliseconds of one `launch` between two tk events on the default
/// stream, median of kRuns after a warm-up. Each run follows the L2 flush,
/// as Triton's do_bench zeroes a 256 MB buffer before each run: L2 holds
/// nothing of the working set, and the GPU is still flushing while the
/// host enqueues the launch, so the events time the kernel, not the host's
/// launch path (tk_launch_async's cost is the launch benchmark's).
double timeKernelMs(const std::function<void()> &launch, int runs = kRuns) {
  tk_event start, stop;
  check(tk_event_create(benchDevice, &start), "tk_event_create");
  check(tk_event_create(benchDevice, &stop), "tk_event_create");
  launch();
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    l2Flush.enqueue();
    check(tk_event_record(start, nullptr), "tk_event_record");
    launch();
    check(tk_event_record(stop, nullptr), "tk_event_record");
    check(tk_event_synchronize(stop), "tk_event_synchronize");
    float ms = 0;
    check(tk_event_elapsed_ms(start, stop, &ms), "tk_event_elapsed_ms");
    times.push_back(ms);
  }
  check(tk_event_release(start), "tk_event_release");
  check(tk_event_release(stop), "tk_event_release");
  return median(times);
}

struct Bench {
  tk_device device = nullptr;
  /// 32-bit registers of one SM (tk_device_props.registers_per_cu).
  int32_t registersPerCu = 0;
  mlir::MLIRContext context;
  std::string json;
  bool first = true;

  Bench() {
    mlir::DialectRegistry registry;
    tk::registerTkDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  void emit(const std::string &key, const std::string &value) {
    json += (first ? "\n  \"" : ",\n  \"") + key + "\": " + value;
    first = false;
  }

  tk_kernel create(tk::seeds::KernelModule module, int numWarps) {
    if (mlir::failed(module))
      die("the seed builder refused a kernel");
    mlir::ModuleOp op = module->get();
    tk_kernel_source source = {TK_SOURCE_MODULE, &op, 0, nullptr};
    tk_compile_options options = {
        sizeof(tk_compile_options), numWarps, 0, nullptr, 0, nullptr, 0};
    tk_kernel kernel;
    check(tk_kernel_create(device, &source, &options, &kernel),
          "tk_kernel_create");
    return kernel;
  }

  tk_buffer buffer(size_t bytes) {
    tk_buffer b;
    check(tk_buffer_create(device, bytes, &b), "tk_buffer_create");
    return b;
  }

  void launch(tk_kernel kernel, tk_grid grid, std::vector<tk_arg> args) {
    tk_args packed = {args.data(), args.size()};
    check(tk_launch_async(kernel, grid, &packed, nullptr), "tk_launch_async");
  }
};

std::string num(double v) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.6g", v);
  return text;
}

void benchVectorAdd(Bench &bench) {
  const int64_t n = int64_t(1) << 28;
  auto *ctx = &bench.context;
  tk_kernel kernel = bench.create(
      tk::seeds::buildVectorAdd(ctx, mlir::Float32Type::get(ctx), 1024), 4);
  size_t bytes = size_t(n) * 4;
  tk_buffer x = bench.buffer(bytes), y = bench.buffer(bytes),
            out = bench.buffer(bytes);
  std::vector<float> host(n);
  for (int64_t i = 0; i < n; ++i)
    host[i] = float(i % 977);
  check(tk_buffer_write(x, 0, host.data(), bytes), "write");
  check(tk_buffer_write(y, 0, host.data(), bytes), "write");
  tk_grid grid = {int32_t(n / 1024), 1, 1};
  double ms = timeKernelMs([&] {
    bench.launch(kernel, grid,
                 {tk_arg_buffer(x), tk_arg_buffer(y), tk_arg_buffer(out),
                  tk_arg_i32(int32_t(n))});
  });
  std::vector<float> result(n);
  check(tk_buffer_read(out, 0, result.data(), bytes), "read");
  for (int64_t i = 0; i < n; i += 4099)
    if (result[i] != 2 * host[i])
      die("vector add gave a wrong result at " + std::to_string(i));
  bench.emit("vector_add_fp32_2^28", "{\"ms\": " + num(ms) + ", \"GBs\": " +
                                         num(12.0 * n / ms / 1e6) + "}");
  for (tk_buffer b : {x, y, out})
    tk_buffer_release(b);
  tk_kernel_release(kernel);
}

/// `onlyWarps` (0: all) restricts the candidates to one warp count, for
/// profiling one configuration. With `plotDirectory`, each width's tuning
/// chart goes there (autotune_softmax_<cols>.svg).
void benchSoftmax(Bench &bench, int onlyWarps,
                  const std::string &plotDirectory) {
  std::string entries;
  auto *ctx = &bench.context;
  for (int64_t cols : {1024, 4096, 16384}) {
    int64_t rows = cols <= 4096 ? 4096 * 8 : 8192;
    int64_t block = tk::seeds::nextPowerOf2(cols);
    size_t bytes = size_t(rows * cols) * 4;
    tk_buffer in = bench.buffer(bytes), out = bench.buffer(bytes);
    std::vector<float> host(rows * cols);
    for (size_t i = 0; i < host.size(); ++i)
      host[i] = float((i * 2654435761u) % 1000) / 250.0f - 2.0f;
    check(tk_buffer_write(in, 0, host.data(), bytes), "write");
    std::vector<tk_arg> args = {
        tk_arg_buffer(in), tk_arg_buffer(out), tk_arg_i32(int32_t(cols)),
        tk_arg_i32(int32_t(cols)), tk_arg_i32(int32_t(cols))};
    tk_args packed = {args.data(), args.size()};
    // num_warps and the occupancy hint chosen by autotuning at kernel
    // creation (tk_compile_options.autotune): every count from 2 warps to
    // one element per thread, each with ptxas free to use registers and
    // with the occupancy hints below.
    struct Config {
      int warps, minPrograms;
    };
    std::vector<Config> space;
    for (int w = 2; w <= 32 && w * 32 <= block; w *= 2) {
      if (onlyWarps && w != onlyWarps)
        continue;
      space.push_back({w, 0});
      int threads = w * 32, rowShare = int(block) / threads;
      auto programsWithin = [&](int budget) {
        return std::min(bench.registersPerCu / (threads * budget),
                        kThreadsPerSM / threads);
      };
      // The most programs whose registers hold a thread's share of the row
      // with 20 to spare (at 16384 columns and 8 warps, 3 programs of 85
      // registers), then, where the share fits them, registers capped at
      // 40 and at 32.
      std::vector<int> hints = {programsWithin(rowShare + 20)};
      if (rowShare <= 32)
        hints.insert(hints.end(), {programsWithin(40), programsWithin(32)});
      std::sort(hints.begin(), hints.end());
      hints.erase(std::unique(hints.begin(), hints.end()), hints.end());
      for (int programs : hints)
        if (programs >= 2)
          space.push_back({w, programs});
    }
    if (space.empty())
      die("--softmax-warps " + std::to_string(onlyWarps) +
          ": no such candidate for " + std::to_string(cols) + " columns");
    std::vector<tk_autotune_config> configs;
    std::vector<std::string> labels;
    for (const Config &c : space)
      labels.push_back(
          "w" + std::to_string(c.warps) +
          (c.minPrograms ? " o" + std::to_string(c.minPrograms) : ""));
    for (size_t i = 0; i < space.size(); ++i)
      configs.push_back({space[i].warps,
                         0,
                         nullptr,
                         0,
                         {int32_t(rows), 1, 1},
                         labels[i].c_str(),
                         space[i].minPrograms});
    std::string key =
        "softmax fp32 " + std::to_string(rows) + "x" + std::to_string(cols);
    tk_autotune_result tuned = {};
    tuned.struct_size = sizeof(tuned);
    tk_autotune_options tuning = {};
    tuning.struct_size = sizeof(tuning);
    tuning.configs = configs.data();
    tuning.num_configs = configs.size();
    tuning.args = &packed;
    tuning.key = key.c_str();
    tuning.repetitions = 10;
    tuning.result = &tuned;
    std::string plot = plotDirectory.empty()
                           ? ""
                           : plotDirectory + "/autotune_softmax_" +
                                 std::to_string(cols) + ".svg";
    tuning.plot_path = plot.empty() ? nullptr : plot.c_str();
    tk_compile_options options = {};
    options.struct_size = sizeof(options);
    options.autotune = &tuning;
    // Row strides declared multiples of 16 elements, as Triton's launcher
    // specialises them: the rows load as 128-bit vectors.
    auto module = tk::seeds::buildSoftmax(ctx, mlir::Float32Type::get(ctx),
                                          block, nullptr,
                                          /*rowStrideDivisibility=*/16);
    if (mlir::failed(module))
      die("the seed builder refused softmax");
    mlir::ModuleOp op = module->get();
    tk_kernel_source source = {TK_SOURCE_MODULE, &op, 0, nullptr};
    tk_kernel kernel;
    check(tk_kernel_create(bench.device, &source, &options, &kernel),
          "tk_kernel_create (autotuned)");
    const Config &best = space[tuned.best];
    double ms = timeKernelMs([&] {
      bench.launch(kernel, {int32_t(rows), 1, 1}, args);
    });
    std::vector<float> result(rows * cols);
    check(tk_buffer_read(out, 0, result.data(), bytes), "read");
    for (int64_t r = 0; r < rows; r += 997) {
      double sum = 0;
      for (int64_t c = 0; c < cols; ++c)
        sum += result[r * cols + c];
      if (std::fabs(sum - 1.0) > 1e-3)
        die("softmax row " + std::to_string(r) + " sums to " +
            std::to_string(sum));
    }
    // The ceiling: a device-to-device copy of the same bytes (read once,
    // written once, as softmax does), timed the same way in the same run.
    void *inPointer = nullptr, *outPointer = nullptr;
    check(tk_buffer_device_pointer(in, &inPointer), "device pointer");
    check(tk_buffer_device_pointer(out, &outPointer), "device pointer");
    // Bytes read and written, as the peers count them.
    auto gigabytesPerSecond = [&](double ms) {
      return num(2.0 * bytes / ms / 1e6);
    };
    double copyMs = timeKernelMs([&] {
      driver.ok(driver.memcpyDtoDAsync(uint64_t(uintptr_t(outPointer)),
                                       uint64_t(uintptr_t(inPointer)), bytes,
                                       nullptr),
                "cuMemcpyDtoDAsync");
    });
    entries +=
        std::string(entries.empty() ? "" : ", ") + "\"" + std::to_string(rows) +
        "x" + std::to_string(cols) + "\": {\"ms\": " + num(ms) +
        ", \"num_warps\": " + std::to_string(best.warps) +
        ", \"min_programs_per_cu\": " + std::to_string(best.minPrograms) +
        ", \"GBs\": " + gigabytesPerSecond(ms) +
        ", \"d2d_copy_GBs\": " + gigabytesPerSecond(copyMs) + "}";
    tk_buffer_release(in);
    tk_buffer_release(out);
    tk_kernel_release(kernel);
  }
  bench.emit("softmax_fp32", "{" + entries + "}");
}

/// A matmul tile configuration: block sizes and warps.
struct MatmulTiles {
  int64_t bm, bn, bk;
  int warps;
  /// num_stages (0: the backend's default, 3 on CUDA).
  int stages = 0;
  std::string label() const {
    return std::to_string(bm) + "x" + std::to_string(bn) + "x" +
           std::to_string(bk) + " w" + std::to_string(warps) +
           (stages ? " s" + std::to_string(stages) : "");
  }
};

/// One candidate of a benchmark's tk_autotune call.
struct Candidate {
  tk::seeds::KernelModule module;
  std::string label;
  int warps;
  tk_grid grid;
  std::vector<tk_constexpr_value> constexprs = {};
  int stages = 0;
  /// tk_compile_options.min_programs_per_cu (0: no hint).
  int minPrograms = 0;
};

/// tk_autotune over `candidates`, launched with `args`: they compile in
/// parallel, each is timed, the winner is recorded under `key` (and the
/// chart written to `plotPath`, if any). Returns the winner's kernel.
tk_kernel autotune(Bench &bench, std::vector<Candidate> &candidates,
                   std::vector<tk_arg> args, const std::string &key,
                   tk_autotune_result &result,
                   const std::string &plotPath = "") {
  std::vector<mlir::ModuleOp> ops;
  ops.reserve(candidates.size());
  std::vector<tk_autotune_candidate> request;
  for (Candidate &c : candidates) {
    if (mlir::failed(c.module))
      die("the seed builder refused " + c.label);
    ops.push_back(c.module->get());
    tk_autotune_candidate candidate = {};
    candidate.source = {TK_SOURCE_MODULE, &ops.back(), 0, nullptr};
    candidate.options = {
        sizeof(tk_compile_options), c.warps, c.stages,     c.constexprs.data(),
        c.constexprs.size(),        nullptr, c.minPrograms};
    candidate.grid = c.grid;
    candidate.label = c.label.c_str();
    request.push_back(candidate);
  }
  tk_args packed = {args.data(), args.size()};
  tk_autotune_request tune = {};
  tune.struct_size = sizeof(tune);
  tune.candidates = request.data();
  tune.num_candidates = request.size();
  tune.args = &packed;
  tune.key = key.c_str();
  tune.repetitions = 10;
  tune.plot_path = plotPath.empty() ? nullptr : plotPath.c_str();
  tune.progress = [](const char *stage, size_t done, size_t total, void *user) {
    std::fprintf(stderr, "autotune %s: %s %zu/%zu\n",
                 static_cast<const char *>(user), stage, done, total);
  };
  tune.progress_user = const_cast<char *>(key.c_str());
  result = {};
  result.struct_size = sizeof(result);
  tk_kernel kernel;
  check(tk_autotune(bench.device, &tune, &kernel, &result), "tk_autotune");
  return kernel;
}

/// The matmul seed kernel as the benchmarks compile it for row-major
/// operands: the unit inner strides folded in and the row strides declared
/// multiples of 16 elements, which Triton's launcher does by itself for
/// arguments equal to 1 or divisible by 16.
const std::vector<tk_constexpr_value> kUnitInnerStrides = {
    {"stride_ak", 1}, {"stride_bn", 1}, {"stride_cn", 1}};
constexpr unsigned kRowStrideDivisibility = 16;

/// Its launch arguments: a, b, c, M, N, K and the row strides.
std::vector<tk_arg> matmulArgs(tk_buffer a, tk_buffer b, tk_buffer c, int64_t m,
                               int64_t n, int64_t k) {
  return {
      tk_arg_buffer(a),       tk_arg_buffer(b),       tk_arg_buffer(c),
      tk_arg_i32(int32_t(m)), tk_arg_i32(int32_t(n)), tk_arg_i32(int32_t(k)),
      tk_arg_i32(int32_t(k)), tk_arg_i32(int32_t(n)), tk_arg_i32(int32_t(n))};
}

/// tk_autotune of matmul tile `configs` for one shape and input type.
struct TunedMatmul {
  tk_kernel kernel = nullptr;
  MatmulTiles tiles;
  tk_autotune_result result = {};
};

/// The seed matmul with each of `configs` for an m x n result, its grid
/// split over K in `splits` slices (1: not split; else into f32 planes).
std::vector<Candidate> matmulCandidates(Bench &bench, mlir::Type inputType,
                                        llvm::ArrayRef<MatmulTiles> configs,
                                        int64_t m, int64_t n,
                                        int64_t splits = 1) {
  std::vector<Candidate> candidates;
  for (const MatmulTiles &tiles : configs) {
    tk::seeds::MatmulConfig config;
    config.blockM = tiles.bm;
    config.blockN = tiles.bn;
    config.blockK = tiles.bk;
    config.rowStrideDivisibility = kRowStrideDivisibility;
    config.splitK = splits > 1;
    mlir::Type outputType =
        config.splitK ? mlir::Float32Type::get(&bench.context) : inputType;
    candidates.push_back(
        {tk::seeds::buildMatmul(&bench.context, inputType, outputType, config),
         tiles.label(), tiles.warps,
         tk_grid{int32_t(((m + tiles.bm - 1) / tiles.bm) *
                         ((n + tiles.bn - 1) / tiles.bn)),
                 int32_t(splits), 1},
         kUnitInnerStrides, tiles.stages});
  }
  return candidates;
}

TunedMatmul tuneMatmul(Bench &bench, mlir::Type inputType,
                       llvm::ArrayRef<MatmulTiles> configs, int64_t m,
                       int64_t n, int64_t k, tk_buffer a, tk_buffer b,
                       tk_buffer c, const std::string &key,
                       const std::string &plotPath = "") {
  std::vector<Candidate> candidates =
      matmulCandidates(bench, inputType, configs, m, n);
  TunedMatmul tuned;
  tuned.kernel = autotune(bench, candidates, matmulArgs(a, b, c, m, n, k), key,
                          tuned.result, plotPath);
  tuned.tiles = configs[tuned.result.best];
  return tuned;
}

/// A split-K matmul: the seed matmul over S slices of K into f32 planes,
/// then buildSplitKSum adding the planes into c (two launches, as cuBLAS
/// splits K for shapes whose M x N tiles cannot fill the GPU).
struct SplitKMatmul {
  tk_kernel matmul = nullptr, sum = nullptr;
  tk_buffer planes = nullptr;
  tk_grid matmulGrid = {}, sumGrid = {};
  std::vector<tk_arg> matmulArgs, sumArgs;
  std::string label;
  void launch(Bench &bench) const {
    bench.launch(matmul, matmulGrid, matmulArgs);
    bench.launch(sum, sumGrid, sumArgs);
  }
  void release() {
    tk_kernel_release(matmul);
    tk_kernel_release(sum);
    tk_buffer_release(planes);
  }
};

/// The split-K matmul of `splits` slices for c = a @ b (m x n x k), its
/// tiles picked by tk_autotune among `configs`.
SplitKMatmul tuneSplitK(Bench &bench, mlir::Type inputType,
                        llvm::ArrayRef<MatmulTiles> configs, int64_t splits,
                        int64_t m, int64_t n, int64_t k, tk_buffer a,
                        tk_buffer b, tk_buffer c, const std::string &key) {
  SplitKMatmul split;
  int64_t plane = m * n;
  split.planes = bench.buffer(size_t(splits * plane) * 4);
  split.matmulArgs = matmulArgs(a, b, split.planes, m, n, k);
  split.matmulArgs.push_back(tk_arg_i32(int32_t(k / splits)));
  split.matmulArgs.push_back(tk_arg_i32(int32_t(plane)));
  std::vector<Candidate> candidates =
      matmulCandidates(bench, inputType, configs, m, n, splits);
  tk_autotune_result result = {};
  split.matmul = autotune(bench, candidates, split.matmulArgs, key, result);
  split.matmulGrid = candidates[result.best].grid;
  const int64_t block = 1024;
  split.sum = bench.create(
      tk::seeds::buildSplitKSum(&bench.context, inputType, splits, block), 4);
  split.sumGrid = {int32_t((plane + block - 1) / block), 1, 1};
  split.sumArgs = {tk_arg_buffer(split.planes), tk_arg_buffer(c),
                   tk_arg_i32(int32_t(plane)), tk_arg_i32(int32_t(plane))};
  split.label = "split-K " + std::to_string(splits) + ": " +
                configs[result.best].label() + " + sum";
  return split;
}

/// Matmul at 4096^3, 8192^3 and the decode shape 16x8192x8192 for fp16 and
/// bf16 inputs (fp32 accumulator, output in the input type). Each shape
/// takes the tile configuration tk_autotune picks for it, then is timed
/// like every other kernel here.
void benchMatmul(Bench &bench, const std::string &onlyConfig) {
  auto *ctx = &bench.context;
  struct Shape {
    int64_t m, n, k;
    const char *name;
  };
  const Shape shapes[] = {{4096, 4096, 4096, "4096^3"},
                          {8192, 8192, 8192, "8192^3"},
                          {16, 8192, 8192, "16x8192x8192"}};
  const MatmulTiles square[] = {{128, 256, 64, 8, 3}, {256, 128, 64, 8, 3},
                                {128, 256, 64, 8, 4}, {256, 128, 64, 8, 4},
                                {128, 256, 32, 8, 4}, {256, 128, 32, 8, 4},
                                {128, 128, 64, 8, 4}, {128, 128, 64, 4, 4}};
  const MatmulTiles decode[] = {
      {16, 64, 64, 4, 3},  {16, 64, 64, 4, 5},  {16, 128, 64, 4, 4},
      {16, 64, 128, 4, 3}, {16, 32, 128, 4, 4}, {32, 64, 64, 4, 4},
      {16, 64, 256, 4, 3}, {16, 32, 256, 4, 4}, {16, 128, 128, 4, 3}};
  // Tiles of the split-K candidates: each slice of K is shorter, and small
  // rings leave room for more programs on a multiprocessor.
  const MatmulTiles splitTiles[] = {{16, 64, 64, 4, 2},  {16, 64, 64, 4, 3},
                                    {16, 128, 64, 4, 2}, {16, 128, 64, 4, 3},
                                    {16, 64, 128, 4, 2}, {16, 128, 64, 8, 3},
                                    {16, 256, 64, 8, 2}, {16, 64, 256, 4, 2}};
  mlir::Type types[] = {mlir::Float16Type::get(ctx),
                        mlir::BFloat16Type::get(ctx)};
  for (mlir::Type type : types) {
    bool bf16 = type.isBF16();
    auto fromHalf = [&](uint16_t v) {
      return bf16 ? tk_bf16_to_f32(v) : tk_f16_to_f32(v);
    };
    std::string entries;
    for (const Shape &s : shapes) {
      std::string name = std::string(s.name) + (bf16 ? "_bf16" : "_fp16");
      std::vector<MatmulTiles> configs;
      for (const MatmulTiles &tiles : s.m < 64
                                          ? llvm::ArrayRef<MatmulTiles>(decode)
                                          : llvm::ArrayRef<MatmulTiles>(square))
        if (onlyConfig.empty() || tiles.label() == onlyConfig)
          configs.push_back(tiles);
      // Before the inputs are drawn: at 8192^3 that takes seconds.
      if (configs.empty()) {
        std::fprintf(stderr, "matmul %s: no candidate is '%s'; skipped\n",
                     name.c_str(), onlyConfig.c_str());
        continue;
      }
      tk_buffer a = bench.buffer(size_t(s.m * s.k) * 2),
                b = bench.buffer(size_t(s.k * s.n) * 2),
                c = bench.buffer(size_t(s.m * s.n) * 2);
      // Standard normal inputs, like torch.randn's.
      std::vector<uint16_t> ha = randomNormalHalves(s.m * s.k, 1, bf16);
      std::vector<uint16_t> hb = randomNormalHalves(s.k * s.n, 2, bf16);
      check(tk_buffer_write(a, 0, ha.data(), ha.size() * 2), "write");
      check(tk_buffer_write(b, 0, hb.data(), hb.size() * 2), "write");
      TunedMatmul tuned = tuneMatmul(bench, type, configs, s.m, s.n, s.k, a, b,
                                     c, "matmul " + name);
      tk_grid grid = {int32_t(((s.m + tuned.tiles.bm - 1) / tuned.tiles.bm) *
                              ((s.n + tuned.tiles.bn - 1) / tuned.tiles.bn)),
                      1, 1};
      auto run = [&] {
        bench.launch(tuned.kernel, grid, matmulArgs(a, b, c, s.m, s.n, s.k));
      };
      double ms = timeKernelMs(run, s.m >= 8192 ? 20 : kRuns);
      std::string label = tuned.tiles.label();
      // The decode shape also tries split-K (2 to 16 slices of K); the
      // fastest of all is the figure, and the last to write c.
      std::optional<SplitKMatmul> bestSplit;
      for (int64_t splits = 2; s.m < 64 && onlyConfig.empty() && splits <= 16;
           splits *= 2) {
        SplitKMatmul split =
            tuneSplitK(bench, type, splitTiles, splits, s.m, s.n, s.k, a, b, c,
                       "matmul " + name + " split-K " + std::to_string(splits));
        double splitMs = timeKernelMs([&] { split.launch(bench); });
        if (splitMs >= ms) {
          split.release();
          continue;
        }
        ms = splitMs;
        label = split.label;
        if (bestSplit)
          bestSplit->release();
        bestSplit = std::move(split);
      }
      // The figure's variant writes c last, for the check below.
      if (bestSplit)
        bestSplit->launch(bench);
      else
        run();
      // Output elements checked against the host.
      std::vector<uint16_t> hc(s.m * s.n);
      check(tk_buffer_read(c, 0, hc.data(), hc.size() * 2), "read");
      // 16 rows x 16 columns spread over the tiles and over the positions
      // inside a tile (every warpgroup, warp and register of the product).
      for (int64_t i = 0; i < 256; ++i) {
        int64_t row = (i / 16 * (s.m / 16) + i * 37) % s.m;
        int64_t col = (i % 16 * (s.n / 16) + i * 53) % s.n;
        double expect = 0;
        for (int64_t kk = 0; kk < s.k; ++kk)
          expect += double(fromHalf(ha[row * s.k + kk])) *
                    fromHalf(hb[kk * s.n + col]);
        double got = fromHalf(hc[row * s.n + col]);
        if (std::fabs(got - expect) > 1e-2 * std::max(1.0, std::fabs(expect)))
          die("matmul " + name + " gave " + std::to_string(got) + " at (" +
              std::to_string(row) + ", " + std::to_string(col) +
              "), expected " + std::to_string(expect));
      }
      double tflops = 2.0 * s.m * s.n * s.k / ms / 1e9;
      entries += std::string(entries.empty() ? "" : ", ") + "\"" + name +
                 "\": {\"ms\": " + num(ms) + ", \"TFLOPs\": " + num(tflops) +
                 ", \"config\": \"" + label + "\"}";
      tk_kernel_release(tuned.kernel);
      if (bestSplit)
        bestSplit->release();
      for (tk_buffer buf : {a, b, c})
        tk_buffer_release(buf);
    }
    bench.emit(bf16 ? "matmul_bf16" : "matmul", "{" + entries + "}");
  }
}

/// Fused attention forward, fp16, B 4 x H 32 heads, N 4096, head dims 64
/// and 128 (the reference's shapes): the block configuration tk_autotune
/// picks, then timed; 4 * B * H * N^2 * D flops. One output row is checked
/// against the host.
/// `onlyConfig` (empty: all) keeps one candidate, by label, and
/// `onlyHeadDim` (0: both) one head dim, for profiling.
void benchAttention(Bench &bench, const std::string &onlyConfig,
                    int64_t onlyHeadDim) {
  auto *ctx = &bench.context;
  const int64_t heads = 4 * 32, n = 4096;
  mlir::Type f16 = mlir::Float16Type::get(ctx);
  std::string entries;
  for (int64_t d : {64, 128}) {
    if (onlyHeadDim && d != onlyHeadDim)
      continue;
    size_t count = size_t(heads * n * d);
    tk_buffer q = bench.buffer(count * 2), k = bench.buffer(count * 2),
              v = bench.buffer(count * 2), o = bench.buffer(count * 2);
    std::vector<uint16_t> hq = randomNormalHalves(count, 3, false);
    std::vector<uint16_t> hk = randomNormalHalves(count, 4, false);
    std::vector<uint16_t> hv = randomNormalHalves(count, 5, false);
    check(tk_buffer_write(q, 0, hq.data(), count * 2), "write");
    check(tk_buffer_write(k, 0, hk.data(), count * 2), "write");
    check(tk_buffer_write(v, 0, hv.data(), count * 2), "write");
    float scale = float(1 / std::sqrt(double(d)));
    std::vector<tk_arg> args = {tk_arg_buffer(q),       tk_arg_buffer(k),
                                tk_arg_buffer(v),       tk_arg_buffer(o),
                                tk_arg_i32(int32_t(n)), tk_arg_i32(int32_t(d)),
                                tk_arg_f32(scale)};
    struct Blocks {
      int64_t bm, bn;
      int warps;
      /// num_stages (0: the backend's default, 3 on CUDA).
      int stages = 0;
      /// The occupancy hint (0: none).
      int minPrograms = 0;
    };
    // With the scores held in registers, one warpgroup can take 128 rows
    // (two 64-row tiles) and wider key blocks fit in shared memory; two
    // stages leave room for more programs per multiprocessor. Two warpgroups
    // of 64 rows (8 warps) run as two programs an SM only with the
    // occupancy hint (o2: 128 registers a thread); without it ptxas takes
    // more and one program runs alone (at D128 on the H100: 419 against 503
    // TFLOP/s). Two row groups (AttentionConfig::rowGroups) are not
    // candidates: on the H100 they never timed faster than one group, and
    // at D128 the tuning rounds picked them where the timed run then read
    // 455 against 474-499 TFLOP/s for one group. Tried on the H100 and left
    // out: 128x32 w4 (s2-s4), 64x64 w4 (s2 o4, s4), 128x64 w8 s3 o2,
    // 64x128 w4 s2 o3 and 256x64 w16 s2, all slower at both head dims.
    const Blocks configs[] = {
        {64, 64, 4},     {128, 64, 8},       {64, 32, 4},
        {128, 32, 8},    {128, 64, 4},       {128, 128, 8},
        {128, 64, 4, 2}, {128, 64, 8, 2},    {128, 128, 8, 2},
        {64, 128, 4, 2}, {128, 64, 8, 2, 2}, {128, 128, 8, 2, 2}};
    auto label = [](const Blocks &c) {
      return std::to_string(c.bm) + "x" + std::to_string(c.bn) + " w" +
             std::to_string(c.warps) +
             (c.stages ? " s" + std::to_string(c.stages) : "") +
             (c.minPrograms ? " o" + std::to_string(c.minPrograms) : "");
    };
    std::vector<Blocks> chosen;
    for (const Blocks &c : configs)
      if (onlyConfig.empty() || label(c) == onlyConfig)
        chosen.push_back(c);
    if (chosen.empty())
      die("--attention-config '" + onlyConfig + "': no such candidate");
    std::vector<Candidate> candidates;
    for (const Blocks &c : chosen) {
      tk::seeds::AttentionConfig config;
      config.headDimDivisibility = 16;
      config.blockM = c.bm;
      config.blockN = c.bn;
      config.blockD = d;
      candidates.push_back({tk::seeds::buildAttention(ctx, f16, config),
                            label(c),
                            c.warps,
                            tk_grid{int32_t(n / c.bm), int32_t(heads), 1},
                            {},
                            c.stages,
                            c.minPrograms});
    }
    std::string name = "B4H32N4096D" + std::to_string(d);
    tk_autotune_result result;
    tk_kernel kernel =
        autotune(bench, candidates, args, "attention fp16 " + name, result);
    const Blocks &best = chosen[result.best];
    double ms = timeKernelMs([&] {
      bench.launch(kernel, {int32_t(n / best.bm), int32_t(heads), 1}, args);
    });
    // Row `row` of head `head` against the host, in double.
    std::vector<uint16_t> ho(count);
    check(tk_buffer_read(o, 0, ho.data(), count * 2), "read");
    int64_t head = heads - 1, row = n / 3;
    auto at = [&](const std::vector<uint16_t> &x, int64_t r, int64_t c) {
      return double(tk_f16_to_f32(x[size_t((head * n + r) * d + c)]));
    };
    std::vector<double> s(n);
    double rowMax = -INFINITY, sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      double dot = 0;
      for (int64_t c = 0; c < d; ++c)
        dot += at(hq, row, c) * at(hk, j, c);
      s[j] = dot * scale;
      rowMax = std::max(rowMax, s[j]);
    }
    for (int64_t j = 0; j < n; ++j)
      sum += (s[j] = std::exp(s[j] - rowMax));
    for (int64_t c = 0; c < d; ++c) {
      double want = 0;
      for (int64_t j = 0; j < n; ++j)
        want += s[j] * at(hv, j, c);
      want /= sum;
      double got = at(ho, row, c);
      if (std::fabs(got - want) > 2e-2 * std::max(1.0, std::fabs(want)))
        die("attention " + name + " gave " + std::to_string(got) +
            " at column " + std::to_string(c) + ", expected " +
            std::to_string(want));
    }
    double tflops = 4.0 * heads * n * n * d / ms / 1e9;
    entries += std::string(entries.empty() ? "" : ", ") + "\"" + name +
               "\": {\"ms\": " + num(ms) + ", \"TFLOPs\": " + num(tflops) +
               ", \"config\": \"" + candidates[result.best].label + "\"}";
    tk_kernel_release(kernel);
    for (tk_buffer buf : {q, k, v, o})
      tk_buffer_release(buf);
  }
  bench.emit("attention_fwd_fp16", "{" + entries + "}");
}

/// Host microseconds per launch of a one-program vector add: tk_launch_async
/// against cuLaunchKernel of `cubinPath` (the same kernel, compiled by
/// tk-cuda-compile), 20000 launches a round, as the Triton reference counts.
/// The two take turns round by round, so that a drift of the machine (clock,
/// driver queue) falls on both alike; each figure is its rounds' median.
void benchLaunch(Bench &bench, const std::string &cubinPath) {
  auto *ctx = &bench.context;
  tk_kernel kernel = bench.create(
      tk::seeds::buildVectorAdd(ctx, mlir::Float32Type::get(ctx), 1024), 4);
  tk_buffer x = bench.buffer(4096), y = bench.buffer(4096),
            out = bench.buffer(4096);
  tk_arg args[] = {tk_arg_buffer(x), tk_arg_buffer(y), tk_arg_buffer(out),
                   tk_arg_i32(1024)};
  tk_args packed = {args, 4};
  const int calls = 20000, rounds = 11;
  using Clock = std::chrono::steady_clock;
  auto roundUs = [&](const std::function<void()> &launch) {
    auto start = Clock::now();
    for (int i = 0; i < calls; ++i)
      launch();
    driver.ok(driver.ctxSynchronize(), "cuCtxSynchronize");
    return std::chrono::duration<double, std::micro>(Clock::now() - start)
               .count() /
           calls;
  };
  auto tkLaunch = [&] {
    check(tk_launch_async(kernel, {1, 1, 1}, &packed, nullptr),
          "tk_launch_async");
  };
  std::function<void()> rawLaunch;
  void *module = nullptr, *function = nullptr;
  void *px, *py, *po;
  int32_t n = 1024;
  void *params[] = {&px, &py, &po, &n};
  if (!cubinPath.empty()) {
    std::ifstream file(cubinPath, std::ios::binary);
    if (!file)
      die("cannot read " + cubinPath);
    std::string cubin((std::istreambuf_iterator<char>(file)), {});
    driver.ok(driver.moduleLoadData(&module, cubin.data()), "cuModuleLoadData");
    driver.ok(driver.moduleGetFunction(&function, module, "vector_add"),
              "cuModuleGetFunction");
    check(tk_buffer_device_pointer(x, &px), "device pointer");
    check(tk_buffer_device_pointer(y, &py), "device pointer");
    check(tk_buffer_device_pointer(out, &po), "device pointer");
    rawLaunch = [&] {
      driver.ok(driver.launchKernel(function, 1, 1, 1, 128, 1, 1, 0, nullptr,
                                    params, nullptr),
                "cuLaunchKernel");
    };
  }
  // Warm-up: both paths once, then a round each not counted.
  std::vector<double> tkRounds, rawRounds;
  roundUs(tkLaunch);
  if (rawLaunch)
    roundUs(rawLaunch);
  for (int round = 0; round < rounds; ++round) {
    tkRounds.push_back(roundUs(tkLaunch));
    if (rawLaunch)
      rawRounds.push_back(roundUs(rawLaunch));
  }
  double tkUs = median(tkRounds);
  if (rawLaunch) {
    double rawUs = median(rawRounds);
    bench.emit("launch_us_per_call",
               "{\"tk_launch_async\": " + num(tkUs) +
                   ", \"raw_cuLaunchKernel\": " + num(rawUs) +
                   ", \"ratio\": " + num(tkUs / rawUs) +
                   ", \"rounds\": " + std::to_string(rounds) + "}");
  } else {
    bench.emit("launch_us_per_call", "{\"tk_launch_async\": " + num(tkUs) +
                                         ", \"raw_cuLaunchKernel\": null}");
  }
  for (tk_buffer b : {x, y, out})
    tk_buffer_release(b);
  tk_kernel_release(kernel);
}

/// tk_autotune over matmul tile configurations at 4096^3 fp16, on its own
/// key: the winner, its time, and an SVG of throughput per configuration.
/// A second call must take the recorded winner without timing.
void benchAutotune(Bench &bench, const std::string &plotPath) {
  auto *ctx = &bench.context;
  const int64_t s = 4096;
  const MatmulTiles configs[] = {{64, 64, 32, 4, 3},   {128, 64, 32, 4, 3},
                                 {128, 128, 32, 8, 3}, {128, 128, 64, 8, 4},
                                 {128, 256, 32, 8, 3}, {128, 256, 32, 8, 4},
                                 {128, 256, 64, 8, 3}, {256, 128, 64, 8, 3}};
  tk_buffer a = bench.buffer(size_t(s * s) * 2),
            b = bench.buffer(size_t(s * s) * 2),
            c = bench.buffer(size_t(s * s) * 2);
  mlir::Type f16 = mlir::Float16Type::get(ctx);
  TunedMatmul first = tuneMatmul(bench, f16, configs, s, s, s, a, b, c,
                                 "autotune chart fp16 4096^3", plotPath);
  TunedMatmul again = tuneMatmul(bench, f16, configs, s, s, s, a, b, c,
                                 "autotune chart fp16 4096^3");
  // From the disk record nothing was timed.
  std::string tflops =
      first.result.best_seconds > 0
          ? num(2.0 * s * s * s / first.result.best_seconds / 1e12)
          : "null";
  bench.emit(
      "autotune_matmul_4096^3_fp16",
      "{\"best\": \"" + first.tiles.label() + "\", \"seconds\": " +
          num(first.result.best_seconds) + ", \"TFLOPs\": " + tflops +
          ", \"failed_candidates\": " + std::to_string(first.result.failed) +
          ", \"from_cache\": " + std::to_string(first.result.from_cache) +
          ", \"second_call_from_cache\": " +
          std::to_string(again.result.from_cache) + "}");
  tk_kernel_release(first.kernel);
  tk_kernel_release(again.kernel);
  for (tk_buffer buf : {a, b, c})
    tk_buffer_release(buf);
}
} // namespace

int main(int argc, char **argv) {
  std::string cubin, plot, matmulConfig, attentionConfig;
  int softmaxWarps = 0, attentionHeadDim = 0;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--cubin" && i + 1 < argc)
      cubin = argv[++i];
    else if (arg == "--only" && i + 1 < argc)
      only.push_back(argv[++i]);
    else if (arg == "--plot" && i + 1 < argc)
      plot = argv[++i];
    else if (arg == "--matmul-config" && i + 1 < argc)
      matmulConfig = argv[++i];
    else if (arg == "--attention-config" && i + 1 < argc)
      attentionConfig = argv[++i];
    else if (arg == "--attention-head-dim" && i + 1 < argc)
      attentionHeadDim = std::atoi(argv[++i]);
    else if (arg == "--softmax-warps" && i + 1 < argc)
      softmaxWarps = std::atoi(argv[++i]);
    else
      die("usage: tk-bench-cuda [--cubin vector_add.cubin] [--only "
          "vector_add|softmax|matmul|attention|launch|autotune]... [--plot "
          "file.svg (matmul's chart; softmax's go next to it)] "
          "[--matmul-config 'BMxBNxBK wW sS' (one candidate, for "
          "profiling)] [--softmax-warps W] [--attention-config 'BMxBN "
          "wW'] (one candidate) [--attention-head-dim 64|128]");
  }
  auto wanted = [&](const char *name) {
    return only.empty() ||
           std::find(only.begin(), only.end(), name) != only.end();
  };
  Bench bench;
  check(tk_device_get(0, &bench.device), "tk_device_get");
  benchDevice = bench.device;
  const char *backend = "?";
  check(tk_backend_name(&backend), "tk_backend_name");
  if (std::string(backend) != "cuda")
    die(std::string("the selected backend is '") + backend +
        "', not cuda (set TK_BACKEND=cuda on a machine with a GPU)");
  driver.open();
  tk_device_props props = {};
  props.struct_size = sizeof(props);
  check(tk_device_query(bench.device, &props), "tk_device_query");
  bench.emit("device", "\"" + std::string(props.name) + "\"");
  bench.emit("commit", "\"" TK_BUILD_COMMIT "\"");
  bench.registersPerCu = props.registers_per_cu;
  l2Flush.kernel = bench.create(
      tk::seeds::buildVectorAdd(&bench.context,
                                mlir::Float32Type::get(&bench.context), 1024),
      4);
  l2Flush.buffer = bench.buffer(L2Flush::kElements * 4);
  if (wanted("vector_add"))
    benchVectorAdd(bench);
  if (wanted("softmax"))
    // The softmax charts go next to the matmul chart.
    benchSoftmax(bench, softmaxWarps,
                 plot.empty()
                     ? ""
                     : std::filesystem::absolute(plot).parent_path().string());
  if (wanted("matmul"))
    benchMatmul(bench, matmulConfig);
  if (attentionHeadDim && attentionHeadDim != 64 && attentionHeadDim != 128)
    die("--attention-head-dim " + std::to_string(attentionHeadDim) +
        ": the bench has head dims 64 and 128");
  if (wanted("attention"))
    benchAttention(bench, attentionConfig, attentionHeadDim);
  if (wanted("launch"))
    benchLaunch(bench, cubin);
  if (wanted("autotune"))
    benchAutotune(bench, plot);
  std::printf("{%s\n}\n", bench.json.c_str());
  tk_buffer_release(l2Flush.buffer);
  tk_kernel_release(l2Flush.kernel);
  return 0;
}
