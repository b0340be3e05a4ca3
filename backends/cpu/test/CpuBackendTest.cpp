//===- CpuBackendTest.cpp - the CPU plugin through its ABI -----*- C++ -*-===//
//
// Loads libtk_backend_cpu.so with dlopen, compiles the seed kernels through
// tk_backend_interface, launches them over grids on host buffers and compares
// with host references in f32, f16 and bf16. Inputs sit right before a
// PROT_NONE page (and after another), so a masked-off lane that touched
// memory would crash the test.
//
//===----------------------------------------------------------------------===//

#include "tk/tk_plugin.h"

#include "tk/ir/Dialect.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace {

//===----------------------------------------------------------------------===//
// Host-side number formats
//===----------------------------------------------------------------------===//

enum class DType { F32, F16, BF16 };

const char *typeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  }
  return "?";
}

size_t typeSize(DType t) { return t == DType::F32 ? 4 : 2; }

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t toBF16(float f) {
  uint32_t u = bitsOf(f);
  if (std::isnan(f))
    return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}
float fromBF16(uint16_t h) { return floatOf(uint32_t(h) << 16); }

uint16_t toF16(float f) { return _cvtss_sh(f, 0); }
float fromF16(uint16_t h) { return _cvtsh_ss(h); }

/// A value of type `t` stored at `p`, as a float.
float loadAs(DType t, const void *p) {
  switch (t) {
  case DType::F32:
    return *static_cast<const float *>(p);
  case DType::F16:
    return fromF16(*static_cast<const uint16_t *>(p));
  case DType::BF16:
    return fromBF16(*static_cast<const uint16_t *>(p));
  }
  return 0;
}
void storeAs(DType t, void *p, float v) {
  switch (t) {
  case DType::F32:
    *static_cast<float *>(p) = v;
    break;
  case DType::F16:
    *static_cast<uint16_t *>(p) = toF16(v);
    break;
  case DType::BF16:
    *static_cast<uint16_t *>(p) = toBF16(v);
    break;
  }
}
/// `v` rounded to `t` and back (what the kernel sees when reading `v`).
float roundTo(DType t, float v) {
  uint32_t storage = 0;
  storeAs(t, &storage, v);
  return loadAs(t, &storage);
}

/// Relative tolerance of a result computed in f32 and stored in `t`.
float tolerance(DType t) {
  switch (t) {
  case DType::F32:
    return 1e-5f;
  case DType::F16:
    return 2e-3f;
  case DType::BF16:
    return 1.6e-2f;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Guarded buffers
//===----------------------------------------------------------------------===//

/// `bytes` of memory whose last byte is followed by an inaccessible page, with
/// another inaccessible page before the first byte.
class GuardedBuffer {
public:
  explicit GuardedBuffer(size_t bytes) : bytes(bytes) {
    page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t dataPages = (bytes + page - 1) / page;
    mapped = (dataPages + 2) * page;
    base = static_cast<char *>(mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    mprotect(base, page, PROT_NONE);
    mprotect(base + (dataPages + 1) * page, page, PROT_NONE);
    data = base + (dataPages + 1) * page - bytes;
    std::memset(data, 0, bytes);
  }
  ~GuardedBuffer() { munmap(base, mapped); }
  GuardedBuffer(const GuardedBuffer &) = delete;
  GuardedBuffer &operator=(const GuardedBuffer &) = delete;

  template <typename T> T *as() { return reinterpret_cast<T *>(data); }
  void *pointer() { return data; }
  size_t size() const { return bytes; }

private:
  size_t bytes, page = 4096, mapped = 0;
  char *base = nullptr;
  char *data = nullptr;
};

/// A typed array in a guarded buffer, read and written as floats.
struct Array {
  Array(DType t, size_t n)
      : type(t), n(n), buffer(std::max<size_t>(1, n) * typeSize(t)) {}
  float get(size_t i) const {
    return loadAs(type, static_cast<const char *>(
                            const_cast<GuardedBuffer &>(buffer).pointer()) +
                            i * typeSize(type));
  }
  void set(size_t i, float v) {
    storeAs(type, static_cast<char *>(buffer.pointer()) + i * typeSize(type),
            v);
  }
  void fillRandom(std::mt19937 &rng, float lo = -1, float hi = 1) {
    std::uniform_real_distribution<float> dist(lo, hi);
    for (size_t i = 0; i < n; ++i)
      set(i, dist(rng));
  }
  DType type;
  size_t n;
  GuardedBuffer buffer;
};

//===----------------------------------------------------------------------===//
// The plugin
//===----------------------------------------------------------------------===//

const tk_backend_interface *plugin() {
  static const tk_backend_interface *api = [] {
    void *handle = dlopen(TK_CPU_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      ADD_FAILURE() << "dlopen: " << dlerror();
      return static_cast<const tk_backend_interface *>(nullptr);
    }
    auto get = reinterpret_cast<tk_backend_get_interface_fn>(
        dlsym(handle, "tk_backend_get_interface"));
    if (!get)
      return static_cast<const tk_backend_interface *>(nullptr);
    const tk_backend_interface *iface = get(TK_PLUGIN_ABI_MAJOR);
    if (iface && iface->initialize() != TK_SUCCESS)
      return static_cast<const tk_backend_interface *>(nullptr);
    return iface;
  }();
  return api;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A test kernel with `$T` replaced by the dtype and the `#narrow` / `#wide`
/// lines kept for f16/bf16 or f32 respectively.
std::string kernelSource(const std::string &file, DType t) {
  std::string text = readFile(std::string(TK_CPU_TEST_KERNELS) + "/" + file);
  std::stringstream in(text);
  std::string out, line;
  bool narrow = t != DType::F32;
  while (std::getline(in, line)) {
    if (line.rfind("#narrow", 0) == 0) {
      if (!narrow)
        continue;
      line = line.substr(7);
    } else if (line.rfind("#wide", 0) == 0) {
      if (narrow)
        continue;
      line = line.substr(5);
    }
    out += line + "\n";
  }
  size_t pos;
  while ((pos = out.find("$T")) != std::string::npos)
    out.replace(pos, 2, typeName(t));
  return out;
}

/// The kernel's text as MLIR bytecode, what the runtime hands a plugin.
std::string toBytecode(const std::string &text) {
  mlir::DialectRegistry registry;
  tk::registerTkDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module)
    return "";
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (mlir::failed(mlir::writeBytecodeToFile(*module, os)))
    return "";
  return bytes;
}

/// A compiled and loaded kernel.
class Kernel {
public:
  Kernel(const std::string &text, const std::string &entry,
         std::vector<tk_plugin_arg_type> argTypes, bool bytecode = true,
         const char *dumpDir = nullptr) {
    const tk_backend_interface *api = plugin();
    std::string module = bytecode ? toBytecode(text) : text;
    if (module.empty()) {
      error = "kernel text does not parse";
      return;
    }
    tk_plugin_compile_request request{};
    request.struct_size = sizeof(request);
    request.module_bytecode = module.data();
    request.module_size = module.size();
    request.entry = entry.c_str();
    request.num_warps = 4;
    request.num_stages = 2;
    request.dump_dir = dumpDir;
    tk_plugin_binary binary{};
    binary.struct_size = sizeof(binary);
    status = api->compile(&request, &binary);
    if (status != TK_SUCCESS) {
      error = api->last_error();
      return;
    }
    status = api->validate(binary.data, binary.size);
    if (status == TK_SUCCESS)
      status =
          api->executable_load(0, binary.data, binary.size, entry.c_str(),
                               argTypes.data(), argTypes.size(), &executable);
    if (status != TK_SUCCESS)
      error = api->last_error();
    api->binary_free(&binary);
  }
  ~Kernel() {
    if (executable)
      plugin()->executable_unload(executable);
  }
  bool ok() const { return executable != nullptr; }

  /// Launches with `values`, each the address of one argument's value.
  tk_status launch(int gx, int gy, int gz, std::vector<void *> values) {
    int32_t grid[3] = {gx, gy, gz};
    return plugin()->launch(executable, grid, values.data(), nullptr);
  }

  tk_status status = TK_ERROR_INTERNAL;
  std::string error;
  void *executable = nullptr;
};

constexpr tk_plugin_arg_type P = TK_PLUGIN_ARG_PTR;
constexpr tk_plugin_arg_type I = TK_PLUGIN_ARG_I32;
constexpr tk_plugin_arg_type F = TK_PLUGIN_ARG_F32;

int cdiv(int a, int b) { return (a + b - 1) / b; }

::testing::AssertionResult close(float got, float want, float rtol,
                                 float atol) {
  if (std::fabs(got - want) <= atol + rtol * std::fabs(want))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want;
}

class CpuDtypeTest : public ::testing::TestWithParam<DType> {
protected:
  void SetUp() override { ASSERT_NE(plugin(), nullptr); }
  std::mt19937 rng{42};
};

std::string dtypeName(const ::testing::TestParamInfo<DType> &info) {
  return typeName(info.param);
}

//===----------------------------------------------------------------------===//
// Plugin basics
//===----------------------------------------------------------------------===//

TEST(CpuBackend, InterfaceAndDevice) {
  const tk_backend_interface *api = plugin();
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->abi_major, TK_PLUGIN_ABI_MAJOR);
  EXPECT_STREQ(api->name, "cpu");
  int32_t count = 0;
  ASSERT_EQ(api->device_count(&count), TK_SUCCESS);
  EXPECT_EQ(count, 1);
  tk_device_props props{};
  props.struct_size = sizeof(props);
  ASSERT_EQ(api->device_props(0, &props), TK_SUCCESS);
  EXPECT_STREQ(props.vendor, "CPU");
  EXPECT_STREQ(props.backend, "cpu");
  EXPECT_GE(props.compute_units, 1);
  EXPECT_EQ(props.warp_size, 1);
  EXPECT_GT(props.total_memory_bytes, 0);
  EXPECT_GT(std::strlen(props.arch), 0u);
  EXPECT_NE(api->device_props(1, &props), TK_SUCCESS);
  EXPECT_GT(std::strlen(api->last_error()), 0u);

  void *p = nullptr;
  ASSERT_EQ(api->mem_alloc(0, 1000, &p), TK_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  std::vector<char> host(1000, 7), back(1000, 0);
  EXPECT_EQ(api->memcpy_host_to_device(0, p, host.data(), 1000), TK_SUCCESS);
  EXPECT_EQ(api->memcpy_device_to_host(0, back.data(), p, 1000), TK_SUCCESS);
  EXPECT_EQ(host, back);
  EXPECT_EQ(api->mem_free(0, p), TK_SUCCESS);
  void *stream = nullptr;
  EXPECT_EQ(api->stream_create(0, &stream), TK_SUCCESS);
  EXPECT_EQ(api->stream_synchronize(0, stream), TK_SUCCESS);
  EXPECT_EQ(api->stream_destroy(0, stream), TK_SUCCESS);
}

// Code for an x86-64 level (TK_CPU_ARCH, a package's cpu:x86-64-v2) ranks
// as code that runs here where this CPU has the level; code made for another
// CPU's features, which only a compiler could compare, does not.
TEST(CpuBackend, TargetRanks) {
  const tk_backend_interface *api = plugin();
  ASSERT_NE(api, nullptr);
  ASSERT_NE(api->target_rank, nullptr);
  char own[256] = {};
  ASSERT_EQ(api->compile_target(0, own, sizeof(own)), TK_SUCCESS);
  int32_t rank = -1;
  ASSERT_EQ(api->target_rank(0, own, &rank), TK_SUCCESS);
  EXPECT_EQ(rank, 2);
  ASSERT_EQ(api->target_rank(0, "x86_64-pc-linux-gnu x86-64", &rank),
            TK_SUCCESS);
  EXPECT_EQ(rank, 1) << "every x86-64 CPU runs the baseline";
  ASSERT_EQ(api->target_rank(0, "x86_64-pc-linux-gnu znver99 0123", &rank),
            TK_SUCCESS);
  EXPECT_EQ(rank, 0);
  ASSERT_EQ(api->target_rank(0, "aarch64-unknown-linux-gnu x86-64", &rank),
            TK_SUCCESS);
  EXPECT_EQ(rank, 0);
  ASSERT_EQ(api->target_rank(0, "x86_64-pc-linux-gnu x86-64-v9", &rank),
            TK_SUCCESS);
  EXPECT_EQ(rank, 0);

  // A level asked for is the compile target; anything else is refused.
  setenv("TK_CPU_ARCH", "x86-64-v2", 1);
  char level[256] = {};
  EXPECT_EQ(api->compile_target(0, level, sizeof(level)), TK_SUCCESS);
  EXPECT_STREQ(level, "x86_64-pc-linux-gnu x86-64-v2");
  setenv("TK_CPU_ARCH", "pentium", 1);
  EXPECT_EQ(api->compile_target(0, level, sizeof(level)),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api->last_error()).find("x86-64-v3"), std::string::npos)
      << api->last_error();
  unsetenv("TK_CPU_ARCH");
}

// A pool size the plugin cannot honour is refused at initialize, naming the
// value, not read as 0 threads (atoi) and ignored.
TEST(CpuBackend, BadThreadCountIsRefusedAtInitialize) {
  const tk_backend_interface *api = plugin();
  ASSERT_NE(api, nullptr);
  for (const char *bad : {"garbage", "0", "-3", "8x", "99999999999"}) {
    ASSERT_EQ(setenv("TK_CPU_THREADS", bad, 1), 0);
    EXPECT_EQ(api->initialize(), TK_ERROR_INVALID_ARGUMENT) << bad;
    EXPECT_EQ(std::string(api->last_error()),
              std::string("tk-cpu: TK_CPU_THREADS='") + bad +
                  "' is not a number of threads from 1 to 4096; unset it "
                  "to use every hardware thread");
  }
  ASSERT_EQ(setenv("TK_CPU_THREADS", "3", 1), 0);
  EXPECT_EQ(api->initialize(), TK_SUCCESS);
  ASSERT_EQ(unsetenv("TK_CPU_THREADS"), 0);
  EXPECT_EQ(api->initialize(), TK_SUCCESS);
}

TEST(CpuBackend, AbiMismatchIsRefused) {
  void *handle = dlopen(TK_CPU_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr);
  auto get = reinterpret_cast<tk_backend_get_interface_fn>(
      dlsym(handle, "tk_backend_get_interface"));
  ASSERT_NE(get, nullptr);
  EXPECT_EQ(get(TK_PLUGIN_ABI_MAJOR + 1), nullptr);
}

TEST(CpuBackend, CompileErrorsAreStatuses) {
  Kernel bad("tk.func @k(%x: i32) { %y = arith.addi %x : i32 tk.return }", "k",
             {I}, /*bytecode=*/false);
  EXPECT_EQ(bad.status, TK_ERROR_INVALID_IR);
  EXPECT_NE(bad.error.find("parse"), std::string::npos) << bad.error;

  Kernel missing(kernelSource("vector_add.tk", DType::F32), "nope",
                 {P, P, P, I});
  EXPECT_EQ(missing.status, TK_ERROR_NOT_FOUND);

  // Tiles a program's stack cannot hold are UNSUPPORTED, with the bytes.
  Kernel huge(R"(tk.func @k(%y: !tk.ptr<f32>) {
    %r = tk.make_range {end = 16777216 : i32, start = 0 : i32} : tensor<16777216xi32>
    %f = arith.sitofp %r : tensor<16777216xi32> to tensor<16777216xf32>
    %c = tk.scan(%f : tensor<16777216xf32>) {axis = 0 : i32} -> tensor<16777216xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.addf %a, %b : f32
      tk.scan.return %m : f32
    }
    %ys = tk.splat %y : !tk.ptr<f32> -> tensor<16777216x!tk.ptr<f32>>
    %p = tk.addptr %ys, %r : tensor<16777216x!tk.ptr<f32>>, tensor<16777216xi32>
    tk.store %p, %c : tensor<16777216x!tk.ptr<f32>>
    tk.return
  })",
              "k", {P}, /*bytecode=*/false);
  EXPECT_EQ(huge.status, TK_ERROR_UNSUPPORTED) << huge.error;
  EXPECT_NE(huge.error.find("use smaller blocks"), std::string::npos)
      << huge.error;

  // fp8 compiles: it moves as bytes and converts by tk-expand-fp8 (the
  // conformance suite's fp8 cases check its values).
  Kernel fp8(R"(tk.func @k(%x: !tk.ptr<f8E4M3FN>, %y: !tk.ptr<f32>) {
    %v = tk.load %x : !tk.ptr<f8E4M3FN>
    %w = tk.fp_to_fp %v : f8E4M3FN -> f32
    tk.store %y, %w : !tk.ptr<f32>
    tk.return
  })",
             "k", {P, P}, /*bytecode=*/false);
  EXPECT_TRUE(fp8.ok()) << fp8.error;

  const char garbage[] = "not an object file";
  EXPECT_NE(plugin()->validate(garbage, sizeof(garbage)), TK_SUCCESS);
  EXPECT_GT(std::strlen(plugin()->last_error()), 0u);
}

TEST(CpuBackend, DumpsEveryStage) {
  std::string dir = testing::TempDir() + "tk-cpu-dump";
  std::filesystem::remove_all(dir);
  Kernel k(kernelSource("vector_add.tk", DType::F32), "vector_add_t",
           {P, P, P, I}, true, dir.c_str());
  ASSERT_TRUE(k.ok()) << k.error;
  for (const char *name : {"0-tk.mlir", "4-loops.mlir", "5-llvm-dialect.mlir",
                           "6-llvm-ir.ll", "7-llvm-ir-opt.ll", "8-host.s"})
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + name)) << name;
  // One thread runs a program: no GPU layout stage.
  for (const char *name : {"1a-layouts.mlir", "3-registers.mlir"})
    EXPECT_FALSE(std::filesystem::exists(dir + "/" + name)) << name;
}

TEST(CpuBackend, RejectsBadGrid) {
  Kernel k(kernelSource("vector_add.tk", DType::F32), "vector_add_t",
           {P, P, P, I});
  ASSERT_TRUE(k.ok()) << k.error;
  EXPECT_EQ(k.launch(0, 1, 1, {}), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(plugin()->last_error(),
               "tk-cpu: grid (0, 1, 1) has a dimension below 1");
  int32_t grid[3] = {1, 1, 1};
  EXPECT_EQ(plugin()->launch(k.executable, grid, nullptr, nullptr),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(plugin()->last_error(), "tk-cpu: launch without arguments");
  EXPECT_EQ(plugin()->launch(nullptr, grid, nullptr, nullptr),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(plugin()->last_error(),
               "tk-cpu: launch needs an executable and a grid");
}

TEST(CpuBackend, RejectsBadExecutableLoad) {
  void *executable = nullptr;
  EXPECT_EQ(plugin()->executable_load(0, nullptr, 0, "vector_add", nullptr, 0,
                                      &executable),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(
      plugin()->last_error(),
      "tk-cpu: executable_load needs a binary, an entry and an output");
  EXPECT_EQ(executable, nullptr);
  // binary_free leaves the binary empty, and twice is harmless.
  tk_plugin_binary binary{};
  binary.struct_size = sizeof(binary);
  binary.data = std::malloc(16);
  binary.size = 16;
  plugin()->binary_free(&binary);
  EXPECT_EQ(binary.data, nullptr);
  EXPECT_EQ(binary.size, 0u);
  plugin()->binary_free(&binary);
}

//===----------------------------------------------------------------------===//
// Seed kernels
//===----------------------------------------------------------------------===//

TEST(CpuBackend, ExampleVectorAdd) {
  // examples/kernels/vector_add.tk: BLOCK 1024, n not a multiple of it.
  Kernel k(readFile(std::string(TK_EXAMPLES_KERNELS) + "/vector_add.tk"),
           "vector_add", {P, P, P, I});
  ASSERT_TRUE(k.ok()) << k.error;
  const int n = 100003;
  std::mt19937 rng(1);
  Array x(DType::F32, n), y(DType::F32, n), out(DType::F32, n);
  x.fillRandom(rng);
  y.fillRandom(rng);
  void *px = x.buffer.pointer(), *py = y.buffer.pointer(),
       *po = out.buffer.pointer();
  int32_t nn = n;
  ASSERT_EQ(k.launch(cdiv(n, 1024), 1, 1, {&px, &py, &po, &nn}), TK_SUCCESS);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out.get(i), x.get(i) + y.get(i)) << i;
}

TEST_P(CpuDtypeTest, VectorAdd) {
  DType t = GetParam();
  Kernel k(kernelSource("vector_add.tk", t), "vector_add_t", {P, P, P, I});
  ASSERT_TRUE(k.ok()) << k.error;
  for (int n : {1, 255, 256, 1000, 4099}) {
    Array x(t, n), y(t, n), out(t, n);
    x.fillRandom(rng);
    y.fillRandom(rng);
    void *px = x.buffer.pointer(), *py = y.buffer.pointer(),
         *po = out.buffer.pointer();
    int32_t nn = n;
    ASSERT_EQ(k.launch(cdiv(n, 256), 1, 1, {&px, &py, &po, &nn}), TK_SUCCESS);
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(out.get(i), roundTo(t, x.get(i) + y.get(i))) << i;
  }
}

TEST_P(CpuDtypeTest, MatrixCopy) {
  DType t = GetParam();
  Kernel k(kernelSource("copy2d.tk", t), "copy2d", {P, P, I, I, I, I});
  ASSERT_TRUE(k.ok()) << k.error;
  const int M = 77, N = 130, ss = 131, sd = 140;
  Array src(t, (M - 1) * ss + N), dst(t, (M - 1) * sd + N);
  src.fillRandom(rng);
  for (size_t i = 0; i < dst.n; ++i)
    dst.set(i, -7);
  void *ps = src.buffer.pointer(), *pd = dst.buffer.pointer();
  int32_t m = M, n = N, a = ss, b = sd;
  ASSERT_EQ(k.launch(cdiv(N, 64), cdiv(M, 32), 1, {&ps, &pd, &m, &n, &a, &b}),
            TK_SUCCESS);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < sd && i * sd + j < int(dst.n); ++j)
      ASSERT_EQ(dst.get(i * sd + j), j < N ? src.get(i * ss + j) : -7)
          << i << "," << j;
}

TEST_P(CpuDtypeTest, Transpose) {
  DType t = GetParam();
  Kernel k(kernelSource("transpose.tk", t), "transpose", {P, P, I, I});
  ASSERT_TRUE(k.ok()) << k.error;
  const int M = 45, N = 70;
  Array in(t, M * N), out(t, M * N);
  in.fillRandom(rng);
  void *pi = in.buffer.pointer(), *po = out.buffer.pointer();
  int32_t m = M, n = N;
  ASSERT_EQ(k.launch(cdiv(N, 32), cdiv(M, 32), 1, {&pi, &po, &m, &n}),
            TK_SUCCESS);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      ASSERT_EQ(out.get(j * M + i), in.get(i * N + j)) << i << "," << j;
}

/// Reference softmax of row `r` (ncols values at in[r * stride]).
std::vector<float> softmaxRow(const Array &in, int r, int ncols, int stride) {
  std::vector<float> y(ncols);
  float mx = -INFINITY;
  for (int j = 0; j < ncols; ++j)
    mx = std::max(mx, in.get(r * stride + j));
  double sum = 0;
  for (int j = 0; j < ncols; ++j)
    sum += y[j] = std::exp(in.get(r * stride + j) - mx);
  for (int j = 0; j < ncols; ++j)
    y[j] = static_cast<float>(y[j] / sum);
  return y;
}

TEST_P(CpuDtypeTest, Softmax) {
  DType t = GetParam();
  Kernel k(kernelSource("softmax.tk", t), "softmax", {P, P, I, I, I});
  ASSERT_TRUE(k.ok()) << k.error;
  const int rows = 37, ncols = 200, stride = 203;
  Array in(t, (rows - 1) * stride + ncols), out(t, (rows - 1) * stride + ncols);
  in.fillRandom(rng, -4, 4);
  void *pi = in.buffer.pointer(), *po = out.buffer.pointer();
  int32_t nc = ncols, s = stride;
  ASSERT_EQ(k.launch(rows, 1, 1, {&pi, &po, &nc, &s, &s}), TK_SUCCESS);
  for (int r = 0; r < rows; ++r) {
    std::vector<float> want = softmaxRow(in, r, ncols, stride);
    for (int j = 0; j < ncols; ++j)
      ASSERT_TRUE(close(out.get(r * stride + j), want[j], tolerance(t), 1e-6f))
          << r << "," << j;
  }
}

TEST_P(CpuDtypeTest, PersistentSoftmax) {
  DType t = GetParam();
  Kernel k(kernelSource("softmax_persistent.tk", t), "softmax_persistent",
           {P, P, I, I, I, I});
  ASSERT_TRUE(k.ok()) << k.error;
  const int rows = 53, ncols = 256, stride = 256;
  Array in(t, rows * stride), out(t, rows * stride);
  in.fillRandom(rng, -4, 4);
  void *pi = in.buffer.pointer(), *po = out.buffer.pointer();
  int32_t nc = ncols, s = stride, nr = rows;
  // Fewer programs than rows: each program loops over rows.
  ASSERT_EQ(k.launch(5, 1, 1, {&pi, &po, &nc, &s, &s, &nr}), TK_SUCCESS);
  for (int r = 0; r < rows; ++r) {
    std::vector<float> want = softmaxRow(in, r, ncols, stride);
    for (int j = 0; j < ncols; ++j)
      ASSERT_TRUE(close(out.get(r * stride + j), want[j], tolerance(t), 1e-6f))
          << r << "," << j;
  }
}

TEST_P(CpuDtypeTest, LayerNorm) {
  DType t = GetParam();
  Kernel k(kernelSource("layernorm.tk", t), "layernorm", {P, P, P, P, I, I, F});
  ASSERT_TRUE(k.ok()) << k.error;
  const int rows = 19, ncols = 173, stride = 180;
  Array x(t, (rows - 1) * stride + ncols), y(t, (rows - 1) * stride + ncols),
      w(t, ncols), b(t, ncols);
  x.fillRandom(rng, -2, 3);
  w.fillRandom(rng);
  b.fillRandom(rng);
  void *px = x.buffer.pointer(), *py = y.buffer.pointer(),
       *pw = w.buffer.pointer(), *pb = b.buffer.pointer();
  int32_t nc = ncols, s = stride;
  float eps = 1e-5f;
  ASSERT_EQ(k.launch(rows, 1, 1, {&px, &py, &pw, &pb, &nc, &s, &eps}),
            TK_SUCCESS);
  for (int r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int j = 0; j < ncols; ++j)
      mean += x.get(r * stride + j);
    mean /= ncols;
    for (int j = 0; j < ncols; ++j)
      var += (x.get(r * stride + j) - mean) * (x.get(r * stride + j) - mean);
    var /= ncols;
    double rstd = 1 / std::sqrt(var + eps);
    for (int j = 0; j < ncols; ++j) {
      float want = static_cast<float>(
          (x.get(r * stride + j) - mean) * rstd * w.get(j) + b.get(j));
      ASSERT_TRUE(close(y.get(r * stride + j), want, tolerance(t) * 2,
                        tolerance(t) * 2))
          << r << "," << j;
    }
  }
}

TEST_P(CpuDtypeTest, Matmul) {
  DType t = GetParam();
  Kernel k(kernelSource("matmul.tk", t), "matmul", {P, P, P, I, I, I, I, I, I});
  ASSERT_TRUE(k.ok()) << k.error;
  const int M = 70, N = 45, K = 50;
  Array a(t, M * K), b(t, K * N), c(t, M * N);
  a.fillRandom(rng);
  b.fillRandom(rng);
  void *pa = a.buffer.pointer(), *pb = b.buffer.pointer(),
       *pc = c.buffer.pointer();
  int32_t m = M, n = N, kk = K, sam = K, sbk = N, scm = N;
  ASSERT_EQ(k.launch(cdiv(M, 32), cdiv(N, 32), 1,
                     {&pa, &pb, &pc, &m, &n, &kk, &sam, &sbk, &scm}),
            TK_SUCCESS);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int l = 0; l < K; ++l)
        want += double(a.get(i * K + l)) * b.get(l * N + j);
      ASSERT_TRUE(close(c.get(i * N + j), float(want), tolerance(t) * 4,
                        tolerance(t) * 4))
          << i << "," << j;
    }
}

TEST_P(CpuDtypeTest, Reductions) {
  DType t = GetParam();
  Kernel k(kernelSource("reductions.tk", t), "reductions",
           {P, P, P, P, P, P, P, I});
  ASSERT_TRUE(k.ok()) << k.error;
  const int rows = 13; // of 16: the rest are masked off (zeros)
  Array x(t, rows * 64), rowsum(t, 16), colmax(t, 64), cumsum(t, 16 * 64),
      rcumsum(t, 16 * 64), total(t, 1);
  GuardedBuffer argmax(16 * 4);
  // Small integers keep every sum exact in every dtype.
  std::uniform_int_distribution<int> dist(-8, 8);
  for (int i = 0; i < rows * 64; ++i)
    x.set(i, float(dist(rng)));
  void *px = x.buffer.pointer(), *prs = rowsum.buffer.pointer(),
       *pcm = colmax.buffer.pointer(), *pam = argmax.pointer(),
       *pcs = cumsum.buffer.pointer(), *prcs = rcumsum.buffer.pointer(),
       *ptot = total.buffer.pointer();
  int32_t nr = rows;
  ASSERT_EQ(k.launch(1, 1, 1, {&px, &prs, &pcm, &pam, &pcs, &prcs, &ptot, &nr}),
            TK_SUCCESS);
  auto at = [&](int i, int j) { return i < rows ? x.get(i * 64 + j) : 0.f; };
  float all = 0;
  for (int i = 0; i < 16; ++i) {
    float sum = 0, best = -INFINITY, run = 0;
    int arg = 0;
    for (int j = 0; j < 64; ++j) {
      sum += at(i, j);
      if (at(i, j) > best) {
        best = at(i, j);
        arg = j;
      }
      run += at(i, j);
      ASSERT_EQ(cumsum.get(i * 64 + j), run) << i << "," << j;
    }
    all += sum;
    EXPECT_EQ(rowsum.get(i), sum) << i;
    EXPECT_EQ(argmax.as<int32_t>()[i], arg) << i;
  }
  for (int j = 0; j < 64; ++j) {
    float best = -INFINITY, run = 0;
    for (int i = 0; i < 16; ++i)
      best = std::max(best, at(i, j));
    EXPECT_EQ(colmax.get(j), best) << j;
    for (int i = 15; i >= 0; --i) {
      run += at(i, j);
      ASSERT_EQ(rcumsum.get(i * 64 + j), run) << i << "," << j;
    }
  }
  EXPECT_EQ(total.get(0), all);
}

TEST_P(CpuDtypeTest, BlockPointers) {
  DType t = GetParam();
  Kernel k(kernelSource("blockptr.tk", t), "blockptr", {P, P, P, I, I, I});
  ASSERT_TRUE(k.ok()) << k.error;
  const int M = 50, N = 150, stride = 150;
  Array src(t, M * stride), dst(t, M * stride);
  GuardedBuffer rowsum(M * 4);
  src.fillRandom(rng);
  void *ps = src.buffer.pointer(), *pd = dst.buffer.pointer(),
       *pr = rowsum.pointer();
  int32_t m = M, n = N, s = stride;
  ASSERT_EQ(k.launch(cdiv(N, 64), cdiv(M, 32), 1, {&ps, &pd, &pr, &m, &n, &s}),
            TK_SUCCESS);
  for (int i = 0; i < M; ++i) {
    double sum = 0;
    for (int j = 0; j < N; ++j) {
      ASSERT_EQ(dst.get(i * stride + j), src.get(i * stride + j))
          << i << "," << j;
      sum += src.get(i * stride + j);
    }
    EXPECT_TRUE(close(rowsum.as<float>()[i], float(sum), 1e-4f, 1e-4f)) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CpuDtypeTest,
                         ::testing::Values(DType::F32, DType::F16, DType::BF16),
                         dtypeName);

TEST(CpuBackend, Atomics) {
  Kernel k(kernelSource("atomics.tk", DType::F32), "atomics",
           {P, P, P, P, P, I});
  ASSERT_TRUE(k.ok()) << k.error;
  const int n = 100, programs = 64;
  Array x(DType::F32, n), acc(DType::F32, n);
  for (int i = 0; i < n; ++i)
    x.set(i, float(i % 7));
  GuardedBuffer counter(8), flag(4), seen(programs * 4);
  void *px = x.buffer.pointer(), *pa = acc.buffer.pointer(),
       *pc = counter.pointer(), *pf = flag.pointer(), *ps = seen.pointer();
  int32_t nn = n;
  ASSERT_EQ(k.launch(programs, 1, 1, {&px, &pa, &pc, &pf, &ps, &nn}),
            TK_SUCCESS);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(acc.get(i), float(programs * (i % 7))) << i;
  EXPECT_EQ(counter.as<int32_t>()[0], programs);
  EXPECT_EQ(counter.as<int32_t>()[1], programs - 1);
  int winners = 0;
  int32_t claimed = flag.as<int32_t>()[0];
  for (int p = 0; p < programs; ++p) {
    int32_t old = seen.as<int32_t>()[p];
    if (old == 0) {
      ++winners;
      EXPECT_EQ(claimed, p + 1);
    } else {
      EXPECT_EQ(old, claimed);
    }
  }
  EXPECT_EQ(winners, 1);
}

TEST(CpuBackend, FpToFp) {
  Kernel k(kernelSource("fp_to_fp.tk", DType::F32), "fp_to_fp",
           {P, P, P, P, P, P, I});
  ASSERT_TRUE(k.ok()) << k.error;
  const int n = 300;
  Array x(DType::F32, n), back(DType::F32, n);
  GuardedBuffer h1(n * 2), h2(n * 2), b1(n * 2), b2(n * 2);
  std::mt19937 rng(3);
  x.fillRandom(rng, -70000, 70000);
  x.set(0, 1.0f / 3);
  x.set(1, -1.0f / 3);
  x.set(2, 1e-6f);
  x.set(3, 1e6f);
  x.set(4, -1e6f);
  void *px = x.buffer.pointer(), *p1 = h1.pointer(), *p2 = h2.pointer(),
       *p3 = b1.pointer(), *p4 = b2.pointer(), *p5 = back.buffer.pointer();
  int32_t nn = n;
  ASSERT_EQ(k.launch(cdiv(n, 128), 1, 1, {&px, &p1, &p2, &p3, &p4, &p5, &nn}),
            TK_SUCCESS);
  for (int i = 0; i < n; ++i) {
    float v = x.get(i);
    uint16_t ne = toF16(v);
    EXPECT_EQ(h1.as<uint16_t>()[i], ne) << v;
    uint16_t tz = _cvtss_sh(v, _MM_FROUND_TO_ZERO);
    EXPECT_EQ(h2.as<uint16_t>()[i], tz) << v;
    EXPECT_EQ(b1.as<uint16_t>()[i], toBF16(v)) << v;
    EXPECT_EQ(b2.as<uint16_t>()[i], uint16_t(bitsOf(v) >> 16)) << v;
    EXPECT_EQ(back.get(i), fromF16(ne)) << v;
  }
}

TEST(CpuBackend, CompilesEveryExampleKernel) {
  // Every seed kernel of examples/kernels compiles, validates and loads.
  int count = 0;
  for (const auto &entry :
       std::filesystem::directory_iterator(TK_EXAMPLES_KERNELS)) {
    if (entry.path().extension() != ".tk")
      continue;
    std::string text = readFile(entry.path().string());
    size_t at = text.find("tk.func @");
    ASSERT_NE(at, std::string::npos) << entry.path();
    size_t end = text.find('(', at);
    std::string name = text.substr(at + 9, end - at - 9);
    Kernel k(text, name, {});
    EXPECT_TRUE(k.ok()) << entry.path() << ": " << k.error;
    ++count;
  }
  EXPECT_GE(count, 1);
}

TEST(CpuBackend, ExampleMatmulF16) {
  // examples/kernels/matmul.tk: f16 in and out, f32 accumulation, 64x64x32
  // tiles with grouped ordering over a 1-D grid.
  Kernel k(readFile(std::string(TK_EXAMPLES_KERNELS) + "/matmul.tk"), "matmul",
           {P, P, P, I, I, I, I, I, I, I, I, I});
  if (!k.ok() && k.error.find("no tk.func named") != std::string::npos)
    GTEST_SKIP() << "examples/kernels/matmul.tk has no @matmul";
  ASSERT_TRUE(k.ok()) << k.error;
  const int M = 100, N = 130, K = 70;
  Array a(DType::F16, M * K), b(DType::F16, K * N), c(DType::F16, M * N);
  std::mt19937 rng(5);
  a.fillRandom(rng);
  b.fillRandom(rng);
  void *pa = a.buffer.pointer(), *pb = b.buffer.pointer(),
       *pc = c.buffer.pointer();
  int32_t m = M, n = N, kk = K, sam = K, sak = 1, sbk = N, sbn = 1, scm = N,
          scn = 1;
  ASSERT_EQ(k.launch(cdiv(M, 64) * cdiv(N, 64), 1, 1,
                     {&pa, &pb, &pc, &m, &n, &kk, &sam, &sak, &sbk, &sbn, &scm,
                      &scn}),
            TK_SUCCESS);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int l = 0; l < K; ++l)
        want += double(a.get(i * K + l)) * b.get(l * N + j);
      ASSERT_TRUE(close(c.get(i * N + j), float(want), 8e-3f, 8e-3f))
          << i << "," << j;
    }
}

TEST(CpuBackend, ManyProgramsRunOnThePool) {
  // A large grid (every program writes its id) checks the chunked scheduler.
  const char *text = R"(
tk.func @ids(%out: !tk.ptr<i32>) {
  %x = tk.program_id 0 : i32
  %y = tk.program_id 1 : i32
  %nx = tk.num_programs 0 : i32
  %row = arith.muli %y, %nx : i32
  %id = arith.addi %row, %x : i32
  %p = tk.addptr %out, %id : !tk.ptr<i32>, i32
  tk.store %p, %id : !tk.ptr<i32>
  tk.return
})";
  Kernel k(text, "ids", {P});
  ASSERT_TRUE(k.ok()) << k.error;
  const int gx = 1000, gy = 37;
  GuardedBuffer out(gx * gy * 4);
  void *po = out.pointer();
  ASSERT_EQ(k.launch(gx, gy, 1, {&po}), TK_SUCCESS);
  for (int i = 0; i < gx * gy; ++i)
    ASSERT_EQ(out.as<int32_t>()[i], i);
}

} // namespace
