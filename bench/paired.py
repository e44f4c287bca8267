#!/usr/bin/env python3
"""Paired, interleaved timings: each command against a baseline, round by round.

  paired.py [--rounds 7] [--cold] [--out results.jsonl] [--group NAME] \
            -- BASE 'CMD0' NAME1 'CMD1' NAME2 'CMD2' ...

The first command is the baseline. Every round runs every command once,
starting at a different command each round (rotated), and each command's
time is divided by the baseline's time of the same round; the figure that
counts is the median of those per-round ratios. Why: a disk here delivers
at anything from 0.7 to 2 GB/s from one minute to the next, so only
ratios of runs made side by side say anything about a tool.

--cold drops the page cache (sync; echo 3 > /proc/sys/vm/drop_caches)
before every run; that needs root, and without it the script says so and
exits 3 (bench/compare.sh then skips the cold rows with that message).

Commands run under `bash -c` (so a row can be a pipe, `cat F | tool -`),
with stdout discarded; a non-zero exit stops the benchmark.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

DROP = "/proc/sys/vm/drop_caches"


def can_drop() -> bool:
    try:
        with open(DROP, "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def drop_caches() -> None:
    subprocess.run(["sync"], check=True)
    with open(DROP, "w") as f:
        f.write("3\n")


def run(cmd: str, cold: bool) -> float:
    if cold:
        drop_caches()
    t0 = time.perf_counter()
    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.stderr.write(p.stderr.decode(errors="replace"))
        sys.exit(f"paired.py: exit {p.returncode}: {cmd}")
    return wall


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--cold", action="store_true")
    p.add_argument("--out")
    p.add_argument("--group", default="paired")
    p.add_argument("commands", nargs="+")
    a = p.parse_args()
    if len(a.commands) % 2 or len(a.commands) < 4:
        sys.exit("paired.py: give NAME 'CMD' pairs, the baseline first, at least two")
    names, cmds = a.commands[0::2], a.commands[1::2]
    if a.cold and not can_drop():
        print(f"paired.py: cannot write {DROP} (not root?): cold rows skipped", file=sys.stderr)
        sys.exit(3)
    times: dict[str, list[float]] = {n: [] for n in names}
    ratios: dict[str, list[float]] = {n: [] for n in names[1:]}
    for r in range(a.rounds):
        k = r % len(names)
        order = list(range(k, len(names))) + list(range(k))
        this = {}
        for i in order:
            this[names[i]] = run(cmds[i], a.cold)
        for n in names:
            times[n].append(this[n])
        for n in names[1:]:
            ratios[n].append(this[n] / this[names[0]])
        print(f"round {r + 1}: " + "  ".join(f"{n} {this[n]:.3f}" for n in names), file=sys.stderr, flush=True)
    base = names[0]
    print(f"\n| {a.group} | median s | min–max s | ratio to {base}: median (min–max) |")
    print("|---|---:|---:|---:|")
    for n in names:
        t = times[n]
        rat = "1" if n == base else f"{statistics.median(ratios[n]):.2f} ({min(ratios[n]):.2f}–{max(ratios[n]):.2f})"
        print(f"| {n} | {statistics.median(t):.3f} | {min(t):.3f}–{max(t):.3f} | {rat} |")
    if a.out:
        with open(a.out, "a") as f:
            for n, c in zip(names, cmds):
                rec = {"group": a.group, "name": n, "cmd": c, "cold": a.cold, "times": times[n]}
                if n != base:
                    rec["ratios"] = ratios[n]
                f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
