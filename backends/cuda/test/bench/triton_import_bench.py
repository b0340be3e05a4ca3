#!/usr/bin/env python3
"""Triton's kernels, compiled by Triton, imported into tk from the TTIR
Triton wrote, and timed against Triton itself in one process.

Each kernel (tests/ttir/make_corpus.py's, which follow Triton's tutorials)
is launched once by Triton at a configuration its authors use; the TTIR of
that compile (`compiled.asm["ttir"]`) is then compiled by tk through
TK_SOURCE_TTIR with the same num_warps and num_stages. Both outputs are
checked against torch before any timing, then the two contenders run
interleaved by cuda_bench.py's Timer (the L2 flush, CUDA events, the median
of each round, rounds rotated). The figure is tk's throughput over
Triton's, the median of the rounds with their range.

Covered: vector add; the fused softmax at 4, 8 and 16 warps (a row a
program, BLOCK the next power of two of the row); layernorm's forward pass;
a transpose by 64x64 blocks; the corpus' attention forward at head dims 64
and 128, and the fused-attention tutorial's descriptor form at both (made
in the kernel, and passed from the host); the
matmul configurations Triton's matmul tutorial autotunes over, in f16 and
bf16 at 4096^3, and the tutorial's own kernel (tl.assume, the fused
activation) at three of them and on fp8 e4m3 at the tutorial's eight fp8
configurations (b transposed, as it runs them; --only picks a family). Integer arguments equal to 1 are
specialised away by Triton and so are never passed here.

    bash .device/run.sh python3 backends/cuda/test/bench/triton_import_bench.py --out $OUT

Writes triton-import.json into --out; exits 1 when an output is wrong.
"""

import argparse
import datetime
import json
import os
import sys
import time

import torch
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "ttir"))

# cuda_bench puts capi/python (tk.py) on the path.
from cuda_bench import (  # noqa: E402
    Timer, WrongResult, check, gpu_clocks, ratio, summary)
import make_corpus  # noqa: E402
import tk  # noqa: E402


def log(*args):
    print(*args, file=sys.stderr, flush=True)


class HostDescriptor:
    """A TensorDescriptor argument made on the host over a tensor seen as
    `rows` x its last dimension: Triton takes the descriptor; tk takes its
    base, shape (i32 each) and strides (i64 each). An output's has no
    tensor until each contender's is given (`over`)."""

    def __init__(self, tensor, block_shape, rows):
        self.tensor, self.block_shape, self.rows = tensor, block_shape, rows

    def over(self, tensor):
        return HostDescriptor(tensor, self.block_shape, self.rows)

    def view(self):
        return self.tensor.view(self.rows, self.tensor.shape[-1])

    def for_triton(self):
        return make_corpus.tensor_descriptor(self.view(), self.block_shape)

    def for_tk(self):
        view = self.view()
        return ([view] + [tk.i32(n) for n in view.shape] +
                [tk.i64(n) for n in view.stride()])


def attention_inputs(heads, ctx, dim):
    """q, k and v of an attention forward, its scale and its answer (in
    f64, rounded to f16)."""
    q, k, v = (torch.randn(heads, ctx, dim, device="cuda",
                           dtype=torch.float16) for _ in range(3))
    scale = dim ** -0.5
    scores = (q.double() @ k.double().transpose(1, 2)) * scale
    want = (torch.softmax(scores, dim=-1) @ v.double()).to(torch.float16)
    return q, k, v, scale, want


class Bench:
    def __init__(self, args):
        self.args = args
        self.device = tk.Device(0)
        if self.device.backend != "cuda":
            raise SystemExit("triton_import_bench: set TK_BACKEND=cuda on a "
                             "GPU machine")
        self.torch_stream = torch.cuda.Stream()
        torch.cuda.set_stream(self.torch_stream)
        self.stream = self.device.wrap_stream(self.torch_stream.cuda_stream)
        self.timer = Timer()
        self.keep = []

    def tk_arg(self, value):
        if isinstance(value, tk._Scalar):
            return value
        if isinstance(value, torch.Tensor):
            buffer = self.device.wrap_buffer(
                value.data_ptr(), value.numel() * value.element_size())
            self.keep.append(buffer)
            return buffer
        if isinstance(value, float):
            return tk.f32(value)
        return tk.i32(value)

    def figure(self, name, kernel, grid, inputs, outputs, want, tolerance,
               constexprs, options, work, unit):
        """`inputs` and `outputs` are the kernel's arguments in order, each
        either an input (tensor or scalar) or, at the indices in `outputs`,
        None: each contender gets outputs of its own, shaped like want."""
        outs = {label: [torch.full_like(w, float("nan")) for w in want]
                for label in ("tk_ttir", "triton")}

        def arguments(label):
            result, taken = [], iter(outs[label])
            for i, value in enumerate(inputs):
                if i in outputs:
                    out = next(taken)
                    value = (value.over(out)
                             if isinstance(value, HostDescriptor) else out)
                result.append(value)
            return result

        triton_args = [v.for_triton() if isinstance(v, HostDescriptor) else v
                       for v in arguments("triton")]
        compiled = kernel[grid](*triton_args, **constexprs, **options)
        torch.cuda.synchronize()
        imported = self.device.kernel(
            compiled.asm["ttir"], ttir=True,
            num_warps=compiled.metadata.num_warps,
            num_stages=compiled.metadata.num_stages)
        self.keep.append(imported)
        if self.args.save_ttir:
            self.save_ttir(name, compiled)
        launch_grid = tuple(grid)
        tk_args = []
        for v in arguments("tk_ttir"):
            if isinstance(v, HostDescriptor):
                tk_args += [self.tk_arg(part) for part in v.for_tk()]
            elif not (isinstance(v, int) and v == 1):
                tk_args.append(self.tk_arg(v))
        contenders = {
            "tk_ttir": lambda: imported.launch(launch_grid, tk_args,
                                               stream=self.stream),
            "triton": lambda: kernel[grid](*triton_args, **constexprs,
                                           **options),
        }
        results = {}
        for label, fn in contenders.items():
            for o in outs[label]:
                o.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            results[label] = {"check": [
                check(f"{name} {label}", got, w, **tolerance)
                for got, w in zip(outs[label], want)]}
        times = self.timer.interleaved(contenders, self.args.rounds,
                                       self.args.reps)
        for label, rounds_ms in times.items():
            results[label].update(summary(rounds_ms, work, unit))
        r = ratio(times["tk_ttir"], times["triton"])
        log(f"{name}: tk_ttir/triton {r['ratio']:.3f} "
            f"(rounds {r['low']:.3f}-{r['high']:.3f})")
        return {"name": name, "unit": unit,
                "num_warps": compiled.metadata.num_warps,
                "num_stages": compiled.metadata.num_stages,
                "constexprs": constexprs, "results": results,
                "ratios": {"tk_ttir/triton": r}}

    def save_ttir(self, name, compiled):
        """The TTIR Triton wrote for `name`, with its num_warps and
        num_stages, for compiling it again with tk-compile elsewhere, and
        Triton's own PTX of it, to set tk's beside."""
        os.makedirs(self.args.save_ttir, exist_ok=True)
        stem = os.path.join(self.args.save_ttir,
                            "".join(c if c.isalnum() else "_" for c in name))
        with open(stem + ".ttir", "w") as f:
            f.write(compiled.asm["ttir"])
        with open(stem + ".triton.ptx", "w") as f:
            f.write(compiled.asm["ptx"])
        with open(stem + ".json", "w") as f:
            json.dump({"num_warps": compiled.metadata.num_warps,
                       "num_stages": compiled.metadata.num_stages}, f)

    def vector_add(self):
        n = 1 << 26
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        return self.figure(
            "vector_add f32 2^26", make_corpus.vector_add,
            (triton.cdiv(n, 1024),), [x, y, None, n], {2}, [x + y],
            {"rtol": 0.0}, {"BLOCK": 1024}, {}, 3.0 * n * 4, "GB/s")

    def softmax(self, cols, warps):
        rows = self.args.rows
        x = torch.randn(rows, cols, device="cuda")
        block = triton.next_power_of_2(cols)
        return self.figure(
            f"fused_softmax f32 {rows}x{cols} w{warps}",
            make_corpus.fused_softmax, (rows,),
            [None, x, cols, cols, rows, cols], {0},
            [torch.softmax(x.double(), dim=1).float()],
            {"rtol": 64 * 2.0 ** -23, "floor": 8 * 2.0 ** -23},
            {"BLOCK": block}, {"num_warps": warps},
            2.0 * rows * cols * 4, "GB/s")

    def layernorm(self, cols, block, warps):
        rows = self.args.rows
        x = torch.randn(rows, cols, device="cuda")
        w = torch.rand(cols, device="cuda")
        b = torch.randn(cols, device="cuda")
        want = torch.nn.functional.layer_norm(x.double(), (cols,), w.double(),
                                              b.double(), 1e-5)
        mean = x.double().mean(dim=1)
        rstd = 1 / torch.sqrt(x.double().var(dim=1, unbiased=False) + 1e-5)
        return self.figure(
            f"layernorm_forward f32 {rows}x{cols} w{warps}",
            make_corpus.layernorm_forward, (rows,),
            [x, None, w, b, None, None, cols, cols, 1e-5], {1, 4, 5},
            [want.float(), mean.float(), rstd.float()],
            {"rtol": 2.0 ** -12, "floor": 2.0 ** -16},
            {"BLOCK": block}, {"num_warps": warps},
            2.0 * rows * cols * 4, "GB/s")

    def transpose(self):
        size = 8192
        x = torch.randn(size, size, device="cuda")
        return self.figure(
            f"transpose f32 {size}x{size} 64x64", make_corpus.transpose,
            (size // 64, size // 64), [x, None, size, size, size, size], {1},
            [x.t().contiguous()], {"rtol": 0.0},
            {"BLOCK_M": 64, "BLOCK_N": 64}, {"num_warps": 4},
            2.0 * size * size * 4, "GB/s")

    def matmul(self, bm, bn, bk, warps, stages, dtype=torch.float16):
        M = N = K = 4096
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
        name = {torch.float16: "f16", torch.bfloat16: "bf16"}[dtype]
        # bf16 keeps 8 bits of mantissa where f16 keeps 11.
        unit = 2.0 ** (-7 if dtype == torch.bfloat16 else -10)
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        # Unit strides are specialised away by Triton; the kernel's other
        # arguments in its order.
        return self.figure(
            f"matmul {name} {M}^3 {bm}x{bn}x{bk} w{warps} s{stages}",
            make_corpus.matmul, grid,
            [a, b, None, M, N, K, K, 1, N, 1, N, 1], {2},
            [(a.float() @ b.float()).to(dtype)],
            {"rtol": 2 * unit, "floor": unit},
            {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
            {"num_warps": warps, "num_stages": stages},
            2.0 * M * N * K, "TFLOP/s")


    def tutorial_matmul(self, bm, bn, bk, warps, stages):
        """Triton's matmul tutorial kernel as it stands (tl.assume, the
        fused leaky ReLU), f16 at 4096^3."""
        M = N = K = 4096
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        want = torch.nn.functional.leaky_relu(a.float() @ b.float(), 0.01)
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        return self.figure(
            f"tutorial_matmul f16 {M}^3 {bm}x{bn}x{bk} w{warps} s{stages}",
            make_corpus.tutorial_matmul, grid,
            [a, b, None, M, N, K, K, 1, N, 1, N, 1], {2},
            [want.half()], {"rtol": 2.0 ** -9, "floor": 2.0 ** -10},
            {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk,
             "GROUP_SIZE_M": 8, "ACTIVATION": "leaky_relu"},
            {"num_warps": warps, "num_stages": stages},
            2.0 * M * N * K, "TFLOP/s")

    def tutorial_matmul_fp8(self, bm, bn, bk, warps, stages):
        """The same kernel on fp8 e4m3 inputs as the tutorial runs it: b
        passed transposed (a view of N rows of K), no activation, an f16
        result, 4096^3. Checked against the f32 product of the fp8 values
        within f32's bound for the sums (the tensor cores' accumulation)."""
        M = N = K = 4096
        fp8 = torch.float8_e4m3fn
        a = torch.randn(M, K, device="cuda").to(fp8)
        b = torch.randn(N, K, device="cuda").to(fp8).T
        want = (a.float() @ b.float()).half()
        bound = 2 * K * 2.0 ** -23 * (a.float().abs() @ b.float().abs())
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        return self.figure(
            f"tutorial_matmul f8e4m3 {M}^3 {bm}x{bn}x{bk} w{warps} s{stages}",
            make_corpus.tutorial_matmul, grid,
            [a, b, None, M, N, K, a.stride(0), a.stride(1), b.stride(0),
             b.stride(1), N, 1], {2},
            [want], {"rtol": 2.0 ** -10, "bound": bound},
            {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk,
             "GROUP_SIZE_M": 8, "ACTIVATION": ""},
            {"num_warps": warps, "num_stages": stages},
            2.0 * M * N * K, "TFLOP/s")

    def descriptor_attention(self, heads, ctx, dim, block_m, block_n, warps,
                             stages, host=False):
        """The fused-attention tutorial's forward in its tensor-descriptor
        form, made in the kernel or (`host`) passed from the host as the
        tutorial passes them on Hopper: Triton loads through TMA, tk
        through block pointers."""
        q, k, v, scale, want = attention_inputs(heads, ctx, dim)
        rows = heads * ctx
        tensors = [q, k, v, None]
        if host:
            tensors = [HostDescriptor(t, [b, dim], rows)
                       for t, b in zip(tensors, [block_m, block_n, block_n,
                                                 block_m])]
        return self.figure(
            f"{'host_' if host else ''}descriptor_attention f16 "
            f"{heads}x{ctx}x{dim} {block_m}x{block_n} w{warps} s{stages}",
            make_corpus.descriptor_attention, (ctx // block_m, heads),
            tensors + [scale, heads, ctx], {3},
            [want], {"rtol": 2.0 ** -6, "floor": 2.0 ** -6},
            {"HEAD_DIM": dim, "BLOCK_M": block_m, "BLOCK_N": block_n},
            {"num_warps": warps, "num_stages": stages},
            4.0 * heads * ctx * ctx * dim, "TFLOP/s")

    def attention(self, heads, ctx, dim, block_m, block_n, warps, stages):
        """The corpus' FlashAttention forward (online softmax, no mask), a
        (row block, head) per program, at the tile sizes Triton's
        fused-attention tutorial tunes over."""
        q, k, v, scale, want = attention_inputs(heads, ctx, dim)
        return self.figure(
            f"attention_forward f16 {heads}x{ctx}x{dim} {block_m}x{block_n} "
            f"w{warps} s{stages}",
            make_corpus.attention_forward, (ctx // block_m, heads),
            [q, k, v, None, scale, q.stride(0), q.stride(1), ctx], {3},
            [want], {"rtol": 2.0 ** -6, "floor": 2.0 ** -6},
            {"BLOCK_M": block_m, "BLOCK_N": block_n, "HEAD_DIM": dim},
            {"num_warps": warps, "num_stages": stages},
            4.0 * heads * ctx * ctx * dim, "TFLOP/s")


def warm_up_gpu(seconds=1.0):
    """Matrix products for `seconds`, so that the first figure is not timed
    while the clock comes up from idle: at cd6bea6 the first figure
    (vector add) read 0.63x Triton with rounds from 0.60x to 1.00x, 1.00x
    in every run before."""
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    start = time.time()
    while time.time() - start < seconds:
        for _ in range(10):
            a @ a
        torch.cuda.synchronize()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--rows", type=int, default=16384)
    parser.add_argument("--commit", default=os.environ.get("TK_COMMIT", ""))
    parser.add_argument("--save-ttir", default="",
                        help="also write each kernel's TTIR, its "
                        "num_warps/num_stages (JSON) and Triton's PTX into "
                        "this folder")
    parser.add_argument("--only", default="",
                        help="run the cases whose names start with one of "
                             "these (comma-separated) "
                             "(vector_add, softmax, layernorm, transpose, "
                             "attention, descriptor_attention, "
                             "host_descriptor_attention, matmul, "
                             "tutorial_matmul)")
    args = parser.parse_args()
    # Tensor descriptors made in a kernel take a global scratch allocator.
    triton.set_allocator(lambda size, align, stream:
                         torch.empty(size, dtype=torch.int8, device="cuda"))
    bench = Bench(args)
    cases = [
        ("vector_add", bench.vector_add),
        ("softmax", lambda: bench.softmax(1000, 4)),
        ("softmax", lambda: bench.softmax(1000, 8)),
        ("softmax", lambda: bench.softmax(4096, 8)),
        ("softmax", lambda: bench.softmax(4096, 16)),
        ("layernorm", lambda: bench.layernorm(1000, 256, 4)),
        ("layernorm", lambda: bench.layernorm(4096, 1024, 8)),
        ("transpose", bench.transpose),
        # heads, N_CTX, HEAD_DIM, BLOCK_M, BLOCK_N, num_warps, num_stages:
        # the corpus' own configuration, then the tutorial's for 64 and 128.
        ("attention", lambda: bench.attention(16, 4096, 64, 64, 64, 4, 2)),
        ("attention", lambda: bench.attention(16, 4096, 64, 128, 64, 4, 3)),
        ("attention", lambda: bench.attention(16, 4096, 128, 128, 64, 8, 3)),
        ("descriptor_attention",
         lambda: bench.descriptor_attention(16, 4096, 64, 128, 64, 4, 3)),
        ("descriptor_attention",
         lambda: bench.descriptor_attention(16, 4096, 128, 128, 64, 8, 3)),
        ("host_descriptor_attention",
         lambda: bench.descriptor_attention(16, 4096, 64, 128, 64, 4, 3, True)),
        ("host_descriptor_attention",
         lambda: bench.descriptor_attention(16, 4096, 128, 128, 64, 8, 3,
                                            True)),
        ("tutorial_matmul", lambda: bench.tutorial_matmul(128, 256, 64, 8, 3)),
        ("tutorial_matmul", lambda: bench.tutorial_matmul(128, 128, 32, 4, 4)),
        ("tutorial_matmul", lambda: bench.tutorial_matmul(64, 64, 32, 4, 3)),
    ]
    # The fp8 configurations Triton's matmul tutorial autotunes over on CUDA
    # (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages; GROUP_M 8).
    for c in [(128, 256, 128, 8, 3), (256, 128, 128, 8, 3),
              (256, 64, 128, 4, 4), (64, 256, 128, 4, 4),
              (128, 128, 128, 4, 4), (128, 64, 64, 4, 4),
              (64, 128, 64, 4, 4), (128, 32, 64, 4, 4)]:
        cases.append(("tutorial_matmul_fp8",
                      lambda c=c: bench.tutorial_matmul_fp8(*c)))
    # The f16 configurations Triton's matmul tutorial (03-matrix-
    # multiplication) autotunes over on CUDA: BLOCK_M, BLOCK_N, BLOCK_K,
    # num_warps, num_stages; GROUP_M 8. In f16 and bf16.
    for dtype in (torch.float16, torch.bfloat16):
        for bm, bn, bk, warps, stages in [
                (128, 256, 64, 8, 3), (64, 256, 32, 4, 4),
                (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
                (64, 128, 32, 4, 4), (128, 32, 32, 4, 4),
                (64, 32, 32, 2, 5), (32, 64, 32, 2, 5),
                (64, 64, 32, 4, 3)]:
            cases.append(("matmul", lambda c=(bm, bn, bk, warps, stages, dtype):
                          bench.matmul(*c)))
    warm_up_gpu()
    figures, failures = [], 0
    for name, case in cases:
        if args.only and not any(name.startswith(prefix)
                                 for prefix in args.only.split(",")):
            continue
        try:
            figures.append(case())
        except WrongResult as error:
            log(f"WRONG: {error}")
            failures += 1
        except tk.TkError as error:
            # A kernel tk refuses or cannot launch fails its case, not the
            # others.
            log(f"FAILED: {name}: {error}")
            failures += 1
    record = {
        "date": datetime.date.today().isoformat(),
        "commit": args.commit,
        "device": torch.cuda.get_device_name(0),
        "triton": triton.__version__,
        "torch": torch.__version__,
        "clocks": gpu_clocks(),
        "rounds": args.rounds, "reps": args.reps,
        "figures": figures,
    }
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "triton-import.json"), "w") as f:
        json.dump(record, f, indent=1)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
