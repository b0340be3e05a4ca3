#!/usr/bin/env python3
"""The same tk kernels on several backends of one machine, by tk's events.

Times the memory-bound seed kernels (vector add, softmax, layernorm,
transpose) on each backend named (e.g. cuda and vulkan on the GPU machine),
with the same inputs, and writes backend-bench.json into --out: for each
kernel and backend the median of each round's median launch, GB/s, and each
backend's ratio to the first one named.

A process holds one backend (TK_BACKEND is read when libtk loads), so each
round runs one worker process per backend, the backends taking turns round
by round; each worker checks every kernel's output before timing it and
times each launch between two tk events on one stream (CUDA events, Vulkan
timestamp queries).

  TK_LIBRARY=build/lib/libtk.so TK_BACKEND_PATH=build/lib \\
    python3 tests/bench/backend_bench.py --backends cuda,vulkan --out $OUT

Standard library only: the inputs are a repeated pattern, and outputs are
checked at sampled rows and elements against Python's double arithmetic.
"""

import argparse
import datetime
import json
import math
import os
import re
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "capi", "python"))
KERNELS = os.path.join(ROOT, "examples", "kernels")


class WrongResult(Exception):
    pass


def pattern(count, scale, offset=0.0, period=4093):
    """`count` f32 values repeating every `period` (a prime, so rows of
    another length see every phase), as bytes and as a lookup."""
    values = [((i * 37) % period) * scale / period - offset
              for i in range(period)]
    one = struct.pack(f"<{period}f", *values)
    whole = one * (count // period) + one[:4 * (count % period)]
    # Read back through f32, as the device sees them.
    rounded = struct.unpack(f"<{period}f", one)
    return whole, lambda i: rounded[i % period]


def floats(data, start, count):
    return struct.unpack_from(f"<{count}f", data, 4 * start)


def close(got, want, rtol, atol, what):
    if not abs(got - want) <= atol + rtol * abs(want):
        raise WrongResult(f"{what}: got {got!r}, want {want!r}")


def kernel_source(name):
    """The .tk text of kernel `name`: examples/kernels/NAME.tk, or for
    matmul_128 the seed matmul with 128x128 blocks (every 64 in matmul.tk
    is BLOCK_M or BLOCK_N)."""
    if name == "matmul_128":
        with open(os.path.join(KERNELS, "matmul.tk")) as f:
            return f.read().replace("64", "128").replace("@matmul(",
                                                         "@matmul_128(")
    with open(os.path.join(KERNELS, name + ".tk")) as f:
        return f.read()


class Worker:
    def __init__(self, reps, package=None, warm_s=0.25):
        import tk  # after TK_BACKEND is set
        self.tk = tk
        self.device = tk.Device(0)
        self.stream = self.device.stream()
        self.reps = reps
        self.warm_s = warm_s
        self.package = None
        if package:
            with open(package, "rb") as f:
                self.package = f.read()

    def kernel(self, name):
        if self.package is not None:
            return self.device.kernel(self.package, entry=name, package=True)
        return self.device.kernel(kernel_source(name), entry=name)

    def buffer(self, data):
        buffer = self.device.buffer(len(data))
        buffer.write(data)
        return buffer

    def time(self, kernel, grid, args):
        """The median of `reps` launches, each between two events, after
        unmeasured ones for at least `warm_s` seconds (three at least): an
        idle GPU runs at its lowest clock (345 MHz on an H100), and the
        first figure of a worker was taken at it, up to 3.5x slow; also
        (self.back_to_back) the mean of `reps` launches queued back to
        back between one pair of events, where the host's cost of a launch
        overlaps the device's work."""
        self.occupancy = kernel.occupancy
        started, launched = time.perf_counter(), 0
        while launched < 3 or time.perf_counter() - started < self.warm_s:
            for _ in range(3):
                kernel.launch(grid, args, stream=self.stream)
            launched += 3
            self.stream.synchronize()
        times = []
        start, end = self.device.event(), self.device.event()
        for _ in range(self.reps):
            start.record(self.stream)
            kernel.launch(grid, args, stream=self.stream)
            end.record(self.stream)
            end.synchronize()
            times.append(start.elapsed_ms(end))
        start.record(self.stream)
        for _ in range(self.reps):
            kernel.launch(grid, args, stream=self.stream)
        end.record(self.stream)
        end.synchronize()
        self.back_to_back = start.elapsed_ms(end) / self.reps
        return statistics.median(times)

    def vector_add(self):
        # 2^26 elements, or fewer where the grid cannot hold them (lavapipe
        # allows 65535 programs along x).
        grid_limit = self.device.properties()["max_grid"][0]
        tk, n = self.tk, min(1 << 26, 1024 * grid_limit)
        xs, x_at = pattern(n, 10.0)
        ys, y_at = pattern(n, 3.0, 1.0, period=4091)
        x, y = self.buffer(xs), self.buffer(ys)
        out = self.device.buffer(4 * n)
        kernel = self.kernel("vector_add")
        args, grid = [x, y, out, tk.i32(n)], ((n + 1023) // 1024,)
        kernel.launch(grid, args, stream=self.stream, wait=True)
        got = out.read()
        for i in range(0, n, 99991):
            close(floats(got, i, 1)[0], x_at(i) + y_at(i), 1e-6, 0, f"out[{i}]")
        return self.time(kernel, grid, args), 12 * n, f"f32 {n}"

    def softmax(self):
        return self.time_softmax("softmax", lambda kernel, rows: (rows,),
                                 lambda rows, cols: [cols] * 3)

    def persistent_softmax(self):
        # softmax's rows and check, with as many programs as the device holds
        # at once (occupancy x compute units), each taking rows p, p + grid,
        # ...: what one-row programs cost against a loop over rows.
        units = self.device.properties()["compute_units"]
        if units <= 0:
            raise WrongResult("persistent_softmax: the device reports no "
                              "compute units to size its grid by")
        return self.time_softmax(
            "persistent_softmax",
            lambda kernel, rows: (min(rows, max(1, kernel.occupancy) * units),),
            lambda rows, cols: [cols, cols, rows, cols])

    def time_softmax(self, name, grid_of, scalars_of):
        """Softmax kernel `name` over 32768 rows of 1000 f32, its grid and
        i32 arguments after the two buffers given by `grid_of(kernel, rows)`
        and `scalars_of(rows, cols)`; rows sampled against Python's doubles."""
        tk, rows, cols = self.tk, 32768, 1000
        data, _ = pattern(rows * cols, 8.0, 4.0)
        x = self.buffer(data)
        out = self.device.buffer(4 * rows * cols)
        kernel = self.kernel(name)
        grid = grid_of(kernel, rows)
        args = [x, out] + [tk.i32(v) for v in scalars_of(rows, cols)]
        kernel.launch(grid, args, stream=self.stream, wait=True)
        got = out.read()
        for row in range(0, rows, 4099):
            v = floats(data, row * cols, cols)
            m = max(v)
            e = [math.exp(a - m) for a in v]
            s = sum(e)
            g = floats(got, row * cols, cols)
            for j in range(0, cols, 37):
                close(g[j], e[j] / s, 1e-5, 1e-9, f"row {row} col {j}")
        return self.time(kernel, grid, args), 8 * rows * cols, \
            f"f32 {rows}x{cols}"

    def layernorm(self):
        tk, rows, cols, eps = self.tk, 32768, 1000, 1e-5
        data, _ = pattern(rows * cols, 6.0, 3.0)
        wdata, _ = pattern(cols, 2.0, 0.0, period=997)
        bdata, _ = pattern(cols, 1.0, 0.5, period=991)
        x, w, b = self.buffer(data), self.buffer(wdata), self.buffer(bdata)
        y = self.device.buffer(4 * rows * cols)
        kernel = self.kernel("layernorm")
        args = [x, y, w, b, tk.i32(cols), tk.i32(cols), tk.f32(eps)]
        kernel.launch((rows,), args, stream=self.stream, wait=True)
        got = y.read()
        wv, bv = floats(wdata, 0, cols), floats(bdata, 0, cols)
        for row in range(0, rows, 4099):
            v = floats(data, row * cols, cols)
            mean = sum(v) / cols
            var = sum((a - mean) ** 2 for a in v) / cols
            r = 1 / math.sqrt(var + eps)
            g = floats(got, row * cols, cols)
            for j in range(0, cols, 37):
                close(g[j], (v[j] - mean) * r * wv[j] + bv[j], 1e-4, 1e-5,
                      f"row {row} col {j}")
        return self.time(kernel, (rows,), args), 8 * rows * cols, \
            f"f32 {rows}x{cols}"

    def matrix_transpose(self):
        tk, n = self.tk, 8192
        data, at = pattern(n * n, 100.0)
        x = self.buffer(data)
        out = self.device.buffer(4 * n * n)
        kernel = self.kernel("matrix_transpose")
        args = [x, out, tk.i32(n), tk.i32(n), tk.i32(n), tk.i32(1),
                tk.i32(n), tk.i32(1)]
        grid = ((n + 31) // 32, (n + 31) // 32)
        kernel.launch(grid, args, stream=self.stream, wait=True)
        got = out.read()
        for i in range(0, n, 509):
            for j in range(0, n, 1021):
                close(floats(got, j * n + i, 1)[0], at(i * n + j), 0, 0,
                      f"out[{j}][{i}]")
        return self.time(kernel, grid, args), 8 * n * n, f"f32 {n}x{n}"


    def matmul(self, name="matmul", block=64, block_n=None,
               unit_strides=False, dtype="f16"):
        # The seed matmul (examples/kernels/matmul.tk: 64x64x32 blocks), f16
        # (or bf16) in and out, f32 sums: on Vulkan, cooperative matrices
        # where the device has them.
        tk, n = self.tk, 4096
        period_a, period_b = 4093, 4091
        av = [((i * 37) % period_a) / period_a - 0.5 for i in range(period_a)]
        bv = [((i * 53) % period_b) / period_b - 0.5 for i in range(period_b)]
        pack, unpack = ((pack_bf16, unpack_bf16) if dtype == "bf16" else
                        (lambda v: struct.pack(f"<{len(v)}e", *v),
                         lambda d: struct.unpack(f"<{len(d) // 2}e", d)))
        ab, bb = pack(av), pack(bv)
        a_rounded, b_rounded = unpack(ab), unpack(bb)
        count = n * n
        a_data = ab * (count // period_a) + ab[:2 * (count % period_a)]
        b_data = bb * (count // period_b) + bb[:2 * (count % period_b)]
        a, b = self.buffer(a_data), self.buffer(b_data)
        c = self.device.buffer(2 * count)
        kernel = self.kernel(name)
        # A tuned configuration is specialised as cuda_bench.py's are:
        # stride_ak, stride_bn and stride_cn are constexprs of 1.
        args = ([a, b, c] + [tk.i32(n)] * 6 if unit_strides else
                [a, b, c, tk.i32(n), tk.i32(n), tk.i32(n), tk.i32(n),
                 tk.i32(1), tk.i32(n), tk.i32(1), tk.i32(n), tk.i32(1)])
        grid = ((n // block) * (n // (block_n or block)),)
        kernel.launch(grid, args, stream=self.stream, wait=True)
        got = c.read()
        for row, col in [(0, 0), (1, 4095), (777, 1234), (2048, 63),
                         (4095, 4095), (3000, 17)]:
            want = sum(a_rounded[(row * n + k) % period_a] *
                       b_rounded[(k * n + col) % period_b] for k in range(n))
            at = 2 * (row * n + col)
            value = unpack(got[at:at + 2])[0]
            close(value, want, 1e-2, 5e-2, f"c[{row}][{col}]")
        return self.time(kernel, grid, args), 2 * n * n * n, \
            f"{dtype} {n}^3 (flops)"

    def matmul_128(self):
        # The same with 128x128 blocks.
        return self.matmul("matmul_128", 128)


    def attention(self):
        # The bench's attention (tk-bench-kernels' attention_fwd, from the
        # package: its entry attention_fwd), f16, 32 heads of 4096 x 64,
        # softmax(q k^T / 8) v; rows sampled against Python's doubles.
        if self.package is None:
            raise WrongResult("attention: only from a --package holding "
                              "tk-bench-kernels' attention_fwd")
        tk, heads, n, d = self.tk, 32, 4096, 64
        count = heads * n * d
        data = {}
        for name, period, mult in (("q", 4093, 37), ("k", 4091, 53),
                                   ("v", 4079, 61)):
            values = [((i * mult) % period) / period - 0.5
                      for i in range(period)]
            one = struct.pack(f"<{period}e", *values)
            data[name] = (one * (count // period) +
                          one[:2 * (count % period)],
                          struct.unpack(f"<{period}e", one), period)
        q, k, v = (self.buffer(data[x][0]) for x in "qkv")
        o = self.device.buffer(2 * count)
        scale = d ** -0.5
        kernel = self.kernel("attention_fwd")
        args = [q, k, v, o, tk.i32(n), tk.i32(d), tk.f32(scale)]
        grid = ((n + 63) // 64, heads)
        kernel.launch(grid, args, stream=self.stream, wait=True)
        got = o.read()

        def at(name, index):
            _, rounded, period = data[name]
            return rounded[index % period]

        for head, row in ((0, 0), (7, 1000), (31, 4095)):
            base = head * n * d
            qrow = [at("q", base + row * d + c) for c in range(d)]
            scores = [scale * sum(qrow[c] * at("k", base + j * d + c)
                                  for c in range(d)) for j in range(n)]
            top = max(scores)
            weights = [math.exp(x - top) for x in scores]
            total = sum(weights)
            for c in range(0, d, 9):
                want = sum(w * at("v", base + j * d + c)
                           for j, w in enumerate(weights)) / total
                value = struct.unpack_from(
                    "<e", got, 2 * (base + row * d + c))[0]
                close(value, want, 1e-2, 2e-3, f"o[{head}][{row}][{c}]")
        return self.time(kernel, grid, args), 4 * heads * n * n * d, \
            f"f16 {heads}x{n}x{d} (flops)"


KERNEL_NAMES = ["vector_add", "softmax", "layernorm", "matrix_transpose",
                "matmul", "matmul_128", "attention", "persistent_softmax"]


# tk-bench-kernels' matmul configurations, from a package whose entries are
# named so (the seed matmul's signature and grouped order).
TUNED_MATMUL = re.compile(
    r"matmul_(\d+)x(\d+)x(\d+)_w(\d+)(_s\d+)?(_peel)?(_div16)?(_bf16)?$")


def pack_bf16(values):
    """Each float as bf16 (rounded to nearest, ties to even), packed."""
    words = struct.unpack(f"<{len(values)}I",
                          struct.pack(f"<{len(values)}f", *values))
    return struct.pack(f"<{len(values)}H", *(
        (w + 0x7FFF + ((w >> 16) & 1)) >> 16 for w in words))


def unpack_bf16(data):
    """The floats of packed bf16."""
    halves = struct.unpack(f"<{len(data) // 2}H", data)
    return struct.unpack(f"<{len(halves)}f",
                         struct.pack(f"<{len(halves)}I",
                                     *(h << 16 for h in halves)))


def work(args):
    worker = Worker(args.reps, args.package, args.warm_ms / 1000)
    result = {"backend": worker.device.backend,
              "device": worker.device.properties()["name"], "kernels": {}}
    for name in args.kernels.split(","):
        try:
            tuned = TUNED_MATMUL.match(name)
            if tuned:
                if worker.package is None:
                    raise WrongResult(f"{name}: only from a --package")
                ms, nbytes, shape = worker.matmul(
                    name, int(tuned[1]), int(tuned[2]), unit_strides=True,
                    dtype="bf16" if tuned[8] else "f16")
            else:
                ms, nbytes, shape = getattr(worker, name)()
            # Programs of the kernel one compute unit holds at once
            # (tk_kernel_occupancy).
            result["kernels"][name] = {
                "ms": ms, "ms_back_to_back": worker.back_to_back,
                "bytes": nbytes, "shape": shape,
                "occupancy": worker.occupancy}
        except (WrongResult, worker.tk.TkError) as error:
            result["kernels"][name] = {"error": str(error)}
    print(json.dumps(result))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backends", default="cuda,vulkan")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--warm-ms", type=float, default=250,
                        help="unmeasured launches of each kernel for at "
                        "least this long before its timed ones, so that "
                        "the GPU's clock has risen (default 250)")
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    parser.add_argument("--commit", default=os.environ.get("TK_COMMIT", ""))
    parser.add_argument("--package", default="",
                        help="load the kernels from this .tkpkg (tk-compile "
                        "--package of examples/kernels' vector_add, softmax, "
                        "layernorm and matrix_transpose) instead of "
                        "compiling them: with TK_LIBRARY naming "
                        "libtk_runtime.so, no compiler in the process")
    parser.add_argument("--kernels", default=",".join(KERNEL_NAMES[:4]),
                        help="the kernels to time, of " +
                        ", ".join(KERNEL_NAMES) + ", and from a package "
                        "matmul_<BM>x<BN>x<BK>_w<W>[_s<S>][_peel][_div16][_bf16] (tk-bench-kernels' "
                        "matmul configurations renamed, compiled with "
                        "--constexpr stride_ak=1 stride_bn=1 stride_cn=1)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    unknown = {name for name in args.kernels.split(",")
               if name not in KERNEL_NAMES and not TUNED_MATMUL.match(name)}
    if unknown:
        parser.error("--kernels: no kernel " + ", ".join(sorted(unknown)))
    if args.worker:
        return work(args)
    backends = [b for b in args.backends.split(",") if b]
    if not backends:
        parser.error("--backends: name at least one")
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        parser.error(f"--out {args.out}: {e.strerror}")

    rounds = {b: [] for b in backends}
    for round_index in range(args.rounds):
        for backend in backends:
            env = dict(os.environ, TK_BACKEND=backend)
            run = subprocess.run(
                [sys.executable, __file__, "--worker", "--reps",
                 str(args.reps), "--warm-ms", str(args.warm_ms),
                 "--kernels", args.kernels] +
                (["--package", os.path.abspath(args.package)]
                 if args.package else []),
                env=env, capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"backend_bench: the {backend} worker failed "
                         f"(exit {run.returncode}):\n{run.stderr}")
            rounds[backend].append(json.loads(run.stdout.strip().splitlines()[-1]))
            print(f"round {round_index + 1}/{args.rounds} {backend} done",
                  file=sys.stderr, flush=True)

    figures, failed = [], False
    first = backends[0]
    for name in args.kernels.split(","):
        figure = {"name": name, "backends": {}}
        # matmul's "bytes" are its flops.
        unit = ("GFLOP/s" if name.startswith(("matmul", "attention"))
                else "GB/s")
        for backend in backends:
            runs = [r["kernels"][name] for r in rounds[backend]]
            errors = [r["error"] for r in runs if "error" in r]
            if errors:
                figure["backends"][backend] = {"error": errors[0]}
                failed = True
                continue
            medians = [r["ms"] for r in runs]
            ms = statistics.median(medians)
            back_to_back = statistics.median(r["ms_back_to_back"]
                                             for r in runs)
            figure["shape"] = runs[0]["shape"]
            figure["backends"][backend] = {
                "ms": ms, unit: runs[0]["bytes"] / ms / 1e6,
                "round_medians_ms": medians,
                "ms_back_to_back": back_to_back,
                unit + " back to back": runs[0]["bytes"] / back_to_back / 1e6,
                "occupancy": runs[0].get("occupancy"),
                "device": rounds[backend][0]["device"]}
        base = figure["backends"].get(first, {})
        for backend in backends[1:]:
            other = figure["backends"].get(backend, {})
            if "ms" in base and "ms" in other:
                figure[f"{backend}/{first}"] = base["ms"] / other["ms"]
                figure[f"{backend}/{first} back to back"] = (
                    base["ms_back_to_back"] / other["ms_back_to_back"])
        figures.append(figure)
        line = "  ".join(
            f"{b} {v[unit]:8.1f} {unit}" if "ms" in v else f"{b} ERROR"
            for b, v in figure["backends"].items())
        ratios = "  ".join(f"{k} {v:.3f}" for k, v in figure.items()
                           if "/" in k)
        print(f"{name:18} {figure.get('shape', ''):14} {line}  {ratios}")

    result = {"date": datetime.date.today().isoformat(),
              "commit": args.commit, "backends": backends,
              "package": os.path.basename(args.package) if args.package else None,
              "rounds": args.rounds, "reps": args.reps, "figures": figures}
    path = os.path.join(args.out, "backend-bench.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {path}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
