//===- ThreadPool.cpp - persistent workers that run a grid ------*- C++ -*-===//
//
// Workers sleep on a condition variable; a launch publishes the job, wakes
// them, and everyone (the caller too) takes chunks of program ids from one
// atomic counter until the grid is exhausted.
//
//===----------------------------------------------------------------------===//

#include "driver/ThreadPool.h"
#include "compiler/ProgramStack.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <thread>

namespace tk::cpu {

std::optional<int> threadsFromEnvironment(const char *text,
                                          std::string &error) {
  error.clear();
  if (!text || !*text)
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 1 ||
      value > kMaxCpuThreads) {
    error = "TK_CPU_THREADS='" + std::string(text) +
            "' is not a number of threads from 1 to " +
            std::to_string(kMaxCpuThreads) +
            "; unset it to use every hardware thread";
    return std::nullopt;
  }
  return static_cast<int>(value);
}

ThreadPool &ThreadPool::get() {
  // Never destroyed: workers may still be parked at exit, and the plugin is
  // linked with -z nodelete so its code outlives dlclose.
  static ThreadPool *pool = [] {
    int threads = static_cast<int>(std::thread::hardware_concurrency());
    // The plugin's initialize refuses a bad value, so this only falls back
    // to the hardware threads where the variable changed since.
    std::string error;
    if (std::optional<int> asked =
            threadsFromEnvironment(std::getenv("TK_CPU_THREADS"), error))
      threads = *asked;
    return new ThreadPool(std::max(1, threads));
  }();
  return *pool;
}

ThreadPool::ThreadPool(int threads) : threads(threads) {
  // Workers run kernels whose tiles live on the stack (matmul accumulators
  // of 64 KiB and more), so they get a generous one.
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kWorkerStackBytes);
  for (int i = 0; i < std::max(threads - 1, 1); ++i) {
    pthread_t thread;
    if (pthread_create(&thread, &attr, &ThreadPool::workerMain, this) == 0)
      workers.push_back(thread);
  }
  pthread_attr_destroy(&attr);
}

void *ThreadPool::workerMain(void *self) {
  auto *pool = static_cast<ThreadPool *>(self);
  uint64_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(pool->mutex);
      pool->wake.wait(lock, [&] { return pool->generation != seen; });
      seen = pool->generation;
    }
    pool->work();
    std::lock_guard<std::mutex> lock(pool->mutex);
    if (--pool->busy == 0)
      pool->done.notify_one();
  }
  return nullptr;
}

void ThreadPool::work() {
  const int64_t gx = grid[0], gy = grid[1];
  const int32_t nx = grid[0], ny = grid[1], nz = grid[2];
  while (true) {
    int64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
    if (begin >= total)
      return;
    int64_t end = std::min(total, begin + chunk);
    for (int64_t pid = begin; pid < end; ++pid) {
      int32_t x = static_cast<int32_t>(pid % gx);
      int32_t y = static_cast<int32_t>((pid / gx) % gy);
      int32_t z = static_cast<int32_t>(pid / (gx * gy));
      fn(args, x, y, z, nx, ny, nz);
    }
  }
}

/// Bytes of stack the calling thread has below this frame; 0 when unknown.
static uint64_t stackLeftOnThisThread() {
  thread_local const uintptr_t lowest = [] {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
      return uintptr_t(0);
    void *address = nullptr;
    size_t size = 0;
    int failed = pthread_attr_getstack(&attr, &address, &size);
    pthread_attr_destroy(&attr);
    return failed ? uintptr_t(0) : reinterpret_cast<uintptr_t>(address);
  }();
  // The frame, not a local: a local may live on ASan's fake stack.
  uintptr_t top = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  return lowest && top > lowest ? top - lowest : 0;
}

void ThreadPool::run(LaunchFn launchFn, void *const *launchArgs,
                     const int32_t launchGrid[3], uint64_t tileStackBytes) {
  bool callerRuns =
      tileStackBytes + kStackMarginBytes <= stackLeftOnThisThread();
  std::lock_guard<std::mutex> serial(launchMutex);
  int64_t count = int64_t(launchGrid[0]) * launchGrid[1] * launchGrid[2];
  fn = launchFn;
  args = launchArgs;
  std::copy(launchGrid, launchGrid + 3, grid);
  total = count;
  // About eight chunks per thread: small enough to balance uneven programs,
  // large enough that the shared counter is not contended.
  chunk = std::max<int64_t>(1, count / (int64_t(size()) * 8));
  next.store(0, std::memory_order_relaxed);
  // Without workers (none could be started) the caller is all there is.
  if (workers.empty() || (callerRuns && (count <= 1 || threads == 1))) {
    work();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    busy = static_cast<int>(workers.size());
    ++generation;
  }
  wake.notify_all();
  if (callerRuns)
    work();
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [&] { return busy == 0; });
}

} // namespace tk::cpu
