//===- Executable.h - a loaded Vulkan compute kernel ------------*- C++ -*-===//
//
// A SPIR-V kernel as a compute pipeline on one device: no descriptor sets,
// since kernels reach memory through buffer device addresses, and every
// argument in one block at the offsets the compiler chose: the push
// constants, or where the block is larger than every device's push
// constants, the submission's argument buffer, whose address is pushed.
// The launch shape (threads per workgroup, shared memory, subgroup width)
// is the one the SPIR-V was compiled for; loading checks it against the
// device so that a kernel that cannot run is refused by name, not launched.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_VULKAN_DRIVER_EXECUTABLE_H_
#define TK_BACKENDS_VULKAN_DRIVER_EXECUTABLE_H_

#include "driver/Driver.h"
#include "tk/tk_plugin.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tk::vulkan {

/// The most push-constant bytes a kernel may take: launches pack them in a
/// buffer of this size on the stack. Vulkan guarantees only 128; this is
/// the most any device offers in practice.
constexpr uint32_t kMaxPushConstantBytes = 256;

struct Executable {
  int32_t device = 0;
  /// Destroyed once the pipeline exists (a pipeline does not need its
  /// module); kept here for the failure paths of loadExecutable.
  VkShaderModule shaderModule = VK_NULL_HANDLE;
  VkPipelineLayout pipelineLayout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t threadsPerBlock = 0;
  uint32_t sharedMemoryBytes = 0;
  /// The subgroup width the pipeline was created with (0: the device's
  /// default, not required).
  uint32_t subgroupSize = 0;
  uint32_t pushConstantBytes = 0;
  /// 0, or the bytes of the argument block in the argument buffer.
  uint32_t argumentBufferBytes = 0;
  /// Byte offset of each argument in its block.
  std::vector<uint32_t> argOffsets;
  /// Filled by the plugin's executable_load after loadExecutable.
  std::vector<tk_plugin_arg_type> argTypes;
  std::string entry;
  /// What the driver's compiler reports of the pipeline
  /// (VK_KHR_pipeline_executable_properties), as "name: value", and the
  /// 32-bit registers a thread takes where a statistic names them (0:
  /// unknown).
  std::vector<std::string> statistics;
  uint32_t registersPerThread = 0;

  /// Waits for the device's queue to be idle (submitted launches may still
  /// use the pipeline), then destroys the pipeline, layout and module.
  ~Executable();
};

/// Creates the compute pipeline of `entry` (a GLCompute entry point of
/// `spirv`, `words` 32-bit words in host byte order) on `device`.
///  - threadsPerBlock: the workgroup size; must match the entry's LocalSize
///    when it declares one; at most maxComputeWorkGroupInvocations;
///  - sharedMemoryBytes: its workgroup memory, at most
///    maxComputeSharedMemorySize;
///  - subgroupSize: the subgroup width the code assumes; 0 for none. It is
///    required of the pipeline when the device has subgroup size control
///    and the width is in its range; otherwise it must be the device's
///    subgroupSize;
///  - argOffsets, pushConstantBytes: the push-constant block (a multiple of
///    4 bytes, at most kMaxPushConstantBytes and maxPushConstantsSize);
///  - argumentBufferBytes: 0, or the argument block's size in the argument
///    buffer (at most kArgumentBufferBytes; the push constants are then
///    its 8-byte address), which argOffsets index.
/// A limit the device does not meet is TK_ERROR_UNSUPPORTED naming the
/// numbers; an unknown entry is TK_ERROR_NOT_FOUND.
tk_status loadExecutable(int32_t device, const uint32_t *spirv, size_t words,
                         const std::string &entry, uint32_t threadsPerBlock,
                         uint32_t sharedMemoryBytes, uint32_t subgroupSize,
                         const std::vector<uint32_t> &argOffsets,
                         uint32_t pushConstantBytes,
                         uint32_t argumentBufferBytes,
                         std::unique_ptr<Executable> &out, std::string &error);

/// Workgroups of `threads` threads, each taking `registersPerThread`
/// 32-bit registers and `sharedBytes` of workgroup memory, that a compute
/// unit of `subgroups` subgroups of `width` lanes, `registers` registers
/// (allocated a warp's 256 at a time, as NVIDIA's SMs do) and
/// `sharedMemory` bytes holds at once; at least 1.
inline int32_t workgroupsPerComputeUnit(int64_t subgroups, int64_t registers,
                                        int64_t sharedMemory, int64_t width,
                                        int64_t threads,
                                        int64_t registersPerThread,
                                        int64_t sharedBytes) {
  int64_t perWorkgroup = (threads + width - 1) / width;
  int64_t programs = subgroups / perWorkgroup;
  int64_t subgroupRegisters = (registersPerThread * width + 255) / 256 * 256;
  if (subgroupRegisters)
    programs = std::min(programs, registers / subgroupRegisters / perWorkgroup);
  if (sharedBytes)
    programs = std::min(programs, sharedMemory / sharedBytes);
  return static_cast<int32_t>(std::max<int64_t>(programs, 1));
}

/// Workgroups of the kernel one compute unit holds at once, where the
/// device says how many subgroups and registers a unit has and the driver
/// how many registers a thread takes (NVIDIA's); otherwise 0 (unknown, the
/// runtime estimates). Vulkan gives no unit's shared memory, only a
/// workgroup's most: that bound errs low.
tk_status executableOccupancy(const Executable &executable, int32_t &out,
                              std::string &error);

/// Submits the kernel over `grid` workgroups on `stream` (NULL: the
/// default stream) and returns without waiting. `args[i]` points at
/// argument i's value, of the size of argTypes[i] (a void* holding the
/// device address for TK_PLUGIN_ARG_PTR); it is copied before returning.
/// Allocates nothing on success once the stream is warm.
tk_status launchExecutable(const Executable &executable, const int32_t grid[3],
                           void *const *args, void *stream, std::string &error);

} // namespace tk::vulkan

#endif // TK_BACKENDS_VULKAN_DRIVER_EXECUTABLE_H_
