//===- plugin.cpp - the Vulkan backend's plugin interface -------*- C++ -*-===//
//
// Exports tk_backend_get_interface for libtk_backend_vulkan.so (and, without
// compile and validate, libtk_driver_vulkan.so): any Vulkan
// 1.2 device with buffer device addresses, through the loader opened at run
// time (the plugin loads anywhere and reports "no device" without one),
// kernels compiled to SPIR-V at the device's subgroup size.
//
//===----------------------------------------------------------------------===//

#include "common/DriverEntries.h"
#include "common/PluginSupport.h"
#include "compiler/DeviceTarget.h"
#include "compiler/Package.h"
#include "driver/Device.h"
#include "driver/Executable.h"
#include "tk/tk_plugin.h"

#ifndef TK_PLUGIN_DRIVER_ONLY
#include "compiler/Compiler.h"

#include "llvm/Config/llvm-config.h"
#define TK_VULKAN_COMPILER "tk-vulkan 2 llvm " LLVM_VERSION_STRING
#else
#define TK_VULKAN_COMPILER "tk-vulkan 2 (driver only)"
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#define TK_VULKAN_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

thread_local std::string lastError;

/// The driver layer the plain entries forward to (common/DriverEntries.h).
struct VulkanDriver {
  static constexpr const char *name = "tk-vulkan";
  static std::string &lastError() { return ::lastError; }
  using CopyKind = tk::vulkan::CopyKind;
  static constexpr auto initializeDevices = &tk::vulkan::initializeDevices;
  static constexpr auto deviceCount = &tk::vulkan::deviceCount;
  static constexpr auto queryDeviceProps = &tk::vulkan::queryDeviceProps;
  static constexpr auto allocateMemory = &tk::vulkan::allocateMemory;
  static constexpr auto freeMemory = &tk::vulkan::freeMemory;
  static constexpr auto copyMemory = &tk::vulkan::copyMemory;
  static constexpr auto createStream = &tk::vulkan::createStream;
  static constexpr auto destroyStream = &tk::vulkan::destroyStream;
  static constexpr auto synchronizeStream = &tk::vulkan::synchronizeStream;
  static constexpr auto synchronizeDevice = &tk::vulkan::synchronizeDevice;
  static constexpr auto createEvent = &tk::vulkan::createEvent;
  static constexpr auto destroyEvent = &tk::vulkan::destroyEvent;
  static constexpr auto recordEvent = &tk::vulkan::recordEvent;
  static constexpr auto synchronizeEvent = &tk::vulkan::synchronizeEvent;
  static constexpr auto eventElapsedMs = &tk::vulkan::eventElapsedMs;
};
using Entries = tk::plugin::DriverEntries<VulkanDriver>;

/// The keys of the cooperative-matrix products of `info` that the compiler
/// lowers: f16 operands accumulated in f32, bf16 ones too where the device
/// has bf16 matrices, signed 8-bit ones in 32-bit integers (the Vulkan
/// preset `vulkan-cooperative-matrix` lists the shapes it knows).
std::vector<std::string>
cooperativeMatrixKeys(const tk::vulkan::DeviceInfo &info) {
  using tk::vulkan::CooperativeMatrixTypes;
  std::vector<std::string> keys;
  for (const tk::vulkan::CooperativeMatrixShape &shape :
       info.cooperativeMatrixShapes) {
    auto are = [&](VkComponentTypeKHR operands, VkComponentTypeKHR sums) {
      return shape.a == operands && shape.b == operands && shape.c == sums &&
             shape.result == sums;
    };
    std::optional<CooperativeMatrixTypes> types;
    if (are(VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR))
      types = CooperativeMatrixTypes::F16F32;
    else if (info.bfloat16CooperativeMatrix &&
             are(VK_COMPONENT_TYPE_BFLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT32_KHR))
      types = CooperativeMatrixTypes::BF16F32;
    else if (are(VK_COMPONENT_TYPE_SINT8_KHR, VK_COMPONENT_TYPE_SINT32_KHR))
      types = CooperativeMatrixTypes::S8S32;
    if (!types || shape.saturatingAccumulation)
      continue;
    // The shapes the vulkan-cooperative-matrix preset has (sides of 8, 16
    // or 32), each once.
    auto side = [](uint32_t size) {
      return size == 8 || size == 16 || size == 32;
    };
    if (!side(shape.m) || !side(shape.n) || !side(shape.k))
      continue;
    std::string key =
        tk::vulkan::cooperativeMatrixKey(shape.m, shape.n, shape.k, *types);
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      keys.push_back(key);
  }
  return keys;
}

/// The device code for `device` is compiled for: the device's own subgroup
/// size, workgroup memory and features; without a device, the generic
/// `vulkan` preset (subgroups of 32, TK_VULKAN_SUBGROUP_SIZE to change).
tk_status selectTarget(int32_t device, tk::vulkan::DeviceTarget &target,
                       std::string &error) {
  std::string ignored;
  if (tk::vulkan::initializeDevices(ignored) == TK_SUCCESS) {
    if (tk_status status = tk::vulkan::checkDevice(device, error))
      return status;
    const tk::vulkan::DeviceInfo &info = tk::vulkan::deviceInfo(device);
    tk::vulkan::DeviceFeatures &features = target.features;
    features.subgroupSize = info.subgroupSize;
    features.float16 = info.shaderFloat16 && info.storageBuffer16BitAccess;
    features.int16 = info.shaderInt16 && info.storageBuffer16BitAccess;
    features.int8 = info.shaderInt8 && info.storageBuffer8BitAccess;
    features.float64 = info.shaderFloat64;
    features.int64Atomics = info.shaderBufferInt64Atomics;
    features.float32AtomicAdd = info.shaderBufferFloat32AtomicAdd;
    if (info.cooperativeMatrix && features.float16)
      features.cooperativeMatrix = cooperativeMatrixKeys(info);
    target.sharedMemoryBytes = info.maxComputeSharedMemorySize;
    target.maxThreadsPerBlock = info.maxComputeWorkGroupInvocations;
    return TK_SUCCESS;
  }
  target = tk::vulkan::DeviceTarget();
  target.sharedMemoryBytes = 48 * 1024;
  if (const char *size = std::getenv("TK_VULKAN_SUBGROUP_SIZE");
      size && *size) {
    char *end = nullptr;
    long value = std::strtol(size, &end, 10);
    // "32-coopmat": cooperative matrices as NVIDIA's driver lists them.
    bool coopmat = std::strcmp(end, "-coopmat") == 0;
    if ((*end != '\0' && !coopmat) || value < 1 || value > 128 ||
        (value & (value - 1))) {
      error = std::string("tk-vulkan: TK_VULKAN_SUBGROUP_SIZE='") + size +
              "' is not a power of two in 1..128, with -coopmat for "
              "cooperative matrices";
      return TK_ERROR_INVALID_ARGUMENT;
    }
    target.features.subgroupSize = value;
    if (coopmat)
      target.features.cooperativeMatrix =
          tk::vulkan::nvidiaCooperativeMatrixKeys();
  }
  return TK_SUCCESS;
}

/// The subgroup size, limits and optional features the SPIR-V is made for:
/// two lavapipe configurations share a device name but not their code.
std::string getTargetName(const tk::vulkan::DeviceTarget &target) {
  const tk::vulkan::DeviceFeatures &features = target.features;
  std::string name = "subgroup" + std::to_string(features.subgroupSize) +
                     " shared" + std::to_string(target.sharedMemoryBytes) +
                     " threads" + std::to_string(target.maxThreadsPerBlock);
  auto add = [&](bool present, const char *feature) {
    if (present)
      name += std::string(" ") + feature;
  };
  add(features.float16, "f16");
  add(features.int16, "i16");
  add(features.int8, "i8");
  add(features.float64, "f64");
  add(features.int64Atomics, "atomic-i64");
  add(features.float32AtomicAdd, "atomic-add-f32");
  for (const std::string &key : features.cooperativeMatrix)
    add(true, key.c_str());
  return name;
}

tk_status vulkanCompileTarget(int32_t device, char *out, size_t capacity) {
  return Entries::call([&](std::string &error) {
    tk::vulkan::DeviceTarget target;
    if (tk_status status = selectTarget(device, target, error))
      return status;
    return tk::plugin::copyTargetName(getTargetName(target), out, capacity,
                                      "tk-vulkan", error);
  });
}

/// SPIR-V made for another target runs on `device` when the device runs
/// its subgroup size (its own, or one subgroup size control offers compute
/// pipelines) and has every optional feature it uses. Its workgroup memory
/// and size are the kernel's, which executable_load checks against the
/// device.
tk_status vulkanTargetRank(int32_t device, const char *name, int32_t *out) {
  if (!name || !out)
    return Entries::fail(TK_ERROR_INVALID_ARGUMENT,
                         "tk-vulkan: target_rank needs a target and an "
                         "output");
  return Entries::call([&](std::string &error) {
    *out = 0;
    tk::vulkan::DeviceTarget target;
    if (tk_status status = selectTarget(device, target, error))
      return status;
    std::string own = getTargetName(target);
    if (own == name) {
      *out = 2;
      return TK_SUCCESS;
    }
    std::string ignored;
    if (tk::vulkan::initializeDevices(ignored) != TK_SUCCESS ||
        tk::vulkan::checkDevice(device, ignored) != TK_SUCCESS)
      return TK_SUCCESS; // no device: only its own target
    const tk::vulkan::DeviceInfo &info = tk::vulkan::deviceInfo(device);
    std::istringstream words(name);
    std::string word;
    std::set<std::string> ownWords;
    std::istringstream ownStream(own);
    while (ownStream >> word)
      ownWords.insert(word);
    bool runs = true, sawSubgroup = false;
    while (words >> word) {
      if (word.rfind("subgroup", 0) == 0) {
        char *end = nullptr;
        unsigned long lanes = std::strtoul(word.c_str() + 8, &end, 10);
        bool controlled =
            info.subgroupSizeControl &&
            (info.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
            lanes >= info.minSubgroupSize && lanes <= info.maxSubgroupSize;
        runs &= *end == '\0' && (lanes == info.subgroupSize || controlled);
        sawSubgroup = true;
      } else if (word.rfind("shared", 0) != 0 &&
                 word.rfind("threads", 0) != 0) {
        runs &= ownWords.count(word) != 0;
      }
    }
    *out = runs && sawSubgroup ? 1 : 0;
    return TK_SUCCESS;
  });
}

#ifndef TK_PLUGIN_DRIVER_ONLY
tk_status vulkanCompile(const tk_plugin_compile_request *request,
                        tk_plugin_binary *out) {
  if (!request || !out || !request->module_bytecode ||
      request->module_size == 0)
    return Entries::fail(
        TK_ERROR_INVALID_ARGUMENT,
        "tk-vulkan: compile needs a request with a module and an "
        "output");
  tk::vulkan::CompileInput input;
  input.module = request->module_bytecode;
  input.size = request->module_size;
  input.entry = request->entry ? request->entry : "";
  input.dumpDir = request->dump_dir ? request->dump_dir : "";
  input.numWarps = request->num_warps > 0 ? request->num_warps : 4;
  std::string error;
  if (tk_status status = selectTarget(request->device, input.target, error))
    return Entries::fail(status, error);
  tk::vulkan::Package package;
  if (tk_status status = tk::vulkan::compileToPackage(input, package, error))
    return Entries::fail(status, error);
  return tk::plugin::fillBinary(tk::vulkan::serializePackage(package),
                                package.numWarps, package.sharedMemoryBytes,
                                /*registersPerThread=*/0, out, "tk-vulkan",
                                lastError);
}

/// The package parses and its SPIR-V passes spirv-val (when installed).
tk_status vulkanValidate(const void *binary, size_t size) {
  return Entries::call([&](std::string &error) {
    tk::vulkan::Package package;
    if (tk_status status =
            tk::vulkan::parsePackage(binary, size, package, error))
      return status;
    tk_status status = tk::vulkan::validateSpirv(package.spirv, error);
    // Without spirv-val the package is checked as far as it can be.
    return status == TK_ERROR_NOT_FOUND ? TK_SUCCESS : status;
  });
}

#endif // TK_PLUGIN_DRIVER_ONLY

tk_status vulkanExecutableLoad(int32_t device, const void *binary, size_t size,
                               const char *entry,
                               const tk_plugin_arg_type *argTypes,
                               size_t numArgs, void **out) {
  return tk::plugin::loadExecutable<tk::vulkan::Executable>(
      binary, size, entry, argTypes, numArgs, out, "tk-vulkan", lastError,
      [&](auto &executable, std::string &error) {
        tk::vulkan::Package package;
        if (tk_status status =
                tk::vulkan::parsePackage(binary, size, package, error))
          return status;
        if (package.entry != entry) {
          error = "tk-vulkan: the package holds '" + package.entry +
                  "', not '" + entry + "'";
          return TK_ERROR_NOT_FOUND;
        }
        if (package.argOffsets.size() != numArgs) {
          error = "tk-vulkan: the package's kernel takes " +
                  std::to_string(package.argOffsets.size()) +
                  " arguments, the signature has " + std::to_string(numArgs);
          return TK_ERROR_INVALID_ARGUMENT;
        }
        return tk::vulkan::loadExecutable(
            device, package.spirv.data(), package.spirv.size(), package.entry,
            package.threadsPerBlock, package.sharedMemoryBytes,
            package.subgroupSize, package.argOffsets, package.pushConstantBytes,
            package.argumentBufferBytes, executable, error);
      });
}

tk_status vulkanExecutableOccupancy(void *executable, int32_t *out) {
  if (tk_status status =
          tk::plugin::checkOccupancy(executable, out, "tk-vulkan", lastError))
    return status;
  return Entries::call([&](std::string &error) {
    return tk::vulkan::executableOccupancy(
        *static_cast<tk::vulkan::Executable *>(executable), *out, error);
  });
}

tk_status vulkanLaunch(void *executable, const int32_t grid[3],
                       void *const *args, void *stream) {
  auto *exe = static_cast<tk::vulkan::Executable *>(executable);
  std::string error;
  if (tk_status status = tk::plugin::checkLaunch(
          exe, grid, exe && !exe->argTypes.empty(), args, "tk-vulkan", error))
    return Entries::fail(status, std::move(error));
  if (tk_status status =
          tk::vulkan::launchExecutable(*exe, grid, args, stream, error))
    return Entries::fail(status, std::move(error));
  return TK_SUCCESS;
}

tk_status vulkanGetCapabilities(int32_t device, tk_backend_capabilities *out) {
  if (!out || out->struct_size < sizeof(size_t))
    return Entries::fail(
        TK_ERROR_INVALID_ARGUMENT,
        "tk-vulkan: get_capabilities needs a struct with struct_size "
        "set");
  tk::vulkan::DeviceTarget target;
  std::string error;
  if (tk_status status = selectTarget(device, target, error))
    return Entries::fail(status, error);
  const tk::vulkan::DeviceFeatures &features = target.features;
  tk_backend_capabilities caps;
  std::memset(&caps, 0, sizeof(caps));
  // SPIR-V has no bfloat16 (before SPV_KHR_bfloat16) nor fp8 types: bf16
  // is kept in 16-bit integers and computed in f32; fp8 is not lowered.
  caps.dtypes =
      TK_DTYPE_BIT_I1 | TK_DTYPE_BIT_I32 | TK_DTYPE_BIT_I64 | TK_DTYPE_BIT_F32;
  if (features.int16)
    caps.dtypes |= TK_DTYPE_BIT_BF16;
  if (features.int8)
    caps.dtypes |= TK_DTYPE_BIT_I8;
  if (features.int16)
    caps.dtypes |= TK_DTYPE_BIT_I16;
  if (features.float16)
    caps.dtypes |= TK_DTYPE_BIT_F16;
  if (features.float64)
    caps.dtypes |= TK_DTYPE_BIT_F64;
  // OpAtomic* on 32-bit integers everywhere; fadd needs
  // VK_EXT_shader_atomic_float.
  caps.atomics = tk::plugin::kAllAtomics & ~TK_ATOMIC_BIT_FADD;
  if (features.float32AtomicAdd)
    caps.atomics |= TK_ATOMIC_BIT_FADD;
  caps.fp8 = 0;
  // Dots whose shapes and types the device's cooperative matrices take
  // run on them; the others are subgroup FMA code.
  caps.mma_kinds = features.cooperativeMatrix.empty()
                       ? TK_MMA_NONE
                       : TK_MMA_BIT_COOPERATIVE_MATRIX;
  caps.max_tile_elements = 0;
  tk::plugin::copyVersioned(caps, out);
  return TK_SUCCESS;
}

tk_status vulkanStreamWrap(int32_t device, void *queue, void **out) {
  if (!queue || !out)
    return Entries::fail(TK_ERROR_INVALID_ARGUMENT,
                         "tk-vulkan: stream_wrap needs a VkQueue and an "
                         "output");
  return Entries::call([&](std::string &error) {
    return tk::vulkan::wrapStream(device, queue, out, error);
  });
}

/// tk's command pool and fences go; the caller's queue stays the caller's.
tk_status vulkanStreamUnwrap(int32_t device, void *stream) {
  return Entries::call([&](std::string &error) {
    return tk::vulkan::destroyStream(device, stream, error);
  });
}

tk_status vulkanDeviceNative(int32_t device, tk_device_native *out) {
  if (!out || out->struct_size < sizeof(size_t))
    return Entries::fail(TK_ERROR_INVALID_ARGUMENT,
                         "tk-vulkan: device_native needs a struct with "
                         "struct_size set");
  return Entries::call([&](std::string &error) {
    return tk::vulkan::queryNative(device, out, error);
  });
}

const tk_backend_interface kInterface = {
    /*struct_size=*/sizeof(tk_backend_interface),
    /*abi_major=*/TK_PLUGIN_ABI_MAJOR,
    /*abi_minor=*/TK_PLUGIN_ABI_MINOR,
    /*name=*/"vulkan",
    /*compiler_version=*/TK_VULKAN_COMPILER,
    Entries::lastError,
    Entries::initialize,
    Entries::deviceCount,
    Entries::deviceProps,
    Entries::memAlloc,
    Entries::memFree,
    Entries::memcpy<tk::vulkan::CopyKind::HostToDevice>,
    Entries::memcpy<tk::vulkan::CopyKind::DeviceToHost>,
    Entries::memcpy<tk::vulkan::CopyKind::DeviceToDevice>,
    Entries::streamCreate,
    Entries::streamDestroy,
    Entries::streamSynchronize,
    Entries::deviceSynchronize,
    TK_IF_COMPILER(vulkanCompile),
    tk::plugin::freeBinary,
    TK_IF_COMPILER(vulkanValidate),
    vulkanExecutableLoad,
    tk::plugin::unloadExecutable<tk::vulkan::Executable>,
    vulkanExecutableOccupancy,
    vulkanLaunch,
    vulkanGetCapabilities,
    Entries::eventCreate,
    Entries::eventDestroy,
    Entries::eventRecord,
    Entries::eventSynchronize,
    Entries::eventElapsedMs,
    vulkanStreamWrap,
    vulkanStreamUnwrap,
    vulkanCompileTarget,
    vulkanDeviceNative,
    vulkanTargetRank,
};

} // namespace

TK_VULKAN_EXPORT const tk_backend_interface *
tk_backend_get_interface(uint32_t abi_major) {
  return tk::plugin::interfaceForAbi(abi_major, kInterface, lastError);
}

TK_VULKAN_EXPORT uint32_t tk_backend_abi_version(void) {
  return TK_PLUGIN_ABI_MAJOR;
}
