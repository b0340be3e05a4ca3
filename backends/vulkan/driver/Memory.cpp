//===- Memory.cpp - Vulkan memory and copies --------------------*- C++ -*-===//
//
// Allocations are VkBuffers whose device address is the pointer tk hands
// out; a map from address back to buffer lets copies, which Vulkan makes
// between buffers, take those pointers. Copies are synchronous: memcpy where
// the host sees the memory, else through the device's staging buffer on the
// default stream (Queue.cpp). Locks: see DeviceState.h.
//
//===----------------------------------------------------------------------===//

#include "driver/DeviceState.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <mutex>

namespace tk::vulkan {

using namespace detail;

namespace {

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

std::string hexAddress(uint64_t address) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%llx",
                static_cast<unsigned long long>(address));
  return text;
}

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

} // namespace

void detail::releaseAllocation(DeviceState &state, Allocation &allocation) {
  if (allocation.mapped)
    state.api.vkUnmapMemory(state.device, allocation.memory);
  if (allocation.buffer)
    state.api.vkDestroyBuffer(state.device, allocation.buffer, nullptr);
  if (allocation.memory)
    state.api.vkFreeMemory(state.device, allocation.memory, nullptr);
  allocation = Allocation();
}

namespace {

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
      [&](VkCommandBuffer commandBuffer, uint64_t) {
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

/// A buffer of `bytes` that kernels reach by its device `address`:
/// DEVICE_LOCAL where there is such memory, any memory type otherwise.
/// `role` follows the device's name in an error ("" for a tk allocation).
tk_status createAddressedBuffer(DeviceState &state, VkDeviceSize bytes,
                                bool map, const char *role, Allocation &out,
                                uint64_t &address, std::string &error) {
  Allocation allocation;
  if (tk_status status = createAllocation(
          state, bytes, kBufferUsage,
          {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VkMemoryPropertyFlags(0)}, map,
          allocation, error))
    return status;
  VkBufferDeviceAddressInfo addressInfo = {};
  addressInfo.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO;
  addressInfo.buffer = allocation.buffer;
  address = state.api.vkGetBufferDeviceAddress(state.device, &addressInfo);
  if (address == 0) {
    releaseAllocation(state, allocation);
    error = "tk-vulkan: vkGetBufferDeviceAddress returned 0 on " +
            state.info.name + role;
    return TK_ERROR_DEVICE;
  }
  out = allocation;
  return TK_SUCCESS;
}

} // namespace

tk_status detail::createArgumentBuffer(DeviceState &state, Allocation &out,
                                       uint64_t &address, std::string &error) {
  return createAddressedBuffer(state, kArgumentBufferBytes, /*map=*/false,
                               " (an argument buffer)", out, address, error);
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
  uint64_t address = 0;
  if (tk_status status =
          createAddressedBuffer(state, bytes, /*map=*/!state.forceStaging, "",
                                allocation, address, error))
    return status;
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
  tk_status status = waitForDeviceWork(state, error);
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
  // Copies go to tk's own queue, which orders them after tk's earlier work
  // there once submitted (flushOwnStreams), but not after launches on the
  // caller's queues.
  if (tk_status status = drainWrappedStreams(state, error))
    return status;
  if (tk_status status = flushOwnStreams(state, error))
    return status;
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
    if (tk_status status = waitForDeviceWork(state, error))
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

} // namespace tk::vulkan
