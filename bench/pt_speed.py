#!/usr/bin/env python3
"""Times the PyTorch speed benchmark side by side (docs/BENCHMARKS.md).

Usage: python3 bench/pt_speed.py BINARY DIR [ROUNDS] [--no-sha256sum]

DIR holds the files bench/pt_make.py writes. Each round runs every command
once, the first one rotated round by round, after every file was read once
with `cat` (a warm page cache); prints each run, the medians of wall time
and of user + system CPU time, the ratios the issue sets targets for, and
the load average before and after. Checks first that the zip, legacy and
views checkpoints have one label.
"""
import os
import statistics
import subprocess
import sys
import time

binary, d = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
# sha256sum is the slowest command by far: leave it out of a run that
# compares only gguf-digest's paths.
no_sha = "--no-sha256sum" in sys.argv
f = lambda n: os.path.join(d, n)
cmds = {
    "sha256sum zip.pt": ["sha256sum", f("zip.pt")],
    "zip.pt": [binary, f("zip.pt")],
    "model.safetensors": [binary, f("model.safetensors")],
    "legacy.pt": [binary, f("legacy.pt")],
    "views.pt": [binary, f("views.pt")],
}


def warm():
    for n in ("zip.pt", "model.safetensors", "legacy.pt", "views.pt"):
        subprocess.run(["cat", f(n)], stdout=subprocess.DEVNULL, check=True)


def run(argv):
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        sys.exit(f"{argv} failed: {status}")
    return wall, ru.ru_utime + ru.ru_stime, out.split()[0].decode()


labels = {n: run([binary, f(n)])[2] for n in ("zip.pt", "legacy.pt", "views.pt")}
print("labels:", labels)
if len(set(labels.values())) != 1:
    sys.exit("the three checkpoints of one state dict have different labels")
print("load average before:", os.getloadavg())
if no_sha:
    del cmds["sha256sum zip.pt"]
names = list(cmds)
times = {n: [] for n in names}
for r in range(rounds):
    warm()
    order = names[r % len(names):] + names[: r % len(names)]
    for n in order:
        wall, cpu, _ = run(cmds[n])
        times[n].append((wall, cpu))
        print(f"round {r + 1}: {n:20} {wall:6.2f} s wall {cpu:6.2f} s cpu", flush=True)
print("load average after:", os.getloadavg())
med = {n: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for n, v in times.items()}
print("\n| command | median wall | median user+sys |")
print("|---|---|---|")
for n in names:
    print(f"| {n} | {med[n][0]:.2f} s | {med[n][1]:.2f} s |")
z = med["zip.pt"][0]
print()
if not no_sha:
    print(f"zip / sha256sum:    {z / med['sha256sum zip.pt'][0]:.2f} (target <= 0.55)")
print(f"zip / safetensors:  {z / med['model.safetensors'][0]:.2f} (target <= 1.05)")
print(f"legacy / zip:       {med['legacy.pt'][0] / z:.2f} (target <= 1.3)")
print(f"views / zip:        {med['views.pt'][0] / z:.2f} (target <= 1.3)")
c = med["zip.pt"][1]
if not no_sha:
    print(f"CPU time: zip / sha256sum {c / med['sha256sum zip.pt'][1]:.2f}")
print(f"CPU time: zip / safetensors {c / med['model.safetensors'][1]:.2f}, legacy / zip "
      f"{med['legacy.pt'][1] / c:.2f}, views / zip {med['views.pt'][1] / c:.2f}")
# Per-round ratios (each round's runs were side by side).
for a, b in (("zip.pt", "sha256sum zip.pt"), ("zip.pt", "model.safetensors"), ("legacy.pt", "zip.pt"), ("views.pt", "zip.pt")):
    if b not in times:
        continue
    rs = [x[0] / y[0] for x, y in zip(times[a], times[b])]
    print(f"  {a} / {b} per round: " + ", ".join(f"{r:.2f}" for r in rs))
