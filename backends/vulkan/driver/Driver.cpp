//===- Driver.cpp - libvulkan.so.1 and the instance -------------*- C++ -*-===//
//
// dlopen of the loader and resolution of VulkanSymbols.def, VkResult names
// and statuses, and the instance with its optional validation layer.
//
//===----------------------------------------------------------------------===//

#include "driver/Driver.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <vector>

namespace tk::vulkan {

namespace {

/// The library name the loader packages install (libvulkan1 on Debian); the
/// unversioned libvulkan.so comes only with development packages.
constexpr const char *kLoaderLibrary = "libvulkan.so.1";

constexpr const char *kValidationLayer = "VK_LAYER_KHRONOS_validation";

VulkanApi vulkanApi;

/// The messenger of the one instance (VK_NULL_HANDLE without validation).
VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;

std::atomic<uint64_t> validationMessages{0};

struct OpenOutcome {
  tk_status status = TK_SUCCESS;
  std::string error;
};

OpenOutcome openOnce() {
  OpenOutcome outcome;
  // RTLD_LOCAL: the loader's symbols stay out of the global namespace, where
  // they could satisfy (or clash with) a libvulkan the application links.
  void *library = dlopen(kLoaderLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *reason = dlerror();
    outcome.status = TK_ERROR_NO_DEVICE;
    outcome.error = std::string("tk-vulkan: Vulkan loader '") + kLoaderLibrary +
                    "' not found: install the Vulkan loader (libvulkan1) and "
                    "a driver (" +
                    (reason ? reason : "no reason given") + ")";
    return outcome;
  }
  VulkanApi api;
  std::string missing;
  auto note = [&missing](const char *name) {
    missing += missing.empty() ? name : std::string(", ") + name;
  };
#define TK_VK_LOADER(name)                                                     \
  api.name = reinterpret_cast<PFN_##name>(dlsym(library, #name));              \
  if (!api.name)                                                               \
    note(#name);
#include "driver/VulkanSymbols.def"
  if (!missing.empty()) {
    // The library stays open, as the CUDA plugin's: unloading a library
    // whose constructors ran is not always safe, and nothing is gained.
    outcome.status = TK_ERROR_NO_DEVICE;
    outcome.error = std::string("tk-vulkan: the Vulkan loader '") +
                    kLoaderLibrary + "' lacks " + missing;
    return outcome;
  }
#define TK_VK_GLOBAL(name)                                                     \
  api.name =                                                                   \
      reinterpret_cast<PFN_##name>(api.vkGetInstanceProcAddr(nullptr, #name)); \
  if (!api.name)                                                               \
    note(#name);
#include "driver/VulkanSymbols.def"
  if (!missing.empty()) {
    // vkEnumerateInstanceVersion is what a Vulkan 1.0 loader lacks.
    outcome.status = TK_ERROR_NO_DEVICE;
    outcome.error = std::string("tk-vulkan: the Vulkan loader '") +
                    kLoaderLibrary + "' lacks " + missing +
                    ": it is older than Vulkan 1.2, which tk needs (update "
                    "libvulkan1)";
    return outcome;
  }
  vulkanApi = api;
  return outcome;
}

VKAPI_ATTR VkBool32 VKAPI_CALL
onValidationMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                    VkDebugUtilsMessageTypeFlagsEXT,
                    const VkDebugUtilsMessengerCallbackDataEXT *data, void *) {
  validationMessages.fetch_add(1, std::memory_order_relaxed);
  const char *level = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
                          ? "error"
                          : "warning";
  // One fprintf per message: lines of messages from different threads do
  // not interleave.
  std::fprintf(stderr, "tk-vulkan: validation: %s: %s\n", level,
               data && data->pMessage ? data->pMessage : "(no message)");
  // VK_FALSE: the call that caused the message goes on, as it would without
  // the layer; tk reports the driver's own result.
  return VK_FALSE;
}

VkDebugUtilsMessengerCreateInfoEXT messengerInfo() {
  VkDebugUtilsMessengerCreateInfoEXT info = {};
  info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = onValidationMessage;
  return info;
}

/// Whether the loader (or, with `layer`, that layer) offers extension
/// `name`.
tk_status hasInstanceExtension(const char *layer, const char *name, bool &found,
                               std::string &error) {
  std::vector<VkExtensionProperties> extensions;
  VkResult result;
  do {
    uint32_t count = 0;
    TK_VK_RETURN_IF_ERROR(vk(), vkEnumerateInstanceExtensionProperties, layer,
                          &count, nullptr);
    extensions.resize(count);
    result = vk().vkEnumerateInstanceExtensionProperties(layer, &count,
                                                         extensions.data());
    extensions.resize(count);
  } while (result == VK_INCOMPLETE); // the list grew between the two calls
  if (tk_status status =
          checkVk(result, "vkEnumerateInstanceExtensionProperties", error))
    return status;
  found = false;
  for (const VkExtensionProperties &extension : extensions)
    found = found || std::strcmp(extension.extensionName, name) == 0;
  return TK_SUCCESS;
}

tk_status hasValidationLayer(bool &found, std::string &error) {
  std::vector<VkLayerProperties> layers;
  VkResult result;
  do {
    uint32_t count = 0;
    TK_VK_RETURN_IF_ERROR(vk(), vkEnumerateInstanceLayerProperties, &count,
                          nullptr);
    layers.resize(count);
    result = vk().vkEnumerateInstanceLayerProperties(&count, layers.data());
    layers.resize(count);
  } while (result == VK_INCOMPLETE);
  if (tk_status status =
          checkVk(result, "vkEnumerateInstanceLayerProperties", error))
    return status;
  found = false;
  for (const VkLayerProperties &layer : layers)
    found = found || std::strcmp(layer.layerName, kValidationLayer) == 0;
  return TK_SUCCESS;
}

std::string versionString(uint32_t version) {
  return std::to_string(VK_API_VERSION_MAJOR(version)) + "." +
         std::to_string(VK_API_VERSION_MINOR(version)) + "." +
         std::to_string(VK_API_VERSION_PATCH(version));
}

} // namespace

tk_status openLoader(std::string &error) {
  static std::once_flag once;
  static OpenOutcome outcome;
  std::call_once(once, [] { outcome = openOnce(); });
  if (outcome.status != TK_SUCCESS)
    error = outcome.error;
  return outcome.status;
}

const VulkanApi &vk() { return vulkanApi; }

const char *vkResultName(VkResult result) {
  switch (result) {
  case VK_SUCCESS:
    return "VK_SUCCESS";
  case VK_NOT_READY:
    return "VK_NOT_READY";
  case VK_TIMEOUT:
    return "VK_TIMEOUT";
  case VK_EVENT_SET:
    return "VK_EVENT_SET";
  case VK_EVENT_RESET:
    return "VK_EVENT_RESET";
  case VK_INCOMPLETE:
    return "VK_INCOMPLETE";
  case VK_PIPELINE_COMPILE_REQUIRED:
    return "VK_PIPELINE_COMPILE_REQUIRED";
#define TK_VK_ERROR(vulkan, tk)                                                \
  case vulkan:                                                                 \
    return #vulkan;
#include "driver/VulkanErrors.def"
  default:
    return "unknown VkResult";
  }
}

tk_status statusOfVkResult(VkResult result) {
  if (result >= 0)
    return TK_SUCCESS;
  switch (result) {
#define TK_VK_ERROR(vulkan, tk)                                                \
  case vulkan:                                                                 \
    return tk;
#include "driver/VulkanErrors.def"
  default:
    return TK_ERROR_DEVICE;
  }
}

tk_status checkVk(VkResult result, const char *call, std::string &error) {
  if (result >= 0)
    return TK_SUCCESS;
  error = std::string("tk-vulkan: ") + call +
          " failed: " + vkResultName(result) + " (" +
          std::to_string(static_cast<int>(result)) + ")";
  return statusOfVkResult(result);
}

bool validationRequested() {
  const char *value = std::getenv("TK_VULKAN_VALIDATION");
  return value && *value && std::strcmp(value, "0") != 0;
}

tk_status createInstance(VkInstance &instance, uint32_t &apiVersion,
                         std::string &error) {
  if (tk_status status = openLoader(error))
    return status;
  uint32_t loaderVersion = 0;
  TK_VK_RETURN_IF_ERROR(vk(), vkEnumerateInstanceVersion, &loaderVersion);
  if (loaderVersion < VK_API_VERSION_1_2) {
    error = "tk-vulkan: the Vulkan loader is version " +
            versionString(loaderVersion) +
            "; tk needs Vulkan 1.2 (update libvulkan1)";
    return TK_ERROR_NO_DEVICE;
  }
  // The newest version tk uses: 1.3 brings subgroup size control into core.
  // Devices of 1.2 still work under a 1.3 instance.
  apiVersion = loaderVersion >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3
                                                   : VK_API_VERSION_1_2;

  VkApplicationInfo application = {};
  application.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  application.pApplicationName = "tk";
  application.pEngineName = "tk";
  application.apiVersion = apiVersion;

  VkInstanceCreateInfo info = {};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pApplicationInfo = &application;

  const bool validation = validationRequested();
  const char *layers[] = {kValidationLayer};
  const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  // Chained into the instance's creation too, so that messages about
  // vkCreateInstance and vkDestroyInstance themselves are reported.
  VkDebugUtilsMessengerCreateInfoEXT debugInfo = messengerInfo();
  if (validation) {
    bool found = false;
    if (tk_status status = hasValidationLayer(found, error))
      return status;
    if (!found) {
      error = std::string("tk-vulkan: TK_VULKAN_VALIDATION is set but the "
                          "Vulkan loader finds no ") +
              kValidationLayer +
              " layer: install the package vulkan-validationlayers, or "
              "unset TK_VULKAN_VALIDATION";
      return TK_ERROR_UNSUPPORTED;
    }
    // The validation layer implements VK_EXT_debug_utils itself, so look in
    // its list too, not only the loader's.
    bool debugUtils = false;
    if (tk_status status = hasInstanceExtension(
            nullptr, VK_EXT_DEBUG_UTILS_EXTENSION_NAME, debugUtils, error))
      return status;
    if (!debugUtils)
      if (tk_status status = hasInstanceExtension(
              kValidationLayer, VK_EXT_DEBUG_UTILS_EXTENSION_NAME, debugUtils,
              error))
        return status;
    if (!debugUtils) {
      error = "tk-vulkan: TK_VULKAN_VALIDATION is set but neither the "
              "loader nor the validation layer offers " +
              std::string(VK_EXT_DEBUG_UTILS_EXTENSION_NAME) +
              ", through which tk reports the layer's messages";
      return TK_ERROR_UNSUPPORTED;
    }
    info.enabledLayerCount = 1;
    info.ppEnabledLayerNames = layers;
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = extensions;
    info.pNext = &debugInfo;
  }

  instance = VK_NULL_HANDLE;
  VkResult result = vk().vkCreateInstance(&info, nullptr, &instance);
  if (result != VK_SUCCESS) {
    // VK_ERROR_INCOMPATIBLE_DRIVER: no installed driver (ICD) speaks the
    // version asked for, typically none at all. Whatever the code, the
    // plugin itself is fine: no device.
    checkVk(result, "vkCreateInstance", error);
    if (result == VK_ERROR_INCOMPATIBLE_DRIVER)
      error += " (the Vulkan loader found no driver (ICD) it can use: none "
               "is installed for this machine's hardware)";
    instance = VK_NULL_HANDLE;
    return TK_ERROR_NO_DEVICE;
  }

  std::string missing;
#define TK_VK_INSTANCE(name)                                                   \
  vulkanApi.name = reinterpret_cast<PFN_##name>(                               \
      vulkanApi.vkGetInstanceProcAddr(instance, #name));                       \
  if (!vulkanApi.name)                                                         \
    missing += missing.empty() ? #name : ", " #name;
#define TK_VK_INSTANCE_OPTIONAL(name)                                          \
  vulkanApi.name = reinterpret_cast<PFN_##name>(                               \
      vulkanApi.vkGetInstanceProcAddr(instance, #name));
#include "driver/VulkanSymbols.def"
  if (!missing.empty()) {
    error = "tk-vulkan: the Vulkan loader gives no " + missing +
            " for a Vulkan " + versionString(apiVersion) + " instance";
    if (vulkanApi.vkDestroyInstance)
      vulkanApi.vkDestroyInstance(instance, nullptr);
    instance = VK_NULL_HANDLE;
    return TK_ERROR_NO_DEVICE;
  }

  if (validation && vulkanApi.vkCreateDebugUtilsMessengerEXT) {
    result = vulkanApi.vkCreateDebugUtilsMessengerEXT(instance, &debugInfo,
                                                      nullptr, &messenger);
    if (tk_status status =
            checkVk(result, "vkCreateDebugUtilsMessengerEXT", error)) {
      vulkanApi.vkDestroyInstance(instance, nullptr);
      instance = VK_NULL_HANDLE;
      messenger = VK_NULL_HANDLE;
      return status;
    }
  }
  return TK_SUCCESS;
}

void destroyInstance(VkInstance instance) {
  if (!instance)
    return;
  if (messenger && vulkanApi.vkDestroyDebugUtilsMessengerEXT)
    vulkanApi.vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
  messenger = VK_NULL_HANDLE;
  vulkanApi.vkDestroyInstance(instance, nullptr);
}

tk_status loadDeviceApi(VkDevice device, DeviceApi &api, std::string &error) {
  std::string missing;
#define TK_VK_DEVICE(name)                                                     \
  api.name =                                                                   \
      reinterpret_cast<PFN_##name>(vk().vkGetDeviceProcAddr(device, #name));   \
  if (!api.name)                                                               \
    missing += missing.empty() ? #name : ", " #name;
#define TK_VK_DEVICE_OPTIONAL(name)                                            \
  api.name =                                                                   \
      reinterpret_cast<PFN_##name>(vk().vkGetDeviceProcAddr(device, #name));
#include "driver/VulkanSymbols.def"
  if (!missing.empty()) {
    error = "tk-vulkan: the Vulkan driver gives no " + missing;
    return TK_ERROR_NO_DEVICE;
  }
  return TK_SUCCESS;
}

uint64_t validationMessageCount() {
  return validationMessages.load(std::memory_order_relaxed);
}

} // namespace tk::vulkan
