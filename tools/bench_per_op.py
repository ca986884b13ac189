#!/usr/bin/env python3
"""Per-op tables from `byocl bench MODEL --per-op --json FILE` (docs/benchmarks.md).

    tools/bench_per_op.py PEAK_GFLOPS FILE.json [FILE.json ...]

Prints, per file, a Markdown table of the host build's steps and one of the offloaded
build's launches (each region's parts), in execution order, with milliseconds, GFLOP/s and
the share of PEAK_GFLOPS (the machine's fp32 FMA peak on the threads bench used), then
the totals of the steps that have a FLOP count (convolutions, dense, ...).
"""
import json
import sys


def rows_of(steps):
    """(name, ms, gflops) per host step or offloaded launch; transfers left out."""
    for step in steps:
        if step.get("parts"):
            for part in step["parts"]:
                if not part.get("transfer"):
                    yield part["name"], part["ms"], part.get("gflops")
        else:
            yield step["name"], step["ms"], step.get("gflops")


def table(title, steps, peak):
    print(f"| {title} | ms | GFLOP/s | of peak |")
    print("|---|---|---|---|")
    total_ms = flop_ms = gflop = 0.0
    for name, ms, gflops in rows_of(steps):
        total_ms += ms
        if gflops:
            flop_ms += ms
            gflop += gflops * ms / 1e3
            print(f"| {name} | {ms:.3f} | {gflops:.1f} | {100 * gflops / peak:.0f}% |")
        else:
            print(f"| {name} | {ms:.3f} | - | - |")
    rate = gflop / flop_ms * 1e3 if flop_ms else 0
    print(f"| **all: {total_ms:.2f} ms; steps with FLOPs: {flop_ms:.2f} ms** | | "
          f"{rate:.1f} | {100 * rate / peak:.0f}% |")
    print()


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    peak = float(sys.argv[1])
    for path in sys.argv[2:]:
        with open(path) as f:
            bench = json.load(f)
        per_op = bench.get("per_op")
        if not per_op:
            sys.exit(f"{path}: no per_op figures (run byocl bench with --per-op)")
        print(f"#### {bench['model']} ({bench['threads']} threads, {bench['runs']} runs)\n")
        table("host build: step", per_op["host"], peak)
        table("offloaded build: launch", per_op["offloaded"], peak)


main()
