#!/usr/bin/env python3
"""Static quality of tk's Intel code, as Intel's tools report it.

For every seed kernel (examples/kernels, default configuration: 4 subgroups)
and every benchmark candidate of the f16 matmul and attention figures
(tk-bench-kernels --emit), on each target: `tk-compile --backend xe --emit
asm` builds the kernel with ocloc and reads it back with iga64; its summary
line gives GRFs (the register mode), bytes spilled, scratch, SLM, dpas
instructions in the code and the SIMD width IGC compiled. No Intel GPU is
needed, and none was used.

usage: static_quality.py BUILD_DIR OUT_DIR
writes OUT_DIR/xe-static.json and OUT_DIR/xe-static.md
"""
import json
import os
import re
import subprocess
import sys
import tempfile

SUMMARY = re.compile(
    r"(?P<target>\w+) (?P<entry>\w+): (?P<grf>\d+) GRFs, (?P<spill>\d+) B spilled, "
    r"(?P<scratch>\d+) B scratch, (?P<slm>\d+) B SLM, (?P<dpas>\d+) dpas, "
    r"SIMD(?P<simd>\d+)")
FIGURES = ("matmul f16", "attention f16")


def jobs(build, bench_dir):
    for name in sorted(os.listdir("examples/kernels")):
        if not name.endswith(".tk"):
            continue
        path = os.path.join("examples/kernels", name)
        for entry in re.findall(r"tk\.func @(\w+)", open(path).read()):
            yield ("seed", name[:-3], path, entry, 4, 2, "default")
    subprocess.run([os.path.join(build, "bin", "tk-bench-kernels"), "--emit",
                    bench_dir], check=True, capture_output=True)
    manifest = [f for f in os.listdir(bench_dir) if f.endswith(".json")][0]
    for figure in json.load(open(os.path.join(bench_dir, manifest)))["figures"]:
        if not figure["name"].startswith(FIGURES) or "x16x" in figure["name"]:
            continue
        for c in figure["candidates"]:
            yield ("bench", figure["name"], os.path.join(bench_dir, c["file"]),
                   c["entry"], max(1, c["num_warps"]),
                   max(1, c["num_stages"] or 1), c["label"])


def main():
    build, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as bench_dir:
        for kind, name, path, entry, warps, stages, label in jobs(build, bench_dir):
            for target in ("pvc", "dg2"):
                run = subprocess.run(
                    [os.path.join(build, "bin", "tk-compile"), path, "--backend",
                     "xe", "--arch", target, "--entry", entry, "--num-warps",
                     str(warps), "--num-stages", str(stages), "--emit", "asm",
                     "-o", os.devnull], capture_output=True, text=True)
                row = {"kind": kind, "kernel": name, "entry": entry,
                       "config": label, "num_warps": warps, "target": target}
                match = SUMMARY.search(run.stderr)
                if run.returncode == 0 and match:
                    row.update({k: int(v) for k, v in match.groupdict().items()
                                if k not in ("target", "entry")})
                else:
                    row["error"] = run.stderr.strip().splitlines()[-1][:160] \
                        if run.stderr.strip() else f"exit {run.returncode}"
                rows.append(row)
                print(row, flush=True)
    json.dump({"tool": "tk-compile --backend xe --emit asm (ocloc, iga64)",
               "rows": rows}, open(os.path.join(out, "xe-static.json"), "w"),
              indent=1)
    with open(os.path.join(out, "xe-static.md"), "w") as md:
        md.write("| kernel | config | target | GRFs | spilled B | scratch B "
                 "| SLM B | dpas | SIMD |\n|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            if "error" in r:
                md.write(f"| {r['kernel']} | {r['config']} | {r['target']} | "
                         f"{r['error']} |||||\n")
                continue
            md.write(f"| {r['kernel']} | {r['config']} | {r['target']} | "
                     f"{r['grf']} | {r['spill']} | {r['scratch']} | {r['slm']} | "
                     f"{r['dpas']} | {r['simd']} |\n")


if __name__ == "__main__":
    main()
