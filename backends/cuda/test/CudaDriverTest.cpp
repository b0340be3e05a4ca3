//===- CudaDriverTest.cpp - the CUDA driver layer and packages --*- C++ -*-===//
//
// The package format (round trip, truncated and corrupt input) everywhere;
// with an NVIDIA GPU, the driver layer end to end: device properties,
// memory, a hand-written PTX vector add loaded as a cubin and through the
// PTX JIT fallback, launches on the default and a created stream, more than
// 48 KB of dynamic shared memory, and occupancy. Without a driver, the
// NO_DEVICE report.
//
//===----------------------------------------------------------------------===//

#include "compiler/Package.h"
#include "driver/Device.h"
#include "driver/Driver.h"
#include "driver/Executable.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using tk::cuda::Package;

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The folder of the test kernels: $TK_CUDA_TEST_KERNELS when set (a copy
/// of the test on another machine), else the source tree's.
std::string kernelsDir() {
  const char *dir = std::getenv("TK_CUDA_TEST_KERNELS");
  return dir && *dir ? dir : TK_CUDA_TEST_KERNELS;
}

Package samplePackage() {
  Package package;
  package.arch = "sm_90a";
  package.entry = "vector_add";
  package.numWarps = 4;
  package.threadsPerBlock = 128;
  package.sharedMemoryBytes = 1024;
  package.registersPerThread = 12;
  package.ptx = ".version 8.0\n.target sm_90a\n";
  // An ELF64 little-endian header for EM_CUDA (190), padded to 64 bytes.
  package.cubin = std::string(64, '\0');
  package.cubin[0] = 0x7f;
  package.cubin[1] = 'E';
  package.cubin[2] = 'L';
  package.cubin[3] = 'F';
  package.cubin[4] = 2;
  package.cubin[5] = 1;
  package.cubin[18] = static_cast<char>(190);
  return package;
}

//===----------------------------------------------------------------------===//
// Package format
//===----------------------------------------------------------------------===//

TEST(CudaPackage, RoundTrip) {
  Package in = samplePackage();
  std::string bytes = tk::cuda::serializePackage(in);
  Package out;
  std::string error;
  ASSERT_EQ(tk::cuda::parsePackage(bytes.data(), bytes.size(), out, error),
            TK_SUCCESS)
      << error;
  EXPECT_EQ(out.arch, in.arch);
  EXPECT_EQ(out.entry, in.entry);
  EXPECT_EQ(out.numWarps, in.numWarps);
  EXPECT_EQ(out.threadsPerBlock, in.threadsPerBlock);
  EXPECT_EQ(out.sharedMemoryBytes, in.sharedMemoryBytes);
  EXPECT_EQ(out.registersPerThread, in.registersPerThread);
  EXPECT_EQ(out.ptx, in.ptx);
  EXPECT_EQ(out.cubin, in.cubin);
  EXPECT_EQ(tk::cuda::validatePackage(bytes.data(), bytes.size(), error),
            TK_SUCCESS)
      << error;
}

TEST(CudaPackage, EveryTruncationIsRejected) {
  std::string bytes = tk::cuda::serializePackage(samplePackage());
  for (size_t size = 0; size < bytes.size(); ++size) {
    // A copy of exactly `size` bytes, so an overread is a heap error under
    // sanitizers rather than a read of the rest of `bytes`.
    std::vector<char> prefix(bytes.begin(), bytes.begin() + size);
    Package out;
    std::string error;
    EXPECT_EQ(tk::cuda::parsePackage(size ? prefix.data() : nullptr, size, out,
                                     error),
              TK_ERROR_INVALID_ARGUMENT)
        << "accepted a package cut to " << size << " bytes";
    EXPECT_NE(error.find("not a valid CUDA package"), std::string::npos)
        << error;
  }
}

TEST(CudaPackage, CorruptFieldsAreRejected) {
  std::string good = tk::cuda::serializePackage(samplePackage());
  struct Case {
    const char *what;
    size_t offset;
    char value;
    const char *message;
  };
  const Case cases[] = {
      {"magic", 0, 'X', "magic"},
      {"format version", 8, 7, "format version 7"},
      {"num_warps", 12, 0, "num_warps 0"},
      {"threads per block", 18, 1, "threads per block"},
      // The arch length's high byte: a length far past the end.
      {"arch length", 31, 0x7f, "arch name"},
      {"arch text", 32, 'x', "is not an sm_* name"},
  };
  for (const Case &c : cases) {
    std::string bytes = good;
    bytes[c.offset] = c.value;
    Package out;
    std::string error;
    EXPECT_EQ(tk::cuda::parsePackage(bytes.data(), bytes.size(), out, error),
              TK_ERROR_INVALID_ARGUMENT)
        << c.what;
    EXPECT_NE(error.find(c.message), std::string::npos)
        << c.what << ": " << error;
  }

  std::string trailing = good + "x";
  Package out;
  std::string error;
  EXPECT_EQ(
      tk::cuda::parsePackage(trailing.data(), trailing.size(), out, error),
      TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error.find("unexpected bytes"), std::string::npos) << error;
}

TEST(CudaPackage, ValidateChecksTheCubin) {
  std::string error;
  Package notElf = samplePackage();
  notElf.cubin = std::string(64, 'x');
  std::string bytes = tk::cuda::serializePackage(notElf);
  EXPECT_EQ(tk::cuda::validatePackage(bytes.data(), bytes.size(), error),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error.find("not an ELF file"), std::string::npos) << error;

  Package x86 = samplePackage();
  x86.cubin[18] = 62; // EM_X86_64
  bytes = tk::cuda::serializePackage(x86);
  EXPECT_EQ(tk::cuda::validatePackage(bytes.data(), bytes.size(), error),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error.find("not EM_CUDA"), std::string::npos) << error;

  Package ptxOnly = samplePackage();
  ptxOnly.cubin.clear();
  bytes = tk::cuda::serializePackage(ptxOnly);
  EXPECT_EQ(tk::cuda::validatePackage(bytes.data(), bytes.size(), error),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error.find("no cubin"), std::string::npos) << error;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

bool driverInstalled() {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  return library != nullptr;
}

TEST(CudaDriver, NoDriverIsNoDevice) {
  if (driverInstalled())
    GTEST_SKIP() << "libcuda.so.1 is installed";
  std::string error;
  EXPECT_EQ(tk::cuda::initializeDevices(error), TK_ERROR_NO_DEVICE);
  EXPECT_NE(error.find("libcuda.so.1"), std::string::npos) << error;
  EXPECT_EQ(tk::cuda::deviceCount(), 0);
  void *pointer = nullptr;
  EXPECT_EQ(tk::cuda::allocateMemory(0, 16, &pointer, error),
            TK_ERROR_NO_DEVICE);
  EXPECT_FALSE(error.empty());
}

/// Skips the test unless a CUDA device is usable.
#define REQUIRE_DEVICE()                                                       \
  do {                                                                         \
    std::string initError;                                                     \
    if (tk::cuda::initializeDevices(initError) != TK_SUCCESS)                  \
      GTEST_SKIP() << initError;                                               \
  } while (false)

/// The ptxas of the toolkit, when one is installed ($CUDA_HOME or
/// /usr/local/cuda).
std::string findPtxas() {
  const char *home = std::getenv("CUDA_HOME");
  std::string path =
      std::string(home && *home ? home : "/usr/local/cuda") + "/bin/ptxas";
  return access(path.c_str(), X_OK) == 0 ? path : "";
}

/// The test kernel as a package: PTX always, a cubin for `arch` when ptxas
/// exists ("" for none).
Package vectorAddPackage(const std::string &arch, int sharedBytes = 0) {
  Package package;
  package.arch = arch.empty() ? "sm_80" : arch;
  package.entry = "vector_add";
  package.numWarps = 4;
  package.threadsPerBlock = 128;
  package.sharedMemoryBytes = sharedBytes;
  package.ptx = readFile(kernelsDir() + "/vector_add_f32.ptx");
  std::string ptxas = findPtxas();
  if (!arch.empty() && !ptxas.empty()) {
    std::string cubin =
        ::testing::TempDir() + "tk-cuda-test-" + arch + ".cubin";
    std::string command = ptxas + " -arch=" + arch + " -O3 -o " + cubin + " " +
                          kernelsDir() + "/vector_add_f32.ptx";
    if (std::system(command.c_str()) == 0)
      package.cubin = readFile(cubin);
    std::remove(cubin.c_str());
  }
  return package;
}

struct DeviceBuffer {
  void *pointer = nullptr;
  explicit DeviceBuffer(size_t bytes) {
    std::string error;
    EXPECT_EQ(tk::cuda::allocateMemory(0, bytes, &pointer, error), TK_SUCCESS)
        << error;
  }
  ~DeviceBuffer() {
    std::string error;
    tk::cuda::freeMemory(0, pointer, error);
  }
};

/// Loads `package` and checks out = x + y over n elements on `stream`.
void runVectorAdd(const Package &package, void *stream, bool expectPtx) {
  std::string error;
  std::string bytes = tk::cuda::serializePackage(package);
  std::unique_ptr<tk::cuda::Executable> executable;
  ASSERT_EQ(tk::cuda::loadExecutable(0, bytes.data(), bytes.size(),
                                     "vector_add", executable, error),
            TK_SUCCESS)
      << error;
  EXPECT_EQ(executable->fromPtx, expectPtx);
  EXPECT_GT(executable->registersPerThread, 0);
  int32_t blocks = 0;
  ASSERT_EQ(tk::cuda::executableOccupancy(*executable, blocks, error),
            TK_SUCCESS)
      << error;
  EXPECT_GT(blocks, 0);

  const int n = 100003;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * i;
    y[i] = 1000.0f - i;
  }
  size_t bytesPerArray = n * sizeof(float);
  DeviceBuffer dx(bytesPerArray), dy(bytesPerArray), dout(bytesPerArray),
      dcopy(bytesPerArray);
  using tk::cuda::CopyKind;
  ASSERT_EQ(tk::cuda::copyMemory(0, CopyKind::HostToDevice, dx.pointer,
                                 x.data(), bytesPerArray, error),
            TK_SUCCESS)
      << error;
  ASSERT_EQ(tk::cuda::copyMemory(0, CopyKind::HostToDevice, dy.pointer,
                                 y.data(), bytesPerArray, error),
            TK_SUCCESS)
      << error;
  int32_t count = n;
  void *args[] = {&dx.pointer, &dy.pointer, &dout.pointer, &count};
  int32_t grid[3] = {(n + 127) / 128, 1, 1};
  ASSERT_EQ(tk::cuda::launchExecutable(*executable, grid, args, stream, error),
            TK_SUCCESS)
      << error;
  if (stream) {
    ASSERT_EQ(tk::cuda::synchronizeStream(0, stream, error), TK_SUCCESS)
        << error;
  }
  ASSERT_EQ(tk::cuda::synchronizeDevice(0, error), TK_SUCCESS) << error;
  ASSERT_EQ(tk::cuda::copyMemory(0, CopyKind::DeviceToDevice, dcopy.pointer,
                                 dout.pointer, bytesPerArray, error),
            TK_SUCCESS)
      << error;
  ASSERT_EQ(tk::cuda::copyMemory(0, CopyKind::DeviceToHost, out.data(),
                                 dcopy.pointer, bytesPerArray, error),
            TK_SUCCESS)
      << error;
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out[i], x[i] + y[i]) << i;
}

TEST(CudaDriver, DeviceProperties) {
  REQUIRE_DEVICE();
  EXPECT_GT(tk::cuda::deviceCount(), 0);
  tk_device_props props;
  std::memset(&props, 0, sizeof(props));
  props.struct_size = sizeof(props);
  std::string error;
  ASSERT_EQ(tk::cuda::queryDeviceProps(0, &props, error), TK_SUCCESS) << error;
  EXPECT_GT(std::strlen(props.name), 0u);
  EXPECT_STREQ(props.vendor, "NVIDIA");
  EXPECT_STREQ(props.backend, "cuda");
  EXPECT_EQ(std::strncmp(props.arch, "sm_", 3), 0) << props.arch;
  EXPECT_GT(props.compute_units, 0);
  EXPECT_EQ(props.warp_size, 32);
  EXPECT_GT(props.registers_per_cu, 0);
  EXPECT_GE(props.shared_memory_per_block, 48 * 1024);
  EXPECT_EQ(props.max_threads_per_block, 1024);
  EXPECT_GT(props.max_grid[0], 65535);
  EXPECT_GT(props.clock_mhz, 0);
  EXPECT_GT(props.memory_bus_width_bits, 0);
  EXPECT_GT(props.l2_cache_bytes, 0);
  EXPECT_GT(props.total_memory_bytes, 0);
  std::printf("device 0: %s, %s, %d SMs, %lld B shared/block opt-in, "
              "%d MHz, %d-bit bus, %lld B L2, %lld B\n",
              props.name, props.arch, props.compute_units,
              static_cast<long long>(props.shared_memory_per_block),
              props.clock_mhz, props.memory_bus_width_bits,
              static_cast<long long>(props.l2_cache_bytes),
              static_cast<long long>(props.total_memory_bytes));

  // A struct of an older, smaller layout is filled only as far as it goes.
  tk_device_props small;
  std::memset(&small, 0x5a, sizeof(small));
  small.struct_size = offsetof(tk_device_props, warp_size);
  ASSERT_EQ(tk::cuda::queryDeviceProps(0, &small, error), TK_SUCCESS);
  EXPECT_EQ(small.warp_size, 0x5a5a5a5a);
  EXPECT_EQ(tk::cuda::checkDevice(tk::cuda::deviceCount(), error),
            TK_ERROR_NOT_FOUND);
}

TEST(CudaDriver, VectorAddFromPtx) {
  REQUIRE_DEVICE();
  runVectorAdd(vectorAddPackage(""), nullptr, /*expectPtx=*/true);
}

TEST(CudaDriver, VectorAddFromCubinOnAStream) {
  REQUIRE_DEVICE();
  if (findPtxas().empty())
    GTEST_SKIP() << "no ptxas to make a cubin";
  std::string error;
  int computeCapability = 0;
  ASSERT_EQ(tk::cuda::deviceComputeCapability(0, computeCapability, error),
            TK_SUCCESS);
  std::string arch = "sm_" + std::to_string(computeCapability) +
                     (computeCapability == 90 ? "a" : "");
  void *stream = nullptr;
  ASSERT_EQ(tk::cuda::createStream(0, &stream, error), TK_SUCCESS) << error;
  runVectorAdd(vectorAddPackage(arch), stream, /*expectPtx=*/false);
  EXPECT_EQ(tk::cuda::destroyStream(0, stream, error), TK_SUCCESS) << error;
}

TEST(CudaDriver, VectorAddOnAWrappedCallerStream) {
  REQUIRE_DEVICE();
  // A stream the caller made with the driver API (as PyTorch makes its
  // streams), adopted without ownership: the kernel runs on it, and
  // forgetting it leaves it usable and the caller's to destroy.
  std::string error;
  ASSERT_EQ(tk::cuda::makeDeviceCurrent(0, error), TK_SUCCESS) << error;
  CUstream callers = nullptr;
  ASSERT_EQ(tk::cuda::driver().cuStreamCreate(&callers, CU_STREAM_NON_BLOCKING),
            CUDA_SUCCESS);
  void *wrapped = nullptr;
  ASSERT_EQ(tk::cuda::wrapStream(0, callers, &wrapped, error), TK_SUCCESS)
      << error;
  EXPECT_EQ(wrapped, static_cast<void *>(callers));
  runVectorAdd(vectorAddPackage(""), wrapped, /*expectPtx=*/true);
  EXPECT_EQ(tk::cuda::driver().cuStreamSynchronize(callers), CUDA_SUCCESS);
  EXPECT_EQ(tk::cuda::driver().cuStreamDestroy_v2(callers), CUDA_SUCCESS);
}

TEST(CudaDriver, CubinOfAnotherGenerationFallsBackToPtx) {
  REQUIRE_DEVICE();
  if (findPtxas().empty())
    GTEST_SKIP() << "no ptxas to make a cubin";
  std::string error;
  int computeCapability = 0;
  ASSERT_EQ(tk::cuda::deviceComputeCapability(0, computeCapability, error),
            TK_SUCCESS);
  if (computeCapability / 10 == 8)
    GTEST_SKIP() << "an sm_80 cubin runs on this GPU";
  runVectorAdd(vectorAddPackage("sm_80"), nullptr, /*expectPtx=*/true);
}

TEST(CudaDriver, DynamicSharedMemoryAbove48KB) {
  REQUIRE_DEVICE();
  // 64 KB needs the cuFuncSetAttribute opt-in at load, or the launch fails.
  runVectorAdd(vectorAddPackage("", 64 * 1024), nullptr, /*expectPtx=*/true);
}

TEST(CudaDriver, LoadErrorsNameTheProblem) {
  REQUIRE_DEVICE();
  std::string error;
  std::unique_ptr<tk::cuda::Executable> executable;
  Package package = vectorAddPackage("");
  std::string bytes = tk::cuda::serializePackage(package);
  EXPECT_EQ(tk::cuda::loadExecutable(0, bytes.data(), bytes.size(), "other",
                                     executable, error),
            TK_ERROR_NOT_FOUND);
  EXPECT_NE(error.find("'other'"), std::string::npos) << error;

  package.ptx = ".version 8.0\n.target sm_80\n.address_size 64\nnonsense\n";
  bytes = tk::cuda::serializePackage(package);
  EXPECT_NE(tk::cuda::loadExecutable(0, bytes.data(), bytes.size(),
                                     "vector_add", executable, error),
            TK_SUCCESS);
  EXPECT_NE(error.find("cuModuleLoadDataEx"), std::string::npos) << error;
  EXPECT_NE(error.find("CUDA error 'CUDA_ERROR_"), std::string::npos) << error;
}

} // namespace
