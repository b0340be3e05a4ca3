#!/usr/bin/env python3
"""Renders a GPU benchmark run as the README's performance table.

The run is the bench.json that backends/cuda/test/bench/cuda_bench.py
writes, kept under docs/bench/<date>-<commit>/.

    python3 tests/bench/report.py docs/bench/2026-11-24-abc1234/bench.json
    python3 tests/bench/report.py RUN.json --readme README.md   # in place

With --readme, the text between the markers `<!-- bench:begin -->` and
`<!-- bench:end -->` is replaced; nothing else of the file changes, and a
README without the markers is an error, not a guess.
"""

import argparse
import json
import os
import sys

BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
# The folder `source` paths are relative to (the README's, or the cwd).
ROOT_OF_SOURCE = ["."]

# The peer each figure is read against, in the order the columns show them.
PEERS = [("triton", "Triton"), ("cublas", "cuBLAS"),
         ("cublaslt", "cuBLASLt (fp8)"), ("sdpa", "SDPA"),
         ("torch", "PyTorch"), ("d2d_copy", "copy")]


def fmt_value(value, unit):
    return f"{value:,.0f}" if unit == "GB/s" else f"{value:.1f}"


def fmt_ratio(r):
    return f"{r['ratio']:.3f} ({r['low']:.3f}–{r['high']:.3f})"


def peer_value(figure, key):
    if key == "cublas":
        reading = figure["ratios"].get("cublas", {}).get("reading")
        return figure["contenders"].get(reading, {}).get("value") if reading else None
    return figure["contenders"].get(key, {}).get("value")


def render(run, source):
    clocks = run.get("clocks_before") or {}
    lines = [
        f"The run of {run['date']}, commit `{run['commit'] or '?'}`, on an "
        f"{run['device']} (SM clock {clocks.get('clocks.sm', '?')} of "
        f"{clocks.get('clocks.max.sm', '?')} at the start, power limit "
        f"{clocks.get('power.limit', '?')}); Triton {run['triton']}, PyTorch "
        f"{run['torch']}; {run['rounds']} interleaved rounds a figure "
        f"([{source}]({source})). Each ratio is tk's throughput over the "
        "peer's, the median of the rounds with the lowest and highest round "
        "in brackets; every output was checked element by element.",
        "",
        "| figure | tk config | tk | " +
        " | ".join(f"{name} / ratio" for _, name in PEERS) + " |",
        "| --- | --- | --- | " + " | ".join("---" for _ in PEERS) + " |",
    ]
    for figure in run["figures"]:
        unit = figure["unit"]
        cells = []
        for key, _ in PEERS:
            value = peer_value(figure, key)
            if value is None or key not in figure["ratios"]:
                cells.append("")
                continue
            cells.append(f"{fmt_value(value, unit)} / {fmt_ratio(figure['ratios'][key])}")
        tk = figure["contenders"]["tk"]["value"]
        lines.append(f"| {figure['name']} ({unit}) | {figure['tk_config']} | "
                     f"{fmt_value(tk, unit)} | " + " | ".join(cells) + " |")
    launch = run.get("launch_us_per_call")
    if launch and launch.get("raw_cuLaunchKernel"):
        lines += ["", f"`tk_launch_async` costs {launch['tk_launch_async']:.2f} µs "
                  f"of host time against {launch['raw_cuLaunchKernel']:.2f} µs for "
                  f"a raw `cuLaunchKernel` of the same cubin "
                  f"({launch['ratio']:.2f}×, median of {launch['rounds']} rounds)."]
    checked = [f for f in run["figures"] if f.get("autotune")]
    if checked:
        agree = [f for f in checked if f["autotune"]["pick"] == f["autotune"]["fastest"]]
        tied = [f for f in checked if f not in agree and
                f["autotune"].get("pick_won_a_round")]
        worst = max(checked, key=lambda f: f["autotune"]["pick_over_fastest_time"])
        text = (f"`tk_autotune`'s pick was the fastest candidate when every "
                f"candidate was timed again in the same run for {len(agree)} of "
                f"{len(checked)} figures")
        if tied:
            text += (f", and won at least one of the re-timing's rounds against "
                     f"the fastest for {len(tied)} more")
        if worst not in agree:
            text += (f"; the furthest behind was {worst['name']} "
                     f"({worst['autotune']['pick']} against "
                     f"{worst['autotune']['fastest']}, "
                     f"{(worst['autotune']['pick_over_fastest_time'] - 1) * 100:.1f}% "
                     "slower over the rounds' medians)")
        lines += ["", text + "."]
    sanitizers = os.path.join(os.path.dirname(source), "sanitizers.txt")
    if os.path.exists(os.path.join(ROOT_OF_SOURCE[0], sanitizers)):
        with open(os.path.join(ROOT_OF_SOURCE[0], sanitizers)) as f:
            summary = [line.strip() for line in f
                       if "SUMMARY" in line and not line.startswith("#")]
        lines += ["", "The same commit's cuda column of the conformance matrix under "
                  "compute-sanitizer: " + "; ".join(
                      line.replace("=", "").strip() for line in summary) +
                  f" ([sanitizers.txt]({sanitizers}))."]
    if run.get("errors"):
        lines += ["", "Wrong outputs in this run (no figure reported): " +
                  "; ".join(f"{e['name']}: {e['error']}" for e in run["errors"])]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", help="a bench.json under docs/bench/")
    parser.add_argument("--readme", help="replace the table in this file")
    args = parser.parse_args()
    with open(args.run) as f:
        run = json.load(f)
    if args.readme:
        ROOT_OF_SOURCE[0] = os.path.dirname(os.path.abspath(args.readme))
        source = os.path.relpath(args.run, ROOT_OF_SOURCE[0])
        text = render(run, source)
        with open(args.readme) as f:
            readme = f.read()
        if BEGIN not in readme or END not in readme:
            sys.exit(f"report.py: {args.readme} has no {BEGIN} ... {END} markers")
        head, rest = readme.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        with open(args.readme + ".tmp", "w") as f:
            f.write(head + BEGIN + "\n" + text + END + tail)
        os.replace(args.readme + ".tmp", args.readme)
    else:
        sys.stdout.write(render(run, args.run))


if __name__ == "__main__":
    main()
