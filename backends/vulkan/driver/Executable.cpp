//===- Executable.cpp - a loaded Vulkan compute kernel ----------*- C++ -*-===//
//
// SPIR-V inspection (the entry point and its workgroup size), the checks of
// the launch shape against the device, pipeline creation, and the launch:
// push constants and a dispatch in one submission.
//
//===----------------------------------------------------------------------===//

#include "driver/Executable.h"
#include "driver/Device.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tk::vulkan {

namespace {

static_assert(sizeof(void *) == 8,
              "device addresses are 64 bits: tk-vulkan needs a 64-bit host");

constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kOpExecutionMode = 16;
constexpr uint32_t kOpFunction = 54;
constexpr uint32_t kExecutionModelGLCompute = 5;
constexpr uint32_t kExecutionModeLocalSize = 17;

/// What loading needs to know of the SPIR-V module.
struct SpirvEntry {
  bool found = false;
  /// The entry's LocalSize execution mode; unknown when it has none (its
  /// size may come from specialization constants, LocalSizeId).
  bool localSizeKnown = false;
  uint32_t localSize[3] = {0, 0, 0};
  /// Every GLCompute entry point, for the message when `entry` is not one.
  std::string computeEntries;
};

/// A SPIR-V literal string: UTF-8 bytes packed four per word, the first in
/// the lowest-order byte, NUL-terminated.
std::string literalString(const uint32_t *words, size_t count) {
  std::string text;
  for (size_t i = 0; i < count; ++i)
    for (int byte = 0; byte < 4; ++byte) {
      char c = static_cast<char>((words[i] >> (8 * byte)) & 0xFF);
      if (c == '\0')
        return text;
      text.push_back(c);
    }
  return text;
}

/// Walks the module's instructions up to the first function (entry points
/// and execution modes come before functions in every valid module),
/// checking that each stays inside the module: a driver given a truncated
/// module may crash rather than report.
tk_status inspectSpirv(const uint32_t *words, size_t count,
                       const std::string &entry, SpirvEntry &out,
                       std::string &error) {
  if (!words || count < 5) {
    error = "tk-vulkan: the SPIR-V module is " + std::to_string(count) +
            " words long; a module has at least its 5-word header";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  if (words[0] != kSpirvMagic) {
    char magic[16];
    std::snprintf(magic, sizeof(magic), "0x%08x", words[0]);
    error = std::string("tk-vulkan: not a SPIR-V module in host byte order "
                        "(magic number ") +
            magic + ", expected 0x07230203)";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  uint32_t entryId = 0;
  bool haveEntryId = false;
  for (size_t at = 5; at < count;) {
    uint32_t opcode = words[at] & 0xFFFF;
    uint32_t length = words[at] >> 16;
    if (length == 0 || length > count - at) {
      error = "tk-vulkan: malformed SPIR-V: the instruction at word " +
              std::to_string(at) + " has length " + std::to_string(length) +
              " (the module has " + std::to_string(count) + " words)";
      return TK_ERROR_INVALID_ARGUMENT;
    }
    const uint32_t *operands = words + at + 1;
    size_t operandCount = length - 1;
    if (opcode == kOpFunction)
      break;
    if (opcode == kOpEntryPoint && operandCount >= 3 &&
        operands[0] == kExecutionModelGLCompute) {
      std::string name = literalString(operands + 2, operandCount - 2);
      out.computeEntries +=
          (out.computeEntries.empty() ? "'" : ", '") + name + "'";
      if (name == entry && !haveEntryId) {
        entryId = operands[1];
        haveEntryId = true;
      }
    } else if (opcode == kOpExecutionMode && operandCount >= 5 && haveEntryId &&
               operands[0] == entryId &&
               operands[1] == kExecutionModeLocalSize) {
      out.localSizeKnown = true;
      for (int i = 0; i < 3; ++i)
        out.localSize[i] = operands[2 + i];
    }
    at += length;
  }
  out.found = haveEntryId;
  if (!out.found) {
    error = "tk-vulkan: the SPIR-V module has no compute entry point '" +
            entry + "' (it has " +
            (out.computeEntries.empty() ? std::string("none")
                                        : out.computeEntries) +
            ")";
    return TK_ERROR_NOT_FOUND;
  }
  return TK_SUCCESS;
}

bool isPowerOfTwo(uint32_t value) {
  return value && (value & (value - 1)) == 0;
}

/// Bytes an argument of `type` takes in the push-constant block; 0 for a
/// type tk-vulkan does not know.
uint32_t argumentBytes(tk_plugin_arg_type type) {
  switch (type) {
  case TK_PLUGIN_ARG_PTR:
  case TK_PLUGIN_ARG_I64:
  case TK_PLUGIN_ARG_F64:
    return 8;
  case TK_PLUGIN_ARG_I32:
  case TK_PLUGIN_ARG_F32:
    return 4;
  }
  return 0;
}

std::string triple(uint32_t x, uint32_t y, uint32_t z) {
  return "(" + std::to_string(x) + ", " + std::to_string(y) + ", " +
         std::to_string(z) + ")";
}

/// The checks of loadExecutable that need no Vulkan call.
tk_status checkShape(const DeviceInfo &info, const std::string &entry,
                     const SpirvEntry &spirv, uint32_t threadsPerBlock,
                     uint32_t sharedMemoryBytes,
                     const std::vector<uint32_t> &argOffsets,
                     uint32_t pushConstantBytes, uint32_t argumentBufferBytes,
                     std::string &error) {
  const std::string kernel = "tk-vulkan: kernel '" + entry + "'";
  if (threadsPerBlock == 0) {
    error = kernel + " has a workgroup of 0 threads";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  if (threadsPerBlock > info.maxComputeWorkGroupInvocations) {
    error = kernel + " has workgroups of " + std::to_string(threadsPerBlock) +
            " threads; " + info.name + " allows at most " +
            std::to_string(info.maxComputeWorkGroupInvocations) +
            " (compile with fewer warps)";
    return TK_ERROR_UNSUPPORTED;
  }
  if (spirv.localSizeKnown) {
    const uint32_t *size = spirv.localSize;
    if (uint64_t(size[0]) * size[1] * size[2] != threadsPerBlock) {
      error = kernel + " declares a workgroup of " +
              triple(size[0], size[1], size[2]) + " threads, not the " +
              std::to_string(threadsPerBlock) + " it was compiled for";
      return TK_ERROR_INVALID_ARGUMENT;
    }
    for (int i = 0; i < 3; ++i)
      if (size[i] > info.maxComputeWorkGroupSize[i]) {
        error = kernel + " has a workgroup of " +
                triple(size[0], size[1], size[2]) + "; " + info.name +
                " allows at most " +
                triple(info.maxComputeWorkGroupSize[0],
                       info.maxComputeWorkGroupSize[1],
                       info.maxComputeWorkGroupSize[2]);
        return TK_ERROR_UNSUPPORTED;
      }
  }
  if (sharedMemoryBytes > info.maxComputeSharedMemorySize) {
    error = kernel + " needs " + std::to_string(sharedMemoryBytes) +
            " bytes of shared memory per workgroup; " + info.name +
            " allows at most " +
            std::to_string(info.maxComputeSharedMemorySize) +
            " (use smaller tiles)";
    return TK_ERROR_UNSUPPORTED;
  }
  if (pushConstantBytes > kMaxPushConstantBytes ||
      pushConstantBytes > info.maxPushConstantsSize) {
    error = kernel + " takes " + std::to_string(pushConstantBytes) +
            " bytes of arguments (push constants); " + info.name +
            " allows at most " + std::to_string(info.maxPushConstantsSize) +
            " and tk-vulkan at most " + std::to_string(kMaxPushConstantBytes);
    return TK_ERROR_UNSUPPORTED;
  }
  if (pushConstantBytes % 4 != 0) {
    error = kernel + " has a push-constant block of " +
            std::to_string(pushConstantBytes) +
            " bytes; Vulkan needs a multiple of 4";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  if (argumentBufferBytes &&
      (pushConstantBytes != 8 || argumentBufferBytes % 4 != 0 ||
       argumentBufferBytes > kArgumentBufferBytes)) {
    error = kernel + " has an argument buffer of " +
            std::to_string(argumentBufferBytes) + " bytes behind " +
            std::to_string(pushConstantBytes) +
            " bytes of push constants; tk-vulkan takes a multiple of 4 up "
            "to " +
            std::to_string(kArgumentBufferBytes) + " behind an 8-byte address";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  uint32_t blockBytes =
      argumentBufferBytes ? argumentBufferBytes : pushConstantBytes;
  for (size_t i = 0; i < argOffsets.size(); ++i)
    // Every argument takes at least 4 bytes, 4-aligned; the exact size is
    // checked at launch, once the types are known.
    if (argOffsets[i] % 4 != 0 || uint64_t(argOffsets[i]) + 4 > blockBytes) {
      error = kernel + ": argument " + std::to_string(i) + " at offset " +
              std::to_string(argOffsets[i]) +
              " is misaligned or outside the argument block of " +
              std::to_string(blockBytes) + " bytes";
      return TK_ERROR_INVALID_ARGUMENT;
    }
  return TK_SUCCESS;
}

} // namespace

Executable::~Executable() {
  if (!shaderModule && !pipelineLayout && !pipeline)
    return;
  const DeviceApi &api = deviceApi(device);
  VkDevice handle = deviceHandle(device);
  if (pipeline) {
    // Destroying a pipeline that pending work uses is undefined; a failure
    // to wait has no one to report to (the device is lost then, and nothing
    // is pending any more).
    std::string ignored;
    synchronizeDevice(device, ignored);
    api.vkDestroyPipeline(handle, pipeline, nullptr);
  }
  if (pipelineLayout)
    api.vkDestroyPipelineLayout(handle, pipelineLayout, nullptr);
  if (shaderModule)
    api.vkDestroyShaderModule(handle, shaderModule, nullptr);
}

namespace {

/// A statistic's value as text.
std::string statisticValue(const VkPipelineExecutableStatisticKHR &statistic) {
  switch (statistic.format) {
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
    return statistic.value.b32 ? "true" : "false";
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
    return std::to_string(statistic.value.i64);
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
    return std::to_string(statistic.value.u64);
  case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
    return std::to_string(statistic.value.f64);
  default:
    return "?";
  }
}

/// Reads the compute executable's statistics into `executable`: each as
/// text, and the registers a thread from the one NVIDIA's driver calls
/// "Register Count". Statistics are diagnostics: a driver that gives none
/// leaves them empty, and TK_VULKAN_STATISTICS=1 prints them to stderr.
void readStatistics(const DeviceApi &api, VkDevice device,
                    Executable &executable) {
  VkPipelineInfoKHR pipeline = {};
  pipeline.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR;
  pipeline.pipeline = executable.pipeline;
  uint32_t count = 0;
  if (api.vkGetPipelineExecutablePropertiesKHR(device, &pipeline, &count,
                                               nullptr) != VK_SUCCESS ||
      count == 0)
    return;
  VkPipelineExecutableInfoKHR which = {};
  which.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR;
  which.pipeline = executable.pipeline;
  which.executableIndex = 0; // a compute pipeline's one stage
  uint32_t statisticCount = 0;
  if (api.vkGetPipelineExecutableStatisticsKHR(device, &which, &statisticCount,
                                               nullptr) != VK_SUCCESS)
    return;
  std::vector<VkPipelineExecutableStatisticKHR> statistics(statisticCount);
  for (VkPipelineExecutableStatisticKHR &statistic : statistics)
    statistic.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
  VkResult result = api.vkGetPipelineExecutableStatisticsKHR(
      device, &which, &statisticCount, statistics.data());
  if (result != VK_SUCCESS && result != VK_INCOMPLETE)
    return;
  statistics.resize(statisticCount);
  for (const VkPipelineExecutableStatisticKHR &statistic : statistics) {
    std::string name = statistic.name;
    executable.statistics.push_back(name + ": " + statisticValue(statistic));
    if (name == "Register Count" &&
        (statistic.format ==
             VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR ||
         statistic.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR))
      executable.registersPerThread = static_cast<uint32_t>(
          std::clamp<int64_t>(statistic.value.i64, 0, 1024));
  }
  if (const char *print = std::getenv("TK_VULKAN_STATISTICS");
      print && std::string(print) == "1") {
    std::string line = "tk-vulkan: " + executable.entry + ":";
    for (const std::string &statistic : executable.statistics)
      line += " " + statistic + ";";
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

} // namespace

tk_status loadExecutable(int32_t device, const uint32_t *spirv, size_t words,
                         const std::string &entry, uint32_t threadsPerBlock,
                         uint32_t sharedMemoryBytes, uint32_t subgroupSize,
                         const std::vector<uint32_t> &argOffsets,
                         uint32_t pushConstantBytes,
                         uint32_t argumentBufferBytes,
                         std::unique_ptr<Executable> &out, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  const DeviceInfo &info = deviceInfo(device);
  SpirvEntry entryPoint;
  if (tk_status status = inspectSpirv(spirv, words, entry, entryPoint, error))
    return status;
  if (tk_status status = checkShape(
          info, entry, entryPoint, threadsPerBlock, sharedMemoryBytes,
          argOffsets, pushConstantBytes, argumentBufferBytes, error))
    return status;

  // The subgroup width: the code's layouts assume one. Required of the
  // pipeline where the device lets tk choose (a driver may otherwise pick
  // another width per pipeline, as Intel's and AMD's do), else it must be
  // the width the device always uses.
  bool requireSize = false;
  if (subgroupSize != 0) {
    requireSize =
        info.subgroupSizeControl &&
        (info.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
        isPowerOfTwo(subgroupSize) && subgroupSize >= info.minSubgroupSize &&
        subgroupSize <= info.maxSubgroupSize;
    if (!requireSize && subgroupSize != info.subgroupSize) {
      error = "tk-vulkan: kernel '" + entry +
              "' was compiled for subgroups of " +
              std::to_string(subgroupSize) + ", device has " +
              std::to_string(info.subgroupSize);
      if (info.subgroupSizeControl)
        error += " (and can run " + std::to_string(info.minSubgroupSize) +
                 " to " + std::to_string(info.maxSubgroupSize) + ")";
      return TK_ERROR_UNSUPPORTED;
    }
    if (requireSize && info.maxComputeWorkgroupSubgroups &&
        threadsPerBlock >
            uint64_t(subgroupSize) * info.maxComputeWorkgroupSubgroups) {
      error = "tk-vulkan: kernel '" + entry + "' has workgroups of " +
              std::to_string(threadsPerBlock / subgroupSize) +
              " subgroups of " + std::to_string(subgroupSize) + "; " +
              info.name + " allows at most " +
              std::to_string(info.maxComputeWorkgroupSubgroups);
      return TK_ERROR_UNSUPPORTED;
    }
  }

  const DeviceApi &api = deviceApi(device);
  VkDevice handle = deviceHandle(device);
  auto executable = std::make_unique<Executable>();
  executable->device = device;
  executable->entry = entry;
  executable->threadsPerBlock = threadsPerBlock;
  executable->sharedMemoryBytes = sharedMemoryBytes;
  executable->subgroupSize = requireSize ? subgroupSize : 0;
  executable->pushConstantBytes = pushConstantBytes;
  executable->argumentBufferBytes = argumentBufferBytes;
  executable->argOffsets = argOffsets;
  // From here on, the executable's destructor frees what a failure leaves.

  VkShaderModuleCreateInfo moduleInfo = {};
  moduleInfo.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  moduleInfo.codeSize = words * sizeof(uint32_t);
  moduleInfo.pCode = spirv;
  TK_VK_RETURN_IF_ERROR(api, vkCreateShaderModule, handle, &moduleInfo, nullptr,
                        &executable->shaderModule);

  VkPushConstantRange range = {};
  range.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  range.offset = 0;
  range.size = pushConstantBytes;
  VkPipelineLayoutCreateInfo layoutInfo = {};
  layoutInfo.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  layoutInfo.pushConstantRangeCount = pushConstantBytes ? 1 : 0;
  layoutInfo.pPushConstantRanges = pushConstantBytes ? &range : nullptr;
  TK_VK_RETURN_IF_ERROR(api, vkCreatePipelineLayout, handle, &layoutInfo,
                        nullptr, &executable->pipelineLayout);

  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo requiredSize = {};
  requiredSize.sType =
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO;
  requiredSize.requiredSubgroupSize = subgroupSize;
  VkComputePipelineCreateInfo pipelineInfo = {};
  pipelineInfo.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  pipelineInfo.layout = executable->pipelineLayout;
  pipelineInfo.basePipelineIndex = -1;
  VkPipelineShaderStageCreateInfo &stage = pipelineInfo.stage;
  stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  stage.module = executable->shaderModule;
  stage.pName = executable->entry.c_str();
  if (requireSize) {
    stage.pNext = &requiredSize;
    // Full subgroups: no subgroup of a workgroup is partly empty, which
    // layouts that give each lane a fixed part of a tile rely on. Allowed
    // only when the workgroup's x size is a multiple of the width.
    if (info.computeFullSubgroups && entryPoint.localSizeKnown &&
        entryPoint.localSize[0] % subgroupSize == 0)
      stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  }
  if (info.pipelineExecutableInfo)
    pipelineInfo.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  VkResult result = api.vkCreateComputePipelines(
      handle, devicePipelineCache(device), 1, &pipelineInfo, nullptr,
      &executable->pipeline);
  if (result != VK_SUCCESS) {
    executable->pipeline = VK_NULL_HANDLE;
    tk_status status = checkVk(result, "vkCreateComputePipelines", error);
    error += " (kernel '" + entry + "' on " + info.name + ")";
    return status;
  }
  // The pipeline holds what it needs of the module.
  api.vkDestroyShaderModule(handle, executable->shaderModule, nullptr);
  executable->shaderModule = VK_NULL_HANDLE;
  if (info.pipelineExecutableInfo)
    readStatistics(api, handle, *executable);
  savePipelineCache(device);
  out = std::move(executable);
  return TK_SUCCESS;
}

tk_status executableOccupancy(const Executable &executable, int32_t &out,
                              std::string &error) {
  out = 0;
  if (tk_status status = checkDevice(executable.device, error))
    return status;
  const DeviceInfo &info = deviceInfo(executable.device);
  uint32_t width =
      executable.subgroupSize ? executable.subgroupSize : info.subgroupSize;
  if (!info.subgroupsPerComputeUnit || !info.registersPerComputeUnit ||
      !executable.registersPerThread || !width)
    return TK_SUCCESS;
  // Vulkan gives no unit's shared memory, only a workgroup's most (48 KB
  // of the H100's 228): that bound errs low.
  out = workgroupsPerComputeUnit(
      info.subgroupsPerComputeUnit, info.registersPerComputeUnit,
      info.maxComputeSharedMemorySize, width, executable.threadsPerBlock,
      executable.registersPerThread, executable.sharedMemoryBytes);
  return TK_SUCCESS;
}

tk_status launchExecutable(const Executable &executable, const int32_t grid[3],
                           void *const *args, void *stream,
                           std::string &error) {
  if (tk_status status = checkDevice(executable.device, error))
    return status;
  const DeviceInfo &info = deviceInfo(executable.device);
  for (int i = 0; i < 3; ++i)
    if (grid[i] < 1 ||
        static_cast<uint32_t>(grid[i]) > info.maxComputeWorkGroupCount[i]) {
      error =
          "tk-vulkan: grid " +
          triple(static_cast<uint32_t>(grid[0]), static_cast<uint32_t>(grid[1]),
                 static_cast<uint32_t>(grid[2])) +
          " is outside 1 to " +
          triple(info.maxComputeWorkGroupCount[0],
                 info.maxComputeWorkGroupCount[1],
                 info.maxComputeWorkGroupCount[2]) +
          " workgroups, the most " + info.name + " dispatches";
      return TK_ERROR_INVALID_ARGUMENT;
    }
  size_t count = executable.argTypes.size();
  if (count != executable.argOffsets.size()) {
    error = "tk-vulkan: kernel '" + executable.entry + "' has " +
            std::to_string(executable.argOffsets.size()) +
            " argument offsets but " + std::to_string(count) +
            " argument types";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  if (count && !args) {
    error = "tk-vulkan: launch of kernel '" + executable.entry +
            "' without arguments";
    return TK_ERROR_INVALID_ARGUMENT;
  }

  // The argument block: the push constants themselves, or the argument
  // buffer's bytes (the push constants are then its address, filled in as
  // the submission records).
  uint32_t blockBytes = executable.argumentBufferBytes
                            ? executable.argumentBufferBytes
                            : executable.pushConstantBytes;
  std::array<uint8_t, kArgumentBufferBytes> block;
  static_assert(kArgumentBufferBytes >= kMaxPushConstantBytes);
  std::memset(block.data(), 0, blockBytes);
  for (size_t i = 0; i < count; ++i) {
    uint32_t bytes = argumentBytes(executable.argTypes[i]);
    uint32_t offset = executable.argOffsets[i];
    if (bytes == 0 || !args[i] || uint64_t(offset) + bytes > blockBytes) {
      error = "tk-vulkan: argument " + std::to_string(i) + " of kernel '" +
              executable.entry + "' (type " +
              std::to_string(static_cast<int>(executable.argTypes[i])) +
              ", offset " + std::to_string(offset) +
              (args[i] ? "" : ", NULL value") +
              ") does not fit its argument block of " +
              std::to_string(blockBytes) + " bytes";
      return TK_ERROR_INVALID_ARGUMENT;
    }
    std::memcpy(block.data() + offset, args[i], bytes);
  }

  // Everything the recording needs, captured by one reference: the
  // std::function then holds the lambda in place, without allocating.
  struct Recording {
    const DeviceApi &api;
    const Executable &executable;
    const uint8_t *constants;
    const int32_t *grid;
  } recording{deviceApi(executable.device), executable, block.data(), grid};
  return submit(
      executable.device, stream,
      [&recording](VkCommandBuffer commandBuffer, uint64_t argumentAddress) {
        const DeviceApi &api = recording.api;
        const Executable &kernel = recording.executable;
        api.vkCmdBindPipeline(commandBuffer, VK_PIPELINE_BIND_POINT_COMPUTE,
                              kernel.pipeline);
        if (kernel.argumentBufferBytes)
          api.vkCmdPushConstants(commandBuffer, kernel.pipelineLayout,
                                 VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                 sizeof(argumentAddress), &argumentAddress);
        else if (kernel.pushConstantBytes)
          api.vkCmdPushConstants(commandBuffer, kernel.pipelineLayout,
                                 VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                 kernel.pushConstantBytes, recording.constants);
        api.vkCmdDispatch(commandBuffer,
                          static_cast<uint32_t>(recording.grid[0]),
                          static_cast<uint32_t>(recording.grid[1]),
                          static_cast<uint32_t>(recording.grid[2]));
      },
      error, executable.argumentBufferBytes ? block.data() : nullptr,
      executable.argumentBufferBytes);
}

} // namespace tk::vulkan
