//===- Queue.cpp - Vulkan streams and events --------------------*- C++ -*-===//
//
// All the work tk submits: submissions between the barriers Device.h
// describes, streams whose command buffers and fences are recycled (a stream
// of launches allocates nothing once warm) and which go to the device's own
// queue or, wrapped, to a caller's queue of the device, and events,
// timestamp queries with a fence of their own. Locks: see DeviceState.h.
//
// A stream of tk's own queue gathers its commands: while two of its
// submissions are in flight, launches and event timestamps are recorded
// into one open command buffer, submitted when one of those finishes (seen
// at the stream's next call), at 64 commands, or at any wait. Each
// vkQueueSubmit costs the host and the device microseconds: a timestamp
// submitted on its own was written before the launch after it had even
// reached the queue, and that gap was in every event-timed launch. An event
// never submits by itself; its record joins the stream's next submission.
//
//===----------------------------------------------------------------------===//

#include "driver/DeviceState.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace tk::vulkan {

using namespace detail;

/// A timestamp query and the fence that says it was written.
struct detail::Event {
  int32_t device = 0;
  /// One TIMESTAMP query; VK_NULL_HANDLE when the queue has no timestamps.
  VkQueryPool queryPool = VK_NULL_HANDLE;
  /// The event's own command pool, buffer and fence: the fence stays the
  /// event's until the next record, which a stream's recycled fences would
  /// not. The command buffer records the timestamp on a wrapped stream; on
  /// tk's own streams it goes into the stream's open submission.
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer commandBuffer = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  bool recorded = false;
  /// The stream whose open submission holds the record, until it is
  /// submitted (and the fence after it). Written under that stream's mutex,
  /// read under the event's.
  std::atomic<Stream *> pending{nullptr};
  /// The submission holding the record failed: the fence never signals.
  std::atomic<bool> lost{false};
  std::mutex mutex;
};

namespace {

/// Submissions a stream may have in flight; the next waits for the oldest.
/// Bounds the command buffers and fences a stream of launches makes.
constexpr size_t kMaxInFlight = 64;

/// With fewer of a stream's submissions in flight than this, a launch is
/// submitted at once: the device always has the next one queued behind the
/// one it runs, and an idle device never waits for a batch.
constexpr size_t kEagerInFlight = 2;

/// The commands one submission gathers at most.
constexpr uint32_t kMaxBatchCommands = 64;

/// Where each launch's argument block starts in a submission's argument
/// buffer: the alignment of its widest member, with room to spare.
constexpr uint32_t kArgumentAlignment = 16;

/// Writes earlier submissions may have made, and the accesses later ones
/// make: what the barriers around each submission order.
constexpr VkPipelineStageFlags kWorkStages =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kWorkWrites =
    VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
constexpr VkAccessFlags kWorkAccesses =
    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
    VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

//===--- Submissions ------------------------------------------------------===//

tk_status waitFence(DeviceState &state, VkFence fence, std::string &error) {
  VkResult result;
  do {
    result =
        state.api.vkWaitForFences(state.device, 1, &fence, VK_TRUE, UINT64_MAX);
  } while (result == VK_TIMEOUT); // some drivers cap the timeout
  return checkVk(result, "vkWaitForFences", error);
}

/// Submits `commandBuffer` with `fence`; without a command buffer, only
/// the fence, which then signals once all earlier work on the queue has
/// finished.
tk_status submitToQueue(DeviceState &state, Queue &queue,
                        VkCommandBuffer commandBuffer, VkFence fence,
                        std::string &error) {
  VkSubmitInfo info = {};
  info.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  info.commandBufferCount = 1;
  info.pCommandBuffers = &commandBuffer;
  uint32_t count = commandBuffer ? 1 : 0;
  std::lock_guard<std::mutex> lock(queue.mutex);
  TK_VK_RETURN_IF_ERROR(state.api, vkQueueSubmit, queue.handle, count, &info,
                        fence);
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
/// command earlier in submission order on the queue, not only this buffer's
/// (on a wrapped queue, the caller's too).
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

//===--- Recycled submissions ---------------------------------------------===//

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

//===--- A stream's open submission ---------------------------------------===//

/// Begins the stream's open submission unless one is being recorded; waits
/// for the oldest in-flight one while kMaxInFlight are.
tk_status openSubmission(DeviceState &state, Stream &stream,
                         std::string &error) {
  if (stream.recording)
    return TK_SUCCESS;
  while (stream.inFlight.size() >= kMaxInFlight) {
    if (tk_status status =
            waitFence(state, stream.inFlight.front().fence, error))
      return status;
    if (tk_status status = recycle(state, stream, error))
      return status;
  }
  if (tk_status status = acquire(state, stream, stream.open, error))
    return status;
  if (tk_status status = beginWork(state, stream.open.commandBuffer, error)) {
    stream.idle.push_back(stream.open); // reusable once reset
    return status;
  }
  stream.recording = true;
  stream.openCommands = 0;
  stream.openArgumentBytes = 0;
  return TK_SUCCESS;
}

/// Submits the stream's open submission, if any, then the fence of each
/// event it records. On failure the submission is never run: it goes back
/// to the idle list and its events are lost.
tk_status flush(DeviceState &state, Stream &stream, std::string &error) {
  if (!stream.recording)
    return TK_SUCCESS;
  stream.recording = false;
  Submission &open = stream.open;
  tk_status status = endWork(state, open.commandBuffer, error);
  if (status == TK_SUCCESS)
    status = submitToQueue(state, *stream.queue, open.commandBuffer, open.fence,
                           error);
  if (status == TK_SUCCESS)
    stream.inFlight.push_back(open);
  else
    stream.idle.push_back(open);
  for (Event *event : stream.openEvents) {
    tk_status fenced = status;
    if (fenced == TK_SUCCESS)
      fenced = submitToQueue(state, *stream.queue, VK_NULL_HANDLE, event->fence,
                             error);
    event->lost.store(fenced != TK_SUCCESS);
    event->pending.store(nullptr);
    if (status == TK_SUCCESS)
      status = fenced;
  }
  stream.openEvents.clear();
  return status;
}

/// Submits the stream's recorded work, waits for all of it and recycles it.
tk_status drain(DeviceState &state, Stream &stream, std::string &error) {
  if (tk_status status = flush(state, stream, error))
    return status;
  for (const Submission &submission : stream.inFlight)
    if (tk_status status = waitFence(state, submission.fence, error))
      return status;
  return recycle(state, stream, error);
}

void releaseStream(DeviceState &state, Stream &stream) {
  if (stream.recording) {
    stream.idle.push_back(stream.open);
    stream.recording = false;
  }
  for (std::vector<Submission> *list : {&stream.inFlight, &stream.idle})
    for (Submission &submission : *list) {
      state.api.vkFreeCommandBuffers(state.device, stream.pool, 1,
                                     &submission.commandBuffer);
      state.api.vkDestroyFence(state.device, submission.fence, nullptr);
      releaseAllocation(state, submission.arguments);
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

/// Waits until the device's own queue is idle.
tk_status waitOwnQueueIdle(DeviceState &state, std::string &error) {
  Queue &queue = *state.queues.front();
  std::lock_guard<std::mutex> lock(queue.mutex);
  TK_VK_RETURN_IF_ERROR(state.api, vkQueueWaitIdle, queue.handle);
  return TK_SUCCESS;
}

/// Submits the open submission holding the record of `event` (whose mutex
/// the caller holds), if one does.
tk_status flushEvent(DeviceState &state, Event &event, std::string &error) {
  Stream *stream = event.pending.load();
  if (!stream)
    return TK_SUCCESS;
  std::lock_guard<std::mutex> lock(stream->mutex);
  // Another thread may have submitted it since.
  if (event.pending.load() != stream)
    return TK_SUCCESS;
  return flush(state, *stream, error);
}

/// Waits for the record of `event` (whose mutex the caller holds) to finish.
tk_status waitEvent(DeviceState &state, Event &event, std::string &error) {
  if (tk_status status = flushEvent(state, event, error))
    return status;
  if (event.lost.load()) {
    error = "tk-vulkan: the submission holding the event's record failed";
    return TK_ERROR_DEVICE;
  }
  return waitFence(state, event.fence, error);
}

} // namespace

//===--- Shared with Device.cpp and Memory.cpp ----------------------------===//

tk_status detail::initStream(DeviceState &state, int32_t device, Stream &stream,
                             std::string &error) {
  VkCommandPoolCreateInfo info = {};
  info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  // Command buffers are reset one by one when reused.
  info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  info.queueFamilyIndex = state.queueFamily;
  TK_VK_RETURN_IF_ERROR(state.api, vkCreateCommandPool, state.device, &info,
                        nullptr, &stream.pool);
  stream.device = device;
  stream.queue = state.queues.front().get();
  // The open submission is one more than those in flight.
  stream.inFlight.reserve(kMaxInFlight + 1);
  stream.idle.reserve(kMaxInFlight + 1);
  return TK_SUCCESS;
}

tk_status detail::drainWrappedStreams(DeviceState &state, std::string &error) {
  std::lock_guard<std::mutex> lock(state.wrappedMutex);
  for (Stream *stream : state.wrappedStreams) {
    std::lock_guard<std::mutex> streamLock(stream->mutex);
    if (tk_status status = drain(state, *stream, error))
      return status;
  }
  return TK_SUCCESS;
}

tk_status detail::flushOwnStreams(DeviceState &state, std::string &error) {
  std::lock_guard<std::mutex> lock(state.ownStreamsMutex);
  {
    std::lock_guard<std::mutex> streamLock(state.defaultStream.mutex);
    if (tk_status status = flush(state, state.defaultStream, error))
      return status;
  }
  for (Stream *stream : state.ownStreams) {
    std::lock_guard<std::mutex> streamLock(stream->mutex);
    if (tk_status status = flush(state, *stream, error))
      return status;
  }
  return TK_SUCCESS;
}

tk_status detail::waitForDeviceWork(DeviceState &state, std::string &error) {
  if (tk_status status = drainWrappedStreams(state, error))
    return status;
  if (tk_status status = flushOwnStreams(state, error))
    return status;
  return waitOwnQueueIdle(state, error);
}

namespace {

/// Checks an argument block's size before anything is recorded.
tk_status checkArgumentBlock(uint32_t argumentBytes, std::string &error) {
  if (argumentBytes % 4 == 0 && argumentBytes <= kArgumentBufferBytes)
    return TK_SUCCESS;
  error = "tk-vulkan: an argument block of " + std::to_string(argumentBytes) +
          " bytes (at most " + std::to_string(kArgumentBufferBytes) +
          ", a multiple of 4)";
  return TK_ERROR_INVALID_ARGUMENT;
}

/// Copies the launch's `arguments` into the open submission's argument
/// buffer at `offset` (the buffer is made the first time), before the
/// commands that read them.
tk_status recordArguments(DeviceState &state, Submission &submission,
                          uint32_t offset, const void *arguments,
                          uint32_t argumentBytes, std::string &error) {
  if (!submission.arguments.buffer)
    if (tk_status status = createArgumentBuffer(
            state, submission.arguments, submission.argumentAddress, error))
      return status;
  state.api.vkCmdUpdateBuffer(submission.commandBuffer,
                              submission.arguments.buffer, offset,
                              argumentBytes, arguments);
  recordBarrier(state.api, submission.commandBuffer,
                VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                VK_ACCESS_SHADER_READ_BIT);
  return TK_SUCCESS;
}

} // namespace

tk_status detail::submitLocked(DeviceState &state, Stream &stream,
                               const Recorder &record, bool wait,
                               std::string &error, const void *arguments,
                               uint32_t argumentBytes) {
  if (argumentBytes)
    if (tk_status status = checkArgumentBlock(argumentBytes, error))
      return status;
  if (tk_status status = recycle(state, stream, error))
    return status;
  // Where the launch's argument block goes: after those of the launches
  // gathered before it (none in a new submission).
  auto nextArgumentOffset = [&] {
    return (stream.openArgumentBytes + kArgumentAlignment - 1) /
           kArgumentAlignment * kArgumentAlignment;
  };
  if (stream.recording && argumentBytes &&
      nextArgumentOffset() + argumentBytes > kArgumentBufferBytes)
    if (tk_status status = flush(state, stream, error))
      return status;
  bool continuing = stream.recording;
  if (tk_status status = openSubmission(state, stream, error))
    return status;
  if (continuing) // beginWork's barrier, between this stream's commands
    recordBarrier(state.api, stream.open.commandBuffer, kWorkStages,
                  kWorkWrites, kWorkStages, kWorkAccesses);
  uint32_t argumentOffset = nextArgumentOffset();
  uint64_t argumentAddress = 0;
  if (argumentBytes) {
    if (tk_status status = recordArguments(state, stream.open, argumentOffset,
                                           arguments, argumentBytes, error))
      return status;
    stream.openArgumentBytes = argumentOffset + argumentBytes;
    argumentAddress = stream.open.argumentAddress + argumentOffset;
  }
  record(stream.open.commandBuffer, argumentAddress);
  ++stream.openCommands;
  bool now = wait || stream.wrapped ||
             stream.inFlight.size() < kEagerInFlight ||
             stream.openCommands >= kMaxBatchCommands;
  if (!now)
    return TK_SUCCESS;
  VkFence fence = stream.open.fence;
  if (tk_status status = flush(state, stream, error))
    return status;
  if (!wait)
    return TK_SUCCESS;
  if (tk_status status = waitFence(state, fence, error))
    return status;
  return recycle(state, stream, error);
}

//===--- Streams ----------------------------------------------------------===//

tk_status createStream(int32_t device, void **out, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  DeviceState &state = stateOf(device);
  auto stream = std::make_unique<Stream>();
  if (tk_status status = initStream(state, device, *stream, error))
    return status;
  {
    std::lock_guard<std::mutex> lock(state.ownStreamsMutex);
    state.ownStreams.push_back(stream.get());
  }
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
  {
    std::mutex &listMutex =
        stream->wrapped ? state.wrappedMutex : state.ownStreamsMutex;
    auto &list = stream->wrapped ? state.wrappedStreams : state.ownStreams;
    std::lock_guard<std::mutex> lock(listMutex);
    list.erase(std::remove(list.begin(), list.end(), stream), list.end());
  }
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

tk_status wrapStream(int32_t device, void *handle, void **out,
                     std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  DeviceState &state = stateOf(device);
  auto queue = std::find_if(
      state.queues.begin(), state.queues.end(), [&](const auto &candidate) {
        return candidate->handle == static_cast<VkQueue>(handle);
      });
  if (queue == state.queues.end()) {
    // A queue of another VkDevice cannot run tk's pipelines or reach its
    // buffers; Vulkan cannot tell a queue's device, but tk knows its own.
    char text[32];
    std::snprintf(text, sizeof(text), "%p", handle);
    error = std::string("tk-vulkan: stream_wrap: ") + text +
            " is not a queue of tk's VkDevice for " + state.info.name +
            " (its " + std::to_string(state.queues.size()) +
            " queue(s) of family " + std::to_string(state.queueFamily) +
            ": vkGetDeviceQueue on the device tk_device_get_native gives)";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  auto stream = std::make_unique<Stream>();
  if (tk_status status = initStream(state, device, *stream, error))
    return status;
  stream->queue = queue->get();
  stream->wrapped = true;
  {
    std::lock_guard<std::mutex> lock(state.wrappedMutex);
    state.wrappedStreams.push_back(stream.get());
  }
  *out = stream.release();
  return TK_SUCCESS;
}

tk_status synchronizeDevice(int32_t device, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  return waitForDeviceWork(stateOf(device), error);
}

tk_status submit(int32_t device, void *handle, const Recorder &record,
                 std::string &error, const void *arguments,
                 uint32_t argumentBytes) {
  if (tk_status status = checkDevice(device, error))
    return status;
  DeviceState &state = stateOf(device);
  Stream *stream = nullptr;
  if (tk_status status = resolveStream(state, device, handle, stream, error))
    return status;
  std::lock_guard<std::mutex> lock(stream->mutex);
  return submitLocked(state, *stream, record, /*wait=*/false, error, arguments,
                      argumentBytes);
}

//===--- Events -----------------------------------------------------------===//

namespace {

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
  if (tk_status status = waitEvent(state, event, error))
    return status;
  TK_VK_RETURN_IF_ERROR(state.api, vkGetQueryPoolResults, state.device,
                        event.queryPool, 0, 1, sizeof(ticks), &ticks,
                        sizeof(ticks),
                        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  return TK_SUCCESS;
}
} // namespace

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
      status = waitEvent(state, *event, error);
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
  // The record follows the stream's work on the stream's queue (all of
  // tk's own streams share one).
  Stream *stream = nullptr;
  if (tk_status status =
          resolveStream(state, device, streamHandle, stream, error))
    return status;

  std::lock_guard<std::mutex> lock(event->mutex);
  // The query and fence are reused: the last record must have finished.
  if (event->recorded) {
    // A lost record's fence never signals; nothing is left to wait for.
    tk_status status = waitEvent(state, *event, error);
    if (status != TK_SUCCESS && !event->lost.load())
      return status;
    event->recorded = false;
  }
  TK_VK_RETURN_IF_ERROR(state.api, vkResetFences, state.device, 1,
                        &event->fence);
  auto writeTimestamp = [&](VkCommandBuffer commandBuffer) {
    if (!event->queryPool)
      return;
    state.api.vkCmdResetQueryPool(commandBuffer, event->queryPool, 0, 1);
    // Bottom of pipe: written once every earlier command on the queue has
    // finished.
    state.api.vkCmdWriteTimestamp(commandBuffer,
                                  VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                                  event->queryPool, 0);
  };
  if (!stream->wrapped) {
    // Into the stream's open submission, submitted with the stream's next
    // work or at the first wait for the event.
    std::lock_guard<std::mutex> streamLock(stream->mutex);
    if (tk_status status = recycle(state, *stream, error))
      return status;
    if (tk_status status = openSubmission(state, *stream, error))
      return status;
    writeTimestamp(stream->open.commandBuffer);
    stream->openEvents.push_back(event);
    event->lost.store(false);
    event->pending.store(stream);
    event->recorded = true;
    return TK_SUCCESS;
  }
  // A wrapped queue is the caller's too: the record is submitted at once,
  // in the event's own command buffer.
  TK_VK_RETURN_IF_ERROR(state.api, vkResetCommandBuffer, event->commandBuffer,
                        0);
  if (tk_status status = beginWork(state, event->commandBuffer, error))
    return status;
  writeTimestamp(event->commandBuffer);
  if (tk_status status = endWork(state, event->commandBuffer, error))
    return status;
  if (tk_status status = submitToQueue(
          state, *stream->queue, event->commandBuffer, event->fence, error))
    return status;
  event->lost.store(false);
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
  return waitEvent(stateOf(device), *event, error);
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
