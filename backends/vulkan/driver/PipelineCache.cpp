//===- PipelineCache.cpp - the Vulkan pipeline cache on disk ----*- C++ -*-===//
//
// The driver's compiled pipelines, kept beside tk's kernel cache so that the
// next process creates the same pipelines without compiling them again:
// createDevice (Device.cpp) reads the file, savePipelineCache writes it
// after each new pipeline.
//
//===----------------------------------------------------------------------===//

#include "driver/DeviceState.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace tk::vulkan {

using namespace detail;

namespace {

/// The file's own header before the driver's data, so that a truncated or
/// damaged file is never handed to the driver (which checks only its own
/// header): magic, data length, FNV-1a hash of the data.
constexpr char kPipelineCacheMagic[8] = {'T', 'K', 'V', 'K',
                                         'P', 'C', '1', '\0'};
/// More than any pipeline cache tk makes: a file this large is not read.
constexpr uint64_t kMaxPipelineCacheBytes = uint64_t(1) << 30;

uint64_t fnv1a(const char *data, size_t size) {
  uint64_t hash = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= static_cast<unsigned char>(data[i]);
    hash *= 1099511628211ull;
  }
  return hash;
}

/// Creates `folder` and its parents (mkdir -p).
bool makeFolders(const std::string &folder) {
  for (size_t slash = 1; slash != std::string::npos;) {
    slash = folder.find('/', slash + 1);
    std::string prefix = folder.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  return true;
}

} // namespace

std::string detail::pipelineCachePath(const DeviceInfo &info) {
  std::string folder;
  if (const char *dir = std::getenv("TK_CACHE_DIR"); dir && *dir)
    folder = dir;
  else if (const char *home = std::getenv("HOME"); home && *home)
    folder = std::string(home) + "/.cache/tk";
  else
    return "";
  char name[2 * VK_UUID_SIZE + 32];
  int used = 0;
  for (uint8_t byte : info.pipelineCacheUUID)
    used += std::snprintf(name + used, sizeof(name) - used, "%02x", byte);
  std::snprintf(name + used, sizeof(name) - used, "-%04x-%04x.pipelines",
                info.vendorID, info.deviceID);
  return folder + "/vulkan/" + name;
}

std::string detail::readPipelineCache(const std::string &path) {
  if (path.empty())
    return "";
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return "";
  std::string data;
  char magic[sizeof(kPipelineCacheMagic)];
  uint64_t length = 0, hash = 0;
  if (std::fread(magic, 1, sizeof(magic), file) == sizeof(magic) &&
      std::memcmp(magic, kPipelineCacheMagic, sizeof(magic)) == 0 &&
      std::fread(&length, sizeof(length), 1, file) == 1 &&
      std::fread(&hash, sizeof(hash), 1, file) == 1 &&
      length <= kMaxPipelineCacheBytes) {
    data.resize(length);
    if (std::fread(data.data(), 1, length, file) != length ||
        std::fgetc(file) != EOF || fnv1a(data.data(), data.size()) != hash)
      data.clear();
  }
  std::fclose(file);
  return data;
}

void savePipelineCache(int32_t device) {
  DeviceState &state = stateOf(device);
  if (state.pipelineCachePath.empty())
    return;
  std::lock_guard<std::mutex> lock(state.pipelineCacheMutex);
  size_t size = 0;
  if (state.api.vkGetPipelineCacheData(state.device, state.pipelineCache, &size,
                                       nullptr) != VK_SUCCESS ||
      size == 0 || size > kMaxPipelineCacheBytes)
    return;
  std::string data(size, '\0');
  if (state.api.vkGetPipelineCacheData(state.device, state.pipelineCache, &size,
                                       data.data()) != VK_SUCCESS)
    return;
  data.resize(size);
  const std::string &path = state.pipelineCachePath;
  if (!makeFolders(path.substr(0, path.rfind('/'))))
    return;
  // Written beside, then renamed over: readers see a whole file or none.
  std::string temporary =
      path + ".tmp-" + std::to_string(static_cast<long>(::getpid()));
  std::FILE *file = std::fopen(temporary.c_str(), "wb");
  if (!file)
    return;
  uint64_t length = data.size(), hash = fnv1a(data.data(), data.size());
  bool written =
      std::fwrite(kPipelineCacheMagic, 1, sizeof(kPipelineCacheMagic), file) ==
          sizeof(kPipelineCacheMagic) &&
      std::fwrite(&length, sizeof(length), 1, file) == 1 &&
      std::fwrite(&hash, sizeof(hash), 1, file) == 1 &&
      std::fwrite(data.data(), 1, data.size(), file) == data.size();
  written = std::fclose(file) == 0 && written;
  if (!written || std::rename(temporary.c_str(), path.c_str()) != 0)
    std::remove(temporary.c_str());
}

} // namespace tk::vulkan
