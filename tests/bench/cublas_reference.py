#!/usr/bin/env python3
"""cuBLAS (through torch.matmul) figures for the matmul shapes that
.device/triton_reference.py does not time: bf16 at 4096^3 and 8192^3 and the
decode shape 16x8192x8192 in fp16 and bf16. Run in the same command as
tk-bench-cuda and the Triton reference (tests/gpu/cuda-bench.sh); writes
cublas_reference.json into $OUT (or .).
"""
import json
import os

import torch
from triton.testing import do_bench


def main():
    res = {"device": torch.cuda.get_device_name(), "matmul": {}}
    shapes = [(4096, 4096, 4096, "4096^3"), (8192, 8192, 8192, "8192^3"),
              (16, 8192, 8192, "16x8192x8192")]
    for dtype, suffix in ((torch.float16, "fp16"), (torch.bfloat16, "bf16")):
        for m, n, k, name in shapes:
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            b = torch.randn(k, n, device="cuda", dtype=dtype)
            ms = do_bench(lambda: torch.matmul(a, b))
            res["matmul"][f"{name}_{suffix}"] = {
                "cublas_TFLOPs": 2 * m * n * k / ms / 1e9}
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "cublas_reference.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
