//===- Device.h - Vulkan devices, memory, streams and events ----*- C++ -*-===//
//
// The Vulkan devices tk can run on: each a VkDevice with the queues of one
// compute queue family, created once per process and kept for its life. Memory
// is VkBuffers with buffer device addresses: the pointer the plugin hands out
// is the address kernels load and store through (SPIR-V
// PhysicalStorageBuffer64), and the plugin keeps a map from it back to the
// buffer for copies. Streams are command pools whose submissions go to the
// device's own queue (its first), in order, or for a stream wrapping a caller's
// queue of the device, to that queue; events are timestamp queries.
//
// Vulkan orders nothing by itself, so every submission begins with a
// barrier after all earlier shader and transfer writes (consecutive
// launches see each other's results) and ends with one before host reads
// (the host sees them once the submission's fence signals).
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_VULKAN_DRIVER_DEVICE_H_
#define TK_BACKENDS_VULKAN_DRIVER_DEVICE_H_

#include "driver/Driver.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tk::vulkan {

/// One product shape a subgroup computes with VK_KHR_cooperative_matrix
/// (VkCooperativeMatrixPropertiesKHR at subgroup scope): result (m x n) =
/// a (m x k) * b (k x n) + c.
struct CooperativeMatrixShape {
  uint32_t m = 0, n = 0, k = 0;
  VkComponentTypeKHR a = VK_COMPONENT_TYPE_FLOAT16_KHR;
  VkComponentTypeKHR b = VK_COMPONENT_TYPE_FLOAT16_KHR;
  VkComponentTypeKHR c = VK_COMPONENT_TYPE_FLOAT32_KHR;
  VkComponentTypeKHR result = VK_COMPONENT_TYPE_FLOAT32_KHR;
  bool saturatingAccumulation = false;
};

/// What a device is, its limits, and the optional features tk enabled on
/// it (bufferDeviceAddress and shaderInt64 are always enabled: a device
/// without them is not used).
struct DeviceInfo {
  std::string name;
  /// Compute units where a vendor extension reports them (0: unknown):
  /// SMs (VK_NV_shader_sm_builtins), CUs (VK_AMD_shader_core_properties),
  /// shader cores (VK_ARM_shader_core_builtins).
  uint32_t computeUnits = 0;
  /// Subgroups one compute unit holds at once, and its 32-bit registers,
  /// where the driver says (0: unknown): NVIDIA's SMs through
  /// VK_NV_shader_sm_builtins (shaderWarpsPerSM); their register file,
  /// which no Vulkan query gives, is 65,536 on every GPU that has the
  /// extension (Turing on, as CUDA's occupancy tables list).
  uint32_t subgroupsPerComputeUnit = 0;
  uint32_t registersPerComputeUnit = 0;
  uint32_t vendorID = 0;
  uint32_t deviceID = 0;
  VkPhysicalDeviceType deviceType = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  /// The device's Vulkan version (VkPhysicalDeviceProperties::apiVersion).
  uint32_t apiVersion = 0;
  /// Names the driver build whose pipeline-cache data this device takes.
  uint8_t pipelineCacheUUID[VK_UUID_SIZE] = {};
  /// A CPU implementation (lavapipe, SwiftShader): used only when
  /// cpuDevicesAllowed().
  bool cpuDevice = false;

  /// VkPhysicalDeviceSubgroupProperties: the size compute pipelines get
  /// without a required size, and the operations of compute shaders.
  uint32_t subgroupSize = 0;
  VkSubgroupFeatureFlags subgroupOperations = 0;
  /// VkPhysicalDeviceSubgroupSizeControlProperties; min = max = subgroupSize
  /// without subgroup size control.
  uint32_t minSubgroupSize = 0;
  uint32_t maxSubgroupSize = 0;
  uint32_t maxComputeWorkgroupSubgroups = 0;
  VkShaderStageFlags requiredSubgroupSizeStages = 0;

  uint32_t maxComputeSharedMemorySize = 0;
  uint32_t maxComputeWorkGroupInvocations = 0;
  uint32_t maxComputeWorkGroupSize[3] = {0, 0, 0};
  uint32_t maxComputeWorkGroupCount[3] = {0, 0, 0};
  uint32_t maxPushConstantsSize = 0;
  /// Nanoseconds per timestamp tick.
  float timestampPeriod = 0;
  /// The queue's timestampValidBits; 0: the queue has no timestamps.
  uint32_t timestampValidBits = 0;
  bool timestamps = false;
  /// The largest DEVICE_LOCAL heap.
  uint64_t deviceLocalBytes = 0;
  /// VkPhysicalDeviceMaintenance3Properties: the most one allocation holds.
  uint64_t maxMemoryAllocationSize = 0;

  // Optional features, true when enabled on the VkDevice.
  bool shaderFloat64 = false;
  bool shaderInt16 = false;
  bool shaderFloat16 = false;
  bool shaderInt8 = false;
  bool storageBuffer8BitAccess = false;
  bool storageBuffer16BitAccess = false;
  bool subgroupSizeControl = false;
  bool computeFullSubgroups = false;
  /// VK_EXT_shader_atomic_float: atomic add, and load/store/exchange.
  bool shaderBufferFloat32AtomicAdd = false;
  bool shaderBufferFloat32Atomics = false;
  bool shaderBufferInt64Atomics = false;
  bool vulkanMemoryModel = false;
  bool vulkanMemoryModelDeviceScope = false;
  /// Subgroup operations on 8-, 16- and 64-bit types.
  bool shaderSubgroupExtendedTypes = false;
  /// VK_KHR_cooperative_matrix, enabled where the device has it: the
  /// subgroup-scope shapes it lists, in its order.
  bool cooperativeMatrix = false;
  std::vector<CooperativeMatrixShape> cooperativeMatrixShapes;
  /// VK_KHR_shader_bfloat16's shaderBFloat16CooperativeMatrix (with the
  /// bf16 type), enabled where the device has it: its bf16 shapes run.
  bool bfloat16CooperativeMatrix = false;
  /// VK_KHR_pipeline_executable_properties' pipelineExecutableInfo: each
  /// pipeline's statistics (registers a thread) can be read.
  bool pipelineExecutableInfo = false;
};

/// Whether CPU implementations of Vulkan count as devices: only when
/// TK_BACKEND names "vulkan" among its comma-separated entries, so that
/// automatic backend selection never ends on lavapipe but TK_BACKEND=vulkan
/// runs there.
bool cpuDevicesAllowed();

/// Opens the loader, creates the instance and a VkDevice for each usable
/// physical device, once per process; later calls return the first outcome.
/// Usable: Vulkan 1.2, a compute queue, bufferDeviceAddress and shaderInt64.
/// Devices are ordered discrete, integrated, virtual, CPU, other.
/// TK_ERROR_NO_DEVICE (with the reason, and why each device was skipped)
/// when none is usable.
tk_status initializeDevices(std::string &error);

/// Devices found by initializeDevices (0 before it or when it failed).
int32_t deviceCount();

/// TK_ERROR_NOT_FOUND unless initializeDevices succeeded and `device` is one
/// of its devices.
tk_status checkDevice(int32_t device, std::string &error);

/// The device's description; `device` must have passed checkDevice.
const DeviceInfo &deviceInfo(int32_t device);

/// The VkDevice, its commands and its pipeline cache (for Executable.cpp);
/// `device` must have passed checkDevice.
VkDevice deviceHandle(int32_t device);
const DeviceApi &deviceApi(int32_t device);
VkPipelineCache devicePipelineCache(int32_t device);

/// Writes the device's pipeline cache (the driver's compiled pipelines)
/// next to tk's kernel cache, `$TK_CACHE_DIR/vulkan/<pipelineCacheUUID>`
/// (default ~/.cache/tk), atomically, so that the next process creates the
/// same pipelines without compiling them again; initializeDevices reads it
/// back. Best effort: a cache that cannot be written is only slower.
void savePipelineCache(int32_t device);

/// Fills the fields of `out` that fit in its struct_size.
tk_status queryDeviceProps(int32_t device, tk_device_props *out,
                           std::string &error);

/// A buffer of `bytes` (at least 1), preferably in DEVICE_LOCAL memory;
/// `*out` is its device address.
tk_status allocateMemory(int32_t device, size_t bytes, void **out,
                         std::string &error);
/// Frees an allocation by the address allocateMemory gave (NULL: nothing),
/// after the device's queue is idle, since launches may still use it.
tk_status freeMemory(int32_t device, void *pointer, std::string &error);

enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };

/// Copies `bytes` and returns once the copy is complete, after all work
/// submitted before it. A device address may point anywhere inside an
/// allocation of `device` as long as the range ends inside it too.
/// Host-visible memory is copied with memcpy; other memory through a staging
/// buffer (always, with TK_VULKAN_STAGING=1).
tk_status copyMemory(int32_t device, CopyKind kind, void *dst, const void *src,
                     size_t bytes, std::string &error);

/// Streams: `stream` NULL is the device's default stream. All streams
/// createStream makes submit to the device's own queue, in submission order.
tk_status createStream(int32_t device, void **out, std::string &error);
/// A stream whose submissions go to `queue`, one of the device's queues
/// (tk_device_get_native), which the caller keeps using too: each
/// submission begins with a barrier after all earlier work on the queue.
/// TK_ERROR_INVALID_ARGUMENT for any other VkQueue.
tk_status wrapStream(int32_t device, void *queue, void **out,
                     std::string &error);
/// Waits for the stream's work (tk's submissions), then destroys it; a
/// wrapped stream's queue stays the caller's.
tk_status destroyStream(int32_t device, void *stream, std::string &error);
tk_status synchronizeStream(int32_t device, void *stream, std::string &error);
/// Waits until the device's own queue is idle and tk's submissions to
/// wrapped queues have finished.
tk_status synchronizeDevice(int32_t device, std::string &error);

/// The instance, physical device, device and queue family behind `device`
/// (tk_device_get_native); fills the fields that fit in out->struct_size.
tk_status queryNative(int32_t device, tk_device_native *out,
                      std::string &error);

/// Records commands into a submission's command buffer.
/// `argumentAddress`: the device address of the submission's argument
/// buffer holding the block submit() was given (0 without one).
using Recorder = std::function<void(VkCommandBuffer commandBuffer,
                                    uint64_t argumentAddress)>;

/// The largest argument block a submission carries (a package's most).
constexpr uint32_t kArgumentBufferBytes = 8192;

/// Records `record`'s commands on `stream`, between the barriers described
/// above, and returns without waiting. A wrapped stream submits them at
/// once; one of tk's own queue submits them at once while fewer than two of
/// its submissions are in flight, and otherwise gathers them with the
/// commands after them until one of those finishes (seen at the stream's
/// next call), 64 are gathered, or anything waits for the stream, an event
/// on it or the device (synchronize, copies, frees). `record` runs with the
/// stream locked: it only records commands.
/// With `argumentBytes` (a multiple of 4, at most kArgumentBufferBytes),
/// the command buffer first copies `arguments` into the submission's own
/// argument buffer (vkCmdUpdateBuffer, so the bytes need not outlive the
/// call), which the submission keeps until it has finished.
/// Command buffers, fences and argument buffers of finished submissions are
/// reused, so a stream of launches allocates nothing once warm; at most a
/// fixed number of submissions are in flight per stream (a further one
/// waits for the oldest).
tk_status submit(int32_t device, void *stream, const Recorder &record,
                 std::string &error, const void *arguments = nullptr,
                 uint32_t argumentBytes = 0);

/// Events: a timestamp written on the device's queue after the stream's
/// work before the record, and a fence that signals after it. On tk's own
/// streams the timestamp joins the stream's next submission (a launch after
/// it, or the first wait for the event), so that an event and the launch it
/// precedes share one; on a wrapped stream it is submitted at once. Without
/// queue timestamps, events still synchronize; eventElapsedMs reports
/// TK_ERROR_UNSUPPORTED.
tk_status createEvent(int32_t device, void **out, std::string &error);
/// Waits for the event's last record to finish, then destroys it.
tk_status destroyEvent(int32_t device, void *event, std::string &error);
/// Re-recording waits for the previous record to finish first.
tk_status recordEvent(int32_t device, void *event, void *stream,
                      std::string &error);
/// Returns at once for an event never recorded.
tk_status synchronizeEvent(int32_t device, void *event, std::string &error);
/// Milliseconds from `start` to `end` (waiting for both to finish);
/// TK_ERROR_INVALID_ARGUMENT if either was never recorded.
tk_status eventElapsedMs(int32_t device, void *start, void *end, float *out,
                         std::string &error);

} // namespace tk::vulkan

#endif // TK_BACKENDS_VULKAN_DRIVER_DEVICE_H_
