/*===- abi99.c - a plugin built for another ABI version ------------------===*\
 *
 * Test fixture: a plugin that speaks plugin ABI 99. It refuses the runtime's
 * major version (tk_backend_get_interface returns NULL) and says which one it
 * speaks; loading it must fail with TK_ERROR_ABI_MISMATCH naming 99 and the
 * runtime's version.
 *
\*===----------------------------------------------------------------------===*/

#include "tk/tk_plugin.h"

#include <stddef.h>

uint32_t tk_backend_abi_version(void) { return 99u; }

const tk_backend_interface *tk_backend_get_interface(uint32_t abi_major) {
  (void)abi_major;
  return NULL;
}
