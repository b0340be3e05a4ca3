/*===- minor0.c - a plugin of plugin ABI 1.0 -----------------------------===*\
 *
 * Test fixture: a plugin built before get_capabilities was appended (ABI
 * 1.1). Its table's struct_size ends at `launch`; the runtime must accept it
 * and report its capabilities as unknown, never read past struct_size. It
 * has no device. Every entry point is a stub that fails.
 *
\*===----------------------------------------------------------------------===*/

#include "tk/tk_plugin.h"

#include <stddef.h>

static const char *lastError(void) { return "minor0: a stub"; }
static tk_status initialize(void) { return TK_SUCCESS; }
static tk_status deviceCount(int32_t *out) {
  *out = 0;
  return TK_SUCCESS;
}
static tk_status deviceProps(int32_t d, tk_device_props *p) {
  (void)d;
  (void)p;
  return TK_ERROR_NO_DEVICE;
}
static tk_status memAlloc(int32_t d, size_t n, void **p) {
  (void)d;
  (void)n;
  (void)p;
  return TK_ERROR_NO_DEVICE;
}
static tk_status memFree(int32_t d, void *p) {
  (void)d;
  (void)p;
  return TK_ERROR_NO_DEVICE;
}
static tk_status copy(int32_t d, void *dst, const void *src, size_t n) {
  (void)d;
  (void)dst;
  (void)src;
  (void)n;
  return TK_ERROR_NO_DEVICE;
}
static tk_status streamCreate(int32_t d, void **s) {
  (void)d;
  (void)s;
  return TK_ERROR_NO_DEVICE;
}
static tk_status streamOp(int32_t d, void *s) {
  (void)d;
  (void)s;
  return TK_ERROR_NO_DEVICE;
}
static tk_status deviceSync(int32_t d) {
  (void)d;
  return TK_ERROR_NO_DEVICE;
}
static tk_status compile(const tk_plugin_compile_request *r,
                         tk_plugin_binary *b) {
  (void)r;
  (void)b;
  return TK_ERROR_UNSUPPORTED;
}
static void binaryFree(tk_plugin_binary *b) { (void)b; }
static tk_status load(int32_t d, const void *b, size_t n, const char *e,
                      const tk_plugin_arg_type *t, size_t c, void **out) {
  (void)d;
  (void)b;
  (void)n;
  (void)e;
  (void)t;
  (void)c;
  (void)out;
  return TK_ERROR_NO_DEVICE;
}
static tk_status unload(void *e) {
  (void)e;
  return TK_SUCCESS;
}
static tk_status launch(void *e, const int32_t g[3], void *const *a, void *s) {
  (void)e;
  (void)g;
  (void)a;
  (void)s;
  return TK_ERROR_NO_DEVICE;
}

/* get_capabilities is set to a pointer that must never be called: the
 * table's struct_size says the field is not there. */
static tk_status trap(int32_t d, tk_backend_capabilities *out) {
  (void)d;
  out->dtypes = 0xdeadu;
  return TK_ERROR_INTERNAL;
}

static const tk_backend_interface kInterface = {
    offsetof(tk_backend_interface, get_capabilities),
    TK_PLUGIN_ABI_MAJOR,
    0u,
    "minor0",
    "minor0 stub",
    lastError,
    initialize,
    deviceCount,
    deviceProps,
    memAlloc,
    memFree,
    copy,
    copy,
    copy,
    streamCreate,
    streamOp,
    streamOp,
    deviceSync,
    compile,
    binaryFree,
    NULL,
    load,
    unload,
    NULL,
    launch,
    trap,
    /* ABI 1.2's events, ABI 1.4's stream wrapping, ABI 1.5's
     * compile_target, ABI 1.6's device_native and ABI 1.7's target_rank:
     * past struct_size as well. */
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
};

const tk_backend_interface *tk_backend_get_interface(uint32_t abi_major) {
  return abi_major == TK_PLUGIN_ABI_MAJOR ? &kInterface : NULL;
}
