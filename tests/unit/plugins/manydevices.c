/*===- manydevices.c - the CPU backend reporting 2e9 devices --------------===*\
 *
 * Test fixture: the CPU plugin's table whose device_count says 2,000,000,000.
 * The runtime makes a Device of each at selection: it must refuse the count
 * (TK_ERROR_PLUGIN, naming it) rather than loop under its lock for GBs.
 *
\*===----------------------------------------------------------------------===*/

#include "CpuTable.h"

static tk_backend_interface table;

static tk_status manyDeviceCount(int32_t *out_count) {
  if (!out_count)
    return TK_ERROR_INVALID_ARGUMENT;
  *out_count = 2000000000;
  return TK_SUCCESS;
}

static void patch(tk_backend_interface *copy) {
  copy->device_count = manyDeviceCount;
}

__attribute__((visibility("default"))) const tk_backend_interface *
tk_backend_get_interface(uint32_t abi_major) {
  return fixtureInterface(abi_major, &table, sizeof(table), "manydevices",
                          patch);
}

__attribute__((visibility("default"))) uint32_t tk_backend_abi_version(void) {
  return TK_PLUGIN_ABI_MAJOR;
}
