//===- Device.cpp - Level Zero devices, memory, streams, events -*- C++ -*-===//
//
// Device discovery and properties, the target of a PCI device id, and the
// plugin ABI's memory, stream and event calls.
//
// Locks, always taken in this order: an executable's launchMutex
// (Executable.cpp) or an event's mutex, then a device's streamsMutex, then
// one stream's mutex. A device's defaultMutex is taken before its
// streamsMutex and never under a stream's; its copyMutex is taken alone.
//
//===----------------------------------------------------------------------===//

#include "driver/Device.h"

#include "common/DeviceProbe.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

namespace tk::xe {

namespace {

constexpr uint32_t kIntelVendorId = 0x8086;
/// GRFs of a hardware thread in the default mode, in which the device
/// reports numThreadsPerEU.
constexpr uint32_t kDefaultGrfs = 128;
/// zeMemAllocDevice's alignment: a cache line, enough for any vector access
/// a kernel makes and what OpenCL's CL_DEVICE_MEM_BASE_ADDR_ALIGN promises.
constexpr size_t kAllocationAlignment = 64;

/// PCI device ids of the GPUs tk has a target for: the ranges cover every
/// id Intel's compute-runtime lists for them
/// (shared/source/xe_hpc_core/pvc/device_ids_configs_pvc.h and
/// xe_hpg_core/dg2/device_ids_configs_dg2.h). A GPU missing here still
/// works, from the package's SPIR-V; one wrongly here only has its native
/// binary refused, and then the SPIR-V is built (Executable.cpp).
struct PciIdRange {
  uint32_t first, last;
  const char *target;
};
constexpr PciIdRange kTargetsByPciId[] = {
    // Data Center GPU Max (Xe-HPC): 1100, 1350, 1550 and their variants.
    {0x0BD0, 0x0BDB, "pvc"},
    {0x0B69, 0x0B69, "pvc"},
    {0x0B6E, 0x0B6E, "pvc"},
    // Arc A-series, Arc Pro and Data Center GPU Flex (Xe-HPG).
    {0x4F80, 0x4F88, "dg2"},
    {0x5690, 0x5698, "dg2"},
    {0x56A0, 0x56A6, "dg2"},
    {0x56AF, 0x56B3, "dg2"},
    {0x56BA, 0x56C2, "dg2"},
};

/// The subgroup size of compiler/TargetInfo.cpp's preset for `target`; 0
/// for a GPU without one.
int32_t presetSubgroupSize(const std::string &target) {
  if (target == "pvc")
    return 16; // DPAS's execution size on Xe-HPC
  if (target == "dg2")
    return 8; // and on Xe-HPG
  return 0;
}

struct DeviceState {
  ze_driver_handle_t driver = nullptr;
  ze_context_handle_t context = nullptr;
  ze_device_handle_t handle = nullptr;
  ze_device_properties_t properties = {};
  ze_device_compute_properties_t compute = {};
  uint64_t totalMemoryBytes = 0;
  uint32_t memoryBusWidthBits = 0;
  uint64_t cacheBytes = 0;
  /// Ticks of the device's global timestamp a second; 0 when it reports no
  /// timer.
  double timerTicksPerSecond = 0;
  uint32_t timestampValidBits = 0;
  /// The command queue group of the compute engine (ordinal 0 on every
  /// Intel GPU so far, but Level Zero promises no order).
  uint32_t computeOrdinal = 0;
  std::string target;
  int32_t subgroupSize = 0;

  /// The synchronous immediate list copies run on, made on first use.
  std::mutex copyMutex;
  ze_command_list_handle_t copyList = nullptr;
  /// The stream a NULL handle names, made on first use; lives as long as
  /// the process, as the device's context does.
  std::mutex defaultMutex;
  Stream *defaultStream = nullptr;
  /// tk's own streams, the default one included: what copies, frees and
  /// synchronizeDevice wait for.
  std::mutex streamsMutex;
  std::vector<Stream *> streams;
};

struct Devices {
  std::once_flag initOnce;
  tk_status initStatus = TK_SUCCESS;
  std::string initError;
  int32_t count = 0;
  std::vector<std::unique_ptr<DeviceState>> states;
};

Devices &devices() {
  static Devices instance;
  return instance;
}

DeviceState &stateOf(int32_t device) { return *devices().states[device]; }

bool atLeast(ze_api_version_t version, ze_api_version_t minimum) {
  return static_cast<uint32_t>(version) >= static_cast<uint32_t>(minimum);
}

/// zeDeviceGetProperties, in the units of the driver's API version.
tk_status readDeviceProperties(ze_device_handle_t handle,
                               ze_api_version_t version, DeviceState &entry,
                               std::string &error) {
  // With the 1.2 structure type timerResolution is the timer's frequency
  // (cycles a second); with 1.0's it is nanoseconds a cycle, an integer
  // that loses the fraction (a 38.4 MHz timer would say 26 for 26.04 ns).
  // A driver older than 1.2 knows only 1.0's.
  bool frequency = atLeast(version, ZE_API_VERSION_1_2);
  entry.properties = {};
  entry.properties.stype = frequency ? ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2
                                     : ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  TK_ZE_RETURN_IF_ERROR(zeDeviceGetProperties, handle, &entry.properties);
  uint64_t resolution = entry.properties.timerResolution;
  if (resolution == 0)
    entry.timerTicksPerSecond = 0;
  else if (frequency)
    entry.timerTicksPerSecond = static_cast<double>(resolution);
  else
    entry.timerTicksPerSecond = 1e9 / static_cast<double>(resolution);
  // The global timestamps events write
  // (zeCommandListAppendWriteGlobalTimestamp) count this timer and keep
  // timestampValidBits of it; kernelTimestampValidBits is for kernel timestamp
  // events, which tk does not use.
  entry.timestampValidBits = entry.properties.timestampValidBits;
  return TK_SUCCESS;
}

/// Compute, memory and cache properties, and the compute engine's ordinal:
/// false in `usable` when the device has no compute engine.
tk_status readDeviceDetails(DeviceState &entry, bool &usable,
                            std::string &error) {
  const DriverApi &api = driver();
  entry.compute = {};
  entry.compute.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
  TK_ZE_RETURN_IF_ERROR(zeDeviceGetComputeProperties, entry.handle,
                        &entry.compute);

  // One entry per kind of memory the device has (HBM, GDDR); tk reports
  // their sum and the widest bus.
  uint32_t count = 0;
  TK_ZE_RETURN_IF_ERROR(zeDeviceGetMemoryProperties, entry.handle, &count,
                        nullptr);
  std::vector<ze_device_memory_properties_t> memories(count);
  for (ze_device_memory_properties_t &memory : memories)
    memory.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
  if (count)
    TK_ZE_RETURN_IF_ERROR(zeDeviceGetMemoryProperties, entry.handle, &count,
                          memories.data());
  memories.resize(count);
  for (const ze_device_memory_properties_t &memory : memories) {
    entry.totalMemoryBytes += memory.totalSize;
    entry.memoryBusWidthBits =
        std::max(entry.memoryBusWidthBits, memory.maxBusWidth);
  }

  // The caches the driver describes (compute-runtime describes one, the
  // GPU's last level, which Intel calls L3 and tk_device_props
  // l2_cache_bytes); the largest is kept. Only informative, so a driver
  // that refuses the query leaves the size at 0 rather than failing.
  count = 0;
  if (api.zeDeviceGetCacheProperties(entry.handle, &count, nullptr) ==
          ZE_RESULT_SUCCESS &&
      count) {
    std::vector<ze_device_cache_properties_t> caches(count);
    for (ze_device_cache_properties_t &cache : caches)
      cache.stype = ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES;
    if (api.zeDeviceGetCacheProperties(entry.handle, &count, caches.data()) ==
        ZE_RESULT_SUCCESS)
      for (uint32_t i = 0; i < count && i < caches.size(); ++i)
        entry.cacheBytes =
            std::max<uint64_t>(entry.cacheBytes, caches[i].cacheSize);
  }

  count = 0;
  TK_ZE_RETURN_IF_ERROR(zeDeviceGetCommandQueueGroupProperties, entry.handle,
                        &count, nullptr);
  std::vector<ze_command_queue_group_properties_t> groups(count);
  for (ze_command_queue_group_properties_t &group : groups)
    group.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
  if (count)
    TK_ZE_RETURN_IF_ERROR(zeDeviceGetCommandQueueGroupProperties, entry.handle,
                          &count, groups.data());
  usable = false;
  for (uint32_t i = 0; i < count && i < groups.size(); ++i)
    if (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
      entry.computeOrdinal = i;
      usable = true;
      break;
    }

  entry.target = targetForPciDeviceId(entry.properties.deviceId);
  entry.subgroupSize = presetSubgroupSize(entry.target);
  if (entry.subgroupSize == 0) {
    // No preset: 16, the width Intel's own compilers prefer on Xe, where
    // the device has it; otherwise its largest.
    for (uint32_t i = 0;
         i < entry.compute.numSubGroupSizes && i < ZE_SUBGROUPSIZE_COUNT; ++i) {
      int32_t size = static_cast<int32_t>(entry.compute.subGroupSizes[i]);
      if (size == 16) {
        entry.subgroupSize = 16;
        break;
      }
      entry.subgroupSize = std::max(entry.subgroupSize, size);
    }
  }
  return TK_SUCCESS;
}

tk_status initializeOnce(Devices &state, std::string &error) {
  // Level Zero reaches Intel GPUs through DRM render nodes.
  if (tk::plugin::noDeviceNode("xe", tk::plugin::getDeviceNodes("xe"), error))
    return TK_ERROR_NO_DEVICE;
  if (tk_status status = openDriver(error))
    return status;
  std::vector<std::unique_ptr<DeviceState>> found;
  uint32_t seen = 0;
  std::string unusable;
  for (ze_driver_handle_t driverHandle : drivers()) {
    ze_api_version_t version = static_cast<ze_api_version_t>(0);
    TK_ZE_RETURN_IF_ERROR(zeDriverGetApiVersion, driverHandle, &version);
    uint32_t count = 0;
    TK_ZE_RETURN_IF_ERROR(zeDeviceGet, driverHandle, &count, nullptr);
    std::vector<ze_device_handle_t> handles(count);
    if (count)
      TK_ZE_RETURN_IF_ERROR(zeDeviceGet, driverHandle, &count, handles.data());
    handles.resize(count);
    seen += count;
    // One context per driver, made once it has a device tk keeps, and
    // never destroyed: modules, memory and events of every later call live
    // in it (as CUDA's primary context). One left by a failure further on
    // is reclaimed with the process.
    ze_context_handle_t context = nullptr;
    for (ze_device_handle_t handle : handles) {
      auto entry = std::make_unique<DeviceState>();
      entry->driver = driverHandle;
      entry->handle = handle;
      if (tk_status status =
              readDeviceProperties(handle, version, *entry, error))
        return status;
      if (entry->properties.type != ZE_DEVICE_TYPE_GPU ||
          entry->properties.vendorId != kIntelVendorId)
        continue;
      bool usable = false;
      if (tk_status status = readDeviceDetails(*entry, usable, error))
        return status;
      if (!usable) {
        unusable += std::string(unusable.empty() ? "" : ", ") +
                    entry->properties.name + " has no compute engine";
        continue;
      }
      if (!context) {
        ze_context_desc_t desc = {};
        desc.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
        TK_ZE_RETURN_IF_ERROR(zeContextCreate, driverHandle, &desc, &context);
      }
      entry->context = context;
      found.push_back(std::move(entry));
    }
  }
  if (found.empty()) {
    error = "tk-xe: " + runtimeDescription() + " found no Intel GPU: ";
    if (seen == 0)
      error += "its drivers report no device";
    else
      error += "its drivers report " + std::to_string(seen) +
               " devices, none an Intel GPU tk can use";
    if (!unusable.empty())
      error += " (" + unusable + ")";
    return TK_ERROR_NO_DEVICE;
  }
  state.count = static_cast<int32_t>(found.size());
  state.states = std::move(found);
  return TK_SUCCESS;
}

/// Copies `text` into the fixed-size field `out`, always terminated.
template <size_t N> void copyString(char (&out)[N], std::string_view text) {
  size_t length = std::min(text.size(), N - 1);
  std::memcpy(out, text.data(), length);
  out[length] = '\0';
}

int32_t clampToInt32(uint64_t value) {
  return static_cast<int32_t>(
      std::min<uint64_t>(value, std::numeric_limits<int32_t>::max()));
}

//===--- Events the host waits for ----------------------------------------===//

/// A pool of one host-visible event, and the event.
tk_status createHostEvent(const DeviceState &state,
                          ze_event_pool_handle_t &pool,
                          ze_event_handle_t &event, std::string &error) {
  const DriverApi &api = driver();
  ze_event_pool_desc_t poolDesc = {};
  poolDesc.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
  // Host-visible: the host waits for the event and resets it.
  poolDesc.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
  poolDesc.count = 1;
  ze_device_handle_t handle = state.handle;
  TK_ZE_RETURN_IF_ERROR(zeEventPoolCreate, state.context, &poolDesc, 1, &handle,
                        &pool);
  ze_event_desc_t desc = {};
  desc.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
  desc.index = 0;
  // Host scope: when the host sees the event signalled, what the device
  // wrote before it (kernels' results, a timestamp) is visible to the host.
  desc.signal = ZE_EVENT_SCOPE_FLAG_HOST;
  desc.wait = ZE_EVENT_SCOPE_FLAG_HOST;
  ze_result_t result = api.zeEventCreate(pool, &desc, &event);
  if (result != ZE_RESULT_SUCCESS) {
    api.zeEventPoolDestroy(pool);
    pool = nullptr;
    event = nullptr;
    return checkZe(result, "zeEventCreate", error);
  }
  return TK_SUCCESS;
}

void destroyHostEvent(ze_event_pool_handle_t pool, ze_event_handle_t event) {
  // Nothing to report to: the callers are destroying.
  if (event)
    driver().zeEventDestroy(event);
  if (pool)
    driver().zeEventPoolDestroy(pool);
}

tk_status waitForEvent(ze_event_handle_t event, std::string &error) {
  ze_result_t result;
  do {
    // UINT64_MAX waits without a limit; NOT_READY is retried in case a
    // driver caps the wait.
    result = driver().zeEventHostSynchronize(event, UINT64_MAX);
  } while (result == ZE_RESULT_NOT_READY);
  return checkZe(result, "zeEventHostSynchronize", error);
}

//===--- Streams ----------------------------------------------------------===//

tk_status createImmediateList(const DeviceState &state,
                              ze_command_queue_mode_t mode,
                              ze_command_list_handle_t &list,
                              std::string &error) {
  ze_command_queue_desc_t desc = {};
  desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  desc.ordinal = state.computeOrdinal;
  desc.index = 0;
  // No flags: ZE_COMMAND_QUEUE_FLAG_IN_ORDER (API 1.7) is not in Debian
  // 12's header, and older drivers may refuse it; beginStreamWork's
  // barriers give the same order on every driver.
  desc.flags = 0;
  desc.mode = mode;
  desc.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
  TK_ZE_RETURN_IF_ERROR(zeCommandListCreateImmediate, state.context,
                        state.handle, &desc, &list);
  return TK_SUCCESS;
}

/// A Stream on `list`, or on a new asynchronous list when `list` is NULL
/// (then owned).
tk_status makeStream(const DeviceState &state, int32_t device,
                     ze_command_list_handle_t list,
                     std::unique_ptr<Stream> &out, std::string &error) {
  auto stream = std::make_unique<Stream>();
  stream->device = device;
  stream->owned = list == nullptr;
  if (stream->owned) {
    if (tk_status status = createImmediateList(
            state, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, stream->list, error))
      return status;
  } else {
    stream->list = list;
  }
  if (tk_status status =
          createHostEvent(state, stream->syncPool, stream->syncEvent, error)) {
    if (stream->owned)
      driver().zeCommandListDestroy(stream->list);
    return status;
  }
  out = std::move(stream);
  return TK_SUCCESS;
}

void releaseStream(Stream &stream) {
  destroyHostEvent(stream.syncPool, stream.syncEvent);
  stream.syncPool = nullptr;
  stream.syncEvent = nullptr;
  if (stream.owned && stream.list)
    driver().zeCommandListDestroy(stream.list);
  stream.list = nullptr;
}

/// Waits for the work on `stream`'s list; the caller holds stream.mutex.
/// Level Zero 1.0 cannot wait for an immediate list (no
/// zeCommandListHostSynchronize before API 1.6, and Debian 12's loader
/// lacks it), so a barrier that signals the stream's event is appended and
/// the host waits for the event.
tk_status drainLocked(Stream &stream, std::string &error) {
  // A wrapped list also holds the caller's work, which tk does not see
  // appended: it is always waited for.
  if (stream.owned && !stream.pending)
    return TK_SUCCESS;
  // Reset first: after a wait that failed, the event may still be
  // signalled, and the next wait would return at once.
  TK_ZE_RETURN_IF_ERROR(zeEventHostReset, stream.syncEvent);
  TK_ZE_RETURN_IF_ERROR(zeCommandListAppendBarrier, stream.list,
                        stream.syncEvent, 0, nullptr);
  if (tk_status status = waitForEvent(stream.syncEvent, error))
    return status;
  stream.pending = false;
  return TK_SUCCESS;
}

/// Waits for each of tk's own streams of the device.
tk_status drainOwnedStreams(DeviceState &state, std::string &error) {
  std::lock_guard<std::mutex> registry(state.streamsMutex);
  for (Stream *stream : state.streams) {
    std::lock_guard<std::mutex> lock(stream->mutex);
    if (tk_status status = drainLocked(*stream, error))
      return status;
  }
  return TK_SUCCESS;
}

void registerStream(DeviceState &state, Stream *stream) {
  std::lock_guard<std::mutex> registry(state.streamsMutex);
  state.streams.push_back(stream);
}

void unregisterStream(DeviceState &state, Stream *stream) {
  std::lock_guard<std::mutex> registry(state.streamsMutex);
  state.streams.erase(
      std::remove(state.streams.begin(), state.streams.end(), stream),
      state.streams.end());
}

tk_status defaultStreamOf(DeviceState &state, int32_t device, Stream *&out,
                          std::string &error) {
  std::lock_guard<std::mutex> lock(state.defaultMutex);
  if (!state.defaultStream) {
    std::unique_ptr<Stream> stream;
    if (tk_status status = makeStream(state, device, nullptr, stream, error))
      return status;
    registerStream(state, stream.get());
    state.defaultStream = stream.release();
  }
  out = state.defaultStream;
  return TK_SUCCESS;
}

//===--- Events -----------------------------------------------------------===//

struct Event {
  int32_t device = 0;
  ze_event_pool_handle_t pool = nullptr;
  ze_event_handle_t event = nullptr;
  /// Host memory (zeMemAllocHost) the device writes its global timestamp
  /// into when the work recorded before the event is done.
  uint64_t *timestamp = nullptr;
  bool recorded = false;
  std::mutex mutex;
};

void releaseEvent(const DeviceState &state, Event &event) {
  if (event.timestamp)
    driver().zeMemFree(state.context, event.timestamp);
  event.timestamp = nullptr;
  destroyHostEvent(event.pool, event.event);
  event.pool = nullptr;
  event.event = nullptr;
}

tk_status resolveEvent(int32_t device, void *handle, Event *&out,
                       std::string &error) {
  if (!handle) {
    error = "tk-xe: the event is NULL";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  out = static_cast<Event *>(handle);
  if (out->device != device) {
    error = "tk-xe: the event belongs to device " +
            std::to_string(out->device) + ", not device " +
            std::to_string(device);
    return TK_ERROR_INVALID_ARGUMENT;
  }
  return TK_SUCCESS;
}

/// The event's timestamp once its record finished.
tk_status readTimestamp(Event &event, const char *role, uint64_t &ticks,
                        std::string &error) {
  std::lock_guard<std::mutex> lock(event.mutex);
  if (!event.recorded) {
    error = std::string("tk-xe: the ") + role + " event was never recorded";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  if (tk_status status = waitForEvent(event.event, error))
    return status;
  // Written by the device; the event's host scope made it visible.
  ticks = *static_cast<volatile uint64_t *>(event.timestamp);
  return TK_SUCCESS;
}

} // namespace

//===--- Devices ----------------------------------------------------------===//

tk_status initializeDevices(std::string &error) {
  Devices &state = devices();
  std::call_once(state.initOnce, [&] {
    state.initStatus = initializeOnce(state, state.initError);
    if (state.initStatus != TK_SUCCESS) {
      state.count = 0;
      state.states.clear();
    }
  });
  if (state.initStatus != TK_SUCCESS)
    error = state.initError;
  return state.initStatus;
}

int32_t deviceCount() { return devices().count; }

tk_status checkDevice(int32_t device, std::string &error) {
  int32_t count = deviceCount();
  if (count == 0) {
    error = "tk-xe: no Intel GPU (initialize did not find one)";
    return TK_ERROR_NO_DEVICE;
  }
  if (device < 0 || device >= count) {
    error = "tk-xe: device " + std::to_string(device) +
            " does not exist (there are " + std::to_string(count) + ")";
    return TK_ERROR_NOT_FOUND;
  }
  return TK_SUCCESS;
}

std::string targetForPciDeviceId(uint32_t pciDeviceId) {
  for (const PciIdRange &range : kTargetsByPciId)
    if (pciDeviceId >= range.first && pciDeviceId <= range.last)
      return range.target;
  return "";
}

tk_status deviceTarget(int32_t device, std::string &target,
                       std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  target = stateOf(device).target;
  return TK_SUCCESS;
}

tk_status deviceSubgroupSize(int32_t device, int32_t &subgroupSize,
                             std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  subgroupSize = stateOf(device).subgroupSize;
  return TK_SUCCESS;
}

bool DeviceLimits::supportsSubgroupSize(uint32_t size) const {
  for (uint32_t i = 0; i < numSubgroupSizes && i < ZE_SUBGROUPSIZE_COUNT; ++i)
    if (subgroupSizes[i] == size)
      return true;
  return false;
}

std::string DeviceLimits::subgroupSizesText() const {
  uint32_t count = std::min<uint32_t>(numSubgroupSizes, ZE_SUBGROUPSIZE_COUNT);
  if (count == 0)
    return "none";
  std::string text;
  for (uint32_t i = 0; i < count; ++i) {
    if (i > 0)
      text += i + 1 == count ? " and " : ", ";
    text += std::to_string(subgroupSizes[i]);
  }
  return text;
}

tk_status deviceLimits(int32_t device, DeviceLimits &out, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  const DeviceState &state = stateOf(device);
  out = DeviceLimits();
  out.name = state.properties.name;
  out.threadsPerEU = state.properties.numThreadsPerEU;
  out.eusPerXeCore = state.properties.numEUsPerSubslice;
  out.physicalSimdWidth = state.properties.physicalEUSimdWidth;
  out.maxGroupSize = state.compute.maxTotalGroupSize;
  out.maxSharedLocalMemory = state.compute.maxSharedLocalMemory;
  out.numSubgroupSizes =
      std::min<uint32_t>(state.compute.numSubGroupSizes, ZE_SUBGROUPSIZE_COUNT);
  std::copy(state.compute.subGroupSizes,
            state.compute.subGroupSizes + out.numSubgroupSizes,
            out.subgroupSizes);
  return TK_SUCCESS;
}

tk_status deviceHandles(int32_t device, ze_context_handle_t &context,
                        ze_device_handle_t &handle, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  context = stateOf(device).context;
  handle = stateOf(device).handle;
  return TK_SUCCESS;
}

tk_status queryDeviceProps(int32_t device, tk_device_props *out,
                           std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  const DeviceState &state = stateOf(device);
  const ze_device_properties_t &properties = state.properties;
  tk_device_props props;
  std::memset(&props, 0, sizeof(props));

  copyString(props.name, std::string_view(properties.name,
                                          strnlen(properties.name,
                                                  sizeof(properties.name))));
  copyString(props.vendor, "Intel");
  copyString(props.backend, "xe");
  // The target packages carry native code for; a GPU without one is named
  // by its PCI device id, so that caches keyed on arch still tell GPUs
  // apart.
  if (!state.target.empty()) {
    copyString(props.arch, state.target);
  } else {
    char arch[32];
    std::snprintf(arch, sizeof(arch), "xe-0x%04x", properties.deviceId);
    copyString(props.arch, arch);
  }
  // Compute units are Xe-cores (sub-slices): a workgroup runs on one, as a
  // CUDA block on one SM, and executableOccupancy counts per Xe-core.
  props.compute_units = clampToInt32(uint64_t(properties.numSlices) *
                                     properties.numSubslicesPerSlice);
  props.warp_size = state.subgroupSize;
  // The Xe-core's register file in 32-bit registers: every hardware thread
  // of every EU has 128 GRFs (the default mode), and a GRF holds one 32-bit
  // value per lane of the EU's physical SIMD width (64 bytes on pvc, 32 on
  // dg2): 8 x 8 x 128 x 16 = 131072 on pvc, compiler/TargetInfo.cpp's
  // figure.
  props.registers_per_cu = clampToInt32(
      uint64_t(properties.numEUsPerSubslice) * properties.numThreadsPerEU *
      kDefaultGrfs * properties.physicalEUSimdWidth);
  // Level Zero has no opt-in above a workgroup's SLM limit.
  props.shared_memory_per_block = state.compute.maxSharedLocalMemory;
  props.max_threads_per_block = clampToInt32(state.compute.maxTotalGroupSize);
  props.max_grid[0] = clampToInt32(state.compute.maxGroupCountX);
  props.max_grid[1] = clampToInt32(state.compute.maxGroupCountY);
  props.max_grid[2] = clampToInt32(state.compute.maxGroupCountZ);
  props.clock_mhz = clampToInt32(properties.coreClockRate); // MHz
  props.memory_bus_width_bits = clampToInt32(state.memoryBusWidthBits);
  props.l2_cache_bytes = static_cast<int64_t>(state.cacheBytes);
  props.total_memory_bytes = static_cast<int64_t>(state.totalMemoryBytes);

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
  DeviceState &state = stateOf(device);
  ze_device_mem_alloc_desc_t desc = {};
  desc.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
  desc.ordinal = 0;
  // Above maxMemAllocSize (4 GiB on some drivers, though the device has
  // more) Level Zero allocates only when asked to relax the limit. A kernel
  // that indexes past 4 GiB of one buffer would also need its module built
  // with -ze-opt-greater-than-4GB-buffer-required, which loadExecutable
  // does not pass.
  ze_relaxed_allocation_limits_exp_desc_t relaxed = {};
  relaxed.stype = ZE_STRUCTURE_TYPE_RELAXED_ALLOCATION_LIMITS_EXP_DESC;
  relaxed.flags = ZE_RELAXED_ALLOCATION_LIMITS_EXP_FLAG_MAX_SIZE;
  if (bytes > state.properties.maxMemAllocSize)
    desc.pNext = &relaxed;
  // A zero-byte allocation is refused (ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
  // a zero-sized buffer still needs a distinct pointer.
  void *pointer = nullptr;
  ze_result_t result =
      driver().zeMemAllocDevice(state.context, &desc, bytes ? bytes : 1,
                                kAllocationAlignment, state.handle, &pointer);
  if (result == ZE_RESULT_ERROR_UNSUPPORTED_SIZE) {
    error = "tk-xe: device " + std::to_string(device) + " (" +
            state.properties.name + ") cannot allocate " +
            std::to_string(bytes) + " bytes at once (maxMemAllocSize " +
            std::to_string(state.properties.maxMemAllocSize) +
            "): " + describeZeError(result);
    return TK_ERROR_OUT_OF_MEMORY;
  }
  if (tk_status status = checkZe(result, "zeMemAllocDevice", error))
    return status;
  *out = pointer;
  return TK_SUCCESS;
}

tk_status freeMemory(int32_t device, void *pointer, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  if (!pointer)
    return TK_SUCCESS;
  DeviceState &state = stateOf(device);
  // zeMemFree does not wait for kernels still using the memory (cuMemFree
  // and hipFree do): tk's streams are waited for first.
  if (tk_status status = drainOwnedStreams(state, error))
    return status;
  TK_ZE_RETURN_IF_ERROR(zeMemFree, state.context, pointer);
  return TK_SUCCESS;
}

tk_status copyMemory(int32_t device, CopyKind kind, void *dst, const void *src,
                     size_t bytes, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  if (bytes == 0)
    return TK_SUCCESS;
  if (!dst || !src) {
    error = "tk-xe: memcpy with a NULL pointer";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  DeviceState &state = stateOf(device);
  // As CUDA's legacy default stream: a copy follows the work of tk's
  // streams, so reading a buffer after an asynchronous launch sees the
  // kernel's results.
  if (tk_status status = drainOwnedStreams(state, error))
    return status;
  std::lock_guard<std::mutex> lock(state.copyMutex);
  if (!state.copyList) {
    // Synchronous: each append returns once its copy is complete, which
    // is what the ABI's copies promise.
    if (tk_status status = createImmediateList(
            state, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, state.copyList, error))
      return status;
  }
  // Level Zero tells the direction from the pointers (host memory or a
  // device allocation): `kind` only names the copy in errors.
  ze_result_t result = driver().zeCommandListAppendMemoryCopy(
      state.copyList, dst, src, bytes, nullptr, 0, nullptr);
  if (result != ZE_RESULT_SUCCESS) {
    const char *direction = kind == CopyKind::HostToDevice ? "host to device"
                            : kind == CopyKind::DeviceToHost
                                ? "device to host"
                                : "device to device";
    checkZe(result, "zeCommandListAppendMemoryCopy", error);
    error += " (" + std::to_string(bytes) + " bytes, " + direction + ")";
    return statusOfZeError(result);
  }
  return TK_SUCCESS;
}

//===--- Streams ----------------------------------------------------------===//

tk_status resolveStream(int32_t device, void *handle, Stream *&out,
                        std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  if (!handle)
    return defaultStreamOf(stateOf(device), device, out, error);
  out = static_cast<Stream *>(handle);
  if (out->device != device) {
    error = "tk-xe: the stream belongs to device " +
            std::to_string(out->device) + ", not device " +
            std::to_string(device);
    return TK_ERROR_INVALID_ARGUMENT;
  }
  return TK_SUCCESS;
}

tk_status beginStreamWork(Stream &stream, std::string &error) {
  // Without it, Level Zero may start the next command before the previous
  // one finished (a kernel reading what the one before writes).
  TK_ZE_RETURN_IF_ERROR(zeCommandListAppendBarrier, stream.list, nullptr, 0,
                        nullptr);
  stream.pending = true;
  return TK_SUCCESS;
}

tk_status createStream(int32_t device, void **out, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  DeviceState &state = stateOf(device);
  std::unique_ptr<Stream> stream;
  if (tk_status status = makeStream(state, device, nullptr, stream, error))
    return status;
  registerStream(state, stream.get());
  *out = stream.release();
  return TK_SUCCESS;
}

tk_status destroyStream(int32_t device, void *handle, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  if (!handle)
    return TK_SUCCESS; // the default stream lives as long as the process
  Stream *stream = nullptr;
  if (tk_status status = resolveStream(device, handle, stream, error))
    return status;
  if (stream->owned)
    unregisterStream(stateOf(device), stream);
  std::unique_ptr<Stream> owned(stream);
  tk_status status = TK_SUCCESS;
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    // A list must not be destroyed while the device runs its commands.
    // After a lost device nothing runs any more, so destruction goes on.
    if (stream->owned)
      status = drainLocked(*stream, error);
    releaseStream(*stream);
  }
  return status;
}

tk_status synchronizeStream(int32_t device, void *handle, std::string &error) {
  Stream *stream = nullptr;
  if (tk_status status = resolveStream(device, handle, stream, error))
    return status;
  std::lock_guard<std::mutex> lock(stream->mutex);
  return drainLocked(*stream, error);
}

tk_status wrapStream(int32_t device, void *handle, void **out,
                     std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  if (!handle) {
    error = "tk-xe: stream_wrap needs a ze_command_list_handle_t";
    return TK_ERROR_INVALID_ARGUMENT;
  }
  std::unique_ptr<Stream> stream;
  if (tk_status status = makeStream(
          stateOf(device), device,
          static_cast<ze_command_list_handle_t>(handle), stream, error))
    return status;
  *out = stream.release();
  return TK_SUCCESS;
}

tk_status synchronizeDevice(int32_t device, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  return drainOwnedStreams(stateOf(device), error);
}

//===--- Events -----------------------------------------------------------===//

tk_status createEvent(int32_t device, void **out, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  const DeviceState &state = stateOf(device);
  auto event = std::make_unique<Event>();
  event->device = device;
  if (tk_status status =
          createHostEvent(state, event->pool, event->event, error))
    return status;
  ze_host_mem_alloc_desc_t desc = {};
  desc.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
  void *timestamp = nullptr;
  ze_result_t result = driver().zeMemAllocHost(
      state.context, &desc, sizeof(uint64_t), sizeof(uint64_t), &timestamp);
  if (result != ZE_RESULT_SUCCESS) {
    releaseEvent(state, *event);
    return checkZe(result, "zeMemAllocHost", error);
  }
  event->timestamp = static_cast<uint64_t *>(timestamp);
  *event->timestamp = 0;
  *out = event.release();
  return TK_SUCCESS;
}

tk_status destroyEvent(int32_t device, void *handle, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  if (!handle)
    return TK_SUCCESS;
  Event *event = nullptr;
  if (tk_status status = resolveEvent(device, handle, event, error))
    return status;
  std::unique_ptr<Event> owned(event);
  tk_status status = TK_SUCCESS;
  {
    std::lock_guard<std::mutex> lock(event->mutex);
    // The device must not write a timestamp into freed memory.
    if (event->recorded)
      status = waitForEvent(event->event, error);
    releaseEvent(stateOf(device), *event);
  }
  return status;
}

tk_status recordEvent(int32_t device, void *handle, void *streamHandle,
                      std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  Event *event = nullptr;
  if (tk_status status = resolveEvent(device, handle, event, error))
    return status;
  Stream *stream = nullptr;
  if (tk_status status = resolveStream(device, streamHandle, stream, error))
    return status;

  std::lock_guard<std::mutex> eventLock(event->mutex);
  // The event and its timestamp are reused: the last record must have
  // finished, since resetting an event the device may still signal is
  // undefined.
  if (event->recorded) {
    if (tk_status status = waitForEvent(event->event, error))
      return status;
    event->recorded = false;
  }
  TK_ZE_RETURN_IF_ERROR(zeEventHostReset, event->event);
  std::lock_guard<std::mutex> streamLock(stream->mutex);
  // The barrier holds the timestamp back until the work before it is done.
  if (tk_status status = beginStreamWork(*stream, error))
    return status;
  TK_ZE_RETURN_IF_ERROR(zeCommandListAppendWriteGlobalTimestamp, stream->list,
                        event->timestamp, event->event, 0, nullptr);
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
  return waitForEvent(event->event, error);
}

tk_status eventElapsedMs(int32_t device, void *startHandle, void *endHandle,
                         float *out, std::string &error) {
  if (tk_status status = checkDevice(device, error))
    return status;
  const DeviceState &state = stateOf(device);
  Event *start = nullptr, *end = nullptr;
  if (tk_status status = resolveEvent(device, startHandle, start, error))
    return status;
  if (tk_status status = resolveEvent(device, endHandle, end, error))
    return status;
  if (state.timerTicksPerSecond <= 0) {
    error = std::string("tk-xe: ") + state.properties.name +
            " reports no timer resolution: events cannot be timed";
    return TK_ERROR_UNSUPPORTED;
  }
  // One event at a time: two threads timing (a, b) and (b, a) cannot
  // deadlock.
  uint64_t startTicks = 0, endTicks = 0;
  if (tk_status status = readTimestamp(*start, "start", startTicks, error))
    return status;
  if (tk_status status = readTimestamp(*end, "end", endTicks, error))
    return status;
  // The timer keeps timestampValidBits bits and wraps: the difference,
  // modulo 2^bits, read as a signed number (end may precede start).
  uint32_t bits = state.timestampValidBits;
  int64_t ticks;
  if (bits == 0 || bits >= 64) {
    ticks = static_cast<int64_t>(endTicks - startTicks);
  } else {
    uint64_t modulus = uint64_t(1) << bits;
    uint64_t difference = (endTicks - startTicks) & (modulus - 1);
    ticks = difference >= modulus / 2 ? static_cast<int64_t>(difference) -
                                            static_cast<int64_t>(modulus)
                                      : static_cast<int64_t>(difference);
  }
  *out = static_cast<float>(static_cast<double>(ticks) * 1e3 /
                            state.timerTicksPerSecond);
  return TK_SUCCESS;
}

} // namespace tk::xe
