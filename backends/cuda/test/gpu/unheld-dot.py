"""The dot a matrix unit computes without holding its accumulator
(MatrixUnit::emit): the benchmark's 128x128x64 matmul on one and two warps
holds more accumulators than a thread may keep (kMaxHeldRegisters), so
mma.sync's emit path runs (wgmma needs whole warpgroups; the PTX has
mma.sync and no ldmatrix). Checked element by element against the product
of the same tensors in f32; exits non-zero on a wrong answer.

  TK_LIBRARY=build/lib/libtk.so TK_BACKEND=cuda \\
    python3 backends/cuda/test/gpu/unheld-dot.py
"""

import json
import os
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                    "..", "..")
sys.path.insert(0, os.path.join(ROOT, "capi", "python"))
import tk  # noqa: E402


def main():
    # The benchmark's kernels as text (tests/bench/BenchKernels.cpp).
    folder = tempfile.mkdtemp(prefix="tk-unheld-dot-")
    subprocess.run([os.path.join(ROOT, "build", "bin", "tk-bench-kernels"),
                    "--emit", folder], check=True, stdout=subprocess.DEVNULL)
    manifest = next(f for f in os.listdir(folder) if f.endswith(".json"))
    with open(os.path.join(folder, manifest)) as f:
        figures = json.load(f)["figures"]
    file = next(c["file"] for fig in figures for c in fig["candidates"]
                if fig["kind"] == "matmul" and fig["dtype"] == "f16"
                and c["label"].startswith("128x128x64 "))
    with open(os.path.join(folder, file)) as f:
        code = f.read()
    device = tk.Device(0)
    torch.manual_seed(0)
    failures = 0
    for num_warps in (1, 2):
        for m, n, k in ((256, 256, 256), (384, 256, 128)):
            a = torch.randn(m, k, device="cuda", dtype=torch.float16)
            b = torch.randn(k, n, device="cuda", dtype=torch.float16)
            c = torch.full((m, n), float("nan"), device="cuda",
                           dtype=torch.float16)
            kernel = device.kernel(code, entry="matmul", num_warps=num_warps,
                                   num_stages=1)
            buffers = [device.wrap_buffer(t.data_ptr(), t.numel() * 2)
                       for t in (a, b, c)]
            grid = (((m + 127) // 128) * ((n + 127) // 128),)
            kernel.launch(grid, buffers + [tk.i32(v) for v in (
                m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                c.stride(0), c.stride(1))], wait=True)
            want = (a.float() @ b.float())
            # f32 accumulation, one f16 rounding of the output: half an ulp
            # of the output plus K f32 roundings of the products' sum.
            bound = (want.abs() * 2.0 ** -11 +
                     k * 2.0 ** -24 * (a.float().abs() @ b.float().abs()))
            error = (c.float() - want).abs()
            bad = int((~(error <= bound)).sum())
            print(f"num_warps {num_warps} {m}x{n}x{k}: "
                  f"{bad} of {m * n} elements outside their bound, largest "
                  f"error share {float((error / bound).max()):.3f}")
            failures += bad != 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
