//===- QueueWrapTest.cpp - tk on a caller's VkQueue, through tk.h ---------===//
//
// What a program that drives the GPU through Vulkan itself needs from tk:
// tk_device_get_native hands out tk's instance, physical device, device and
// queue family; a queue of that device, fetched by the program with
// vkGetDeviceQueue, becomes a tk stream (tk_stream_wrap) whose launches and
// events go to that queue, in the order the program submits its own work;
// a queue of any other VkDevice is refused with a message. Runs where tk sees
// a Vulkan device (lavapipe with TK_BACKEND=vulkan, as ctest sets).
//
//===----------------------------------------------------------------------===//

#include "tk/tk.h"

#include <gtest/gtest.h>

#include <vulkan/vulkan.h>

#include <dlfcn.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

#define CHECK_TK(call) ASSERT_EQ((call), TK_SUCCESS) << tk_last_error()

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The caller's own Vulkan entry points, as a program would load them.
struct CallerVulkan {
  PFN_vkGetInstanceProcAddr getInstanceProcAddr = nullptr;
  PFN_vkGetDeviceProcAddr getDeviceProcAddr = nullptr;
  PFN_vkGetDeviceQueue getDeviceQueue = nullptr;
  PFN_vkQueueSubmit queueSubmit = nullptr;
  PFN_vkQueueWaitIdle queueWaitIdle = nullptr;
  PFN_vkGetPhysicalDeviceQueueFamilyProperties getQueueFamilies = nullptr;
  PFN_vkCreateDevice createDevice = nullptr;

  bool load(VkInstance instance, VkDevice device) {
    void *loader = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!loader)
      return false;
    getInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(
        dlsym(loader, "vkGetInstanceProcAddr"));
    if (!getInstanceProcAddr)
      return false;
    auto instanceProc = [&](const char *name) {
      return getInstanceProcAddr(instance, name);
    };
    getDeviceProcAddr = reinterpret_cast<PFN_vkGetDeviceProcAddr>(
        instanceProc("vkGetDeviceProcAddr"));
    getQueueFamilies =
        reinterpret_cast<PFN_vkGetPhysicalDeviceQueueFamilyProperties>(
            instanceProc("vkGetPhysicalDeviceQueueFamilyProperties"));
    createDevice =
        reinterpret_cast<PFN_vkCreateDevice>(instanceProc("vkCreateDevice"));
    if (!getDeviceProcAddr)
      return false;
    getDeviceQueue = reinterpret_cast<PFN_vkGetDeviceQueue>(
        getDeviceProcAddr(device, "vkGetDeviceQueue"));
    queueSubmit = reinterpret_cast<PFN_vkQueueSubmit>(
        getDeviceProcAddr(device, "vkQueueSubmit"));
    queueWaitIdle = reinterpret_cast<PFN_vkQueueWaitIdle>(
        getDeviceProcAddr(device, "vkQueueWaitIdle"));
    return getQueueFamilies && createDevice && getDeviceQueue && queueSubmit &&
           queueWaitIdle;
  }
};

class QueueWrap : public ::testing::Test {
protected:
  void SetUp() override {
    int count = 0;
    if (tk_device_count(&count) != TK_SUCCESS || count == 0)
      GTEST_SKIP() << "no Vulkan device: " << tk_last_error();
    ASSERT_EQ(tk_device_get(0, &device), TK_SUCCESS) << tk_last_error();
    std::memset(&native, 0, sizeof(native));
    native.struct_size = sizeof(native);
    ASSERT_EQ(tk_device_get_native(device, &native), TK_SUCCESS)
        << tk_last_error();
    ASSERT_TRUE(vk.load(static_cast<VkInstance>(native.instance),
                        static_cast<VkDevice>(native.device)));
  }

  tk_device device = nullptr;
  tk_device_native native;
  CallerVulkan vk;
};

TEST_F(QueueWrap, NativeHandlesNameTkDevice) {
  EXPECT_STREQ(native.api, "vulkan");
  EXPECT_NE(native.instance, nullptr);
  EXPECT_NE(native.physical_device, nullptr);
  EXPECT_NE(native.device, nullptr);
  ASSERT_GE(native.queue_count, 1u);
  // tk created every queue it reports, of a family that has that many.
  uint32_t families = 0;
  auto physical = static_cast<VkPhysicalDevice>(native.physical_device);
  vk.getQueueFamilies(physical, &families, nullptr);
  std::vector<VkQueueFamilyProperties> properties(families);
  vk.getQueueFamilies(physical, &families, properties.data());
  ASSERT_LT(native.queue_family, families);
  EXPECT_LE(native.queue_count, properties[native.queue_family].queueCount);
  EXPECT_TRUE(properties[native.queue_family].queueFlags &
              VK_QUEUE_COMPUTE_BIT);

  // An older caller's smaller struct gets the fields it holds, no more.
  tk_device_native small;
  std::memset(&small, 0xab, sizeof(small));
  small.struct_size = offsetof(tk_device_native, instance);
  ASSERT_EQ(tk_device_get_native(device, &small), TK_SUCCESS);
  EXPECT_STREQ(small.api, "vulkan");
  unsigned char untouched[sizeof(void *)];
  std::memset(untouched, 0xab, sizeof(untouched));
  EXPECT_EQ(std::memcmp(&small.instance, untouched, sizeof(untouched)), 0);

  small.struct_size = 0;
  EXPECT_EQ(tk_device_get_native(device, &small), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tk_device_get_native(device, nullptr), TK_ERROR_INVALID_ARGUMENT);
}

/// A vector add on the caller's last queue, between submissions the caller
/// makes on it; an event times it there.
TEST_F(QueueWrap, LaunchesRunOnTheCallersQueue) {
  VkQueue queue = VK_NULL_HANDLE;
  vk.getDeviceQueue(static_cast<VkDevice>(native.device), native.queue_family,
                    native.queue_count - 1, &queue);
  ASSERT_NE(queue, VK_NULL_HANDLE);

  // The caller's own work on the queue before tk's (an empty submission:
  // the ordering is the queue's).
  VkSubmitInfo empty = {};
  empty.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  ASSERT_EQ(vk.queueSubmit(queue, 1, &empty, VK_NULL_HANDLE), VK_SUCCESS);

  tk_stream stream = nullptr;
  CHECK_TK(tk_stream_wrap(device, queue, &stream));

  std::string text =
      readFile(std::string(TK_EXAMPLES_KERNELS) + "/vector_add.tk");
  tk_kernel_source source = {};
  source.kind = TK_SOURCE_TEXT;
  source.data = text.data();
  source.size = text.size();
  source.entry = "vector_add";
  tk_kernel kernel = nullptr;
  CHECK_TK(tk_kernel_create(device, &source, nullptr, &kernel));

  constexpr int32_t n = 5000;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int32_t i = 0; i < n; ++i) {
    x[i] = float(i);
    y[i] = 2.0f;
  }
  tk_buffer bx = nullptr, by = nullptr, bout = nullptr;
  CHECK_TK(tk_buffer_create(device, n * sizeof(float), &bx));
  CHECK_TK(tk_buffer_create(device, n * sizeof(float), &by));
  CHECK_TK(tk_buffer_create(device, n * sizeof(float), &bout));
  CHECK_TK(tk_buffer_write(bx, 0, x.data(), n * sizeof(float)));
  CHECK_TK(tk_buffer_write(by, 0, y.data(), n * sizeof(float)));

  tk_event start = nullptr, end = nullptr;
  CHECK_TK(tk_event_create(device, &start));
  CHECK_TK(tk_event_create(device, &end));
  tk_arg args[] = {tk_arg_buffer(bx), tk_arg_buffer(by), tk_arg_buffer(bout),
                   tk_arg_i32(n)};
  tk_args list = {args, 4};
  tk_grid grid = {(n + 1023) / 1024, 1, 1};
  CHECK_TK(tk_event_record(start, stream));
  CHECK_TK(tk_launch_async(kernel, grid, &list, stream));
  CHECK_TK(tk_event_record(end, stream));
  // The second launch reads the first one's output: the barrier that
  // begins each submission orders them on the caller's queue.
  tk_arg again[] = {tk_arg_buffer(bout), tk_arg_buffer(by), tk_arg_buffer(bout),
                    tk_arg_i32(n)};
  tk_args againList = {again, 4};
  CHECK_TK(tk_launch_async(kernel, grid, &againList, stream));
  CHECK_TK(tk_stream_synchronize(stream));
  // The caller's queue is still the caller's: its own work goes on.
  ASSERT_EQ(vk.queueSubmit(queue, 1, &empty, VK_NULL_HANDLE), VK_SUCCESS);
  ASSERT_EQ(vk.queueWaitIdle(queue), VK_SUCCESS);

  CHECK_TK(tk_buffer_read(bout, 0, out.data(), n * sizeof(float)));
  for (int32_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i], float(i) + 4.0f) << i;
  CHECK_TK(tk_event_synchronize(end));
  float ms = -1.0f;
  CHECK_TK(tk_event_elapsed_ms(start, end, &ms));
  EXPECT_GE(ms, 0.0f);

  CHECK_TK(tk_event_release(start));
  CHECK_TK(tk_event_release(end));
  CHECK_TK(tk_kernel_release(kernel));
  CHECK_TK(tk_stream_release(stream));
  // Releasing the stream left the queue alive and usable.
  ASSERT_EQ(vk.queueSubmit(queue, 1, &empty, VK_NULL_HANDLE), VK_SUCCESS);
  ASSERT_EQ(vk.queueWaitIdle(queue), VK_SUCCESS);
  CHECK_TK(tk_buffer_release(bx));
  CHECK_TK(tk_buffer_release(by));
  CHECK_TK(tk_buffer_release(bout));
}

/// A queue of the caller's own VkDevice cannot reach tk's buffers or run its
/// pipelines: refused, naming what tk_stream_wrap takes.
TEST_F(QueueWrap, QueuesOfOtherDevicesAreRefused) {
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queueInfo = {};
  queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queueInfo.queueFamilyIndex = native.queue_family;
  queueInfo.queueCount = 1;
  queueInfo.pQueuePriorities = &priority;
  VkDeviceCreateInfo info = {};
  info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queueInfo;
  VkDevice own = VK_NULL_HANDLE;
  ASSERT_EQ(
      vk.createDevice(static_cast<VkPhysicalDevice>(native.physical_device),
                      &info, nullptr, &own),
      VK_SUCCESS);
  auto getQueue = reinterpret_cast<PFN_vkGetDeviceQueue>(
      vk.getDeviceProcAddr(own, "vkGetDeviceQueue"));
  auto destroyDevice = reinterpret_cast<PFN_vkDestroyDevice>(
      vk.getDeviceProcAddr(own, "vkDestroyDevice"));
  VkQueue foreign = VK_NULL_HANDLE;
  getQueue(own, native.queue_family, 0, &foreign);

  tk_stream stream = nullptr;
  EXPECT_EQ(tk_stream_wrap(device, foreign, &stream),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(stream, nullptr);
  EXPECT_NE(
      std::string(tk_last_error()).find("is not a queue of tk's VkDevice"),
      std::string::npos)
      << tk_last_error();
  EXPECT_NE(std::string(tk_last_error()).find("tk_device_get_native"),
            std::string::npos)
      << tk_last_error();
  destroyDevice(own, nullptr);

  EXPECT_EQ(tk_stream_wrap(device, nullptr, &stream),
            TK_ERROR_INVALID_ARGUMENT);
}

} // namespace
