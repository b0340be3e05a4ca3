//===- Device.cpp - Vulkan devices, memory, streams and events --*- C++ -*-===//
//
// Device discovery and creation, buffer-device-address memory with its
// address map, the synchronous copies, streams of recycled command buffers,
// and timestamp events.
//
// Locks, always taken in this order: an event's or a stream's mutex, then
// the device's staging mutex (only copies hold it, before the default
// stream's), then its queue mutex. The allocation mutex is never held while
// another is taken.
//
//===----------------------------------------------------------------------===//

#include "driver/Device.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

namespace tk::vulkan {

namespace {

/// Submissions a stream may have in flight; the next waits for the oldest.
/// Bounds the command buffers and fences a stream of launches makes.
constexpr size_t kMaxInFlight = 64;

/// The staging buffer for memory the host cannot map: grown to the largest
/// copy up to kMaxStagingBytes (larger copies go in chunks of that size),
/// never below kMinStagingBytes.
constexpr VkDeviceSize kMaxStagingBytes = VkDeviceSize(16) << 20;
constexpr VkDeviceSize kMinStagingBytes = VkDeviceSize(64) << 10;

/// Usage of every tk allocation: kernels reach it by address, copies by
/// vkCmdCopyBuffer in either direction.
constexpr VkBufferUsageFlags kBufferUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
    VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

/// Writes earlier submissions may have made, and the accesses later ones
/// make: what the barriers around each submission order.
constexpr VkPipelineStageFlags kWorkStages =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kWorkWrites =
    VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
constexpr VkAccessFlags kWorkAccesses =
    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
    VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

/// A buffer and its memory: a tk allocation, or the staging buffer.
struct Allocation {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  /// Where the host sees the memory (HOST_VISIBLE | HOST_COHERENT, mapped
  /// for the allocation's life); NULL when copies need the staging buffer.
  void *mapped = nullptr;
};

/// A command buffer and the fence of the submission that runs it.
struct Submission {
  VkCommandBuffer commandBuffer = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
};

struct Stream {
  int32_t device = 0;
  VkCommandPool pool = VK_NULL_HANDLE;
  /// In submission order. Both lists have room for kMaxInFlight entries
  /// from the start, so moving submissions between them never allocates.
  std::vector<Submission> inFlight;
  /// Finished submissions, reset when taken again.
  std::vector<Submission> idle;
  /// Held while recording and submitting: a command pool is used by one
  /// thread at a time.
  std::mutex mutex;
};

struct Event {
  int32_t device = 0;
  /// One TIMESTAMP query; VK_NULL_HANDLE when the queue has no timestamps.
  VkQueryPool queryPool = VK_NULL_HANDLE;
  /// The event's own command pool, buffer and fence: the fence stays the
  /// event's until the next record, which a stream's recycled fences would
  /// not.
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer commandBuffer = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  bool recorded = false;
  std::mutex mutex;
};

struct DeviceState {
  DeviceInfo info;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory = {};
  VkDevice device = VK_NULL_HANDLE;
  DeviceApi api;
  uint32_t queueFamily = 0;
  VkQueue queue = VK_NULL_HANDLE;
  /// vkQueueSubmit and vkQueueWaitIdle need the queue externally
  /// synchronized; every stream and event of the device shares it.
  std::mutex queueMutex;
  VkPipelineCache pipelineCache = VK_NULL_HANDLE;
  /// Where savePipelineCache writes it (empty: no cache folder).
  std::string pipelineCachePath;
  std::mutex pipelineCacheMutex;
  /// TK_VULKAN_STAGING=1: no allocation is mapped, so that the staging path
  /// can be tested on devices whose memory is all host-visible.
  bool forceStaging = false;
  std::mutex allocationMutex;
  /// By device address; addresses of live buffers never overlap.
  std::map<uint64_t, Allocation> allocations;
  /// Held for a whole staged copy: one staging buffer per device.
  std::mutex stagingMutex;
  Allocation staging;
  Stream defaultStream;
};

struct Devices {
  std::once_flag initOnce;
  tk_status initStatus = TK_SUCCESS;
  std::string initError;
  VkInstance instance = VK_NULL_HANDLE;
  int32_t count = 0;
  std::vector<std::unique_ptr<DeviceState>> states;
};

/// Never destroyed: executables, streams and events the runtime still holds
/// at exit may be released after static destructors ran.
Devices &devices() {
  static Devices *instance = new Devices();
  return *instance;
}

DeviceState &stateOf(int32_t device) { return *devices().states[device]; }

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

std::string hexAddress(uint64_t address) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%llx",
                static_cast<unsigned long long>(address));
  return text;
}

/// Copies `text` into the fixed-size field `out`, always terminated.
template <size_t N> void copyString(char (&out)[N], const char *text) {
  std::strncpy(out, text, N - 1);
  out[N - 1] = '\0';
}

std::string_view trim(std::string_view text) {
  const char *space = " \t\n\r\f\v";
  size_t first = text.find_first_not_of(space);
  if (first == std::string_view::npos)
    return {};
  size_t last = text.find_last_not_of(space);
  return text.substr(first, last - first + 1);
}

bool envFlag(const char *name) {
  const char *value = std::getenv(name);
  return value && *value && std::strcmp(value, "0") != 0;
}

tk_status waitFence(DeviceState &state, VkFence fence, std::string &error) {
  VkResult result;
  do {
    result =
        state.api.vkWaitForFences(state.device, 1, &fence, VK_TRUE, UINT64_MAX);
  } while (result == VK_TIMEOUT); // some drivers cap the timeout
  return checkVk(result, "vkWaitForFences", error);
}

tk_status waitQueueIdle(DeviceState &state, std::string &error) {
  std::lock_guard<std::mutex> lock(state.queueMutex);
  TK_VK_RETURN_IF_ERROR(state.api, vkQueueWaitIdle, state.queue);
  return TK_SUCCESS;
}

tk_status submitToQueue(DeviceState &state, VkCommandBuffer commandBuffer,
                        VkFence fence, std::string &error) {
  VkSubmitInfo info = {};
  info.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  info.commandBufferCount = 1;
  info.pCommandBuffers = &commandBuffer;
  std::lock_guard<std::mutex> lock(state.queueMutex);
  TK_VK_RETURN_IF_ERROR(state.api, vkQueueSubmit, state.queue, 1, &info, fence);
  return TK_SUCCESS;
}

void recordBarrier(const DeviceApi &api, VkCommandBuffer commandBuffer,
                   VkPipelineStageFlags srcStages, VkAccessFlags srcAccess,
                   VkPipelineStageFlags dstStages, VkAccessFlags dstAccess) {
  VkMemoryBarrier barrier = {};
  barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  barrier.srcAccessMask = srcAccess;
  barrier.dstAccessMask = dstAccess;
  api.vkCmdPipelineBarrier(commandBuffer, srcStages, dstStages, 0, 1, &barrier,
                           0, nullptr, 0, nullptr);
}

/// Begins `commandBuffer` (reset beforehand) with the barrier after all
/// earlier submissions' work: a pipeline barrier's first scope is every
/// command earlier in submission order on the queue, not only this buffer's.
tk_status beginWork(DeviceState &state, VkCommandBuffer commandBuffer,
                    std::string &error) {
  VkCommandBufferBeginInfo begin = {};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  TK_VK_RETURN_IF_ERROR(state.api, vkBeginCommandBuffer, commandBuffer, &begin);
  recordBarrier(state.api, commandBuffer, kWorkStages, kWorkWrites, kWorkStages,
                kWorkAccesses);
  return TK_SUCCESS;
}

/// Ends `commandBuffer` with the barrier that makes its writes visible to
/// the host: a fence wait alone does not (its memory dependency covers
/// device accesses only).
tk_status endWork(DeviceState &state, VkCommandBuffer commandBuffer,
                  std::string &error) {
  recordBarrier(state.api, commandBuffer, kWorkStages, kWorkWrites,
                VK_PIPELINE_STAGE_HOST_BIT,
                VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT);
  TK_VK_RETURN_IF_ERROR(state.api, vkEndCommandBuffer, commandBuffer);
  return TK_SUCCESS;
}

//===--- Streams ----------------------------------------------------------===//

tk_status initStream(DeviceState &state, int32_t device, Stream &stream,
                     std::string &error) {
  VkCommandPoolCreateInfo info = {};
  info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  // Command buffers are reset one by one when reused.
  info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  info.queueFamilyIndex = state.queueFamily;
  TK_VK_RETURN_IF_ERROR(state.api, vkCreateCommandPool, state.device, &info,
                        nullptr, &stream.pool);
  stream.device = device;
  stream.inFlight.reserve(kMaxInFlight);
  stream.idle.reserve(kMaxInFlight);
  return TK_SUCCESS;
}

/// Moves the finished submissions at the front of the in-flight list to the
/// idle list. Stops at the first unfinished one: the queue runs submissions
/// in order, and one left over is only recycled a little later.
tk_status recycle(DeviceState &state, Stream &stream, std::string &error) {
  size_t done = 0;
  for (; done < stream.inFlight.size(); ++done) {
    VkResult result =
        state.api.vkGetFenceStatus(state.device, stream.inFlight[done].fence);
    if (result == VK_NOT_READY)
      break;
    if (tk_status status = checkVk(result, "vkGetFenceStatus", error))
      return status;
  }
  if (done == 0)
    return TK_SUCCESS;
  stream.idle.insert(stream.idle.end(), stream.inFlight.begin(),
                     stream.inFlight.begin() + done);
  stream.inFlight.erase(stream.inFlight.begin(),
                        stream.inFlight.begin() + done);
  return TK_SUCCESS;
}

/// Waits for every submission of `stream` and recycles them.
tk_status drain(DeviceState &state, Stream &stream, std::string &error) {
  for (const Submission &submission : stream.inFlight)
    if (tk_status status = waitFence(state, submission.fence, error))
      return status;
  return recycle(state, stream, error);
}

/// A reset command buffer and an unsignaled fence: a finished submission's,
/// or new ones.
tk_status acquire(DeviceState &state, Stream &stream, Submission &out,
                  std::string &error) {
  if (!stream.idle.empty()) {
    out = stream.idle.back();
    stream.idle.pop_back();
    VkResult result = state.api.vkResetFences(state.device, 1, &out.fence);
    if (result == VK_SUCCESS)
      result = state.api.vkResetCommandBuffer(out.commandBuffer, 0);
    if (result != VK_SUCCESS) {
      stream.idle.push_back(out);
      return checkVk(result, "vkResetFences/vkResetCommandBuffer", error);
    }
    return TK_SUCCESS;
  }
  VkCommandBufferAllocateInfo allocate = {};
  allocate.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  allocate.commandPool = stream.pool;
  allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  allocate.commandBufferCount = 1;
  TK_VK_RETURN_IF_ERROR(state.api, vkAllocateCommandBuffers, state.device,
                        &allocate, &out.commandBuffer);
  VkFenceCreateInfo fence = {};
  fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VkResult result =
      state.api.vkCreateFence(state.device, &fence, nullptr, &out.fence);
  if (result != VK_SUCCESS) {
    state.api.vkFreeCommandBuffers(state.device, stream.pool, 1,
                                   &out.commandBuffer);
    return checkVk(result, "vkCreateFence", error);
  }
  return TK_SUCCESS;
}

/// submit() on a stream whose mutex the caller holds; with `wait`, returns
/// once the submission finished.
tk_status submitLocked(DeviceState &state, Stream &stream,
                       const std::function<void(VkCommandBuffer)> &record,
                       bool wait, std::string &error) {
  if (tk_status status = recycle(state, stream, error))
    return status;
  while (stream.inFlight.size() >= kMaxInFlight) {
    if (tk_status status =
            waitFence(state, stream.inFlight.front().fence, error))
      return status;
    if (tk_status status = recycle(state, stream, error))
      return status;
  }
  Submission submission;
  if (tk_status status = acquire(state, stream, submission, error))
    return status;
  tk_status status = beginWork(state, submission.commandBuffer, error);
  if (status == TK_SUCCESS) {
    record(submission.commandBuffer);
    status = endWork(state, submission.commandBuffer, error);
  }
  if (status == TK_SUCCESS)
    status =
        submitToQueue(state, submission.commandBuffer, submission.fence, error);
  if (status != TK_SUCCESS) {
    // Never submitted: reusable once reset, which acquire does.
    stream.idle.push_back(submission);
    return status;
  }
  stream.inFlight.push_back(submission);
  if (!wait)
    return TK_SUCCESS;
  status = waitFence(state, submission.fence, error);
  if (status != TK_SUCCESS)
    return status;
  return recycle(state, stream, error);
}

void releaseStream(DeviceState &state, Stream &stream) {
  for (const std::vector<Submission> *list : {&stream.inFlight, &stream.idle})
    for (const Submission &submission : *list) {
      state.api.vkFreeCommandBuffers(state.device, stream.pool, 1,
                                     &submission.commandBuffer);
      state.api.vkDestroyFence(state.device, submission.fence, nullptr);
    }
  stream.inFlight.clear();
  stream.idle.clear();
  if (stream.pool)
    state.api.vkDestroyCommandPool(state.device, stream.pool, nullptr);
  stream.pool = VK_NULL_HANDLE;
}

/// The stream `handle` names on `device` (NULL: the default stream).
tk_status resolveStream(DeviceState &state, int32_t device, void *handle,
                        Stream *&out, std::string &error) {
  if (!handle) {
    out = &state.defaultStream;
    return TK_SUCCESS;
  }
  out = static_cast<Stream *>(handle);
  if (out->device != device) {
    error = "tk-vulkan: the stream belongs to device " +
            std::to_string(out->device) + ", not device " +
            std::to_string(device);
    return TK_ERROR_INVALID_ARGUMENT;
  }
  return TK_SUCCESS;
}

//===--- Memory -----------------------------------------------------------===//

/// The first memory type allowed by `typeBits` whose flags include one of
/// `tiers`, tried in order; -1 if none. Drivers list types with fewer
/// flags first (the spec asks them to), so the first match is the plainest.
int32_t findMemoryType(const VkPhysicalDeviceMemoryProperties &memory,
                       uint32_t typeBits,
                       std::initializer_list<VkMemoryPropertyFlags> tiers) {
  for (VkMemoryPropertyFlags wanted : tiers)
    for (uint32_t i = 0; i < memory.memoryTypeCount; ++i)
      if ((typeBits & (1u << i)) &&
          (memory.memoryTypes[i].propertyFlags & wanted) == wanted)
        return static_cast<int32_t>(i);
  return -1;
}

void releaseAllocation(DeviceState &state, Allocation &allocation) {
  if (allocation.mapped)
    state.api.vkUnmapMemory(state.device, allocation.memory);
  if (allocation.buffer)
    state.api.vkDestroyBuffer(state.device, allocation.buffer, nullptr);
  if (allocation.memory)
    state.api.vkFreeMemory(state.device, allocation.memory, nullptr);
  allocation = Allocation();
}

/// A buffer of `bytes` with `usage`, bound to memory of the first of
/// `tiers` the buffer can use; mapped when `map` and the memory is
/// HOST_VISIBLE | HOST_COHERENT.
tk_status createAllocation(DeviceState &state, VkDeviceSize bytes,
                           VkBufferUsageFlags usage,
                           std::initializer_list<VkMemoryPropertyFlags> tiers,
                           bool map, Allocation &out, std::string &error) {
  Allocation allocation;
  allocation.size = bytes;
  VkBufferCreateInfo bufferInfo = {};
  bufferInfo.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bufferInfo.size = bytes;
  bufferInfo.usage = usage;
  bufferInfo.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  TK_VK_RETURN_IF_ERROR(state.api, vkCreateBuffer, state.device, &bufferInfo,
                        nullptr, &allocation.buffer);

  VkMemoryRequirements requirements = {};
  state.api.vkGetBufferMemoryRequirements(state.device, allocation.buffer,
                                          &requirements);
  int32_t type =
      findMemoryType(state.memory, requirements.memoryTypeBits, tiers);
  if (type < 0) {
    releaseAllocation(state, allocation);
    error = "tk-vulkan: " + state.info.name +
            " has no memory type for a buffer of " + std::to_string(bytes) +
            " bytes with the properties tk needs";
    return TK_ERROR_UNSUPPORTED;
  }
  const VkMemoryType &memoryType = state.memory.memoryTypes[type];

  VkMemoryAllocateFlagsInfo flags = {};
  flags.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO;
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo memoryInfo = {};
  memoryInfo.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  if (usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT)
    memoryInfo.pNext = &flags;
  memoryInfo.allocationSize = requirements.size;
  memoryInfo.memoryTypeIndex = static_cast<uint32_t>(type);
  VkResult result = state.api.vkAllocateMemory(state.device, &memoryInfo,
                                               nullptr, &allocation.memory);
  if (result != VK_SUCCESS) {
    releaseAllocation(state, allocation);
    tk_status status = checkVk(result, "vkAllocateMemory", error);
    error +=
        " (" + std::to_string(requirements.size) + " bytes of memory type " +
        std::to_string(type) + ", heap " +
        std::to_string(memoryType.heapIndex) + " of " +
        std::to_string(state.memory.memoryHeaps[memoryType.heapIndex].size) +
        " bytes, on " + state.info.name + ")";
    return status;
  }
  result = state.api.vkBindBufferMemory(state.device, allocation.buffer,
                                        allocation.memory, 0);
  if (result != VK_SUCCESS) {
    releaseAllocation(state, allocation);
    return checkVk(result, "vkBindBufferMemory", error);
  }
  constexpr VkMemoryPropertyFlags hostCoherent =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
      VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  if (map && (memoryType.propertyFlags & hostCoherent) == hostCoherent) {
    result = state.api.vkMapMemory(state.device, allocation.memory, 0,
                                   VK_WHOLE_SIZE, 0, &allocation.mapped);
    if (result != VK_SUCCESS) {
      allocation.mapped = nullptr;
      releaseAllocation(state, allocation);
      return checkVk(result, "vkMapMemory", error);
    }
  }
  out = allocation;
  return TK_SUCCESS;
}

/// Finds the allocation holding [address, address + bytes).
tk_status findAllocation(DeviceState &state, int32_t device, const void *where,
                         size_t bytes, const char *role, Allocation &out,
                         VkDeviceSize &offset, std::string &error) {
  auto address = reinterpret_cast<uint64_t>(where);
  {
    std::lock_guard<std::mutex> lock(state.allocationMutex);
    auto next = state.allocations.upper_bound(address);
    if (next != state.allocations.begin()) {
      auto found = std::prev(next);
      VkDeviceSize start = address - found->first;
      // Written so that start + bytes cannot overflow.
      if (start < found->second.size && bytes <= found->second.size - start) {
        out = found->second;
        offset = start;
        return TK_SUCCESS;
      }
    }
  }
  error = std::string("tk-vulkan: the ") + role + " range [" +
          hexAddress(address) + ", +" + std::to_string(bytes) +
          " bytes) is not inside one tk-vulkan allocation of device " +
          std::to_string(device);
  return TK_ERROR_INVALID_ARGUMENT;
}

/// Makes the staging buffer hold at least min(bytes, kMaxStagingBytes).
/// The caller holds the staging mutex.
tk_status ensureStaging(DeviceState &state, size_t bytes, std::string &error) {
  VkDeviceSize wanted = std::min<VkDeviceSize>(bytes, kMaxStagingBytes);
  wanted = std::max(wanted, kMinStagingBytes);
  if (state.staging.buffer && state.staging.size >= wanted)
    return TK_SUCCESS;
  // Not in use: every staged copy waits for its submission.
  releaseAllocation(state, state.staging);
  // Cached memory makes the host's reads of device results fast; coherent
  // memory needs no flushes.
  return createAllocation(state, wanted,
                          VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                              VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                          {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                               VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                               VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                               VK_MEMORY_PROPERTY_HOST_COHERENT_BIT},
                          /*map=*/true, state.staging, error);
}

/// Submits a copy of `bytes` between two buffers on the default stream and
/// waits for it.
tk_status copyBuffers(DeviceState &state, VkBuffer src, VkDeviceSize srcOffset,
                      VkBuffer dst, VkDeviceSize dstOffset, VkDeviceSize bytes,
                      std::string &error) {
  VkBufferCopy region = {srcOffset, dstOffset, bytes};
  const DeviceApi &api = state.api;
  std::lock_guard<std::mutex> lock(state.defaultStream.mutex);
  return submitLocked(
      state, state.defaultStream,
      [&](VkCommandBuffer commandBuffer) {
        api.vkCmdCopyBuffer(commandBuffer, src, dst, 1, &region);
      },
      /*wait=*/true, error);
}

/// A host <-> device copy through the staging buffer, in chunks.
tk_status stagedCopy(DeviceState &state, bool toDevice,
                     const Allocation &allocation, VkDeviceSize offset,
                     void *host, size_t bytes, std::string &error) {
  std::lock_guard<std::mutex> lock(state.stagingMutex);
  if (tk_status status = ensureStaging(state, bytes, error))
    return status;
  auto *hostBytes = static_cast<uint8_t *>(host);
  for (size_t done = 0; done < bytes;) {
    size_t chunk = static_cast<size_t>(
        std::min<VkDeviceSize>(bytes - done, state.staging.size));
    if (toDevice) {
      // Host writes before vkQueueSubmit are visible to the submission.
      std::memcpy(state.staging.mapped, hostBytes + done, chunk);
      if (tk_status status =
              copyBuffers(state, state.staging.buffer, 0, allocation.buffer,
                          offset + done, chunk, error))
        return status;
    } else {
      if (tk_status status =
              copyBuffers(state, allocation.buffer, offset + done,
                          state.staging.buffer, 0, chunk, error))
        return status;
      std::memcpy(hostBytes + done, state.staging.mapped, chunk);
    }
    done += chunk;
  }
  return TK_SUCCESS;
}

//===--- Device discovery -------------------------------------------------===//

/// A physical device that passed the checks, with what it offers (the
/// DeviceInfo's feature flags say "available" until the device is created
/// with all of them).
//===--- The pipeline cache on disk ---------------------------------------===//

/// The file's own header before the driver's data, so that a truncated or
/// damaged file is never handed to the driver (which checks only its own
/// header): magic, data length, FNV-1a hash of the data.
constexpr char kPipelineCacheMagic[8] = {'T', 'K', 'V', 'K',
                                         'P', 'C', '1', '\0'};
/// More than any pipeline cache tk makes: a file this large is not read.
constexpr uint64_t kMaxPipelineCacheBytes = uint64_t(1) << 30;

uint64_t fnv1a(const char *data, size_t size) {
  uint64_t hash = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= static_cast<unsigned char>(data[i]);
    hash *= 1099511628211ull;
  }
  return hash;
}

/// `$TK_CACHE_DIR/vulkan/<uuid>-<vendor>-<device>.pipelines`, the cache
/// folder chosen as the runtime chooses it; empty without HOME either.
std::string pipelineCachePath(const DeviceInfo &info) {
  std::string folder;
  if (const char *dir = std::getenv("TK_CACHE_DIR"); dir && *dir)
    folder = dir;
  else if (const char *home = std::getenv("HOME"); home && *home)
    folder = std::string(home) + "/.cache/tk";
  else
    return "";
  char name[2 * VK_UUID_SIZE + 32];
  int used = 0;
  for (uint8_t byte : info.pipelineCacheUUID)
    used += std::snprintf(name + used, sizeof(name) - used, "%02x", byte);
  std::snprintf(name + used, sizeof(name) - used, "-%04x-%04x.pipelines",
                info.vendorID, info.deviceID);
  return folder + "/vulkan/" + name;
}

/// The driver's data saved at `path`, or empty when there is none or the
/// file is not one savePipelineCache wrote whole.
std::string readPipelineCache(const std::string &path) {
  if (path.empty())
    return "";
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return "";
  std::string data;
  char magic[sizeof(kPipelineCacheMagic)];
  uint64_t length = 0, hash = 0;
  if (std::fread(magic, 1, sizeof(magic), file) == sizeof(magic) &&
      std::memcmp(magic, kPipelineCacheMagic, sizeof(magic)) == 0 &&
      std::fread(&length, sizeof(length), 1, file) == 1 &&
      std::fread(&hash, sizeof(hash), 1, file) == 1 &&
      length <= kMaxPipelineCacheBytes) {
    data.resize(length);
    if (std::fread(data.data(), 1, length, file) != length ||
        std::fgetc(file) != EOF || fnv1a(data.data(), data.size()) != hash)
      data.clear();
  }
  std::fclose(file);
  return data;
}

/// Creates `folder` and its parents (mkdir -p).
bool makeFolders(const std::string &folder) {
  for (size_t slash = 1; slash != std::string::npos;) {
    slash = folder.find('/', slash + 1);
    std::string prefix = folder.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  return true;
}

struct Candidate {
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  DeviceInfo info;
  VkPhysicalDeviceMemoryProperties memory = {};
  uint32_t queueFamily = 0;
  /// Subgroup size control through VkPhysicalDeviceVulkan13Features (1.3
  /// device and instance), else through VK_EXT_subgroup_size_control.
  bool core13 = false;
  bool subgroupSizeControlExtension = false;
  bool atomicFloatExtension = false;
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

  // Properties: subgroups, their size control, the largest allocation.
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
  properties2.pNext = &subgroup;
  subgroup.pNext = &maintenance3;
  if (info.subgroupSizeControl)
    maintenance3.pNext = &sizeControlProperties;
  vk().vkGetPhysicalDeviceProperties2(physical, &properties2);

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

  float priority = 1.0f;
  VkDeviceQueueCreateInfo queueInfo = {};
  queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queueInfo.queueFamilyIndex = candidate.queueFamily;
  queueInfo.queueCount = 1;
  queueInfo.pQueuePriorities = &priority;
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
    state.api.vkGetDeviceQueue(state.device, candidate.queueFamily, 0,
                               &state.queue);
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

//===--- Events -----------------------------------------------------------===//

void releaseEvent(DeviceState &state, Event &event) {
  if (event.queryPool)
    state.api.vkDestroyQueryPool(state.device, event.queryPool, nullptr);
  if (event.fence)
    state.api.vkDestroyFence(state.device, event.fence, nullptr);
  if (event.pool)
    state.api.vkDestroyCommandPool(state.device, event.pool, nullptr);
}

tk_status resolveEvent(int32_t device, void *handle, Event *&out,
                       std::string &error) {
  if (!handle) {
    error = "tk-vulkan: the event is NULL";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  out = static_cast<Event *>(handle);
  if (out->device != device) {
    error = "tk-vulkan: the event belongs to device " +
            std::to_string(out->device) + ", not device " +
            std::to_string(device);
    return TK_ERROR_INVALID_ARGUMENT;
  }
  return TK_SUCCESS;
}

/// The event's timestamp once its record finished; the caller holds the
/// event's mutex.
tk_status readTimestamp(DeviceState &state, Event &event, const char *role,
                        uint64_t &ticks, std::string &error) {
  if (!event.recorded) {
    error = std::string("tk-vulkan: the ") + role + " event was never recorded";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  if (tk_status status = waitFence(state, event.fence, error))
    return status;
  TK_VK_RETURN_IF_ERROR(state.api, vkGetQueryPoolResults, state.device,
                        event.queryPool, 0, 1, sizeof(ticks), &ticks,
                        sizeof(ticks),
                        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  return TK_SUCCESS;
}

} // namespace

//===--- Devices ----------------------------------------------------------===//

bool cpuDevicesAllowed() {
  const char *value = std::getenv("TK_BACKEND");
  if (!value)
    return false;
  std::string_view rest(value);
  while (true) {
    size_t comma = rest.find(',');
    if (trim(rest.substr(0, comma)) == "vulkan")
      return true;
    if (comma == std::string_view::npos)
      return false;
    rest.remove_prefix(comma + 1);
  }
}

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

void savePipelineCache(int32_t device) {
  DeviceState &state = stateOf(device);
  if (state.pipelineCachePath.empty())
    return;
  std::lock_guard<std::mutex> lock(state.pipelineCacheMutex);
  size_t size = 0;
  if (state.api.vkGetPipelineCacheData(state.device, state.pipelineCache, &size,
                                       nullptr) != VK_SUCCESS ||
      size == 0 || size > kMaxPipelineCacheBytes)
    return;
  std::string data(size, '\0');
  if (state.api.vkGetPipelineCacheData(state.device, state.pipelineCache, &size,
                                       data.data()) != VK_SUCCESS)
    return;
  data.resize(size);
  const std::string &path = state.pipelineCachePath;
  if (!makeFolders(path.substr(0, path.rfind('/'))))
    return;
  // Written beside, then renamed over: readers see a whole file or none.
  std::string temporary =
      path + ".tmp-" + std::to_string(static_cast<long>(::getpid()));
  std::FILE *file = std::fopen(temporary.c_str(), "wb");
  if (!file)
    return;
  uint64_t length = data.size(), hash = fnv1a(data.data(), data.size());
  bool written =
      std::fwrite(kPipelineCacheMagic, 1, sizeof(kPipelineCacheMagic), file) ==
          sizeof(kPipelineCacheMagic) &&
      std::fwrite(&length, sizeof(length), 1, file) == 1 &&
      std::fwrite(&hash, sizeof(hash), 1, file) == 1 &&
      std::fwrite(data.data(), 1, data.size(), file) == data.size();
  written = std::fclose(file) == 0 && written;
  if (!written || std::rename(temporary.c_str(), path.c_str()) != 0)
    std::remove(temporary.c_str());
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
  // Vulkan does not say how many compute units a GPU has; a CPU device
  // runs workgroups on the host's threads.
  props.compute_units =
      info.cpuDevice ? static_cast<int32_t>(std::thread::hardware_concurrency())
                     : 0;
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

//===--- Memory -----------------------------------------------------------===//

tk_status allocateMemory(int32_t device, size_t bytes, void **out,
                         std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  if (bytes == 0) {
    error = "tk-vulkan: allocation of zero bytes";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  DeviceState &state = stateOf(device);
  if (state.info.maxMemoryAllocationSize &&
      bytes > state.info.maxMemoryAllocationSize) {
    error = "tk-vulkan: " + std::to_string(bytes) +
            " bytes in one allocation; " + state.info.name +
            " allows at most " +
            std::to_string(state.info.maxMemoryAllocationSize);
    return TK_ERROR_OUT_OF_MEMORY;
  }
  Allocation allocation;
  // DEVICE_LOCAL where there is such memory; any memory type otherwise.
  if (tk_status status = createAllocation(
          state, bytes, kBufferUsage,
          {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VkMemoryPropertyFlags(0)},
          /*map=*/!state.forceStaging, allocation, error))
    return status;
  VkBufferDeviceAddressInfo addressInfo = {};
  addressInfo.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO;
  addressInfo.buffer = allocation.buffer;
  uint64_t address =
      state.api.vkGetBufferDeviceAddress(state.device, &addressInfo);
  if (address == 0) {
    releaseAllocation(state, allocation);
    error =
        "tk-vulkan: vkGetBufferDeviceAddress returned 0 on " + state.info.name;
    return TK_ERROR_DEVICE;
  }
  bool inserted;
  {
    std::lock_guard<std::mutex> lock(state.allocationMutex);
    inserted = state.allocations.emplace(address, allocation).second;
  }
  if (!inserted) {
    // Live buffers never share an address; a driver that says otherwise
    // would make copies reach the wrong buffer.
    releaseAllocation(state, allocation);
    error = "tk-vulkan: " + state.info.name + " gave the new buffer address " +
            hexAddress(address) + ", which a live buffer already has";
    return TK_ERROR_DEVICE;
  }
  *out = reinterpret_cast<void *>(static_cast<uintptr_t>(address));
  return TK_SUCCESS;
}

tk_status freeMemory(int32_t device, void *pointer, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  if (!pointer)
    return TK_SUCCESS;
  DeviceState &state = stateOf(device);
  auto address = reinterpret_cast<uint64_t>(pointer);
  Allocation allocation;
  {
    std::lock_guard<std::mutex> lock(state.allocationMutex);
    auto found = state.allocations.find(address);
    if (found == state.allocations.end()) {
      error = "tk-vulkan: " + hexAddress(address) +
              " is not an allocation of device " + std::to_string(device) +
              " (freed already, or not made by mem_alloc)";
      return TK_ERROR_INVALID_ARGUMENT;
    }
    allocation = found->second;
    state.allocations.erase(found);
  }
  // A buffer may only be destroyed once no submitted work uses it; which
  // launches use it is not known, so wait for all of them, as cuMemFree
  // does.
  tk_status status = waitQueueIdle(state, error);
  releaseAllocation(state, allocation);
  return status;
}

tk_status copyMemory(int32_t device, CopyKind kind, void *dst, const void *src,
                     size_t bytes, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  if (bytes == 0)
    return TK_SUCCESS;
  if (!dst || !src) {
    error = "tk-vulkan: memcpy with a NULL pointer";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  DeviceState &state = stateOf(device);
  Allocation srcAllocation, dstAllocation;
  VkDeviceSize srcOffset = 0, dstOffset = 0;
  switch (kind) {
  case CopyKind::HostToDevice:
  case CopyKind::DeviceToHost: {
    bool toDevice = kind == CopyKind::HostToDevice;
    Allocation &allocation = toDevice ? dstAllocation : srcAllocation;
    VkDeviceSize &offset = toDevice ? dstOffset : srcOffset;
    if (tk_status status = findAllocation(
            state, device, toDevice ? dst : src, bytes,
            toDevice ? "destination" : "source", allocation, offset, error))
      return status;
    void *host = toDevice ? const_cast<void *>(src) : dst;
    // Through the staging buffer, the copy is a submission: ordered after
    // earlier work by its barrier and waited for.
    if (!allocation.mapped)
      return stagedCopy(state, toDevice, allocation, offset, host, bytes,
                        error);
    // Mapped: the host touches the memory directly, so earlier launches
    // (which may read or write it) must have finished; their closing
    // barriers made their writes visible to the host.
    if (tk_status status = waitQueueIdle(state, error))
      return status;
    auto *mapped = static_cast<uint8_t *>(allocation.mapped) + offset;
    if (toDevice)
      std::memcpy(mapped, src, bytes);
    else
      std::memcpy(dst, mapped, bytes);
    return TK_SUCCESS;
  }
  case CopyKind::DeviceToDevice: {
    if (tk_status status = findAllocation(state, device, src, bytes, "source",
                                          srcAllocation, srcOffset, error))
      return status;
    if (tk_status status =
            findAllocation(state, device, dst, bytes, "destination",
                           dstAllocation, dstOffset, error))
      return status;
    if (srcAllocation.buffer == dstAllocation.buffer &&
        srcOffset < dstOffset + bytes && dstOffset < srcOffset + bytes) {
      error = "tk-vulkan: device-to-device copy between overlapping ranges "
              "(vkCmdCopyBuffer does not allow them)";
      return TK_ERROR_INVALID_ARGUMENT;
    }
    return copyBuffers(state, srcAllocation.buffer, srcOffset,
                       dstAllocation.buffer, dstOffset, bytes, error);
  }
  }
  return TK_SUCCESS;
}

//===--- Streams ----------------------------------------------------------===//

tk_status createStream(int32_t device, void **out, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  auto stream = std::make_unique<Stream>();
  if (tk_status status = initStream(stateOf(device), device, *stream, error))
    return status;
  *out = stream.release();
  return TK_SUCCESS;
}

tk_status destroyStream(int32_t device, void *handle, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  if (!handle)
    return TK_SUCCESS; // the default stream lives as long as the device
  DeviceState &state = stateOf(device);
  Stream *stream = nullptr;
  if (tk_status status = resolveStream(state, device, handle, stream, error))
    return status;
  std::unique_ptr<Stream> owned(stream);
  tk_status status;
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    // Pending command buffers and fences must not be destroyed. After a
    // lost device nothing is pending any more, so destruction goes on.
    status = drain(state, *stream, error);
    releaseStream(state, *stream);
  }
  return status;
}

tk_status synchronizeStream(int32_t device, void *handle, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  DeviceState &state = stateOf(device);
  Stream *stream = nullptr;
  if (tk_status status = resolveStream(state, device, handle, stream, error))
    return status;
  std::lock_guard<std::mutex> lock(stream->mutex);
  return drain(state, *stream, error);
}

tk_status synchronizeDevice(int32_t device, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  return waitQueueIdle(stateOf(device), error);
}

tk_status submit(int32_t device, void *handle,
                 const std::function<void(VkCommandBuffer)> &record,
                 std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  DeviceState &state = stateOf(device);
  Stream *stream = nullptr;
  if (tk_status status = resolveStream(state, device, handle, stream, error))
    return status;
  std::lock_guard<std::mutex> lock(stream->mutex);
  return submitLocked(state, *stream, record, /*wait=*/false, error);
}

//===--- Events -----------------------------------------------------------===//

tk_status createEvent(int32_t device, void **out, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  DeviceState &state = stateOf(device);
  auto event = std::make_unique<Event>();
  event->device = device;
  tk_status status = TK_SUCCESS;
  if (state.info.timestamps) {
    VkQueryPoolCreateInfo queryInfo = {};
    queryInfo.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    queryInfo.queryType = VK_QUERY_TYPE_TIMESTAMP;
    queryInfo.queryCount = 1;
    status = checkVk(state.api.vkCreateQueryPool(state.device, &queryInfo,
                                                 nullptr, &event->queryPool),
                     "vkCreateQueryPool", error);
  }
  if (status == TK_SUCCESS) {
    VkCommandPoolCreateInfo poolInfo = {};
    poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    poolInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    poolInfo.queueFamilyIndex = state.queueFamily;
    status = checkVk(state.api.vkCreateCommandPool(state.device, &poolInfo,
                                                   nullptr, &event->pool),
                     "vkCreateCommandPool", error);
  }
  if (status == TK_SUCCESS) {
    VkCommandBufferAllocateInfo allocate = {};
    allocate.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    allocate.commandPool = event->pool;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    status = checkVk(state.api.vkAllocateCommandBuffers(state.device, &allocate,
                                                        &event->commandBuffer),
                     "vkAllocateCommandBuffers", error);
  }
  if (status == TK_SUCCESS) {
    VkFenceCreateInfo fenceInfo = {};
    fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    status = checkVk(state.api.vkCreateFence(state.device, &fenceInfo, nullptr,
                                             &event->fence),
                     "vkCreateFence", error);
  }
  if (status != TK_SUCCESS) {
    releaseEvent(state, *event);
    return status;
  }
  *out = event.release();
  return TK_SUCCESS;
}

tk_status destroyEvent(int32_t device, void *handle, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  if (!handle)
    return TK_SUCCESS;
  DeviceState &state = stateOf(device);
  Event *event = nullptr;
  if (tk_status status = resolveEvent(device, handle, event, error))
    return status;
  std::unique_ptr<Event> owned(event);
  tk_status status = TK_SUCCESS;
  {
    std::lock_guard<std::mutex> lock(event->mutex);
    if (event->recorded)
      status = waitFence(state, event->fence, error);
    releaseEvent(state, *event);
  }
  return status;
}

tk_status recordEvent(int32_t device, void *handle, void *streamHandle,
                      std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  DeviceState &state = stateOf(device);
  Event *event = nullptr;
  if (tk_status status = resolveEvent(device, handle, event, error))
    return status;
  // The stream only has to be the device's: all its streams share the one
  // queue, where the event's submission follows everything submitted so far.
  Stream *stream = nullptr;
  if (tk_status status =
          resolveStream(state, device, streamHandle, stream, error))
    return status;

  std::lock_guard<std::mutex> lock(event->mutex);
  // The command buffer, query and fence are reused: the last record must
  // have finished.
  if (event->recorded) {
    if (tk_status status = waitFence(state, event->fence, error))
      return status;
    event->recorded = false;
  }
  TK_VK_RETURN_IF_ERROR(state.api, vkResetFences, state.device, 1,
                        &event->fence);
  TK_VK_RETURN_IF_ERROR(state.api, vkResetCommandBuffer, event->commandBuffer,
                        0);
  if (tk_status status = beginWork(state, event->commandBuffer, error))
    return status;
  if (event->queryPool) {
    state.api.vkCmdResetQueryPool(event->commandBuffer, event->queryPool, 0, 1);
    // Bottom of pipe: written once every earlier command on the queue has
    // finished.
    state.api.vkCmdWriteTimestamp(event->commandBuffer,
                                  VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                                  event->queryPool, 0);
  }
  if (tk_status status = endWork(state, event->commandBuffer, error))
    return status;
  if (tk_status status =
          submitToQueue(state, event->commandBuffer, event->fence, error))
    return status;
  event->recorded = true;
  return TK_SUCCESS;
}

tk_status synchronizeEvent(int32_t device, void *handle, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  Event *event = nullptr;
  if (tk_status status = resolveEvent(device, handle, event, error))
    return status;
  std::lock_guard<std::mutex> lock(event->mutex);
  if (!event->recorded)
    return TK_SUCCESS; // nothing to wait for, as with a CUDA event
  // A fence signal covers every command submitted before it on the queue.
  return waitFence(stateOf(device), event->fence, error);
}

tk_status eventElapsedMs(int32_t device, void *startHandle, void *endHandle,
                         float *out, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  DeviceState &state = stateOf(device);
  Event *start = nullptr, *end = nullptr;
  if (tk_status status = resolveEvent(device, startHandle, start, error))
    return status;
  if (tk_status status = resolveEvent(device, endHandle, end, error))
    return status;
  if (!state.info.timestamps) {
    error = "tk-vulkan: the compute queue of " + state.info.name +
            " has no timestamps (timestampValidBits is 0): events cannot "
            "be timed";
    return TK_ERROR_UNSUPPORTED;
  }
  // One event at a time: two threads timing (a, b) and (b, a) cannot
  // deadlock.
  uint64_t startTicks = 0, endTicks = 0;
  {
    std::lock_guard<std::mutex> lock(start->mutex);
    if (tk_status status =
            readTimestamp(state, *start, "start", startTicks, error))
      return status;
  }
  {
    std::lock_guard<std::mutex> lock(end->mutex);
    if (tk_status status = readTimestamp(state, *end, "end", endTicks, error))
      return status;
  }
  // The counter has timestampValidBits bits and wraps: the difference,
  // modulo 2^bits, read as a signed number (end may precede start).
  uint32_t bits = state.info.timestampValidBits;
  int64_t ticks;
  if (bits >= 64) {
    ticks = static_cast<int64_t>(endTicks - startTicks);
  } else {
    uint64_t modulus = uint64_t(1) << bits;
    uint64_t difference = (endTicks - startTicks) & (modulus - 1);
    ticks = difference >= modulus / 2 ? static_cast<int64_t>(difference) -
                                            static_cast<int64_t>(modulus)
                                      : static_cast<int64_t>(difference);
  }
  *out = static_cast<float>(static_cast<double>(ticks) *
                            state.info.timestampPeriod / 1e6);
  return TK_SUCCESS;
}

} // namespace tk::vulkan
