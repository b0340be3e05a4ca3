//===- bench_cpu.cpp - CPU backend throughput and launch overhead ---------===//
//
// Prints one JSON object: vector add of 2^26 fp32 against memcpy measured in
// the same run (bandwidth ratio), and the host overhead of tk_launch for a
// tiny cached kernel. Medians of repeated runs after warm-up; a benchmark,
// never a test: it asserts nothing about speed.
//
//===----------------------------------------------------------------------===//

#include "tk/tk.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F> double timeMedianSeconds(int reps, F &&f) {
  f(); // warm-up
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    auto start = Clock::now();
    f();
    times.push_back(
        std::chrono::duration<double>(Clock::now() - start).count());
  }
  return median(times);
}

[[noreturn]] void fail(const char *what, tk_status status) {
  std::fprintf(stderr, "bench_cpu: %s failed: %s: %s\n", what,
               tk_status_string(status), tk_last_error());
  std::exit(1);
}

#define CHECK_TK(call)                                                         \
  do {                                                                         \
    tk_status s_ = (call);                                                     \
    if (s_ != TK_SUCCESS)                                                      \
      fail(#call, s_);                                                         \
  } while (0)

std::string readFile(const char *path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "bench_cpu: cannot read %s\n", path);
    std::exit(1);
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
    bool help = argc == 2 && (std::strcmp(argv[1], "--help") == 0 ||
                              std::strcmp(argv[1], "-h") == 0);
    std::fprintf(help ? stdout : stderr,
                 "usage: tk-bench-cpu [VECTOR_ADD.tk]\n"
                 "Prints one JSON object: a vector add of 2^26 f32 against "
                 "memcpy, and tk_launch's\nhost overhead, on the default "
                 "backend (default kernel: %s).\n",
                 TK_VECTOR_ADD_TK);
    return help ? 0 : 2;
  }
  const char *kernelPath = argc > 1 ? argv[1] : TK_VECTOR_ADD_TK;
  const int64_t n = int64_t(1) << 26;
  const int reps = 10;

  tk_device device;
  CHECK_TK(tk_device_get(0, &device));
  const char *backend = "?";
  CHECK_TK(tk_backend_name(&backend));

  std::string text = readFile(kernelPath);
  tk_kernel_source source = {TK_SOURCE_TEXT, text.data(), text.size(),
                             "vector_add"};
  tk_kernel kernel;
  CHECK_TK(tk_kernel_create(device, &source, nullptr, &kernel));

  const size_t bytes = size_t(n) * sizeof(float);
  tk_buffer x, y, out;
  CHECK_TK(tk_buffer_create(device, bytes, &x));
  CHECK_TK(tk_buffer_create(device, bytes, &y));
  CHECK_TK(tk_buffer_create(device, bytes, &out));
  std::vector<float> hx(n), hy(n);
  for (int64_t i = 0; i < n; ++i) {
    hx[i] = float(i % 1000);
    hy[i] = 2.0f;
  }
  CHECK_TK(tk_buffer_write(x, 0, hx.data(), bytes));
  CHECK_TK(tk_buffer_write(y, 0, hy.data(), bytes));

  tk_arg argv4[] = {tk_arg_buffer(x), tk_arg_buffer(y), tk_arg_buffer(out),
                    tk_arg_i32(int32_t(n))};
  tk_args args = {argv4, 4};
  tk_grid grid = {int32_t(n / 1024), 1, 1};
  double addSeconds = timeMedianSeconds(
      reps, [&] { CHECK_TK(tk_launch(kernel, grid, &args)); });

  // Check the result once, so the figure is for a correct kernel.
  std::vector<float> hout(n);
  CHECK_TK(tk_buffer_read(out, 0, hout.data(), bytes));
  for (int64_t i = 0; i < n; ++i)
    if (hout[i] != hx[i] + hy[i]) {
      std::fprintf(stderr, "bench_cpu: wrong result at %lld\n", (long long)i);
      return 1;
    }

  // The reference: memcpy of the same size, once on one thread and once split
  // over every hardware thread; the faster of the two is the bar, so the ratio
  // is never flattered by a single-threaded reference.
  std::vector<float> src(n, 1.0f), dst(n, 0.0f);
  double memcpySeconds = timeMedianSeconds(
      reps, [&] { std::memcpy(dst.data(), src.data(), bytes); });
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  double parallelMemcpySeconds = timeMedianSeconds(reps, [&] {
    std::vector<std::thread> workers;
    size_t chunk = (bytes / threads + 63) & ~size_t(63);
    for (unsigned t = 0; t < threads; ++t) {
      size_t begin = std::min(bytes, t * chunk);
      size_t end = std::min(bytes, begin + chunk);
      workers.emplace_back([&, begin, end] {
        std::memcpy(reinterpret_cast<char *>(dst.data()) + begin,
                    reinterpret_cast<const char *>(src.data()) + begin,
                    end - begin);
      });
    }
    for (auto &w : workers)
      w.join();
  });
  memcpySeconds = std::min(memcpySeconds, parallelMemcpySeconds);

  // Launch overhead: a tiny kernel (one program, n = 1), cached.
  tk_arg tinyArgs[] = {tk_arg_buffer(x), tk_arg_buffer(y), tk_arg_buffer(out),
                       tk_arg_i32(1)};
  tk_args tiny = {tinyArgs, 4};
  tk_grid one = {1, 1, 1};
  const int launches = 20000;
  std::vector<double> perLaunch;
  for (int round = 0; round < 7; ++round) {
    auto start = Clock::now();
    for (int i = 0; i < launches; ++i)
      CHECK_TK(tk_launch(kernel, one, &tiny));
    perLaunch.push_back(
        std::chrono::duration<double>(Clock::now() - start).count() / launches);
  }

  double addGBs = 3.0 * double(bytes) / addSeconds / 1e9; // 2 reads, 1 write
  double memcpyGBs = 2.0 * double(bytes) / memcpySeconds / 1e9; // read + write
  std::printf("{\n  \"backend\": \"%s\",\n", backend);
  std::printf("  \"vector_add\": {\"n\": %lld, \"seconds\": %.6f, "
              "\"GBps\": %.2f},\n",
              (long long)n, addSeconds, addGBs);
  std::printf("  \"memcpy\": {\"bytes\": %zu, \"seconds\": %.6f, "
              "\"GBps\": %.2f, \"threads_tried\": [1, %u]},\n",
              bytes, memcpySeconds, memcpyGBs, threads);
  std::printf("  \"vector_add_over_memcpy\": %.3f,\n", addGBs / memcpyGBs);
  std::printf("  \"launch_overhead_us\": %.3f\n}\n", median(perLaunch) * 1e6);

  tk_buffer_release(x);
  tk_buffer_release(y);
  tk_buffer_release(out);
  tk_kernel_release(kernel);
  return 0;
}
