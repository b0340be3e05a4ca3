//===- ThreadPool.h - persistent workers that run a grid --------*- C++ -*-===//
//
// The CPU backend runs the program instances of a launch on a fixed set of
// worker threads (plus the launching thread); a launch allocates nothing.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CPU_DRIVER_THREADPOOL_H_
#define TK_BACKENDS_CPU_DRIVER_THREADPOOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <string>
#include <vector>

namespace tk::cpu {

/// The entry point of a compiled kernel: `<kernel>_tk_launch`.
using LaunchFn = void (*)(void *const *args, int32_t pidX, int32_t pidY,
                          int32_t pidZ, int32_t numX, int32_t numY,
                          int32_t numZ);

/// The most threads TK_CPU_THREADS may ask for.
inline constexpr int kMaxCpuThreads = 4096;

/// The pool size TK_CPU_THREADS asks for (`text`, its value): nothing when
/// it is unset or empty (every hardware thread); an error naming the value
/// when it is not a whole number from 1 to kMaxCpuThreads.
std::optional<int> threadsFromEnvironment(const char *text, std::string &error);

class ThreadPool {
public:
  /// The process-wide pool, started on first use. Its size is
  /// TK_CPU_THREADS if set, else the number of hardware threads.
  static ThreadPool &get();

  /// Runs `fn` for every program of `grid` (x fastest) and returns when all
  /// are done. Launches from several threads are serialised. The launching
  /// thread runs programs too where its stack has room for
  /// `tileStackBytes` (and a margin); otherwise only workers do, and there
  /// is always one.
  void run(LaunchFn fn, void *const *args, const int32_t grid[3],
           uint64_t tileStackBytes);

  /// Threads that execute programs at once, the caller included.
  int size() const { return threads; }

private:
  explicit ThreadPool(int threads);
  static void *workerMain(void *self);
  void work();

  /// TK_CPU_THREADS: the caller and threads - 1 workers, or (with one
  /// thread) one worker for the programs the caller may not run.
  int threads = 1;
  std::vector<pthread_t> workers;
  std::mutex launchMutex;

  // The current job, published under `mutex` with a new generation.
  std::mutex mutex;
  std::condition_variable wake, done;
  uint64_t generation = 0;
  int busy = 0;
  LaunchFn fn = nullptr;
  void *const *args = nullptr;
  int32_t grid[3] = {1, 1, 1};
  int64_t total = 0;
  int64_t chunk = 1;
  std::atomic<int64_t> next{0};
};

} // namespace tk::cpu

#endif // TK_BACKENDS_CPU_DRIVER_THREADPOOL_H_
