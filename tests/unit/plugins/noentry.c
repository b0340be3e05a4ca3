/*===- noentry.c - a plugin without the entry point ----------------------===*\
 *
 * Test fixture: a shared object named like a backend that does not export
 * tk_backend_get_interface. Loading it must fail with TK_ERROR_PLUGIN naming
 * the file and the missing symbol.
 *
\*===----------------------------------------------------------------------===*/

#include "tk/tk_plugin.h"

/* Something to export, so the library is not empty. */
uint32_t tk_backend_abi_version(void) { return TK_PLUGIN_ABI_MAJOR; }
