/*===- CpuTable.h - the CPU plugin's table, for fixtures built on it ------===*\
 *
 * Fixtures that are working backends with one thing changed copy the CPU
 * plugin's table (opened from TK_CPU_PLUGIN_PATH) and change that thing.
 *
\*===----------------------------------------------------------------------===*/

#ifndef TK_TESTS_UNIT_PLUGINS_CPUTABLE_H_
#define TK_TESTS_UNIT_PLUGINS_CPUTABLE_H_

#include "tk/tk_plugin.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

/* Copies the first `bytes` of the CPU plugin's table into `table`; returns 0
 * when the plugin does not open or its table is shorter. */
static int copyCpuTable(uint32_t abi_major, tk_backend_interface *table,
                        size_t bytes) {
  void *cpu = dlopen(TK_CPU_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!cpu)
    return 0;
  tk_backend_get_interface_fn get =
      (tk_backend_get_interface_fn)dlsym(cpu, "tk_backend_get_interface");
  const tk_backend_interface *full = get ? get(abi_major) : NULL;
  if (!full || full->struct_size < bytes)
    return 0;
  memcpy(table, full, bytes);
  table->struct_size = bytes;
  return 1;
}

/* A fixture's tk_backend_get_interface: on the first call, the CPU
 * plugin's first `bytes` of table, renamed `name`, given to `patch` to
 * change the one thing the fixture changes. */
static const tk_backend_interface *
fixtureInterface(uint32_t abi_major, tk_backend_interface *table, size_t bytes,
                 const char *name, void (*patch)(tk_backend_interface *table)) {
  if (abi_major != TK_PLUGIN_ABI_MAJOR)
    return NULL;
  if (!table->struct_size) {
    if (!copyCpuTable(abi_major, table, bytes))
      return NULL;
    table->name = name;
    patch(table);
  }
  return table;
}

#endif /* TK_TESTS_UNIT_PLUGINS_CPUTABLE_H_ */
