//===- Driver.h - libvulkan.so.1 and the instance, at run time --*- C++ -*-===//
//
// The Vulkan loader is never linked: the plugin opens libvulkan.so.1 with
// dlopen and resolves the commands of VulkanSymbols.def through
// vkGetInstanceProcAddr, so the plugin builds and loads on machines without
// Vulkan and reports "no device" there. vulkan.h is included for its types
// and PFN_ prototypes only (VK_NO_PROTOTYPES).
//
// One VkInstance serves the process. TK_VULKAN_VALIDATION=1 enables the
// Khronos validation layer with a debug-utils messenger that prints each
// warning and error to stderr and counts them, so tests can assert that a
// run broke none of the API's rules.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_VULKAN_DRIVER_DRIVER_H_
#define TK_BACKENDS_VULKAN_DRIVER_DRIVER_H_

#include "tk/tk.h"

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include "driver/CooperativeMatrixKHR.h"

#include <cstdint>
#include <string>

#ifndef VK_API_VERSION_1_3
#error "tk's Vulkan backend needs the Vulkan 1.3 headers (vulkan-headers)"
#endif

namespace tk::vulkan {

/// The loader's, global and instance-level commands of VulkanSymbols.def.
/// Instance-level pointers are NULL until createInstance succeeded.
struct VulkanApi {
#define TK_VK_LOADER(name) PFN_##name name = nullptr;
#define TK_VK_GLOBAL(name) PFN_##name name = nullptr;
#define TK_VK_INSTANCE(name) PFN_##name name = nullptr;
#include "driver/VulkanSymbols.def"
};

/// The device-level commands of VulkanSymbols.def for one VkDevice.
struct DeviceApi {
#define TK_VK_DEVICE(name) PFN_##name name = nullptr;
#include "driver/VulkanSymbols.def"
};

/// Opens libvulkan.so.1 and resolves the loader and global commands, once
/// per process; later calls return the first outcome. TK_ERROR_NO_DEVICE,
/// with the reason in `error`, when the library or a command is missing.
tk_status openLoader(std::string &error);

/// The table openLoader (and createInstance) filled.
const VulkanApi &vk();

/// The name of a VkResult ("VK_ERROR_DEVICE_LOST"), or "unknown VkResult".
const char *vkResultName(VkResult result);

/// The tk_status a VkResult is reported as (VulkanErrors.def); TK_SUCCESS
/// for VK_SUCCESS and the other non-negative results.
tk_status statusOfVkResult(VkResult result);

/// TK_SUCCESS for a non-negative result; otherwise the mapped status, with
/// `error` set to "tk-vulkan: <call> failed: VK_ERROR_DEVICE_LOST (-4)".
tk_status checkVk(VkResult result, const char *call, std::string &error);

/// Whether TK_VULKAN_VALIDATION asks for the validation layer (set and
/// neither empty nor "0").
bool validationRequested();

/// Creates the process's VkInstance (opening the loader first): Vulkan 1.3
/// when the loader has it, else 1.2; TK_ERROR_NO_DEVICE for an older loader
/// or when vkCreateInstance fails, TK_ERROR_UNSUPPORTED when validation is
/// requested but its layer is not installed. Fills the instance-level
/// commands of vk(). Called once, by initializeDevices; `apiVersion` is the
/// version the instance was created for (VK_MAKE_API_VERSION(0, 1, 3, 0)).
tk_status createInstance(VkInstance &instance, uint32_t &apiVersion,
                         std::string &error);

/// Destroys what createInstance made (the messenger, then the instance).
/// Only for an instance no device was created from.
void destroyInstance(VkInstance instance);

/// Resolves the device-level commands for `device` into `api`.
/// TK_ERROR_NO_DEVICE naming the commands the driver lacks.
tk_status loadDeviceApi(VkDevice device, DeviceApi &api, std::string &error);

/// Warnings and errors the validation messenger reported so far.
uint64_t validationMessageCount();

} // namespace tk::vulkan

/// Calls Vulkan command `name` of the table `api` (vk(), or a DeviceApi)
/// and returns from the enclosing function (whose `error` string receives
/// the message) when it returns an error code. Non-negative results
/// (VK_SUCCESS, VK_INCOMPLETE, VK_NOT_READY, ...) pass.
#define TK_VK_RETURN_IF_ERROR(api, name, ...)                                  \
  do {                                                                         \
    if (tk_status tkVkStatus =                                                 \
            ::tk::vulkan::checkVk((api).name(__VA_ARGS__), #name, error))      \
      return tkVkStatus;                                                       \
  } while (false)

#endif // TK_BACKENDS_VULKAN_DRIVER_DRIVER_H_
