//===- bench_cuda.cpp - tk_launch_async's host cost on CUDA ---------------===//
//
// Prints one JSON object: the host microseconds per tk_launch_async of a
// one-program vector add against a raw cuLaunchKernel of the same cubin, in
// rounds that take turns. Kernel throughput is measured by
// cuda_bench.py (beside this file), which times tk beside its peers in one
// process; a launch's host cost needs C, without Python in the way.
//
//   tk-bench-cuda --cubin vector_add.cubin > launch.json
//
//===----------------------------------------------------------------------===//

#include "BuildCommit.h"
#include "SeedKernels.h"
#include "tk/tk.h"

#include "mlir/IR/MLIRContext.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
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
/// launch for the overhead reference. tk's plugin has made the primary
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
  }
  void ok(CUresult result, const char *what) {
    if (result != 0)
      die(std::string(what) + " failed with CUresult " +
          std::to_string(result));
  }
};

Driver driver;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string num(double v) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.6g", v);
  return text;
}

/// The device and the JSON being written.
struct Bench {
  tk_device device = nullptr;
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
    tk_compile_options options = {sizeof(tk_compile_options),
                                  numWarps,
                                  0,
                                  nullptr,
                                  0,
                                  nullptr,
                                  0,
                                  nullptr,
                                  0};
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
};

/// Host microseconds per launch of a one-program vector add: tk_launch_async
/// against cuLaunchKernel of `cubinPath` (the same kernel, compiled by
/// tk-compile), 20000 launches a round, as the Triton reference counts.
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

} // namespace

int main(int argc, char **argv) {
  std::string cubin;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--cubin" && i + 1 < argc)
      cubin = argv[++i];
    else
      die("usage: tk-bench-cuda [--cubin vector_add.cubin] (without it, "
          "only tk's side is timed)");
  }
  Bench bench;
  check(tk_device_get(0, &bench.device), "tk_device_get");
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
  benchLaunch(bench, cubin);
  std::printf("{%s\n}\n", bench.json.c_str());
  return 0;
}
