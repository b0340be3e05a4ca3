"""tk from Python: a thin ctypes layer over the C API (capi/include/tk/tk.h).

No build step and no dependency beyond the standard library: the module opens
libtk.so ($TK_LIBRARY, else the build tree's build/lib/libtk.so next to this
checkout, else the loader's search path) and mirrors tk.h's calls one to one.
Every failing call raises TkError with the status name and tk_last_error().

    import tk
    dev = tk.Device(0)                       # on the backend TK_BACKEND selects
    k = dev.kernel(open("vector_add.tk").read(), entry="vector_add")
    x = dev.buffer(4 * n); x.write(host_bytes)
    k.launch((cdiv(n, 1024), 1, 1), [x, y, out, tk.i32(n)])

It also adopts what a CUDA (or PyTorch) program already has: device memory
(`dev.wrap_buffer(tensor.data_ptr(), nbytes)`) and streams
(`dev.wrap_stream(torch.cuda.current_stream().cuda_stream)`), so tk kernels
run in the caller's order and are timed by the caller's events.
"""

import ctypes
import os

__all__ = ["TkError", "Device", "Buffer", "Stream", "Event", "Kernel",
           "i32", "i64", "f32", "f64", "load_library"]

# tk_status names, in tk.h's order.
_STATUS = [
    "TK_SUCCESS", "TK_ERROR_INVALID_ARGUMENT", "TK_ERROR_INVALID_HANDLE",
    "TK_ERROR_INVALID_IR", "TK_ERROR_NOT_FOUND", "TK_ERROR_ARGUMENT_MISMATCH",
    "TK_ERROR_OUT_OF_MEMORY", "TK_ERROR_NO_DEVICE", "TK_ERROR_UNSUPPORTED",
    "TK_ERROR_COMPILATION", "TK_ERROR_PLUGIN", "TK_ERROR_ABI_MISMATCH",
    "TK_ERROR_DEVICE", "TK_ERROR_IO", "TK_ERROR_INTERNAL",
    "TK_ERROR_OUT_OF_BOUNDS"]

SOURCE_TEXT, SOURCE_BYTECODE, SOURCE_TTIR, SOURCE_PACKAGE = 0, 1, 3, 4
_ARG_BUFFER, _ARG_I32, _ARG_I64, _ARG_F32, _ARG_F64 = range(5)


class TkError(RuntimeError):
    """A tk call that failed: `status` is its tk_status name."""

    def __init__(self, status, message):
        super().__init__(f"{status}: {message}")
        self.status = status


# --- the structs of tk.h ----------------------------------------------------

class _DeviceProps(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("name", ctypes.c_char * 256),
                ("vendor", ctypes.c_char * 64), ("arch", ctypes.c_char * 64),
                ("backend", ctypes.c_char * 32),
                ("compute_units", ctypes.c_int32), ("warp_size", ctypes.c_int32),
                ("registers_per_cu", ctypes.c_int32),
                ("shared_memory_per_block", ctypes.c_int64),
                ("max_threads_per_block", ctypes.c_int32),
                ("max_grid", ctypes.c_int32 * 3), ("clock_mhz", ctypes.c_int32),
                ("memory_bus_width_bits", ctypes.c_int32),
                ("l2_cache_bytes", ctypes.c_int64),
                ("total_memory_bytes", ctypes.c_int64)]


class _KernelSource(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("data", ctypes.c_void_p),
                ("size", ctypes.c_size_t), ("entry", ctypes.c_char_p)]


class _Constexpr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_int64)]


class _CompileOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("num_warps", ctypes.c_int32),
                ("num_stages", ctypes.c_int32),
                ("constexprs", ctypes.POINTER(_Constexpr)),
                ("num_constexprs", ctypes.c_size_t),
                ("autotune", ctypes.c_void_p),
                ("min_programs_per_cu", ctypes.c_int32),
                ("source_name", ctypes.c_char_p),
                ("check_bounds", ctypes.c_int32)]


class _ArgValue(ctypes.Union):
    _fields_ = [("buffer", ctypes.c_void_p), ("i32", ctypes.c_int32),
                ("i64", ctypes.c_int64), ("f32", ctypes.c_float),
                ("f64", ctypes.c_double)]


class _Arg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("value", _ArgValue)]


class _Args(ctypes.Structure):
    _fields_ = [("args", ctypes.POINTER(_Arg)), ("count", ctypes.c_size_t)]


class _Grid(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int32), ("y", ctypes.c_int32),
                ("z", ctypes.c_int32)]


class _AutotuneCandidate(ctypes.Structure):
    _fields_ = [("source", _KernelSource), ("options", _CompileOptions),
                ("grid", _Grid), ("label", ctypes.c_char_p)]


_PROGRESS = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_size_t,
                             ctypes.c_size_t, ctypes.c_void_p)


class _AutotuneRequest(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t),
                ("candidates", ctypes.POINTER(_AutotuneCandidate)),
                ("num_candidates", ctypes.c_size_t),
                ("args", ctypes.POINTER(_Args)), ("key", ctypes.c_char_p),
                ("repetitions", ctypes.c_int32),
                ("plot_path", ctypes.c_char_p), ("progress", _PROGRESS),
                ("progress_user", ctypes.c_void_p),
                ("candidate_size", ctypes.c_size_t)]


class _AutotuneResult(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("best", ctypes.c_size_t),
                ("best_seconds", ctypes.c_double),
                ("from_cache", ctypes.c_int32), ("failed", ctypes.c_int32)]


# --- the library ------------------------------------------------------------

_lib = None


def load_library(path=None):
    """Opens libtk.so once: `path`, $TK_LIBRARY, the build tree, the loader."""
    global _lib
    if _lib is not None:
        return _lib
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [path, os.environ.get("TK_LIBRARY"),
                  os.path.join(here, "..", "..", "build", "lib", "libtk.so"),
                  "libtk.so"]
    errors = []
    for candidate in candidates:
        if not candidate:
            continue
        try:
            lib = ctypes.CDLL(candidate)
            break
        except OSError as error:
            errors.append(f"{candidate}: {error}")
    else:
        raise TkError("TK_ERROR_NOT_FOUND",
                      "cannot open libtk.so (set TK_LIBRARY): " +
                      "; ".join(errors))
    c = ctypes
    status, handle, p = c.c_int, c.c_void_p, c.POINTER
    signatures = {
        "tk_status_string": (c.c_char_p, [status]),
        "tk_last_error": (c.c_char_p, []),
        "tk_device_count": (status, [p(c.c_int)]),
        "tk_device_get": (status, [c.c_int, p(handle)]),
        "tk_device_query": (status, [handle, p(_DeviceProps)]),
        "tk_backend_name": (status, [p(c.c_char_p)]),
        "tk_buffer_create": (status, [handle, c.c_size_t, p(handle)]),
        "tk_buffer_wrap": (status, [handle, handle, c.c_size_t, p(handle)]),
        "tk_buffer_release": (status, [handle]),
        "tk_buffer_device_pointer": (status, [handle, p(handle)]),
        "tk_buffer_write": (status, [handle, c.c_size_t, handle, c.c_size_t]),
        "tk_buffer_read": (status, [handle, c.c_size_t, handle, c.c_size_t]),
        "tk_stream_create": (status, [handle, p(handle)]),
        "tk_stream_wrap": (status, [handle, handle, p(handle)]),
        "tk_stream_release": (status, [handle]),
        "tk_stream_synchronize": (status, [handle]),
        "tk_synchronize": (status, [handle]),
        "tk_event_create": (status, [handle, p(handle)]),
        "tk_event_release": (status, [handle]),
        "tk_event_record": (status, [handle, handle]),
        "tk_event_synchronize": (status, [handle]),
        "tk_event_elapsed_ms": (status, [handle, handle, p(c.c_float)]),
        "tk_kernel_create": (status, [handle, p(_KernelSource),
                                      p(_CompileOptions), p(handle)]),
        "tk_kernel_release": (status, [handle]),
        "tk_kernel_num_args": (status, [handle, p(c.c_int)]),
        "tk_kernel_occupancy": (status, [handle, p(c.c_int)]),
        "tk_launch": (status, [handle, _Grid, p(_Args)]),
        "tk_launch_async": (status, [handle, _Grid, p(_Args), handle]),
        "tk_autotune": (status, [handle, p(_AutotuneRequest), p(handle),
                                 p(_AutotuneResult)]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    _lib = lib
    return lib


def _check(status):
    if status != 0:
        lib = load_library()
        name = _STATUS[status] if 0 <= status < len(_STATUS) else str(status)
        raise TkError(name, lib.tk_last_error().decode(errors="replace"))


# --- arguments --------------------------------------------------------------

class _Scalar:
    def __init__(self, kind, value):
        self.kind, self.value = kind, value


def i32(value): return _Scalar(_ARG_I32, int(value))
def i64(value): return _Scalar(_ARG_I64, int(value))
def f32(value): return _Scalar(_ARG_F32, float(value))
def f64(value): return _Scalar(_ARG_F64, float(value))


def _pack(args):
    """tk_args for `args`: Buffers and the scalars i32() ... f64() make.
    Plain Python ints and floats are refused: their width would be a guess."""
    array = (_Arg * len(args))()
    for index, arg in enumerate(args):
        if isinstance(arg, Buffer):
            array[index].kind, array[index].value.buffer = _ARG_BUFFER, arg.handle
        elif isinstance(arg, _Scalar):
            array[index].kind = arg.kind
            field = {_ARG_I32: "i32", _ARG_I64: "i64", _ARG_F32: "f32",
                     _ARG_F64: "f64"}[arg.kind]
            setattr(array[index].value, field, arg.value)
        else:
            raise TypeError(f"argument {index}: {type(arg).__name__}; pass a "
                            "Buffer or tk.i32/i64/f32/f64(value)")
    return _Args(array, len(args)), array


def _grid(grid):
    x, y, z = (tuple(grid) + (1, 1))[:3]
    return _Grid(int(x), int(y), int(z))


def _options(num_warps=0, num_stages=0, constexprs=None, min_programs_per_cu=0,
             source_name=None, check_bounds=False):
    constexprs = constexprs or {}
    table = (_Constexpr * max(1, len(constexprs)))()
    for index, (name, value) in enumerate(constexprs.items()):
        table[index].name, table[index].value = name.encode(), int(value)
    name = source_name.encode() if source_name else None
    options = _CompileOptions(ctypes.sizeof(_CompileOptions), num_warps,
                              num_stages, table, len(constexprs), None,
                              min_programs_per_cu, name, int(bool(check_bounds)))
    return options, (table, name)


def _source(code, entry, ttir=False, package=False):
    data = code.encode() if isinstance(code, str) else bytes(code)
    kind = SOURCE_TEXT if isinstance(code, str) else SOURCE_BYTECODE
    if ttir:
        kind = SOURCE_TTIR
    if package:
        kind = SOURCE_PACKAGE
    keep = ctypes.create_string_buffer(data, len(data))
    source = _KernelSource(kind, ctypes.cast(keep, ctypes.c_void_p), len(data),
                           entry.encode() if entry else None)
    return source, keep


# --- objects ----------------------------------------------------------------

class _Handle:
    _release = None

    def __init__(self, handle):
        self.handle = handle

    def release(self):
        if self.handle:
            _check(getattr(load_library(), self._release)(self.handle))
            self.handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __del__(self):
        try:
            self.release()
        except Exception:
            pass


class Buffer(_Handle):
    _release = "tk_buffer_release"

    def __init__(self, handle, size):
        super().__init__(handle)
        self.size = size

    @property
    def pointer(self):
        out = ctypes.c_void_p()
        _check(load_library().tk_buffer_device_pointer(self.handle,
                                                       ctypes.byref(out)))
        return out.value

    def write(self, data, offset=0):
        data = bytes(data)
        _check(load_library().tk_buffer_write(self.handle, offset, data,
                                              len(data)))

    def read(self, size=None, offset=0):
        size = self.size - offset if size is None else size
        out = ctypes.create_string_buffer(size)
        _check(load_library().tk_buffer_read(self.handle, offset, out, size))
        return out.raw


class Stream(_Handle):
    _release = "tk_stream_release"

    def synchronize(self):
        _check(load_library().tk_stream_synchronize(self.handle))


class Event(_Handle):
    _release = "tk_event_release"

    def record(self, stream=None):
        _check(load_library().tk_event_record(
            self.handle, stream.handle if stream else None))

    def synchronize(self):
        _check(load_library().tk_event_synchronize(self.handle))

    def elapsed_ms(self, end):
        """Milliseconds from this event to `end` (both recorded, finished)."""
        out = ctypes.c_float()
        _check(load_library().tk_event_elapsed_ms(self.handle, end.handle,
                                                  ctypes.byref(out)))
        return out.value


class Kernel(_Handle):
    _release = "tk_kernel_release"

    @property
    def num_args(self):
        out = ctypes.c_int()
        _check(load_library().tk_kernel_num_args(self.handle, ctypes.byref(out)))
        return out.value

    @property
    def occupancy(self):
        out = ctypes.c_int()
        _check(load_library().tk_kernel_occupancy(self.handle,
                                                  ctypes.byref(out)))
        return out.value

    def launch(self, grid, args, stream=None, wait=False):
        """Enqueues on `stream` (None: the default stream); `wait` blocks
        until it finished (tk_launch)."""
        packed, _keep = _pack(args)
        lib = load_library()
        if wait and stream is None:
            _check(lib.tk_launch(self.handle, _grid(grid), ctypes.byref(packed)))
        else:
            _check(lib.tk_launch_async(self.handle, _grid(grid),
                                       ctypes.byref(packed),
                                       stream.handle if stream else None))
            if wait:
                stream.synchronize()


class Device:
    """Device `index` of the backend TK_BACKEND selects."""

    def __init__(self, index=0):
        lib = load_library()
        handle = ctypes.c_void_p()
        _check(lib.tk_device_get(index, ctypes.byref(handle)))
        self.handle = handle

    @property
    def backend(self):
        out = ctypes.c_char_p()
        _check(load_library().tk_backend_name(ctypes.byref(out)))
        return out.value.decode()

    def properties(self):
        props = _DeviceProps()
        props.struct_size = ctypes.sizeof(props)
        _check(load_library().tk_device_query(self.handle, ctypes.byref(props)))
        result = {}
        for name, _ in _DeviceProps._fields_[1:]:
            value = getattr(props, name)
            if isinstance(value, bytes):
                value = value.decode(errors="replace")
            elif not isinstance(value, int):
                value = list(value)
            result[name] = value
        return result

    def synchronize(self):
        _check(load_library().tk_synchronize(self.handle))

    def buffer(self, size):
        out = ctypes.c_void_p()
        _check(load_library().tk_buffer_create(self.handle, size,
                                               ctypes.byref(out)))
        return Buffer(out.value, size)

    def wrap_buffer(self, pointer, size):
        """Memory the caller allocated (a torch tensor's data_ptr()); tk
        never frees it."""
        out = ctypes.c_void_p()
        _check(load_library().tk_buffer_wrap(self.handle, pointer, size,
                                             ctypes.byref(out)))
        return Buffer(out.value, size)

    def stream(self):
        out = ctypes.c_void_p()
        _check(load_library().tk_stream_create(self.handle, ctypes.byref(out)))
        return Stream(out.value)

    def wrap_stream(self, native):
        """The caller's stream (a CUstream as an int, as
        torch.cuda.Stream.cuda_stream gives it); tk does not own it."""
        out = ctypes.c_void_p()
        _check(load_library().tk_stream_wrap(self.handle, native,
                                             ctypes.byref(out)))
        return Stream(out.value)

    def event(self):
        out = ctypes.c_void_p()
        _check(load_library().tk_event_create(self.handle, ctypes.byref(out)))
        return Event(out.value)

    def kernel(self, code, entry=None, num_warps=0, num_stages=0,
               constexprs=None, min_programs_per_cu=0, ttir=False,
               source_name=None, check_bounds=False, package=False):
        """Compiles `code` (.tk text as str, MLIR bytecode as bytes; with
        ttir=True, the text of Triton's TTIR; with package=True, the bytes
        of a .tkpkg, whose binary for this device is loaded without a
        compile). `source_name` (a file name) is what the diagnostics call
        the source; None: <source>. `check_bounds`: launches check every
        access against its buffer and raise TK_ERROR_OUT_OF_BOUNDS (as
        TK_CHECK_BOUNDS=1 does)."""
        source, _keep = _source(code, entry, ttir, package)
        options, _table = _options(num_warps, num_stages, constexprs,
                                   min_programs_per_cu, source_name,
                                   check_bounds)
        out = ctypes.c_void_p()
        _check(load_library().tk_kernel_create(self.handle, ctypes.byref(source),
                                               ctypes.byref(options),
                                               ctypes.byref(out)))
        return Kernel(out.value)

    def autotune(self, candidates, args, key, repetitions=0, progress=None):
        """tk_autotune: `candidates` are dicts with code, entry, grid, label,
        num_warps, num_stages, constexprs, min_programs_per_cu. Returns
        (kernel, index of the winner, its seconds, from_cache)."""
        keep = []
        table = (_AutotuneCandidate * len(candidates))()
        for index, c in enumerate(candidates):
            source, data = _source(c["code"], c.get("entry"))
            options, constexprs = _options(
                c.get("num_warps", 0), c.get("num_stages", 0),
                c.get("constexprs"), c.get("min_programs_per_cu", 0))
            label = c.get("label", f"#{index}").encode()
            keep += [data, constexprs, label]
            table[index] = _AutotuneCandidate(source, options, _grid(c["grid"]),
                                              label)
        packed, packed_keep = _pack(args)
        # No callback: tk's own log reports the progress.
        callback = _PROGRESS(
            lambda stage, done, total, user:
            progress(stage.decode(), done, total)) if progress else _PROGRESS()
        request = _AutotuneRequest(
            ctypes.sizeof(_AutotuneRequest), table, len(candidates),
            ctypes.pointer(packed), key.encode(), repetitions, None, callback,
            None, ctypes.sizeof(_AutotuneCandidate))
        result = _AutotuneResult(ctypes.sizeof(_AutotuneResult), 0, 0.0, 0, 0)
        out = ctypes.c_void_p()
        _check(load_library().tk_autotune(self.handle, ctypes.byref(request),
                                          ctypes.byref(out),
                                          ctypes.byref(result)))
        del keep, packed_keep
        return (Kernel(out.value), result.best, result.best_seconds,
                bool(result.from_cache))
