/*===- retarget.c - the CPU backend with a compile target set by the test -===*\
 *
 * Test fixture: the CPU plugin's table whose compile_target (ABI 1.5) answers
 * TK_RETARGET_NAME, as TK_CUDA_ARCH changes the CUDA plugin's answer on one
 * device. Kernels compile and run on the CPU plugin (opened from
 * TK_CPU_PLUGIN_PATH); the runtime must give each target its own cache
 * entry although the device and its arch stay the same.
 *
\*===----------------------------------------------------------------------===*/

#include "CpuTable.h"

#include <stdlib.h>

static tk_backend_interface table;

static tk_status retargetCompileTarget(int32_t device, char *out,
                                       size_t capacity) {
  (void)device;
  const char *name = getenv("TK_RETARGET_NAME");
  if (!name)
    name = "unset";
  if (!out || strlen(name) >= capacity)
    return TK_ERROR_INVALID_ARGUMENT;
  strcpy(out, name);
  return TK_SUCCESS;
}

static void patch(tk_backend_interface *copy) {
  copy->compile_target = retargetCompileTarget;
}

__attribute__((visibility("default"))) const tk_backend_interface *
tk_backend_get_interface(uint32_t abi_major) {
  return fixtureInterface(abi_major, &table, sizeof(table), "retarget", patch);
}

__attribute__((visibility("default"))) uint32_t tk_backend_abi_version(void) {
  return TK_PLUGIN_ABI_MAJOR;
}
