#!/usr/bin/env python3
"""tk's AMD code objects held against Triton's for the same kernels.

No AMD GPU is needed: both compilers stop at the code object. Two steps,
because tk's side needs ROCm's device bitcode (this machine) and Triton's
needs Triton (the GPU machine has it; it compiles for AMD targets without an
AMD GPU):

  triton_compare.py tk --tk-compile build/bin/tk-compile \\
      --kernels DIR_OF_tk-bench-kernels--emit --out TK_DIR
  triton_compare.py triton --tk TK_DIR --out OUT_DIR

Triton's code objects change only with Triton, so a new tk side may also be
set beside the Triton side of an earlier report (same configurations), on
a machine without Triton:

  triton_compare.py join --tk TK_DIR --triton-report OLD/rocm-vs-triton.json \\
      --out OUT_DIR

For each kernel and configuration (CONFIGS: the seed kernels' benchmark
shapes and the tuned matmul and attention configurations, with the same
warps and blocks on both sides) and each target (gfx942 wave64, gfx1100
wave32), both assemblies are read the same way: VGPRs, AGPRs, SGPRs, LDS,
scratch, spills, occupancy (waves per SIMD, as LLVM's AMDGPU backend
computes it), matrix instructions in the code and in one trip of the loop
that holds most of them (one K step of a matmul). OUT_DIR gets
rocm-vs-triton.json and rocm-vs-triton.md.
"""

import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))

TARGETS = [("gfx942", 64), ("gfx1100", 32)]

# LDS a workgroup's waves share and the SIMDs they run on: a CDNA3 CU has
# 64 KiB and 4 SIMDs; an RDNA3 WGP (the default mode) 128 KiB and 4 SIMD32s.
LDS_AND_SIMDS = {"gfx942": (65536, 4), "gfx1100": (131072, 4)}


def occupancy(m, arch, warps):
    """Waves per SIMD: the registers' limit and the LDS's, whichever is
    lower (the LDS one: workgroups that fit, times their waves, per SIMD)."""
    if "error" in m or m.get("waves_by_registers") is None:
        return None
    lds_total, simds = LDS_AND_SIMDS[arch]
    waves = m["waves_by_registers"]
    if m.get("lds_bytes"):
        waves = min(waves, (lds_total // m["lds_bytes"]) * warps // simds)
    return waves

# name, tk bench figure, tk candidate label, Triton kernel, Triton
# signature, constexprs, arguments divisible by 16, warps, stages.
CONFIGS = [
    ("vector_add f32 BLOCK 1024 w4", "vector_add f32 268435456",
     "BLOCK 1024 w4", "triton_add",
     {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
      "BLOCK": "constexpr"}, {"BLOCK": 1024}, [0, 1, 2], 4, 1),
    ("softmax f32 n=1024 w4", "softmax f32 32768x1024", "w4",
     "triton_softmax",
     {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32",
      "out_stride": "i32", "n_cols": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 1024}, [0, 1, 2, 3], 4, 1),
    ("softmax f32 n=4096 w8", "softmax f32 32768x4096", "w8",
     "triton_softmax",
     {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32",
      "out_stride": "i32", "n_cols": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 4096}, [0, 1, 2, 3], 8, 1),
]
MATMUL_SIGNATURE = {
    "a_ptr": "*{t}", "b_ptr": "*{t}", "c_ptr": "*{t}", "M": "i32", "N": "i32",
    "K": "i32", "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32",
    "BM": "constexpr", "BN": "constexpr", "BK": "constexpr",
    "GROUP": "constexpr"}
for dtype, triton_type, figure_shape, (bm, bn, bk, warps) in [
        ("f16", "fp16", "4096x4096x4096", (128, 128, 64, 4)),
        ("f16", "fp16", "4096x4096x4096", (128, 256, 64, 8)),
        ("f16", "fp16", "16x8192x8192", (16, 64, 64, 4)),
        ("bf16", "bf16", "4096x4096x4096", (128, 128, 64, 4))]:
    stages = {4: 4, 8: 3}[warps] if bm > 16 else 3
    CONFIGS.append((
        f"matmul {dtype} {bm}x{bn}x{bk} w{warps}",
        f"matmul {dtype} {figure_shape}", f"{bm}x{bn}x{bk} w{warps} s{stages}",
        "triton_matmul",
        {k: v.format(t=triton_type) for k, v in MATMUL_SIGNATURE.items()},
        {"BM": bm, "BN": bn, "BK": bk, "GROUP": 8}, [0, 1, 2, 6, 7, 8], warps,
        2))
ATTENTION_SIGNATURE = {
    "Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16", "N": "i32",
    "scale": "fp32", "D": "constexpr", "BM": "constexpr", "BN": "constexpr"}
for d, (bm, bn, warps, stages) in [(64, (64, 64, 4, 3)), (64, (128, 64, 4, 2)),
                                   (128, (128, 64, 8, 2))]:
    CONFIGS.append((
        f"attention f16 d={d} {bm}x{bn} w{warps}",
        f"attention f16 128x4096x{d}", f"{bm}x{bn} w{warps} s{stages}",
        "triton_attention", ATTENTION_SIGNATURE,
        {"D": d, "BM": bm, "BN": bn}, [0, 1, 2, 3], warps, 2))


# --- reading an AMDGPU assembly file (either compiler's) ---------------------

def metrics(asm):
    """Resources and matrix instructions of the one kernel in `asm`."""
    def field(key):
        found = re.search(r"^\s*\." + key + r":\s+(\d+)", asm, re.M)
        return int(found.group(1)) if found else None

    def comment(key):
        found = re.search(r";\s*" + key + r":\s+(\d+)", asm)
        return int(found.group(1)) if found else None

    lines = asm.splitlines()
    matrix = [i for i, line in enumerate(lines)
              if re.match(r"\s+v_(mfma|wmma)\w*", line)]
    labels = {}
    for i, line in enumerate(lines):
        found = re.match(r"^(\.LBB\w+):", line)
        if found:
            labels[found.group(1)] = i
    per_trip = 0
    for i, line in enumerate(lines):
        found = re.match(r"\s+s_(cbranch_\w+|branch)\s+(\.LBB\w+)", line)
        if found and labels.get(found.group(2), i + 1) <= i:
            start = labels[found.group(2)]
            per_trip = max(per_trip,
                           sum(1 for m in matrix if start <= m <= i))
    return {
        "vgprs": field("vgpr_count"),
        "agprs": field("agpr_count"),
        "sgprs": field("sgpr_count"),
        "lds_bytes": field("group_segment_fixed_size"),
        "scratch_bytes": field("private_segment_fixed_size"),
        "vgpr_spills": field("vgpr_spill_count"),
        "sgpr_spills": field("sgpr_spill_count"),
        # Waves per SIMD as the registers allow (LLVM's own figure);
        # occupancy() adds the LDS.
        "waves_by_registers": comment("Occupancy"),
        "matrix_instructions": len(matrix),
        "matrix_per_loop_trip": per_trip,
    }


# --- tk's side ------------------------------------------------------------------

def tk_side(args):
    with open(os.path.join(args.kernels, "manifest.json")) as f:
        figures = {fig["name"]: fig for fig in json.load(f)["figures"]}
    os.makedirs(args.out, exist_ok=True)
    results = []
    for (name, figure, label, *_rest, warps, _stages) in CONFIGS:
        candidates = {c["label"]: c for c in figures[figure]["candidates"]}
        candidate = candidates[label]
        for arch, wave in TARGETS:
            command = [args.tk_compile,
                       os.path.join(args.kernels, candidate["file"]),
                       "--backend", "rocm", "--arch", arch,
                       "--entry", candidate["entry"],
                       "--num-warps", str(candidate["num_warps"]),
                       "--emit", "asm"]
            # The candidate's specialisation, as the bench launches it (unit
            # strides: Triton's kernels take none, and Triton specialises
            # arguments equal to 1).
            for key, value in sorted(candidate.get("constexprs", {}).items()):
                command += ["--constexpr", f"{key}={value}"]
            done = subprocess.run(command, capture_output=True, text=True)
            entry = {"name": name, "arch": arch, "command": " ".join(command)}
            if done.returncode != 0:
                entry["error"] = done.stderr.strip()[-2000:]
                print(f"tk  {arch:8} {name}: FAILED: {entry['error'][:200]}",
                      file=sys.stderr)
            else:
                file = f"tk-{arch}-{len(results)}.s"
                with open(os.path.join(args.out, file), "w") as out:
                    out.write(done.stdout)
                entry["asm"] = file
                entry.update(metrics(done.stdout))
                print(f"tk  {arch:8} {name}: {entry['vgprs']} VGPRs, "
                      f"{entry['matrix_per_loop_trip']} matrix/trip",
                      file=sys.stderr)
            results.append(entry)
    with open(os.path.join(args.out, "tk.json"), "w") as f:
        json.dump(results, f, indent=1)


# --- Triton's side and the table ------------------------------------------------

def triton_compile(kernel, signature, constexprs, divisible, target, warps,
                   stages):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    names = list(signature)
    attrs = {(i,): [["tt.divisibility", 16]] for i in divisible}
    tries = [(constexprs, attrs),
             ({(names.index(k),): v for k, v in constexprs.items()}, attrs),
             (constexprs, None)]
    last = None
    for consts, attributes in tries:
        try:
            source = ASTSource(fn=kernel, signature=signature,
                               constexprs=consts, attrs=attributes)
            compiled = triton.compile(
                source, target=GPUTarget("hip", target[0], target[1]),
                options={"num_warps": warps, "num_stages": stages})
            return compiled, attributes is not None
        except Exception as error:  # the next form of the API
            last = error
    raise last


def triton_side(args):
    sys.path.insert(0, os.path.join(ROOT, "tests", "bench"))
    import triton
    import triton_kernels

    with open(os.path.join(args.tk, "tk.json")) as f:
        tk_results = {(r["name"], r["arch"]): r for r in json.load(f)}
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for (name, _figure, _label, kernel, signature, constexprs, divisible,
         warps, stages) in CONFIGS:
        for arch, wave in TARGETS:
            row = {"name": name, "arch": arch, "num_warps": warps,
                   "triton_num_stages": stages,
                   "tk": tk_results.get((name, arch), {"error": "not run"})}
            try:
                compiled, divisibility = triton_compile(
                    getattr(triton_kernels, kernel), signature, constexprs,
                    divisible, (arch, wave), warps, stages)
                asm = compiled.asm["amdgcn"]
                row["triton"] = metrics(asm)
                # Triton's LDS is dynamic: the launch asks for it, the code
                # object's metadata does not say it.
                row["triton"]["lds_bytes"] = max(
                    row["triton"]["lds_bytes"] or 0,
                    getattr(compiled.metadata, "shared", 0) or 0)
                row["triton"]["divisibility_hints"] = divisibility
                with open(os.path.join(args.out,
                                       f"triton-{arch}-{len(rows)}.s"),
                          "w") as out:
                    out.write(asm)
            except Exception as error:
                row["triton"] = {"error": str(error)[-2000:]}
            for side in ("tk", "triton"):
                row[side]["waves_per_simd"] = occupancy(row[side], arch,
                                                        warps)
            print(f"{arch:8} {name}: tk {summary(row['tk'])} | triton "
                  f"{summary(row['triton'])}", file=sys.stderr)
            rows.append(row)
    report = {"triton_version": triton.__version__, "rows": rows}
    with open(os.path.join(args.out, "rocm-vs-triton.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(args.out, "rocm-vs-triton.md"), "w") as f:
        f.write(table(report))
    print(table(report))


def join_side(args):
    """tk's new side beside the Triton side of an earlier report."""
    with open(os.path.join(args.tk, "tk.json")) as f:
        tk_results = {(r["name"], r["arch"]): r for r in json.load(f)}
    with open(args.triton_report) as f:
        earlier = json.load(f)
    rows = []
    for old in earlier["rows"]:
        key = (old["name"], old["arch"])
        if key not in tk_results:
            sys.exit(f"triton_compare.py: {args.tk}/tk.json has no row "
                     f"{key[0]} on {key[1]}, which {args.triton_report} has")
        row = dict(old)
        row["tk"] = dict(tk_results[key])
        row["tk"]["waves_per_simd"] = occupancy(row["tk"], old["arch"],
                                                old["num_warps"])
        rows.append(row)
    missing = set(tk_results) - {(r["name"], r["arch"]) for r in rows}
    if missing:
        sys.exit(f"triton_compare.py: {args.triton_report} has no Triton "
                 f"side for {sorted(missing)}; run the triton step")
    report = {"triton_version": earlier["triton_version"],
              "triton_side_from": os.path.abspath(args.triton_report),
              "rows": rows}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "rocm-vs-triton.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(args.out, "rocm-vs-triton.md"), "w") as f:
        f.write(table(report))
    print(table(report))


def summary(m):
    if "error" in m:
        return "error"
    return (f"{m['vgprs']}v/{m['agprs']}a/{m['sgprs']}s "
            f"{m['lds_bytes']}B LDS {m['scratch_bytes']}B scratch "
            f"{m['waves_per_simd']} waves {m['matrix_per_loop_trip']} mx/trip")


def table(report):
    source = ""
    if report.get("triton_side_from"):
        source = (" Triton's side from "
                  f"{os.path.relpath(report['triton_side_from'], ROOT)}.")
    out = [f"tk vs Triton {report['triton_version']}: code objects for the "
           f"same kernels and configurations (no AMD GPU ran them).{source}\n",
           "| kernel | target | VGPRs (+AGPRs) tk / Triton | SGPRs | LDS bytes "
           "| scratch bytes | waves/SIMD | matrix instr. per loop trip |",
           "|---|---|---|---|---|---|---|---|"]

    def pair(row, key):
        tk, tr = row["tk"], row["triton"]
        a = "err" if "error" in tk else tk.get(key)
        b = "err" if "error" in tr else tr.get(key)
        return f"{a} / {b}"

    def vgprs(m):
        if "error" in m:
            return "err"
        return f"{m['vgprs']}" + (f"+{m['agprs']}" if m.get("agprs") else "")

    for row in report["rows"]:
        out.append(
            f"| {row['name']} | {row['arch']} | {vgprs(row['tk'])} / "
            f"{vgprs(row['triton'])} | {pair(row, 'sgprs')} | "
            f"{pair(row, 'lds_bytes')} | {pair(row, 'scratch_bytes')} | "
            f"{pair(row, 'waves_per_simd')} | "
            f"{pair(row, 'matrix_per_loop_trip')} |")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="side", required=True)
    tk = sub.add_parser("tk", help="compile tk's side (needs tk-compile)")
    tk.add_argument("--tk-compile", required=True)
    tk.add_argument("--kernels", required=True,
                    help="the folder tk-bench-kernels --emit wrote")
    tk.add_argument("--out", required=True)
    tr = sub.add_parser("triton", help="compile Triton's side and compare")
    tr.add_argument("--tk", required=True, help="the tk step's --out")
    tr.add_argument("--out", required=True)
    join = sub.add_parser("join", help="the tk step's side beside an "
                          "earlier report's Triton side (no Triton needed)")
    join.add_argument("--tk", required=True, help="the tk step's --out")
    join.add_argument("--triton-report", required=True,
                      help="an earlier rocm-vs-triton.json")
    join.add_argument("--out", required=True)
    args = parser.parse_args()
    {"tk": tk_side, "triton": triton_side, "join": join_side}[args.side](args)


if __name__ == "__main__":
    main()
