/*===- tk.h - the tk C API -------------------------------------*- C -*-===*\
 *
 * The stable C API of tk: devices, buffers, streams, kernels and launches on
 * the backend chosen by TK_BACKEND. Plain C99; compiles as C and as C++.
 *
 * Conventions (IREE/PJRT style):
 *  - every call returns a tk_status; TK_SUCCESS is 0;
 *  - on failure, tk_last_error() returns a message for the calling thread
 *    that names the problem; it stays valid until the thread's next tk call;
 *  - out parameters come last; *_create / *_get hand out ownership,
 *    *_release takes it back; a released handle must not be used again (tk
 *    detects the common cases and returns TK_ERROR_INVALID_HANDLE);
 *  - every function is thread-safe unless its comment says otherwise.
 *
\*===----------------------------------------------------------------------===*/

#ifndef TK_TK_H_
#define TK_TK_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===--- Status
 * ------------------------------------------------------------===*/

typedef enum tk_status {
  TK_SUCCESS = 0,
  TK_ERROR_INVALID_ARGUMENT = 1,  /* a null pointer, a bad size, a bad grid */
  TK_ERROR_INVALID_HANDLE = 2,    /* a handle that was released or never made */
  TK_ERROR_INVALID_IR = 3,        /* the kernel source does not parse/verify */
  TK_ERROR_NOT_FOUND = 4,         /* unknown entry name, backend, device */
  TK_ERROR_ARGUMENT_MISMATCH = 5, /* launch arguments vs kernel signature */
  TK_ERROR_OUT_OF_MEMORY = 6,
  TK_ERROR_NO_DEVICE = 7,     /* plugin present, no hardware */
  TK_ERROR_UNSUPPORTED = 8,   /* the backend lacks the feature */
  TK_ERROR_COMPILATION = 9,   /* lowering or code generation failed */
  TK_ERROR_PLUGIN = 10,       /* a plugin that cannot be loaded or used */
  TK_ERROR_ABI_MISMATCH = 11, /* plugin built for another ABI version */
  TK_ERROR_DEVICE = 12,       /* the device or its driver reported an error */
  TK_ERROR_IO = 13,           /* file system (cache) errors */
  TK_ERROR_INTERNAL = 14,
  /** A bounds-checked launch (TK_CHECK_BOUNDS, check_bounds) found an access
   *  outside its buffer; the message names the kernel, the op's source line,
   *  the argument, the element and the buffer's size. */
  TK_ERROR_OUT_OF_BOUNDS = 15,
  /* Not a status. It makes every 32-bit value a tk_status, so that a code a
     newer plugin returns can be held and named (TK_UNKNOWN_STATUS) without
     undefined behaviour. */
  TK_STATUS_MAX_ENUM = 0x7FFFFFFF
} tk_status;

/** A short constant name for a status ("TK_ERROR_INVALID_IR"). */
const char *tk_status_string(tk_status status);

/** The message of the calling thread's last failed call ("" if none). */
const char *tk_last_error(void);

/*===--- Devices
 * -----------------------------------------------------------===*/

typedef struct tk_device_t *tk_device;

typedef struct tk_device_props {
  size_t struct_size;       /* set by the caller: sizeof(tk_device_props) */
  char name[256];           /* "NVIDIA H100 80GB HBM3", "AMD EPYC ..." */
  char vendor[64];          /* "NVIDIA", "AMD", "Intel", "CPU" */
  char arch[64];            /* "sm_90", "gfx942", "pvc", "x86-64-v3" */
  char backend[32];         /* "cuda", "cpu", ... */
  int32_t compute_units;    /* SMs, CUs, Xe cores, CPU threads */
  int32_t warp_size;        /* lanes per warp / wave / subgroup */
  int32_t registers_per_cu; /* 32-bit registers per compute unit */
  int64_t shared_memory_per_block; /* bytes, opt-in maximum */
  int32_t max_threads_per_block;
  int32_t max_grid[3]; /* largest grid along each axis */
  int32_t clock_mhz;
  int32_t memory_bus_width_bits;
  int64_t l2_cache_bytes;
  int64_t total_memory_bytes;
} tk_device_props;

/** Number of devices of the selected backend. Loads the backend on first use.
 */
tk_status tk_device_count(int *out_count);

/** Device `index` of the selected backend. Devices live as long as the process;
 *  tk_device handles need no release. */
tk_status tk_device_get(int index, tk_device *out_device);

/** Fills `out` (whose struct_size the caller sets). */
tk_status tk_device_query(tk_device device, tk_device_props *out);

/** The vendor objects behind a device, for a program that also uses the
 *  vendor's API on it (to get a queue tk_stream_wrap takes, to share
 *  memory). tk keeps owning them: the caller must not destroy them. The
 *  caller sets struct_size. Filled by the vulkan backend; the others are
 *  TK_ERROR_UNSUPPORTED (on cuda, a CUstream of the device's primary context
 *  is what tk_stream_wrap takes). */
typedef struct tk_device_native {
  size_t struct_size;    /* set by the caller: sizeof(tk_device_native) */
  char api[16];          /* "vulkan" */
  void *instance;        /* VkInstance */
  void *physical_device; /* VkPhysicalDevice */
  void *device;          /* VkDevice */
  /** Vulkan: tk's device has `queue_count` queues of family `queue_family`
   *  (vkGetDeviceQueue(device, queue_family, i)). tk's own streams submit
   *  to queue 0; the others are there for the caller. */
  uint32_t queue_family;
  uint32_t queue_count;
} tk_device_native;

tk_status tk_device_get_native(tk_device device, tk_device_native *out);

/** The name of the selected backend ("cpu"); valid for the process lifetime. */
tk_status tk_backend_name(const char **out_name);

/*===--- Capabilities
 * ------------------------------------------------------===*/

/** Element types, one bit each (tk_capabilities.dtypes). */
typedef enum tk_dtype_bit {
  TK_DTYPE_BIT_I1 = 1u << 0,
  TK_DTYPE_BIT_I8 = 1u << 1,
  TK_DTYPE_BIT_I16 = 1u << 2,
  TK_DTYPE_BIT_I32 = 1u << 3,
  TK_DTYPE_BIT_I64 = 1u << 4,
  TK_DTYPE_BIT_F16 = 1u << 5,
  TK_DTYPE_BIT_BF16 = 1u << 6,
  TK_DTYPE_BIT_F32 = 1u << 7,
  TK_DTYPE_BIT_F64 = 1u << 8,
  TK_DTYPE_BIT_F8E4M3 = 1u << 9,
  TK_DTYPE_BIT_F8E5M2 = 1u << 10
} tk_dtype_bit;

/** Atomic operations, one bit each (tk_capabilities.atomics): the kinds of
 *  tk.atomic_rmw, and tk.atomic_cas. */
typedef enum tk_atomic_bit {
  TK_ATOMIC_BIT_ADD = 1u << 0,
  TK_ATOMIC_BIT_FADD = 1u << 1,
  TK_ATOMIC_BIT_MAX = 1u << 2,
  TK_ATOMIC_BIT_MIN = 1u << 3,
  TK_ATOMIC_BIT_UMAX = 1u << 4,
  TK_ATOMIC_BIT_UMIN = 1u << 5,
  TK_ATOMIC_BIT_AND = 1u << 6,
  TK_ATOMIC_BIT_OR = 1u << 7,
  TK_ATOMIC_BIT_XOR = 1u << 8,
  TK_ATOMIC_BIT_XCHG = 1u << 9,
  TK_ATOMIC_BIT_CAS = 1u << 10
} tk_atomic_bit;

/** Matrix units a tk.dot may lower to (tk_capabilities.mma_kinds). */
typedef enum tk_mma_bit {
  TK_MMA_NONE = 0,                        /* dots are scalar/vector code */
  TK_MMA_BIT_MMA_SYNC = 1u << 0,          /* NVIDIA mma.sync (sm_80+) */
  TK_MMA_BIT_WGMMA = 1u << 1,             /* NVIDIA wgmma (sm_90) */
  TK_MMA_BIT_MFMA = 1u << 2,              /* AMD CDNA v_mfma */
  TK_MMA_BIT_WMMA = 1u << 3,              /* AMD RDNA v_wmma */
  TK_MMA_BIT_DPAS = 1u << 4,              /* Intel Xe dpas */
  TK_MMA_BIT_COOPERATIVE_MATRIX = 1u << 5 /* VK_KHR_cooperative_matrix */
} tk_mma_bit;

typedef struct tk_capabilities {
  size_t struct_size;        /* set by the caller: sizeof(tk_capabilities) */
  int32_t known;             /* 0: the backend declares nothing (a plugin of
                                ABI 1.0); every other field is then 0 */
  uint32_t dtypes;           /* tk_dtype_bit */
  uint32_t atomics;          /* tk_atomic_bit */
  int32_t fp8;               /* nonzero: fp8 conversions and dots */
  uint32_t mma_kinds;        /* tk_mma_bit */
  int64_t max_tile_elements; /* 0: no limit */
} tk_capabilities;

/** What `device` declares it supports; fills `out` (whose struct_size the
 *  caller sets). A backend that declares nothing gives `known` 0: treat
 *  every feature as possibly present. */
tk_status tk_device_capabilities(tk_device device, tk_capabilities *out);

/*===--- Host conversions
 * --------------------------------------------------===*/

/** IEEE binary16 and bfloat16 on the host, to fill and read f16/bf16 buffers.
 *  Narrowing rounds to nearest even (overflow gives infinity, NaN stays NaN);
 *  widening is exact. Pure functions: no status, no error state. */
uint16_t tk_f32_to_f16(float value);
float tk_f16_to_f32(uint16_t bits);
uint16_t tk_f32_to_bf16(float value);
float tk_bf16_to_f32(uint16_t bits);

/*===--- Buffers
 * -----------------------------------------------------------===*/

typedef struct tk_buffer_t *tk_buffer;

tk_status tk_buffer_create(tk_device device, size_t bytes,
                           tk_buffer *out_buffer);
/** Wraps memory the caller allocated on `device`; tk never frees it. */
tk_status tk_buffer_wrap(tk_device device, void *device_pointer, size_t bytes,
                         tk_buffer *out_buffer);
tk_status tk_buffer_release(tk_buffer buffer);
tk_status tk_buffer_size(tk_buffer buffer, size_t *out_bytes);
/** The device address (a host address on the CPU backend). */
tk_status tk_buffer_device_pointer(tk_buffer buffer, void **out_pointer);
tk_status tk_buffer_write(tk_buffer dst, size_t offset, const void *src,
                          size_t bytes);
tk_status tk_buffer_read(tk_buffer src, size_t offset, void *dst, size_t bytes);
tk_status tk_buffer_copy(tk_buffer dst, size_t dst_offset, tk_buffer src,
                         size_t src_offset, size_t bytes);

/*===--- Streams
 * -----------------------------------------------------------===*/

typedef struct tk_stream_t *tk_stream;

tk_status tk_stream_create(tk_device device, tk_stream *out_stream);
/** Wraps a stream the caller made with the backend's own API (`CUstream` on
 *  cuda, `hipStream_t` on rocm, an immediate `ze_command_list_handle_t` on
 *  xe, a `VkQueue` on vulkan) so that tk launches, event records and copies
 *  join the caller's ordering: what a program that already uses CUDA (or
 *  PyTorch) needs. tk does not own it: tk_stream_release forgets the handle
 *  and leaves the stream alive, and the caller keeps it alive until then.
 *  The stream must belong to `device` (its CUDA context is the device's
 *  primary context; a VkQueue must be one of tk's VkDevice, see
 *  tk_device_get_native). tk_buffer_read/write/copy run on the device's
 *  default stream: after launches on a wrapped stream created non-blocking
 *  (as PyTorch's are), synchronize it (tk_stream_synchronize) before
 *  reading their results. On vulkan each of tk's submissions to the queue
 *  begins with a barrier after all earlier work on it, the caller's
 *  included; the caller's own work after tk's needs its own barrier, and the
 *  caller must not submit to the queue while a tk call on the stream runs
 *  (Vulkan's external synchronisation of a queue).
 *  TK_ERROR_UNSUPPORTED on backends without native streams (cpu); NULL
 *  `native_stream` is TK_ERROR_INVALID_ARGUMENT. */
tk_status tk_stream_wrap(tk_device device, void *native_stream,
                         tk_stream *out_stream);
tk_status tk_stream_release(tk_stream stream);
tk_status tk_stream_synchronize(tk_stream stream);
/** Waits for all work on every stream of `device`. */
tk_status tk_synchronize(tk_device device);

/*===--- Events
 * ------------------------------------------------------------===*/

/** A marker in a stream's work, for waiting on and timing it (CUDA events).
 *  TK_ERROR_UNSUPPORTED where the backend has none. */
typedef struct tk_event_t *tk_event;

tk_status tk_event_create(tk_device device, tk_event *out_event);
tk_status tk_event_release(tk_event event);
/** Marks the point after the work enqueued so far on `stream` (NULL: the
 *  device's default stream). */
tk_status tk_event_record(tk_event event, tk_stream stream);
/** Waits until the work before the event's last record has finished. */
tk_status tk_event_synchronize(tk_event event);
/** Milliseconds from `start` to `end`, both recorded on the same device and
 *  finished (synchronize `end` first). */
tk_status tk_event_elapsed_ms(tk_event start, tk_event end, float *out_ms);

/*===--- Kernels
 * -----------------------------------------------------------===*/

typedef struct tk_kernel_t *tk_kernel;

typedef enum tk_source_kind {
  TK_SOURCE_TEXT = 0,     /* .tk text (MLIR custom syntax of the tk dialect) */
  TK_SOURCE_BYTECODE = 1, /* MLIR bytecode of a tk module */
  TK_SOURCE_MODULE = 2,   /* a C++ builder module: data is an mlir::ModuleOp* */
  /** Triton's tile IR as Triton 3.x prints it (`kernel.asm["ttir"]`, the
   *  `.ttir` of TRITON_KERNEL_DUMP), converted into tk on reading. An op tk
   *  cannot import is TK_ERROR_UNSUPPORTED naming it and its Python line.
   *  Triton's num_warps and num_stages are not in TTIR: pass them in
   *  tk_compile_options (tk_ttir_read_metadata reads Triton's JSON). */
  TK_SOURCE_TTIR = 3,
  /** A package (`.tkpkg`, written by `tk-compile --package`): kernels
   *  compiled ahead of time for several targets. `entry` picks the kernel
   *  (NULL: the only one); the binary is the one built for the device's
   *  backend and compile target, else one the backend says runs there in a
   *  portable form (PTX for a later GPU, SPIR-V of the device's subgroup
   *  size and features), loaded without compiling. A package with none is
   *  TK_ERROR_UNSUPPORTED naming the device's target and the package's; a
   * damaged or truncated one is TK_ERROR_INVALID_ARGUMENT naming the byte. Its
   * kernels were specialised when it was built: constexprs and the
   * bounds-checked mode do not apply, and num_warps or num_stages other than
   * the package's are TK_ERROR_INVALID_ARGUMENT. */
  TK_SOURCE_PACKAGE = 4
} tk_source_kind;

typedef struct tk_kernel_source {
  tk_source_kind kind;
  const void *data;  /* text, bytecode, a package, or an mlir::ModuleOp*
                        (borrowed) */
  size_t size;       /* bytes of text, bytecode or package; 0 for a module */
  const char *entry; /* the tk.func to launch; NULL: the only one */
} tk_kernel_source;

typedef struct tk_constexpr_value {
  const char *name;
  int64_t value;
} tk_constexpr_value;

struct tk_autotune_options;

typedef struct tk_compile_options {
  size_t struct_size;                   /* sizeof(tk_compile_options) */
  int32_t num_warps;                    /* 0: the backend's default (4) */
  int32_t num_stages;                   /* 0: the backend's default (CUDA: 3) */
  const tk_constexpr_value *constexprs; /* folded into the kernel */
  size_t num_constexprs;
  /** Non-NULL: create the fastest of several configurations of the source
   *  instead (see tk_autotune_options; the three fields above are then
   *  ignored). */
  const struct tk_autotune_options *autotune;
  /** An occupancy hint: the register allocation is limited so that this many
   *  programs fit on one compute unit at once (CUDA: .minnctapersm), even at
   *  the price of spills. 0: no hint. A count the hardware cannot hold (too
   *  many threads) is TK_ERROR_INVALID_ARGUMENT; backends without the notion
   *  (the CPU) ignore it. Ignored with `autotune`: each configuration has
   *  its own. */
  int32_t min_programs_per_cu;
  /** The name a text or TTIR source's diagnostics give it, usually its file
   *  (`rmsnorm.tk:15:9: error: ...` over the line and a caret); NULL:
   *  `<source>`. It stays in the kernel's locations, so the backend's
   *  messages name it too. (An option, not a field of tk_kernel_source,
   *  which has no struct_size to grow by.) */
  const char *source_name;
  /** Non-zero: the bounds-checked mode (also TK_CHECK_BOUNDS=1 in the
   *  environment). Every element a load, store or atomic touches is checked
   *  against the extent of the buffer its pointer came from; tk passes the
   *  extents with the arguments. An element outside is not read or written,
   *  and the launch returns TK_ERROR_OUT_OF_BOUNDS naming the first such
   *  access. Each launch then waits for the kernel (tk_launch_async too) and
   *  one launch of a kernel runs at a time: slower, never wrong. A kernel
   *  whose pointers cannot be traced to one argument is
   *  TK_ERROR_UNSUPPORTED at creation, naming the access. */
  int32_t check_bounds;
} tk_compile_options;

/** Parses, verifies, specialises and compiles (or fetches from the cache).
 *  `options` may be NULL. In libtk_runtime.so, the runtime without a
 *  compiler (pkg-config tk-runtime, CMake tk::runtime), only
 *  TK_SOURCE_PACKAGE loads; any other source, options->autotune,
 *  tk_autotune and tk_ttir_read_metadata are TK_ERROR_UNSUPPORTED saying
 *  so. */
tk_status tk_kernel_create(tk_device device, const tk_kernel_source *source,
                           const tk_compile_options *options,
                           tk_kernel *out_kernel);
tk_status tk_kernel_release(tk_kernel kernel);
/** Sets `options->num_warps` and `num_stages` from the JSON Triton writes
 *  beside a compiled kernel (the `<name>.json` next to `<name>.ttir` in its
 *  cache or TRITON_KERNEL_DUMP folder), so that a TTIR kernel compiles with
 *  Triton's choices; a field the JSON lacks is left as it is. `size` 0 means
 *  NUL-terminated text. Set `options->struct_size` first. Malformed JSON, or
 *  a count that is not a whole number from 1 to 1024, is
 *  TK_ERROR_INVALID_ARGUMENT naming it; `options` is then unchanged. */
tk_status tk_ttir_read_metadata(const char *json, size_t size,
                                tk_compile_options *options);
/** Number of arguments of the kernel's signature. */
tk_status tk_kernel_num_args(tk_kernel kernel, int *out_count);

/** Programs of `kernel` that fit at once on one compute unit, from its
 *  registers, shared memory and warps (the persistent-kernel sizing). */
tk_status tk_kernel_occupancy(tk_kernel kernel, int *out_programs_per_cu);

/*===--- Launch
 * ------------------------------------------------------------===*/

typedef enum tk_arg_kind {
  TK_ARG_BUFFER = 0, /* a tk_buffer, for a !tk.ptr argument */
  TK_ARG_I32 = 1,
  TK_ARG_I64 = 2,
  TK_ARG_F32 = 3,
  TK_ARG_F64 = 4
} tk_arg_kind;

typedef struct tk_arg {
  tk_arg_kind kind;
  union {
    tk_buffer buffer;
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
  } value;
} tk_arg;

typedef struct tk_args {
  const tk_arg *args;
  size_t count;
} tk_args;

typedef struct tk_grid {
  int32_t x, y, z; /* every dimension >= 1 */
} tk_grid;

/** Launches and waits for completion. Arguments are checked against the
 *  kernel's signature (count, kinds, alignment the kernel was specialised
 *  for); a mismatch is TK_ERROR_ARGUMENT_MISMATCH naming the argument. */
tk_status tk_launch(tk_kernel kernel, tk_grid grid, const tk_args *args);
/** Enqueues on `stream` (NULL: the device's default stream) and returns. */
tk_status tk_launch_async(tk_kernel kernel, tk_grid grid, const tk_args *args,
                          tk_stream stream);

/** Convenience constructors for tk_arg. */
static inline tk_arg tk_arg_buffer(tk_buffer b) {
  tk_arg a;
  a.kind = TK_ARG_BUFFER;
  a.value.buffer = b;
  return a;
}
static inline tk_arg tk_arg_i32(int32_t v) {
  tk_arg a;
  a.kind = TK_ARG_I32;
  a.value.i32 = v;
  return a;
}
static inline tk_arg tk_arg_i64(int64_t v) {
  tk_arg a;
  a.kind = TK_ARG_I64;
  a.value.i64 = v;
  return a;
}
static inline tk_arg tk_arg_f32(float v) {
  tk_arg a;
  a.kind = TK_ARG_F32;
  a.value.f32 = v;
  return a;
}
static inline tk_arg tk_arg_f64(double v) {
  tk_arg a;
  a.kind = TK_ARG_F64;
  a.value.f64 = v;
  return a;
}

/*===--- Autotuning
 * --------------------------------------------------------===*/

/** One configuration to try: its source (tile sizes may differ from the
 *  others'), compile options (num_warps, num_stages, constexprs, occupancy
 *  hint), the grid it needs, and a label for the log and the plot. */
typedef struct tk_autotune_candidate {
  tk_kernel_source source;
  tk_compile_options options;
  tk_grid grid;
  const char *label; /* "BM=128 BN=128 w8"; NULL: "#<index>" */
} tk_autotune_candidate;

/** Progress: `stage` is "compile", "time" (a step per candidate) or
 *  "retime" (a step per round in which the candidates that timed within 5%
 *  of the fastest are timed again, in turn); called from the calling
 *  thread. */
typedef void (*tk_autotune_progress_fn)(const char *stage, size_t done,
                                        size_t total, void *user);

typedef struct tk_autotune_request {
  size_t struct_size; /* sizeof(tk_autotune_request) */
  const tk_autotune_candidate *candidates;
  size_t num_candidates;
  /** The arguments every candidate is launched with while timing. */
  const tk_args *args;
  /** The shape the choice is for, e.g. "M=4096 N=4096 K=4096": the winner is
   *  kept on disk (TK_CACHE_DIR/autotune) under this key, the backend, the
   *  device and the candidates, and reused without timing. */
  const char *key;
  int32_t repetitions;   /* timed launches per candidate; 0: 20 */
  const char *plot_path; /* non-NULL: an SVG of throughput per candidate */
  tk_autotune_progress_fn progress; /* NULL: progress goes to the log */
  void *progress_user;
  /** sizeof(tk_autotune_candidate), or 0 for the same. A request whose
   *  struct_size ends before this field comes from a program built against
   *  the tk.h before min_programs_per_cu; its candidates are read in that
   *  layout. A program built against the tk.h before source_name passes
   *  its own, smaller sizeof, and is read in that layout too. */
  size_t candidate_size;
} tk_autotune_request;

typedef struct tk_autotune_result {
  size_t struct_size;  /* sizeof(tk_autotune_result) */
  size_t best;         /* index of the fastest candidate */
  double best_seconds; /* its time per launch; 0 when read from disk */
  int32_t from_cache;  /* nonzero: the disk record chose, nothing was timed */
  int32_t failed;      /* candidates that did not compile or launch */
} tk_autotune_result;

/** One configuration of a kernel created with tk_compile_options.autotune:
 *  num_warps, num_stages, constexprs and the occupancy hint of the one
 *  source, and the grid the timing launches use with it. */
typedef struct tk_autotune_config {
  int32_t num_warps;
  int32_t num_stages;
  const tk_constexpr_value *constexprs;
  size_t num_constexprs;
  tk_grid grid;
  const char *label;           /* NULL: "#<index>" */
  int32_t min_programs_per_cu; /* as in tk_compile_options */
} tk_autotune_config;

/** Autotuning as an option of kernel creation: tk_kernel_create compiles
 *  every configuration in parallel, times each with `args`, and returns the
 *  fastest, recorded on disk for `key` as tk_autotune does (a later
 *  creation with the same key, source and configurations times nothing).
 *  The timing launches run the kernel: `args` must be safe to run it on. */
typedef struct tk_autotune_options {
  size_t struct_size; /* sizeof(tk_autotune_options) */
  const tk_autotune_config *configs;
  size_t num_configs;
  const tk_args *args;
  const char *key;
  int32_t repetitions;   /* 0: 20 */
  const char *plot_path; /* non-NULL: an SVG of throughput per config */
  tk_autotune_progress_fn progress;
  void *progress_user;
  tk_autotune_result *result; /* non-NULL: which configuration won */
  /** sizeof(tk_autotune_config), or 0 for the same; as candidate_size in
   *  tk_autotune_request. */
  size_t config_size;
} tk_autotune_options;

/** Compiles the candidates in parallel, times each on `device` (the median
 *  of rounds of launches, each launch after a flush of the device's L2 as
 *  Triton's do_bench does, between device events), and returns the fastest
 *  as a kernel.
 *  Candidates that fail are skipped (and counted); if all fail, the first
 *  failure is returned. The winner is recorded on disk for `key`. */
tk_status tk_autotune(tk_device device, const tk_autotune_request *request,
                      tk_kernel *out_kernel, tk_autotune_result *out_result);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TK_TK_H_ */
