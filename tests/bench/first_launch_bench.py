#!/usr/bin/env python3
"""The first launch of a kernel: from a package, and compiled on the spot.

Times, in a fresh process each, from loading libtk to the end of the first
launch of a kernel (device, kernel creation, buffers, one launch, waited
for), three ways:

  package    the kernel's binary from a .tkpkg (tk-compile --package), no
             compile;
  jit-cold   compiled from its .tk source into an empty cache;
  jit-warm   from its source, the binary found in a warm disk cache.

The three take turns sample by sample, kernel by kernel and backend by
backend, so that what the machine is doing falls on all of them alike; the
figure is the median of each. Each worker checks its output against a
host reference. Writes first-launch.json and a README.md into --out.

  TK_LIBRARY=build/lib/libtk.so TK_BACKEND_PATH=build/lib \\
    python3 tests/bench/first_launch_bench.py --tk-compile build/bin/tk-compile \\
      --backends cpu,vulkan --samples 7 --out docs/bench/<date>-<commit>

Standard library only.
"""

import argparse
import datetime
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "capi", "python"))
KERNELS = os.path.join(ROOT, "examples", "kernels")
MODES = ("package", "jit-cold", "jit-warm")
# Kernel, file, and what the worker launches.
CASES = {
    "softmax": "softmax.tk",
    "matmul": "matmul.tk",
}


# --- the worker: one sample, in its own process ------------------------------

def run_softmax(tk, device, kernel):
    rows, cols = 64, 1000
    data = [((i * 37) % 101) / 50.0 - 1.0 for i in range(rows * cols)]
    x, y = device.buffer(4 * rows * cols), device.buffer(4 * rows * cols)
    x.write(struct.pack("<%df" % len(data), *data))
    kernel.launch((rows,), [x, y, tk.i32(cols), tk.i32(cols), tk.i32(cols)],
                  wait=True)
    got = struct.unpack("<%df" % len(data), y.read())
    row = data[:cols]
    top = max(row)
    total = sum(2.718281828459045 ** (v - top) for v in row)
    want = 2.718281828459045 ** (row[0] - top) / total
    if abs(got[0] - want) > 1e-5:
        raise SystemExit("softmax: %r, want %r" % (got[0], want))


def run_matmul(tk, device, kernel):
    m = n = k = 128
    ones = struct.pack("<e", 1.0) * (m * k)
    a, b = device.buffer(2 * m * k), device.buffer(2 * k * n)
    c = device.buffer(2 * m * n)
    a.write(ones)
    b.write(ones)
    kernel.launch((2 * 2,), [a, b, c] + [tk.i32(v) for v in
                                        (m, n, k, k, 1, n, 1, n, 1)],
                  wait=True)
    got = struct.unpack("<%de" % (m * n), c.read())
    if got[0] != float(k) or got[-1] != float(k):
        raise SystemExit("matmul: %r, want %r" % (got[0], float(k)))


def worker(mode, case, source):
    start = time.perf_counter()
    import tk
    tk.load_library()
    device = tk.Device(0)
    with open(source, "rb") as f:
        data = f.read()
    if mode == "package":
        kernel = device.kernel(data, entry=case, package=True)
    else:
        kernel = device.kernel(data.decode(), entry=case)
    created = time.perf_counter()
    {"softmax": run_softmax, "matmul": run_matmul}[case](tk, device, kernel)
    done = time.perf_counter()
    print(json.dumps({"create_ms": 1e3 * (created - start),
                      "first_launch_ms": 1e3 * (done - start)}))


# --- the driver ---------------------------------------------------------------

def sample(mode, case, backend, package, warm_cache):
    env = dict(os.environ, TK_BACKEND=backend, TK_LOG_LEVEL="error")
    if mode == "package":
        source = package
        cache = tempfile.mkdtemp(prefix="tk-first-launch-")
    elif mode == "jit-cold":
        source = os.path.join(KERNELS, CASES[case])
        cache = tempfile.mkdtemp(prefix="tk-first-launch-")
    else:
        source = os.path.join(KERNELS, CASES[case])
        cache = warm_cache
    env["TK_CACHE_DIR"] = cache
    out = subprocess.run([sys.executable, __file__, "--worker", mode, case,
                          source], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("%s %s on %s: %s%s" % (mode, case, backend,
                                                out.stdout, out.stderr))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--tk-compile", default=os.path.join(ROOT, "build",
                                                             "bin",
                                                             "tk-compile"))
    parser.add_argument("--backends", default="cpu")
    parser.add_argument("--samples", type=int, default=7)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    if not args.out:
        parser.error("--out is required")
    backends = args.backends.split(",")
    scratch = tempfile.mkdtemp(prefix="tk-first-launch-")
    package = os.path.join(scratch, "kernels.tkpkg")
    build = subprocess.run(
        [args.tk_compile, "--package", package] +
        sum((["--target", b] for b in backends), []) +
        ["%s:%s" % (os.path.join(KERNELS, f), case)
         for case, f in CASES.items()],
        env=dict(os.environ, TK_BACKEND=",".join(backends)),
        capture_output=True, text=True)
    if build.returncode != 0:
        raise SystemExit("tk-compile --package: " + build.stderr)
    warm = {b: tempfile.mkdtemp(prefix="tk-first-launch-warm-")
            for b in backends}
    for backend in backends:  # fills the warm caches
        for case in CASES:
            sample("jit-warm", case, backend, package, warm[backend])
    times = {}
    for round_index in range(args.samples):
        for backend in backends:
            for case in CASES:
                for mode in MODES:
                    result = sample(mode, case, backend, package,
                                    warm[backend])
                    times.setdefault((backend, case, mode), []).append(result)
        print("round %d of %d" % (round_index + 1, args.samples),
              file=sys.stderr)
    figures = []
    for (backend, case, mode), results in sorted(times.items()):
        figures.append({
            "backend": backend, "kernel": case, "mode": mode,
            "samples": len(results),
            "create_ms": statistics.median(r["create_ms"] for r in results),
            "first_launch_ms": statistics.median(r["first_launch_ms"]
                                                 for r in results),
        })
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                             "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    os.makedirs(args.out, exist_ok=True)
    record = {"date": datetime.date.today().isoformat(), "commit": commit,
              "machine": os.uname().nodename, "figures": figures}
    with open(os.path.join(args.out, "first-launch.json"), "w") as f:
        json.dump(record, f, indent=1)
    lines = ["| backend | kernel | package (ms) | jit, cold cache (ms) | "
             "jit, warm cache (ms) |", "| --- | --- | --- | --- | --- |"]
    by = {(f["backend"], f["kernel"], f["mode"]): f for f in figures}
    for backend in backends:
        for case in CASES:
            cells = ["%.0f" % by[(backend, case, m)]["first_launch_ms"]
                     for m in MODES]
            lines.append("| %s | %s | %s |" % (backend, case,
                                               " | ".join(cells)))
    print("\n".join(lines))
    with open(os.path.join(args.out, "first-launch.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
