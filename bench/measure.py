#!/usr/bin/env python3
"""Times a group of commands side by side and appends one JSON line per command.

  measure.py --out results.jsonl --group NAME [--reps 5] [--warmup 1] \
             -- NAME1 'CMD1' NAME2 'CMD2' ...

Why interleaved: on a shared machine the load drifts over minutes. Running
round after round of (A, B, C), with the starting command rotated each
round, exposes every command to the same drift, so the ratios between them
stay meaningful even when the absolute times wobble.

Each run goes through `/usr/bin/time -v` for its peak RSS ("Maximum
resident set size"); wall time is taken here around the whole child, which
adds the same ~1 ms of exec to every command. Commands are split with shlex
and run without a shell; their stdout is discarded (a tool's printing is not
what is measured) and a non-zero exit stops the benchmark.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(argv: list[str]) -> tuple[float, float, int]:
    """Returns (wall seconds, CPU seconds, peak RSS in KiB) of one run."""
    with tempfile.NamedTemporaryFile("r", prefix="bench-time-", suffix=".txt") as tf:
        t0 = time.perf_counter()
        p = subprocess.run(
            ["/usr/bin/time", "-v", "-o", tf.name, *argv],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        wall = time.perf_counter() - t0
        report = tf.read()
    if p.returncode != 0:
        sys.stderr.write(p.stderr.decode(errors="replace"))
        sys.exit(f"measure.py: exit {p.returncode}: {shlex.join(argv)}")
    rss, cpu = 0, 0.0
    for line in report.splitlines():
        value = line.rsplit(":", 1)[-1].strip()
        if "Maximum resident set size" in line:
            rss = int(value)
        elif "User time (seconds)" in line or "System time (seconds)" in line:
            cpu += float(value)
    return wall, cpu, rss


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("pairs", nargs="+", help="NAME CMD NAME CMD ...")
    a = p.parse_args()
    if len(a.pairs) % 2:
        sys.exit("measure.py: commands come as NAME CMD pairs")
    cmds = [(a.pairs[i], shlex.split(a.pairs[i + 1])) for i in range(0, len(a.pairs), 2)]
    # Warm-up rounds settle the page cache, the dynamic loader and the CPU
    # frequency; they are not counted.
    for _ in range(a.warmup):
        for _, argv in cmds:
            run_once(argv)
    times: dict[str, list[float]] = {name: [] for name, _ in cmds}
    cpus: dict[str, list[float]] = {name: [] for name, _ in cmds}
    rss: dict[str, int] = {name: 0 for name, _ in cmds}
    for r in range(a.reps):
        for k in range(len(cmds)):
            name, argv = cmds[(r + k) % len(cmds)]
            wall, cpu, kb = run_once(argv)
            times[name].append(wall)
            cpus[name].append(cpu)
            rss[name] = max(rss[name], kb)
    load = os.getloadavg()[0]
    with open(a.out, "a") as out:
        for name, argv in cmds:
            t = times[name]
            rec = {
                "group": a.group,
                "name": name,
                "cmd": shlex.join(argv),
                "median": statistics.median(t),
                "min": min(t),
                "max": max(t),
                "runs": [round(x, 4) for x in t],
                # User + system CPU seconds (10 ms resolution): unlike wall
                # time, barely moved by other people's load.
                "cpu_median": statistics.median(cpus[name]),
                "max_rss_kb": rss[name],
                "load1_after": round(load, 2),
            }
            out.write(json.dumps(rec) + "\n")
            print(
                f"  {a.group:<10} {name:<22} median {rec['median']:8.3f} s"
                f"  (min {rec['min']:.3f}, max {rec['max']:.3f})  CPU {rec['cpu_median']:7.2f} s  peak RSS {rss[name] / 1024:8.1f} MiB"
            )


if __name__ == "__main__":
    main()
