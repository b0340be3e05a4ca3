#!/usr/bin/env python3
"""What loading tk costs a process: libtk.so against libtk_runtime.so.

In a fresh process a sample, for each library and backend: the time to load
the library (the dynamic loader, with everything it links: LLVM and MLIR for
libtk.so), then the time of the first tk_device_count (backend selection:
the plugin opened, its driver initialised), and the process's resident
memory afterwards. The libraries take turns sample by sample; the figure is
the median of each. Writes runtime-load.json into --out.

  python3 tests/bench/runtime_load_bench.py --lib build/lib \\
    --backends cpu,vulkan --samples 9 --out docs/bench/<date>-<commit>

Standard library only.
"""

import argparse
import ctypes
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

LIBRARIES = ("libtk.so", "libtk_runtime.so")


def worker(path, backend):
    os.environ["TK_BACKEND"] = backend
    start = time.perf_counter()
    library = ctypes.CDLL(path)
    loaded = time.perf_counter()
    count = ctypes.c_int(0)
    status = library.tk_device_count(ctypes.byref(count))
    selected = time.perf_counter()
    if status != 0 or count.value < 1:
        library.tk_last_error.restype = ctypes.c_char_p
        sys.exit("tk_device_count on %s: status %d, %d devices: %s" %
                 (backend, status, count.value,
                  library.tk_last_error().decode()))
    with open("/proc/self/status") as status_file:
        rss = next(int(line.split()[1]) for line in status_file
                   if line.startswith("VmRSS:"))
    print(json.dumps({"load_ms": (loaded - start) * 1e3,
                      "first_call_ms": (selected - loaded) * 1e3,
                      "rss_kib": rss}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--lib", default="build/lib")
    parser.add_argument("--backends", default="cpu")
    parser.add_argument("--samples", type=int, default=9)
    parser.add_argument("--out", required=False)
    parser.add_argument("--commit", default=os.environ.get("TK_COMMIT", ""))
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    if not args.out:
        parser.error("--out is required")
    lib = os.path.abspath(args.lib)
    env = dict(os.environ, TK_BACKEND_PATH=lib, TK_LOG_LEVEL="error")
    samples = {}
    for round_index in range(args.samples):
        for backend in args.backends.split(","):
            for name in LIBRARIES:
                result = subprocess.run(
                    [sys.executable, os.path.abspath(__file__), "--worker",
                     os.path.join(lib, name), backend],
                    env=env, capture_output=True, text=True, check=False)
                if result.returncode != 0:
                    sys.exit("%s on %s failed: %s" %
                             (name, backend, result.stderr.strip()))
                samples.setdefault((backend, name), []).append(
                    json.loads(result.stdout))
        print("round %d of %d" % (round_index + 1, args.samples),
              file=sys.stderr)
    figures = []
    for (backend, name), runs in samples.items():
        figure = {"backend": backend, "library": name,
                  "bytes": os.path.getsize(os.path.join(lib, name))}
        for key in ("load_ms", "first_call_ms", "rss_kib"):
            figure[key] = statistics.median(run[key] for run in runs)
        figures.append(figure)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "runtime-load.json"), "w") as out:
        json.dump({"date": datetime.date.today().isoformat(),
                   "commit": args.commit, "samples": args.samples,
                   "figures": figures}, out, indent=1)
    print("| backend | library | load (ms) | first tk_device_count (ms) | "
          "resident memory (MiB) |")
    print("| --- | --- | ---: | ---: | ---: |")
    for figure in figures:
        print("| %s | %s | %.1f | %.1f | %.1f |" %
              (figure["backend"], figure["library"], figure["load_ms"],
               figure["first_call_ms"], figure["rss_kib"] / 1024))


if __name__ == "__main__":
    main()
