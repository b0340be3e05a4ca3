//===- VulkanBackendTest.cpp - the Vulkan plugin through its ABI -*- C++
//-*-===//
//
// What must hold on any machine: the package format refuses every
// truncation and corruption; the compiler's SPIR-V passes spirv-val at the
// subgroup sizes of Vulkan devices (4 to 64); compile errors are the right
// statuses; the plugin declares what SPIR-V lacks (fp8, matrix
// units) and its validate() catches a damaged binary. A vector add runs
// end to end where the plugin sees a device (lavapipe with
// TK_BACKEND=vulkan, as ctest sets).
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "compiler/Package.h"
#include "driver/Executable.h"
#include "tk/runtime/PluginLoader.h"
#include "tk/tk_plugin.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
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

Plugin *plugin() {
  static Plugin *opened = [] {
    Plugin *out = nullptr;
    tk::runtime::Status status =
        PluginLoader::openFile(TK_VULKAN_PLUGIN_PATH, "vulkan", &out);
    EXPECT_TRUE(status.isOk()) << status.message();
    return out;
  }();
  return opened;
}

const tk_backend_interface &api() { return plugin()->getApi(); }

std::string vectorAdd() {
  return readFile(std::string(TK_EXAMPLES_KERNELS) + "/vector_add.tk");
}

/// Kernel `entry` of `text` compiled through the plugin's ABI.
void compileForPlugin(const std::string &text, const char *entry,
                      int32_t numWarps, tk_plugin_binary &binary) {
  tk_plugin_compile_request request;
  std::memset(&request, 0, sizeof(request));
  request.struct_size = sizeof(request);
  request.module_bytecode = text.data();
  request.module_size = text.size();
  request.entry = entry;
  request.num_warps = numWarps;
  std::memset(&binary, 0, sizeof(binary));
  binary.struct_size = sizeof(binary);
  ASSERT_EQ(api().compile(&request, &binary), TK_SUCCESS) << api().last_error();
}

/// vector_add compiled through the plugin's ABI, 4 warps.
void compileVectorAddForPlugin(tk_plugin_binary &binary) {
  compileForPlugin(vectorAdd(), "vector_add", 4, binary);
}

tk::vulkan::Package compileVectorAdd(int subgroupSize) {
  std::string text = vectorAdd();
  tk::vulkan::CompileInput input;
  input.module = text.data();
  input.size = text.size();
  input.entry = "vector_add";
  input.target.features.subgroupSize = subgroupSize;
  tk::vulkan::Package package;
  std::string error;
  EXPECT_EQ(tk::vulkan::compileToPackage(input, package, error), TK_SUCCESS)
      << error;
  return package;
}

TEST(VulkanPackage, RoundTripsAndRefusesEveryTruncation) {
  tk::vulkan::Package package = compileVectorAdd(8);
  std::string bytes = tk::vulkan::serializePackage(package);
  tk::vulkan::Package parsed;
  std::string error;
  ASSERT_EQ(tk::vulkan::parsePackage(bytes.data(), bytes.size(), parsed, error),
            TK_SUCCESS)
      << error;
  EXPECT_EQ(parsed.entry, "vector_add");
  EXPECT_EQ(parsed.arch, "vk-sg8");
  // Four warps of 32 lanes: 16 subgroups of 8.
  EXPECT_EQ(parsed.threadsPerBlock, 128);
  EXPECT_EQ(parsed.subgroupSize, 8);
  // Three pointers and an i32.
  EXPECT_EQ(parsed.argOffsets, (std::vector<uint32_t>{0, 8, 16, 24}));
  EXPECT_EQ(parsed.pushConstantBytes, 28u);
  EXPECT_EQ(parsed.spirv, package.spirv);
  for (size_t size = 0; size < bytes.size(); size += 7) {
    error.clear();
    EXPECT_EQ(tk::vulkan::parsePackage(bytes.data(), size, parsed, error),
              TK_ERROR_INVALID_ARGUMENT)
        << size;
    EXPECT_NE(error.find("not a valid Vulkan package"), std::string::npos);
  }
  std::string trailing = bytes + "x";
  EXPECT_EQ(
      tk::vulkan::parsePackage(trailing.data(), trailing.size(), parsed, error),
      TK_ERROR_INVALID_ARGUMENT);
  std::string badMagic = bytes;
  badMagic[0] = 'X';
  EXPECT_EQ(
      tk::vulkan::parsePackage(badMagic.data(), badMagic.size(), parsed, error),
      TK_ERROR_INVALID_ARGUMENT);
}

TEST(VulkanCompiler, SpirvValAcceptsEverySubgroupSize) {
  for (int subgroupSize : {4, 8, 16, 32, 64}) {
    tk::vulkan::Package package = compileVectorAdd(subgroupSize);
    // Four warps of 32 lanes, or of the subgroup where it is wider.
    EXPECT_EQ(package.threadsPerBlock, 4 * std::max(subgroupSize, 32));
    std::string error;
    EXPECT_EQ(tk::vulkan::validateSpirv(package.spirv, error), TK_SUCCESS)
        << "subgroups of " << subgroupSize << ": " << error;
  }
}

TEST(VulkanCompiler, SpirvValCatchesABrokenModule) {
  tk::vulkan::Package package = compileVectorAdd(8);
  // Truncate the last instruction: the module no longer parses.
  package.spirv.pop_back();
  std::string error;
  EXPECT_EQ(tk::vulkan::validateSpirv(package.spirv, error),
            TK_ERROR_COMPILATION);
  EXPECT_NE(error.find("spirv-val rejects"), std::string::npos) << error;
}

TEST(VulkanCompiler, ErrorsHaveTheirStatus) {
  std::string text = vectorAdd();
  tk::vulkan::CompileInput input;
  input.module = text.data();
  input.size = text.size();
  input.entry = "no_such_kernel";
  tk::vulkan::Package package;
  std::string error;
  EXPECT_EQ(tk::vulkan::compileToPackage(input, package, error),
            TK_ERROR_NOT_FOUND);
  std::string garbage = "tk.func @broken( {";
  input.module = garbage.data();
  input.size = garbage.size();
  input.entry = "broken";
  EXPECT_EQ(tk::vulkan::compileToPackage(input, package, error),
            TK_ERROR_INVALID_IR);
  // GLSL.std.450 has no f64 exp: refused as unsupported, naming the op.
  std::string exp64 = R"(
tk.func @exp64(%x: !tk.ptr<f64> {tk.divisibility = 16 : i32}) {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %s = tk.splat %x : !tk.ptr<f64> -> tensor<64x!tk.ptr<f64>>
  %p = tk.addptr %s, %r : tensor<64x!tk.ptr<f64>>, tensor<64xi32>
  %v = tk.load %p : tensor<64x!tk.ptr<f64>>
  %e = math.exp %v : tensor<64xf64>
  tk.store %p, %e : tensor<64x!tk.ptr<f64>>
  tk.return
})";
  input.module = exp64.data();
  input.size = exp64.size();
  input.entry = "exp64";
  error.clear();
  EXPECT_EQ(tk::vulkan::compileToPackage(input, package, error),
            TK_ERROR_UNSUPPORTED);
  EXPECT_NE(error.find("spirv.GL.Exp"), std::string::npos) << error;
}

TEST(VulkanPlugin, DeclaresWhatSpirvLacks) {
  ASSERT_NE(plugin(), nullptr);
  EXPECT_STREQ(api().name, "vulkan");
  tk_backend_capabilities caps;
  std::memset(&caps, 0, sizeof(caps));
  caps.struct_size = sizeof(caps);
  ASSERT_EQ(api().get_capabilities(0, &caps), TK_SUCCESS) << api().last_error();
  // bf16 as 16-bit integers, computed in f32.
  EXPECT_TRUE(caps.dtypes & TK_DTYPE_BIT_BF16);
  EXPECT_TRUE(caps.dtypes & TK_DTYPE_BIT_F32);
  EXPECT_EQ(caps.fp8, 0);
  // A matrix unit exactly where the code is made for cooperative matrices
  // (a device with VK_KHR_cooperative_matrix; lavapipe has none).
  char target[512] = {};
  ASSERT_EQ(api().compile_target(0, target, sizeof(target)), TK_SUCCESS)
      << api().last_error();
  bool cooperative = std::string(target).find(" coopmat.") != std::string::npos;
  EXPECT_EQ(caps.mma_kinds, cooperative
                                ? uint32_t(TK_MMA_BIT_COOPERATIVE_MATRIX)
                                : uint32_t(TK_MMA_NONE))
      << target;
}

TEST(VulkanPlugin, CompileTargetNamesTheSubgroupSize) {
  // lavapipe at LP_NATIVE_VECTOR_WIDTH 256 and 512 is one device name with
  // two subgroup sizes: the kernel cache keys on the compile target.
  ASSERT_NE(plugin(), nullptr);
  int32_t lanes = 32; // the `vulkan` preset's, without a device
  if (api().initialize() == TK_SUCCESS) {
    tk_device_props props;
    std::memset(&props, 0, sizeof(props));
    props.struct_size = sizeof(props);
    ASSERT_EQ(api().device_props(0, &props), TK_SUCCESS) << api().last_error();
    lanes = props.warp_size;
  }
  char target[256];
  ASSERT_EQ(api().compile_target(0, target, sizeof(target)), TK_SUCCESS)
      << api().last_error();
  EXPECT_EQ(std::string(target).rfind(
                "subgroup" + std::to_string(lanes) + " shared", 0),
            0u)
      << target;
}

TEST(VulkanPlugin, ValidateCatchesADamagedBinary) {
  std::string bytes = tk::vulkan::serializePackage(compileVectorAdd(8));
  EXPECT_EQ(api().validate(bytes.data(), bytes.size()), TK_SUCCESS)
      << api().last_error();
  // A word of the SPIR-V's header (its bound) zeroed: spirv-val refuses.
  std::string damaged = bytes;
  size_t header = damaged.size() -
                  compileVectorAdd(8).spirv.size() * 4; // SPIR-V starts here
  std::memset(&damaged[header + 12], 0, 4);
  EXPECT_NE(api().validate(damaged.data(), damaged.size()), TK_SUCCESS);
  EXPECT_NE(std::string(api().last_error()).find("spirv-val"),
            std::string::npos)
      << api().last_error();
  EXPECT_EQ(api().validate(bytes.data(), 10), TK_ERROR_INVALID_ARGUMENT);
}

/// A kernel with `count` i64 arguments after its output pointer, which
/// stores their sum into the output's four elements.
std::string wideKernel(int count) {
  std::string text = "tk.func @wide(%out: !tk.ptr<i64> {tk.divisibility = 16 : "
                     "i32}";
  for (int i = 0; i < count; ++i)
    text += ", %a" + std::to_string(i) + ": i64";
  text += ") {\n  %r = tk.make_range {end = 4 : i32, start = 0 : i32} : "
          "tensor<4xi32>\n";
  std::string sum = "%a0";
  for (int i = 1; i < count; ++i) {
    text += "  %s" + std::to_string(i) + " = arith.addi " + sum + ", %a" +
            std::to_string(i) + " : i64\n";
    sum = "%s" + std::to_string(i);
  }
  text += "  %v = tk.splat " + sum +
          " : i64 -> tensor<4xi64>\n"
          "  %p = tk.splat %out : !tk.ptr<i64> -> tensor<4x!tk.ptr<i64>>\n"
          "  %q = tk.addptr %p, %r : tensor<4x!tk.ptr<i64>>, tensor<4xi32>\n"
          "  tk.store %q, %v : tensor<4x!tk.ptr<i64>>\n  tk.return\n}\n";
  return text;
}

/// Arguments over the 128 push-constant bytes every device has go in the
/// launch's argument buffer, the push constants holding its address; the
/// package says so, and a package that says so wrongly is refused.
TEST(VulkanPackage, LargeArgumentBlocksGoInABuffer) {
  std::string text = wideKernel(40);
  tk::vulkan::CompileInput input;
  input.module = text.data();
  input.size = text.size();
  input.entry = "wide";
  input.numWarps = 1;
  tk::vulkan::Package package;
  std::string error;
  ASSERT_EQ(tk::vulkan::compileToPackage(input, package, error), TK_SUCCESS)
      << error;
  // The output pointer and 40 i64: 328 bytes, behind an 8-byte address.
  EXPECT_EQ(package.pushConstantBytes, 8u);
  EXPECT_EQ(package.argumentBufferBytes, 328u);
  ASSERT_EQ(package.argOffsets.size(), 41u);
  EXPECT_EQ(package.argOffsets.back(), 320u);
  std::string bytes = tk::vulkan::serializePackage(package);
  tk::vulkan::Package parsed;
  ASSERT_EQ(tk::vulkan::parsePackage(bytes.data(), bytes.size(), parsed, error),
            TK_SUCCESS)
      << error;
  EXPECT_EQ(parsed.argumentBufferBytes, 328u);
  EXPECT_EQ(parsed.argOffsets, package.argOffsets);
  // An argument buffer needs exactly an address in the push constants.
  tk::vulkan::Package wrong = package;
  wrong.pushConstantBytes = 16;
  bytes = tk::vulkan::serializePackage(wrong);
  error.clear();
  EXPECT_EQ(tk::vulkan::parsePackage(bytes.data(), bytes.size(), parsed, error),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error.find("argument buffer of 328 bytes"), std::string::npos)
      << error;
  // An offset past the block.
  wrong = package;
  wrong.argOffsets.back() = 328;
  bytes = tk::vulkan::serializePackage(wrong);
  error.clear();
  EXPECT_EQ(tk::vulkan::parsePackage(bytes.data(), bytes.size(), parsed, error),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error.find("past the 328 bytes"), std::string::npos) << error;
}

/// Launches whose arguments go in argument buffers, several in flight on
/// one stream (more than one submission's argument buffer holds): each
/// reads its own arguments, not a later launch's.
TEST(VulkanPlugin, ArgumentBuffersKeepEachLaunchsArguments) {
  tk_status init = api().initialize();
  if (init == TK_ERROR_NO_DEVICE)
    GTEST_SKIP() << "no Vulkan device: " << api().last_error();
  ASSERT_EQ(init, TK_SUCCESS) << api().last_error();
  constexpr int kArgs = 40;
  tk_plugin_binary binary;
  ASSERT_NO_FATAL_FAILURE(
      compileForPlugin(wideKernel(kArgs), "wide", 1, binary));
  std::vector<tk_plugin_arg_type> types(kArgs + 1, TK_PLUGIN_ARG_I64);
  types[0] = TK_PLUGIN_ARG_PTR;
  void *executable = nullptr;
  tk_status loaded =
      api().executable_load(0, binary.data, binary.size, "wide", types.data(),
                            types.size(), &executable);
  api().binary_free(&binary);
  ASSERT_EQ(loaded, TK_SUCCESS) << api().last_error();

  constexpr int kLaunches = 100;
  void *out = nullptr;
  ASSERT_EQ(api().mem_alloc(0, kLaunches * 4 * 8, &out), TK_SUCCESS);
  std::vector<int64_t> result(kLaunches * 4, -1);
  ASSERT_EQ(
      api().memcpy_host_to_device(0, out, result.data(), result.size() * 8),
      TK_SUCCESS);
  int32_t grid[3] = {1, 1, 1};
  for (int launch = 0; launch < kLaunches; ++launch) {
    std::vector<int64_t> values(kArgs);
    for (int i = 0; i < kArgs; ++i)
      values[i] = int64_t(launch) * 1000000007 + i * i;
    void *slot = static_cast<char *>(out) + launch * 4 * 8;
    std::vector<void *> args{&slot};
    for (int64_t &value : values)
      args.push_back(&value);
    // The values die at the end of this iteration, before the launch runs.
    ASSERT_EQ(api().launch(executable, grid, args.data(), nullptr), TK_SUCCESS)
        << api().last_error();
  }
  ASSERT_EQ(
      api().memcpy_device_to_host(0, result.data(), out, result.size() * 8),
      TK_SUCCESS);
  for (int launch = 0; launch < kLaunches; ++launch) {
    int64_t want = 0;
    for (int i = 0; i < kArgs; ++i)
      want += int64_t(launch) * 1000000007 + i * i;
    for (int element = 0; element < 4; ++element)
      EXPECT_EQ(result[launch * 4 + element], want)
          << "launch " << launch << ", element " << element;
  }
  api().executable_unload(executable);
  EXPECT_EQ(api().mem_free(0, out), TK_SUCCESS);
}

/// A chain of launches that each read the one before (x += y, in place) on
/// a stream of its own, with events recorded between them: a stream
/// gathers launches and timestamps while its earlier submissions run, and
/// must still run them in order, submit them when an event is waited for,
/// and before a copy or a free that follows them.
TEST(VulkanPlugin, GatheredLaunchesRunInOrder) {
  tk_status init = api().initialize();
  if (init == TK_ERROR_NO_DEVICE)
    GTEST_SKIP() << "no Vulkan device: " << api().last_error();
  ASSERT_EQ(init, TK_SUCCESS) << api().last_error();
  tk_plugin_binary binary;
  ASSERT_NO_FATAL_FAILURE(compileVectorAddForPlugin(binary));
  tk_plugin_arg_type types[] = {TK_PLUGIN_ARG_PTR, TK_PLUGIN_ARG_PTR,
                                TK_PLUGIN_ARG_PTR, TK_PLUGIN_ARG_I32};
  void *executable = nullptr;
  tk_status loaded = api().executable_load(0, binary.data, binary.size,
                                           "vector_add", types, 4, &executable);
  api().binary_free(&binary);
  ASSERT_EQ(loaded, TK_SUCCESS) << api().last_error();

  constexpr int32_t n = 1 << 16;
  constexpr int kLaunches = 300, kEvents = 30;
  std::vector<float> x(n, 0.0f), y(n);
  for (int32_t i = 0; i < n; ++i)
    y[i] = float(i % 7);
  void *dx = nullptr, *dy = nullptr, *stream = nullptr;
  ASSERT_EQ(api().mem_alloc(0, n * 4, &dx), TK_SUCCESS);
  ASSERT_EQ(api().mem_alloc(0, n * 4, &dy), TK_SUCCESS);
  ASSERT_EQ(api().memcpy_host_to_device(0, dx, x.data(), n * 4), TK_SUCCESS);
  ASSERT_EQ(api().memcpy_host_to_device(0, dy, y.data(), n * 4), TK_SUCCESS);
  ASSERT_EQ(api().stream_create(0, &stream), TK_SUCCESS) << api().last_error();
  std::vector<void *> events(kEvents);
  for (void *&event : events)
    ASSERT_EQ(api().event_create(0, &event), TK_SUCCESS) << api().last_error();
  int32_t count = n;
  void *args[] = {&dx, &dy, &dx, &count};
  int32_t grid[3] = {(n + 1023) / 1024, 1, 1};
  for (int launch = 0; launch < kLaunches; ++launch) {
    if (launch % (kLaunches / kEvents) == 0) {
      ASSERT_EQ(
          api().event_record(0, events[launch / (kLaunches / kEvents)], stream),
          TK_SUCCESS)
          << api().last_error();
    }
    ASSERT_EQ(api().launch(executable, grid, args, stream), TK_SUCCESS)
        << api().last_error();
  }
  // Waiting for the last event alone submits what it follows (a stream
  // that kept it would never let this return), and the events are in
  // order.
  ASSERT_EQ(api().event_record(0, events[0], stream), TK_SUCCESS);
  ASSERT_EQ(api().event_synchronize(0, events[0]), TK_SUCCESS)
      << api().last_error();
  for (int i = 2; i < kEvents; ++i) {
    float ms = -1.0f;
    tk_status timed = api().event_elapsed_ms(0, events[1], events[i], &ms);
    if (timed == TK_ERROR_UNSUPPORTED)
      break; // a queue without timestamps
    ASSERT_EQ(timed, TK_SUCCESS) << api().last_error();
    EXPECT_GE(ms, 0.0f) << "event " << i;
  }
  // More launches, left unsynchronized: the copy on the default stream
  // follows them.
  for (int launch = 0; launch < kLaunches; ++launch)
    ASSERT_EQ(api().launch(executable, grid, args, stream), TK_SUCCESS)
        << api().last_error();
  ASSERT_EQ(api().memcpy_device_to_host(0, x.data(), dx, n * 4), TK_SUCCESS)
      << api().last_error();
  for (int32_t i = 0; i < n; ++i)
    ASSERT_EQ(x[i], float(2 * kLaunches * (i % 7))) << "element " << i;
  for (void *event : events)
    EXPECT_EQ(api().event_destroy(0, event), TK_SUCCESS);
  EXPECT_EQ(api().stream_destroy(0, stream), TK_SUCCESS);
  api().executable_unload(executable);
  EXPECT_EQ(api().mem_free(0, dx), TK_SUCCESS);
  EXPECT_EQ(api().mem_free(0, dy), TK_SUCCESS);
}

/// A vector add through the ABI on device 0, where there is one.
// Workgroups an SM holds by NVIDIA's limits, as CUDA's occupancy
// calculator counts them for an H100 (64 warps, 65,536 registers), with
// Vulkan's 48 KB standing in for the SM's shared memory.
TEST(VulkanDriver, OccupancyTakesTheTightestLimit) {
  auto h100 = [](int64_t threads, int64_t registers, int64_t shared) {
    return tk::vulkan::workgroupsPerComputeUnit(64, 65536, 49152, 32, threads,
                                                registers, shared);
  };
  EXPECT_EQ(h100(128, 32, 0), 16);    // warps: 64 / 4
  EXPECT_EQ(h100(128, 40, 0), 12);    // registers: 65536 / 1280 / 4
  EXPECT_EQ(h100(128, 33, 0), 12);    // 33 x 32 = 1056 rounds to 1280
  EXPECT_EQ(h100(256, 168, 0), 1);    // 65536 / 5376 = 12 warps of 8
  EXPECT_EQ(h100(128, 32, 40960), 1); // one workgroup's 40 KB
  EXPECT_EQ(h100(1024, 255, 0), 1);   // none fits: still 1
  EXPECT_EQ(h100(96, 16, 0), 21);     // three warps
}

TEST(VulkanPlugin, VectorAddRunsOnTheDevice) {
  tk_status init = api().initialize();
  if (init == TK_ERROR_NO_DEVICE)
    GTEST_SKIP() << "no Vulkan device: " << api().last_error();
  ASSERT_EQ(init, TK_SUCCESS) << api().last_error();
  tk_device_props props;
  std::memset(&props, 0, sizeof(props));
  props.struct_size = sizeof(props);
  ASSERT_EQ(api().device_props(0, &props), TK_SUCCESS) << api().last_error();

  tk_plugin_binary binary;
  ASSERT_NO_FATAL_FAILURE(compileVectorAddForPlugin(binary));
  tk_plugin_arg_type types[] = {TK_PLUGIN_ARG_PTR, TK_PLUGIN_ARG_PTR,
                                TK_PLUGIN_ARG_PTR, TK_PLUGIN_ARG_I32};
  void *executable = nullptr;
  // A signature of the wrong length is refused.
  EXPECT_EQ(api().executable_load(0, binary.data, binary.size, "vector_add",
                                  types, 3, &executable),
            TK_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(api().executable_load(0, binary.data, binary.size, "vector_add",
                                  types, 4, &executable),
            TK_SUCCESS)
      << api().last_error();
  api().binary_free(&binary);

  constexpr int32_t n = 3000;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int32_t i = 0; i < n; ++i) {
    x[i] = float(i);
    y[i] = 0.25f * float(i);
  }
  void *dx = nullptr, *dy = nullptr, *dout = nullptr;
  ASSERT_EQ(api().mem_alloc(0, n * 4, &dx), TK_SUCCESS);
  ASSERT_EQ(api().mem_alloc(0, n * 4, &dy), TK_SUCCESS);
  ASSERT_EQ(api().mem_alloc(0, n * 4, &dout), TK_SUCCESS);
  ASSERT_EQ(api().memcpy_host_to_device(0, dx, x.data(), n * 4), TK_SUCCESS);
  ASSERT_EQ(api().memcpy_host_to_device(0, dy, y.data(), n * 4), TK_SUCCESS);
  ASSERT_EQ(api().memcpy_host_to_device(0, dout, out.data(), n * 4),
            TK_SUCCESS);
  int32_t count = n;
  void *args[] = {&dx, &dy, &dout, &count};
  int32_t grid[3] = {(n + 1023) / 1024, 1, 1};
  ASSERT_EQ(api().launch(executable, grid, args, nullptr), TK_SUCCESS)
      << api().last_error();
  ASSERT_EQ(api().memcpy_device_to_host(0, out.data(), dout, n * 4),
            TK_SUCCESS);
  for (int32_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i], 1.25f * float(i)) << i << " on " << props.name;
  api().executable_unload(executable);
  EXPECT_EQ(api().mem_free(0, dx), TK_SUCCESS);
  EXPECT_EQ(api().mem_free(0, dy), TK_SUCCESS);
  EXPECT_EQ(api().mem_free(0, dout), TK_SUCCESS);
  // A freed pointer is not freed twice.
  EXPECT_EQ(api().mem_free(0, dout), TK_ERROR_INVALID_ARGUMENT);
}

} // namespace
