//===- DeviceProbeTest.cpp - a plugin's cheap answer before its driver ----===//
//
// backends/common/DeviceProbe.h: TK_BACKEND is read as a comma list; a
// device node is found by its glob; a plugin TK_BACKEND does not name skips
// its driver only where none of its nodes exists, and says which it looked
// for.
//
//===----------------------------------------------------------------------===//

#include "common/DeviceProbe.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

class DeviceProbeTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (const char *value = std::getenv("TK_BACKEND"))
      saved = value;
  }
  void TearDown() override {
    if (saved.empty())
      unsetenv("TK_BACKEND");
    else
      setenv("TK_BACKEND", saved.c_str(), 1);
  }
  std::string saved;
};

TEST_F(DeviceProbeTest, BackendNamedByUserReadsACommaList) {
  using tk::plugin::backendNamedByUser;
  unsetenv("TK_BACKEND");
  EXPECT_FALSE(backendNamedByUser("rocm"));
  setenv("TK_BACKEND", "cuda, rocm ,cpu", 1);
  EXPECT_TRUE(backendNamedByUser("rocm"));
  EXPECT_TRUE(backendNamedByUser("cpu"));
  EXPECT_FALSE(backendNamedByUser("roc"));
  EXPECT_FALSE(backendNamedByUser("vulkan"));
  setenv("TK_BACKEND", "vulkan", 1);
  EXPECT_TRUE(backendNamedByUser("vulkan"));
}

TEST_F(DeviceProbeTest, FindsTheFirstNodeThatExists) {
  char folder[] = "/tmp/tk-device-probe-XXXXXX";
  ASSERT_NE(mkdtemp(folder), nullptr);
  std::string node = std::string(folder) + "/renderD128";
  std::string pattern = std::string(folder) + "/renderD*";
  std::string missing = std::string(folder) + "/kfd";
  EXPECT_EQ(tk::plugin::findDeviceNode({pattern.c_str()}), "");
  FILE *file = std::fopen(node.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fclose(file);
  EXPECT_EQ(tk::plugin::findDeviceNode({missing.c_str(), pattern.c_str()}),
            node);

  // Not named, and no node: skipped, naming what it looked for.
  unsetenv("TK_BACKEND");
  std::string error;
  EXPECT_TRUE(tk::plugin::noDeviceNode("rocm", {missing.c_str()}, error));
  EXPECT_EQ(error, "tk-rocm: no " + missing +
                       " here, so no GPU for the driver; it is started only "
                       "where one exists or TK_BACKEND names rocm");
  // A node exists: the driver starts.
  error.clear();
  EXPECT_FALSE(tk::plugin::noDeviceNode(
      "xe", {missing.c_str(), pattern.c_str()}, error));
  EXPECT_TRUE(error.empty());
  // Named by TK_BACKEND: the driver starts, node or not.
  setenv("TK_BACKEND", "rocm", 1);
  EXPECT_FALSE(tk::plugin::noDeviceNode("rocm", {missing.c_str()}, error));

  std::remove(node.c_str());
  rmdir(folder);
}

} // namespace

TEST_F(DeviceProbeTest, TheGpuBackendsNameTheirNodesAndTheOthersNone) {
  using tk::plugin::getDeviceNodes;
  auto nodes = [](std::string_view backend) {
    std::initializer_list<const char *> list = getDeviceNodes(backend);
    return std::vector<std::string>(list.begin(), list.end());
  };
  EXPECT_EQ(nodes("rocm"), std::vector<std::string>{"/dev/kfd"});
  EXPECT_EQ(nodes("xe"), std::vector<std::string>{"/dev/dri/renderD*"});
  EXPECT_EQ(nodes("vulkan"),
            (std::vector<std::string>{"/dev/dri/renderD*", "/dev/nvidia[0-9]*",
                                      "/dev/dxg"}));
  // No list, no skipping: cuda asks libcuda, cpu and others need no node.
  unsetenv("TK_BACKEND");
  std::string error;
  for (const char *backend : {"cuda", "cpu", "noentry"}) {
    EXPECT_TRUE(nodes(backend).empty()) << backend;
    EXPECT_FALSE(
        tk::plugin::noDeviceNode(backend, getDeviceNodes(backend), error))
        << backend;
  }
  EXPECT_TRUE(error.empty());
}
