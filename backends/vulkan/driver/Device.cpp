//===- Device.cpp - Vulkan device discovery and creation --------*- C++ -*-===//
//
// Finds the physical devices tk can use, creates a VkDevice for each (with
// its queue, pipeline cache and default stream) once per process, and says
// what each device is. Memory, queues and the pipeline cache's file are in
// Memory.cpp, Queue.cpp and PipelineCache.cpp, which share DeviceState.h.
//
//===----------------------------------------------------------------------===//

#include "driver/DeviceState.h"

#include "common/DeviceProbe.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

namespace tk::vulkan {

using namespace detail;

namespace {

/// The most queues of its family a device is created with: tk's own and
/// some for callers to wrap (NVIDIA's compute family has 8).
constexpr uint32_t kMaxQueues = 16;

//===--- Helpers ----------------------------------------------------------===//

std::string versionString(uint32_t version) {
  return std::to_string(VK_API_VERSION_MAJOR(version)) + "." +
         std::to_string(VK_API_VERSION_MINOR(version)) + "." +
         std::to_string(VK_API_VERSION_PATCH(version));
}

/// `version` without its patch: what feature levels compare.
uint32_t featureLevel(uint32_t version) {
  return VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(version),
                             VK_API_VERSION_MINOR(version), 0);
}

/// Copies `text` into the fixed-size field `out`, always terminated.
template <size_t N> void copyString(char (&out)[N], const char *text) {
  std::strncpy(out, text, N - 1);
  out[N - 1] = '\0';
}

bool envFlag(const char *name) {
  const char *value = std::getenv(name);
  return value && *value && std::strcmp(value, "0") != 0;
}

//===--- Device discovery -------------------------------------------------===//

/// A physical device that passed the checks, with what it offers (the
/// DeviceInfo's feature flags say "available" until the device is created
/// with all of them).
struct Candidate {
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  DeviceInfo info;
  VkPhysicalDeviceMemoryProperties memory = {};
  uint32_t queueFamily = 0;
  uint32_t queueCount = 0;
  /// Subgroup size control through VkPhysicalDeviceVulkan13Features (1.3
  /// device and instance), else through VK_EXT_subgroup_size_control.
  bool core13 = false;
  bool subgroupSizeControlExtension = false;
  bool atomicFloatExtension = false;
  bool cooperativeMatrixExtension = false;
  bool bfloat16Extension = false;
  bool executablePropertiesExtension = false;
  int rank = 0;
};

int typeRank(VkPhysicalDeviceType type) {
  switch (type) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    return 0;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    return 1;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
    return 2;
  case VK_PHYSICAL_DEVICE_TYPE_CPU:
    return 3;
  default:
    return 4;
  }
}

tk_status deviceExtensions(VkPhysicalDevice physical,
                           std::vector<VkExtensionProperties> &extensions,
                           std::string &error) {
  VkResult result;
  do {
    uint32_t count = 0;
    TK_VK_RETURN_IF_ERROR(vk(), vkEnumerateDeviceExtensionProperties, physical,
                          nullptr, &count, nullptr);
    extensions.resize(count);
    result = vk().vkEnumerateDeviceExtensionProperties(
        physical, nullptr, &count, extensions.data());
    extensions.resize(count);
  } while (result == VK_INCOMPLETE);
  return checkVk(result, "vkEnumerateDeviceExtensionProperties", error);
}

bool hasExtension(const std::vector<VkExtensionProperties> &extensions,
                  const char *name) {
  for (const VkExtensionProperties &extension : extensions)
    if (std::strcmp(extension.extensionName, name) == 0)
      return true;
  return false;
}

/// The shapes VK_KHR_cooperative_matrix lists for `physical` at subgroup
/// scope (the only scope a tile's dot runs at).
tk_status cooperativeMatrixShapes(VkPhysicalDevice physical,
                                  std::vector<CooperativeMatrixShape> &out,
                                  std::string &reason) {
  uint32_t count = 0;
  VkResult result = vk().vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(
      physical, &count, nullptr);
  std::vector<VkCooperativeMatrixPropertiesKHR> listed;
  if (result == VK_SUCCESS && count > 0) {
    VkCooperativeMatrixPropertiesKHR empty = {};
    empty.sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
    listed.assign(count, empty);
    result = vk().vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(
        physical, &count, listed.data());
    listed.resize(count);
  }
  if (tk_status status = checkVk(
          result, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", reason))
    return status;
  for (const VkCooperativeMatrixPropertiesKHR &properties : listed) {
    if (properties.scope != VK_SCOPE_SUBGROUP_KHR)
      continue;
    CooperativeMatrixShape shape;
    shape.m = properties.MSize;
    shape.n = properties.NSize;
    shape.k = properties.KSize;
    shape.a = properties.AType;
    shape.b = properties.BType;
    shape.c = properties.CType;
    shape.result = properties.ResultType;
    shape.saturatingAccumulation = properties.saturatingAccumulation;
    out.push_back(shape);
  }
  return TK_SUCCESS;
}

/// Fills `out` for `physical`; any status but TK_SUCCESS means the device
/// is skipped, for the reason in `reason`.
tk_status probeDevice(VkPhysicalDevice physical, uint32_t instanceVersion,
                      Candidate &out, std::string &reason) {
  VkPhysicalDeviceProperties properties = {};
  vk().vkGetPhysicalDeviceProperties(physical, &properties);
  DeviceInfo &info = out.info;
  out.physical = physical;
  info.name = properties.deviceName;
  info.vendorID = properties.vendorID;
  info.deviceID = properties.deviceID;
  info.deviceType = properties.deviceType;
  info.apiVersion = properties.apiVersion;
  std::memcpy(info.pipelineCacheUUID, properties.pipelineCacheUUID,
              VK_UUID_SIZE);
  info.cpuDevice = properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  out.rank = typeRank(properties.deviceType);

  if (featureLevel(properties.apiVersion) < VK_API_VERSION_1_2) {
    reason =
        "Vulkan " + versionString(properties.apiVersion) + ", tk needs 1.2";
    return TK_ERROR_UNSUPPORTED;
  }
  if (info.cpuDevice && !cpuDevicesAllowed()) {
    reason = "a CPU implementation of Vulkan, used only when TK_BACKEND "
             "names vulkan";
    return TK_ERROR_UNSUPPORTED;
  }
  // What the device can be used at: the instance's version caps it.
  uint32_t level = std::min(featureLevel(properties.apiVersion),
                            featureLevel(instanceVersion));
  out.core13 = level >= VK_API_VERSION_1_3;

  std::vector<VkExtensionProperties> extensions;
  if (tk_status status = deviceExtensions(physical, extensions, reason))
    return status;
  out.subgroupSizeControlExtension =
      !out.core13 &&
      hasExtension(extensions, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  out.atomicFloatExtension =
      hasExtension(extensions, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  out.cooperativeMatrixExtension =
      hasExtension(extensions, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) &&
      vk().vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR;
  out.bfloat16Extension =
      out.cooperativeMatrixExtension &&
      hasExtension(extensions, VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
  out.executablePropertiesExtension = hasExtension(
      extensions, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);

  // Features: Vulkan 1.1 and 1.2 core, then subgroup size control and
  // float atomics where the device has them.
  VkPhysicalDeviceVulkan11Features features11 = {};
  features11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  VkPhysicalDeviceVulkan12Features features12 = {};
  features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  VkPhysicalDeviceVulkan13Features features13 = {};
  features13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
  VkPhysicalDeviceSubgroupSizeControlFeatures sizeControl = {};
  sizeControl.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES;
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomicFloat = {};
  atomicFloat.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT;
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR cooperativeMatrix = {};
  cooperativeMatrix.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
  VkPhysicalDeviceShaderBfloat16FeaturesKHR bfloat16 = {};
  bfloat16.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executableInfo = {};
  executableInfo.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR;
  VkPhysicalDeviceFeatures2 features = {};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &features11;
  features11.pNext = &features12;
  void **next = &features12.pNext;
  if (out.core13) {
    *next = &features13;
    next = &features13.pNext;
  } else if (out.subgroupSizeControlExtension) {
    *next = &sizeControl;
    next = &sizeControl.pNext;
  }
  if (out.atomicFloatExtension) {
    *next = &atomicFloat;
    next = &atomicFloat.pNext;
  }
  if (out.cooperativeMatrixExtension) {
    *next = &cooperativeMatrix;
    next = &cooperativeMatrix.pNext;
  }
  if (out.bfloat16Extension) {
    *next = &bfloat16;
    next = &bfloat16.pNext;
  }
  if (out.executablePropertiesExtension) {
    *next = &executableInfo;
    next = &executableInfo.pNext;
  }
  vk().vkGetPhysicalDeviceFeatures2(physical, &features);

  if (!features12.bufferDeviceAddress) {
    reason = "no bufferDeviceAddress (kernels reach memory by address)";
    return TK_ERROR_UNSUPPORTED;
  }
  if (!features.features.shaderInt64) {
    reason = "no shaderInt64 (kernels compute addresses in 64 bits)";
    return TK_ERROR_UNSUPPORTED;
  }
  info.shaderFloat64 = features.features.shaderFloat64;
  info.shaderInt16 = features.features.shaderInt16;
  info.storageBuffer16BitAccess = features11.storageBuffer16BitAccess;
  info.shaderFloat16 = features12.shaderFloat16;
  info.shaderInt8 = features12.shaderInt8;
  info.storageBuffer8BitAccess = features12.storageBuffer8BitAccess;
  info.shaderBufferInt64Atomics = features12.shaderBufferInt64Atomics;
  info.vulkanMemoryModel = features12.vulkanMemoryModel;
  info.vulkanMemoryModelDeviceScope =
      features12.vulkanMemoryModel && features12.vulkanMemoryModelDeviceScope;
  info.shaderSubgroupExtendedTypes = features12.shaderSubgroupExtendedTypes;
  if (out.core13) {
    info.subgroupSizeControl = features13.subgroupSizeControl;
    info.computeFullSubgroups = features13.computeFullSubgroups;
  } else if (out.subgroupSizeControlExtension) {
    info.subgroupSizeControl = sizeControl.subgroupSizeControl;
    info.computeFullSubgroups = sizeControl.computeFullSubgroups;
  }
  info.shaderBufferFloat32AtomicAdd = atomicFloat.shaderBufferFloat32AtomicAdd;
  info.shaderBufferFloat32Atomics = atomicFloat.shaderBufferFloat32Atomics;
  // Enable the extension only for what it brings.
  out.atomicFloatExtension =
      out.atomicFloatExtension &&
      (info.shaderBufferFloat32AtomicAdd || info.shaderBufferFloat32Atomics);
  out.subgroupSizeControlExtension =
      out.subgroupSizeControlExtension && info.subgroupSizeControl;
  out.cooperativeMatrixExtension =
      out.cooperativeMatrixExtension && cooperativeMatrix.cooperativeMatrix;
  if (out.cooperativeMatrixExtension) {
    if (tk_status status = cooperativeMatrixShapes(
            physical, info.cooperativeMatrixShapes, reason))
      return status;
    info.cooperativeMatrix = true;
  }
  // bf16 matrices need the bf16 type too.
  out.bfloat16Extension = out.bfloat16Extension && info.cooperativeMatrix &&
                          bfloat16.shaderBFloat16Type &&
                          bfloat16.shaderBFloat16CooperativeMatrix;
  info.bfloat16CooperativeMatrix = out.bfloat16Extension;
  out.executablePropertiesExtension = out.executablePropertiesExtension &&
                                      executableInfo.pipelineExecutableInfo;
  info.pipelineExecutableInfo = out.executablePropertiesExtension;

  // Properties: subgroups, their size control, the largest allocation, and
  // the compute units where a vendor's extension says how many.
  VkPhysicalDeviceSubgroupProperties subgroup = {};
  subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  VkPhysicalDeviceMaintenance3Properties maintenance3 = {};
  maintenance3.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
  VkPhysicalDeviceSubgroupSizeControlProperties sizeControlProperties = {};
  sizeControlProperties.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES;
  VkPhysicalDeviceProperties2 properties2 = {};
  properties2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV smBuiltins = {};
  smBuiltins.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV;
  VkPhysicalDeviceShaderCorePropertiesAMD amdCores = {};
  amdCores.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD;
  VkPhysicalDeviceShaderCoreBuiltinsPropertiesARM armCores = {};
  armCores.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_BUILTINS_PROPERTIES_ARM;
  properties2.pNext = &subgroup;
  subgroup.pNext = &maintenance3;
  void **nextProperties = &maintenance3.pNext;
  auto chain = [&](auto &properties) {
    *nextProperties = &properties;
    nextProperties = &properties.pNext;
  };
  if (info.subgroupSizeControl)
    chain(sizeControlProperties);
  bool hasSMBuiltins =
      hasExtension(extensions, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
  bool hasAMDCores =
      hasExtension(extensions, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME);
  bool hasARMCores =
      hasExtension(extensions, VK_ARM_SHADER_CORE_BUILTINS_EXTENSION_NAME);
  if (hasSMBuiltins)
    chain(smBuiltins);
  if (hasAMDCores)
    chain(amdCores);
  if (hasARMCores)
    chain(armCores);
  vk().vkGetPhysicalDeviceProperties2(physical, &properties2);
  if (hasSMBuiltins && smBuiltins.shaderSMCount) {
    info.computeUnits = smBuiltins.shaderSMCount;
    info.subgroupsPerComputeUnit = smBuiltins.shaderWarpsPerSM;
    info.registersPerComputeUnit = 65536;
  } else if (hasAMDCores && amdCores.computeUnitsPerShaderArray) {
    info.computeUnits = amdCores.shaderEngineCount *
                        amdCores.shaderArraysPerEngineCount *
                        amdCores.computeUnitsPerShaderArray;
  } else if (hasARMCores && armCores.shaderCoreCount) {
    info.computeUnits = armCores.shaderCoreCount;
  }

  const VkPhysicalDeviceLimits &limits = properties.limits;
  info.subgroupSize = subgroup.subgroupSize;
  info.subgroupOperations =
      (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT)
          ? subgroup.supportedOperations
          : 0;
  if (info.subgroupSizeControl) {
    info.minSubgroupSize = sizeControlProperties.minSubgroupSize;
    info.maxSubgroupSize = sizeControlProperties.maxSubgroupSize;
    info.maxComputeWorkgroupSubgroups =
        sizeControlProperties.maxComputeWorkgroupSubgroups;
    info.requiredSubgroupSizeStages =
        sizeControlProperties.requiredSubgroupSizeStages;
  } else {
    info.minSubgroupSize = info.maxSubgroupSize = subgroup.subgroupSize;
  }
  info.maxComputeSharedMemorySize = limits.maxComputeSharedMemorySize;
  info.maxComputeWorkGroupInvocations = limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    info.maxComputeWorkGroupSize[i] = limits.maxComputeWorkGroupSize[i];
    info.maxComputeWorkGroupCount[i] = limits.maxComputeWorkGroupCount[i];
  }
  info.maxPushConstantsSize = limits.maxPushConstantsSize;
  info.timestampPeriod = limits.timestampPeriod;
  info.maxMemoryAllocationSize = maintenance3.maxMemoryAllocationSize;

  // The queue: compute-capable, preferring one with timestamps (events
  // time with them), then one without graphics (a compute queue shares the
  // engine with no desktop compositor).
  uint32_t familyCount = 0;
  vk().vkGetPhysicalDeviceQueueFamilyProperties(physical, &familyCount,
                                                nullptr);
  std::vector<VkQueueFamilyProperties> families(familyCount);
  vk().vkGetPhysicalDeviceQueueFamilyProperties(physical, &familyCount,
                                                families.data());
  int bestScore = -1;
  for (uint32_t i = 0; i < familyCount; ++i) {
    const VkQueueFamilyProperties &family = families[i];
    if (!(family.queueFlags & VK_QUEUE_COMPUTE_BIT) || family.queueCount == 0)
      continue;
    int score = (family.timestampValidBits > 0 ? 2 : 0) +
                ((family.queueFlags & VK_QUEUE_GRAPHICS_BIT) ? 0 : 1);
    if (score > bestScore) {
      bestScore = score;
      out.queueFamily = i;
      out.queueCount = std::min(family.queueCount, kMaxQueues);
      info.timestampValidBits = family.timestampValidBits;
    }
  }
  if (bestScore < 0) {
    reason = "no compute queue";
    return TK_ERROR_UNSUPPORTED;
  }
  info.timestamps = info.timestampValidBits > 0;

  vk().vkGetPhysicalDeviceMemoryProperties(physical, &out.memory);
  for (uint32_t i = 0; i < out.memory.memoryHeapCount; ++i)
    if (out.memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      info.deviceLocalBytes = std::max<uint64_t>(
          info.deviceLocalBytes, out.memory.memoryHeaps[i].size);
  return TK_SUCCESS;
}

/// Creates the VkDevice of `candidate` with every feature it offers of
/// those tk uses, its queue, pipeline cache and default stream.
tk_status createDevice(const Candidate &candidate, int32_t index,
                       DeviceState &state, std::string &error) {
  const DeviceInfo &info = candidate.info;
  state.info = info;
  state.physical = candidate.physical;
  state.memory = candidate.memory;
  state.queueFamily = candidate.queueFamily;
  state.forceStaging = envFlag("TK_VULKAN_STAGING");

  VkPhysicalDeviceVulkan11Features features11 = {};
  features11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  features11.storageBuffer16BitAccess = info.storageBuffer16BitAccess;
  VkPhysicalDeviceVulkan12Features features12 = {};
  features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  features12.bufferDeviceAddress = VK_TRUE;
  features12.storageBuffer8BitAccess = info.storageBuffer8BitAccess;
  features12.shaderFloat16 = info.shaderFloat16;
  features12.shaderInt8 = info.shaderInt8;
  features12.shaderBufferInt64Atomics = info.shaderBufferInt64Atomics;
  features12.vulkanMemoryModel = info.vulkanMemoryModel;
  features12.vulkanMemoryModelDeviceScope = info.vulkanMemoryModelDeviceScope;
  features12.shaderSubgroupExtendedTypes = info.shaderSubgroupExtendedTypes;
  // A device may take VkPhysicalDeviceVulkan13Features or the subgroup size
  // control struct, not both.
  VkPhysicalDeviceVulkan13Features features13 = {};
  features13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
  features13.subgroupSizeControl = info.subgroupSizeControl;
  features13.computeFullSubgroups = info.computeFullSubgroups;
  VkPhysicalDeviceSubgroupSizeControlFeatures sizeControl = {};
  sizeControl.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES;
  sizeControl.subgroupSizeControl = info.subgroupSizeControl;
  sizeControl.computeFullSubgroups = info.computeFullSubgroups;
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomicFloat = {};
  atomicFloat.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT;
  atomicFloat.shaderBufferFloat32AtomicAdd = info.shaderBufferFloat32AtomicAdd;
  atomicFloat.shaderBufferFloat32Atomics = info.shaderBufferFloat32Atomics;
  VkPhysicalDeviceFeatures2 features = {};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.features.shaderInt64 = VK_TRUE;
  features.features.shaderFloat64 = info.shaderFloat64;
  features.features.shaderInt16 = info.shaderInt16;
  features.pNext = &features11;
  features11.pNext = &features12;
  void **next = &features12.pNext;
  std::vector<const char *> extensions;
  if (candidate.core13) {
    *next = &features13;
    next = &features13.pNext;
  } else if (candidate.subgroupSizeControlExtension) {
    *next = &sizeControl;
    next = &sizeControl.pNext;
    extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  }
  if (candidate.atomicFloatExtension) {
    *next = &atomicFloat;
    next = &atomicFloat.pNext;
    extensions.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  }
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR cooperativeMatrix = {};
  cooperativeMatrix.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
  cooperativeMatrix.cooperativeMatrix = info.cooperativeMatrix;
  if (candidate.cooperativeMatrixExtension) {
    *next = &cooperativeMatrix;
    next = &cooperativeMatrix.pNext;
    extensions.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
  VkPhysicalDeviceShaderBfloat16FeaturesKHR bfloat16 = {};
  bfloat16.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR;
  bfloat16.shaderBFloat16Type = info.bfloat16CooperativeMatrix;
  bfloat16.shaderBFloat16CooperativeMatrix = info.bfloat16CooperativeMatrix;
  if (candidate.bfloat16Extension) {
    *next = &bfloat16;
    next = &bfloat16.pNext;
    extensions.push_back(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
  }
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executableInfo = {};
  executableInfo.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR;
  executableInfo.pipelineExecutableInfo = VK_TRUE;
  if (candidate.executablePropertiesExtension) {
    *next = &executableInfo;
    next = &executableInfo.pNext;
    extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  }

  // Every queue of the family (up to kMaxQueues): tk uses the first, and a
  // program that also drives the device through Vulkan wraps the others.
  std::vector<float> priorities(candidate.queueCount, 1.0f);
  VkDeviceQueueCreateInfo queueInfo = {};
  queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queueInfo.queueFamilyIndex = candidate.queueFamily;
  queueInfo.queueCount = candidate.queueCount;
  queueInfo.pQueuePriorities = priorities.data();
  VkDeviceCreateInfo deviceInfo = {};
  deviceInfo.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  deviceInfo.pNext = &features;
  deviceInfo.queueCreateInfoCount = 1;
  deviceInfo.pQueueCreateInfos = &queueInfo;
  deviceInfo.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  deviceInfo.ppEnabledExtensionNames = extensions.data();
  TK_VK_RETURN_IF_ERROR(vk(), vkCreateDevice, candidate.physical, &deviceInfo,
                        nullptr, &state.device);

  // From here on, a failure destroys what was made, in reverse.
  tk_status status = loadDeviceApi(state.device, state.api, error);
  if (status == TK_SUCCESS) {
    state.info.pipelineExecutableInfo =
        state.info.pipelineExecutableInfo &&
        state.api.vkGetPipelineExecutablePropertiesKHR &&
        state.api.vkGetPipelineExecutableStatisticsKHR;
    for (uint32_t i = 0; i < candidate.queueCount; ++i) {
      state.queues.push_back(std::make_unique<Queue>());
      state.api.vkGetDeviceQueue(state.device, candidate.queueFamily, i,
                                 &state.queues.back()->handle);
    }
    VkPipelineCacheCreateInfo cacheInfo = {};
    cacheInfo.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
    state.pipelineCachePath = pipelineCachePath(candidate.info);
    std::string saved = readPipelineCache(state.pipelineCachePath);
    cacheInfo.initialDataSize = saved.size();
    cacheInfo.pInitialData = saved.empty() ? nullptr : saved.data();
    VkResult created = state.api.vkCreatePipelineCache(
        state.device, &cacheInfo, nullptr, &state.pipelineCache);
    if (created != VK_SUCCESS && !saved.empty()) {
      // Data the driver refuses: start empty, the file is rewritten.
      cacheInfo.initialDataSize = 0;
      cacheInfo.pInitialData = nullptr;
      created = state.api.vkCreatePipelineCache(state.device, &cacheInfo,
                                                nullptr, &state.pipelineCache);
    }
    status = checkVk(created, "vkCreatePipelineCache", error);
  }
  if (status == TK_SUCCESS) {
    status = initStream(state, index, state.defaultStream, error);
    if (status != TK_SUCCESS)
      state.api.vkDestroyPipelineCache(state.device, state.pipelineCache,
                                       nullptr);
  }
  if (status != TK_SUCCESS) {
    auto destroyDevice = reinterpret_cast<PFN_vkDestroyDevice>(
        vk().vkGetDeviceProcAddr(state.device, "vkDestroyDevice"));
    if (destroyDevice)
      destroyDevice(state.device, nullptr);
    state.device = VK_NULL_HANDLE;
    return status;
  }
  return TK_SUCCESS;
}

tk_status initializeOnce(Devices &all, std::string &error) {
  // A GPU's Vulkan driver reaches it through a DRM render node (AMD,
  // Intel, Mesa), NVIDIA's nodes or WSL's /dev/dxg; without one only a CPU
  // implementation could answer, and it counts only when TK_BACKEND names
  // vulkan (cpuDevicesAllowed), which also starts the loader here.
  if (tk::plugin::noDeviceNode("vulkan", tk::plugin::getDeviceNodes("vulkan"),
                               error))
    return TK_ERROR_NO_DEVICE;
  uint32_t instanceVersion = 0;
  if (tk_status status = createInstance(all.instance, instanceVersion, error))
    return status;

  std::vector<VkPhysicalDevice> physicals;
  VkResult result;
  do {
    uint32_t count = 0;
    result = vk().vkEnumeratePhysicalDevices(all.instance, &count, nullptr);
    if (result < 0)
      break;
    physicals.resize(count);
    result =
        vk().vkEnumeratePhysicalDevices(all.instance, &count, physicals.data());
    physicals.resize(count);
  } while (result == VK_INCOMPLETE);
  if (result < 0 || physicals.empty()) {
    if (result < 0)
      checkVk(result, "vkEnumeratePhysicalDevices", error);
    else
      error = "tk-vulkan: the Vulkan loader reports no physical devices (no "
              "Vulkan driver for this machine's hardware is installed)";
    destroyInstance(all.instance);
    all.instance = VK_NULL_HANDLE;
    return TK_ERROR_NO_DEVICE;
  }

  std::vector<Candidate> candidates;
  std::string skipped;
  auto skip = [&skipped](const std::string &name, const std::string &why) {
    skipped += (skipped.empty() ? "" : "; ") + ("'" + name + "': " + why);
  };
  for (VkPhysicalDevice physical : physicals) {
    Candidate candidate;
    std::string reason;
    if (probeDevice(physical, instanceVersion, candidate, reason) !=
        TK_SUCCESS) {
      skip(candidate.info.name, reason);
      continue;
    }
    candidates.push_back(std::move(candidate));
  }
  std::stable_sort(
      candidates.begin(), candidates.end(),
      [](const Candidate &a, const Candidate &b) { return a.rank < b.rank; });

  for (const Candidate &candidate : candidates) {
    auto state = std::make_unique<DeviceState>();
    std::string reason;
    if (createDevice(candidate, static_cast<int32_t>(all.states.size()), *state,
                     reason) != TK_SUCCESS) {
      skip(candidate.info.name, reason);
      continue;
    }
    all.states.push_back(std::move(state));
  }
  if (all.states.empty()) {
    error = "tk-vulkan: no usable Vulkan device (skipped: " + skipped + ")";
    destroyInstance(all.instance);
    all.instance = VK_NULL_HANDLE;
    return TK_ERROR_NO_DEVICE;
  }
  all.count = static_cast<int32_t>(all.states.size());
  return TK_SUCCESS;
}

} // namespace

//===--- Devices ----------------------------------------------------------===//

Devices &detail::devices() {
  static Devices *instance = new Devices();
  return *instance;
}

bool cpuDevicesAllowed() { return tk::plugin::backendNamedByUser("vulkan"); }

tk_status initializeDevices(std::string &error) {
  Devices &all = devices();
  std::call_once(all.initOnce, [&] {
    all.initStatus = initializeOnce(all, all.initError);
    if (all.initStatus != TK_SUCCESS)
      all.count = 0;
  });
  if (all.initStatus != TK_SUCCESS)
    error = all.initError;
  return all.initStatus;
}

int32_t deviceCount() { return devices().count; }

tk_status checkDevice(int32_t device, std::string &error) {
  int32_t count = deviceCount();
  if (count == 0) {
    error = "tk-vulkan: no Vulkan device (initialize did not find one)";
    return TK_ERROR_NO_DEVICE;
  }
  if (device < 0 || device >= count) {
    error = "tk-vulkan: device " + std::to_string(device) +
            " does not exist (there are " + std::to_string(count) + ")";
    return TK_ERROR_NOT_FOUND;
  }
  return TK_SUCCESS;
}

const DeviceInfo &deviceInfo(int32_t device) { return stateOf(device).info; }

VkDevice deviceHandle(int32_t device) { return stateOf(device).device; }

const DeviceApi &deviceApi(int32_t device) { return stateOf(device).api; }

VkPipelineCache devicePipelineCache(int32_t device) {
  return stateOf(device).pipelineCache;
}

tk_status queryDeviceProps(int32_t device, tk_device_props *out,
                           std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  const DeviceInfo &info = deviceInfo(device);
  tk_device_props props;
  std::memset(&props, 0, sizeof(props));
  copyString(props.name, info.name.c_str());
  const char *vendor = "Vulkan";
  switch (info.vendorID) {
  case 0x10DE:
    vendor = "NVIDIA";
    break;
  case 0x1002:
    vendor = "AMD";
    break;
  case 0x8086:
    vendor = "Intel";
    break;
  case VK_VENDOR_ID_MESA:
    vendor = "Mesa";
    break;
  default:
    break;
  }
  copyString(props.vendor, vendor);
  // What code is compiled for: SPIR-V is portable but tk's layouts are
  // made for one subgroup width.
  copyString(props.arch, ("vk-sg" + std::to_string(info.subgroupSize)).c_str());
  copyString(props.backend, "vulkan");
  // Core Vulkan does not say how many compute units a GPU has; NVIDIA's,
  // AMD's and Arm's extensions do (0 elsewhere: unknown). A CPU device runs
  // workgroups on the host's threads. Core Vulkan has no clock or L2 size
  // either, and none of those extensions gives them: they stay 0.
  props.compute_units =
      info.cpuDevice ? static_cast<int32_t>(std::thread::hardware_concurrency())
                     : static_cast<int32_t>(
                           std::min<uint32_t>(info.computeUnits, INT32_MAX));
  props.warp_size = static_cast<int32_t>(info.subgroupSize);
  props.shared_memory_per_block = info.maxComputeSharedMemorySize;
  props.max_threads_per_block = static_cast<int32_t>(
      std::min<uint32_t>(info.maxComputeWorkGroupInvocations, INT32_MAX));
  for (int i = 0; i < 3; ++i)
    props.max_grid[i] = static_cast<int32_t>(
        std::min<uint32_t>(info.maxComputeWorkGroupCount[i], INT32_MAX));
  props.total_memory_bytes = static_cast<int64_t>(
      std::min<uint64_t>(info.deviceLocalBytes, INT64_MAX));

  size_t callerSize = out->struct_size;
  props.struct_size = std::min(callerSize, sizeof(props));
  std::memcpy(out, &props, props.struct_size);
  return TK_SUCCESS;
}

tk_status queryNative(int32_t device, tk_device_native *out,
                      std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  const DeviceState &state = stateOf(device);
  tk_device_native native;
  std::memset(&native, 0, sizeof(native));
  copyString(native.api, "vulkan");
  native.instance = devices().instance;
  native.physical_device = state.physical;
  native.device = state.device;
  native.queue_family = state.queueFamily;
  native.queue_count = static_cast<uint32_t>(state.queues.size());
  native.struct_size = std::min(out->struct_size, sizeof(native));
  std::memcpy(out, &native, native.struct_size);
  return TK_SUCCESS;
}

} // namespace tk::vulkan
