#!/usr/bin/env python3
"""`gguf_digest.label(F)` against the `gguf-digest F` command, side by side.

  WHEEL_PYTHON/bin/python bench/python_label.py CLI MODEL [--rounds 9]

Run with the python of a venv the wheel is installed in (bench/python.sh
makes one). Every round times, in rotated order, four things on the same
warm file: the command (a process: `CLI MODEL`), the Python call in this
process (`gguf_digest.label(MODEL)`, interpreter already running), and a
whole Python process (`python -c 'import gguf_digest; label(MODEL)'`) and the wheel's
`gguf-digest` command (a console script: Python starts, then the same code).
The figures are medians of the per-round ratios to the command's time
(issue #17: the call within 5 % of the command).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import gguf_digest


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("model")
    ap.add_argument("--rounds", type=int, default=9)
    a = ap.parse_args()

    want = subprocess.run([a.cli, a.model], capture_output=True, check=True).stdout.split()[0].decode()
    assert gguf_digest.label(a.model) == want, "the call and the command disagree"

    def command() -> None:
        subprocess.run([a.cli, a.model], stdout=subprocess.DEVNULL, check=True)

    def call() -> None:
        gguf_digest.label(a.model)

    code = "import sys, gguf_digest; gguf_digest.label(sys.argv[1])"

    def process() -> None:
        subprocess.run([sys.executable, "-c", code, a.model], check=True)

    wheel_cli = str(Path(sys.executable).parent / "gguf-digest")

    def wheel_command() -> None:
        subprocess.run([wheel_cli, a.model], stdout=subprocess.DEVNULL, check=True)

    rows = [("command", command), ("python call", call), ("python process", process), ("wheel command", wheel_command)]
    times = {name: [] for name, _ in rows}
    call()  # warm the file
    for r in range(a.rounds):
        for name, fn in rows[r % len(rows) :] + rows[: r % len(rows)]:
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    base = times["command"]
    print(f"model {a.model}, {a.rounds} rounds, warm")
    for name, _ in rows:
        ratios = [t / b for t, b in zip(times[name], base)]
        print(
            f"{name:15} median {statistics.median(times[name]):.3f} s   "
            f"ratio to command: median {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})"
        )


if __name__ == "__main__":
    main()
