/*===- noevents.c - the CPU backend as a plugin of ABI 1.1 ---------------===*\
 *
 * Test fixture: the CPU plugin's table cut before the events appended in ABI
 * 1.2, as a plugin built then would export it. Kernels compile and run (on
 * the CPU plugin, opened from TK_CPU_PLUGIN_PATH), but the runtime has no
 * events to time with: tk_event_create is TK_ERROR_UNSUPPORTED and
 * tk_autotune times by the host's clock.
 *
\*===----------------------------------------------------------------------===*/

#include "CpuTable.h"

static tk_backend_interface table;

static void patch(tk_backend_interface *copy) { copy->abi_minor = 1; }

__attribute__((visibility("default"))) const tk_backend_interface *
tk_backend_get_interface(uint32_t abi_major) {
  return fixtureInterface(abi_major, &table,
                          offsetof(tk_backend_interface, event_create),
                          "noevents", patch);
}

__attribute__((visibility("default"))) uint32_t tk_backend_abi_version(void) {
  return TK_PLUGIN_ABI_MAJOR;
}
