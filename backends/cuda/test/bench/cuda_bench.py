#!/usr/bin/env python3
"""The GPU benchmark: tk and its peers timed in one process, by one clock.

Every figure (tests/bench/BenchKernels.h, written out by `tk-bench-kernels
--emit`) is timed for tk (through capi/python/tk.py on PyTorch's own CUDA
stream and memory), Triton (its kernels tuned over the same candidates as
tk's), cuBLAS (torch.matmul and a direct cublasGemmEx, the faster reading is
the peer) and SDPA, inside one loop: the same 256 MB L2 flush before each
launch, the same CUDA events on the same stream, the same statistic (the
median of a round's launches), the contenders interleaved round by round, at
least three rounds, the spread of the rounds reported with each ratio.

Every timed output is checked element by element against a reference, with
per-element bounds as the conformance suite derives them; a wrong output
makes the figure an error, never a number. For each figure tk_autotune's
pick is timed again beside every other candidate: the JSON says whether the
pick was the fastest.

    bash .device/run.sh python3 backends/cuda/test/bench/cuda_bench.py --out $OUT

With --package FILE --manifest DIR (`tk-bench-kernels --package FILE
--target cuda:sm_90a` and `--emit DIR`, made where the compiler is), tk's
side loads every candidate from the package, as a program linked against
libtk_runtime.so does (TK_LIBRARY naming it): no compiler in the process.
tk_autotune needs one, so the pick is then the candidate fastest in this
run's own interleaved timing of them all.

Writes bench.json (the run: date, commit, GPU and its clocks, every
figure's readings) into --out.
"""

import argparse
import ctypes
import ctypes.util
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

# The repository's root: this file is backends/cuda/test/bench/cuda_bench.py.
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "capi", "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tk  # noqa: E402

EPS = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f32": 2.0 ** -23}
TORCH = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
TL = {"f16": tl.float16, "bf16": tl.bfloat16, "f32": tl.float32}

# tk accumulates in f32; so must the peers, or the comparison (and the
# check) is of different arithmetic.
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# --- timing -------------------------------------------------------------------

class Timer:
    """Times contenders interleaved: each round runs every contender's
    `reps` launches (each after the L2 flush, between two events on the
    current stream), the round's figure is their median; rounds rotate the
    order so no contender always follows the same one."""

    def __init__(self):
        # 256 MB zeroed before each launch, as Triton's do_bench does: L2
        # holds nothing of the working set, and the GPU is busy while the
        # host enqueues the launch, so host latency is not timed.
        self.flush = torch.empty(64 << 20, dtype=torch.int32, device="cuda")

    def round_ms(self, fn, reps):
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        for i in range(reps):
            self.flush.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))

    def interleaved(self, contenders, rounds, reps):
        """{name: fn} -> {name: [round medians in ms]}."""
        names = list(contenders)
        for fn in contenders.values():  # warm-up: compile, first-touch
            fn()
        torch.cuda.synchronize()
        result = {name: [] for name in names}
        for r in range(rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for name in order:
                result[name].append(self.round_ms(contenders[name], reps))
        return result


def summary(rounds_ms, work, unit):
    """A contender's reading: the median of its round medians, as the
    throughput `work` / ms gives it, with the rounds' range."""
    med = statistics.median(rounds_ms)
    scale = 1e9 if unit == "TFLOP/s" else 1e6
    return {"ms": med, "rounds_ms": rounds_ms, "value": work / med / scale,
            "spread": (max(rounds_ms) - min(rounds_ms)) / med}


def ratio(tk_rounds, peer_rounds, work_ratio=1.0):
    """tk's throughput over the peer's, round by round (each round times
    both back to back): the median, and the lowest and highest round.
    `work_ratio` is tk's work over the peer's (a copy moves fewer bytes
    than vector add)."""
    per_round = [work_ratio * p / t for t, p in zip(tk_rounds, peer_rounds)]
    return {"ratio": statistics.median(per_round), "low": min(per_round),
            "high": max(per_round)}


# --- checks -------------------------------------------------------------------

class WrongResult(Exception):
    pass


def check(name, got, want, rtol=0.0, bound=None, floor=0.0):
    """Every element: |got - want| <= rtol |want| + floor * max|want| +
    bound (the conformance suite's rule); NaN where a number is wanted fails."""
    got64, want64 = got.double(), want.double()
    allowed = rtol * want64.abs() + floor * want64.abs().max()
    if bound is not None:
        allowed = allowed + bound.double()
    error = (got64 - want64).abs()
    bad = ~(error <= allowed)
    if bool(bad.any()):
        index = int(bad.flatten().nonzero()[0])
        raise WrongResult(
            f"{name}: {int(bad.sum())} of {got.numel()} elements outside the "
            f"tolerance; first at flat index {index}: got "
            f"{got64.flatten()[index].item():.6g}, want "
            f"{want64.flatten()[index].item():.6g}")
    return {"elements": got.numel(), "max_error": float(error.max())}


def sentinel(tensor):
    """NaN in every element, so that a kernel that skips any fails."""
    tensor.fill_(float("nan"))


# --- the peers' kernels (Triton): tests/bench/triton_kernels.py -------------------

sys.path.insert(0, os.path.join(ROOT, "tests", "bench"))
from triton_kernels import (  # noqa: E402
    triton_add, triton_attention, triton_matmul, triton_scaled_matmul,
    triton_softmax)


def triton_config(kwargs, candidate):
    """The Triton config of a tk candidate: the same warps and stages, and
    the occupancy hint as the register cap it stands for."""
    extra = {}
    programs = candidate["min_programs_per_cu"]
    if programs:
        threads = candidate["num_warps"] * 32
        extra["maxnreg"] = min(255, 65536 // (threads * programs) // 8 * 8)
    stages = candidate["num_stages"] or 3
    try:
        return triton.Config(kwargs, num_warps=candidate["num_warps"],
                             num_stages=stages, **extra)
    except TypeError:  # a Triton without maxnreg
        return triton.Config(kwargs, num_warps=candidate["num_warps"],
                             num_stages=stages)


def tuned(kernel, configs, key):
    """`kernel` autotuned by Triton over `configs` (the same space as tk's)."""
    return triton.autotune(configs=configs, key=key)(kernel)


# --- cuBLAS, called directly -----------------------------------------------------

class Cublas:
    """cublasGemmEx through ctypes on PyTorch's stream: the direct call,
    beside torch.matmul's cuBLASLt heuristics."""

    def __init__(self):
        self.lib = None
        names = ["libcublas.so", "libcublas.so.13", "libcublas.so.12"]
        try:
            import nvidia.cublas  # the wheel PyTorch depends on
            folder = os.path.join(list(nvidia.cublas.__path__)[0], "lib")
            names = [os.path.join(folder, f) for f in sorted(os.listdir(folder))
                     if f.startswith("libcublas.so")] + names
        except ImportError:
            pass
        for name in names + ["/usr/local/cuda/lib64/libcublas.so"]:
            try:
                self.lib = ctypes.CDLL(name)
                self.name = name
                break
            except OSError:
                continue
        if self.lib is None:
            return
        self.handle = ctypes.c_void_p()
        if self.lib.cublasCreate_v2(ctypes.byref(self.handle)) != 0:
            self.lib = None

    def gemm(self, a, b, c):
        """c = a @ b, row-major, f32 accumulation: as column-major
        c^T = b^T a^T."""
        m, k = a.shape
        n = b.shape[1]
        data = {torch.float16: 2, torch.bfloat16: 14}[a.dtype]  # CUDA_R_16F/BF
        one = ctypes.c_float(1.0)
        zero = ctypes.c_float(0.0)
        self.lib.cublasSetStream_v2(
            self.handle, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        status = self.lib.cublasGemmEx(
            self.handle, 0, 0, n, m, k, ctypes.byref(one),
            ctypes.c_void_p(b.data_ptr()), data, n,
            ctypes.c_void_p(a.data_ptr()), data, k, ctypes.byref(zero),
            ctypes.c_void_p(c.data_ptr()), data, n,
            68, 0)  # CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT
        if status != 0:
            raise RuntimeError(f"cublasGemmEx: status {status}")


# --- the figures -------------------------------------------------------------------

class Bench:
    def __init__(self, args, manifest_dir):
        self.args = args
        self.dir = manifest_dir
        with open(os.path.join(manifest_dir, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.device = tk.Device(0)
        if self.device.backend != "cuda":
            raise SystemExit(f"cuda_bench: the backend is {self.device.backend}, "
                             "not cuda (set TK_BACKEND=cuda on a GPU machine)")
        # A stream of PyTorch's own (its default stream is CUDA's NULL
        # stream, which tk names by NULL, not by wrapping): every contender
        # runs on it, and tk adopts it.
        self.torch_stream = torch.cuda.Stream()
        torch.cuda.set_stream(self.torch_stream)
        self.stream = self.device.wrap_stream(self.torch_stream.cuda_stream)
        self.timer = Timer()
        self.cublas = Cublas()
        self.keep = []
        self.package = None
        if args.package:
            with open(args.package, "rb") as f:
                self.package = f.read()

    def wrap(self, tensor):
        buffer = self.device.wrap_buffer(tensor.data_ptr(),
                                         tensor.numel() * tensor.element_size())
        self.keep.append(buffer)
        return buffer

    def code(self, candidate):
        with open(os.path.join(self.dir, candidate["file"])) as f:
            return f.read()

    def tk_candidates(self, figure, grid_of):
        return [{"code": self.code(c), "entry": c["entry"],
                 "grid": grid_of(c), "label": c["label"],
                 "num_warps": c["num_warps"], "num_stages": c["num_stages"],
                 "constexprs": c["constexprs"],
                 "min_programs_per_cu": c["min_programs_per_cu"]}
                for c in figure["candidates"]]

    def tk_from_package(self, figure, grid_of, args):
        """Every candidate from the package; the pick is the fastest of them
        in interleaved rounds (tk_autotune compiles, the runtime cannot)."""
        tk_args = args()
        every = {}
        for c in figure["candidates"]:
            k = self.device.kernel(self.package, entry=c["package_entry"],
                                   package=True)
            self.keep.append(k)
            every[c["label"]] = (lambda k=k, g=grid_of(c): k.launch(
                g, tk_args, stream=self.stream))
        times = self.timer.interleaved(every, 3, 10)
        medians = {label: statistics.median(t) for label, t in times.items()}
        pick = min(medians, key=medians.get)
        return every[pick], pick, ({} if self.args.quick else every), False

    def tk_tuned(self, figure, grid_of, args):
        """tk_autotune's pick, and every candidate compiled for re-timing."""
        if self.package is not None:
            return self.tk_from_package(figure, grid_of, args)
        candidates = self.tk_candidates(figure, grid_of)
        tk_args = args()
        kernel, best, _, cached = self.device.autotune(
            candidates, tk_args, key=figure["name"], repetitions=10)
        self.keep.append(kernel)
        launch = lambda kernel=kernel, grid=candidates[best]["grid"]: kernel.launch(
            grid, tk_args, stream=self.stream)
        every = {}
        if not self.args.quick:
            for c in candidates:
                k = self.device.kernel(c["code"], entry=c["entry"],
                                       num_warps=c["num_warps"],
                                       num_stages=c["num_stages"],
                                       constexprs=c["constexprs"],
                                       min_programs_per_cu=c["min_programs_per_cu"])
                self.keep.append(k)
                every[c["label"]] = (lambda k=k, g=c["grid"]: k.launch(
                    g, tk_args, stream=self.stream))
        return launch, candidates[best]["label"], every, cached

    def autotune_check(self, every, pick, rounds, reps):
        """Times every candidate again, interleaved: was the pick the
        fastest, and by how much is it behind the one that was?"""
        if not every:
            return None
        times = self.timer.interleaved(every, rounds, reps)
        medians = {label: statistics.median(t) for label, t in times.items()}
        fastest = min(medians, key=medians.get)
        # Round by round, the pick's time over the fastest's (they ran back
        # to back): when the pick won some rounds, the re-timing cannot
        # tell the two apart.
        per_round = [p / f for p, f in zip(times[pick], times[fastest])]
        return {"pick": pick, "fastest": fastest,
                "pick_over_fastest_time": medians[pick] / medians[fastest],
                "pick_over_fastest_rounds": [min(per_round), max(per_round)],
                "pick_won_a_round": min(per_round) <= 1.0,
                "candidates_ms": medians}

    def run_figure(self, figure, contenders, checks, work, unit, tk_label,
                   every, cached, reps, peer_work=None):
        """Times `contenders` interleaved, checks each output, reports.
        `peer_work` names contenders whose work is not `work` (bytes of a
        copy)."""
        peer_work = peer_work or {}
        rounds = self.args.rounds
        results = {}
        for name, verify in checks.items():
            # A fresh run of each contender on a NaN-filled output, checked.
            verify["reset"]()
            contenders[name]()
            torch.cuda.synchronize()
            results[name] = {"check": verify["check"]()}
        times = self.timer.interleaved(contenders, rounds, reps)
        for name, rounds_ms in times.items():
            results.setdefault(name, {}).update(
                summary(rounds_ms, peer_work.get(name, work), unit))
        ratios = {name: ratio(times["tk"], times[name],
                              work / peer_work.get(name, work))
                  for name in times if name != "tk"}
        entry = {"name": figure["name"], "unit": unit, "work": work,
                 "tk_config": tk_label, "tk_config_from_cache": cached,
                 "contenders": results, "ratios": ratios}
        entry["autotune"] = self.autotune_check(every, tk_label, rounds,
                                                max(3, reps // 2))
        log(json.dumps({k: entry[k] for k in ("name", "tk_config", "ratios")}))
        return entry

    # vector add ------------------------------------------------------------
    def vector_add(self, figure):
        n = figure["shape"][0]
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        outs = {name: torch.empty_like(x) for name in ("tk", "triton", "torch")}
        copy_dst = torch.empty_like(x)
        bx, by, bo = self.wrap(x), self.wrap(y), self.wrap(outs["tk"])
        grid = lambda c: ((n + 1023) // 1024,)
        tk_launch, label, every, cached = self.tk_tuned(
            figure, grid, lambda: [bx, by, bo, tk.i32(n)])
        contenders = {
            "tk": tk_launch,
            "triton": lambda: triton_add[((n + 1023) // 1024,)](
                x, y, outs["triton"], n, BLOCK=1024, num_warps=4),
            "torch": lambda: torch.add(x, y, out=outs["torch"]),
            "d2d_copy": lambda: copy_dst.copy_(x),
        }
        want = x + y
        checks = {name: {"reset": (lambda o=o: sentinel(o)),
                         "check": (lambda o=o, name=name: check(name, o, want))}
                  for name, o in outs.items()}
        # The copy moves 8 bytes an element, vector add 12.
        return self.run_figure(figure, contenders, checks, 12.0 * n, "GB/s",
                               label, every, cached, reps=20,
                               peer_work={"d2d_copy": 8.0 * n})

    # softmax ---------------------------------------------------------------
    def softmax(self, figure):
        rows, cols = figure["shape"]
        x = torch.randn(rows, cols, device="cuda")
        outs = {name: torch.empty_like(x) for name in ("tk", "triton")}
        copy_dst = torch.empty_like(x)
        bx, bo = self.wrap(x), self.wrap(outs["tk"])
        tk_launch, label, every, cached = self.tk_tuned(
            figure, lambda c: (rows,),
            lambda: [bx, bo, tk.i32(cols), tk.i32(cols), tk.i32(cols)])
        block = triton.next_power_of_2(cols)
        configs = [triton_config({}, c) for c in figure["candidates"]]
        tri = tuned(triton_softmax, configs, ["n_cols"])
        contenders = {
            "tk": tk_launch,
            "triton": lambda: tri[(rows,)](outs["triton"], x, cols, cols, cols,
                                           BLOCK=block),
            # torch.softmax has no out=: it writes a tensor of its own,
            # checked below through the same reference.
            "torch": lambda: torch.softmax(x, dim=1),
            "d2d_copy": lambda: copy_dst.copy_(x),
        }
        want = torch.softmax(x.double(), dim=1)
        checks = {name: {"reset": (lambda o=o: sentinel(o)),
                         "check": (lambda o=o, name=name:
                                   check(name, o, want, rtol=1e-5))}
                  for name, o in outs.items() if name != "torch"}
        checks["torch"] = {"reset": lambda: None,
                           "check": lambda: check("torch", torch.softmax(x, dim=1),
                                                  want, rtol=1e-5)}
        entry = self.run_figure(figure, contenders, checks, 8.0 * rows * cols,
                                "GB/s", label, every, cached, reps=20)
        entry["contenders"]["triton"]["config"] = str(tri.best_config)
        return entry

    # matmul ----------------------------------------------------------------
    def matmul(self, figure):
        m, n, k = figure["shape"]
        dtype = TORCH[figure["dtype"]]
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(k, n, device="cuda", dtype=dtype)
        outs = {name: torch.empty(m, n, device="cuda", dtype=dtype)
                for name in ("tk", "triton", "cublas_torch", "cublas_direct")}
        ba, bb, bc = self.wrap(a), self.wrap(b), self.wrap(outs["tk"])
        grid = lambda c: (triton.cdiv(m, c["block"][0]) * triton.cdiv(n, c["block"][1]),)
        tk_launch, label, every, cached = self.tk_tuned(
            figure, grid, lambda: [ba, bb, bc, tk.i32(m), tk.i32(n), tk.i32(k),
                                   tk.i32(k), tk.i32(n), tk.i32(n)])
        configs = []
        for c in figure["candidates"]:
            bm, bn, bk = (int(v) for v in c["label"].split()[0].split("x"))
            configs.append(triton_config({"BM": bm, "BN": bn, "BK": bk,
                                          "GROUP": 8}, c))
        tri = tuned(triton_matmul, configs, ["M", "N", "K"])
        tri_grid = lambda meta: (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]),)
        contenders = {
            "tk": tk_launch,
            "triton": lambda: tri[tri_grid](a, b, outs["triton"], m, n, k, k, n, n),
            "cublas_torch": lambda: torch.matmul(a, b, out=outs["cublas_torch"]),
        }
        if self.cublas.lib is not None:
            contenders["cublas_direct"] = lambda: self.cublas.gemm(
                a, b, outs["cublas_direct"])
        else:
            outs.pop("cublas_direct")
        # The reference in f32 (no TF32), and the bound of both f32 sums:
        # K eps sum |a b| for the kernel's and as much for the reference's;
        # the result rounds once to the dtype.
        want = torch.matmul(a.float(), b.float())
        bound = 2 * k * EPS["f32"] * torch.matmul(a.float().abs(), b.float().abs())
        rtol = 2 * EPS[figure["dtype"]]
        checks = {name: {"reset": (lambda o=o: sentinel(o)),
                         "check": (lambda o=o, name=name:
                                   check(name, o, want, rtol=rtol, bound=bound))}
                  for name, o in outs.items()}
        reps = 10 if m * n * k >= 8192 ** 3 else 20
        entry = self.run_figure(figure, contenders, checks, 2.0 * m * n * k,
                                "TFLOP/s", label, every, cached, reps=reps)
        del want, bound
        entry["contenders"]["triton"]["config"] = str(tri.best_config)
        # The cuBLAS peer is the faster of its two readings in this run.
        readings = [r for r in ("cublas_torch", "cublas_direct")
                    if r in entry["contenders"]]
        best = max(readings, key=lambda r: entry["contenders"][r]["value"])
        entry["ratios"]["cublas"] = dict(entry["ratios"][best], reading=best)
        return entry

    # scaled fp8 matmuls ------------------------------------------------------
    def scaled_matmul(self, figure):
        return self.fp8_matmul(figure, row_scales=False)

    def row_scaled_matmul(self, figure):
        return self.fp8_matmul(figure, row_scales=True)

    def fp8_matmul(self, figure, row_scales):
        """fp8 e4m3 a (M x K) and b stored as N rows of K, per-tensor or
        per-row scales, a bf16 result: against torch._scaled_mm (cuBLASLt)
        and Triton. Every contender accumulates the products as the tensor
        cores do, without promoting partial sums (cuBLASLt's
        use_fast_accum=True): the same arithmetic."""
        m, n, k = figure["shape"]
        fp8 = torch.float8_e4m3fn
        a = torch.randn(m, k, device="cuda").to(fp8)
        b = torch.randn(n, k, device="cuda").to(fp8)
        if row_scales:
            # Powers of two and their halves: every product exact in f32.
            scale_a = (torch.arange(m, device="cuda") % 3 + 1).float().div(2)
            scale_b = (torch.arange(n, device="cuda") % 2).float().mul(-0.5).add(1.25)
            scales = scale_a[:, None] * scale_b[None, :]
            # _scaled_mm's row-wise form: (M, 1) and (1, N).
            mm_a, mm_b = scale_a[:, None].contiguous(), scale_b[None, :].contiguous()
            tk_scales = [self.wrap(scale_a), self.wrap(scale_b)]
        else:
            scale_a = torch.tensor(0.75, device="cuda")
            scale_b = torch.tensor(1.5, device="cuda")
            scales = 1.125
            mm_a, mm_b = scale_a, scale_b
            tk_scales = [tk.f32(0.75), tk.f32(1.5)]
        outs = {name: torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
                for name in ("tk", "triton")}
        ba, bb, bc = self.wrap(a), self.wrap(b), self.wrap(outs["tk"])
        grid = lambda c: (triton.cdiv(m, c["block"][0]) * triton.cdiv(n, c["block"][1]),)
        tk_launch, label, every, cached = self.tk_tuned(
            figure, grid, lambda: [ba, bb, bc, tk.i32(m), tk.i32(n), tk.i32(k),
                                   tk.i32(k), tk.i32(k), tk.i32(n)] + tk_scales)
        configs = []
        for c in figure["candidates"]:
            bm, bn, bk = (int(v) for v in c["label"].split()[0].split("x"))
            configs.append(triton_config({"BM": bm, "BN": bn, "BK": bk,
                                          "GROUP": 8,
                                          "ROW_SCALES": row_scales}, c))
        tri = tuned(triton_scaled_matmul, configs, ["M", "N", "K"])
        tri_grid = lambda meta: (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]),)

        def cublaslt():
            return torch._scaled_mm(a, b.t(), scale_a=mm_a, scale_b=mm_b,
                                    out_dtype=torch.bfloat16,
                                    use_fast_accum=True)

        contenders = {
            "tk": tk_launch,
            "triton": lambda: tri[tri_grid](a, b, outs["triton"], m, n, k, k,
                                            k, n, scale_a, scale_b),
            "cublaslt": cublaslt,
        }
        # The f32 reference of the fp8 values, scaled (exactly); the bound
        # as matmul's, the tensor cores' sums held to f32's.
        want = torch.matmul(a.float(), b.float().t()) * scales
        bound = 2 * k * EPS["f32"] * scales * torch.matmul(
            a.float().abs(), b.float().abs().t())
        rtol = 2 * EPS["bf16"]
        checks = {name: {"reset": (lambda o=o: sentinel(o)),
                         "check": (lambda o=o, name=name:
                                   check(name, o, want, rtol=rtol, bound=bound))}
                  for name, o in outs.items()}
        checks["cublaslt"] = {"reset": lambda: None,
                              "check": lambda: check("cublaslt", cublaslt(),
                                                     want, rtol=rtol,
                                                     bound=bound)}
        reps = 10 if m * n * k >= 8192 ** 3 else 20
        entry = self.run_figure(figure, contenders, checks, 2.0 * m * n * k,
                                "TFLOP/s", label, every, cached, reps=reps)
        del want, bound, scales
        entry["contenders"]["triton"]["config"] = str(tri.best_config)
        return entry

    # attention -------------------------------------------------------------
    def causal_attention(self, figure):
        return self.attention(figure, causal=True)

    def attention(self, figure, causal=False):
        """FlashAttention forward against Triton's and SDPA (cuDNN's or
        FlashAttention's, as torch picks); causal: query i over keys 0..i,
        half the products of the full figure counted."""
        heads, n, d = figure["shape"]
        batch = 4
        q, k, v = (torch.randn(batch, heads // batch, n, d, device="cuda",
                               dtype=torch.float16) for _ in range(3))
        outs = {name: torch.empty_like(q) for name in ("tk", "triton")}
        bq, bk, bv, bo = (self.wrap(t) for t in (q, k, v, outs["tk"]))
        scale = d ** -0.5
        tk_launch, label, every, cached = self.tk_tuned(
            figure, lambda c: (triton.cdiv(n, c["block"][0]), heads),
            lambda: [bq, bk, bv, bo, tk.i32(n), tk.i32(d), tk.f32(scale)])
        configs = [triton_config({"BM": c["block"][0], "BN": c["block"][1]}, c)
                   for c in figure["candidates"]]
        tri = tuned(triton_attention, configs, ["N", "D"])
        tri_grid = lambda meta: (triton.cdiv(n, meta["BM"]), heads)
        sdpa = torch.nn.functional.scaled_dot_product_attention
        contenders = {
            "tk": tk_launch,
            "triton": lambda: tri[tri_grid](q, k, v, outs["triton"], n, scale,
                                            D=d, CAUSAL=causal),
            # SDPA writes a tensor of its own, checked below.
            "sdpa": lambda: sdpa(q, k, v, is_causal=causal),
        }
        want, bound = attention_reference(q, k, v, scale, causal)
        checks = {name: {"reset": (lambda o=o: sentinel(o)),
                         "check": (lambda o=o, name=name:
                                   check(name, o, want, rtol=2 * EPS["f16"],
                                         bound=bound))}
                  for name, o in outs.items()}
        checks["sdpa"] = {"reset": lambda: None,
                          "check": lambda: check("sdpa",
                                                 sdpa(q, k, v, is_causal=causal),
                                                 want, rtol=2 * EPS["f16"],
                                                 bound=bound)}
        work = 4.0 * heads * n * n * d / (2 if causal else 1)
        entry = self.run_figure(figure, contenders, checks, work, "TFLOP/s",
                                label, every, cached, reps=10)
        entry["contenders"]["triton"]["config"] = str(tri.best_config)
        return entry


def attention_reference(q, k, v, scale, causal=False):
    """softmax(q k^T scale) v in f32 (causal: row i over keys 0..i), and
    each element's bound as the conformance suite derives it: the scores'
    f32 error moves each p relatively, p rounds to f16 for the second
    product, the exp and the online rescaling add a few dozen f32 ulps; each
    relative error of p moves the output by that much of sum p |v| / sum p."""
    b, h, n, d = q.shape
    want = torch.empty(b, h, n, d, device="cuda", dtype=torch.float32)
    bound = torch.empty_like(want)
    hidden = (torch.ones(n, n, device="cuda", dtype=torch.bool).triu(1)
              if causal else None)
    for i in range(b):
        for j in range(0, h, 4):
            qf, kf, vf = (t[i, j:j + 4].float() for t in (q, k, v))
            s = torch.matmul(qf, kf.transpose(-1, -2)) * scale
            s_abs = torch.matmul(qf.abs(), kf.abs().transpose(-1, -2)) * scale
            if causal:
                s = s.masked_fill(hidden, float("-inf"))
                s_abs = s_abs.masked_fill(hidden, 0.0)
            score_error = d * EPS["f32"] * s_abs.amax(-1, keepdim=True)
            p = torch.softmax(s, dim=-1)
            want[i, j:j + 4] = torch.matmul(p, vf)
            p_error = 2 * score_error + 64 * EPS["f32"] + EPS["f16"]
            bound[i, j:j + 4] = p_error * torch.matmul(p, vf.abs())
            del s, s_abs, p
    return want, bound


def gpu_clocks():
    query = ("name,clocks.sm,clocks.mem,clocks.max.sm,power.draw,"
             "power.limit,temperature.gpu")
    try:
        line = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return dict(zip(query.split(","), (v.strip() for v in line.split(","))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", action="append", default=[],
                        help="figure kinds: vector_add softmax matmul "
                        "scaled_matmul row_scaled_matmul attention causal_attention")
    parser.add_argument("--quick", action="store_true",
                        help="skip re-timing every candidate (the autotune check)")
    parser.add_argument("--commit", default=os.environ.get("TK_COMMIT", ""))
    parser.add_argument("--launch", help="tk-bench-cuda's JSON (the launch "
                        "overhead figure) to include in the run")
    parser.add_argument("--package", help="tk's candidates from this "
                        "package (tk-bench-kernels --package), not compiled")
    parser.add_argument("--manifest", help="the folder tk-bench-kernels "
                        "--emit wrote (with --package: made beside it)")
    args = parser.parse_args()
    if args.rounds < 3:
        parser.error("--rounds: at least 3, so that a spread means something")
    os.makedirs(args.out, exist_ok=True)
    if args.package and not args.manifest:
        parser.error("--package needs --manifest: the figures and candidates "
                     "the package was written with")
    manifest_dir = args.manifest
    if not manifest_dir:
        manifest_dir = tempfile.mkdtemp(prefix="tk-bench-kernels-")
        subprocess.run([os.path.join(ROOT, "build", "bin", "tk-bench-kernels"),
                        "--emit", manifest_dir], check=True)
    bench = Bench(args, manifest_dir)
    run = {"date": datetime.date.today().isoformat(), "commit": args.commit,
           "device": torch.cuda.get_device_name(), "clocks_before": gpu_clocks(),
           "triton": triton.__version__, "torch": torch.__version__,
           "rounds": args.rounds, "figures": [], "errors": [],
           "tk_kernels": (f"package {os.path.basename(args.package)} "
                          "(libtk_runtime.so where TK_LIBRARY names it); "
                          "pick: fastest in this run" if args.package
                          else "compiled; pick: tk_autotune"),
           "tk_library": os.environ.get("TK_LIBRARY", "")}
    for figure in bench.manifest["figures"]:
        if args.only and figure["kind"] not in args.only:
            continue
        log(f"== {figure['name']}")
        started = time.time()
        try:
            entry = getattr(bench, figure["kind"])(figure)
        except WrongResult as wrong:
            log(f"WRONG RESULT: {wrong}")
            run["errors"].append({"name": figure["name"], "error": str(wrong)})
            continue
        entry["seconds"] = time.time() - started
        entry["clocks_after"] = gpu_clocks()
        run["figures"].append(entry)
        torch.cuda.empty_cache()
    run["clocks_after"] = gpu_clocks()
    if args.launch:
        with open(args.launch) as f:
            run["launch_us_per_call"] = json.load(f).get("launch_us_per_call")
    path = os.path.join(args.out, "bench.json")
    with open(path, "w") as f:
        json.dump(run, f, indent=1)
    log(f"wrote {path}")
    sys.exit(1 if run["errors"] else 0)


if __name__ == "__main__":
    main()
