//===- Device.cpp - the host CPU as a tk device -----------------*- C++ -*-===//
//
// Device properties from /proc/cpuinfo, sysconf and LLVM's host detection.
// "Compute units" are hardware threads; a program runs on one thread, so the
// warp size is 1 and shared memory is whatever the stack holds.
//
//===----------------------------------------------------------------------===//

#include "driver/Device.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>

namespace tk::cpu {

namespace {

/// The value of the first "key : value" line of /proc/cpuinfo.
std::string cpuinfoField(const char *key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  size_t keyLength = std::strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, keyLength, key) != 0)
      continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos)
      continue;
    size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

void copyString(char *dst, size_t capacity, const std::string &src) {
  std::snprintf(dst, capacity, "%s", src.c_str());
}

} // namespace

void queryDevice(tk_device_props *out, const std::string &arch) {
  // Fill a full struct, then copy what the caller's version has room for.
  tk_device_props props;
  std::memset(&props, 0, sizeof(props));
  props.struct_size = out->struct_size;
  std::string name = cpuinfoField("model name");
  copyString(props.name, sizeof(props.name), name.empty() ? "host CPU" : name);
  copyString(props.vendor, sizeof(props.vendor), "CPU");
  copyString(props.arch, sizeof(props.arch), arch);
  copyString(props.backend, sizeof(props.backend), "cpu");
  unsigned threads = std::thread::hardware_concurrency();
  props.compute_units = threads ? static_cast<int32_t>(threads) : 1;
  props.warp_size = 1;
  props.registers_per_cu = 0;
  props.shared_memory_per_block = 64 * 1024;
  props.max_threads_per_block = 1;
  props.max_grid[0] = 2147483647;
  props.max_grid[1] = 65535;
  props.max_grid[2] = 65535;
  std::string mhz = cpuinfoField("cpu MHz");
  props.clock_mhz = mhz.empty() ? 0 : static_cast<int32_t>(std::stod(mhz));
  props.memory_bus_width_bits = 0;
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  props.l2_cache_bytes = l2 > 0 ? l2 : 0;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  props.total_memory_bytes =
      pages > 0 && pageSize > 0 ? int64_t(pages) * pageSize : 0;
  size_t size =
      out->struct_size < sizeof(props) ? out->struct_size : sizeof(props);
  std::memcpy(out, &props, size);
}

} // namespace tk::cpu
