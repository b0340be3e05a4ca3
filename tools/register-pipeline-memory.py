#!/usr/bin/env python3
"""Workgroup memory of each kernel a backend compiled, under today's lowering
and under the register pipeline's passes (DESIGN.md §3), side by side.

Reads the TK_DUMP_IR folders of a conformance run (0-tk.mlir, the kernel as
compiled; 3-thread-layouts.mlir, its threads; 5-spirv.mlir, the Vulkan
module whose Workgroup variables are today's bytes), runs

  tk-opt --tk-rewrite-block-pointers --tk-hoist-loop-invariants --tk-assign-linear-layouts
         --tk-dot-operand-layouts --tk-remove-layout-conversions
         --tk-allocate-shared-memory

on each at the same subgroup size and warps, and prints how many kernels
exceed the limit under each. A projection of the design, not a run: the
register pipeline does not generate code yet, and its conversions are
counted at the whole tile (a lowering may do them in rounds).

  tools/register-pipeline-memory.py DUMP_DIR --tk-opt build/bin/tk-opt \\
      --target vulkan-lavapipe --limit 32768 [--json out.json]
"""
import argparse, json, os, re, subprocess, sys

ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2,
                 "i32": 4, "i64": 8, "i1": 1}


def todays_bytes(spirv):
    """Sum of the Workgroup variables of a SPIR-V module, as the Vulkan
    backend counts them (arrays of scalars)."""
    total = 0
    for count, element in re.findall(
            r"spirv\.GlobalVariable @\S+ : !spirv\.ptr<.*?!spirv\.array<(\d+) x (\w+)>.*?Workgroup>",
            spirv):
        total += int(count) * ELEMENT_BYTES.get(element, 4)
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dump_dir")
    parser.add_argument("--tk-opt", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--limit", type=int, required=True)
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = []
    folders = sorted(os.listdir(args.dump_dir))
    for index, folder in enumerate(folders):
        path = os.path.join(args.dump_dir, folder)
        try:
            layouts = open(os.path.join(path, "3-thread-layouts.mlir")).read()
            spirv = open(os.path.join(path, "5-spirv.mlir")).read()
        except OSError:
            continue  # a compile that stopped before SPIR-V
        threads = int(re.search(r"tkw\.threads = (\d+)", layouts).group(1))
        lanes = int(re.search(r"tkw\.threads_per_warp = (\d+)", layouts).group(1))
        target = f"{args.target}:warp-size={lanes}"
        command = [args.tk_opt, os.path.join(path, "0-tk.mlir"),
                   "--tk-rewrite-block-pointers",
                   "--tk-hoist-loop-invariants",
                   f"--tk-assign-linear-layouts=target={target} num-warps={threads // lanes}",
                   "--tk-dot-operand-layouts", "--tk-remove-layout-conversions",
                   f"--tk-allocate-shared-memory=target={target}:shared-memory={1 << 30}"]
        run = subprocess.run(command, capture_output=True, text=True)
        found = re.search(r"tkw\.shared_memory = (\d+)", run.stdout)
        row = {"kernel": folder, "threads": threads, "today": todays_bytes(spirv),
               "register_pipeline": int(found.group(1)) if found else None,
               "error": None if found else run.stderr.strip().splitlines()[0:1]}
        rows.append(row)
        print(f"\r{index + 1}/{len(folders)}", end="", file=sys.stderr)
    print(file=sys.stderr)
    over_today = [r for r in rows if r["today"] > args.limit]
    over_new = [r for r in rows if r["register_pipeline"] is not None
                and r["register_pipeline"] > args.limit]
    failed = [r for r in rows if r["register_pipeline"] is None]
    print(f"{len(rows)} kernels; over {args.limit} bytes today: {len(over_today)}; "
          f"under the register pipeline: {len(over_new)}; not analysed: {len(failed)}")
    for r in sorted(over_today, key=lambda r: r["kernel"]):
        print(f"  {r['kernel']:40} today {r['today']:7}  register pipeline "
              f"{r['register_pipeline']}")
    for r in failed:
        print(f"  not analysed: {r['kernel']}: {r['error']}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"target": args.target, "limit": args.limit, "kernels": rows},
                      out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
