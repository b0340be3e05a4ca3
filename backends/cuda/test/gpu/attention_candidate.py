"""Launches one attention candidate of the benchmark's package, for a
profiler (ncu) to look at: the figure's inputs (cuda_bench.py's shapes),
`--launches` launches on one stream, nothing timed.

    TK_BACKEND=cuda python3 attention_candidate.py --package bench.tkpkg \
        --manifest MANIFEST_DIR --figure "attention f16 128x4096x128" \
        --label "128x64 w8 s2"
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))))
sys.path.insert(0, os.path.join(ROOT, "capi", "python"))

import torch  # noqa: E402

import tk  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--package", required=True)
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--figure", required=True)
    parser.add_argument("--label", required=True)
    parser.add_argument("--launches", type=int, default=3)
    args = parser.parse_args()
    with open(os.path.join(args.manifest, "manifest.json")) as f:
        manifest = json.load(f)
    figures = [f for f in manifest["figures"] if f["name"] == args.figure]
    if not figures:
        raise SystemExit(f"attention_candidate: no figure '{args.figure}'")
    candidates = [c for c in figures[0]["candidates"]
                  if c["label"] == args.label]
    if not candidates:
        raise SystemExit(f"attention_candidate: no candidate '{args.label}' "
                         f"in '{args.figure}'")
    candidate = candidates[0]
    heads, n, d = figures[0]["shape"]
    with open(args.package, "rb") as f:
        package = f.read()
    device = tk.Device(0)
    kernel = device.kernel(package, entry=candidate["package_entry"],
                           package=True)
    q, k, v, o = (torch.randn(heads, n, d, device="cuda", dtype=torch.float16)
                  for _ in range(4))
    buffers = [device.wrap_buffer(t.data_ptr(), t.numel() * t.element_size())
               for t in (q, k, v, o)]
    grid = (-(-n // candidate["block"][0]), heads)
    for _ in range(args.launches):
        kernel.launch(grid, buffers + [tk.i32(n), tk.i32(d), tk.f32(d ** -0.5)])
    torch.cuda.synchronize()
    print(f"{args.figure} [{args.label}]: {args.launches} launches")


if __name__ == "__main__":
    main()
