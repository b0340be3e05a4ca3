#!/usr/bin/env python3
"""Triton's kernels imported from their TTIR, against the same kernels
written in tk and against Triton itself, timed in one process.

For the corpus' grouped matmul (f16, 64x64x32 tiles, groups of 8, 4 warps,
3 stages) and persistent softmax (BLOCK 1024, 4 warps), three contenders run
interleaved by cuda_bench.py's Timer (the L2 flush, CUDA events, the median
of each round, rounds rotated):

- `tk_ttir`: tests/ttir/corpus/<kernel>/kernel.ttir through TK_SOURCE_TTIR,
  with the num_warps and num_stages of its kernel.json;
- `tk`: the same kernel written in tk (examples/kernels/matmul.tk,
  persistent_softmax.tk), with the same tiles, warps and stages, and the unit
  strides Triton specialised folded in as constexprs;
- `triton`: the Python kernel the TTIR came from (tests/ttir/make_corpus.py),
  with the same meta-parameters.

Every output is checked first. Writes ttir-bench.json into --out; exits 1
when an output is wrong or `tk_ttir` is more than --tolerance (5%) slower
than `tk` in the median of the rounds.

    bash .device/run.sh python3 backends/cuda/test/bench/ttir_bench.py --out $OUT
"""

import argparse
import datetime
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "ttir"))

import torch  # noqa: E402
import triton  # noqa: E402

# cuda_bench puts capi/python (tk.py) on the path.
from cuda_bench import (  # noqa: E402
    Timer, WrongResult, check, gpu_clocks, ratio, summary)
import make_corpus  # noqa: E402
import tk  # noqa: E402

CORPUS = os.path.join(ROOT, "tests", "ttir", "corpus")
KERNELS = os.path.join(ROOT, "examples", "kernels")


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def read(path):
    with open(path) as f:
        return f.read()


class TtirBench:
    def __init__(self, args):
        self.args = args
        self.device = tk.Device(0)
        if self.device.backend != "cuda":
            raise SystemExit("ttir_bench: set TK_BACKEND=cuda on a GPU machine")
        self.torch_stream = torch.cuda.Stream()
        torch.cuda.set_stream(self.torch_stream)
        self.stream = self.device.wrap_stream(self.torch_stream.cuda_stream)
        self.timer = Timer()
        self.keep = []

    def wrap(self, tensor):
        buffer = self.device.wrap_buffer(tensor.data_ptr(),
                                         tensor.numel() * tensor.element_size())
        self.keep.append(buffer)
        return buffer

    def imported(self, name):
        """The corpus kernel through TK_SOURCE_TTIR, compiled with Triton's
        num_warps and num_stages (tk_ttir_read_metadata's fields)."""
        meta = json.loads(read(os.path.join(CORPUS, name, "kernel.json")))
        kernel = self.device.kernel(
            read(os.path.join(CORPUS, name, "kernel.ttir")), ttir=True,
            num_warps=meta["num_warps"], num_stages=meta["num_stages"])
        self.keep.append(kernel)
        return kernel, meta

    def figure(self, name, contenders, outputs, want, tolerance, work, unit):
        results = {}
        for label, fn in contenders.items():
            outputs[label].fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            results[label] = {"check": check(f"{name} {label}", outputs[label],
                                             want, **tolerance)}
        times = self.timer.interleaved(contenders, self.args.rounds,
                                       self.args.reps)
        for label, rounds_ms in times.items():
            results[label].update(summary(rounds_ms, work, unit))
        ratios = {f"tk_ttir/{peer}": ratio(times["tk_ttir"], times[peer])
                  for peer in times if peer != "tk_ttir"}
        for key, r in ratios.items():
            log(f"  {key}: {r['ratio']:.3f} (rounds {r['low']:.3f}-{r['high']:.3f})")
        return {"name": name, "unit": unit, "results": results,
                "ratios": ratios}

    def matmul(self):
        kernel, meta = self.imported("matmul_f16")
        c = meta["constexprs"]
        M = N = K = self.args.size
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        outs = {k: torch.empty(M, N, device="cuda", dtype=torch.float16)
                for k in ("tk_ttir", "tk", "triton")}
        grid = (triton.cdiv(M, c["BLOCK_M"]) * triton.cdiv(N, c["BLOCK_N"]),)
        A, B = self.wrap(a), self.wrap(b)
        # Triton specialised the unit strides (stride_ak, stride_bn,
        # stride_cn) away: its TTIR takes the other nine arguments.
        ttir_args = [A, B, self.wrap(outs["tk_ttir"]), tk.i32(M), tk.i32(N),
                     tk.i32(K), tk.i32(K), tk.i32(N), tk.i32(N)]
        written = self.device.kernel(
            read(os.path.join(KERNELS, "matmul.tk")), entry="matmul",
            num_warps=meta["num_warps"], num_stages=meta["num_stages"],
            constexprs={"stride_ak": 1, "stride_bn": 1, "stride_cn": 1})
        self.keep.append(written)
        tk_args = [A, B, self.wrap(outs["tk"]), tk.i32(M), tk.i32(N),
                   tk.i32(K), tk.i32(K), tk.i32(N), tk.i32(N)]
        contenders = {
            "tk_ttir": lambda: kernel.launch(grid, ttir_args, stream=self.stream),
            "tk": lambda: written.launch(grid, tk_args, stream=self.stream),
            "triton": lambda: make_corpus.matmul[grid](
                a, b, outs["triton"], M, N, K, K, 1, N, 1, N, 1, **c,
                num_warps=meta["num_warps"], num_stages=meta["num_stages"]),
        }
        want = (a.float() @ b.float()).half()
        # f32 sums of K products in another order, then one f16 rounding.
        tolerance = {"rtol": 2 * 2.0 ** -10, "floor": 2.0 ** -10}
        return self.figure(f"matmul_f16 {M}x{N}x{K}", contenders, outs, want,
                           tolerance, 2.0 * M * N * K, "TFLOP/s")

    def softmax(self):
        kernel, meta = self.imported("fused_softmax")
        rows, cols = self.args.rows, self.args.cols
        x = torch.randn(rows, cols, device="cuda", dtype=torch.float32)
        outs = {k: torch.empty_like(x) for k in ("tk_ttir", "tk", "triton")}
        X = self.wrap(x)
        # Persistent: a program per SM times the programs that fit at once
        # (the tutorial's sizing), the same grid for every contender.
        programs = torch.cuda.get_device_properties(0).multi_processor_count
        grid = (programs * self.args.programs_per_sm,)
        ttir_args = [self.wrap(outs["tk_ttir"]), X, tk.i32(cols), tk.i32(cols),
                     tk.i32(rows), tk.i32(cols)]
        written = self.device.kernel(
            read(os.path.join(KERNELS, "persistent_softmax.tk")),
            entry="persistent_softmax", num_warps=meta["num_warps"],
            num_stages=meta["num_stages"])
        self.keep.append(written)
        tk_args = [X, self.wrap(outs["tk"]), tk.i32(cols), tk.i32(cols),
                   tk.i32(rows), tk.i32(cols)]
        contenders = {
            "tk_ttir": lambda: kernel.launch(grid, ttir_args, stream=self.stream),
            "tk": lambda: written.launch(grid, tk_args, stream=self.stream),
            "triton": lambda: make_corpus.fused_softmax[grid](
                outs["triton"], x, cols, cols, rows, cols, BLOCK=1024,
                num_warps=meta["num_warps"]),
        }
        want = torch.softmax(x.double(), dim=1)
        tolerance = {"rtol": 64 * 2.0 ** -23, "floor": 8 * 2.0 ** -23}
        # Bytes read and written.
        return self.figure(f"fused_softmax {rows}x{cols}", contenders, outs,
                           want, tolerance, 2.0 * rows * cols * 4, "GB/s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--rows", type=int, default=16384)
    parser.add_argument("--cols", type=int, default=1000)
    parser.add_argument("--programs-per-sm", type=int, default=4)
    parser.add_argument("--tolerance", type=float, default=0.05)
    parser.add_argument("--commit", default=os.environ.get("TK_COMMIT", ""))
    args = parser.parse_args()
    if args.rows % 16:
        parser.error("--rows: a multiple of 16 (the corpus' TTIR was "
                     "specialised for n_rows divisible by 16)")
    # Make --out before measuring, so that a path that cannot be written
    # fails now rather than after every figure.
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        parser.error(f"--out {args.out}: {e.strerror}")
    if not os.access(args.out, os.W_OK):
        parser.error(f"--out {args.out}: not writable")
    bench = TtirBench(args)
    run = {"date": datetime.date.today().isoformat(), "commit": args.commit,
           "device": torch.cuda.get_device_name(), "clocks_before": gpu_clocks(),
           "triton": triton.__version__, "torch": torch.__version__,
           "rounds": args.rounds, "tolerance": args.tolerance, "figures": [],
           "errors": []}
    for kind in ("matmul", "softmax"):
        log(f"== {kind}")
        try:
            run["figures"].append(getattr(bench, kind)())
        except WrongResult as wrong:
            log(f"WRONG RESULT: {wrong}")
            run["errors"].append({"name": kind, "error": str(wrong)})
    run["clocks_after"] = gpu_clocks()
    slow = [f["name"] for f in run["figures"]
            if f["ratios"]["tk_ttir/tk"]["ratio"] < 1.0 - args.tolerance]
    run["within_tolerance"] = not slow and not run["errors"]
    path = os.path.join(args.out, "ttir-bench.json")
    with open(path, "w") as f:
        json.dump(run, f, indent=1)
    log(f"wrote {path}")
    if slow:
        log(f"tk_ttir more than {args.tolerance:.0%} behind tk: {', '.join(slow)}")
    sys.exit(0 if run["within_tolerance"] else 1)


if __name__ == "__main__":
    main()
