/*===- tk_plugin.h - the backend plugin ABI --------------------*- C -*-===*\
 *
 * A backend is a shared object libtk_backend_<name>.so exporting one symbol,
 *
 *     const tk_backend_interface *tk_backend_get_interface(uint32_t abi_major);
 *
 * in the manner of PJRT's GetPjrtApi. The runtime passes the major version it
 * speaks; a plugin built for another major returns NULL (the runtime then
 * reports TK_ERROR_ABI_MISMATCH naming both versions, read from
 * tk_backend_abi_version()). Every struct begins with struct_size; fields are
 * only ever appended (minor version); removing or retyping one bumps the major.
 *
 * The runtime owns everything user-facing (handles, argument checks, caches);
 * a plugin sees raw device indices, raw device pointers and opaque
 * executables. Functions return tk_status; on failure the plugin's
 * last_error() gives the thread's message. Plugins never exit or abort.
 *
\*===----------------------------------------------------------------------===*/

#ifndef TK_TK_PLUGIN_H_
#define TK_TK_PLUGIN_H_

#include "tk/tk.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TK_PLUGIN_ABI_MAJOR 1u
#define TK_PLUGIN_ABI_MINOR 7u

/** One kernel argument as the compiled code sees it. */
typedef enum tk_plugin_arg_type {
  TK_PLUGIN_ARG_PTR = 0, /* a device address */
  TK_PLUGIN_ARG_I32 = 1,
  TK_PLUGIN_ARG_I64 = 2,
  TK_PLUGIN_ARG_F32 = 3,
  TK_PLUGIN_ARG_F64 = 4
} tk_plugin_arg_type;

/** What to compile: one verified, specialised tk module as MLIR bytecode. */
typedef struct tk_plugin_compile_request {
  size_t struct_size;
  const void *module_bytecode; /* a builtin.module holding the entry tk.func */
  size_t module_size;
  const char *entry; /* name of the tk.func */
  int32_t num_warps;
  int32_t num_stages;
  int32_t device;              /* device index the code is for (its arch) */
  const char *dump_dir;        /* non-NULL: write each stage's IR here */
  int32_t min_programs_per_cu; /* ABI 1.3: the occupancy hint of
                                  tk_compile_options; 0: none */
} tk_plugin_compile_request;

/** The packaged binary; the plugin allocates `data`, binary_free releases it.
 */
typedef struct tk_plugin_binary {
  size_t struct_size;
  void *data;
  size_t size;
  int32_t num_warps;
  int32_t shared_memory_bytes;
  int32_t registers_per_thread; /* 0 if unknown until load */
} tk_plugin_binary;

/** What a device of the backend can run (ABI 1.1). The runtime sets
 *  struct_size and zeroes the struct; the plugin fills the fields that fit in
 *  struct_size. Bits are those of tk.h (tk_dtype_bit, tk_atomic_bit,
 *  tk_mma_bit). A bit left clear is a declaration that the feature is absent:
 *  kernels needing it are reported UNSUPPORTED, not run. */
typedef struct tk_backend_capabilities {
  size_t struct_size;
  uint32_t dtypes;           /* tk_dtype_bit: element types loads, stores
                                and arithmetic support */
  uint32_t atomics;          /* tk_atomic_bit: atomic_rmw kinds, and CAS */
  int32_t fp8;               /* nonzero: f8e4m3/f8e5m2 conversions and dots */
  uint32_t mma_kinds;        /* tk_mma_bit: matrix units tk.dot may use;
                                TK_MMA_NONE (0) when dots are scalar code */
  int64_t max_tile_elements; /* largest tile a kernel may hold; 0: no limit */
} tk_backend_capabilities;

typedef struct tk_backend_interface {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char *name; /* "cpu", "cuda", ... */
  /** A string identifying the compiler (cache key), e.g. "tk-cpu 1 llvm 22". */
  const char *compiler_version;

  const char *(*last_error)(void);

  /** Opens the vendor library. TK_ERROR_NO_DEVICE when the plugin works but
   *  finds no hardware; the compile entry points must still work then. */
  tk_status (*initialize)(void);
  tk_status (*device_count)(int32_t *out_count);
  tk_status (*device_props)(int32_t device, tk_device_props *out);

  tk_status (*mem_alloc)(int32_t device, size_t bytes, void **out_pointer);
  tk_status (*mem_free)(int32_t device, void *pointer);
  /* Copies; `stream` NULL is the default stream; they complete before
   * returning (async copies may be added in a minor version). */
  tk_status (*memcpy_host_to_device)(int32_t device, void *dst, const void *src,
                                     size_t bytes);
  tk_status (*memcpy_device_to_host)(int32_t device, void *dst, const void *src,
                                     size_t bytes);
  tk_status (*memcpy_device_to_device)(int32_t device, void *dst,
                                       const void *src, size_t bytes);

  tk_status (*stream_create)(int32_t device, void **out_stream);
  tk_status (*stream_destroy)(int32_t device, void *stream);
  tk_status (*stream_synchronize)(int32_t device, void *stream);
  tk_status (*device_synchronize)(int32_t device);

  /** Lowers and packages; may run without a device (NO_DEVICE validation). */
  tk_status (*compile)(const tk_plugin_compile_request *request,
                       tk_plugin_binary *out_binary);
  void (*binary_free)(tk_plugin_binary *binary);
  /** Checks a binary without running it (ptxas, spirv-val, object parsing). */
  tk_status (*validate)(const void *binary, size_t size);

  /** Loads a binary for `device`; `arg_types` is the signature. */
  tk_status (*executable_load)(int32_t device, const void *binary, size_t size,
                               const char *entry,
                               const tk_plugin_arg_type *arg_types,
                               size_t num_args, void **out_executable);
  tk_status (*executable_unload)(void *executable);
  /** Programs per compute unit (0 if the backend cannot tell). */
  tk_status (*executable_occupancy)(void *executable, int32_t *out_programs);

  /** Runs the grid. `args[i]` points at argument i's value (a void* for a
   *  pointer), as cuLaunchKernel's kernelParams. Must not allocate. */
  tk_status (*launch)(void *executable, const int32_t grid[3],
                      void *const *args, void *stream);

  /*--- ABI 1.1 -----------------------------------------------------------*/

  /** Declares what `device` supports (see tk_backend_capabilities). Must
   *  work without hardware (device 0 then describes the compile target), so
   *  that NO_DEVICE runs can still tell unsupported features from bugs. A
   *  table whose struct_size ends before this field, or a NULL here, means
   *  "capabilities unknown". */
  tk_status (*get_capabilities)(int32_t device, tk_backend_capabilities *out);

  /*--- ABI 1.2 -----------------------------------------------------------*/

  /** Events: markers in a stream's work (`stream` NULL: the default stream)
   *  whose completion can be awaited and timed. A table that ends before
   *  these fields, or has any of them NULL, has no events. */
  tk_status (*event_create)(int32_t device, void **out_event);
  tk_status (*event_destroy)(int32_t device, void *event);
  tk_status (*event_record)(int32_t device, void *event, void *stream);
  tk_status (*event_synchronize)(int32_t device, void *event);
  /** Milliseconds between two recorded, completed events. */
  tk_status (*event_elapsed_ms)(int32_t device, void *start, void *end,
                                float *out_ms);

  /*--- ABI 1.4 -----------------------------------------------------------*/

  /** Adopts a stream the caller made with the vendor's own API (a CUstream,
   *  a hipStream_t) as a plugin stream of `device`, without owning it:
   *  launches, copies and events on the result go to that stream, and
   *  stream_unwrap forgets it without destroying it. A table that ends
   *  before these fields, or has either NULL, has no native streams. */
  tk_status (*stream_wrap)(int32_t device, void *native_stream,
                           void **out_stream);
  tk_status (*stream_unwrap)(int32_t device, void *stream);

  /*--- ABI 1.5 -----------------------------------------------------------*/

  /** Names the target compile makes code for on `device`, with everything
   *  beyond the request that changes that code: the arch an override such
   *  as TK_CUDA_ARCH chose, a subgroup size, optional features. The runtime
   *  keys its kernel cache on it, so two targets never share an entry.
   *  Writes a NUL-terminated name of at most `capacity` bytes to `out`; a
   *  longer name is TK_ERROR_INVALID_ARGUMENT. A table that ends before this
   *  field, or has it NULL, is keyed on device_props's arch. */
  tk_status (*compile_target)(int32_t device, char *out, size_t capacity);

  /*--- ABI 1.6 -----------------------------------------------------------*/

  /** Fills the fields of `out` (zeroed, struct_size set by the runtime) that
   *  fit in its struct_size with the vendor objects behind `device`
   *  (tk_device_get_native). A table that ends before this field, or has it
   *  NULL, exports nothing. */
  tk_status (*device_native)(int32_t device, tk_device_native *out);

  /*--- ABI 1.7 -----------------------------------------------------------*/

  /** How well code compiled for `target` (a compile_target name, as a
   *  package records it) suits `device`: 2 it is the device's own target, 1
   *  it runs there in a portable form (PTX for a later GPU, SPIR-V whose
   *  subgroup size and features the device has), 0 it does not. A package
   *  loads the best. A table that ends before this field, or has it NULL,
   *  ranks 2 the name equal to compile_target's and 0 the others. */
  tk_status (*target_rank)(int32_t device, const char *target,
                           int32_t *out_rank);
} tk_backend_interface;

typedef const tk_backend_interface *(*tk_backend_get_interface_fn)(
    uint32_t abi_major);

/** Optional: the ABI version the plugin was built for, so the runtime can name
 *  it when tk_backend_get_interface refuses. */
typedef uint32_t (*tk_backend_abi_version_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TK_TK_PLUGIN_H_ */
