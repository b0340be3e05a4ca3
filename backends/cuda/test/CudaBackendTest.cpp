//===- CudaBackendTest.cpp - the CUDA plugin through its ABI ----*- C++ -*-===//
//
// Opens libtk_backend_cuda.so with the runtime's plugin loader and checks
// what must work on any machine: loading, NO_DEVICE without a driver,
// capabilities, validate(), compile errors, the ptxas lookup. The compile
// path of the seed kernels (PTX with an .entry, a cubin) and, with a GPU,
// a vector add run end to end.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "tk/runtime/PluginLoader.h"
#include "tk/tk_plugin.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using tk::runtime::Plugin;
using tk::runtime::PluginLoader;

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The plugin, opened once through the runtime's loader.
Plugin *plugin() {
  static Plugin *opened = [] {
    Plugin *out = nullptr;
    tk::runtime::Status status =
        PluginLoader::openFile(TK_CUDA_PLUGIN_PATH, "cuda", &out);
    EXPECT_TRUE(status.isOk()) << status.message();
    return out;
  }();
  return opened;
}

const tk_backend_interface &api() { return plugin()->getApi(); }

bool driverInstalled() {
  return dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) != nullptr;
}

/// Sets an environment variable for the scope, restoring it afterwards.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const std::string &value) : name(name) {
    if (const char *old = std::getenv(name))
      previous = old;
    hadValue = std::getenv(name) != nullptr;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (hadValue)
      setenv(name, previous.c_str(), 1);
    else
      unsetenv(name);
  }

private:
  const char *name;
  std::string previous;
  bool hadValue = false;
};

/// Compiles `text` through the plugin's ABI; `shape` may change the request
/// (the occupancy hint, an older struct_size).
tk_status
compile(const std::string &text, const char *entry, tk_plugin_binary &binary,
        const char *dumpDir = nullptr,
        const std::function<void(tk_plugin_compile_request &)> &shape = {}) {
  tk_plugin_compile_request request{};
  request.struct_size = sizeof(request);
  request.module_bytecode = text.data();
  request.module_size = text.size();
  request.entry = entry;
  request.num_warps = 4;
  request.num_stages = 3;
  request.device = 0;
  request.dump_dir = dumpDir;
  if (shape)
    shape(request);
  binary = tk_plugin_binary{};
  binary.struct_size = sizeof(binary);
  return api().compile(&request, &binary);
}

std::string vectorAddSource() {
  return readFile(std::string(TK_EXAMPLES_KERNELS) + "/vector_add.tk");
}

//===----------------------------------------------------------------------===//
// Loading and no-device behaviour (any machine)
//===----------------------------------------------------------------------===//

TEST(CudaPlugin, LoadsThroughTheRuntimeLoader) {
  ASSERT_NE(plugin(), nullptr);
  EXPECT_STREQ(api().name, "cuda");
  EXPECT_EQ(api().abi_major, TK_PLUGIN_ABI_MAJOR);
  EXPECT_EQ(api().abi_minor, TK_PLUGIN_ABI_MINOR);
  EXPECT_EQ(std::strncmp(api().compiler_version, "tk-cuda 1 llvm ", 15), 0)
      << api().compiler_version;
  EXPECT_TRUE(plugin()->declaresCapabilities());
}

TEST(CudaPlugin, ReportsNoDeviceWithoutTheDriver) {
  ASSERT_NE(plugin(), nullptr);
  if (driverInstalled())
    GTEST_SKIP() << "libcuda.so.1 is installed";
  tk::runtime::Status status = plugin()->initialize();
  EXPECT_EQ(status.code(), TK_ERROR_NO_DEVICE) << status.message();
  EXPECT_NE(status.message().find("libcuda.so.1"), std::string::npos)
      << status.message();
  EXPECT_EQ(plugin()->getDeviceCount(), 0);

  // Device calls fail with a status and a message, never a crash.
  void *pointer = nullptr;
  EXPECT_EQ(api().mem_alloc(0, 64, &pointer), TK_ERROR_NO_DEVICE);
  EXPECT_GT(std::strlen(api().last_error()), 0u);
  tk_device_props props{};
  props.struct_size = sizeof(props);
  EXPECT_EQ(api().device_props(0, &props), TK_ERROR_NO_DEVICE);
  EXPECT_EQ(api().device_synchronize(0), TK_ERROR_NO_DEVICE);
}

TEST(CudaPlugin, CapabilitiesWithoutDevice) {
  ASSERT_NE(plugin(), nullptr);
  if (driverInstalled())
    GTEST_SKIP() << "libcuda.so.1 is installed: device 0 is a real GPU";
  tk_capabilities caps{};
  caps.struct_size = sizeof(caps);
  tk::runtime::Status status = plugin()->queryCapabilities(0, caps);
  ASSERT_TRUE(status.isOk()) << status.message();
  EXPECT_EQ(caps.known, 1);
  EXPECT_TRUE(caps.dtypes & TK_DTYPE_BIT_BF16);
  EXPECT_TRUE(caps.dtypes & TK_DTYPE_BIT_F64);
  EXPECT_TRUE(caps.dtypes & TK_DTYPE_BIT_F8E4M3);
  EXPECT_TRUE(caps.dtypes & TK_DTYPE_BIT_F8E5M2);
  EXPECT_TRUE(caps.atomics & TK_ATOMIC_BIT_CAS);
  EXPECT_EQ(caps.fp8, 1);
  // Without a device the target is sm_90a: mma.sync and wgmma.
  EXPECT_EQ(caps.mma_kinds, TK_MMA_BIT_MMA_SYNC | TK_MMA_BIT_WGMMA);

  ScopedEnv arch("TK_CUDA_ARCH", "sm_80");
  ASSERT_TRUE(plugin()->queryCapabilities(0, caps).isOk());
  EXPECT_EQ(caps.mma_kinds, TK_MMA_BIT_MMA_SYNC);
}

TEST(CudaPlugin, CompileTargetFollowsTkCudaArch) {
  // The kernel cache keys on this: sm_80 code compiled on an sm_90 GPU must
  // not be found again as sm_90a code.
  ASSERT_NE(plugin(), nullptr);
  char target[64];
  {
    ScopedEnv arch("TK_CUDA_ARCH", "sm_80");
    ASSERT_EQ(api().compile_target(0, target, sizeof(target)), TK_SUCCESS)
        << api().last_error();
    EXPECT_STREQ(target, "sm_80");
  }
  {
    ScopedEnv arch("TK_CUDA_ARCH", "sm_90a");
    ASSERT_EQ(api().compile_target(0, target, sizeof(target)), TK_SUCCESS)
        << api().last_error();
    EXPECT_STREQ(target, "sm_90a");
    EXPECT_EQ(api().compile_target(0, target, 3), TK_ERROR_INVALID_ARGUMENT);
  }
  ScopedEnv arch("TK_CUDA_ARCH", "sm_12");
  EXPECT_NE(api().compile_target(0, target, sizeof(target)), TK_SUCCESS);
  EXPECT_NE(std::string(api().last_error()).find("sm_12"), std::string::npos)
      << api().last_error();
}

TEST(CudaPlugin, PackagedCodeRunsWhereItsArchAllows) {
  // What target_rank answers for a GPU: a cubin of the family, PTX for a
  // later GPU, an "a" target only on its own chip.
  using tk::cuda::runsOnComputeCapability;
  EXPECT_TRUE(runsOnComputeCapability("sm_80", 80));
  EXPECT_TRUE(runsOnComputeCapability("sm_80", 86));
  EXPECT_TRUE(runsOnComputeCapability("sm_80", 90));
  EXPECT_TRUE(runsOnComputeCapability("sm_80+simt-dots", 120));
  EXPECT_TRUE(runsOnComputeCapability("sm_90", 100));
  EXPECT_FALSE(runsOnComputeCapability("sm_90", 89));
  EXPECT_FALSE(runsOnComputeCapability("sm_86", 80));
  EXPECT_TRUE(runsOnComputeCapability("sm_90a", 90));
  EXPECT_FALSE(runsOnComputeCapability("sm_90a", 100));
  EXPECT_FALSE(runsOnComputeCapability("gfx942 cov5", 90));
  EXPECT_FALSE(runsOnComputeCapability("", 90));

  // Without a GPU only the plugin's own target ranks.
  ASSERT_NE(plugin(), nullptr);
  ScopedEnv arch("TK_CUDA_ARCH", "sm_80");
  int32_t rank = -1;
  ASSERT_EQ(api().target_rank(0, "sm_80", &rank), TK_SUCCESS)
      << api().last_error();
  EXPECT_EQ(rank, 2);
  ASSERT_EQ(api().target_rank(0, "sm_90a", &rank), TK_SUCCESS);
  int32_t devices = 0;
  bool gpu = api().initialize() == TK_SUCCESS &&
             api().device_count(&devices) == TK_SUCCESS && devices > 0;
  if (!gpu) {
    EXPECT_EQ(rank, 0);
  }
  EXPECT_EQ(api().target_rank(0, nullptr, &rank), TK_ERROR_INVALID_ARGUMENT);
}

TEST(CudaPlugin, ValidateRejectsWhatIsNotAPackage) {
  ASSERT_NE(plugin(), nullptr);
  const char junk[] = "\x7f"
                      "ELF this is no package";
  EXPECT_EQ(api().validate(junk, sizeof(junk)), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api().last_error()).find("TKCUDA1"), std::string::npos)
      << api().last_error();
  EXPECT_EQ(api().validate(nullptr, 0), TK_ERROR_INVALID_ARGUMENT);
}

TEST(CudaPlugin, LaunchAndLoadArgumentsAreChecked) {
  // The checks before any driver call: they hold with or without a GPU.
  ASSERT_NE(plugin(), nullptr);
  int32_t grid[3] = {1, 1, 1};
  EXPECT_EQ(api().launch(nullptr, grid, nullptr, nullptr),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(api().last_error(),
               "tk-cuda: launch needs an executable and a grid");
  void *executable = nullptr;
  EXPECT_EQ(api().executable_load(0, nullptr, 0, "vector_add", nullptr, 0,
                                  &executable),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(
      api().last_error(),
      "tk-cuda: executable_load needs a binary, an entry and an output");
  EXPECT_EQ(executable, nullptr);
}

TEST(CudaPlugin, CompileErrorsWithoutTheLowering) {
  ASSERT_NE(plugin(), nullptr);
  tk_plugin_binary binary;
  EXPECT_EQ(compile("tk.func @broken(", "broken", binary), TK_ERROR_INVALID_IR);
  EXPECT_NE(std::string(api().last_error()).find("does not parse"),
            std::string::npos)
      << api().last_error();
  EXPECT_EQ(compile(vectorAddSource(), "no_such_kernel", binary),
            TK_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(api().last_error()).find("'no_such_kernel'"),
            std::string::npos)
      << api().last_error();

  ScopedEnv arch("TK_CUDA_ARCH", "sm_75");
  EXPECT_EQ(compile(vectorAddSource(), "vector_add", binary),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api().last_error()).find("sm_75"), std::string::npos)
      << api().last_error();
}

TEST(CudaCompiler, Targets) {
  tk::cuda::Target target;
  std::string error;
  ASSERT_EQ(tk::cuda::targetForComputeCapability(90, target, error),
            TK_SUCCESS);
  EXPECT_EQ(target.name(), "sm_90a");
  ASSERT_EQ(tk::cuda::targetForComputeCapability(86, target, error),
            TK_SUCCESS);
  EXPECT_EQ(target.name(), "sm_86");
  ASSERT_EQ(tk::cuda::targetForComputeCapability(100, target, error),
            TK_SUCCESS);
  EXPECT_EQ(target.name(), "sm_90");
  EXPECT_EQ(tk::cuda::targetForComputeCapability(75, target, error),
            TK_ERROR_UNSUPPORTED);
  for (const char *name : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}) {
    ASSERT_EQ(tk::cuda::parseTargetName(name, target, error), TK_SUCCESS)
        << name;
    EXPECT_EQ(target.name(), name);
  }
  for (const char *name : {"", "sm_75", "sm_80a", "sm90", "compute_90"})
    EXPECT_EQ(tk::cuda::parseTargetName(name, target, error),
              TK_ERROR_INVALID_ARGUMENT)
        << name;
}

TEST(CudaCompiler, MissingPtxasIsAClearError) {
  std::filesystem::path empty =
      std::filesystem::path(::testing::TempDir()) / "tk-cuda-empty-toolkit";
  std::filesystem::create_directories(empty);
  ScopedEnv home("CUDA_HOME", empty.string());
  ScopedEnv path("PATH", "/nonexistent");
  std::string ptxas, error;
  EXPECT_EQ(tk::cuda::findPtxas(ptxas, error), TK_ERROR_COMPILATION);
  EXPECT_NE(error.find("ptxas"), std::string::npos) << error;
  EXPECT_NE(error.find(empty.string()), std::string::npos) << error;
  EXPECT_NE(error.find("CUDA_HOME"), std::string::npos) << error;
}

TEST(CudaCompiler, ToolkitFromPathWithoutCudaHome) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/ptxas"))
    GTEST_SKIP() << "no CUDA toolkit in /usr/local/cuda";
  ScopedEnv home("CUDA_HOME", "");
  std::string ptxas, error;
  ASSERT_EQ(tk::cuda::findPtxas(ptxas, error), TK_SUCCESS) << error;
  EXPECT_TRUE(std::filesystem::exists(ptxas)) << ptxas;
}

/// CI's PATH has /usr/local/bin/ptxas, a script that execs the toolkit's
/// ptxas: its folder's parent holds no libdevice, so it is not the toolkit.
TEST(CudaCompiler, WrapperScriptOnPathIsNotTheToolkit) {
  if (!std::filesystem::exists(
          "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"))
    GTEST_SKIP() << "no CUDA toolkit in /usr/local/cuda";
  std::filesystem::path wrapperRoot =
      std::filesystem::path(::testing::TempDir()) / "tk-cuda-ptxas-wrapper";
  std::filesystem::create_directories(wrapperRoot / "bin");
  std::filesystem::path wrapper = wrapperRoot / "bin" / "ptxas";
  {
    std::ofstream script(wrapper);
    script << "#!/bin/sh\nexec /usr/local/cuda/bin/ptxas \"$@\"\n";
  }
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  ScopedEnv home("CUDA_HOME", "");
  ScopedEnv path("PATH", (wrapperRoot / "bin").string() + ":/usr/bin:/bin");
  EXPECT_EQ(tk::cuda::cudaToolkitRoot(), "/usr/local/cuda");
}

//===----------------------------------------------------------------------===//
// The compile path (needs the MLIR lowering, compiler/Lowering.cpp)
//===----------------------------------------------------------------------===//

TEST(CudaCompile, VectorAddToPtxAndCubin) {
  ASSERT_NE(plugin(), nullptr);
  std::filesystem::path dump =
      std::filesystem::path(::testing::TempDir()) / "tk-cuda-dump";
  std::filesystem::remove_all(dump);
  tk_plugin_binary binary;
  ScopedEnv arch("TK_CUDA_ARCH", "sm_90a");
  ASSERT_EQ(
      compile(vectorAddSource(), "vector_add", binary, dump.string().c_str()),
      TK_SUCCESS)
      << api().last_error();
  EXPECT_EQ(api().validate(binary.data, binary.size), TK_SUCCESS)
      << api().last_error();
  EXPECT_EQ(binary.num_warps, 4);
  EXPECT_GT(binary.registers_per_thread, 0);

  tk::cuda::Package package;
  std::string error;
  ASSERT_EQ(tk::cuda::parsePackage(binary.data, binary.size, package, error),
            TK_SUCCESS)
      << error;
  EXPECT_EQ(package.arch, "sm_90a");
  EXPECT_EQ(package.entry, "vector_add");
  EXPECT_EQ(package.threadsPerBlock, 128);
  EXPECT_NE(package.ptx.find(".entry vector_add"), std::string::npos);
  EXPECT_NE(package.ptx.find(".target sm_90a"), std::string::npos);
  api().binary_free(&binary);
  EXPECT_EQ(binary.data, nullptr);

  for (const char *stage : {"5-llvm-dialect.mlir", "6-llvm-ir.ll",
                            "7-llvm-ir-opt.ll", "8-kernel.ptx", "9-ptxas.log"})
    EXPECT_TRUE(std::filesystem::exists(dump / stage)) << stage;
}

TEST(CudaCompile, Sm80) {
  ASSERT_NE(plugin(), nullptr);
  tk_plugin_binary binary;
  ScopedEnv arch("TK_CUDA_ARCH", "sm_80");
  ASSERT_EQ(compile(vectorAddSource(), "vector_add", binary), TK_SUCCESS)
      << api().last_error();
  tk::cuda::Package package;
  std::string error;
  ASSERT_EQ(tk::cuda::parsePackage(binary.data, binary.size, package, error),
            TK_SUCCESS)
      << error;
  EXPECT_EQ(package.arch, "sm_80");
  EXPECT_NE(package.ptx.find(".target sm_80"), std::string::npos);
  api().binary_free(&binary);
}

TEST(CudaCompile, OccupancyHintReachesPtxas) {
  ASSERT_NE(plugin(), nullptr);
  ScopedEnv arch("TK_CUDA_ARCH", "sm_90a");
  auto ptxOf = [](const tk_plugin_binary &binary) {
    tk::cuda::Package package;
    std::string error;
    EXPECT_EQ(tk::cuda::parsePackage(binary.data, binary.size, package, error),
              TK_SUCCESS)
        << error;
    return package.ptx;
  };
  tk_plugin_binary binary;
  ASSERT_EQ(
      compile(vectorAddSource(), "vector_add", binary, nullptr,
              [](tk_plugin_compile_request &r) { r.min_programs_per_cu = 16; }),
      TK_SUCCESS)
      << api().last_error();
  EXPECT_NE(ptxOf(binary).find(".minnctapersm 16"), std::string::npos);
  api().binary_free(&binary);

  // A runtime of ABI 1.2 sends a request that ends before the field.
  ASSERT_EQ(compile(vectorAddSource(), "vector_add", binary, nullptr,
                    [](tk_plugin_compile_request &r) {
                      r.min_programs_per_cu = 16;
                      r.struct_size = offsetof(tk_plugin_compile_request,
                                               min_programs_per_cu);
                    }),
            TK_SUCCESS)
      << api().last_error();
  EXPECT_EQ(ptxOf(binary).find(".minnctapersm"), std::string::npos);
  api().binary_free(&binary);

  // 17 programs of 128 threads do not fit in the 2048 threads of an SM.
  EXPECT_EQ(
      compile(vectorAddSource(), "vector_add", binary, nullptr,
              [](tk_plugin_compile_request &r) { r.min_programs_per_cu = 17; }),
      TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api().last_error())
                .find("min_programs_per_cu 17 of 128 threads each exceeds "
                      "the 2048 threads an sm_90a SM holds"),
            std::string::npos)
      << api().last_error();
}

TEST(CudaCompile, MissingPtxasFailsTheCompile) {
  ASSERT_NE(plugin(), nullptr);
  std::filesystem::path empty =
      std::filesystem::path(::testing::TempDir()) / "tk-cuda-empty-toolkit";
  std::filesystem::create_directories(empty);
  ScopedEnv home("CUDA_HOME", empty.string());
  ScopedEnv path("PATH", "/nonexistent");
  tk_plugin_binary binary;
  ASSERT_EQ(compile(vectorAddSource(), "vector_add", binary),
            TK_ERROR_COMPILATION);
  EXPECT_NE(std::string(api().last_error()).find("ptxas"), std::string::npos)
      << api().last_error();
}

//===----------------------------------------------------------------------===//
// On a GPU
//===----------------------------------------------------------------------===//

TEST(CudaDevice, VectorAddRuns) {
  ASSERT_NE(plugin(), nullptr);
  tk::runtime::Status status = plugin()->initialize();
  if (!status.isOk())
    GTEST_SKIP() << status.message();
  tk_plugin_binary binary;
  ASSERT_EQ(compile(vectorAddSource(), "vector_add", binary), TK_SUCCESS)
      << api().last_error();
  const tk_plugin_arg_type argTypes[] = {TK_PLUGIN_ARG_PTR, TK_PLUGIN_ARG_PTR,
                                         TK_PLUGIN_ARG_PTR, TK_PLUGIN_ARG_I32};
  void *executable = nullptr;
  ASSERT_EQ(api().executable_load(0, binary.data, binary.size, "vector_add",
                                  argTypes, 4, &executable),
            TK_SUCCESS)
      << api().last_error();
  api().binary_free(&binary);

  const int n = 100003;
  std::vector<float> x(n), y(n), out(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.25f * i;
    y[i] = 7.0f - i;
  }
  size_t bytes = n * sizeof(float);
  void *dx = nullptr, *dy = nullptr, *dout = nullptr;
  ASSERT_EQ(api().mem_alloc(0, bytes, &dx), TK_SUCCESS);
  ASSERT_EQ(api().mem_alloc(0, bytes, &dy), TK_SUCCESS);
  ASSERT_EQ(api().mem_alloc(0, bytes, &dout), TK_SUCCESS);
  ASSERT_EQ(api().memcpy_host_to_device(0, dx, x.data(), bytes), TK_SUCCESS);
  ASSERT_EQ(api().memcpy_host_to_device(0, dy, y.data(), bytes), TK_SUCCESS);
  int32_t count = n;
  void *args[] = {&dx, &dy, &dout, &count};
  int32_t grid[3] = {(n + 1023) / 1024, 1, 1};
  ASSERT_EQ(api().launch(executable, grid, args, nullptr), TK_SUCCESS)
      << api().last_error();
  ASSERT_EQ(api().device_synchronize(0), TK_SUCCESS) << api().last_error();
  ASSERT_EQ(api().memcpy_device_to_host(0, out.data(), dout, bytes),
            TK_SUCCESS);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out[i], x[i] + y[i]) << i;
  for (void *pointer : {dx, dy, dout})
    EXPECT_EQ(api().mem_free(0, pointer), TK_SUCCESS);
  EXPECT_EQ(api().executable_unload(executable), TK_SUCCESS);
}

} // namespace
