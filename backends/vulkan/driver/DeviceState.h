//===- DeviceState.h - the driver's per-device state ------------*- C++ -*-===//
//
// Private to driver/: the state behind Device.h's handles, which several
// files of the driver share (Device.cpp creates it, Memory.cpp allocates and
// copies, Queue.cpp submits, PipelineCache.cpp saves the pipeline cache),
// and the few helpers one of those files provides to another. They are in
// tk::vulkan::detail, not an anonymous namespace, because several files use
// them; nothing outside driver/ includes this header.
//
// Locks, always taken in this order: the device's staging mutex (held for
// a whole staged copy, which submits on the default stream), then the
// wrapped-stream or the own-stream list's mutex, then an event's mutex, then
// a stream's mutex, then a queue's mutex. The allocation mutex is never held
// while another is taken.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_VULKAN_DRIVER_DEVICESTATE_H_
#define TK_BACKENDS_VULKAN_DRIVER_DEVICESTATE_H_

#include "driver/Device.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tk::vulkan::detail {

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
  /// The kernel arguments its launch reads (kArgumentBufferBytes), made
  /// the first time a launch's arguments do not fit the push constants.
  Allocation arguments;
  uint64_t argumentAddress = 0;
};

/// A queue of the device's queue family and the mutex its submissions
/// take (vkQueueSubmit and vkQueueWaitIdle need a queue externally
/// synchronized).
struct Queue {
  VkQueue handle = VK_NULL_HANDLE;
  std::mutex mutex;
};

struct Event;

struct Stream {
  int32_t device = 0;
  /// Where its submissions go: the device's own queue, or for a wrapped
  /// stream the caller's queue of the device.
  Queue *queue = nullptr;
  bool wrapped = false;
  VkCommandPool pool = VK_NULL_HANDLE;
  /// In submission order. Both lists have room for kMaxInFlight entries
  /// from the start, so moving submissions between them never allocates.
  std::vector<Submission> inFlight;
  /// Finished submissions, reset when taken again.
  std::vector<Submission> idle;
  /// Whether `open` is being recorded: begun, not yet submitted. A stream
  /// of tk's own queue gathers launches and event timestamps there while
  /// its earlier submissions run, and submits them as one (Queue.cpp says
  /// when); a wrapped stream submits each at once.
  bool recording = false;
  Submission open;
  /// The launches and copies recorded into `open`.
  uint32_t openCommands = 0;
  /// The bytes of open.arguments its launches' argument blocks take.
  uint32_t openArgumentBytes = 0;
  /// Events whose timestamps `open` writes: each one's fence is submitted
  /// right after it.
  std::vector<Event *> openEvents;
  /// Held while recording and submitting: a command pool is used by one
  /// thread at a time.
  std::mutex mutex;
};

struct DeviceState {
  DeviceInfo info;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory = {};
  VkDevice device = VK_NULL_HANDLE;
  DeviceApi api;
  uint32_t queueFamily = 0;
  /// Every queue of the family the device was created with. tk's own
  /// streams and events submit to the first; the others are for callers,
  /// who wrap them as streams (tk_device_get_native, tk_stream_wrap).
  std::vector<std::unique_ptr<Queue>> queues;
  /// Wrapped streams, whose work tk waits for before freeing memory,
  /// copying, or synchronizing the device.
  std::mutex wrappedMutex;
  std::vector<Stream *> wrappedStreams;
  /// The streams createStream made (the default stream is apart), whose
  /// recorded work a wait for the whole device submits first.
  std::mutex ownStreamsMutex;
  std::vector<Stream *> ownStreams;
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
Devices &devices();

/// The state of `device`, which must have passed checkDevice.
inline DeviceState &stateOf(int32_t device) {
  return *devices().states[device];
}

//===--- Defined in Queue.cpp ---------------------------------------------===//

/// Creates the command pool of `stream`, a stream of `device`, with room
/// for its in-flight and idle submissions.
tk_status initStream(DeviceState &state, int32_t device, Stream &stream,
                     std::string &error);

/// Waits for tk's submissions to the caller's queues (wrapped streams) to
/// finish; the caller's own work on those queues is not waited for.
tk_status drainWrappedStreams(DeviceState &state, std::string &error);

/// Submits what tk's own streams (the default one included) have recorded
/// and not yet submitted, so that work submitted next follows it on the
/// queue.
tk_status flushOwnStreams(DeviceState &state, std::string &error);
/// drainWrappedStreams and flushOwnStreams, then waits until tk's own queue
/// is idle: all the work tk was given on the device has finished.
tk_status waitForDeviceWork(DeviceState &state, std::string &error);

/// submit() on a stream whose mutex the caller holds; with `wait`, submits
/// at once and returns once the submission finished.
tk_status submitLocked(DeviceState &state, Stream &stream,
                       const Recorder &record, bool wait, std::string &error,
                       const void *arguments = nullptr,
                       uint32_t argumentBytes = 0);

//===--- Defined in Memory.cpp --------------------------------------------===//

/// A device-local buffer of kArgumentBufferBytes that kernels read by
/// `address` and vkCmdUpdateBuffer writes.
tk_status createArgumentBuffer(DeviceState &state, Allocation &out,
                               uint64_t &address, std::string &error);

/// Unmaps and frees `allocation` (any part of it may be missing).
void releaseAllocation(DeviceState &state, Allocation &allocation);

//===--- Defined in PipelineCache.cpp -------------------------------------===//

/// `$TK_CACHE_DIR/vulkan/<uuid>-<vendor>-<device>.pipelines`, the cache
/// folder chosen as the runtime chooses it; empty without HOME either.
std::string pipelineCachePath(const DeviceInfo &info);

/// The driver's data saved at `path`, or empty when there is none or the
/// file is not one savePipelineCache wrote whole.
std::string readPipelineCache(const std::string &path);

} // namespace tk::vulkan::detail

#endif // TK_BACKENDS_VULKAN_DRIVER_DEVICESTATE_H_
