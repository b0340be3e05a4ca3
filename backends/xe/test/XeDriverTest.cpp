//===- XeDriverTest.cpp - the Level Zero driver layer -----------*- C++ -*-===//
//
// What the Xe driver layer does on any machine. Without the Level Zero
// loader, or with it and no Intel GPU driver (Debian 12's libze1 alone:
// zeInit fails), every call reports TK_ERROR_NO_DEVICE with its reason and
// none reaches the loader, whose zeDriverGet crashes after a failed zeInit;
// with an Intel GPU the same calls succeed. Result names and statuses, and
// the targets of PCI ids, need neither.
//
// openDriver and initializeDevices run once per process, so the cases that
// set TK_XE_ZE_LIBRARY run in a process of their own (a death test in
// gtest's "threadsafe" style, which starts the test binary afresh).
//
//===----------------------------------------------------------------------===//

#include "compiler/Package.h"
#include "driver/Device.h"
#include "driver/Driver.h"
#include "driver/Executable.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>

namespace {

using namespace tk::xe;

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// A package that parses: one subgroup of 16, SPIR-V of only its magic
/// number (enough for parsePackage, which loadExecutable runs first).
std::string tinyPackage() {
  Package package;
  package.target = "pvc";
  package.entry = "kernel";
  package.numWarps = 1;
  package.threadsPerBlock = 16;
  package.subgroupSize = 16;
  package.spirv = std::string("\x03\x02\x23\x07", 4);
  return serializePackage(package);
}

TEST(XeDriver, OpenDriverSaysWhyItFoundNoDriver) {
  std::string error;
  tk_status status = openDriver(error);
  if (status == TK_SUCCESS) {
    EXPECT_TRUE(contains(runtimeDescription(), " (Level Zero "))
        << runtimeDescription();
    EXPECT_FALSE(drivers().empty());
    EXPECT_NE(driver().zeDriverGet, nullptr);
    EXPECT_NE(static_cast<uint32_t>(runtimeVersion()), 0u);
    return;
  }
  EXPECT_EQ(status, TK_ERROR_NO_DEVICE) << error;
  EXPECT_EQ(error.rfind("tk-xe: ", 0), 0u) << error;
  EXPECT_TRUE(runtimeDescription().empty());
  EXPECT_TRUE(drivers().empty());
  // Nothing of the loader is reachable once opening failed.
  EXPECT_EQ(driver().zeInit, nullptr);
  EXPECT_EQ(driver().zeDriverGet, nullptr);
  if (contains(error, " found no Intel GPU driver: ")) {
    // The loader opened and zeInit found no driver (libze1 without Intel's
    // compute-runtime, or no GPU for it): the call and its result named.
    EXPECT_TRUE(std::regex_search(
        error, std::regex("^tk-xe: [^ ]+ found no Intel GPU driver: "
                          "zeInit\\(ZE_INIT_FLAG_GPU_ONLY\\) returned "
                          "ZE_RESULT_[A-Z_]+ \\(0x[0-9a-f]+\\)")))
        << error;
  } else {
    // No loader (or not one where TK_XE_ZE_LIBRARY points), or zeInit
    // succeeded and zeDriverGet reports no driver.
    EXPECT_TRUE(contains(error, "libze_loader") ||
                contains(error, "TK_XE_ZE_LIBRARY"))
        << error;
  }
}

TEST(XeDriver, InitializeReportsNoDeviceOrItsDevices) {
  std::string error;
  tk_status status = initializeDevices(error);
  if (status == TK_SUCCESS) {
    ASSERT_GT(deviceCount(), 0);
    tk_device_props props = {};
    props.struct_size = sizeof(props);
    ASSERT_EQ(queryDeviceProps(0, &props, error), TK_SUCCESS) << error;
    EXPECT_STREQ(props.vendor, "Intel");
    EXPECT_STREQ(props.backend, "xe");
    EXPECT_GT(props.compute_units, 0);
    EXPECT_GT(props.warp_size, 0);
    EXPECT_GT(props.max_threads_per_block, 0);
    EXPECT_GT(props.total_memory_bytes, 0);
    return;
  }
  EXPECT_EQ(status, TK_ERROR_NO_DEVICE) << error;
  EXPECT_EQ(deviceCount(), 0);
  EXPECT_EQ(error.rfind("tk-xe: ", 0), 0u) << error;
  // Where the loader did not open, initialize gives openDriver's reason.
  std::string openError;
  if (openDriver(openError) != TK_SUCCESS) {
    EXPECT_EQ(error, openError);
  }
}

TEST(XeDriver, RepeatedCallsGiveTheFirstOutcome) {
  std::string first, second;
  tk_status opened = openDriver(first);
  EXPECT_EQ(openDriver(second), opened);
  EXPECT_EQ(first, second);
  std::string third, fourth;
  tk_status initialized = initializeDevices(third);
  for (int i = 0; i < 3; ++i) {
    fourth.clear();
    EXPECT_EQ(initializeDevices(fourth), initialized);
    EXPECT_EQ(fourth, third);
  }
}

TEST(XeDriver, EveryCallWithoutADeviceSaysNoDevice) {
  std::string error;
  if (initializeDevices(error) == TK_SUCCESS)
    GTEST_SKIP() << "an Intel GPU is present: " << runtimeDescription();
  auto expectNoDevice = [](tk_status status, const std::string &message,
                           const char *call) {
    EXPECT_EQ(status, TK_ERROR_NO_DEVICE) << call << ": " << message;
    EXPECT_EQ(message.rfind("tk-xe: ", 0), 0u) << call << ": " << message;
  };
  // Each answers from tk's own state: none may reach the loader.
#define TK_EXPECT_NO_DEVICE(call)                                              \
  do {                                                                         \
    std::string message;                                                       \
    tk_status status = call;                                                   \
    expectNoDevice(status, message, #call);                                    \
  } while (false)
  void *out = nullptr;
  char host[16] = {};
  float ms = 0;
  std::string target;
  int32_t subgroupSize = 0;
  DeviceLimits limits;
  ze_context_handle_t context = nullptr;
  ze_device_handle_t handle = nullptr;
  tk_device_props props = {};
  props.struct_size = sizeof(props);
  Stream *stream = nullptr;
  TK_EXPECT_NO_DEVICE(checkDevice(0, message));
  TK_EXPECT_NO_DEVICE(deviceTarget(0, target, message));
  TK_EXPECT_NO_DEVICE(deviceSubgroupSize(0, subgroupSize, message));
  TK_EXPECT_NO_DEVICE(deviceLimits(0, limits, message));
  TK_EXPECT_NO_DEVICE(deviceHandles(0, context, handle, message));
  TK_EXPECT_NO_DEVICE(queryDeviceProps(0, &props, message));
  TK_EXPECT_NO_DEVICE(allocateMemory(0, 256, &out, message));
  TK_EXPECT_NO_DEVICE(freeMemory(0, host, message));
  TK_EXPECT_NO_DEVICE(
      copyMemory(0, CopyKind::HostToDevice, host, host, 4, message));
  TK_EXPECT_NO_DEVICE(
      copyMemory(0, CopyKind::DeviceToHost, host, host, 4, message));
  TK_EXPECT_NO_DEVICE(
      copyMemory(0, CopyKind::DeviceToDevice, host, host, 4, message));
  TK_EXPECT_NO_DEVICE(createStream(0, &out, message));
  TK_EXPECT_NO_DEVICE(destroyStream(0, nullptr, message));
  TK_EXPECT_NO_DEVICE(synchronizeStream(0, nullptr, message));
  TK_EXPECT_NO_DEVICE(resolveStream(0, nullptr, stream, message));
  TK_EXPECT_NO_DEVICE(wrapStream(0, host, &out, message));
  TK_EXPECT_NO_DEVICE(createEvent(0, &out, message));
  TK_EXPECT_NO_DEVICE(destroyEvent(0, nullptr, message));
  TK_EXPECT_NO_DEVICE(recordEvent(0, host, nullptr, message));
  TK_EXPECT_NO_DEVICE(synchronizeEvent(0, host, message));
  TK_EXPECT_NO_DEVICE(eventElapsedMs(0, host, host, &ms, message));
  TK_EXPECT_NO_DEVICE(synchronizeDevice(0, message));
  std::string package = tinyPackage();
  std::unique_ptr<Executable> executable;
  TK_EXPECT_NO_DEVICE(loadExecutable(0, package.data(), package.size(),
                                     "kernel", executable, message));
  EXPECT_EQ(executable, nullptr);
#undef TK_EXPECT_NO_DEVICE
  EXPECT_EQ(out, nullptr);
}

TEST(XeDriver, ResultsMapToStatuses) {
  EXPECT_EQ(statusOfZeError(ZE_RESULT_SUCCESS), TK_SUCCESS);
  EXPECT_EQ(statusOfZeError(ZE_RESULT_ERROR_UNINITIALIZED), TK_ERROR_NO_DEVICE);
  EXPECT_EQ(statusOfZeError(ZE_RESULT_ERROR_DEVICE_LOST), TK_ERROR_DEVICE);
  EXPECT_EQ(statusOfZeError(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY),
            TK_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(statusOfZeError(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY),
            TK_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(statusOfZeError(ZE_RESULT_ERROR_INVALID_ARGUMENT),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(statusOfZeError(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE),
            TK_ERROR_COMPILATION);
  EXPECT_EQ(statusOfZeError(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE),
            TK_ERROR_UNSUPPORTED);
  EXPECT_EQ(statusOfZeError(ZE_RESULT_ERROR_UNSUPPORTED_VERSION),
            TK_ERROR_UNSUPPORTED);
  EXPECT_EQ(statusOfZeError(ZE_RESULT_ERROR_INVALID_KERNEL_NAME),
            TK_ERROR_NOT_FOUND);
  EXPECT_EQ(statusOfZeError(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE),
            TK_ERROR_ARGUMENT_MISMATCH);
  // A result tk does not know is the device's error.
  EXPECT_EQ(statusOfZeError(static_cast<ze_result_t>(0x7abcdef0)),
            TK_ERROR_DEVICE);
}

TEST(XeDriver, ResultsAreDescribedByNameAndNumber) {
  EXPECT_EQ(describeZeError(ZE_RESULT_ERROR_UNINITIALIZED),
            "Level Zero error 'ZE_RESULT_ERROR_UNINITIALIZED' (0x78000001)");
  EXPECT_EQ(
      describeZeError(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY),
      "Level Zero error 'ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY' (0x70000003)");
  // Named by number where the header tk is built with predates the result.
  EXPECT_EQ(
      describeZeError(static_cast<ze_result_t>(0x7800001c)),
      "Level Zero error 'ZE_RESULT_ERROR_INVALID_KERNEL_HANDLE' (0x7800001c)");
  EXPECT_EQ(describeZeError(static_cast<ze_result_t>(0x7abcdef0)),
            "Level Zero error 'unknown' (0x7abcdef0)");
}

TEST(XeDriver, CheckZeNamesTheCall) {
  std::string error = "untouched";
  EXPECT_EQ(checkZe(ZE_RESULT_SUCCESS, "zeInit", error), TK_SUCCESS);
  EXPECT_EQ(error, "untouched");
  EXPECT_EQ(
      checkZe(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, "zeModuleCreate", error),
      TK_ERROR_COMPILATION);
  EXPECT_EQ(error, "tk-xe: zeModuleCreate failed: Level Zero error "
                   "'ZE_RESULT_ERROR_MODULE_BUILD_FAILURE' (0x70000004)");
}

TEST(XeDriver, PciIdsNameTheirTargets) {
  // Data Center GPU Max 1550, 1100, and the ends of the range.
  EXPECT_EQ(targetForPciDeviceId(0x0BD5), "pvc");
  EXPECT_EQ(targetForPciDeviceId(0x0BDA), "pvc");
  EXPECT_EQ(targetForPciDeviceId(0x0BD0), "pvc");
  EXPECT_EQ(targetForPciDeviceId(0x0BDB), "pvc");
  EXPECT_EQ(targetForPciDeviceId(0x0B69), "pvc");
  EXPECT_EQ(targetForPciDeviceId(0x0B6E), "pvc");
  // Arc A770, A380, Flex 170, Flex 140.
  EXPECT_EQ(targetForPciDeviceId(0x56A0), "dg2");
  EXPECT_EQ(targetForPciDeviceId(0x56A5), "dg2");
  EXPECT_EQ(targetForPciDeviceId(0x56C0), "dg2");
  EXPECT_EQ(targetForPciDeviceId(0x56C1), "dg2");
  EXPECT_EQ(targetForPciDeviceId(0x5690), "dg2");
  EXPECT_EQ(targetForPciDeviceId(0x56B3), "dg2");
  // Others load SPIR-V: Tiger Lake, Meteor Lake, Battlemage, and ids
  // beside the ranges.
  EXPECT_EQ(targetForPciDeviceId(0x9A49), "");
  EXPECT_EQ(targetForPciDeviceId(0x7D55), "");
  EXPECT_EQ(targetForPciDeviceId(0xE20B), "");
  EXPECT_EQ(targetForPciDeviceId(0x0BDC), "");
  EXPECT_EQ(targetForPciDeviceId(0x56A7), "");
  EXPECT_EQ(targetForPciDeviceId(0x0000), "");
}

TEST(XeDriver, DeviceLimitsNameTheirSubgroupSizes) {
  DeviceLimits limits;
  EXPECT_EQ(limits.subgroupSizesText(), "none");
  EXPECT_FALSE(limits.supportsSubgroupSize(16));
  limits.numSubgroupSizes = 3;
  limits.subgroupSizes[0] = 8;
  limits.subgroupSizes[1] = 16;
  limits.subgroupSizes[2] = 32;
  EXPECT_EQ(limits.subgroupSizesText(), "8, 16 and 32");
  EXPECT_TRUE(limits.supportsSubgroupSize(8));
  EXPECT_TRUE(limits.supportsSubgroupSize(32));
  EXPECT_FALSE(limits.supportsSubgroupSize(64));
  limits.numSubgroupSizes = 1;
  EXPECT_EQ(limits.subgroupSizesText(), "8");
}

#if GTEST_HAS_DEATH_TEST

/// Runs in a process of its own: opens the loader as `library` names it
/// and exits 0 when both openDriver and initializeDevices report
/// TK_ERROR_NO_DEVICE with the same message, which goes to stderr for the
/// death test's pattern.
[[noreturn]] void openAs(const char *library) {
  setenv("TK_XE_ZE_LIBRARY", library, /*overwrite=*/1);
  std::string opened, initialized;
  tk_status openStatus = openDriver(opened);
  tk_status initStatus = initializeDevices(initialized);
  std::fprintf(stderr, "%s\n", opened.c_str());
  bool expected = openStatus == TK_ERROR_NO_DEVICE &&
                  initStatus == TK_ERROR_NO_DEVICE && opened == initialized &&
                  deviceCount() == 0;
  std::exit(expected ? 0 : 1);
}

class XeDriverDeathTest : public testing::Test {
protected:
  void SetUp() override {
    // "threadsafe" runs the statement in a new process started from main,
    // where openDriver has not run yet; "fast" would fork this one, whose
    // outcome is already fixed.
#ifdef GTEST_FLAG_SET
    GTEST_FLAG_SET(death_test_style, "threadsafe");
#else
    testing::FLAGS_gtest_death_test_style = "threadsafe";
#endif
  }
};

TEST_F(XeDriverDeathTest, AMissingLibraryIsNoDevice) {
  EXPECT_EXIT(openAs("/nonexistent/libze_loader.so.1"),
              testing::ExitedWithCode(0),
              "tk-xe: TK_XE_ZE_LIBRARY=/nonexistent/libze_loader.so.1 could "
              "not be opened: ");
}

TEST_F(XeDriverDeathTest, ALibraryThatIsNoLoaderIsNoDevice) {
  EXPECT_EXIT(openAs("libc.so.6"), testing::ExitedWithCode(0),
              "tk-xe: 'libc\\.so\\.6' \\(TK_XE_ZE_LIBRARY\\) lacks zeInit, "
              "zeDriverGet, ");
}

#endif // GTEST_HAS_DEATH_TEST

} // namespace
